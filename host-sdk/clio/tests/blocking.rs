//! The blocking API over real UDP sockets on loopback and over the
//! in-process backend, against the board double.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use clio::backend::{InProcess, InProcessBoard, SharedBoard, Transport};
use clio::{Client, ClientConfig, ClioError, Completion, OpKind, Session};
use clio_wire::payload::perms;
use clio_wire::Opcode;
use common::udp_board::UdpBoard;
use common::FakeBoard;

fn cfg() -> ClientConfig {
    ClientConfig {
        mtu_payload: 1450,
        // Generous floors: debug builds on a loaded machine answer slowly.
        rto_initial_ns: 20_000_000,
        rto_min_ns: 20_000_000,
        rto_max_ns: 200_000_000,
        request_timeout_ns: 5_000_000_000,
        retry_budget: 20,
        page_shift: 12,
        max_request_bytes: 16 << 10,
        ..ClientConfig::default()
    }
}

/// For runs that must see no retransmission at all: an RTO floor far above
/// any scheduling hiccup of a loaded test machine.
fn cfg_clean() -> ClientConfig {
    ClientConfig {
        rto_initial_ns: 500_000_000,
        rto_min_ns: 500_000_000,
        rto_max_ns: 2_000_000_000,
        request_timeout_ns: 20_000_000_000,
        ..cfg()
    }
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

/// The same workload over any transport.
fn workload<T: Transport>(s: &mut Session<T>) {
    let a = s.ralloc(256 << 10, perms::RW).unwrap();
    // Larger than max_request_bytes and than the MTU: split twice.
    let data = pattern(100_000);
    s.rwrite(a.va + 5, &data).unwrap();
    let mut back = vec![0u8; data.len()];
    s.rread(a.va + 5, &mut back).unwrap();
    assert_eq!(back, data);

    // Async: many independent reads and writes, polled together.
    let mut hs = Vec::new();
    for i in 0..32u64 {
        hs.push(
            s.rwrite_async(a.va + 128 * 1024 + i * 4096, &[i as u8; 64])
                .unwrap(),
        );
    }
    for i in 0..32u64 {
        hs.push(s.rread_async(a.va + 128 * 1024 + i * 4096, 64).unwrap());
    }
    let rs = s.rpoll(&hs).unwrap();
    for (i, r) in rs[32..].iter().enumerate() {
        // Each read follows the write of its page (RAW).
        assert_eq!(r, &Ok(Completion::Read(vec![i as u8; 64])));
    }
    assert!(rs[..32].iter().all(|r| r == &Ok(Completion::Written)));

    let w = a.va + 120 * 1024;
    assert_eq!(s.faa(w, 5).unwrap(), 0);
    assert_eq!(s.cas(w, 5, 11).unwrap(), 5);
    assert_eq!(s.tas(w + 8).unwrap(), 0);
    s.rlock(w + 16).unwrap();
    s.runlock(w + 16).unwrap();
    s.rfence().unwrap();
    // Non-blocking polling reaches completion without a blocking wait.
    let h = s.rread_async(w, 8).unwrap();
    let mut polls = 0u32;
    while !s.try_rpoll(&h).unwrap() {
        polls += 1;
        assert!(polls < 1_000_000, "try_rpoll never completed");
    }
    let mut word = [0u8; 8];
    s.rread_wait(h, &mut word).unwrap();
    assert_eq!(u64::from_le_bytes(word), 11);
    s.rrelease().unwrap();
    assert_eq!(s.info().unwrap().board_name().unwrap(), "fake");
    // Asynchronous metadata calls, ordered against data calls on the range.
    let h = s.ralloc_async(4096, perms::RW).unwrap();
    let b2 = match s.rpoll(&[h]).unwrap().remove(0) {
        Ok(Completion::Allocated(b)) => b,
        other => panic!("{other:?}"),
    };
    let w1 = s.rwrite_async(b2.va, b"gone soon").unwrap();
    let f = s.rfree_async(b2.va, b2.size).unwrap();
    let r = s.rread_async(b2.va, 4).unwrap();
    let rs = s.rpoll(&[w1, f, r]).unwrap();
    assert_eq!(rs[0], Ok(Completion::Written));
    assert_eq!(rs[1], Ok(Completion::Freed));
    assert_eq!(
        rs[2],
        Err(ClioError::Unmapped {
            op: OpKind::Read,
            va: b2.va,
            len: 4
        })
    );
    s.rfree(a.va, a.size).unwrap();
    let mut b = [0u8; 8];
    assert_eq!(
        s.rread(a.va, &mut b),
        Err(ClioError::Unmapped {
            op: OpKind::Read,
            va: a.va,
            len: 8
        })
    );
}

#[test]
fn udp_session_full_workload() {
    let board = UdpBoard::start(1000, 0);
    let mut s = Session::open(board.addr, cfg_clean()).unwrap();
    // The probe lowered the MTU to the board's.
    assert_eq!(s.connection().config().mtu_payload, 1000);
    workload(&mut s);
    assert_eq!(
        s.connection().stats().retries,
        0,
        "{:?}",
        s.connection().stats()
    );
    s.close().unwrap();
}

#[test]
fn udp_session_survives_loss() {
    // 3 % of the packets the board receives are lost.
    let board = UdpBoard::start(1450, 3);
    let mut s = Session::open(board.addr, cfg()).unwrap();
    workload(&mut s);
    let st = s.connection().stats();
    assert!(st.timeouts > 0 && st.retries > 0, "{st:?}");
}

#[test]
fn unreachable_board_gives_a_timeout_not_a_hang() {
    // A port with nothing behind it.
    let addr = {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.local_addr().unwrap()
    };
    let c = ClientConfig {
        retry_budget: 2,
        ..cfg()
    };
    let t0 = Instant::now();
    let e = Session::open(addr, c).unwrap_err();
    assert_eq!(
        e,
        ClioError::Timeout {
            op: OpKind::Info,
            attempts: 3,
            board: Some(format!("udp://{addr}"))
        }
    );
    // A dead board's error says which board.
    assert!(
        e.to_string()
            .contains(&format!("from the board at udp://{addr}")),
        "{e}"
    );
    // 20 + 40 + 80 ms of RTO, with slack.
    assert!(t0.elapsed().as_secs_f64() < 2.0);
}

#[test]
fn threads_share_an_address_space_through_joined_sessions() {
    let board = UdpBoard::start(1450, 0);
    let client = Client::new(board.addr, cfg()).unwrap();
    let mut s = client.session().unwrap();
    let a = s.ralloc(4096, perms::RW).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                let mut s = client.session().unwrap();
                for _ in 0..50 {
                    s.faa(a.va, 1).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.faa(a.va, 0).unwrap(), 200);
    // The anchor and five sessions, six board sessions of one PID.
    let b = board.board.lock().unwrap();
    let session_reqs = || b.requests.iter().filter(|h| h.opcode.needs_session());
    let mut sessions: Vec<u16> = session_reqs().map(|h| h.session).collect();
    sessions.sort_unstable();
    sessions.dedup();
    assert_eq!(sessions.len(), 5, "{sessions:?}");
    assert!(session_reqs().all(|h| h.pid == client.pid()));
}

/// The board double behind the in-process trait.
struct Inproc(FakeBoard);

impl InProcessBoard for Inproc {
    fn handle(&mut self, _from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.0.handle(pkt, &mut |r| out(&r));
    }
}

#[test]
fn in_process_session_full_workload() {
    let t = InProcess::new(Inproc(FakeBoard::new(1450)), 1);
    let mut s = Session::open_with(t, cfg_clean()).unwrap();
    workload(&mut s);
    assert_eq!(
        s.connection().stats().retries,
        0,
        "{:?}",
        s.connection().stats()
    );
}

#[test]
fn in_process_board_shared_by_sessions() {
    let shared = SharedBoard(Arc::new(Mutex::new(Inproc(FakeBoard::new(1450)))));
    let mut a = Session::open_with(InProcess::new(shared.clone(), 1), cfg()).unwrap();
    let join = ClientConfig {
        join: Some(a.share().unwrap()),
        ..cfg()
    };
    let mut b = Session::open_with(InProcess::new(shared.clone(), 2), join).unwrap();
    assert_eq!(a.pid(), b.pid());
    let r = a.ralloc(4096, perms::RW).unwrap();
    a.rwrite(r.va, b"shared").unwrap();
    let mut buf = [0u8; 6];
    b.rread(r.va, &mut buf).unwrap();
    assert_eq!(&buf, b"shared");
}

#[test]
fn in_process_lock_contention_ends_in_busy() {
    let shared = SharedBoard(Arc::new(Mutex::new(Inproc(FakeBoard::new(1450)))));
    let c = ClientConfig {
        request_timeout_ns: 50_000_000,
        busy_backoff_ns: 1_000_000,
        ..cfg()
    };
    // Two sessions of one address space.
    let mut a = Session::open_with(InProcess::new(shared.clone(), 1), c.clone()).unwrap();
    let mut b = Session::open_with(
        InProcess::new(shared.clone(), 2),
        ClientConfig {
            join: Some(a.share().unwrap()),
            ..c
        },
    )
    .unwrap();
    let r = a.ralloc(4096, perms::RW).unwrap();
    a.rlock(r.va).unwrap();
    let e = b.rlock(r.va);
    assert!(
        matches!(
            e,
            Err(ClioError::Busy {
                op: OpKind::Lock,
                ..
            })
        ),
        "{e:?}"
    );
    a.runlock(r.va).unwrap();
    b.rlock(r.va).unwrap();
}

/// A thread busy elsewhere for longer than the RTO between issuing
/// requests and polling them finds their answers waiting: it takes them in
/// before its timers fire, so nothing is retried (this made most of the
/// timeouts of pipelined runs on a loaded machine).
#[test]
fn answers_waiting_when_timers_expire_are_taken_first() {
    let c = ClientConfig {
        rto_initial_ns: 1_000_000,
        rto_min_ns: 1_000_000,
        ..cfg()
    };
    let board = UdpBoard::start(1450, 0);
    let mut s = Session::open(board.addr, c).unwrap();
    let a = s.ralloc(1 << 16, perms::RW).unwrap();
    for _ in 0..3 {
        let hs: Vec<_> = (0..32u64)
            .map(|i| s.rread_async(a.va + i * 64, 64).unwrap())
            .collect();
        // Send them all, then be away for five RTOs while the answers
        // arrive in the socket (and, on a loaded host, until the board has
        // answered everything sent: the case is answers already waiting).
        s.try_rpoll(&hs[31]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        board.wait_sent(s.connection().stats().packets_sent);
        for r in s.rpoll(&hs).unwrap() {
            assert!(matches!(r, Ok(Completion::Read(_))), "{r:?}");
        }
    }
    let st = s.connection().stats();
    assert_eq!((st.timeouts, st.retries), (0, 0), "{st:?}");
}

/// Dropping a session closes it at the board (and a session whose board
/// no longer has it closes fine).
#[test]
fn dropped_sessions_are_closed_at_the_board() {
    let board = UdpBoard::start(1450, 0);
    let s = Session::open(board.addr, cfg()).unwrap();
    let t = Session::join(board.addr, s.share().unwrap(), cfg()).unwrap();
    let (si, ti) = (*s.session_info().unwrap(), *t.session_info().unwrap());
    assert_eq!(si.pid, ti.pid);
    let open = |id: u16| board.board.lock().unwrap().sessions.contains_key(&id);
    assert!(open(si.session) && open(ti.session));
    drop(t);
    assert!(!open(ti.session), "drop closed it");
    // The board lost the session (as after an expiry): close still succeeds.
    board.board.lock().unwrap().sessions.remove(&si.session);
    s.close().unwrap();
}

#[test]
fn reads_and_writes_are_cut_at_the_boards_response_bound() {
    // The board states 4 KiB and refuses larger READs TOO_LARGE; the client
    // allows 16 KiB requests: the session learns the bound at open and
    // splits below it, sync and async, without the caller noticing.
    let mut fake = FakeBoard::new(1450);
    fake.max_resp_kib = 4;
    let shared = SharedBoard(Arc::new(Mutex::new(Inproc(fake))));
    let mut s = Session::open_with(InProcess::new(shared.clone(), 1), cfg()).unwrap();
    assert_eq!(s.board_info().unwrap().max_resp_bytes(), Some(4096));
    let a = s.ralloc(256 << 10, perms::RW).unwrap();
    let data = pattern(100_000);
    s.rwrite(a.va + 5, &data).unwrap();
    let mut back = vec![0u8; data.len()];
    s.rread(a.va + 5, &mut back).unwrap();
    assert_eq!(back, data);
    let h = s.rread_async(a.va + 77, 30_000).unwrap();
    let w = s.rwrite_async(a.va + 200_000, &data[..20_000]).unwrap();
    let mut part = vec![0u8; 30_000];
    s.rread_wait(h, &mut part).unwrap();
    assert_eq!(part, data[72..30_072]);
    assert!(s.rpoll(&[w]).unwrap()[0].is_ok());
    let board = shared.0.lock().unwrap();
    let reqs = &board.0.requests;
    let reads: Vec<_> = reqs.iter().filter(|h| h.opcode == Opcode::Read).collect();
    assert!(
        reads.len() >= 100_000 / 4096 + 30_000 / 4096,
        "{}",
        reads.len()
    );
    assert!(reqs
        .iter()
        .filter(|h| matches!(h.opcode, Opcode::Read | Opcode::Write))
        .all(|h| h.total_len <= 4096));
}
