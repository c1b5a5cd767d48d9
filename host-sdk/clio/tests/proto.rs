//! The protocol state machine against a board double over a fake network
//! with a fake clock: splitting, reassembly, retry, congestion, ordering.

mod common;

use clio::proto::Connection;
use clio::{ClientConfig, ClioError, Completion, OpKind, Request, SessionInfo, ShareToken};
use clio_wire::payload::perms;
use clio_wire::Opcode;
use common::{alloc, Action, Dir, FakeBoard, Sim};

fn cfg() -> ClientConfig {
    ClientConfig {
        mtu_payload: 1000,
        rto_initial_ns: 100_000,
        rto_min_ns: 20_000,
        rto_max_ns: 1_000_000,
        request_timeout_ns: 50_000_000,
        retry_budget: 3,
        target_delay_ns: 50_000,
        page_shift: 12,
        max_ops: 256,
        ..ClientConfig::default()
    }
}

/// A connection holding the board double's preinstalled session (PID 42).
fn sim_with(c: ClientConfig, board_mtu: usize) -> Sim {
    let mut conn = Connection::new(c).unwrap();
    conn.set_session(Some(SessionInfo::new(
        common::board::PID,
        common::board::SESSION,
        common::board::EPOCH,
        common::board::KEY,
    )));
    Sim::new(conn, FakeBoard::new(board_mtu))
}

fn sim() -> Sim {
    sim_with(cfg(), 1000)
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn read(sim: &mut Sim, va: u64, len: u32) -> Result<Vec<u8>, ClioError> {
    match sim.call(Request::Read { va, len })? {
        Completion::Read(d) => Ok(d),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn basic_operations_round_trip() {
    let mut s = sim();
    let va = alloc(&mut s, 8192);
    let data = pattern(100, 1);
    assert_eq!(
        s.call(Request::Write {
            va: va + 10,
            data: &data
        }),
        Ok(Completion::Written)
    );
    assert_eq!(read(&mut s, va + 10, 100).unwrap(), data);
    assert_eq!(
        s.call(Request::FetchAndAdd {
            va: va + 200,
            addend: 5
        }),
        Ok(Completion::Atomic { old: 0 })
    );
    assert_eq!(
        s.call(Request::CompareAndSwap {
            va: va + 200,
            expected: 5,
            new: 9
        }),
        Ok(Completion::Atomic { old: 5 })
    );
    assert_eq!(
        s.call(Request::TestAndSet { va: va + 208 }),
        Ok(Completion::Atomic { old: 0 })
    );
    assert_eq!(s.board.peek(va + 200, 8), 9u64.to_le_bytes());
    match s.call(Request::Info) {
        Ok(Completion::Info(i)) => assert_eq!(i.board_name().unwrap(), "fake"),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.call(Request::Fence), Ok(Completion::Fenced));
    assert_eq!(
        s.call(Request::Free { va, size: 8192 }),
        Ok(Completion::Freed)
    );
    assert_eq!(
        read(&mut s, va, 8),
        Err(ClioError::Unmapped {
            op: OpKind::Read,
            va,
            len: 8
        })
    );
    // Every request id was non-zero and unique.
    let mut ids: Vec<u32> = s.sent.iter().map(|p| p.h.req_id).collect();
    assert!(ids.iter().all(|&i| i != 0));
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), s.sent.len());
    assert_eq!(s.conn.active(), 0);
}

#[test]
fn statuses_map_to_typed_errors() {
    let mut s = sim();
    let ro = match s.call(Request::Alloc {
        size: 4096,
        perms: perms::READ,
        page_shift: 0,
        fixed_va: None,
    }) {
        Ok(Completion::Allocated(a)) => a.va,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        s.call(Request::Write { va: ro, data: b"x" }),
        Err(ClioError::Permission {
            op: OpKind::Write,
            va: ro
        })
    );
    s.board.known_pids.insert(7);
    assert_eq!(read(&mut s, ro, 8), Err(ClioError::BadPid { pid: 42 }));
    // Bad arguments never reach the wire.
    let before = s.sent.len();
    assert!(matches!(
        s.conn.submit(Request::Read { va: 0, len: 0 }),
        Err(ClioError::InvalidArgument { what: "len", .. })
    ));
    assert!(matches!(
        s.conn.submit(Request::FetchAndAdd { va: 3, addend: 1 }),
        Err(ClioError::InvalidArgument { what: "va", .. })
    ));
    assert!(matches!(
        s.conn.submit(Request::Write {
            va: u64::MAX,
            data: b"ab"
        }),
        Err(ClioError::InvalidArgument { what: "va", .. })
    ));
    assert_eq!(s.sent.len(), before);
}

#[test]
fn writes_split_at_mtu_and_reads_reassemble_out_of_order() {
    // Client MTU 1000; the board answers with 700-byte packets.
    let mut s = sim_with(cfg(), 700);
    let va = alloc(&mut s, 16384);
    let data = pattern(5000, 7);
    assert_eq!(
        s.call(Request::Write {
            va: va + 3,
            data: &data
        }),
        Ok(Completion::Written)
    );
    let w = s.sent_of(Opcode::Write);
    assert_eq!(w.len(), 5);
    for (i, p) in w.iter().enumerate() {
        assert_eq!(p.h.total_len, 5000);
        assert_eq!(p.h.offset, i as u32 * 1000);
        assert_eq!(p.h.payload_len, 1000);
        assert_eq!(p.h.va, va + 3);
        assert_eq!(p.h.req_id, w[0].h.req_id, "one request, many packets");
    }
    assert_eq!(s.board.peek(va + 3, 5000), data);

    // Deliver response packets in reverse order (later ones arrive earlier).
    let mut n = 0u64;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToClient && h.opcode == Opcode::ReadResp {
            n += 1;
            Action::Delay(8_000 - n * 1000)
        } else {
            Action::Deliver
        }
    });
    assert_eq!(read(&mut s, va + 3, 5000).unwrap(), data);
    assert_eq!(
        s.sent_of(Opcode::Read).len(),
        1,
        "one read request for a multi-packet response"
    );
    let offs: Vec<u32> = s
        .replies
        .iter()
        .filter(|r| r.h.opcode == Opcode::ReadResp)
        .map(|r| r.h.offset)
        .collect();
    assert_eq!(offs.len(), 8);
    assert_eq!(s.conn.stats().retries, 0);
}

#[test]
fn lost_request_is_retried_after_rto_with_new_id_and_retry_of() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToBoard && h.opcode == Opcode::Read && first {
            first = false;
            return Action::Drop;
        }
        Action::Deliver
    });
    let t0 = s.now;
    assert_eq!(read(&mut s, va, 16).unwrap(), vec![0; 16]);
    let r = s.sent_of(Opcode::Read);
    assert_eq!(r.len(), 2);
    assert_ne!(r[1].h.req_id, r[0].h.req_id);
    assert_eq!(r[0].h.retry_of, 0);
    assert_eq!(r[1].h.retry_of, r[0].h.req_id);
    // The retry waited for the RTO (the alloc's sample set it to >= rto_min).
    assert!(
        r[1].at - r[0].at >= 20_000,
        "retry after {} ns",
        r[1].at - t0
    );
    let st = s.conn.stats();
    assert_eq!((st.timeouts, st.retries), (1, 1));
}

#[test]
fn nack_triggers_immediate_retry() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToBoard && h.opcode == Opcode::Write && first {
            first = false;
            return Action::Corrupt;
        }
        Action::Deliver
    });
    assert_eq!(
        s.call(Request::Write { va, data: b"hello" }),
        Ok(Completion::Written)
    );
    assert_eq!(s.board.peek(va, 5), b"hello");
    let w = s.sent_of(Opcode::Write);
    assert_eq!(w.len(), 2);
    assert_eq!(w[1].h.retry_of, w[0].h.req_id);
    // Resent one round trip later, not after an RTO.
    assert_eq!(w[1].at - w[0].at, 2 * s.one_way);
    let st = s.conn.stats();
    assert_eq!((st.nacks, st.timeouts), (1, 0));
}

#[test]
fn corrupt_response_triggers_retry() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToClient && h.opcode == Opcode::ReadResp && first {
            first = false;
            return Action::Corrupt;
        }
        Action::Deliver
    });
    assert_eq!(read(&mut s, va, 8).unwrap(), vec![0; 8]);
    let st = s.conn.stats();
    assert_eq!((st.corrupt, st.retries, st.timeouts), (1, 1, 0));
}

#[test]
fn duplicate_and_late_responses_are_ignored() {
    let mut s = sim_with(cfg(), 300);
    let va = alloc(&mut s, 4096);
    let data = pattern(2500, 3);
    s.fault = Box::new(|_, _| Action::Duplicate);
    assert_eq!(
        s.call(Request::Write { va, data: &data }),
        Ok(Completion::Written)
    );
    assert_eq!(read(&mut s, va, 2500).unwrap(), data);
    let st = s.conn.stats();
    assert!(st.duplicates >= 3, "{st:?}");
    assert!(st.stale > 0, "copies after completion are stale: {st:?}");
    assert_eq!(st.retries, 0);
    // Each op completed exactly once.
    assert_eq!(s.done.len(), 3);
    // Network copies of a first attempt carry no retry_of, so the board runs
    // them again; writes are idempotent, and the data is right.
    assert_eq!(s.board.executed(Opcode::Write), 6);
    assert_eq!(s.board.peek(va, 2500), data);
}

#[test]
fn retry_budget_ends_in_a_clear_timeout() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    s.fault = Box::new(|dir, _| {
        if dir == Dir::ToBoard {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let t0 = s.now;
    assert_eq!(
        read(&mut s, va, 8),
        Err(ClioError::Timeout {
            op: OpKind::Read,
            attempts: 4,
            board: None
        })
    );
    assert_eq!(s.sent_of(Opcode::Read).len(), 4);
    // Backoff doubles the RTO but the whole thing stays bounded.
    assert!(s.now - t0 <= 4 * 1_000_000);
    assert_eq!(s.conn.active(), 0);
    let msg = ClioError::Timeout {
        op: OpKind::Read,
        attempts: 4,
        board: None,
    }
    .to_string();
    assert!(msg.contains("read") && msg.contains('4'), "{msg}");
    let msg = ClioError::Timeout {
        op: OpKind::Read,
        attempts: 4,
        board: Some("udp://10.0.0.7:47700".into()),
    }
    .to_string();
    assert!(
        msg.contains("from the board at udp://10.0.0.7:47700"),
        "{msg}"
    );
}

#[test]
fn request_deadline_bounds_retries() {
    let mut s = sim_with(
        ClientConfig {
            retry_budget: 1000,
            request_timeout_ns: 3_000_000,
            ..cfg()
        },
        1000,
    );
    let va = alloc(&mut s, 4096);
    s.fault = Box::new(|dir, _| {
        if dir == Dir::ToBoard {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let t0 = s.now;
    assert!(matches!(
        read(&mut s, va, 8),
        Err(ClioError::Timeout { .. })
    ));
    assert!(s.now - t0 <= 3_000_000 + 1_000_000);
}

#[test]
fn retried_non_idempotent_ops_execute_once() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    // Lose the first response of every op: the board executed it, the
    // client retries with retry_of, and the dedup buffer answers.
    let mut seen = std::collections::HashSet::new();
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToClient && seen.insert(h.opcode) {
            return Action::Drop;
        }
        Action::Deliver
    });
    assert_eq!(
        s.call(Request::FetchAndAdd { va, addend: 3 }),
        Ok(Completion::Atomic { old: 0 })
    );
    assert_eq!(s.board.executed(Opcode::FetchAndAdd), 1);
    assert_eq!(s.board.deduped.get(&Opcode::FetchAndAdd), Some(&1));
    assert_eq!(s.board.peek(va, 8), 3u64.to_le_bytes());
    assert_eq!(
        s.call(Request::Write {
            va: va + 8,
            data: b"once"
        }),
        Ok(Completion::Written)
    );
    assert_eq!(s.board.executed(Opcode::Write), 1);
}

#[test]
fn busy_lock_backs_off_until_free_or_deadline() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    s.board.locks.insert(va, 999);
    let id = s.conn.submit(Request::Lock { va }).unwrap();
    // Let it bounce a few times, then the other holder releases.
    for _ in 0..12 {
        s.step();
    }
    assert!(s.conn.stats().busy >= 2);
    s.board.locks.clear();
    s.run();
    assert_eq!(s.result(id), Ok(Completion::Locked));
    assert_eq!(s.board.locks.get(&va), Some(&42));
    assert_eq!(s.call(Request::Unlock { va }), Ok(Completion::Unlocked));
    assert!(s.board.locks.is_empty());

    // Never released: a Busy error once the request deadline passes.
    let mut s = sim_with(
        ClientConfig {
            request_timeout_ns: 2_000_000,
            ..cfg()
        },
        1000,
    );
    let va = alloc(&mut s, 4096);
    s.board.locks.insert(va, 999);
    let t0 = s.now;
    assert!(matches!(
        s.call(Request::Lock { va }),
        Err(ClioError::Busy {
            op: OpKind::Lock,
            ..
        })
    ));
    assert!(s.now - t0 <= 2_000_000);
}

#[test]
fn cwnd_grows_under_target_and_shrinks_on_delay() {
    let c = ClientConfig {
        cwnd_init: 2.0,
        rto_min_ns: 500_000,
        rto_initial_ns: 500_000,
        ..cfg()
    };
    let mut s = sim_with(c, 1000);
    let va = alloc(&mut s, 4096);
    for _ in 0..50 {
        s.conn.submit(Request::Read { va, len: 8 }).unwrap();
    }
    s.run();
    let grown = s.conn.control().cwnd();
    assert!(grown > 6.0, "cwnd {grown}");
    // RTT far above target: multiplicative decrease.
    s.service = 150_000;
    for _ in 0..10 {
        s.call(Request::Read { va, len: 8 }).unwrap();
    }
    let shrunk = s.conn.control().cwnd();
    assert!(shrunk < grown / 4.0, "cwnd {grown} -> {shrunk}");
    assert!(shrunk < 1.0, "may fall below one: {shrunk}");
}

#[test]
fn cwnd_below_one_paces_requests() {
    let c = ClientConfig {
        cwnd_init: 0.25,
        cwnd_min: 0.01,
        cwnd_ai: 0.001,
        ..cfg()
    };
    let mut s = sim_with(c, 1000);
    let va = alloc(&mut s, 4096);
    s.sent.clear();
    for _ in 0..4 {
        s.conn.submit(Request::Read { va, len: 8 }).unwrap();
    }
    s.run();
    let r = s.sent_of(Opcode::Read);
    assert_eq!(r.len(), 4);
    let srtt = s.conn.control().srtt().unwrap();
    for w in r.windows(2) {
        let gap = w[1].at - w[0].at;
        let cwnd = s.conn.control().cwnd();
        // One request per 1/cwnd RTTs (cwnd grows a little meanwhile).
        assert!(
            gap as f64 >= 0.9 * srtt as f64 / cwnd,
            "gap {gap} srtt {srtt} cwnd {cwnd}"
        );
        assert!(gap >= 3 * 2 * s.one_way, "gap {gap}");
    }
}

#[test]
fn window_limits_requests_in_flight() {
    let mut s = sim_with(
        ClientConfig {
            cwnd_init: 3.0,
            cwnd_max: 3.0,
            ..cfg()
        },
        1000,
    );
    let va = alloc(&mut s, 4096);
    s.sent.clear();
    for _ in 0..9 {
        s.conn.submit(Request::Read { va, len: 8 }).unwrap();
    }
    s.flush();
    assert_eq!(s.sent.len(), 3);
    s.run();
    assert_eq!(s.sent.len(), 9);
}

#[test]
fn incast_window_limits_expected_response_bytes() {
    let mut s = sim_with(
        ClientConfig {
            iwnd_bytes: 2500,
            ..cfg()
        },
        1000,
    );
    let va = alloc(&mut s, 8192);
    s.sent.clear();
    for i in 0..6 {
        s.conn
            .submit(Request::Read {
                va: va + i * 1000,
                len: 900,
            })
            .unwrap();
    }
    s.flush();
    // 940 response bytes each: two fit in 2500, a third does not.
    assert_eq!(s.sent.len(), 2);
    s.run();
    assert_eq!(s.sent.len(), 6);
    assert_eq!(s.done.iter().filter(|d| d.2.is_ok()).count(), 7);
}

/// Submit `reqs` at once, run, and return (send time of each request's
/// first packet, completion time).
fn times(s: &mut Sim, reqs: &[Request<'_>]) -> Vec<(u64, u64)> {
    s.sent.clear();
    let ids: Vec<_> = reqs.iter().map(|r| s.conn.submit(*r).unwrap()).collect();
    s.run();
    reqs.iter()
        .zip(ids)
        .map(|(r, id)| (first_send(s, r), s.done_at(id)))
        .collect()
}

/// When the first packet of `req` left (requests of one batch differ in
/// opcode or VA).
fn first_send(s: &Sim, req: &Request<'_>) -> u64 {
    let (op, va) = match *req {
        Request::Read { va, .. } => (Opcode::Read, va),
        Request::Write { va, .. } => (Opcode::Write, va),
        Request::Free { va, .. } => (Opcode::Free, va),
        Request::FetchAndAdd { va, .. } => (Opcode::FetchAndAdd, va),
        Request::Fence => (Opcode::Fence, 0),
        ref other => panic!("not used here: {other:?}"),
    };
    s.sent
        .iter()
        .find(|p| p.h.opcode == op && p.h.va == va)
        .map(|p| p.at)
        .expect("sent")
}

#[test]
fn dependencies_block_conflicting_ops_only() {
    let mut s = sim();
    let va = alloc(&mut s, 3 * 4096);
    let (p0, p1) = (va, va + 4096);
    let d = [1u8; 8];
    // RAW: the read of p0 waits for the write of p0.
    let t = times(
        &mut s,
        &[
            Request::Write { va: p0, data: &d },
            Request::Read {
                va: p0 + 100,
                len: 8,
            },
        ],
    );
    assert!(
        t[1].0 >= t[0].1,
        "RAW: read sent {} before write done {}",
        t[1].0,
        t[0].1
    );
    // WAR.
    let t = times(
        &mut s,
        &[
            Request::Read { va: p0, len: 8 },
            Request::Write {
                va: p0 + 8,
                data: &d,
            },
        ],
    );
    assert!(t[1].0 >= t[0].1, "WAR");
    // WAW.
    let t = times(
        &mut s,
        &[
            Request::Write { va: p0, data: &d },
            Request::Write {
                va: p0 + 64,
                data: &d,
            },
        ],
    );
    assert!(t[1].0 >= t[0].1, "WAW");
    // Disjoint pages and read-read are concurrent.
    let t = times(
        &mut s,
        &[
            Request::Write { va: p0, data: &d },
            Request::Write { va: p1, data: &d },
        ],
    );
    assert!(t[1].0 < t[0].1, "disjoint pages overlap");
    let t = times(
        &mut s,
        &[
            Request::Read { va: p0, len: 8 },
            Request::Read { va: p0 + 8, len: 8 },
        ],
    );
    assert!(t[1].0 < t[0].1, "reads share a page");
    // A write spanning two pages conflicts with a read of the second.
    let big = [2u8; 200];
    let t = times(
        &mut s,
        &[
            Request::Write {
                va: p1 - 100,
                data: &big,
            },
            Request::Read {
                va: p1 + 50,
                len: 8,
            },
        ],
    );
    assert!(t[1].0 >= t[0].1, "multi-page footprint");
    // Atomics are writes.
    let t = times(
        &mut s,
        &[
            Request::FetchAndAdd { va: p0, addend: 1 },
            Request::Read { va: p0, len: 8 },
        ],
    );
    assert!(t[1].0 >= t[0].1, "atomic then read");
    assert_eq!(
        s.conn.tracked_pages(),
        0,
        "tracking state is dropped when ops complete"
    );
}

#[test]
fn metadata_and_data_ops_on_a_range_are_serialized() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    let t = times(
        &mut s,
        &[
            Request::Read { va, len: 8 },
            Request::Free { va, size: 4096 },
            Request::Read { va: va + 8, len: 8 },
        ],
    );
    assert!(t[1].0 >= t[0].1, "free waits for the read before it");
    assert!(t[2].0 >= t[1].1, "read waits for the free before it");
    let res: Vec<_> = s.done.iter().rev().take(3).map(|d| d.2.clone()).collect();
    assert!(
        matches!(res[0], Err(ClioError::Unmapped { .. })),
        "read after free: {:?}",
        res[0]
    );
}

#[test]
fn fence_waits_for_earlier_and_holds_later() {
    let mut s = sim();
    let va = alloc(&mut s, 2 * 4096);
    let d = [1u8; 8];
    let t = times(
        &mut s,
        &[
            Request::Write { va, data: &d },
            Request::Read {
                va: va + 4096,
                len: 8,
            },
            Request::Fence,
            Request::Read { va, len: 8 },
        ],
    );
    assert!(
        t[2].0 >= t[0].1.max(t[1].1),
        "fence sent after earlier ops done"
    );
    assert!(t[3].0 >= t[2].1, "later op waits for the fence");
}

#[test]
fn release_waits_for_all_earlier_but_not_later_ops() {
    let mut s = sim();
    let va = alloc(&mut s, 3 * 4096);
    let d = [1u8; 8];
    s.sent.clear();
    let a = s.conn.submit(Request::Write { va, data: &d }).unwrap();
    let b = s
        .conn
        .submit(Request::Read {
            va: va + 4096,
            len: 8,
        })
        .unwrap();
    let r1 = s.conn.submit(Request::Release).unwrap();
    let c = s
        .conn
        .submit(Request::Read {
            va: va + 8192,
            len: 8,
        })
        .unwrap();
    let r2 = s.conn.submit(Request::Release).unwrap();
    s.flush();
    // The later independent read is on the wire at once, with a and b.
    assert_eq!(s.sent.len(), 3);
    s.run();
    assert!(s.done_at(r1) >= s.done_at(a).max(s.done_at(b)));
    assert!(s.done_at(r2) >= s.done_at(r1).max(s.done_at(c)));
    assert_eq!(s.result(r1), Ok(Completion::Released));
    // Releases do not go on the wire.
    assert_eq!(s.sent.len(), 3);
    // A release with nothing outstanding completes at once.
    let r = s.conn.submit(Request::Release).unwrap();
    assert_eq!(s.conn.take(r), Some(Ok(Completion::Released)));
}

#[test]
fn failed_op_still_releases_its_dependents() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    s.fault = Box::new(|dir, h| {
        if dir == Dir::ToBoard && h.opcode == Opcode::Write {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let w = s.conn.submit(Request::Write { va, data: b"lost" }).unwrap();
    let r = s.conn.submit(Request::Read { va, len: 4 }).unwrap();
    s.run();
    assert!(matches!(
        s.result(w),
        Err(ClioError::Timeout {
            op: OpKind::Write,
            ..
        })
    ));
    assert_eq!(s.result(r), Ok(Completion::Read(vec![0; 4])));
}

#[test]
fn slots_are_bounded_and_reused() {
    let mut s = sim_with(
        ClientConfig {
            max_ops: 4,
            ..cfg()
        },
        1000,
    );
    let va = alloc(&mut s, 4096);
    for _ in 0..4 {
        s.conn.submit(Request::Read { va, len: 8 }).unwrap();
    }
    assert_eq!(
        s.conn.submit(Request::Read { va, len: 8 }),
        Err(ClioError::QueueFull { max: 4 })
    );
    s.run();
    // Reuse many times; ids stay unique among recent requests and never 0.
    for _ in 0..300 {
        s.call(Request::Read { va, len: 8 }).unwrap();
    }
    let ids: Vec<u32> = s.sent.iter().map(|p| p.h.req_id).collect();
    assert!(ids.iter().all(|&i| i != 0));
    let mut recent = ids[ids.len() - 200..].to_vec();
    recent.sort_unstable();
    recent.dedup();
    assert_eq!(recent.len(), 200);
}

#[test]
fn stray_and_foreign_packets_are_ignored() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    let id = s.conn.submit(Request::Read { va, len: 8 }).unwrap();
    s.flush();
    // Garbage, a short buffer, and a valid response for an unknown id.
    s.conn.handle_packet(s.now, &[1, 2, 3]);
    s.conn.handle_packet(s.now, &[0u8; 64]);
    let stray = clio_wire::Header {
        session: common::board::SESSION,
        ..clio_wire::Header::request(Opcode::ReadResp, 42, 0x7fff_ff01, va, 8)
    };
    s.conn
        .handle_packet(s.now, &common::board::emit(&stray, &[9; 8]));
    let st = s.conn.stats();
    assert_eq!(st.stale, 1);
    assert!(st.malformed + st.corrupt >= 2);
    s.run();
    assert_eq!(s.result(id), Ok(Completion::Read(vec![0; 8])));
}

#[test]
fn id_table_skips_entries_held_by_long_requests() {
    let c = ClientConfig {
        max_ops: 4,
        rto_min_ns: 1_000_000,
        rto_initial_ns: 1_000_000,
        ..cfg()
    };
    let mut s = sim_with(c, 1000);
    let va = alloc(&mut s, 2 * 4096);
    // The first attempt of the read of `va` is lost: it stays outstanding
    // for an RTO while many short requests come and go.
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToBoard && h.opcode == Opcode::Read && h.va == va && first {
            first = false;
            return Action::Drop;
        }
        Action::Deliver
    });
    s.sent.clear();
    let long = s.conn.submit(Request::Read { va, len: 8 }).unwrap();
    s.flush();
    let held = s.sent[0].h.req_id;
    for i in 0..40u64 {
        let id = s
            .conn
            .submit(Request::Read {
                va: va + 4096 + i,
                len: 1,
            })
            .unwrap();
        while !s.done.iter().any(|d| d.1 == id) {
            assert!(s.step());
        }
    }
    s.run();
    assert_eq!(s.result(long), Ok(Completion::Read(vec![0; 8])));
    // While `held` was outstanding no other id used its table entry (8 entries).
    let during: Vec<u32> = s.sent[1..41].iter().map(|p| p.h.req_id).collect();
    assert!(
        during.iter().all(|&id| id & 7 != held & 7),
        "{held} vs {during:?}"
    );
    assert_eq!(s.conn.stats().timeouts, 1);
}

#[test]
fn first_request_id_comes_from_the_config() {
    let c = ClientConfig {
        first_req_id: Some(0x1234),
        ..cfg()
    };
    let mut s = sim_with(c, 1000);
    alloc(&mut s, 4096);
    assert_eq!(s.sent[0].h.req_id, 0x1234);
    // At the top of the id space the ids wrap, skipping 0.
    let c = ClientConfig {
        first_req_id: Some(u32::MAX),
        ..cfg()
    };
    let mut s = sim_with(c, 1000);
    let va = alloc(&mut s, 4096);
    read(&mut s, va, 8).unwrap();
    let ids: Vec<u32> = s.sent.iter().map(|p| p.h.req_id).collect();
    assert_eq!(ids, vec![u32::MAX, 1]);
}

#[test]
fn write_retry_resends_only_unacknowledged_packets() {
    let mut s = sim();
    let va = alloc(&mut s, 8192);
    let data = pattern(4500, 7);
    // Lose the acknowledgement of the packet at offset 2000 once.
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToClient && h.opcode == Opcode::WriteResp && h.offset == 2000 && first {
            first = false;
            return Action::Drop;
        }
        Action::Deliver
    });
    assert_eq!(
        s.call(Request::Write { va, data: &data }),
        Ok(Completion::Written)
    );
    let w = s.sent_of(Opcode::Write);
    let offsets: Vec<u32> = w.iter().map(|p| p.h.offset).collect();
    assert_eq!(offsets, vec![0, 1000, 2000, 3000, 4000, 2000]);
    assert_ne!(w[5].h.req_id, w[0].h.req_id);
    assert_eq!(w[5].h.retry_of, w[0].h.req_id);
    // The resent packet had executed: the board answered it from its record.
    assert_eq!(s.board.executed(Opcode::Write), 5);
    assert_eq!(s.board.deduped.get(&Opcode::Write), Some(&1));
    assert_eq!(s.board.peek(va, 4500), data);
}

#[test]
fn read_retry_keeps_received_bytes() {
    let mut s = sim();
    let va = alloc(&mut s, 8192);
    let data = pattern(4500, 9);
    s.call(Request::Write { va, data: &data }).unwrap();
    // Lose the response packet at offset 3000 of the first read attempt.
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToClient && h.opcode == Opcode::ReadResp && h.offset == 3000 && first {
            first = false;
            return Action::Drop;
        }
        Action::Deliver
    });
    let before = s.conn.stats();
    assert_eq!(read(&mut s, va, 4500).unwrap(), data);
    let r = s.sent_of(Opcode::Read);
    assert_eq!(r.len(), 2);
    assert_eq!(r[1].h.retry_of, r[0].h.req_id);
    // The retry asks for the whole range; its copies of bytes already
    // received are ignored, and the missing packet completes the read.
    let st = s.conn.stats();
    assert_eq!(st.retries - before.retries, 1);
    assert!(st.duplicates - before.duplicates >= 1, "{st:?}");
}

/// One run of the queueing-ramp scenario: `depth` 64 B reads kept
/// outstanding against a board that serves requests one at a time (FIFO)
/// with a per-request service time that ramps from 2 µs to 20 µs between
/// 5 ms and 6 ms (another tenant's burst queues in front of ours), stays
/// there until 15 ms and falls back. No packet is lost, so every RTO
/// expiry is spurious. Returns the connection's stats.
fn queueing_ramp(depth: usize) -> clio::proto::Stats {
    let c = ClientConfig {
        rto_min_ns: 20_000,
        rto_initial_ns: 100_000,
        rto_max_ns: 100_000_000,
        request_timeout_ns: 1_000_000_000,
        cwnd_init: 64.0,
        max_ops: 1024,
        ..cfg()
    };
    let mut s = sim_with(c, 1000);
    let va = alloc(&mut s, 1 << 16);
    let mut conn = std::mem::replace(&mut s.conn, Connection::new(cfg()).unwrap());
    let mut board = std::mem::replace(&mut s.board, FakeBoard::new(1000));
    let one_way = 5_000u64;
    let service = |t: u64| -> u64 {
        match t {
            t if t < 5_000_000 => 2_000,
            t if t < 6_000_000 => 2_000 + (t - 5_000_000) * 18 / 1_000,
            t if t < 15_000_000 => 20_000,
            _ => 2_000,
        }
    };
    // (arrival at the board, request bytes) in FIFO order, and answers on
    // their way back (due time, bytes).
    let mut to_board: std::collections::VecDeque<(u64, Vec<u8>)> = Default::default();
    let mut to_client: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, Vec<u8>)>> =
        Default::default();
    let mut board_free = 0u64;
    let mut seq = 0u64;
    let mut now = s.now;
    let mut issued = 0u64;
    let mut completed = 0u64;
    let mut buf = vec![0u8; clio::proto::MAX_DATAGRAM];
    while now < 25_000_000 {
        while conn.active() < depth {
            let at = va + (issued * 64) % (1 << 16);
            conn.submit(Request::Read { va: at, len: 64 }).unwrap();
            issued += 1;
        }
        while let Some(n) = conn.poll_transmit(now, &mut buf) {
            to_board.push_back((now + one_way, buf[..n].to_vec()));
        }
        while let Some((_, r)) = conn.poll_completion() {
            assert!(r.is_ok(), "{r:?}");
            completed += 1;
        }
        // The next event: the board finishing its head request, an answer
        // arriving, or a client timer.
        let board_next = to_board
            .front()
            .map(|(arr, _)| (*arr).max(board_free) + service((*arr).max(board_free)));
        let rx_next = to_client.peek().map(|r| r.0 .0);
        let t = [board_next, rx_next, conn.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("something is pending");
        now = now.max(t);
        if board_next == Some(t) {
            let (_, pkt) = to_board.pop_front().unwrap();
            board_free = t;
            board.handle(&pkt, &mut |r| {
                seq += 1;
                to_client.push(std::cmp::Reverse((t + one_way, seq, r)));
            });
        }
        while to_client.peek().is_some_and(|r| r.0 .0 <= now) {
            let std::cmp::Reverse((_, _, pkt)) = to_client.pop().unwrap();
            conn.handle_packet(now, &pkt);
        }
        conn.handle_timeout(now);
    }
    assert!(completed > 5_000, "only {completed} reads completed");
    conn.stats()
}

/// RTO under a queueing-delay ramp: the RTT of a pipelined window grows
/// tenfold within a millisecond (faster than SRTT + 4·RTTVAR from the
/// answers of earlier, less-queued requests can follow). Answers keep
/// arriving in order, so the expired timers of requests still queued
/// behind them wait (`rto_deferred`) instead of retrying; before this,
/// hundreds of requests of such a run timed out and were sent twice.
#[test]
fn no_spurious_timeouts_under_a_queueing_delay_ramp() {
    for depth in [64, 512] {
        let st = queueing_ramp(depth);
        assert_eq!(st.timeouts, 0, "depth {depth}: {st:?}");
        assert_eq!(st.retries, 0, "depth {depth}: {st:?}");
        assert!(
            st.rto_deferred > 0,
            "depth {depth}: the ramp was too gentle: {st:?}"
        );
    }
}

fn creds(dedup_quota: u16) -> SessionInfo {
    SessionInfo {
        dedup_quota,
        ..SessionInfo::new(
            common::board::PID,
            common::board::SESSION,
            common::board::EPOCH,
            common::board::KEY,
        )
    }
}

#[test]
fn open_session_installs_credentials_that_every_request_carries() {
    let mut s = Sim::new(Connection::new(cfg()).unwrap(), FakeBoard::new(1000));
    // Nothing but INFO and OPEN_SESSION goes out without a session.
    assert_eq!(
        s.call(Request::Read { va: 0x1000, len: 8 }),
        Err(ClioError::NoSession { op: OpKind::Read })
    );
    assert!(s.sent.is_empty());
    let info = match s.call(Request::OpenSession { join: None }) {
        Ok(Completion::Opened(i)) => i,
        other => panic!("{other:?}"),
    };
    assert_eq!(info.pid, 101, "the board assigned the PID");
    assert_eq!(info.epoch, common::board::EPOCH);
    let open = &s.sent[0].h;
    assert_eq!((open.pid, open.session, open.key), (0, 0, 0));
    let va = alloc(&mut s, 4096);
    read(&mut s, va, 8).unwrap();
    for p in &s.sent[1..] {
        assert_eq!(
            (p.h.pid, p.h.session, p.h.epoch, p.h.key),
            (info.pid, info.session, info.epoch, info.key),
            "{:?}",
            p.h.opcode
        );
    }
    // A second connection joins the address space with the share token.
    let token: ShareToken = info.share().to_string().parse().unwrap();
    let board = std::mem::replace(&mut s.board, FakeBoard::new(1000));
    let mut t = Sim::new(Connection::new(cfg()).unwrap(), board);
    let joined = match t.call(Request::OpenSession { join: Some(token) }) {
        Ok(Completion::Opened(i)) => i,
        other => panic!("{other:?}"),
    };
    assert_eq!(joined.pid, info.pid);
    assert_ne!(joined.session, info.session);
    assert_ne!(joined.key, info.key);
    assert_eq!(read(&mut t, va, 8).unwrap(), vec![0; 8]);
    // A forged key does not join.
    let forged = ShareToken {
        key: token.key ^ 1,
        ..token
    };
    let board = std::mem::replace(&mut t.board, FakeBoard::new(1000));
    let mut u = Sim::new(Connection::new(cfg()).unwrap(), board);
    assert_eq!(
        u.call(Request::OpenSession { join: Some(forged) }),
        Err(ClioError::BadSession {
            op: OpKind::OpenSession,
            session: 0
        })
    );
    // Close; closing a session the board no longer has is success too.
    assert_eq!(t.call(Request::CloseSession), Ok(Completion::Closed));
    assert!(t.conn.session().is_none());
    t.conn.set_session(Some(joined));
    assert_eq!(t.call(Request::CloseSession), Ok(Completion::Closed));
    assert_eq!(
        t.call(Request::Read { va, len: 8 }),
        Err(ClioError::NoSession { op: OpKind::Read })
    );
}

/// The `ack` of every request is the first-attempt id of the oldest
/// request still unanswered, else the next id; the board frees records
/// before it.
#[test]
fn ack_watermark_is_the_oldest_unanswered_first_attempt() {
    let mut s = sim();
    let va = alloc(&mut s, 4 * 4096);
    // The first FAA's answer is lost once.
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToClient && h.opcode == Opcode::FetchAndAddResp && first {
            first = false;
            return Action::Drop;
        }
        Action::Deliver
    });
    s.sent.clear();
    let a = s
        .conn
        .submit(Request::FetchAndAdd { va, addend: 1 })
        .unwrap();
    s.flush();
    let a_id = s.sent[0].h.req_id;
    assert_eq!(s.sent[0].h.ack, a_id, "nothing older in flight");
    // Two more on other pages, answered while `a` is outstanding.
    for p in 1..3u64 {
        s.conn
            .submit(Request::FetchAndAdd {
                va: va + p * 4096,
                addend: 1,
            })
            .unwrap();
    }
    s.run();
    assert_eq!(s.result(a), Ok(Completion::Atomic { old: 0 }));
    let faa = s.sent_of(Opcode::FetchAndAdd);
    assert_eq!(faa.len(), 4, "three first attempts and one retry");
    // Everything sent while `a` was unanswered acks up to it, no further.
    assert!(faa.iter().all(|p| p.h.ack == a_id), "{faa:?}");
    assert_eq!(faa[3].h.retry_of, a_id);
    // The retry was answered from the record (applied once), and the next
    // request acknowledges everything: the board frees every record.
    assert_eq!(s.board.executed(Opcode::FetchAndAdd), 3);
    assert!(s.board.dedup_records(common::board::SESSION) > 0);
    read(&mut s, va, 8).unwrap();
    let last = s.sent.last().unwrap().h;
    assert_eq!(last.ack, last.req_id, "ack = the request's own (next) id");
    assert_eq!(s.board.dedup_records(common::board::SESSION), 0);
}

/// The client never has more unacknowledged non-idempotent requests than
/// the session's dedup quota, so the board's quota never answers BUSY.
#[test]
fn dedup_quota_holds_back_non_idempotent_requests() {
    let mut s = sim();
    s.conn.set_session(Some(creds(2)));
    s.board.dedup_quota = 2;
    let va = alloc(&mut s, 16 * 4096);
    let ids: Vec<_> = (0..12u64)
        .map(|p| {
            s.conn
                .submit(Request::Write {
                    va: va + p * 4096,
                    data: &[p as u8; 8],
                })
                .unwrap()
        })
        .collect();
    s.run();
    for id in ids {
        assert_eq!(s.result(id), Ok(Completion::Written));
    }
    let st = s.conn.stats();
    assert_eq!(st.busy, 0, "{st:?}");
    assert!(st.dedup_waits > 0, "{st:?}");
    assert!(
        s.board.dedup_high_water <= 2,
        "{}",
        s.board.dedup_high_water
    );
    for p in 0..12u64 {
        assert_eq!(s.board.peek(va + p * 4096, 8), vec![p as u8; 8]);
    }
}

/// A full dedup buffer answers BUSY; the SDK backs off and retries, and
/// every write lands once.
#[test]
fn busy_from_a_full_dedup_buffer_is_retried() {
    let mut s = sim();
    let va = alloc(&mut s, 8 * 4096);
    s.board.busy_next = 4;
    let ids: Vec<_> = (0..6u64)
        .map(|p| {
            s.conn
                .submit(Request::FetchAndAdd {
                    va: va + p * 4096,
                    addend: p + 1,
                })
                .unwrap()
        })
        .collect();
    s.run();
    for id in ids {
        assert_eq!(s.result(id), Ok(Completion::Atomic { old: 0 }));
    }
    assert!(s.conn.stats().busy > 0, "{:?}", s.conn.stats());
    assert_eq!(s.board.executed(Opcode::FetchAndAdd), 6);
}

#[test]
fn restarted_board_fails_every_call_of_the_session() {
    let mut s = sim();
    let va = alloc(&mut s, 2 * 4096);
    s.board.restart(0x0123_4567);
    let restarted = |op| ClioError::BoardRestarted {
        op,
        epoch: 0x0123_4567,
    };
    let r = s.conn.submit(Request::Read { va, len: 8 }).unwrap();
    let w = s.conn.submit(Request::Write { va, data: &[1; 8] }).unwrap();
    let rel = s.conn.submit(Request::Release).unwrap();
    s.run();
    assert_eq!(s.result(r), Err(restarted(OpKind::Read)));
    assert_eq!(s.result(w), Err(restarted(OpKind::Write)));
    assert_eq!(s.result(rel), Err(restarted(OpKind::Release)));
    assert_eq!(s.conn.restarted(), Some(0x0123_4567));
    // Later calls fail at once, without a packet.
    let before = s.sent.len();
    assert_eq!(
        s.conn.submit(Request::FetchAndAdd { va, addend: 1 }),
        Err(restarted(OpKind::FetchAndAdd))
    );
    s.run();
    assert_eq!(s.sent.len(), before);
}

#[test]
fn bad_session_and_over_quota_are_their_own_errors() {
    let mut s = sim();
    let va = alloc(&mut s, 4096);
    s.board.over_quota = 1;
    assert_eq!(
        s.call(Request::Lock { va }),
        Err(ClioError::OverQuota {
            op: OpKind::Lock,
            va
        })
    );
    s.conn.set_session(Some(SessionInfo {
        key: common::board::KEY ^ 0xff,
        ..creds(100)
    }));
    assert_eq!(
        s.call(Request::Read { va, len: 8 }),
        Err(ClioError::BadSession {
            op: OpKind::Read,
            session: common::board::SESSION
        })
    );
    assert_eq!(s.board.executed(Opcode::Read), 0);
}

/// A NACK names the refused packet's offset: of a multi-packet write only
/// that packet is resent, under the same attempt.
#[test]
fn nack_resends_only_the_packet_it_names() {
    let mut s = sim();
    let va = alloc(&mut s, 8192);
    let data = pattern(4500, 3);
    let mut first = true;
    s.fault = Box::new(move |dir, h| {
        if dir == Dir::ToBoard && h.opcode == Opcode::Write && h.offset == 2000 && first {
            first = false;
            return Action::Corrupt;
        }
        Action::Deliver
    });
    assert_eq!(
        s.call(Request::Write { va, data: &data }),
        Ok(Completion::Written)
    );
    let w = s.sent_of(Opcode::Write);
    let offsets: Vec<u32> = w.iter().map(|p| p.h.offset).collect();
    assert_eq!(offsets, vec![0, 1000, 2000, 3000, 4000, 2000]);
    assert!(w.iter().all(|p| p.h.req_id == w[0].h.req_id));
    let st = s.conn.stats();
    assert_eq!(
        (st.nacks, st.resent_packets, st.retries),
        (1, 1, 0),
        "{st:?}"
    );
    assert_eq!(s.board.peek(va, 4500), data);
}

/// A write takes one dedup record per packet: the quota limits packets of
/// unacknowledged writes, and a write that could never fit is refused.
#[test]
fn dedup_quota_counts_write_packets() {
    let mut s = sim();
    s.conn.set_session(Some(creds(4)));
    s.board.dedup_quota = 4;
    let va = alloc(&mut s, 8 * 4096);
    assert_eq!(
        s.conn.max_write_bytes(),
        4000,
        "4 records of 1000 B packets"
    );
    let ids: Vec<_> = (0..6u64)
        .map(|p| {
            s.conn
                .submit(Request::Write {
                    va: va + p * 4096,
                    data: &pattern(2500, p as u8),
                })
                .unwrap()
        })
        .collect();
    s.run();
    for (p, id) in ids.into_iter().enumerate() {
        assert_eq!(s.result(id), Ok(Completion::Written));
        assert_eq!(
            s.board.peek(va + p as u64 * 4096, 2500),
            pattern(2500, p as u8)
        );
    }
    assert_eq!(s.conn.stats().busy, 0, "{:?}", s.conn.stats());
    assert!(
        s.board.dedup_high_water <= 4,
        "{}",
        s.board.dedup_high_water
    );
    assert_eq!(
        s.call(Request::Write {
            va,
            data: &[1; 4001]
        }),
        Err(ClioError::InvalidArgument {
            what: "data",
            reason: "write has more packets than the session's dedup quota"
        })
    );
}
