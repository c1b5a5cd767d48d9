//! The node's rack state machine (`clio_slowpath::rack`) on its own: gate
//! verdicts, dirty records, bindings and full tables, control datagrams, and
//! the registration link. The rack's end-to-end tests (`host-sdk/rack/tests`)
//! run the same code behind emulated boards.

use clio_control::{
    Envelope, ErrorCode, Field, GateState, Message, NodeAddr, Pressure, Space, DIRTY_BLOCK,
    MAX_ENVELOPE_LEN, MAX_USAGE,
};
use clio_slowpath::rack::{Gate, Link, LinkError, LinkState, RackAgent, Verdict};
use clio_wire::clio::{Header, Opcode, Status};

type Agent = RackAgent<4, 32, 2>;

fn req(op: Opcode, pid: u32, va: u64, len: u32) -> Header {
    Header::request(op, pid, 1, va, len)
}

fn gate(pid: u32, va: u64, len: u64, state: GateState) -> Gate {
    Gate {
        region: 7,
        pid,
        va,
        len,
        state,
    }
}

fn call(a: &mut Agent, m: Message) -> Message {
    let mut buf = [0u8; MAX_ENVELOPE_LEN];
    let req = Envelope::new(42, m).encode(&mut buf).unwrap().to_vec();
    let mut out = [0u8; MAX_ENVELOPE_LEN];
    let b = a.datagram(&req, 0xabcd, &mut out).expect("an answer");
    let env = Envelope::decode(b).unwrap();
    assert_eq!(env.request_id, 42);
    env.message
}

#[test]
fn gates_hold_back_what_their_state_says() {
    let mut a = Agent::new();
    let va = 0x40_0000;
    assert!(a.set_gate(gate(1, va, 1 << 20, GateState::Paused)));
    assert_eq!(
        a.check(&req(Opcode::Write, 1, va + 8, 8)),
        Verdict::Answer(Status::Busy)
    );
    assert_eq!(a.check(&req(Opcode::Read, 1, va + 8, 8)), Verdict::Serve);
    // Another address space and VA outside the range are untouched.
    assert_eq!(a.check(&req(Opcode::Write, 2, va, 8)), Verdict::Serve);
    assert_eq!(
        a.check(&req(Opcode::Write, 1, va + (1 << 20), 8)),
        Verdict::Serve
    );
    a.set_gate(gate(1, va, 1 << 20, GateState::Moved));
    assert_eq!(
        a.check(&req(Opcode::Read, 1, va, 8)),
        Verdict::Answer(Status::Moved)
    );
    // The mover frees the old copy through a Moved gate.
    assert_eq!(a.check(&req(Opcode::Free, 1, va, 0)), Verdict::Serve);
    // Reused VA drops the Moved gate.
    a.allocated(1, va, 4096);
    assert!(a.gates().is_empty());
    a.set_gate(gate(1, va, 1 << 20, GateState::Rejoin));
    assert_eq!(a.check(&req(Opcode::Read, 1, va, 8)), Verdict::Serve);
    assert_eq!(
        a.check(&req(Opcode::FetchAndAdd, 1, va, 8)),
        Verdict::Answer(Status::Moved)
    );
    a.set_gate(gate(1, va, 1 << 20, GateState::Open));
    assert!(a.gates().is_empty());
    assert_eq!(a.stats().busy, 1);
    assert_eq!(a.stats().moved, 2);
}

#[test]
fn tracking_records_exactly_the_blocks_changes_touch() {
    let mut a = Agent::new();
    let va = 0x80_0000;
    a.set_gate(gate(3, va, 64 * DIRTY_BLOCK, GateState::Tracking));
    assert_eq!(a.take_dirty(3, va), Some(0));
    // Across a block edge: both blocks.
    let w = req(Opcode::Write, 3, va + DIRTY_BLOCK - 4, 8);
    assert_eq!(a.check(&w), Verdict::Serve);
    assert_eq!(
        a.check(&req(Opcode::Read, 3, va + 5 * DIRTY_BLOCK, 8)),
        Verdict::Serve
    );
    assert_eq!(
        a.check(&req(Opcode::CompareAndSwap, 3, va + 9 * DIRTY_BLOCK, 8)),
        Verdict::Serve
    );
    assert_eq!(
        a.check(&req(Opcode::Free, 3, va, 0)),
        Verdict::Answer(Status::Busy)
    );
    assert_eq!(a.take_dirty(3, va), Some(0b11 | 1 << 9));
    assert_eq!(a.take_dirty(3, va), Some(0), "a take clears");
    a.check(&req(Opcode::Write, 3, va + 63 * DIRTY_BLOCK, 8));
    // Paused keeps the record, Open drops it.
    a.set_gate(gate(3, va, 64 * DIRTY_BLOCK, GateState::Paused));
    assert_eq!(a.take_dirty(3, va), Some(1 << 63));
    a.set_gate(gate(3, va, 64 * DIRTY_BLOCK, GateState::Open));
    assert_eq!(a.take_dirty(3, va), None);
    assert_eq!(
        call(
            &mut a,
            Message::TakeDirty {
                region: 7,
                pid: 3,
                va
            }
        ),
        Message::Refused {
            code: ErrorCode::NotAssigned,
            field: Field::TakeDirtyVa
        }
    );
}

#[test]
fn bindings_count_use_and_list_chunks_and_a_move_forgets_them() {
    let mut a = Agent::new();
    for (chunk, va) in [(2u16, 0x300_0000u64), (0, 0x100_0000), (1, 0x200_0000)] {
        let m = Message::Bind {
            region: 5,
            chunk,
            pid: 9,
            va,
            len: 4 << 20,
            import: false,
        };
        assert_eq!(call(&mut a, m), Message::Ack { epoch: 0xabcd });
    }
    for _ in 0..3 {
        a.check(&req(Opcode::Read, 9, 0x200_0010, 8));
    }
    let mut uses = Vec::new();
    a.take_usage(|u| uses.push(u));
    assert_eq!(uses.len(), 1);
    assert_eq!((uses[0].region, uses[0].chunks, uses[0].hits), (5, 3, 3));
    let mut again = Vec::new();
    a.take_usage(|u| again.push(u));
    assert_eq!(again[0].hits, 0, "counts reset");
    let Message::ChunkList {
        pid, chunks, next, ..
    } = call(&mut a, Message::Chunks { region: 5, from: 1 })
    else {
        panic!("a chunk list")
    };
    assert_eq!(pid, 9);
    assert_eq!(
        chunks.iter().map(|c| (c.chunk, c.va)).collect::<Vec<_>>(),
        [(1, 0x200_0000), (2, 0x300_0000)]
    );
    assert_eq!(next, None);
    // A freed chunk is no longer bound.
    a.check(&req(Opcode::Free, 9, 0x100_0000, 0));
    assert_eq!(a.bindings().len(), 2);
    // Tracking refuses new chunks; a Moved gate forgets the region and
    // refuses late chunks unless they are a mover's import.
    a.set_gate(Gate {
        region: 5,
        pid: 9,
        va: 0x200_0000,
        len: 4 << 20,
        state: GateState::Tracking,
    });
    let late = |import| Message::Bind {
        region: 5,
        chunk: 4,
        pid: 9,
        va: 0x500_0000,
        len: 4 << 20,
        import,
    };
    assert_eq!(
        call(&mut a, late(false)),
        Message::Refused {
            code: ErrorCode::Busy,
            field: Field::BindRegion
        }
    );
    a.set_gate(Gate {
        region: 5,
        pid: 9,
        va: 0x200_0000,
        len: 4 << 20,
        state: GateState::Moved,
    });
    assert!(a.bindings().is_empty());
    assert_eq!(
        call(&mut a, late(false)),
        Message::Refused {
            code: ErrorCode::NotOwner,
            field: Field::BindRegion
        }
    );
    assert_eq!(call(&mut a, late(true)), Message::Ack { epoch: 0xabcd });
    assert_eq!(
        call(&mut a, Message::Chunks { region: 6, from: 0 }),
        Message::NotAssigned { region: 6 }
    );
}

#[test]
fn full_tables_refuse_instead_of_growing() {
    let mut a = Agent::new();
    for i in 0..4 {
        assert!(a.set_gate(gate(1, i << 22, 1 << 22, GateState::Moved)));
    }
    // Replacing an existing gate still works; a fifth range does not.
    assert!(a.set_gate(gate(1, 0, 1 << 22, GateState::Paused)));
    assert_eq!(
        call(
            &mut a,
            Message::Gate {
                region: 7,
                pid: 1,
                va: 4 << 22,
                len: 1 << 22,
                state: GateState::Paused
            }
        ),
        Message::Refused {
            code: ErrorCode::NoCapacity,
            field: Field::GateRegion
        }
    );
    let space = |pid| Space {
        pid,
        session: 1,
        epoch: 1,
        key: 5,
    };
    for c in 1..=2 {
        assert!(matches!(
            call(
                &mut a,
                Message::Register {
                    client: c,
                    space: space(c as u32)
                }
            ),
            Message::SpaceOf { space: Some(_), .. }
        ));
    }
    // First registration wins.
    assert_eq!(
        call(
            &mut a,
            Message::Register {
                client: 1,
                space: space(8)
            }
        ),
        Message::SpaceOf {
            client: 1,
            space: Some(space(1))
        }
    );
    assert_eq!(
        call(
            &mut a,
            Message::Register {
                client: 3,
                space: space(3)
            }
        ),
        Message::Refused {
            code: ErrorCode::NoCapacity,
            field: Field::Message
        }
    );
    assert_eq!(
        call(&mut a, Message::FindSpace { client: 2 }),
        Message::SpaceOf {
            client: 2,
            space: Some(space(2))
        }
    );
}

#[test]
fn bad_datagrams_are_refused_naming_the_field_or_dropped() {
    let mut a = Agent::new();
    let mut out = [0u8; MAX_ENVELOPE_LEN];
    let mut buf = [0u8; MAX_ENVELOPE_LEN];
    let n = Envelope::new(5, Message::Lookup { region: 1 })
        .encode(&mut buf)
        .unwrap()
        .len();
    // Not a node's request.
    let b = a.datagram(&buf[..n], 1, &mut out).unwrap();
    assert_eq!(
        Envelope::decode(b).unwrap().message,
        Message::Refused {
            code: ErrorCode::NotARequest,
            field: Field::Message
        }
    );
    // Truncated inside the field: refused naming it.
    let b = a.datagram(&buf[..n - 1], 1, &mut out).unwrap();
    assert_eq!(
        Envelope::decode(b).unwrap().message,
        Message::Refused {
            code: ErrorCode::Malformed,
            field: Field::LookupRegion
        }
    );
    // No readable request id: dropped.
    assert!(a.datagram(&buf[..3], 1, &mut out).is_none());
    assert_eq!(a.stats().refused, 3);
    assert!(RackAgent::<1, 1, 1>::is_control(&buf[..n]));
}

#[test]
fn the_link_says_hello_beats_and_says_hello_again_when_refused() {
    let addr = NodeAddr::V4 {
        ip: [127, 0, 0, 1],
        port: 7701,
    };
    let mut l = Link::new(2, addr, 1 << 30, 0x1234, 100);
    assert_eq!(l.state(), LinkState::Unregistered);
    assert_eq!(
        l.hello(),
        Message::Hello {
            node: 2,
            addr,
            capacity: 1 << 30,
            boot_epoch: 0x1234
        }
    );
    let p = Pressure {
        used_bytes: 1,
        free_bytes: 2,
    };
    assert_eq!(l.heartbeat(0, p), None, "no beat before the welcome");
    assert_eq!(
        l.welcomed(0, &Message::Welcome { node: 3, epoch: 1 }),
        Err(LinkError::Unexpected)
    );
    assert_eq!(
        l.welcomed(10, &Message::Welcome { node: 2, epoch: 4 }),
        Ok(4)
    );
    assert_eq!(
        l.heartbeat(10, p),
        Some(Message::Heartbeat {
            node: 2,
            epoch: 4,
            pressure: p
        })
    );
    assert!(!l.due(109));
    assert_eq!(l.heartbeat(109, p), None);
    assert!(l.heartbeat(110, p).is_some());
    assert_eq!(l.beat_answered(&Message::Ack { epoch: 4 }), Ok(()));
    // Usage pages after the beat.
    let mut a = RackAgent::<4, 32, 2>::new();
    for r in 0..(MAX_USAGE as u32 + 1) {
        let _ = a.control(
            &Message::Bind {
                region: r,
                chunk: 0,
                pid: 1,
                va: u64::from(r) << 22,
                len: 1 << 22,
                import: false,
            },
            1,
        );
    }
    let mut pages = Vec::new();
    l.usage(&mut a, |m| pages.push(m));
    let sizes: Vec<usize> = pages
        .iter()
        .map(|m| match m {
            Message::Usage {
                node: 2,
                epoch: 4,
                regions,
            } => regions.len(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(sizes, [MAX_USAGE, 1]);
    let refused = Message::Refused {
        code: ErrorCode::StaleEpoch,
        field: Field::HeartbeatEpoch,
    };
    assert_eq!(
        l.beat_answered(&refused),
        Err(LinkError::Refused {
            code: ErrorCode::StaleEpoch,
            field: Field::HeartbeatEpoch
        })
    );
    assert_eq!(l.state(), LinkState::Unregistered);
    assert_eq!(l.heartbeat(1000, p), None, "fenced: hello first");
    let mut none = Vec::new();
    l.usage(&mut a, |m| none.push(m));
    assert!(none.is_empty());
}

/// With a rack key, the agent serves only sealed frames: a forged MAC, a
/// frame under another key, an unsealed envelope, a replay and an old
/// version are each refused, named and counted; a good frame is answered
/// sealed with its seal.
#[test]
fn a_keyed_agent_refuses_forged_replayed_wrong_key_and_old_frames() {
    use clio_control::auth::{open, seal, RackKey, Seal};
    use clio_control::{Envelope, ErrorCode, Field, Message, MAX_ENVELOPE_LEN};
    let key = RackKey(*b"rack-key-16bytes");
    let mut a = clio_slowpath::rack::RackAgent::<4, 4, 4>::new();
    a.set_key(key);
    let probe = Envelope::new(3, Message::Probe { node: 2, epoch: 5 });
    let s1 = Seal {
        sender: 11,
        counter: 1000,
    };
    let mut fb = [0u8; MAX_ENVELOPE_LEN];
    let good = seal(&probe, &key, s1, &mut fb).unwrap().to_vec();
    let ask = |a: &mut clio_slowpath::rack::RackAgent<4, 4, 4>, f: &[u8]| {
        let mut out = [0u8; MAX_ENVELOPE_LEN];
        let r = a.datagram(f, 9, &mut out).expect("an answer").to_vec();
        let (env, s) = open(&r, &key).expect("answers are sealed");
        (env.request_id, env.message, s)
    };
    let (id, m, s) = ask(&mut a, &good);
    assert_eq!((id, s), (3, s1));
    assert!(
        matches!(
            m,
            Message::NodeInfo {
                node: 2,
                epoch: 5,
                boot_epoch: 9,
                ..
            }
        ),
        "{m:?}"
    );
    let refused = |code, field| Message::Refused { code, field };
    // Replayed: the same frame again.
    assert_eq!(
        ask(&mut a, &good).1,
        refused(ErrorCode::Replayed, Field::FrameCounter)
    );
    // Forged: one bit of the message changed (the node id).
    let mut forged = good.clone();
    forged[7] ^= 1;
    assert_eq!(
        ask(&mut a, &forged).1,
        refused(ErrorCode::Unauthenticated, Field::FrameTag)
    );
    // Wrong key.
    let other = RackKey(*b"another-key-16by");
    let s2 = Seal {
        sender: 11,
        counter: 1001,
    };
    let wrong = seal(&probe, &other, s2, &mut fb).unwrap().to_vec();
    assert_eq!(
        ask(&mut a, &wrong).1,
        refused(ErrorCode::Unauthenticated, Field::FrameTag)
    );
    // Unsealed (a bare envelope, as an unkeyed peer sends): too short for a
    // seal, dropped; or refused when long enough to claim one.
    let mut bare = [0u8; MAX_ENVELOPE_LEN];
    let n = probe.encode(&mut bare).unwrap().len();
    assert!(a
        .datagram(&bare[..n], 9, &mut [0u8; MAX_ENVELOPE_LEN])
        .is_none());
    // Old version: authentic, but a v3 envelope.
    let mut old = good.clone();
    old[4] = 3;
    let body = old.len() - clio_control::auth::TRAILER_LEN;
    old[body + 8..body + 16].copy_from_slice(&1002u64.to_le_bytes());
    let old = {
        // Re-seal the v3 body by hand (seal() would encode v4).
        let mut h = old[..body + 16].to_vec();
        let tag = clio_control::auth::tag_of(&key, &h);
        h.extend_from_slice(&tag);
        h
    };
    assert_eq!(
        ask(&mut a, &old).1,
        refused(ErrorCode::Malformed, Field::EnvelopeVersion)
    );
    // A newer counter from the same sender is served.
    let s3 = Seal {
        sender: 11,
        counter: 1003,
    };
    let next = seal(&probe, &key, s3, &mut fb).unwrap().to_vec();
    assert!(matches!(ask(&mut a, &next).1, Message::NodeInfo { .. }));
    let st = a.stats();
    assert_eq!(
        (st.replayed, st.unauthenticated, st.control),
        (1, 3, 2),
        "{st:?}"
    );
}

/// The commands an agent whose gate is in the fast path queued.
fn commands(a: &mut Agent) -> Vec<clio_wire::ring::Descriptor> {
    let mut v = Vec::new();
    assert!(a.take_commands(&mut |d| {
        v.push(*d);
        true
    }));
    v
}

#[test]
fn a_fast_path_gate_is_driven_by_gate_set_and_fed_by_gate_dirty() {
    use clio_wire::ring::{Descriptor, GateMode};
    let mut a = Agent::new();
    a.use_fast_path_gate(2);
    let va = 0x40_0000;
    let set = |entry, va, mode| Descriptor::GateSet {
        entry,
        pid: 1,
        va,
        len: 1 << 20,
        mode,
    };
    assert_eq!(
        call(
            &mut a,
            Message::Gate {
                region: 7,
                pid: 1,
                va,
                len: 1 << 20,
                state: GateState::Tracking
            }
        ),
        Message::Ack { epoch: 0xabcd }
    );
    assert_eq!(commands(&mut a), vec![set(0, va, GateMode::Tracking)]);
    // Data requests are the fast path's: served here, nothing marked.
    assert_eq!(a.check(&req(Opcode::Write, 1, va, 8)), Verdict::Serve);
    assert_eq!(a.take_dirty(1, va), Some(0));
    // The take re-set the entry (clearing the fast path's bitmap).
    assert_eq!(commands(&mut a), vec![set(0, va, GateMode::Tracking)]);
    // Reports join the record; one for another range or entry is dropped.
    a.gate_dirty(0, 1, va, 0b100);
    a.gate_dirty(0, 1, va, 0b001);
    a.gate_dirty(1, 1, va, 0b010);
    a.gate_dirty(0, 2, va, 0b010);
    assert_eq!(
        call(
            &mut a,
            Message::TakeDirty {
                region: 7,
                pid: 1,
                va
            }
        ),
        Message::Dirty { mask: 0b101 }
    );
    assert_eq!(commands(&mut a), vec![set(0, va, GateMode::Tracking)]);
    // A freed chunk under tracking is still refused by the slow path.
    assert_eq!(
        a.check(&req(Opcode::Free, 1, va, 0)),
        Verdict::Answer(Status::Busy)
    );
    // Second entry, then the fast path's table is full: NoCapacity, nothing sent.
    let va2 = va + (1 << 20);
    assert!(a.set_gate(gate(1, va2, 1 << 20, GateState::Paused)));
    assert_eq!(commands(&mut a), vec![set(1, va2, GateMode::Paused)]);
    assert!(!a.set_gate(gate(1, va2 + (1 << 20), 1 << 20, GateState::Paused)));
    assert!(commands(&mut a).is_empty());
    // Open frees the entry for the next gate; Moved gates dropped by a
    // reallocation free theirs.
    assert!(a.set_gate(gate(1, va, 1 << 20, GateState::Open)));
    assert_eq!(commands(&mut a), vec![set(0, va, GateMode::Open)]);
    assert!(a.set_gate(gate(1, va, 1 << 20, GateState::Moved)));
    assert_eq!(commands(&mut a), vec![set(0, va, GateMode::Moved)]);
    a.allocated(1, va + 4096, 4096);
    assert_eq!(commands(&mut a), vec![set(0, va, GateMode::Open)]);
    // A command the TX ring has no room for stays queued, in order.
    assert!(a.set_gate(gate(1, va, 1 << 20, GateState::Paused)));
    assert!(!a.take_commands(&mut |_| false));
    assert_eq!(commands(&mut a), vec![set(0, va, GateMode::Paused)]);
}
