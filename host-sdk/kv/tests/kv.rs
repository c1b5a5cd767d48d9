//! Clio-KV against emulated boards: in process and over UDP, agreement with a
//! model, concurrent clients, the tokio client, bad input, and the
//! partitioner.

use std::collections::HashMap;

use clio::backend::InProcess;
use clio::{AsyncSession, ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::sdk::Emu;
use clio_emu::{Board, ServeOptions, ServerHandle};
use clio_kv::{proto, AsyncKvClient, KvClient, KvError, KvOffload, Partitioner, OFFLOAD_ID};

fn cfg() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

fn board() -> Board {
    let mut b = Board::new(&cfg()).unwrap();
    b.register_offload(OFFLOAD_ID, Box::new(KvOffload::new(64)))
        .unwrap();
    b
}

fn in_process() -> KvClient<InProcess<Emu>> {
    let s = Session::open_with(
        InProcess::new(Emu(board()), 1),
        ClientConfig::from_board(&cfg()),
    )
    .unwrap();
    KvClient::new(vec![s]).unwrap()
}

fn udp_board() -> ServerHandle {
    let c = cfg();
    clio_emu::spawn(
        board(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&c),
    )
    .unwrap()
}

fn value(i: u32, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i as usize * 31 + j) as u8).collect()
}

#[test]
fn agrees_with_a_map_through_long_chains() {
    // 64 head slots and 2000 keys: chains of several slots per bucket.
    let mut kv = in_process();
    let mut model = HashMap::new();
    for i in 0..2000u32 {
        let k = format!("key-{i}").into_bytes();
        let v = value(i, (i as usize * 7) % 300);
        kv.create(&k, &v).unwrap();
        model.insert(k, v);
    }
    for i in (0..2000u32).step_by(3) {
        let k = format!("key-{i}").into_bytes();
        let v = value(i + 1, 1024);
        kv.update(&k, &v).unwrap();
        model.insert(k, v);
    }
    for i in (0..2000u32).step_by(5) {
        let k = format!("key-{i}").into_bytes();
        kv.delete(&k).unwrap();
        model.remove(&k);
    }
    // Reuse of freed entries and objects.
    for i in (0..2000u32).step_by(10) {
        let k = format!("key-{i}").into_bytes();
        let v = value(i + 2, 64);
        kv.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    for i in 0..2000u32 {
        let k = format!("key-{i}").into_bytes();
        match model.get(&k) {
            Some(v) => assert_eq!(&kv.read(&k).unwrap(), v, "key-{i}"),
            None => assert!(matches!(kv.read(&k), Err(KvError::NotFound)), "key-{i}"),
        }
    }
}

#[test]
fn bad_input_gets_distinct_errors() {
    let mut kv = in_process();
    let long_key = vec![b'k'; clio_kv::MAX_KEY + 1];
    assert!(matches!(
        kv.create(&long_key, b"v"),
        Err(KvError::KeyTooLong { len: 251, max: 250 })
    ));
    assert!(matches!(
        kv.create(b"", b"v"),
        Err(KvError::KeyTooLong { len: 0, .. })
    ));
    let big = vec![0u8; clio_kv::MAX_VALUE + 1];
    assert!(matches!(
        kv.create(b"k", &big),
        Err(KvError::ValueTooLong {
            len: 1025,
            max: 1024
        })
    ));
    assert!(matches!(kv.read(b"missing"), Err(KvError::NotFound)));
    assert!(matches!(
        kv.update(b"missing", b"v"),
        Err(KvError::NotFound)
    ));
    kv.create(b"k", b"v").unwrap();
    assert!(matches!(kv.create(b"k", b"w"), Err(KvError::Exists)));
    kv.delete(b"k").unwrap();
    assert!(matches!(kv.delete(b"k"), Err(KvError::NotFound)));
    // The store checks too (a client that skips the checks).
    let s = &mut kv.sessions_mut()[0];
    let refused = |r: Result<Vec<u8>, clio::ClioError>| match r {
        Err(clio::ClioError::OffloadRefused { code, .. }) => code,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let args = proto::encode(&long_key, b"v");
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, proto::op::CREATE, &args)),
        proto::code::KEY_TOO_LONG
    );
    let args = proto::encode(b"k", &big);
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, proto::op::CREATE, &args)),
        proto::code::VALUE_TOO_LONG
    );
    let mut args = proto::encode(b"k", b"v");
    args.pop();
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, proto::op::CREATE, &args)),
        proto::code::BAD_ARGS
    );
    let args = proto::encode(b"k", b"v");
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, 99, &args)),
        proto::code::BAD_ARGS
    );
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, proto::op::READ, &args)),
        proto::code::BAD_ARGS
    );
    // An unknown offload id.
    let sess = kv.sessions_mut().iter_mut().next().unwrap();
    let s = std::mem::replace(
        sess,
        Session::open_with(
            InProcess::new(Emu(board()), 2),
            ClientConfig::from_board(&cfg()),
        )
        .unwrap(),
    );
    let mut other = KvClient::with_offload(vec![s], 77).unwrap();
    assert!(matches!(other.read(b"k"), Err(KvError::NoOffload(77))));
    // Still serving.
    kv.put(b"k2", b"v2").unwrap();
    assert_eq!(kv.read(b"k2").unwrap(), b"v2");
}

#[test]
fn concurrent_clients_over_udp_see_committed_values() {
    let server = udp_board();
    let addr = server.addr();
    let c = cfg();
    let mut setup = KvClient::new(vec![
        Session::open(addr, ClientConfig::from_board(&c)).unwrap()
    ])
    .unwrap();
    for i in 0..50u32 {
        setup
            .create(format!("shared-{i}").as_bytes(), &[0u8; 256])
            .unwrap();
    }
    let threads: Vec<_> = (0..4u8)
        .map(|t| {
            std::thread::spawn(move || {
                let s = Session::open(addr, ClientConfig::from_board(&c)).unwrap();
                let mut kv = KvClient::new(vec![s]).unwrap();
                for round in 0..100u32 {
                    let k = format!("shared-{}", round % 50);
                    // Every value is one byte repeated: a torn value would mix bytes.
                    kv.update(
                        k.as_bytes(),
                        &[t.wrapping_mul(50).wrapping_add(round as u8); 256],
                    )
                    .unwrap();
                    let v = kv.read(k.as_bytes()).unwrap();
                    assert_eq!(v.len(), 256);
                    assert!(v.iter().all(|&b| b == v[0]), "torn value");
                    let own = format!("own-{t}-{round}");
                    kv.create(own.as_bytes(), own.as_bytes()).unwrap();
                }
                for round in 0..100u32 {
                    let own = format!("own-{t}-{round}");
                    assert_eq!(kv.read(own.as_bytes()).unwrap(), own.as_bytes());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    server.stop().unwrap();
}

#[test]
fn tokio_client_pipelines() {
    let server = udp_board();
    let addr = server.addr();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = AsyncSession::open(addr, ClientConfig::from_board(&cfg()))
            .await
            .unwrap();
        let kv = AsyncKvClient::new(vec![s]).unwrap();
        let creates: Vec<_> = (0..64u32)
            .map(|i| kv.create(format!("a{i}").as_bytes(), &value(i, 100)))
            .collect();
        for f in creates {
            f.await.unwrap();
        }
        let reads: Vec<_> = (0..64u32)
            .map(|i| kv.read(format!("a{i}").as_bytes()))
            .collect();
        for (i, f) in reads.into_iter().enumerate() {
            assert_eq!(f.await.unwrap(), value(i as u32, 100));
        }
        assert!(matches!(kv.read(b"nope").await, Err(KvError::NotFound)));
        assert!(matches!(
            kv.put(b"k", &[0u8; 2000]).await,
            Err(KvError::ValueTooLong { .. })
        ));
    });
    server.stop().unwrap();
}

#[test]
fn partitioner_spreads_keys_and_is_stable() {
    assert!(matches!(Partitioner::new(0), Err(KvError::NoNodes)));
    let one = Partitioner::new(1).unwrap();
    assert!((0..1000).all(|i| one.node_of(format!("k{i}").as_bytes()) == 0));
    let four = Partitioner::new(4).unwrap();
    let five = Partitioner::new(5).unwrap();
    let mut counts = [0usize; 4];
    let mut moved = 0;
    for i in 0..10_000 {
        let k = format!("k{i}");
        let n = four.node_of(k.as_bytes());
        counts[n] += 1;
        let m = five.node_of(k.as_bytes());
        if m != n {
            assert_eq!(m, 4, "a key moves only to the new node");
            moved += 1;
        }
    }
    assert!(
        counts.iter().all(|&c| (2000..3000).contains(&c)),
        "{counts:?}"
    );
    assert!((1500..2500).contains(&moved), "{moved}");
}

#[test]
fn two_nodes_partition_the_store() {
    let (a, b) = (udp_board(), udp_board());
    let c = cfg();
    let sa = Session::open(a.addr(), ClientConfig::from_board(&c)).unwrap();
    let sb = Session::open(b.addr(), ClientConfig::from_board(&c)).unwrap();
    let mut kv = KvClient::new(vec![sa, sb]).unwrap();
    for i in 0..200u32 {
        kv.create(format!("p{i}").as_bytes(), &value(i, 32))
            .unwrap();
    }
    for i in 0..200u32 {
        assert_eq!(kv.read(format!("p{i}").as_bytes()).unwrap(), value(i, 32));
    }
    let calls: Vec<u64> = kv
        .sessions()
        .iter()
        .map(|s| s.connection().stats().completed)
        .collect();
    assert!(calls.iter().all(|&n| n > 100), "{calls:?}");
    a.stop().unwrap();
    b.stop().unwrap();
}

#[test]
fn batches_mix_hits_misses_bad_ops_and_over_limit_keys() {
    use clio_kv::KvOp;
    let mut kv = in_process();
    let keys: Vec<Vec<u8>> = (0..60u32).map(|i| format!("b-{i}").into_bytes()).collect();
    let vals: Vec<Vec<u8>> = (0..60u32).map(|i| value(i, 1024)).collect();
    let creates: Vec<_> = keys
        .iter()
        .zip(&vals)
        .map(|(k, v)| KvOp::Create(k, v))
        .collect();
    assert!(kv
        .batch(&creates)
        .unwrap()
        .iter()
        .all(|r| r.as_ref().unwrap().is_empty()));
    let long_key = vec![b'k'; proto::ARGS_LEN + clio_kv::MAX_KEY];
    let long_value = vec![0u8; clio_kv::MAX_VALUE + 1];
    let new_value = value(99, 1024);
    // Forty 1 KiB reads: answers of several packets, and more than one call.
    let mut ops: Vec<KvOp> = keys[..40].iter().map(|k| KvOp::Read(k)).collect();
    ops.extend([
        KvOp::Read(b"missing"),
        KvOp::Update(&keys[1], &new_value),
        KvOp::Read(&keys[1]),
        KvOp::Delete(b"missing"),
        KvOp::Create(&keys[2], b"x"),
        KvOp::Read(&long_key),
        KvOp::Put(b"fine", &long_value),
        KvOp::Delete(&keys[3]),
        KvOp::Delete(&keys[3]),
        KvOp::Put(b"fresh", b"v"),
        KvOp::Read(b"fresh"),
    ]);
    let r = kv.batch(&ops).unwrap();
    assert_eq!(r.len(), ops.len());
    for i in 0..40 {
        assert_eq!(r[i].as_ref().unwrap(), &vals[i], "read {i}");
    }
    let r = &r[40..];
    assert!(matches!(r[0], Err(KvError::NotFound)));
    assert!(r[1].as_ref().unwrap().is_empty());
    // Operations of a batch run in order: the read sees the update.
    assert_eq!(r[2].as_ref().unwrap(), &new_value);
    assert!(matches!(r[3], Err(KvError::NotFound)));
    assert!(matches!(r[4], Err(KvError::Exists)));
    assert!(matches!(r[5], Err(KvError::KeyTooLong { len, .. }) if len == long_key.len()));
    assert!(matches!(r[6], Err(KvError::ValueTooLong { .. })));
    assert!(r[7].is_ok());
    assert!(matches!(r[8], Err(KvError::NotFound)));
    assert!(r[9].is_ok());
    assert_eq!(r[10].as_ref().unwrap(), b"v");
    assert!(matches!(kv.read(&keys[3]), Err(KvError::NotFound)));

    // The store checks every operation itself: a raw batch with an unknown
    // operation, a key over the limit and a value on a read.
    use clio_wire::payload::{OffloadBatchReq, OffloadBatchResult, OFFLOAD_OP_BATCH};
    use clio_wire::Status;
    let mut args = OffloadBatchReq { count: 5 }.to_bytes().to_vec();
    proto::encode_batch_op(&mut args, proto::op::READ, &keys[0], &[]);
    proto::encode_batch_op(&mut args, 99, &keys[0], &[]);
    proto::encode_batch_op(&mut args, proto::op::READ, &long_key, &[]);
    proto::encode_batch_op(&mut args, proto::op::READ, &keys[0], b"v");
    proto::encode_batch_op(&mut args, proto::op::READ, b"missing", &[]);
    let s = &mut kv.sessions_mut()[0];
    let a = s.offload_call(OFFLOAD_ID, OFFLOAD_OP_BATCH, &args).unwrap();
    assert_eq!(OffloadBatchReq::parse(&a).unwrap().count, 5);
    let mut rest = &a[OffloadBatchReq::LEN..];
    let mut got = Vec::new();
    for _ in 0..5 {
        let (r, v, tail) = OffloadBatchResult::parse_with_result(rest).unwrap();
        got.push((r.status, r.code, v.to_vec()));
        rest = tail;
    }
    assert!(rest.is_empty());
    assert_eq!(got[0], (Status::Ok, 0, vals[0].clone()));
    assert_eq!(
        got[1],
        (Status::OffloadRefused, proto::code::BAD_ARGS, vec![])
    );
    assert_eq!(
        got[2],
        (Status::OffloadRefused, proto::code::KEY_TOO_LONG, vec![])
    );
    assert_eq!(
        got[3],
        (Status::OffloadRefused, proto::code::BAD_ARGS, vec![])
    );
    assert_eq!(
        got[4],
        (Status::OffloadRefused, proto::code::NOT_FOUND, vec![])
    );

    // A batch that does not parse, and one whose answer could outgrow the
    // board's response bound, are refused whole.
    let mut short = args.clone();
    short.pop();
    assert!(matches!(
        s.offload_call(OFFLOAD_ID, OFFLOAD_OP_BATCH, &short),
        Err(clio::ClioError::Malformed { .. })
    ));
    let mut many = OffloadBatchReq { count: 64 }.to_bytes().to_vec();
    for _ in 0..64 {
        proto::encode_batch_op(&mut many, proto::op::READ, b"k", &[]);
    }
    assert!(matches!(
        s.offload_call(OFFLOAD_ID, OFFLOAD_OP_BATCH, &many),
        Err(clio::ClioError::TooLarge { .. })
    ));
    // The store keeps serving.
    assert_eq!(kv.read(&keys[0]).unwrap(), vals[0]);
}

#[test]
fn tokio_batches_over_a_lossy_link() {
    use clio_emu::faults::FaultConfig;
    use clio_kv::KvOp;
    let c = cfg();
    let lossy =
        FaultConfig::parse("drop=0.05,dup=0.02,reorder=0.05,window_us=200,seed=16").unwrap();
    let h = clio_emu::spawn(
        board(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions {
            inbound: lossy,
            outbound: FaultConfig { seed: 61, ..lossy },
            ..ServeOptions::for_board(&c)
        },
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = AsyncSession::open(h.addr(), ClientConfig::from_board(&c))
            .await
            .unwrap();
        let kv = AsyncKvClient::new(vec![s]).unwrap();
        let keys: Vec<Vec<u8>> = (0..200u32).map(|i| format!("t-{i}").into_bytes()).collect();
        let vals: Vec<Vec<u8>> = (0..200u32).map(|i| value(i, 1024)).collect();
        for (ks, vs) in keys.chunks(32).zip(vals.chunks(32)) {
            let ops: Vec<_> = ks.iter().zip(vs).map(|(k, v)| KvOp::Create(k, v)).collect();
            for r in kv.batch(&ops).await.unwrap() {
                r.unwrap();
            }
        }
        for round in 0..3 {
            for (ks, vs) in keys.chunks(32).zip(vals.chunks(32)) {
                let ops: Vec<_> = ks.iter().map(|k| KvOp::Read(k)).collect();
                let r = kv.batch(&ops).await.unwrap();
                for (i, v) in r.into_iter().enumerate() {
                    assert_eq!(&v.unwrap(), &vs[i], "round {round}");
                }
            }
        }
    });
}

/// One key several times in one batch: each operation sees the ones before
/// it, although the batch's look-ahead (`prepare`) fetched the key's slot
/// and object before any ran; the same with the store's memory accessed
/// as Clio packets (no look-ahead, no in-place reads).
#[test]
fn one_key_many_times_in_a_batch_runs_in_order() {
    use clio_kv::KvOp;
    for direct in [true, false] {
        let mut b = board();
        b.set_offload_direct(direct);
        let s = Session::open_with(InProcess::new(Emu(b), 1), ClientConfig::from_board(&cfg()))
            .unwrap();
        let mut kv = KvClient::new(vec![s]).unwrap();
        let (v1, v2, v3) = (value(1, 1024), value(2, 700), value(3, 5));
        kv.create(b"k", &v1).unwrap();
        kv.create(b"other", &v3).unwrap();
        let ops = [
            KvOp::Read(b"k"),
            KvOp::Update(b"k", &v2),
            KvOp::Read(b"other"),
            KvOp::Read(b"k"),
            KvOp::Delete(b"k"),
            KvOp::Read(b"k"),
            KvOp::Create(b"k", &v3),
            KvOp::Read(b"k"),
            KvOp::Put(b"k", &v1),
            KvOp::Read(b"k"),
        ];
        let r = kv.batch(&ops).unwrap();
        assert_eq!(r[0].as_ref().unwrap(), &v1, "direct {direct}");
        assert!(r[1].as_ref().unwrap().is_empty());
        assert_eq!(r[2].as_ref().unwrap(), &v3);
        assert_eq!(r[3].as_ref().unwrap(), &v2);
        assert!(r[4].is_ok());
        assert!(matches!(r[5], Err(KvError::NotFound)));
        assert!(r[6].is_ok());
        assert_eq!(r[7].as_ref().unwrap(), &v3);
        assert!(r[8].is_ok());
        assert_eq!(r[9].as_ref().unwrap(), &v1);
        assert_eq!(kv.read(b"k").unwrap(), v1);
    }
}

/// Batches from several clients at once over UDP (each key written by one
/// client, read by all): every read sees a value some batch committed.
#[test]
fn concurrent_batches_over_udp_see_committed_values() {
    use clio_kv::KvOp;
    let server = udp_board();
    let addr = server.addr();
    let threads: Vec<_> = (0..3u32)
        .map(|t| {
            std::thread::spawn(move || {
                let s = Session::open(addr, ClientConfig::from_board(&cfg())).unwrap();
                let mut kv = KvClient::new(vec![s]).unwrap();
                let keys: Vec<Vec<u8>> = (0..24u32).map(|i| format!("c{i}").into_bytes()).collect();
                let mine: Vec<&Vec<u8>> = keys
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i as u32 % 3 == t)
                    .map(|(_, k)| k)
                    .collect();
                for round in 0..20u32 {
                    let v = value(round, 1024);
                    let mut ops: Vec<KvOp> = mine.iter().map(|k| KvOp::Put(k, &v)).collect();
                    ops.extend(keys.iter().map(|k| KvOp::Read(k)));
                    for (op, r) in ops.iter().zip(kv.batch(&ops).unwrap()) {
                        match (op, r) {
                            (KvOp::Read(_), Ok(got)) => {
                                assert!((0..20).any(|i| got == value(i, 1024)), "a torn value")
                            }
                            (KvOp::Read(_), Err(KvError::NotFound)) => {}
                            (_, r) => {
                                r.unwrap();
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
