//! Offloads in the firmware (issue #16): `OFFLOAD_CALL` passed by the
//! fast-path model to the slow path in QEMU over the rings (`OFFLOAD_REQ` /
//! `OFFLOAD_REPLY` fragments), served by the firmware's offload host
//! (`clio_slowpath::offload`), answered to the client.
//!
//! The same offload code (`clio_slowpath::offload::{tally, kv, mv}`) runs in
//! the emulator's offload engine (`clio_emu::native::Native`): every call here
//! is sent to both boards and the answers must carry the same status,
//! request id, lengths and payload bytes (the session fields differ: each
//! board has its own boot secret).
//!
//! Needs `qemu-system-aarch64` (skipped outside CI without it, as
//! `qemu_cosim.rs`); the image is built for `board-configs/emulator.toml`.

mod common;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clio_emu::native::Native;
use clio_emu::qemu::QemuOptions;
use clio_emu::{Board, Engine, QemuBoard};
use clio_slowpath::offload::kv::{self, KvStore};
use clio_slowpath::offload::mv::{self, MvStore};
use clio_slowpath::offload::tally::{self, Tally};
use clio_wire::payload::{
    OffloadBatchOp, OffloadBatchReq, OffloadBatchResult, OffloadCallReq, OffloadCallResp,
    OFFLOAD_OP_BATCH,
};
use clio_wire::Status;
use common::offload::{
    add_args, answers, batch, batch_results, call_packet, call_payload, exchange, kv_args, ok_with,
    refused, Answer,
};
use common::qemu::{board, image, qemu_or_skip};
use common::Creds;

/// One QEMU at a time: the machine has two cores.
static SERIAL: Mutex<()> = Mutex::new(());

const CLIENT: u64 = 7;

/// The two boards side by side, each with its own session.
struct Pair {
    emu: Board,
    fw: QemuBoard,
    emu_creds: Creds,
    fw_creds: Creds,
    req: u32,
}

fn on_qemu(fw: &mut QemuBoard, pkt: &[u8]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    fw.handle(CLIENT, pkt, &mut |to, p| {
        assert_eq!(to, CLIENT);
        got.push(p.to_vec());
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    // An answer is complete when its packets cover `total_len` (one packet
    // unless it is longer than the MTU).
    let complete = |got: &[Vec<u8>]| {
        let Some(first) = got.first() else {
            return false;
        };
        let (h, p) = common::parse(first);
        let want = (h.total_len as usize).max(p.len());
        got.iter().map(|g| common::parse(g).1.len()).sum::<usize>() >= want
    };
    while !complete(&got) {
        assert!(
            Instant::now() < deadline,
            "no answer from the firmware within 30 s:\n{}",
            fw.firmware().log_tail(20)
        );
        let wait = fw.poll(&mut |to, p| {
            assert_eq!(to, CLIENT);
            got.push(p.to_vec());
        });
        std::thread::sleep(
            wait.unwrap_or(Duration::from_micros(50))
                .min(Duration::from_millis(1)),
        );
    }
    got
}

fn on_emu(emu: &mut Board, pkt: &[u8]) -> Vec<Vec<u8>> {
    exchange(emu, CLIENT, pkt)
}

impl Pair {
    fn boot(qemu: PathBuf) -> Pair {
        let b = board();
        let mut opts = QemuOptions::new(image(), b);
        opts.qemu = qemu;
        let mut fw = QemuBoard::launch(opts).unwrap_or_else(|e| panic!("{e}"));
        let mut emu = Board::new(&b).unwrap();
        emu.register_offload(tally::ID, Box::new(Native::new(Tally::new())))
            .unwrap();
        // The firmware's store: the same code, the same bucket count.
        emu.register_offload(
            kv::OFFLOAD_ID,
            Box::new(Native::new(KvStore::<64>::new(kv::DEFAULT_BUCKETS))),
        )
        .unwrap();
        // Clio-MV as the firmware registers it: 256 freed arrays kept.
        emu.register_offload(
            mv::OFFLOAD_ID,
            Box::new(Native::new(MvStore::<256>::new(mv::DEFAULT_MAX_OBJECTS))),
        )
        .unwrap();
        let open = common::open_packet(1, None);
        let emu_creds = common::creds_of(&on_emu(&mut emu, &open)[0]);
        let fw_creds = common::creds_of(&on_qemu(&mut fw, &open)[0]);
        Pair {
            emu,
            fw,
            emu_creds,
            fw_creds,
            req: 1,
        }
    }

    /// Send the same request (`retry_of`: a retry of that id) to both
    /// boards; the answers, which must agree.
    fn both(&mut self, payload: &[u8], retry_of: Option<u32>) -> Vec<Answer> {
        self.req += 1;
        let id = self.req;
        let pkt = |c: &Creds| call_packet(c, id, payload, retry_of);
        let e = answers(&on_emu(&mut self.emu, &pkt(&self.emu_creds)));
        let f = answers(&on_qemu(&mut self.fw, &pkt(&self.fw_creds)));
        assert_eq!(e, f, "emulator and firmware answer differently");
        assert!(!e.is_empty());
        e
    }

    fn call(&mut self, id: u32, op: u16, args: &[u8]) -> (Status, Vec<u8>, u32) {
        let a = self.both(&call_payload(id, op, args), None);
        (a[0].status, a[0].payload.clone(), self.req)
    }
}

fn ok_word(v: u64) -> Vec<u8> {
    ok_with(&v.to_le_bytes())
}

#[test]
fn firmware_offloads_answer_as_the_emulator_does() {
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Pair::boot(qemu);
    let t = tally::ID;

    // Counters: the table is allocated at the first call, in the
    // offload's own address space.
    assert_eq!(
        b.call(t, tally::op::ADD, &add_args(5, 7)),
        (Status::Ok, ok_word(7), b.req)
    );
    assert_eq!(b.call(t, tally::op::ADD, &add_args(5, 3)).1, ok_word(10));
    assert_eq!(
        b.call(t, tally::op::GET, &5u32.to_be_bytes()).1,
        ok_word(10)
    );
    assert_eq!(b.call(t, tally::op::GET, &6u32.to_be_bytes()).1, ok_word(0));

    // Refusals, with the offload's code.
    let (s, p, _) = b.call(t, tally::op::GET, &tally::SLOTS.to_be_bytes());
    assert_eq!(
        (s, p),
        (Status::OffloadRefused, refused(tally::code::OUT_OF_RANGE))
    );
    let (s, p, _) = b.call(t, tally::op::GET, &[0, 0, 1]);
    assert_eq!(
        (s, p),
        (Status::OffloadRefused, refused(tally::code::BAD_ARGS))
    );
    let (s, p, _) = b.call(t, 99, &[]);
    assert_eq!(
        (s, p),
        (Status::OffloadRefused, refused(tally::code::BAD_ARGS))
    );

    // A fault: a word outside anything the offload allocated.
    let (s, p, _) = b.call(t, tally::op::PEEK, &0x1000u64.to_be_bytes());
    assert_eq!((s, p), (Status::OffloadFault, vec![]));
    // The board keeps serving, the state intact.
    assert_eq!(b.call(t, tally::op::ADD, &add_args(5, 1)).1, ok_word(11));

    // No such offload; a call that does not parse.
    let (s, p, _) = b.call(77, 1, &[]);
    assert_eq!((s, p), (Status::NoSuchOffload, vec![]));
    let a = b.both(&[0, 0, 0, 4, 0, 1, 0, 1], None);
    assert_eq!(a[0].status, Status::Malformed);

    // Exactly-once: a retry of an ADD is answered from the record, not run
    // again.
    let (_, first, id) = b.call(t, tally::op::ADD, &add_args(9, 100));
    assert_eq!(first, ok_word(100));
    let p = call_payload(t, tally::op::ADD, &add_args(9, 100));
    let again = b.both(&p, Some(id));
    assert_eq!(again[0].payload, ok_word(100), "replayed, not added twice");
    assert_eq!(
        b.call(t, tally::op::GET, &9u32.to_be_bytes()).1,
        ok_word(100)
    );

    // A batch: each operation with its own outcome.
    let ops: [(u16, Vec<u8>); 4] = [
        (tally::op::ADD, add_args(1, 2)),
        (tally::op::GET, 1u32.to_be_bytes().to_vec()),
        (tally::op::GET, 5000u32.to_be_bytes().to_vec()),
        (tally::op::PEEK, 0u64.to_be_bytes().to_vec()),
    ];
    let a = b.both(&batch(t, &ops), None);
    assert_eq!(a[0].status, Status::Ok);
    let body = &a[0].payload[OffloadCallResp::LEN + OffloadBatchReq::LEN..];
    let r0 = OffloadBatchResult::parse(body).unwrap();
    assert_eq!((r0.status, r0.len), (Status::Ok, 8));
    let at = OffloadBatchResult::LEN + 8;
    let r1 = OffloadBatchResult::parse(&body[at..]).unwrap();
    assert_eq!(
        &body[at + OffloadBatchResult::LEN..at + OffloadBatchResult::LEN + 8],
        &2u64.to_le_bytes()
    );
    assert_eq!(r1.status, Status::Ok);
    let at = at + OffloadBatchResult::LEN + 8;
    let r2 = OffloadBatchResult::parse(&body[at..]).unwrap();
    assert_eq!(
        (r2.status, r2.code),
        (Status::OffloadRefused, tally::code::OUT_OF_RANGE)
    );
    let r3 = OffloadBatchResult::parse(&body[at + OffloadBatchResult::LEN..]).unwrap();
    assert_eq!(r3.status, Status::OffloadFault);
}

#[test]
fn the_sdk_calls_firmware_offloads_over_udp() {
    use clio::{ClioError, Session};
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (server, client) = common::qemu::serve_firmware(qemu);
    let mut s = Session::open(server.addr(), client.clone()).unwrap();
    let mut other = Session::open(server.addr(), client).unwrap();
    let t = tally::ID;
    assert_eq!(
        s.offload_call(t, tally::op::ADD, &add_args(3, 40)).unwrap(),
        40u64.to_le_bytes()
    );
    assert_eq!(
        other
            .offload_call(t, tally::op::ADD, &add_args(3, 2))
            .unwrap(),
        42u64.to_le_bytes(),
        "one tally, whichever session calls"
    );
    let e = s
        .offload_call(t, tally::op::PEEK, &8u64.to_be_bytes())
        .unwrap_err();
    assert!(matches!(e, ClioError::OffloadFault { .. }), "{e:?}");
    let e = s
        .offload_call(t, tally::op::GET, &tally::SLOTS.to_be_bytes())
        .unwrap_err();
    assert!(
        matches!(e, ClioError::OffloadRefused { code, .. } if code == tally::code::OUT_OF_RANGE),
        "{e:?}"
    );
    let e = s.offload_call(1234, 1, &[]).unwrap_err();
    assert!(matches!(e, ClioError::NoSuchOffload { .. }), "{e:?}");
    // After the fault and the refusals, both sessions are still served.
    assert_eq!(
        other
            .offload_call(t, tally::op::GET, &3u32.to_be_bytes())
            .unwrap(),
        42u64.to_le_bytes()
    );
    s.close().unwrap();
    other.close().unwrap();
    server.stop().unwrap();
}

#[test]
fn firmware_kv_answers_as_the_emulator_does() {
    use kv::proto::{code, op};
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Pair::boot(qemu);
    let k = kv::OFFLOAD_ID;
    let ok = OffloadCallResp { code: 0 }.to_bytes().to_vec();
    let big = vec![0xa5u8; kv::MAX_VALUE];
    assert_eq!(b.call(k, op::CREATE, &kv_args(b"alpha", b"one")).1, ok);
    assert_eq!(b.call(k, op::PUT, &kv_args(b"beta", &big)).1, ok);
    assert_eq!(b.call(k, op::PUT, &kv_args(b"gamma", &big[1..])).1, ok);
    let (s, p, _) = b.call(k, op::READ, &kv_args(b"alpha", b""));
    assert_eq!((s, &p[OffloadCallResp::LEN..]), (Status::Ok, &b"one"[..]));
    assert_eq!(
        &b.call(k, op::READ, &kv_args(b"beta", b"")).1[OffloadCallResp::LEN..],
        &big[..]
    );
    assert_eq!(
        b.call(k, op::CREATE, &kv_args(b"alpha", b"x")).1,
        refused(code::EXISTS)
    );
    assert_eq!(b.call(k, op::UPDATE, &kv_args(b"alpha", b"two")).1, ok);
    assert_eq!(
        &b.call(k, op::READ, &kv_args(b"alpha", b"")).1[OffloadCallResp::LEN..],
        b"two"
    );
    assert_eq!(b.call(k, op::DELETE, &kv_args(b"alpha", b"")).1, ok);
    assert_eq!(
        b.call(k, op::DELETE, &kv_args(b"alpha", b"")).1,
        refused(code::NOT_FOUND)
    );
    assert_eq!(
        b.call(k, op::READ, &kv_args(b"missing", b"")).1,
        refused(code::NOT_FOUND)
    );
    assert_eq!(
        b.call(k, op::PUT, &kv_args(&[7u8; kv::MAX_KEY + 1], b"v"))
            .1,
        refused(code::KEY_TOO_LONG)
    );
    // Enough keys to fill chains past one slot (seven entries) somewhere.
    for i in 0..200u32 {
        let key = format!("key-{i}");
        assert_eq!(
            b.call(k, op::PUT, &kv_args(key.as_bytes(), &i.to_le_bytes()))
                .1,
            ok
        );
    }
    // A batch of reads: an answer of several packets, byte for byte.
    let mut p = OffloadCallReq {
        offload: k,
        op: OFFLOAD_OP_BATCH,
    }
    .to_bytes()
    .to_vec();
    p.extend_from_slice(&OffloadBatchReq { count: 4 }.to_bytes());
    for key in [&b"beta"[..], b"nope", b"gamma", b"key-7"] {
        let a = kv_args(key, b"");
        p.extend_from_slice(
            &OffloadBatchOp {
                op: op::READ,
                args_len: a.len() as u16,
            }
            .to_bytes(),
        );
        p.extend_from_slice(&a);
    }
    let a = b.both(&p, None);
    assert!(a.len() > 1, "a batch answer over one MTU comes in pieces");
    assert_eq!(a[0].status, Status::Ok);
}

fn mv_call(c: mv::proto::Call<'_>) -> (u16, Vec<u8>) {
    c.encode()
}

#[test]
fn firmware_mv_answers_as_the_emulator_does() {
    use mv::proto::{code, op, Call};
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Pair::boot(qemu);
    let m = mv::OFFLOAD_ID;
    let ok = OffloadCallResp { code: 0 }.to_bytes().to_vec();
    let result = |p: &[u8]| p[OffloadCallResp::LEN..].to_vec();
    let run = |b: &mut Pair, c: Call<'_>| {
        let (o, a) = mv_call(c);
        let (s, p, _) = b.call(m, o, &a);
        (s, p)
    };

    // Create: the first id is generation 1, index 0.
    let (s, p) = run(
        &mut b,
        Call::Create {
            versions: 4,
            value_size: 64,
        },
    );
    assert_eq!(s, Status::Ok);
    let doc = u64::from_be_bytes(result(&p).try_into().unwrap());
    assert_eq!(doc, 1 << 32);
    let (s, p) = run(
        &mut b,
        Call::Create {
            versions: 1,
            value_size: mv::MAX_VALUE as u32,
        },
    );
    assert_eq!(s, Status::Ok);
    let big = u64::from_be_bytes(result(&p).try_into().unwrap());
    // Bad shapes.
    for (versions, value_size) in [
        (0, 8),
        (4, 0),
        (1, mv::MAX_VALUE as u32 + 1),
        (100_000, 1024),
    ] {
        assert_eq!(
            run(
                &mut b,
                Call::Create {
                    versions,
                    value_size
                }
            ),
            (Status::OffloadRefused, refused(code::BAD_SHAPE)),
            "{versions} x {value_size}"
        );
    }

    // Six appends to an object keeping four versions: 3..=6 are kept.
    for v in 1..=6u64 {
        let value = format!("version {v}");
        let (s, p) = run(
            &mut b,
            Call::Append {
                id: doc,
                value: value.as_bytes(),
            },
        );
        assert_eq!((s, result(&p)), (Status::Ok, v.to_be_bytes().to_vec()));
    }
    let full = vec![0x5au8; mv::MAX_VALUE];
    assert_eq!(
        run(
            &mut b,
            Call::Append {
                id: big,
                value: &full
            }
        )
        .0,
        Status::Ok
    );
    let (s, p) = run(
        &mut b,
        Call::Read {
            id: big,
            version: 0,
        },
    );
    assert_eq!(s, Status::Ok);
    assert_eq!(&result(&p)[8..], &full[..]);
    let (s, p) = run(
        &mut b,
        Call::Read {
            id: doc,
            version: 0,
        },
    );
    assert_eq!((s, &result(&p)[8..]), (Status::Ok, &b"version 6"[..]));
    let (s, p) = run(
        &mut b,
        Call::Read {
            id: doc,
            version: 3,
        },
    );
    assert_eq!((s, &result(&p)[8..]), (Status::Ok, &b"version 3"[..]));
    // Versions out of range: gone below the kept ones, never appended above.
    assert_eq!(
        run(
            &mut b,
            Call::Read {
                id: doc,
                version: 2
            }
        ),
        (Status::OffloadRefused, refused(code::VERSION_GONE))
    );
    assert_eq!(
        run(
            &mut b,
            Call::Read {
                id: doc,
                version: 7
            }
        ),
        (Status::OffloadRefused, refused(code::NO_SUCH_VERSION))
    );
    let (s, p) = run(&mut b, Call::Info { id: doc });
    assert_eq!(s, Status::Ok);
    assert_eq!(result(&p).len(), mv::proto::INFO_LEN);
    assert_eq!(
        run(
            &mut b,
            Call::Append {
                id: doc,
                value: &[1; 65]
            }
        ),
        (Status::OffloadRefused, refused(code::VALUE_TOO_LONG))
    );

    // Missing objects: never issued, generation 0.
    for id in [1 << 32 | 99, 0, 7 << 32] {
        assert_eq!(
            run(&mut b, Call::Read { id, version: 0 }),
            (Status::OffloadRefused, refused(code::NO_SUCH_OBJECT)),
            "{id:#x}"
        );
    }
    // Malformed calls: a short READ, an APPEND with reserved bits or a
    // length that disagrees, an unknown op.
    assert_eq!(b.call(m, op::READ, &[0; 15]).1, refused(code::BAD_ARGS));
    let (o, mut a) = mv_call(Call::Append {
        id: doc,
        value: b"xy",
    });
    a[15] = 1;
    assert_eq!(b.call(m, o, &a).1, refused(code::BAD_ARGS));
    a[15] = 0;
    a[11] = 3;
    assert_eq!(b.call(m, o, &a).1, refused(code::BAD_ARGS));
    assert_eq!(b.call(m, 9, &[]).1, refused(code::BAD_ARGS));

    // Delete, a second delete, the id issued again with generation 2.
    assert_eq!(
        run(&mut b, Call::Delete { id: doc }),
        (Status::Ok, ok.clone())
    );
    assert_eq!(
        run(&mut b, Call::Delete { id: doc }),
        (Status::OffloadRefused, refused(code::DELETED))
    );
    let (s, p) = run(
        &mut b,
        Call::Create {
            versions: 2,
            value_size: 8,
        },
    );
    assert_eq!(s, Status::Ok);
    let again = u64::from_be_bytes(result(&p).try_into().unwrap());
    assert_eq!(again, 2 << 32);
    assert_eq!(
        run(
            &mut b,
            Call::Read {
                id: doc,
                version: 0
            }
        ),
        (Status::OffloadRefused, refused(code::DELETED))
    );

    // A fault in the middle of the calls (another offload's): the store
    // keeps serving, its state intact.
    let (s, _, _) = b.call(tally::ID, tally::op::PEEK, &0x1000u64.to_be_bytes());
    assert_eq!(s, Status::OffloadFault);
    let (s, p) = run(
        &mut b,
        Call::Read {
            id: big,
            version: 1,
        },
    );
    assert_eq!((s, &result(&p)[8..]), (Status::Ok, &full[..]));

    // Exactly-once: a retried append is answered from the record.
    let (o, a) = mv_call(Call::Append {
        id: again,
        value: b"once",
    });
    let (s, first, id) = b.call(m, o, &a);
    assert_eq!(
        (s, result(&first)),
        (Status::Ok, 1u64.to_be_bytes().to_vec())
    );
    let mut p = OffloadCallReq { offload: m, op: o }.to_bytes().to_vec();
    p.extend_from_slice(&a);
    assert_eq!(b.both(&p, Some(id))[0].payload, first, "replayed");
    let (s, p) = run(&mut b, Call::Info { id: again });
    assert_eq!(s, Status::Ok);
    assert_eq!(&result(&p)[..8], &1u64.to_be_bytes(), "appended once");

    // A batch: each operation with its own outcome, byte for byte.
    let ops = [
        mv_call(Call::Append {
            id: again,
            value: b"two",
        }),
        mv_call(Call::Read {
            id: again,
            version: 0,
        }),
        mv_call(Call::Read {
            id: again,
            version: 9,
        }),
        mv_call(Call::Info { id: doc }),
        (op::READ, vec![1, 2, 3]),
        mv_call(Call::Read {
            id: big,
            version: 0,
        }),
    ];
    let a = b.both(&batch(m, &ops), None);
    assert_eq!(a[0].status, Status::Ok);
    let whole: Vec<u8> = a.iter().flat_map(|x| x.payload.clone()).collect();
    let r = batch_results(&whole);
    assert_eq!(r.len(), ops.len());
    assert_eq!(
        (r[0].0, r[0].2.clone()),
        (Status::Ok, 2u64.to_be_bytes().to_vec())
    );
    assert_eq!(&r[1].2[8..], b"two");
    assert_eq!(
        (r[2].0, r[2].1),
        (Status::OffloadRefused, code::NO_SUCH_VERSION)
    );
    assert_eq!((r[3].0, r[3].1), (Status::OffloadRefused, code::DELETED));
    assert_eq!((r[4].0, r[4].1), (Status::OffloadRefused, code::BAD_ARGS));
    assert_eq!(&r[5].2[8..], &full[..]);
}
