//! The typed layer (`clio::remote`) against the board double: over the
//! in-process backend and over UDP on loopback (connect by host name,
//! async calls).

mod common;

use clio::backend::{InProcess, InProcessBoard};
use clio::bytemuck::{Pod, Zeroable};
use clio::{
    perms, AsyncSession, Client, ClientConfig, ClioError, Completion, OpKind, RemoteAddr, Session,
};
use common::udp_board::UdpBoard;
use common::FakeBoard;

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[bytemuck(crate = "clio::bytemuck")]
#[repr(C)]
struct Rec {
    id: u32,
    kind: u16,
    flags: u16,
    value: f64,
}

fn cfg() -> ClientConfig {
    ClientConfig {
        mtu_payload: 1450,
        rto_initial_ns: 20_000_000,
        rto_min_ns: 20_000_000,
        rto_max_ns: 200_000_000,
        request_timeout_ns: 5_000_000_000,
        retry_budget: 20,
        page_shift: 12,
        // Small, so a record array is several requests.
        max_request_bytes: 4 << 10,
        ..ClientConfig::default()
    }
}

struct Inproc(FakeBoard);

impl InProcessBoard for Inproc {
    fn handle(&mut self, _from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.0.handle(pkt, &mut |r| out(&r));
    }
}

fn session() -> Session<InProcess<Inproc>> {
    Session::open_with(InProcess::new(Inproc(FakeBoard::new(1450)), 1), cfg()).unwrap()
}

fn rec(i: u32) -> Rec {
    Rec {
        id: i,
        kind: (i % 7) as u16,
        flags: 0xa5,
        value: f64::from(i) * 1.5,
    }
}

#[test]
fn pods_round_trip_in_their_in_memory_layout() {
    let mut s = session();
    let a = s.alloc(64 << 10).unwrap();
    assert!(a.size() >= 64 << 10);
    let r = rec(3);
    // Unaligned on purpose: the remote bytes need no alignment.
    let at = a.at(3);
    s.write_pod(at, &r).unwrap();
    assert_eq!(s.read_pod::<Rec>(at).unwrap(), r);
    // The bytes are the value's in-memory bytes, readable with the byte API.
    let raw = s.rread_vec(at.get(), 16).unwrap();
    assert_eq!(raw, clio::bytemuck::bytes_of(&r));
    // An array across several requests (16 B x 1000 > 4 KiB per request).
    let recs: Vec<Rec> = (0..1000).map(rec).collect();
    s.write_pods(a.addr(), &recs).unwrap();
    assert_eq!(s.read_pods::<Rec>(a.addr(), recs.len()).unwrap(), recs);
    assert_eq!(s.read_pod::<Rec>(a.index::<Rec>(999)).unwrap(), recs[999]);
    assert_eq!(a.index::<Rec>(2), a.addr() + 32);
    // A zero-sized type is refused before anything is sent.
    assert!(matches!(
        s.read_pod::<()>(a.addr()),
        Err(ClioError::InvalidArgument { what: "P", .. })
    ));
    let (va, size) = (a.addr().get(), a.size());
    s.free(a).unwrap();
    // Freed: the range is gone (the error names it).
    assert_eq!(
        s.read_pod::<u64>(RemoteAddr(va)),
        Err(ClioError::Unmapped {
            op: OpKind::Read,
            va,
            len: 8
        })
    );
    assert!(size > 0);
}

#[test]
#[should_panic(expected = "outside the")]
fn an_offset_outside_the_allocation_panics_before_sending() {
    let mut s = session();
    let a = s.alloc(4096).unwrap();
    let _ = a.at(a.size());
}

#[test]
#[should_panic(expected = "element 256 of 16 bytes outside")]
fn an_element_outside_the_allocation_panics_before_sending() {
    let mut s = session();
    let a = s.alloc(4096).unwrap();
    let _ = a.index::<Rec>(256);
}

#[test]
fn with_lock_unlocks_after_an_error_and_reports_it() {
    let mut s = session();
    let a = s.alloc(8192).unwrap();
    let lock = a.addr();
    let n = s
        .with_lock(lock, |s| {
            s.write_pod(lock + 8, &41u64)?;
            s.read_pod::<u64>(lock + 8)
        })
        .unwrap();
    assert_eq!(n, 41);
    // The closure fails (a read outside the allocation): its error comes
    // back and the lock was released (taking it again succeeds at once).
    let e = s
        .with_lock(lock, |s| s.read_pod::<u64>(RemoteAddr(0x10)))
        .unwrap_err();
    assert!(matches!(e, ClioError::Unmapped { va: 0x10, .. }), "{e}");
    s.rlock(lock.get()).unwrap();
    s.runlock(lock.get()).unwrap();
}

#[test]
fn rwait_and_rpoll_all_flatten_results() {
    let mut s = session();
    let a = s.alloc(4096).unwrap();
    let w = s.rwrite_async(a.addr().get(), b"flat").unwrap();
    assert_eq!(s.rwait(w).unwrap(), Completion::Written);
    let hs = vec![
        s.rread_async(a.addr().get(), 4).unwrap(),
        s.rread_async(a.addr().get() + 1, 2).unwrap(),
    ];
    assert_eq!(
        s.rpoll_all(&hs).unwrap(),
        vec![
            Completion::Read(b"flat".to_vec()),
            Completion::Read(b"la".to_vec())
        ]
    );
    // The first error, as a plain Result.
    let hs = vec![
        s.rread_async(a.addr().get(), 4).unwrap(),
        s.rread_async(0x20, 4).unwrap(),
    ];
    assert!(matches!(
        s.rpoll_all(&hs),
        Err(ClioError::Unmapped {
            va: 0x20,
            len: 4,
            ..
        })
    ));
}

#[test]
fn connect_takes_a_host_name_and_async_reads_fill_a_buffer() {
    let board = UdpBoard::start(1450, 0);
    let name = format!("localhost:{}", board.addr.port());
    let mut s = Session::connect_with(name.as_str(), cfg()).unwrap();
    let a = s.alloc_with(4096, perms::RW).unwrap();
    s.write_pods(a.addr(), &[rec(1), rec(2)]).unwrap();
    let token = s.share().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let x = AsyncSession::join(board.addr, token, cfg()).await.unwrap();
        let mut buf = [0u8; 16];
        // Eager: both submitted here, awaited later in any order.
        let into = x.rread_into(a.addr().get() + 16, &mut buf);
        let pod = x.read_pod::<Rec>(a.addr());
        assert_eq!(pod.await.unwrap(), rec(1));
        into.await.unwrap();
        assert_eq!(buf, clio::bytemuck::bytes_of(&rec(2)));
        x.write_pod(a.addr(), &rec(9)).await.unwrap();
        assert_eq!(
            x.read_pods::<Rec>(a.addr(), 2).await.unwrap(),
            [rec(9), rec(2)]
        );
    });
    s.free(a).unwrap();
    // Client::connect resolves names too; an unresolvable one is an error.
    let c = Client::connect_with(name.as_str(), cfg()).unwrap();
    assert_ne!(c.pid(), 0);
    assert!(matches!(
        clio::connect("no-such-host.invalid:1"),
        Err(ClioError::Transport(_))
    ));
}
