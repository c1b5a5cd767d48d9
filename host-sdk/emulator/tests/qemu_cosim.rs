//! Co-simulation: the firmware image in QEMU's ZynqMP model serves the
//! fast-path model over rings in a shared-memory file.
//!
//! Needs `qemu-system-aarch64` (`$QEMU` or `PATH`); without it the tests
//! print why and pass, except under CI (`CI` set), where they fail. The
//! image is `$CLIO_COSIM_IMAGE` (ci/suites/40-cosim-qemu.sh builds it), or
//! built here for `board-configs/emulator.toml` in
//! `$CLIO_COSIM_TARGET_DIR` (default `$CARGO_TARGET_DIR/cosim-image`, or
//! `target/cosim-image`).
//!
//! Every request runs in a session the firmware's slow path opened (issue
//! #14); each test-local PID number is its own address space. The epoch the
//! firmware logs at boot is the one its first TX descriptor gave the fast
//! path, and a second boot answers the first boot's sessions `RESTARTED`.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clio_config::BoardConfig;
use clio_emu::qemu::{cosim_model_options, QemuDram, QemuOptions, QemuSlowPath};
use clio_fastpath::{ClientId, FastPath};
use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::{perms, AllocReq, FreeReq, InfoResp};
use clio_wire::ring::{
    header_field, slot_offset, Descriptor, Direction, Producer, RingMemory, SLOT_LEN,
};
use clio_wire::{Header, Opcode, Packet, Status};
use common::qemu::{board, image, qemu_or_skip};
use common::Creds;

/// One QEMU at a time: the machine has two cores.
static SERIAL: Mutex<()> = Mutex::new(());

const STEP: Duration = Duration::from_secs(20);

/// A parsed response packet.
struct Resp {
    h: Header,
    payload: Vec<u8>,
}

/// The fast-path model over the QEMU-shared DRAM, with a small client.
struct Cosim {
    q: QemuSlowPath,
    fp: FastPath<QemuDram>,
    board: BoardConfig,
    req: u32,
    /// Sessions by test-local PID number.
    sessions: HashMap<u32, Creds>,
}

impl Cosim {
    fn boot(qemu: PathBuf) -> Cosim {
        let board = board();
        let mut opts = QemuOptions::new(image(), board);
        opts.qemu = qemu;
        let (q, dram) = QemuSlowPath::launch(opts).unwrap_or_else(|e| panic!("{e}"));
        let mut fp = FastPath::new(&board, cosim_model_options(), dram)
            .expect("fast path attaches to the firmware's rings");
        // The fast path takes what the firmware posted at boot (its epoch),
        // as the FPGA does on the doorbell.
        fp.poll_rings(&mut |_, _| panic!("no answer before any request"));
        Cosim {
            q,
            fp,
            board,
            req: 0,
            sessions: HashMap::new(),
        }
    }

    /// The session of test-local PID `pid`, opened through the firmware
    /// on first use.
    fn creds(&mut self, pid: u32) -> Creds {
        if let Some(c) = self.sessions.get(&pid) {
            return *c;
        }
        let id = self.next_req();
        let r = self.send(&common::open_packet(id, None), 1, "open session");
        let c = common::creds_from(&r[0].h, &r[0].payload);
        self.sessions.insert(pid, c);
        c
    }

    /// A request of test-local PID `pid`'s session.
    #[allow(clippy::too_many_arguments)]
    fn packet(
        &mut self,
        op: Opcode,
        pid: u32,
        req_id: u32,
        va: u64,
        total_len: u32,
        offset: u32,
        payload: &[u8],
    ) -> Vec<u8> {
        let c = self.creds(pid);
        Header {
            offset,
            ..Header::request(op, c.pid, req_id, va, total_len)
                .with_session(c.session, c.epoch, c.key)
        }
        .encode(payload)
        .unwrap()
    }

    /// The epoch INFO reports.
    fn info_epoch(&mut self) -> u32 {
        let id = self.next_req();
        let r = self.send(&common::info_packet(id), 1, "info");
        assert_eq!(r[0].h.status, Status::Ok);
        let info = InfoResp::parse(&r[0].payload).unwrap();
        assert_eq!(info.epoch, r[0].h.epoch);
        info.epoch
    }

    fn next_req(&mut self) -> u32 {
        self.req += 1;
        self.req
    }

    /// Run the TX ring until `n` responses arrived (bounded).
    fn collect(&mut self, mut got: Vec<Resp>, n: usize, what: &str) -> Vec<Resp> {
        let deadline = Instant::now() + STEP;
        let mut spins = 0u32;
        while got.len() < n {
            self.fp.poll_rings(&mut |_, b| got.push(parse(b)));
            spins += 1;
            if got.len() < n && spins % 1024 == 0 {
                self.q
                    .check_alive()
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(
                    Instant::now() < deadline,
                    "{what}: no response within {STEP:?}\n{}",
                    self.q.log_tail(20)
                );
            }
        }
        got
    }

    /// Send one packet; wait for `n` responses.
    fn send(&mut self, pkt: &[u8], n: usize, what: &str) -> Vec<Resp> {
        let mut got = Vec::new();
        self.fp
            .receive(ClientId(9), pkt, &mut |_, b| got.push(parse(b)));
        self.collect(got, n, what)
    }

    /// Send a data packet; a `Busy` (free-PA FIFO not yet refilled by the
    /// slow path) is retried after running the TX ring, as a client would.
    fn send_data(&mut self, pkt: &[u8], what: &str) -> Vec<Resp> {
        let deadline = Instant::now() + STEP;
        loop {
            let r = self.send(pkt, 1, what);
            if r[0].h.status != Status::Busy {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: still busy after {STEP:?}"
            );
            self.fp.poll_rings(&mut |_, _| {});
        }
    }

    fn alloc(&mut self, pid: u32, size: u64) -> (Status, u64) {
        let mut p = [0u8; AllocReq::LEN];
        AllocReq {
            size,
            perms: perms::RW,
            page_shift: 0,
        }
        .emit(&mut p)
        .unwrap();
        let id = self.next_req();
        let pkt = self.packet(Opcode::Alloc, pid, id, 0, 0, 0, &p);
        let r = self.send(&pkt, 1, "alloc");
        assert_eq!(r[0].h.opcode, Opcode::AllocResp);
        (r[0].h.status, r[0].h.va)
    }

    fn free(&mut self, pid: u32, va: u64, size: u64) -> Status {
        let mut p = [0u8; FreeReq::LEN];
        FreeReq { size }.emit(&mut p).unwrap();
        let id = self.next_req();
        let pkt = self.packet(Opcode::Free, pid, id, va, 0, 0, &p);
        let r = self.send(&pkt, 1, "free");
        assert_eq!(r[0].h.opcode, Opcode::FreeResp);
        r[0].h.status
    }

    fn write(&mut self, pid: u32, va: u64, data: &[u8]) -> Status {
        let mtu = self.board.network.mtu_payload as usize;
        let id = self.next_req();
        for (i, chunk) in data.chunks(mtu).enumerate() {
            let pkt = self.packet(
                Opcode::Write,
                pid,
                id,
                va,
                data.len() as u32,
                (i * mtu) as u32,
                chunk,
            );
            let r = self.send_data(&pkt, "write").remove(0);
            assert_eq!(r.h.opcode, Opcode::WriteResp);
            if r.h.status != Status::Ok {
                return r.h.status;
            }
        }
        Status::Ok
    }

    fn read(&mut self, pid: u32, va: u64, len: usize) -> (Status, Vec<u8>) {
        let id = self.next_req();
        let pkt = self.packet(Opcode::Read, pid, id, va, len as u32, 0, &[]);
        let got = self.send_data(&pkt, "read");
        if got[0].h.status != Status::Ok {
            return (got[0].h.status, Vec::new());
        }
        // A read is answered at once, in one packet per MTU of data.
        let pieces = len.div_ceil(self.board.network.mtu_payload as usize).max(1);
        assert_eq!(got.len(), pieces, "read answered in {pieces} packets");
        let mut out = vec![0u8; len];
        for r in &got {
            assert_eq!(r.h.opcode, Opcode::ReadResp);
            let o = r.h.offset as usize;
            out[o..o + r.payload.len()].copy_from_slice(&r.payload);
        }
        (Status::Ok, out)
    }

    fn rx_mem(&mut self) -> &mut [u8] {
        let lay = *self.fp.layout();
        &mut clio_fastpath::Dram::bytes_mut(self.fp.dram_mut())[lay.rx_ring.start..lay.rx_ring.end]
    }

    /// Descriptors the firmware has posted and the fast path not yet taken.
    fn peek_tx(&self) -> Vec<Result<Descriptor, clio_wire::Error>> {
        let lay = *self.fp.layout();
        let mem = &clio_fastpath::Dram::bytes(self.fp.dram())[lay.tx_ring.start..lay.tx_ring.end];
        let count = self.board.rings.tx.slots;
        let head = mem.load_u32(header_field::HEAD);
        let tail = mem.load_u32(header_field::TAIL);
        (tail..head)
            .map(|i| {
                let o = slot_offset(i, count);
                Descriptor::parse(&mem[o..o + SLOT_LEN], Direction::Tx)
            })
            .collect()
    }
}

impl Cosim {
    /// One rack control datagram from client 7, its answer decoded.
    fn control(&mut self, bytes: &[u8], what: &str) -> clio_control::Envelope {
        let mut got: Vec<Vec<u8>> = Vec::new();
        self.fp
            .receive(ClientId(7), bytes, &mut |_, b| got.push(b.to_vec()));
        assert!(
            got.is_empty(),
            "{what}: the fast path does not answer control datagrams itself"
        );
        let deadline = Instant::now() + STEP;
        let mut spins = 0u32;
        while got.is_empty() {
            self.fp.poll_rings(&mut |to, b| {
                assert_eq!(to, ClientId(7), "{what}: the answer goes to the sender");
                got.push(b.to_vec())
            });
            spins += 1;
            if got.is_empty() && spins % 1024 == 0 {
                self.q
                    .check_alive()
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(
                    Instant::now() < deadline,
                    "{what}: no answer within {STEP:?}\n{}",
                    self.q.log_tail(20)
                );
            }
        }
        clio_control::Envelope::decode(&got[0]).unwrap_or_else(|e| panic!("{what}: {e}"))
    }

    fn call(&mut self, id: u32, m: clio_control::Message, what: &str) -> clio_control::Message {
        let mut buf = [0u8; clio_control::MAX_ENVELOPE_LEN];
        let b = clio_control::Envelope::new(id, m)
            .encode(&mut buf)
            .unwrap()
            .to_vec();
        let env = self.control(&b, what);
        assert_eq!(env.request_id, id, "{what}");
        env.message
    }
}

fn parse(b: &[u8]) -> Resp {
    let p = Packet::new_checked(b).expect("response length");
    let h = Header::parse_verified(&p).expect("response parses");
    Resp {
        h,
        payload: b[HEADER_LEN..].to_vec(),
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn end_to_end_with_the_slow_path_in_qemu() {
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = Cosim::boot(qemu);
    let page = c.board.pages.default_size;

    // Alloc two pages for PID 1.
    let (st, va) = c.alloc(1, 2 * page);
    assert_eq!(st, Status::Ok, "alloc\n{}", c.q.log_tail(20));
    assert_eq!(va % page, 0);

    // A write across the page boundary: two first-touch faults, each taking
    // a PA the firmware pushed into the free-PA FIFO.
    let faults0 = c.fp.stats().faults;
    let data = pattern(3000, 7);
    let at = va + page - 1000;
    assert_eq!(c.write(1, at, &data), Status::Ok);
    assert_eq!(
        c.fp.stats().faults - faults0,
        2,
        "one fault per page touched"
    );
    let (st, back) = c.read(1, at, data.len());
    assert_eq!(st, Status::Ok);
    assert_eq!(back, data, "read back across the page boundary");
    // The rest of the faulted pages reads as zeros (the firmware cleared the
    // data region at boot).
    let (st, zeros) = c.read(1, va, 4096);
    assert_eq!(st, Status::Ok);
    assert!(zeros.iter().all(|&b| b == 0), "a fresh page holds no data");

    // A second PID: its own range works; the other's VA does not. Each PID
    // has its own VA space, so PID 2's range may start at the same VA.
    let (st, vb) = c.alloc(2, page);
    assert_eq!(st, Status::Ok);
    let other = pattern(2000, 99);
    assert_eq!(c.write(2, vb, &other), Status::Ok);
    assert_eq!(c.read(2, vb, other.len()), (Status::Ok, other.clone()));
    let in_b = |x: u64| (vb..vb + page).contains(&x);
    let probe = [at, va + page + 16]
        .into_iter()
        .find(|&x| !in_b(x))
        .expect("PID 1 owns more than PID 2");
    let (st, leaked) = c.read(2, probe, 64);
    assert_ne!(
        st,
        Status::Ok,
        "PID 2 must not read PID 1's range at {probe:#x}"
    );
    assert!(leaked.is_empty());
    assert_ne!(
        c.write(2, probe, &[0xee; 16]),
        Status::Ok,
        "PID 2 must not write PID 1's range"
    );
    if in_b(at) {
        // The same VA in PID 2's space is PID 2's page: its bytes, not PID 1's.
        let (st, own) = c.read(2, at, 64);
        assert_eq!(st, Status::Ok);
        assert_ne!(
            &own[..],
            &data[..64],
            "PID 2 sees PID 1's data at the same VA"
        );
    }
    if !(va..va + 2 * page).contains(&vb) {
        assert_ne!(
            c.read(1, vb, 16).0,
            Status::Ok,
            "PID 1 must not read PID 2's range"
        );
    }
    assert_eq!(
        c.read(1, at, data.len()),
        (Status::Ok, data),
        "PID 1's data is untouched"
    );

    // Errors from the slow path come back as error replies.
    let (st, _) = c.alloc(1, 0);
    assert_eq!(st, Status::Malformed, "zero-byte alloc");

    // Free; the range is gone, and a second free is refused.
    assert_eq!(c.free(1, va, 2 * page), Status::Ok);
    assert_ne!(c.read(1, at, 16).0, Status::Ok, "read after free");
    // PID 1 has nothing left, so the slow path no longer knows it.
    let again = c.free(1, va, 2 * page);
    assert!(
        matches!(again, Status::Unmapped | Status::BadPid),
        "double free answered {again:?}"
    );
    assert_eq!(c.free(2, vb, page), Status::Ok);

    // The freed pages are scrubbed once the fast path has passed their TLB
    // fence, and come back zeroed when the memory is handed out again.
    let (st, vc) = c.alloc(3, page);
    assert_eq!(st, Status::Ok);
    assert_eq!(c.write(3, vc + 8, &[1, 2, 3]), Status::Ok);
    let (st, fresh) = c.read(3, vc, 4096);
    assert_eq!(st, Status::Ok);
    assert_eq!(&fresh[8..11], &[1, 2, 3]);
    assert!(
        fresh[..8].iter().chain(&fresh[11..]).all(|&b| b == 0),
        "reused or fresh page is zero"
    );

    // Closing PID 3's only session frees its range in the firmware, and
    // the session is refused afterwards.
    let me = c.creds(3);
    let id = c.next_req();
    let pkt = me.request(Opcode::CloseSession, id, 0, 0, &[]);
    let r = c.send(&pkt, 1, "close session");
    assert_eq!(
        (r[0].h.opcode, r[0].h.status),
        (Opcode::CloseSessionResp, Status::Ok)
    );
    let id = c.next_req();
    let r = c.send(
        &me.request(Opcode::Read, id, vc, 8, &[]),
        1,
        "read of a closed session",
    );
    assert_eq!(r[0].h.status, Status::BadSession);
    // Its PID is free again: the next address space gets it, and finds its
    // old VA unmapped.
    c.sessions.remove(&3);
    let again = c.creds(3);
    assert_eq!(again.pid, me.pid);
    assert_ne!(c.read(3, vc, 8).0, Status::Ok, "freed by the close");

    c.q.check_alive().unwrap_or_else(|e| panic!("{e}"));
    let log = c.q.log_lines();
    assert!(log.iter().any(|l| l.message.contains("ring service ready")));
    assert!(log.iter().any(|l| l.message.contains("boot epoch 0x")));
}

/// The epoch: logged by the firmware at boot, posted as its first TX
/// descriptor (INFO reports it), different at the next boot, where the first
/// boot's session is answered RESTARTED with the new epoch.
#[test]
fn the_firmware_posts_its_boot_epoch_and_a_reboot_is_seen() {
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut first = Cosim::boot(qemu.clone());
    let logged = |c: &mut Cosim| -> u32 {
        let line =
            c.q.wait_for_line("boot epoch 0x", STEP)
                .unwrap_or_else(|e| panic!("{e}"));
        let hex = line
            .message
            .split("boot epoch 0x")
            .nth(1)
            .and_then(|t| t.get(..8))
            .unwrap_or_else(|| panic!("epoch in {:?}", line.message));
        u32::from_str_radix(hex, 16).unwrap()
    };
    let e1 = logged(&mut first);
    assert_ne!(e1, 0);
    // The launcher's random bytes reached the seed, and the firmware
    // cleared the mailbox after reading it.
    let line = first
        .q
        .wait_for_line("boot epoch 0x", STEP)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        line.message.contains("loader seed present"),
        "{}",
        line.message
    );
    let m = first.board.boot_seed_mailbox();
    let dram = clio_fastpath::Dram::bytes(first.fp.dram());
    let at = (m.base - first.board.dram.base) as usize;
    assert!(dram[at..at + m.size as usize].iter().all(|&b| b == 0));
    // Posted before any request: the fast path has it before INFO asks.
    assert_eq!(first.fp.epoch(), e1);
    assert_eq!(first.info_epoch(), e1);
    let page = first.board.pages.default_size;
    let (st, va) = first.alloc(1, page);
    assert_eq!(st, Status::Ok);
    assert_eq!(first.write(1, va, b"first boot"), Status::Ok);
    let old = first.creds(1);
    assert_eq!(old.epoch, e1);
    let log = first.q.log_lines();
    assert!(
        log.iter().all(|l| !l.message.contains("predictable")),
        "the firmware found no jitter under QEMU"
    );
    drop(first);

    let mut second = Cosim::boot(qemu);
    let e2 = logged(&mut second);
    assert_ne!(e2, e1, "two boots, one epoch");
    assert_eq!(second.fp.epoch(), e2);
    // The first boot's session, same PID and VA: refused, never served.
    let id = second.next_req();
    let pkt = Header::request(Opcode::Read, old.pid, id, va, 10)
        .with_session(old.session, old.epoch, old.key)
        .encode(&[])
        .unwrap();
    let r = second.send(&pkt, 1, "old session's read");
    assert_eq!(
        (r[0].h.status, r[0].h.epoch, r[0].payload.len()),
        (Status::Restarted, e2, 0)
    );
    // A new session of the new boot works.
    let (st, vb) = second.alloc(1, page);
    assert_eq!(st, Status::Ok);
    assert_eq!(second.creds(1).epoch, e2);
    assert_eq!(second.read(1, vb, 10), (Status::Ok, vec![0; 10]));
}

/// The SDK over UDP against `clio sim --slow-path qemu`'s board: the
/// firmware restarted on the same port (a new QEMU boot) makes every call of
/// the old session fail with `BoardRestarted` and the new epoch, never OK
/// with zeros; a new session works.
#[test]
fn a_uart_log_left_by_an_earlier_boot_is_not_taken_for_this_one() {
    // The log's name reuses the PID, so a run can meet the file an earlier
    // process left, ready line included.
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let log = std::env::temp_dir().join(format!("clio-stale-log-{}.uart", std::process::id()));
    for boot in ["first", "second, over the first's log"] {
        let mut opts = QemuOptions::new(image(), board());
        opts.qemu = qemu.clone();
        opts.log = log.clone();
        let (q, _dram) = QemuSlowPath::launch(opts).unwrap_or_else(|e| panic!("{boot} boot: {e}"));
        drop(q);
    }
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_file(log.with_extension("qemu.txt"));
}

#[test]
fn the_sdk_sees_a_restarted_qemu_board_as_board_restarted() {
    use clio::{ClientConfig, ClioError, Session};
    use clio_emu::{QemuBoard, ServeOptions};
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let board = board();
    let launch = |qemu: &PathBuf| {
        let mut opts = QemuOptions::new(image(), board);
        opts.qemu = qemu.clone();
        QemuBoard::launch(opts).unwrap_or_else(|e| panic!("{e}"))
    };
    // The slow path runs in QEMU: give calls time (a loaded host, TCG).
    let client = ClientConfig {
        request_timeout_ns: 20_000_000_000,
        retry_budget: 64,
        ..ClientConfig::from_board(&board)
    };
    let first = clio_emu::spawn(
        launch(&qemu),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::default(),
    )
    .unwrap();
    let addr = first.addr();
    let mut s = Session::open(addr, client.clone()).unwrap();
    let old_epoch = s.session_info().unwrap().epoch;
    let al = s.ralloc(board.pages.default_size, perms::RW).unwrap();
    s.rwrite(al.va, b"first boot").unwrap();
    first.stop().unwrap();

    let second = clio_emu::spawn(launch(&qemu), addr, ServeOptions::default())
        .expect("rebind the same port");
    let mut b = [0u8; 10];
    let e = s.rread(al.va, &mut b).unwrap_err();
    let ClioError::BoardRestarted { epoch, .. } = e else {
        panic!("expected BoardRestarted, got {e:?}");
    };
    assert_ne!(epoch, old_epoch, "a new boot, a new epoch");
    assert_eq!(b, [0; 10], "no data handed out");
    let w = s.rwrite(al.va, b"after boot");
    assert!(
        matches!(w, Err(ClioError::BoardRestarted { epoch: e, .. }) if e == epoch),
        "{w:?}"
    );
    let mut fresh = Session::open(addr, client).unwrap();
    assert_eq!(fresh.session_info().unwrap().epoch, epoch);
    let a2 = fresh.ralloc(board.pages.default_size, perms::RW).unwrap();
    fresh.rwrite(a2.va, b"second").unwrap();
    let mut back = [0u8; 6];
    fresh.rread(a2.va, &mut back).unwrap();
    assert_eq!(&back, b"second");
    drop(s);
    fresh.close().unwrap();
    second.stop().unwrap();
}

#[test]
fn corrupt_ring_descriptor_is_counted_and_the_firmware_keeps_serving() {
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = Cosim::boot(qemu);
    let page = c.board.pages.default_size;
    assert_eq!(c.alloc(1, page).0, Status::Ok);

    // A slot whose CRC does not match: consumed, counted in the RX header's
    // `rejected` field and by the firmware, never executed or answered (its
    // tag cannot be trusted).
    let mut slot = [0u8; SLOT_LEN];
    let req = Descriptor::AllocReq {
        tag: 0xbad,
        pid: 1,
        req_id: 4242,
        va: 0,
        size: page,
        perms: perms::RW,
        page_shift: 0,
        fixed: false,
    };
    req.emit(&mut slot).unwrap();
    slot[20] ^= 0x10;
    let mem = c.rx_mem();
    let mut rx = Producer::attach(&*mem, Direction::Rx).unwrap();
    rx.push_raw(mem, &slot).unwrap();
    let line =
        c.q.wait_for_line("RX slot rejected", STEP)
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(line.message.contains("ring.crc"), "{}", line.message);
    assert_eq!(c.rx_mem().load_u32(header_field::REJECTED), 1);
    c.q.wait_for_line("malformed 1 ", Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{e}"));

    // A well-formed request the slow path refuses (zero bytes), under a tag
    // the fast path never issued: the firmware answers it with an error reply.
    let bogus_tag = 0x00ab_0000;
    let bad = Descriptor::AllocReq {
        tag: bogus_tag,
        pid: 1,
        req_id: 4243,
        va: 0,
        size: 0,
        perms: perms::RW,
        page_shift: 0,
        fixed: false,
    };
    let mem = c.rx_mem();
    rx.push(mem, &bad).unwrap();
    let deadline = Instant::now() + STEP;
    let reply = loop {
        let found = c.peek_tx().into_iter().flatten().find_map(|d| match d {
            Descriptor::Reply { tag, status, .. } if tag == bogus_tag => Some(status),
            _ => None,
        });
        if let Some(st) = found {
            break st;
        }
        c.q.check_alive().unwrap_or_else(|e| panic!("{e}"));
        assert!(
            Instant::now() < deadline,
            "no reply to the refused request\n{}",
            c.q.log_tail(20)
        );
        std::hint::spin_loop();
    };
    assert_eq!(reply, Status::Malformed.raw());
    // The fast path drops a reply to a tag it never issued, and says so.
    let rejected0 = c.fp.stats().tx_rejected;
    c.fp.poll_rings(&mut |_, _| panic!("no response to an unknown tag"));
    assert_eq!(c.fp.stats().tx_rejected - rejected0, 1);

    // Still serving: allocate, write, read.
    let (st, va) = c.alloc(1, page);
    assert_eq!(st, Status::Ok, "alloc after the corrupt descriptor");
    let data = pattern(1500, 3);
    assert_eq!(c.write(1, va, &data), Status::Ok);
    assert_eq!(c.read(1, va, data.len()), (Status::Ok, data));
    c.q.check_alive().unwrap_or_else(|e| panic!("{e}"));
}

/// A stand-in for QEMU: a shell script with the given body.
fn fake_qemu(name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = std::env::temp_dir().join(format!("clio-fake-qemu-{}-{name}", std::process::id()));
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn qemu_that_exits_or_hangs_gives_a_clear_error() {
    if qemu_or_skip().is_none() {
        return;
    }
    let image = image();
    let board = board();

    let mut opts = QemuOptions::new(&image, board);
    opts.qemu = fake_qemu(
        "exits",
        "echo 'qemu: cannot open the memory backend' >&2; exit 3",
    );
    let e = QemuSlowPath::launch(opts).expect_err("an exiting QEMU");
    let msg = e.to_string();
    assert!(msg.contains("QEMU exited"), "{msg}");
    assert!(
        msg.contains("cannot open the memory backend"),
        "QEMU's output is quoted: {msg}"
    );

    // A QEMU that never boots anything: the wait ends at the timeout, and
    // the process is killed.
    let mut opts = QemuOptions::new(&image, board);
    opts.qemu = fake_qemu("hangs", "exec sleep 600");
    opts.timeout = Duration::from_millis(500);
    let t0 = Instant::now();
    let e = QemuSlowPath::launch(opts).expect_err("a silent QEMU");
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(
        e.to_string()
            .contains("no firmware log line containing `ring service ready` within 0.5 s"),
        "{e}"
    );
}

/// The node's rack side runs in the firmware: control datagrams reach it
/// over the rings (CONTROL_REQ / CONTROL_REPLY fragments), its gate holds a
/// free back (`BUSY`) until the range is opened again, and its answers (one
/// fragment or several) come back to the sender.
#[test]
fn rack_control_datagrams_reach_the_firmware_and_its_gate_holds_a_free() {
    use clio_control::{ErrorCode, Field, GateState, Message};
    let Some(qemu) = qemu_or_skip() else { return };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = Cosim::boot(qemu);
    let epoch = c.info_epoch();
    let page = c.board.pages.default_size;
    let (st, va) = c.alloc(1, 4 * page);
    assert_eq!(st, Status::Ok);
    let pid = c.creds(1).pid;
    let gate = |state| Message::Gate {
        region: 3,
        pid,
        va,
        len: 4 * page,
        state,
    };
    // Paused: the free is answered BUSY by the firmware's gate.
    assert_eq!(
        c.call(1, gate(GateState::Paused), "gate paused"),
        Message::Ack { epoch }
    );
    assert_eq!(c.free(1, va, 4 * page), Status::Busy);
    // No tracking gate starts there: refused naming the field.
    assert_eq!(
        c.call(2, Message::TakeDirty { region: 3, pid, va }, "take dirty"),
        Message::Refused {
            code: ErrorCode::NotAssigned,
            field: Field::TakeDirtyVa
        }
    );
    // Bindings, and a multi-fragment answer listing them.
    for chunk in 0..4u16 {
        let m = Message::Bind {
            region: 3,
            chunk,
            pid,
            va: va + u64::from(chunk) * page,
            len: page,
            import: true,
        };
        assert_eq!(
            c.call(10 + u32::from(chunk), m, "bind"),
            Message::Ack { epoch }
        );
    }
    let Message::ChunkList {
        chunks,
        pid: p,
        next,
        ..
    } = c.call(20, Message::Chunks { region: 3, from: 0 }, "chunks")
    else {
        panic!("a chunk list")
    };
    assert_eq!(p, pid);
    assert_eq!(next, None);
    assert_eq!(
        chunks.iter().map(|x| x.va).collect::<Vec<_>>(),
        (0..4).map(|i| va + i * page).collect::<Vec<_>>()
    );
    // A truncated datagram is refused naming the field.
    let mut buf = [0u8; clio_control::MAX_ENVELOPE_LEN];
    let n = clio_control::Envelope::new(30, Message::Lookup { region: 300 })
        .encode(&mut buf)
        .unwrap()
        .len();
    let env = c.control(&buf[..n - 1], "truncated");
    assert_eq!(
        (env.request_id, env.message),
        (
            30,
            Message::Refused {
                code: ErrorCode::Malformed,
                field: Field::LookupRegion
            }
        )
    );
    // Open again: the free goes through.
    assert_eq!(
        c.call(3, gate(GateState::Open), "gate open"),
        Message::Ack { epoch }
    );
    assert_eq!(c.free(1, va, 4 * page), Status::Ok);
    let st = c.fp.control_stats();
    assert_eq!((st.forwarded, st.answered, st.dropped), (9, 9, 0), "{st:?}");
}
