//! Sessions end to end (issue #14), the SDK against the emulated board over
//! UDP: exactly-once that survives more writes than the dedup buffer has
//! records, spoofing from another socket that changes nothing and is never
//! answered with more bytes than it sent, and a restarted board surfacing
//! as `BoardRestarted` to every call of a session.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clio::{ClientConfig, ClioError, OpKind, Session, ShareToken};
use clio_emu::{Board, ClientId, Engine, ServeOptions};
use clio_tests::{emulator_config, SharedBoard};
use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::{perms, AtomicArgs, FreeReq, OpenSessionReq};
use clio_wire::{Header, Opcode, Packet, Status};

/// A served board that loses the first `drops` answers of one opcode (the
/// board executes the request; only its answer is lost on the way back).
struct LoseAnswers {
    board: SharedBoard,
    opcode: Opcode,
    drops: Arc<AtomicU32>,
}

impl Engine for LoseAnswers {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        let (opcode, drops) = (self.opcode, self.drops.clone());
        self.board.handle(from, packet, &mut |to, p| {
            let hit = p.get(1) == Some(&opcode.raw())
                && drops
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |d| d.checked_sub(1))
                    .is_ok();
            if !hit {
                out(to, p)
            }
        })
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        self.board.poll(out)
    }
}

/// Dedup records the board's buffer has (`dedup.buffer_bytes / entry_bytes`).
fn dedup_records(cfg: &clio_config::BoardConfig) -> u64 {
    cfg.dedup.buffer_bytes / u64::from(cfg.dedup.entry_bytes)
}

/// The scenario: an FAA whose answer is lost, then more writes from
/// the same process than the dedup buffer has records, then the FAA's retry:
/// the retry is answered from the record (the FAA runs once). Records are
/// freed only by the client's acknowledgements, never evicted; the FAA's
/// session does not acknowledge it until its answer arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_faa_answer_then_more_writes_than_records_then_retry_applies_once() {
    let cfg = emulator_config();
    let records = dedup_records(&cfg);
    let board = SharedBoard(Arc::new(Mutex::new(Board::new(&cfg).unwrap())));
    let drops = Arc::new(AtomicU32::new(1));
    let engine = LoseAnswers {
        board: board.clone(),
        opcode: Opcode::FetchAndAddResp,
        drops: drops.clone(),
    };
    let server = clio_emu::spawn(engine, ([127, 0, 0, 1], 0).into(), ServeOptions::default())
        .expect("bind a loopback port");
    let addr = server.addr();
    // The FAA's session waits long before it retries, so the writes below
    // all happen between the lost answer and the retry.
    let slow_retry = ClientConfig {
        rto_initial_ns: 3_000_000_000,
        rto_min_ns: 3_000_000_000,
        rto_max_ns: 6_000_000_000,
        request_timeout_ns: 60_000_000_000,
        ..clio_tests::client_config(&cfg)
    };
    let a = clio::AsyncSession::open(addr, slow_retry).await.unwrap();
    let al = a
        .ralloc(2 * cfg.pages.default_size, perms::RW)
        .await
        .unwrap();
    let counter = al.va;
    let faa = tokio::spawn(a.faa(counter, 5));
    // Wait until the board executed the FAA and its answer was lost.
    while drops.load(Ordering::SeqCst) != 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // The same process (another session of its address space) writes more
    // times than the buffer has records.
    let token = a.share().unwrap();
    let n = records + 64;
    let page = cfg.pages.default_size;
    let b = tokio::task::spawn_blocking(move || {
        let mut b =
            Session::join(addr, token, clio_tests::client_config(&emulator_config())).unwrap();
        for i in 0..n {
            b.rwrite(al.va + page + (i % 512) * 8, &i.to_le_bytes())
                .unwrap();
        }
        b
    })
    .await
    .unwrap();
    let dup_before = board.0.lock().unwrap().stats().fast.duplicates;
    // The retry (after its 3 s RTO) finds the FAA's record.
    let old = tokio::time::timeout(Duration::from_secs(30), faa)
        .await
        .expect("the FAA completes")
        .unwrap()
        .unwrap();
    assert_eq!(old, 0, "the FAA saw the counter before it");
    let fast = board.0.lock().unwrap().stats().fast;
    assert!(
        fast.duplicates > dup_before,
        "the retry was answered from the dedup record: {fast:?}"
    );
    let word = a.rread(counter, 8).await.unwrap();
    assert_eq!(
        u64::from_le_bytes(word.try_into().unwrap()),
        5,
        "applied exactly once after {n} writes ({records} records)"
    );
    drop(b);
    drop(a);
    server.stop().unwrap();
}

/// A raw client on another socket (another source port).
struct Attacker {
    sock: UdpSocket,
    next: u32,
}

impl Attacker {
    fn new(board: SocketAddr) -> Attacker {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(board).unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        Attacker { sock, next: 0 }
    }

    /// Send one request; every answer until 100 ms of silence, checking
    /// that together they are at most one header-only packet no larger
    /// than the request. Returns its status, if answered.
    fn refused(&mut self, what: &str, h: Header, payload: &[u8]) -> Option<Status> {
        self.next += 1;
        let pkt = h.encode(payload).unwrap();
        self.sock.send(&pkt).unwrap();
        let mut buf = vec![0u8; 65536];
        let mut got = Vec::new();
        while let Ok(n) = self.sock.recv(&mut buf) {
            let p = Packet::new_checked(&buf[..n]).unwrap();
            got.push((Header::parse_verified(&p).unwrap(), n));
        }
        assert!(got.len() <= 1, "{what}: {} answers", got.len());
        let (r, n) = got.pop()?;
        assert_eq!(r.payload_len, 0, "{what}: header only, got {r:?}");
        assert!(n <= pkt.len(), "{what}: {n} B answered to {} B", pkt.len());
        assert_eq!(n, HEADER_LEN);
        Some(r.status)
    }
}

/// Another socket forging the victim's PID, session id, epoch (public:
/// INFO tells it), guessed keys and the victim's next request ids changes
/// nothing, reads nothing, and is answered with at most one header-only
/// packet per request: amplification ≤ 1.
#[test]
fn spoofing_from_another_socket_changes_nothing() {
    let board = clio_tests::ServedBoard::emulator();
    let page = board.page();
    let mut v = board.session();
    let me = *v.session_info().unwrap();
    let al = v.ralloc(page, perms::RW).unwrap();
    v.rwrite(al.va, b"victim's secret").unwrap();
    let counter = al.va + 4096;
    assert_eq!(v.faa(counter, 1).unwrap(), 0);
    let before = board.stats().fast;
    let mut x = Attacker::new(board.addr());
    let mut refusals = Vec::new();
    let forged = |op: Opcode, req_id: u32, va: u64, len: u32, key: u64| {
        Header::request(op, me.pid, req_id, va, len).with_session(me.session, me.epoch, key)
    };
    // The victim's next ids: the attacker predicts them exactly (the
    // worst case), hoping to plant a dedup record the victim's own FAA
    // would be answered from.
    let probe = v.connection().stats().requests_sent;
    let first = v.connection().config().first_req_id.unwrap();
    let next_ids: Vec<u32> = (0..8)
        .map(|i| first.wrapping_add(probe as u32 + i))
        .collect();
    let mut free = [0u8; FreeReq::LEN];
    FreeReq { size: page }.emit(&mut free).unwrap();
    let mut faa = [0u8; AtomicArgs::FAA_LEN];
    AtomicArgs::FetchAndAdd { addend: 1000 }
        .emit(&mut faa)
        .unwrap();
    for (i, &id) in next_ids.iter().enumerate() {
        let key = 0x5eed_0000_0000_0000 ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        refusals.push(x.refused(
            "FAA",
            forged(Opcode::FetchAndAdd, id, counter, 8, key),
            &faa,
        ));
        refusals.push(x.refused(
            "WRITE",
            forged(Opcode::Write, id, al.va, 8, key),
            b"pwned!!!",
        ));
        refusals.push(x.refused("READ", forged(Opcode::Read, id, al.va, 15, key), &[]));
        // The largest read one packet can ask for: one small answer at most.
        refusals.push(x.refused(
            "8 MiB READ",
            forged(Opcode::Read, id, al.va, 8 << 20, key),
            &[],
        ));
        refusals.push(x.refused("FREE", forged(Opcode::Free, id, al.va, 0, key), &free));
        refusals.push(x.refused("CLOSE", forged(Opcode::CloseSession, id, 0, 0, key), &[]));
    }
    // A session id with the right key but another PID, and no session at
    // all (epoch 0 too: RESTARTED, the epoch check comes first).
    refusals.push(x.refused(
        "other PID",
        Header {
            pid: me.pid + 1,
            ..forged(Opcode::Read, 7, al.va, 8, me.key)
        },
        &[],
    ));
    refusals.push(x.refused(
        "no session",
        Header::request(Opcode::Read, me.pid, 9, al.va, 8),
        &[],
    ));
    // Joining the address space with a guessed key.
    let mut join = [0u8; OpenSessionReq::LEN];
    OpenSessionReq {
        join_session: me.session,
        join_key: me.key ^ 0x40,
    }
    .emit(&mut join)
    .unwrap();
    refusals.push(x.refused(
        "join",
        Header::request(Opcode::OpenSession, me.pid, 11, 0, 0),
        &join,
    ));
    // INFO that does not pay for its answer's size.
    refusals.push(x.refused(
        "short INFO",
        Header::request(Opcode::Info, 0, 12, 0, 0),
        &[0; 8],
    ));
    for (i, r) in refusals.iter().enumerate() {
        assert!(
            matches!(
                r,
                Some(Status::BadSession | Status::Malformed | Status::Restarted) | None
            ),
            "refusal {i}: {r:?}"
        );
    }
    // Nothing changed: the secret, the counter (the victim's next FAA runs,
    // it is not answered from a planted record), the range (not freed),
    // the session (not closed).
    let mut back = [0u8; 15];
    v.rread(al.va, &mut back).unwrap();
    assert_eq!(&back, b"victim's secret");
    assert_eq!(v.faa(counter, 1).unwrap(), 1, "executed, not replayed");
    assert_eq!(v.faa(counter, 0).unwrap(), 2);
    let after = board.stats().fast;
    assert_eq!(after.duplicates, before.duplicates, "nothing was replayed");
    assert!(after.bad_session - before.bad_session >= 50, "{after:?}");
    v.close().unwrap();
    board.stop().unwrap();
}

/// Stop the board, start a new one on the same port: the session's next
/// call, and every one after, fails with `BoardRestarted` (never OK with
/// zeros); a join token from before the restart is refused the same way;
/// a new session works.
#[test]
fn restarted_board_is_reported_to_every_call() {
    let cfg = emulator_config();
    let first = clio_emu::spawn(
        Board::new(&cfg).unwrap(),
        ([127, 0, 0, 1], 0).into(),
        ServeOptions::default(),
    )
    .unwrap();
    let addr = first.addr();
    let mut s = Session::open(addr, clio_tests::client_config(&cfg)).unwrap();
    let old_epoch = s.session_info().unwrap().epoch;
    let token: ShareToken = s.share().unwrap();
    let al = s.ralloc(cfg.pages.default_size, perms::RW).unwrap();
    s.rwrite(al.va, b"before").unwrap();
    first.stop().unwrap();

    let second = clio_emu::spawn(Board::new(&cfg).unwrap(), addr, ServeOptions::default())
        .expect("rebind the same port");
    let mut b = [0u8; 6];
    let e = s.rread(al.va, &mut b).unwrap_err();
    let ClioError::BoardRestarted { op, epoch } = e else {
        panic!("expected BoardRestarted, got {e:?}");
    };
    assert_eq!(op, OpKind::Read);
    assert_ne!(epoch, old_epoch, "a new boot, a new epoch");
    assert_eq!(b, [0; 6], "no data handed out");
    for r in [
        s.rwrite(al.va, b"after!").map(drop),
        s.faa(al.va, 1).map(drop),
        s.ralloc(4096, perms::RW).map(drop),
        s.rfence(),
    ] {
        assert!(
            matches!(r, Err(ClioError::BoardRestarted { epoch: e, .. }) if e == epoch),
            "{r:?}"
        );
    }
    let j = Session::join(addr, token, clio_tests::client_config(&cfg)).unwrap_err();
    assert!(matches!(j, ClioError::BoardRestarted { .. }), "{j:?}");
    let mut fresh = Session::open(addr, clio_tests::client_config(&cfg)).unwrap();
    assert_eq!(fresh.session_info().unwrap().epoch, epoch);
    let a2 = fresh.ralloc(cfg.pages.default_size, perms::RW).unwrap();
    fresh.rwrite(a2.va, b"again").unwrap();
    drop(s);
    fresh.close().unwrap();
    second.stop().unwrap();
}

/// A served board whose network delivers one copy of the first FAA request
/// again, late: after `after` more request packets of the client.
struct LateDuplicate {
    board: SharedBoard,
    captured: Option<(ClientId, Vec<u8>)>,
    after: u32,
}

impl Engine for LateDuplicate {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        if self.captured.is_none() && packet.get(1) == Some(&Opcode::FetchAndAdd.raw()) {
            self.captured = Some((from, packet.to_vec()));
        } else if self.captured.is_some() && self.after > 0 {
            self.after -= 1;
            if self.after == 0 {
                let (c, dup) = self.captured.clone().unwrap();
                self.board.handle(c, &dup, out);
            }
        }
        self.board.handle(from, packet, out)
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        self.board.poll(out)
    }
}

/// A network duplicate of an FAA arriving after the client acknowledged
/// the FAA's answer (its record freed by the ack watermark) must not run
/// the FAA again. The board has to refuse requests of a session whose id is
/// serially before the highest `ack` the session sent (the client never
/// sends one: ids only grow, and a retry names a first id that is not yet
/// acknowledged). The board drops it (the session's ack floor).
#[test]
fn late_duplicate_of_an_acknowledged_faa_is_not_applied_again() {
    let cfg = emulator_config();
    let board = SharedBoard(Arc::new(Mutex::new(Board::new(&cfg).unwrap())));
    let engine = LateDuplicate {
        board: board.clone(),
        captured: None,
        after: 3,
    };
    let server = clio_emu::spawn(engine, ([127, 0, 0, 1], 0).into(), ServeOptions::default())
        .expect("bind a loopback port");
    let mut s = Session::open(server.addr(), clio_tests::client_config(&cfg)).unwrap();
    let al = s.ralloc(cfg.pages.default_size, perms::RW).unwrap();
    assert_eq!(s.faa(al.va, 5).unwrap(), 0);
    // These acknowledge the FAA; the duplicate arrives among them.
    for i in 0..4u64 {
        s.rwrite(al.va + 64 + 8 * i, &i.to_le_bytes()).unwrap();
    }
    assert_eq!(s.faa(al.va, 0).unwrap(), 5, "the FAA ran once");
    s.close().unwrap();
    server.stop().unwrap();
}

/// The async API after a restart: calls in flight together and later ones
/// all fail with `BoardRestarted`.
#[tokio::test]
async fn restarted_board_is_reported_to_every_async_call() {
    let cfg = emulator_config();
    let first = clio_emu::spawn(
        Board::new(&cfg).unwrap(),
        ([127, 0, 0, 1], 0).into(),
        ServeOptions::default(),
    )
    .unwrap();
    let addr = first.addr();
    let s = clio::AsyncSession::open(addr, clio_tests::client_config(&cfg))
        .await
        .unwrap();
    let al = s.ralloc(cfg.pages.default_size, perms::RW).await.unwrap();
    first.stop().unwrap();
    let second = clio_emu::spawn(Board::new(&cfg).unwrap(), addr, ServeOptions::default())
        .expect("rebind the same port");
    let (r, w, f) = (
        s.rread(al.va, 8),
        s.rwrite(al.va + 64, b"x"),
        s.faa(al.va + 128, 1),
    );
    let restarted = |e: &ClioError| matches!(e, ClioError::BoardRestarted { .. });
    assert!(restarted(&r.await.unwrap_err()));
    assert!(restarted(&w.await.unwrap_err()));
    assert!(restarted(&f.await.unwrap_err()));
    assert!(restarted(&s.rfence().await.unwrap_err()));
    drop(s);
    second.stop().unwrap();
}

/// A write needs one dedup record per packet until it is acknowledged, and
/// a session may hold `dedup_quota` records: the SDK cuts writes larger
/// than quota × MTU into requests that fit (a 1 MiB write is 724 packets
/// of 1450 B against the emulator's 256 records; before, it ended in
/// `Busy`), blocking and async alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_larger_than_the_dedup_quota_complete() {
    let board = clio_tests::ServedBoard::emulator();
    let cfg = board.cfg;
    let addr = board.addr();
    let data = clio_tests::pattern(1 << 20, 5);
    let d = data.clone();
    let quota = tokio::task::spawn_blocking(move || {
        let mut s = Session::open(addr, clio_tests::client_config(&cfg)).unwrap();
        let q = s.session_info().unwrap().dedup_quota;
        let mtu = s.connection().config().mtu_payload as u64;
        assert!(
            d.len() as u64 > u64::from(q) * mtu,
            "the write exceeds the quota"
        );
        let al = s.ralloc(4 << 20, perms::RW).unwrap();
        s.rwrite(al.va, &d).unwrap();
        // Read back in 64 KiB pieces: the subject is the write; one 1 MiB
        // read is 724 answers in a burst, which a loaded machine's socket
        // buffer drops and every retry asks for again (issue #23, item 2).
        let mut back = vec![0u8; d.len()];
        for (i, chunk) in back.chunks_mut(64 << 10).enumerate() {
            s.rread(al.va + (i as u64) * (64 << 10), chunk).unwrap();
        }
        assert!(back == d, "blocking write read back differently");
        assert_eq!(s.connection().stats().busy, 0);
        q
    })
    .await
    .unwrap();
    let a = clio::AsyncSession::open(addr, clio_tests::client_config(&cfg))
        .await
        .unwrap();
    let al = a.ralloc(4 << 20, perms::RW).await.unwrap();
    a.rwrite(al.va + 3, &data).await.unwrap();
    let mut back = Vec::with_capacity(data.len());
    for off in (0..data.len() as u64).step_by(64 << 10) {
        let n = (64 << 10).min(data.len() as u64 - off);
        back.extend(a.rread(al.va + 3 + off, n).await.unwrap());
    }
    assert!(back == data, "async write read back differently");
    println!("dedup quota {quota} records");
    drop(a);
    board.stop().unwrap();
}
