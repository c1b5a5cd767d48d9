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
