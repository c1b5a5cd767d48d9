//! The pure state machine: registration, assignment, lookup, fencing.

mod common;

use clio_control::{ErrorCode, Field, Message, NodeAddr, Placement, Pressure, VREGION_BYTES};
use clio_rack::{Controller, Event};
use common::{hello, rack};

/// Handles `m` and applies its events, as the durable wrapper does after logging.
fn run(c: &mut Controller, now: u64, m: Message) -> Message {
    let d = c.handle(now, &m);
    for e in &d.events {
        c.apply(e).unwrap();
    }
    d.reply
}

fn welcome(c: &mut Controller, node: u16, boot: u32) -> u32 {
    match run(c, 0, hello(&c.config().clone(), node, boot)) {
        Message::Welcome { node: n, epoch } => {
            assert_eq!(n, node);
            epoch
        }
        other => panic!("expected Welcome, got {other:?}"),
    }
}

fn refused(code: ErrorCode, field: Field) -> Message {
    Message::Refused { code, field }
}

#[test]
fn allocation_spreads_least_loaded_first_and_lookup_answers() {
    let mut c = Controller::new(rack());
    for n in 1..=3 {
        assert_eq!(welcome(&mut c, n, 100 + u32::from(n)), 1);
    }
    // 14 GiB = everything: mn0 4, mn1 2, mn2 8 slots.
    let Message::Allocated { placements } = run(
        &mut c,
        0,
        Message::Allocate {
            bytes: 3 * VREGION_BYTES,
        },
    ) else {
        panic!()
    };
    // All empty: ties broken by id.
    let nodes: Vec<u16> = placements.iter().map(|p| p.node).collect();
    assert_eq!(nodes, [1, 2, 3]);
    assert_eq!(
        placements.iter().map(|p| p.region).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    // Now loads 1/4, 1/2, 1/8: mn2 first until it reaches 1/4, then mn0 (tie with mn2 -> id).
    let Message::Allocated { placements } = run(
        &mut c,
        0,
        Message::Allocate {
            bytes: 2 * VREGION_BYTES + 1,
        },
    ) else {
        panic!()
    };
    assert_eq!(
        placements.iter().map(|p| p.node).collect::<Vec<_>>(),
        [3, 1, 3]
    );
    assert_eq!(
        run(&mut c, 0, Message::Lookup { region: 4 }),
        Message::Owner(Placement {
            region: 4,
            node: 1,
            epoch: 1
        })
    );
    assert_eq!(
        run(&mut c, 0, Message::Lookup { region: 99 }),
        Message::NotAssigned { region: 99 }
    );
    // Fill up: 14 slots in total, 6 used.
    assert!(matches!(
        run(
            &mut c,
            0,
            Message::Allocate {
                bytes: 8 * VREGION_BYTES
            }
        ),
        Message::Allocated { .. }
    ));
    for (_, st) in [1u16, 2, 3].iter().map(|n| (n, c.node(*n).unwrap())) {
        assert!(st.regions > 0);
    }
    assert_eq!(c.node(1).unwrap().regions, 4);
    assert_eq!(c.node(2).unwrap().regions, 2);
    assert_eq!(c.node(3).unwrap().regions, 8);
    // Full: refused, and nothing changed (all or nothing).
    let before: Vec<_> = c.assignments().collect();
    assert_eq!(
        run(&mut c, 0, Message::Allocate { bytes: 1 }),
        refused(ErrorCode::NoCapacity, Field::AllocateBytes)
    );
    assert_eq!(c.assignments().collect::<Vec<_>>(), before);
}

#[test]
fn a_region_is_never_assigned_twice() {
    let mut c = Controller::new(rack());
    let e1 = welcome(&mut c, 1, 1);
    let e2 = welcome(&mut c, 2, 2);
    assert_eq!(
        run(
            &mut c,
            0,
            Message::AssignRegion {
                region: 7,
                owner: 1,
                epoch: e1
            }
        ),
        Message::Owner(Placement {
            region: 7,
            node: 1,
            epoch: e1
        })
    );
    assert_eq!(
        run(
            &mut c,
            0,
            Message::AssignRegion {
                region: 7,
                owner: 2,
                epoch: e2
            }
        ),
        refused(ErrorCode::AlreadyAssigned, Field::AssignRegion)
    );
    // Allocation skips the explicitly placed region.
    let Message::Allocated { placements } = run(
        &mut c,
        0,
        Message::Allocate {
            bytes: 5 * VREGION_BYTES,
        },
    ) else {
        panic!()
    };
    let regions: Vec<u32> = placements.iter().map(|p| p.region).collect();
    assert_eq!(regions, [0, 1, 2, 3, 4]);
    // Applying a second assignment of a region directly is refused too.
    let err = c
        .apply(&Event::Assigned {
            region: 7,
            node: "mn1".into(),
        })
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("region 7 is already owned by node 'mn0'"),
        "{err}"
    );
    // Release by the wrong owner / epoch is refused; by the right one it frees the region.
    assert_eq!(
        run(
            &mut c,
            0,
            Message::ReleaseRegion {
                region: 7,
                owner: 2,
                epoch: e2
            }
        ),
        refused(ErrorCode::NotOwner, Field::ReleaseOwner)
    );
    assert_eq!(
        run(
            &mut c,
            0,
            Message::ReleaseRegion {
                region: 7,
                owner: 1,
                epoch: e1 + 1
            }
        ),
        refused(ErrorCode::StaleEpoch, Field::ReleaseEpoch)
    );
    assert_eq!(
        run(
            &mut c,
            0,
            Message::ReleaseRegion {
                region: 7,
                owner: 1,
                epoch: e1
            }
        ),
        Message::Ack { epoch: e1 }
    );
    assert_eq!(
        run(
            &mut c,
            0,
            Message::ReleaseRegion {
                region: 7,
                owner: 1,
                epoch: e1
            }
        ),
        refused(ErrorCode::NotAssigned, Field::ReleaseRegion)
    );
    assert_eq!(
        run(&mut c, 0, Message::Lookup { region: 7 }),
        Message::NotAssigned { region: 7 }
    );
}

#[test]
fn a_node_declared_dead_is_fenced_by_its_epoch() {
    let mut c = Controller::new(rack());
    let old = welcome(&mut c, 1, 11);
    welcome(&mut c, 2, 22);
    let hb = |epoch| Message::Heartbeat {
        node: 1,
        epoch,
        pressure: Pressure {
            used_bytes: 0,
            free_bytes: 4 << 30,
        },
    };
    assert_eq!(run(&mut c, 500, hb(old)), Message::Ack { epoch: old });
    // mn1 keeps beating; mn0 goes silent past dead_after_ms (1000).
    assert_eq!(
        run(
            &mut c,
            1400,
            Message::Heartbeat {
                node: 2,
                epoch: 1,
                pressure: Pressure {
                    used_bytes: 0,
                    free_bytes: 1
                }
            }
        ),
        Message::Ack { epoch: 1 }
    );
    assert!(c.expired(1500).is_empty());
    let dead = c.expired(1501);
    assert_eq!(
        dead,
        vec![Event::Dead {
            node: "mn0".into(),
            epoch: old + 1
        }]
    );
    for e in &dead {
        c.apply(e).unwrap();
    }
    // The old incarnation comes back (a partition healed): all its claims are refused.
    assert_eq!(
        run(&mut c, 1600, hb(old)),
        refused(ErrorCode::StaleEpoch, Field::HeartbeatEpoch)
    );
    assert_eq!(
        run(
            &mut c,
            1600,
            Message::AssignRegion {
                region: 3,
                owner: 1,
                epoch: old
            }
        ),
        refused(ErrorCode::StaleEpoch, Field::AssignEpoch)
    );
    // No allocation goes to a dead node.
    let Message::Allocated { placements } = run(
        &mut c,
        1600,
        Message::Allocate {
            bytes: 2 * VREGION_BYTES,
        },
    ) else {
        panic!()
    };
    assert!(placements.iter().all(|p| p.node == 2));
    // Even the fence epoch itself is no good: the node must say hello again.
    assert_eq!(
        run(&mut c, 1600, hb(old + 1)),
        refused(ErrorCode::NodeDead, Field::HeartbeatEpoch)
    );
    // Hello again (same boot: a partition, not a restart) gets a newer epoch than the fence.
    let new = welcome(&mut c, 1, 11);
    assert_eq!(new, old + 2);
    assert_eq!(run(&mut c, 1700, hb(new)), Message::Ack { epoch: new });
    assert_eq!(
        run(&mut c, 1700, hb(old)),
        refused(ErrorCode::StaleEpoch, Field::HeartbeatEpoch)
    );
    // A repeated hello of the same incarnation is idempotent; a new boot gets a new epoch.
    assert_eq!(welcome(&mut c, 1, 11), new);
    assert_eq!(welcome(&mut c, 1, 12), new + 1);
    assert_eq!(
        run(&mut c, 1700, hb(new)),
        refused(ErrorCode::StaleEpoch, Field::HeartbeatEpoch)
    );
}

#[test]
fn unknown_nodes_and_wrong_identities_are_refused() {
    let cfg = rack();
    let mut c = Controller::new(cfg.clone());
    let mut h = hello(&cfg, 1, 5);
    if let Message::Hello { node, .. } = &mut h {
        *node = 4;
    }
    assert_eq!(
        run(&mut c, 0, h),
        refused(ErrorCode::UnknownNode, Field::HelloNode)
    );
    let mut h = hello(&cfg, 1, 5);
    if let Message::Hello { addr, .. } = &mut h {
        *addr = NodeAddr::V4 {
            ip: [10, 0, 0, 9],
            port: 7700,
        };
    }
    assert_eq!(
        run(&mut c, 0, h),
        refused(ErrorCode::AddressMismatch, Field::HelloAddr)
    );
    let mut h = hello(&cfg, 1, 5);
    if let Message::Hello { capacity, .. } = &mut h {
        *capacity -= 1;
    }
    assert_eq!(
        run(&mut c, 0, h),
        refused(ErrorCode::CapacityMismatch, Field::HelloCapacity)
    );
    let hb = Message::Heartbeat {
        node: 9,
        epoch: 1,
        pressure: Pressure {
            used_bytes: 0,
            free_bytes: 0,
        },
    };
    assert_eq!(
        run(&mut c, 0, hb),
        refused(ErrorCode::UnknownNode, Field::HeartbeatNode)
    );
    assert_eq!(
        run(
            &mut c,
            0,
            Message::AssignRegion {
                region: 1,
                owner: 9,
                epoch: 1
            }
        ),
        refused(ErrorCode::UnknownNode, Field::AssignOwner)
    );
    // A known node that never said hello cannot take regions.
    assert_eq!(
        run(
            &mut c,
            0,
            Message::AssignRegion {
                region: 1,
                owner: 2,
                epoch: 1
            }
        ),
        refused(ErrorCode::NodeDead, Field::AssignOwner)
    );
    // No live node: nothing to allocate on.
    assert_eq!(
        run(&mut c, 0, Message::Allocate { bytes: 1 }),
        refused(ErrorCode::NoCapacity, Field::AllocateBytes)
    );
    // Out-of-range values are refused naming the field; replies are not requests.
    assert_eq!(
        run(&mut c, 0, Message::Lookup { region: u32::MAX }),
        refused(ErrorCode::Malformed, Field::LookupRegion)
    );
    assert_eq!(
        run(&mut c, 0, Message::Ack { epoch: 1 }),
        refused(ErrorCode::NotARequest, Field::Message)
    );
    assert_eq!(
        c.apply(&Event::Registered {
            node: "mn9".into(),
            epoch: 1,
            boot_epoch: 0
        })
        .unwrap_err()
        .to_string(),
        "node 'mn9' is not in the rack file"
    );
}

#[test]
fn move_region_switches_owner_once_and_is_fenced() {
    let mut c = Controller::new(rack());
    let e1 = welcome(&mut c, 1, 11);
    let e2 = welcome(&mut c, 2, 12);
    let Message::Allocated { placements } = run(&mut c, 0, Message::Allocate { bytes: 1 }) else {
        panic!()
    };
    let r = placements[0].region;
    assert_eq!(placements[0].node, 1);
    // Wrong giver, stale epoch, same node, unknown and never-registered targets.
    let mv = |from, from_epoch, to| Message::MoveRegion {
        region: r,
        from,
        from_epoch,
        to,
    };
    assert_eq!(
        run(&mut c, 0, mv(2, e2, 1)),
        refused(ErrorCode::NotOwner, Field::MoveFrom)
    );
    assert_eq!(
        run(&mut c, 0, mv(1, e1 + 1, 2)),
        refused(ErrorCode::StaleEpoch, Field::MoveFromEpoch)
    );
    assert_eq!(
        run(&mut c, 0, mv(1, e1, 1)),
        refused(ErrorCode::Malformed, Field::MoveTo)
    );
    assert_eq!(
        run(&mut c, 0, mv(1, e1, 9)),
        refused(ErrorCode::UnknownNode, Field::MoveTo)
    );
    assert_eq!(
        run(&mut c, 0, mv(1, e1, 3)),
        refused(ErrorCode::NodeDead, Field::MoveTo)
    );
    assert_eq!(
        run(
            &mut c,
            0,
            Message::MoveRegion {
                region: r + 1,
                from: 1,
                from_epoch: e1,
                to: 2
            }
        ),
        refused(ErrorCode::NotAssigned, Field::MoveRegion)
    );
    // The move itself: one event, the owner switches, loads follow.
    let d = c.handle(0, &mv(1, e1, 2));
    assert_eq!(
        d.events,
        [Event::Moved {
            region: r,
            node: "mn1".into()
        }]
    );
    for e in &d.events {
        c.apply(e).unwrap();
    }
    assert_eq!(
        d.reply,
        Message::Owner(Placement {
            region: r,
            node: 2,
            epoch: e2
        })
    );
    assert_eq!(c.owner(r), Some(2));
    assert_eq!(c.node(1).unwrap().regions, 0);
    assert_eq!(c.node(2).unwrap().regions, 1);
    // A replayed move (the mover retrying after a lost answer) is refused: the
    // region is no longer the giver's, so it cannot be moved twice.
    assert_eq!(
        run(&mut c, 0, mv(1, e1, 2)),
        refused(ErrorCode::NotOwner, Field::MoveFrom)
    );
    // Gate messages are for nodes.
    assert_eq!(
        run(
            &mut c,
            0,
            Message::Gate {
                region: r,
                pid: 1,
                va: 0,
                len: 1,
                state: clio_control::GateState::Paused
            }
        ),
        refused(ErrorCode::NotARequest, Field::Message)
    );
}

#[test]
fn allocations_are_contiguous_runs() {
    let mut c = Controller::new(rack());
    for n in 1..=3 {
        welcome(&mut c, n, 1);
    }
    let alloc = |c: &mut Controller, bytes| match run(c, 0, Message::Allocate { bytes }) {
        Message::Allocated { placements } => {
            placements.iter().map(|p| p.region).collect::<Vec<_>>()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(alloc(&mut c, 1), [0]);
    assert_eq!(alloc(&mut c, 1), [1]);
    assert_eq!(alloc(&mut c, 1), [2]);
    let (o, e) = (
        c.owner(1).unwrap(),
        c.node(c.owner(1).unwrap()).unwrap().epoch,
    );
    run(
        &mut c,
        0,
        Message::ReleaseRegion {
            region: 1,
            owner: o,
            epoch: e,
        },
    );
    // Two regions do not fit the hole at 1: they go to 3..5; one region fills it.
    assert_eq!(alloc(&mut c, 2 * VREGION_BYTES), [3, 4]);
    assert_eq!(alloc(&mut c, 1), [1]);
}

fn usage(node: u16, epoch: u32, regions: &[(u32, u16, u64)]) -> Message {
    Message::Usage {
        node,
        epoch,
        regions: regions
            .iter()
            .map(|&(region, chunks, hits)| clio_control::RegionUse {
                region,
                chunks,
                hits,
            })
            .collect(),
    }
}

fn beat(node: u16, epoch: u32, used: u64) -> Message {
    Message::Heartbeat {
        node,
        epoch,
        pressure: Pressure {
            used_bytes: used,
            free_bytes: 1000 - used,
        },
    }
}

#[test]
fn the_plan_moves_a_pressed_nodes_least_used_region_to_the_least_loaded_node() {
    use clio_control::MoveOrder;
    let mut c = Controller::new(rack());
    for n in 1..=3 {
        welcome(&mut c, n, 1);
    }
    let plan = |c: &mut Controller, now| match run(
        c,
        now,
        Message::PlanMove {
            high_ppm: 700_000,
            low_ppm: 500_000,
        },
    ) {
        Message::MovePlan(p) => p,
        other => panic!("{other:?}"),
    };
    // Regions 0..3 on mn0 (explicit placements), region 3 on mn1.
    for r in 0..3 {
        assert!(matches!(
            run(
                &mut c,
                0,
                Message::AssignRegion {
                    region: r,
                    owner: 1,
                    epoch: 1
                }
            ),
            Message::Owner(_)
        ));
    }
    run(
        &mut c,
        0,
        Message::AssignRegion {
            region: 3,
            owner: 2,
            epoch: 1,
        },
    );
    // No pressure reports: no plan.
    assert_eq!(plan(&mut c, 0), None);
    run(&mut c, 10, beat(1, 1, 900));
    run(&mut c, 10, beat(2, 1, 400));
    run(&mut c, 10, beat(3, 1, 100));
    // Pressure but no usage reports: nothing known to be movable.
    assert_eq!(plan(&mut c, 10), None);
    // Region 0 hot, 2 cold, 1 without chunks; a report of a region it does
    // not own (3) is ignored; a stale epoch is refused.
    assert_eq!(
        run(
            &mut c,
            20,
            usage(1, 1, &[(0, 4, 500), (1, 0, 0), (2, 2, 3), (3, 9, 0)])
        ),
        Message::Ack { epoch: 1 }
    );
    assert_eq!(
        run(&mut c, 20, usage(1, 7, &[(0, 4, 0)])),
        refused(ErrorCode::StaleEpoch, Field::UsageEpoch)
    );
    assert_eq!(c.usage(3), None);
    assert_eq!(
        plan(&mut c, 30),
        Some(MoveOrder {
            region: 2,
            from: 1,
            from_epoch: 1,
            to: 3
        })
    );
    // Scores decay: region 2 busy now, region 0 idle for a while.
    for t in 0..4 {
        run(&mut c, 40 + t, usage(1, 1, &[(0, 4, 0), (2, 2, 100)]));
    }
    assert_eq!(plan(&mut c, 50).map(|o| o.region), Some(0));
    // Reports older than USAGE_STALE_MS are not used.
    assert_eq!(
        plan(&mut c, 50 + clio_rack::state::USAGE_STALE_MS + 1),
        None
    );
    // Under the high mark: nothing; no node under the low mark: nothing.
    run(&mut c, 60, usage(1, 1, &[(0, 4, 0), (2, 2, 100)]));
    run(&mut c, 60, beat(1, 1, 700));
    assert_eq!(plan(&mut c, 60), None);
    run(&mut c, 60, beat(1, 1, 950));
    run(&mut c, 60, beat(2, 1, 600));
    run(&mut c, 60, beat(3, 1, 600));
    assert_eq!(plan(&mut c, 60), None);
    // The move itself clears both nodes' pressure: the next plan waits for
    // reports sent after it.
    run(&mut c, 60, beat(3, 1, 100));
    let o = plan(&mut c, 60).unwrap();
    assert!(matches!(
        run(&mut c, 60, Message::MoveRegion { region: o.region, from: o.from, from_epoch: o.from_epoch, to: o.to }),
        Message::Owner(p) if p.node == 3
    ));
    assert_eq!(c.usage(o.region), None);
    assert_eq!(plan(&mut c, 61), None);
    // The giver frees the region after the commit: reports arriving within
    // SETTLE_MS may predate the free and are ignored; later ones count.
    let settle = clio_rack::state::SETTLE_MS;
    run(&mut c, 62, usage(1, 1, &[(2, 2, 0)]));
    run(&mut c, 62, beat(1, 1, 950));
    run(&mut c, 62, beat(3, 1, 100));
    assert_eq!(plan(&mut c, 62), None, "a report from before the free");
    run(&mut c, 60 + settle, usage(1, 1, &[(2, 2, 0)]));
    run(&mut c, 60 + settle, beat(1, 1, 950));
    run(&mut c, 60 + settle, beat(3, 1, 100));
    assert_eq!(plan(&mut c, 60 + settle).map(|o| o.region), Some(2));
    // Invalid marks are refused naming the field.
    assert_eq!(
        run(
            &mut c,
            61,
            Message::PlanMove {
                high_ppm: 1,
                low_ppm: 2
            }
        ),
        refused(ErrorCode::Malformed, Field::PlanMoveMarks)
    );
}
