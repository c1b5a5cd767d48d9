//! Clio-KV in the firmware (issue #16): the SDK's `KvClient` against a
//! board whose slow path runs in QEMU, where the store is the firmware's
//! (`clio_slowpath::offload::kv`, the same code `KvOffload` wraps), reached
//! by `OFFLOAD_CALL`s the fast-path model passes over the rings.
//!
//! Needs `qemu-system-aarch64` (skipped outside CI without it); the image
//! is built for `board-configs/emulator.toml` as in `clio-emu`'s
//! co-simulation tests, whose helpers this shares.

#[path = "../../emulator/tests/common/qemu.rs"]
mod qemu_common;

use clio::{ClioError, Session};
use clio_kv::{KvClient, KvError, KvOp};
use clio_slowpath::offload::tally;
use qemu_common::qemu_or_skip;

#[test]
fn kv_client_against_the_firmware_store() {
    let Some(qemu) = qemu_or_skip() else { return };
    let (server, client) = qemu_common::serve_firmware(qemu);
    let s = Session::open(server.addr(), client.clone()).unwrap();
    let mut kv = KvClient::new(vec![s]).unwrap();

    kv.create(b"k1", b"v1").unwrap();
    assert_eq!(kv.read(b"k1").unwrap(), b"v1");
    kv.put(b"k1", b"v1 again").unwrap();
    assert_eq!(kv.read(b"k1").unwrap(), b"v1 again");
    assert!(matches!(kv.create(b"k1", b"x"), Err(KvError::Exists)));
    assert!(matches!(kv.read(b"nope"), Err(KvError::NotFound)));
    kv.delete(b"k1").unwrap();
    assert!(matches!(kv.delete(b"k1"), Err(KvError::NotFound)));
    assert!(matches!(kv.read(b"k1"), Err(KvError::NotFound)));

    // A batch: 40 puts, then 40 reads and a missing key (answers of
    // several packets), one result per operation.
    let keys: Vec<String> = (0..40).map(|i| format!("key-{i:03}")).collect();
    let value = |i: usize| vec![i as u8; 1000];
    let vals: Vec<Vec<u8>> = (0..40).map(value).collect();
    let puts: Vec<KvOp> = keys
        .iter()
        .zip(&vals)
        .map(|(k, v)| KvOp::Put(k.as_bytes(), v))
        .collect();
    for r in kv.batch(&puts).unwrap() {
        r.unwrap();
    }
    let mut reads: Vec<KvOp> = keys.iter().map(|k| KvOp::Read(k.as_bytes())).collect();
    reads.push(KvOp::Read(b"missing"));
    let got = kv.batch(&reads).unwrap();
    for (i, r) in got.iter().take(40).enumerate() {
        assert_eq!(r.as_ref().unwrap(), &value(i), "key {i}");
    }
    assert!(matches!(got[40], Err(KvError::NotFound)));

    // A faulting call (the tally offload reading outside its space) leaves
    // the board serving the store.
    let e = kv.sessions_mut()[0]
        .offload_call(tally::ID, tally::op::PEEK, &8u64.to_be_bytes())
        .unwrap_err();
    assert!(matches!(e, ClioError::OffloadFault { .. }), "{e:?}");
    assert_eq!(kv.read(b"key-007").unwrap(), value(7));

    // A second client sees the same store.
    let mut other = KvClient::new(vec![Session::open(server.addr(), client).unwrap()]).unwrap();
    assert_eq!(other.read(b"key-039").unwrap(), value(39));
    drop(kv);
    drop(other);
    server.stop().unwrap();
}
