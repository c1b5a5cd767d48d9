//! Clio-MV against emulated boards: in process and over UDP, agreement with
//! a model, bad input (each with its own code), id reuse, concurrent
//! clients (sequential consistency per object), the tokio client.

use std::collections::HashMap;

use clio::backend::InProcess;
use clio::{AsyncSession, ClientConfig, ClioError, Session};
use clio_config::BoardConfig;
use clio_emu::sdk::Emu;
use clio_emu::{Board, ServeOptions, ServerHandle};
use clio_mv::{proto, AsyncMvClient, MvClient, MvError, MvOffload, ObjectId, OFFLOAD_ID};

fn cfg() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

fn board(max_objects: u32) -> Board {
    let mut b = Board::new(&cfg()).unwrap();
    b.register_offload(OFFLOAD_ID, Box::new(MvOffload::new(max_objects)))
        .unwrap();
    b
}

fn in_process(max_objects: u32) -> MvClient<InProcess<Emu>> {
    let s = Session::open_with(
        InProcess::new(Emu(board(max_objects)), 1),
        ClientConfig::from_board(&cfg()),
    )
    .unwrap();
    MvClient::new(s)
}

fn udp_board() -> ServerHandle {
    let c = cfg();
    clio_emu::spawn(
        board(1024),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&c),
    )
    .unwrap()
}

fn value(i: u64, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i as usize * 31 + j) as u8).collect()
}

/// The model of one object: every version ever appended, and how many are kept.
struct Model {
    versions: Vec<Vec<u8>>,
    keep: u64,
}

#[test]
fn agrees_with_a_model_through_wraps_deletes_and_reuse() {
    let mut mv = in_process(64);
    let mut model: HashMap<ObjectId, Model> = HashMap::new();
    let mut deleted = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for step in 0..3000u64 {
        let ids: Vec<ObjectId> = model.keys().copied().collect();
        match rnd(10) {
            0 if model.len() < 40 => {
                let keep = 1 + rnd(8) as u32;
                let size = 1 + rnd(300) as u32;
                let id = mv.create(keep, size).unwrap();
                assert!(!model.contains_key(&id), "{id} issued twice");
                model.insert(
                    id,
                    Model {
                        versions: Vec::new(),
                        keep: u64::from(keep),
                    },
                );
            }
            1 if !ids.is_empty() && rnd(4) == 0 => {
                let id = ids[rnd(ids.len() as u64) as usize];
                mv.delete(id).unwrap();
                model.remove(&id);
                deleted.push(id);
            }
            2..=5 if !ids.is_empty() => {
                let id = ids[rnd(ids.len() as u64) as usize];
                let info = mv.info(id).unwrap();
                let len = rnd(u64::from(info.value_size) + 1) as usize;
                let v = value(step, len);
                let m = model.get_mut(&id).unwrap();
                m.versions.push(v.clone());
                assert_eq!(mv.append(id, &v).unwrap(), m.versions.len() as u64);
            }
            _ if !ids.is_empty() => {
                let id = ids[rnd(ids.len() as u64) as usize];
                let m = &model[&id];
                let latest = m.versions.len() as u64;
                if latest == 0 {
                    assert!(matches!(
                        mv.read_latest(id),
                        Err(MvError::NoSuchVersion { .. })
                    ));
                    continue;
                }
                assert_eq!(
                    mv.read_latest(id).unwrap(),
                    (latest, m.versions[latest as usize - 1].clone())
                );
                let v = 1 + rnd(latest);
                let kept = v + m.keep > latest;
                match mv.read_version(id, v) {
                    Ok(got) => {
                        assert!(kept, "{id} v{v} should be gone");
                        assert_eq!(got, m.versions[v as usize - 1]);
                    }
                    Err(MvError::VersionGone { .. }) => assert!(!kept, "{id} v{v} kept"),
                    Err(e) => panic!("{id} v{v}: {e}"),
                }
                let info = mv.info(id).unwrap();
                assert_eq!(info.latest, latest);
                assert_eq!(info.oldest, latest.saturating_sub(m.keep - 1).max(1));
            }
            _ => {}
        }
    }
    for id in deleted {
        if !model.contains_key(&id) {
            assert!(matches!(mv.read_latest(id), Err(MvError::Deleted(d)) if d == id));
        }
    }
}

#[test]
fn bad_input_gets_distinct_errors() {
    let mut mv = in_process(4);
    // An id never issued, and a made-up generation of an issued index.
    let unknown = ObjectId(1 << 32 | 3);
    assert!(matches!(mv.read_latest(unknown), Err(MvError::NoSuchObject(i)) if i == unknown));
    let id = mv.create(4, 16).unwrap();
    assert!(matches!(
        mv.read_latest(ObjectId(id.0 + (5 << 32))),
        Err(MvError::NoSuchObject(_))
    ));
    // No version yet; above the latest.
    assert!(matches!(
        mv.read_latest(id),
        Err(MvError::NoSuchVersion { version: 0, .. })
    ));
    for i in 1..=6u64 {
        assert_eq!(mv.append(id, &value(i, 16)).unwrap(), i);
    }
    assert!(matches!(
        mv.read_version(id, 7),
        Err(MvError::NoSuchVersion { version: 7, .. })
    ));
    assert!(matches!(
        mv.read_version(id, 0),
        Err(MvError::NoSuchVersion { version: 0, .. })
    ));
    // Four kept: 3..=6; 1 and 2 are gone.
    assert!(matches!(
        mv.read_version(id, 2),
        Err(MvError::VersionGone { version: 2, .. })
    ));
    assert_eq!(mv.read_version(id, 3).unwrap(), value(3, 16));
    // Over the object's value size, and over the store's limit.
    assert!(matches!(
        mv.append(id, &[0; 17]),
        Err(MvError::ValueTooLong { len: 17, .. })
    ));
    assert!(matches!(
        mv.append(id, &[0; clio_mv::MAX_VALUE + 1]),
        Err(MvError::ValueTooLong { len: 1025, .. })
    ));
    // Shapes.
    for (versions, size) in [(0, 16), (4, 0), (4, 1025), (100_000, 1024)] {
        assert!(
            matches!(mv.create(versions, size), Err(MvError::BadShape { .. })),
            "{versions} x {size}"
        );
    }
    // Delete twice; every use of a deleted object says so.
    mv.delete(id).unwrap();
    assert!(matches!(mv.delete(id), Err(MvError::Deleted(i)) if i == id));
    assert!(matches!(mv.append(id, b"x"), Err(MvError::Deleted(_))));
    assert!(matches!(mv.read_version(id, 4), Err(MvError::Deleted(_))));
    // The id's index is issued again with a new generation; the old id stays deleted.
    let again = mv.create(2, 8).unwrap();
    assert_eq!(again.0 as u32, id.0 as u32);
    assert_ne!(again, id);
    assert!(matches!(mv.read_latest(id), Err(MvError::Deleted(_))));
    mv.append(again, b"new").unwrap();
    assert_eq!(mv.read_latest(again).unwrap(), (1, b"new".to_vec()));
    // Out of ids (4 at most).
    for _ in 0..3 {
        mv.create(1, 8).unwrap();
    }
    assert!(matches!(mv.create(1, 8), Err(MvError::Full)));

    // The store checks too (a client that skips the checks), each with its code.
    let s = mv.session_mut();
    let refused = |r: Result<Vec<u8>, ClioError>| match r {
        Err(ClioError::OffloadRefused { code, .. }) => code,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let (op, args) = proto::Call::Append {
        id: again.0,
        value: &[0; 1025],
    }
    .encode();
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, op, &args)),
        proto::code::VALUE_TOO_LONG
    );
    let (op, args) = proto::Call::Create {
        versions: 0,
        value_size: 8,
    }
    .encode();
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, op, &args)),
        proto::code::BAD_SHAPE
    );
    let (op, mut args) = proto::Call::Append {
        id: again.0,
        value: b"abc",
    }
    .encode();
    args.pop();
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, op, &args)),
        proto::code::BAD_ARGS
    );
    assert_eq!(
        refused(s.offload_call(OFFLOAD_ID, 99, &[0; 8])),
        proto::code::BAD_ARGS
    );
    // Every refusal code seen above is distinct.
    let codes = [
        proto::code::BAD_ARGS,
        proto::code::NO_SUCH_OBJECT,
        proto::code::DELETED,
        proto::code::NO_SUCH_VERSION,
        proto::code::VERSION_GONE,
        proto::code::VALUE_TOO_LONG,
        proto::code::BAD_SHAPE,
        proto::code::FULL,
    ];
    let mut sorted = codes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), codes.len());
    // Still serving.
    assert_eq!(mv.read_latest(again).unwrap(), (1, b"new".to_vec()));
}

#[test]
fn no_store_under_the_id() {
    let s = Session::open_with(
        InProcess::new(Emu(board(4)), 1),
        ClientConfig::from_board(&cfg()),
    )
    .unwrap();
    let mut mv = MvClient::with_offload(s, 77);
    assert!(matches!(mv.create(1, 8), Err(MvError::NoOffload(77))));
}

#[test]
fn concurrent_clients_over_udp_see_one_order_per_object() {
    let server = udp_board();
    let addr = server.addr();
    let c = cfg();
    let mut setup = MvClient::new(Session::open(addr, ClientConfig::from_board(&c)).unwrap());
    // One shared object keeping every version, one private object each.
    let shared = setup.create(1024, 32).unwrap();
    let threads: Vec<_> = (0..4u8)
        .map(|t| {
            std::thread::spawn(move || {
                let s = Session::open(addr, ClientConfig::from_board(&c)).unwrap();
                let mut mv = MvClient::new(s);
                let own = mv.create(8, 64).unwrap();
                let mut mine = Vec::new();
                let mut last_seen = 0;
                for round in 0..100u8 {
                    // Every value names its writer: [thread, round, ...].
                    let v = [t, round].repeat(16);
                    let ver = mv.append(shared, &v).unwrap();
                    assert!(ver > last_seen, "a later append got an earlier version");
                    mine.push((ver, v));
                    // The latest is never older than what this client did last.
                    let (latest, val) = mv.read_latest(shared).unwrap();
                    assert!(latest >= ver);
                    assert_eq!(val.len(), 32, "torn value");
                    assert!(val.chunks(2).all(|p| p == &val[..2]), "torn value");
                    last_seen = latest;
                    mv.append(own, &[t; 64]).unwrap();
                }
                for (ver, v) in &mine {
                    assert_eq!(&mv.read_version(shared, *ver).unwrap(), v);
                }
                assert_eq!(mv.info(own).unwrap().latest, 100);
                mine.into_iter().map(|(v, _)| v).collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut all: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    all.sort_unstable();
    // 400 appends, 400 distinct versions, no gap: one total order.
    assert_eq!(all, (1..=400).collect::<Vec<_>>());
    assert_eq!(setup.info(shared).unwrap().latest, 400);
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
        let mv = AsyncMvClient::new(s);
        let creates: Vec<_> = (0..16).map(|_| mv.create(4, 100)).collect();
        let mut ids = Vec::new();
        for f in creates {
            ids.push(f.await.unwrap());
        }
        let appends: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| mv.append(id, &value(i as u64, 100)))
            .collect();
        for f in appends {
            assert_eq!(f.await.unwrap(), 1);
        }
        let reads: Vec<_> = ids.iter().map(|&id| mv.read_version(id, 1)).collect();
        for (i, f) in reads.into_iter().enumerate() {
            assert_eq!(f.await.unwrap(), value(i as u64, 100));
        }
        assert_eq!(mv.read_latest(ids[0]).await.unwrap().0, 1);
        assert_eq!(mv.info(ids[0]).await.unwrap().oldest, 1);
        mv.delete(ids[0]).await.unwrap();
        assert!(matches!(mv.delete(ids[0]).await, Err(MvError::Deleted(_))));
        assert!(matches!(
            mv.read_version(ids[1], 9).await,
            Err(MvError::NoSuchVersion { version: 9, .. })
        ));
        assert!(matches!(
            mv.append(ids[1], &[0u8; 2000]).await,
            Err(MvError::ValueTooLong { len: 2000, .. })
        ));
    });
    server.stop().unwrap();
}
