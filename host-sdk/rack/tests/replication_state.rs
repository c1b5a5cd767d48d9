//! Replicated regions in the controller: two distinct nodes per region, failover
//! when a copy's node is declared dead or reboots, all logged and replayed.

mod common;

use clio_control::{
    ErrorCode, Field, Message, MigrationInfo, MigrationKind, MigrationOutcome, Pressure, Replicas,
    VREGION_BYTES,
};
use clio_rack::{Controller, Event, Rack};
use common::{hello, rack};

fn run(c: &mut Controller, now: u64, m: Message) -> Message {
    let d = c.handle(now, &m);
    for e in &d.events {
        c.apply(e).unwrap();
    }
    d.reply
}

fn hb(node: u16, epoch: u32) -> Message {
    Message::Heartbeat {
        node,
        epoch,
        pressure: Pressure {
            used_bytes: 0,
            free_bytes: 1 << 30,
        },
    }
}

fn replicas(c: &mut Controller, region: u32) -> Replicas {
    match run(c, 0, Message::LookupReplicas { region }) {
        Message::ReplicaState(r) => r,
        other => panic!("expected ReplicaState, got {other:?}"),
    }
}

fn registered() -> Controller {
    let mut c = Controller::new(rack());
    for n in 1..=3 {
        run(&mut c, 0, hello(&rack(), n, 10 + u32::from(n)));
    }
    c
}

#[test]
fn replicated_allocation_puts_two_copies_on_distinct_nodes() {
    let mut c = registered();
    let Message::AllocatedReplicated { sets } = run(
        &mut c,
        0,
        Message::AllocateReplicated {
            bytes: 3 * VREGION_BYTES,
        },
    ) else {
        panic!()
    };
    assert_eq!(sets.len(), 3);
    for s in &sets {
        assert_ne!(s.primary, s.backup);
        assert_ne!(s.backup, 0);
        assert_eq!(replicas(&mut c, s.region), *s);
    }
    // Six copies over 4 + 2 + 8 slots, least loaded first: every node holds some.
    let held: Vec<u64> = (1..=3).map(|n| c.node(n).unwrap().regions).collect();
    assert_eq!(held.iter().sum::<u64>(), 6);
    assert!(held.iter().all(|h| *h > 0), "{held:?}");
    // A single-copy region answers LookupReplicas with backup 0.
    let Message::Allocated { placements } = run(&mut c, 0, Message::Allocate { bytes: 1 }) else {
        panic!()
    };
    let r = replicas(&mut c, placements[0].region);
    assert_eq!((r.backup, r.backup_epoch), (0, 0));
    // A replicated region does not migrate.
    let s = sets[0];
    assert_eq!(
        run(
            &mut c,
            0,
            Message::MoveRegion {
                region: s.region,
                from: s.primary,
                from_epoch: s.primary_epoch,
                to: 6 - s.primary - s.backup,
            }
        ),
        Message::Refused {
            code: ErrorCode::Replicated,
            field: Field::MoveRegion
        }
    );
    // Releasing frees both copies' slots.
    run(
        &mut c,
        0,
        Message::ReleaseRegion {
            region: s.region,
            owner: s.primary,
            epoch: s.primary_epoch,
        },
    );
    let after: u64 = (1..=3).map(|n| c.node(n).unwrap().regions).sum();
    assert_eq!(after, 5);
    // With one live node there is no second copy: refused, nothing changes.
    let mut one = Controller::new(rack());
    run(&mut one, 0, hello(&rack(), 3, 1));
    assert_eq!(
        run(&mut one, 0, Message::AllocateReplicated { bytes: 1 }),
        Message::Refused {
            code: ErrorCode::NoCapacity,
            field: Field::AllocateReplicatedBytes
        }
    );
    assert_eq!(one.node(3).unwrap().regions, 0);
}

#[test]
fn a_dead_primary_is_replaced_by_its_backup_and_a_dead_backup_dropped() {
    let mut c = registered();
    let Message::AllocatedReplicated { sets } = run(
        &mut c,
        0,
        Message::AllocateReplicated {
            bytes: 2 * VREGION_BYTES,
        },
    ) else {
        panic!()
    };
    // Least loaded, ties by id: region 0 on mn0 (backup mn1), region 1 on mn2
    // (backup mn0).
    let (a, b) = (sets[0], sets[1]);
    assert_eq!((a.primary, a.backup), (1, 2));
    assert_eq!((b.primary, b.backup), (3, 1));
    // mn0 goes silent: it is a's primary and b's backup.
    let e2 = c.node(2).unwrap().epoch;
    let e3 = c.node(3).unwrap().epoch;
    run(&mut c, 900, hb(2, e2));
    run(&mut c, 900, hb(3, e3));
    let events = c.expired(1500);
    assert_eq!(
        events[1..],
        [
            Event::Promoted { region: a.region },
            Event::Unreplicated { region: b.region },
        ]
    );
    for e in &events {
        c.apply(e).unwrap();
    }
    let ra = replicas(&mut c, a.region);
    assert_eq!((ra.primary, ra.backup), (2, 0));
    let rb = replicas(&mut c, b.region);
    assert_eq!((rb.primary, rb.backup), (3, 0));
    // The dead node holds nothing of them any more.
    assert_eq!(c.node(1).unwrap().regions, 0);
    // A single copy left: the next death of its node fails nothing over.
    run(&mut c, 2000, hb(3, e3));
    let events = c.expired(2600);
    assert_eq!(events.len(), 1, "{events:?}");
}

#[test]
fn a_rebooted_primary_fails_over_at_its_hello() {
    let mut c = registered();
    let Message::AllocatedReplicated { sets } =
        run(&mut c, 0, Message::AllocateReplicated { bytes: 1 })
    else {
        panic!()
    };
    let s = sets[0];
    // Same boot epoch: a repeated hello, nothing changes.
    let boot = 10 + u32::from(s.primary);
    run(&mut c, 10, hello(&rack(), s.primary, boot));
    assert_eq!(replicas(&mut c, s.region).backup, s.backup);
    // A new boot: its DRAM is gone.
    let d = c.handle(10, &hello(&rack(), s.primary, boot + 1));
    assert_eq!(d.events[1..], [Event::Promoted { region: s.region }]);
    for e in &d.events {
        c.apply(e).unwrap();
    }
    assert_eq!(replicas(&mut c, s.region).primary, s.backup);
}

#[test]
fn bad_backup_events_are_refused() {
    let mut c = registered();
    run(&mut c, 0, Message::Allocate { bytes: 1 });
    let owner = c.owner(0).unwrap();
    let cfg = rack();
    let name = |n: u16| cfg.node(n).unwrap().name.clone();
    let own = name(owner);
    assert!(c
        .apply(&Event::Replicated {
            region: 0,
            node: own
        })
        .is_err());
    assert!(c.apply(&Event::Promoted { region: 0 }).is_err());
    assert!(c.apply(&Event::Unreplicated { region: 0 }).is_err());
    let other = name(owner % 3 + 1);
    c.apply(&Event::Replicated {
        region: 0,
        node: other.clone(),
    })
    .unwrap();
    assert!(c
        .apply(&Event::Replicated {
            region: 0,
            node: other
        })
        .is_err());
}

/// A controller logging to `log` with the three nodes registered and one
/// replicated region allocated: the rack and the region's copies.
fn replicated_rack(cfg: &clio_rack::RackConfig, log: &std::path::Path) -> (Rack, Replicas) {
    let (mut r, _) = Rack::open(cfg.clone(), log, 0).unwrap();
    for n in 1..=3 {
        r.request(0, &hello(cfg, n, 1));
    }
    let Message::AllocatedReplicated { sets } =
        r.request(0, &Message::AllocateReplicated { bytes: 1 })
    else {
        panic!()
    };
    (r, sets[0])
}

#[test]
fn failover_survives_a_controller_restart() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("rack.log");
    let cfg = rack();
    let (mut r, s) = replicated_rack(&cfg, &log);
    for n in (1..=3).filter(|n| *n != s.primary) {
        let epoch = r.controller().node(n).unwrap().epoch;
        r.request(900, &hb(n, epoch));
    }
    let events = r.tick(1500).unwrap();
    assert!(events.contains(&Event::Promoted { region: s.region }));
    drop(r);
    let (r, _) = Rack::open(cfg, &log, 0).unwrap();
    assert_eq!(r.controller().owner(s.region), Some(s.backup));
    assert_eq!(r.controller().backup(s.region), None);
}

/// The controller's records of `region` (every page of `Migrations`).
fn records(r: &mut Rack, now: u64, region: u32) -> Vec<MigrationInfo> {
    let Message::MigrationList { entries, next } = r.request(now, &Message::Migrations { from: 0 })
    else {
        panic!("a migration list")
    };
    assert_eq!(next, None);
    entries.into_iter().filter(|m| m.region == region).collect()
}

#[test]
fn a_re_replication_is_recorded_as_a_copy_ended_by_its_commit_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("rack.log");
    let cfg = rack();
    let (mut r, s) = replicated_rack(&cfg, &log);
    let third = 6 - s.primary - s.backup;
    // The backup goes silent: the region is left with one copy.
    for n in [s.primary, third] {
        let epoch = r.controller().node(n).unwrap().epoch;
        r.request(900, &hb(n, epoch));
    }
    let events = r.tick(1500).unwrap();
    assert!(events.contains(&Event::Unreplicated { region: s.region }));
    let copy = Message::MigrationBegin {
        region: s.region,
        from: s.primary,
        to: third,
        total_bytes: 8 << 20,
        kind: MigrationKind::Copy,
    };
    let Message::MigrationId { id } = r.request(1500, &copy) else {
        panic!("an id")
    };
    // One open copy or move per region: a move of it now is refused.
    assert_eq!(
        r.request(
            1500,
            &Message::MigrationBegin {
                region: s.region,
                from: s.primary,
                to: third,
                total_bytes: 8 << 20,
                kind: MigrationKind::Move,
            }
        ),
        Message::Refused {
            code: ErrorCode::Busy,
            field: Field::MigrationRegion
        }
    );
    let open = records(&mut r, 1500, s.region);
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].id, open[0].kind, open[0].outcome, open[0].to),
        (id, MigrationKind::Copy, MigrationOutcome::InProgress, third)
    );
    // A controller restart brings the open copy back from the log, as a copy.
    drop(r);
    let (mut r, _) = Rack::open(cfg.clone(), &log, 1500).unwrap();
    let open = records(&mut r, 1500, s.region);
    assert_eq!(
        (
            open[0].id,
            open[0].kind,
            open[0].outcome,
            open[0].copied_bytes
        ),
        (id, MigrationKind::Copy, MigrationOutcome::InProgress, None)
    );
    // The commit ends it `Completed` in the same logged change.
    let primary_epoch = r.controller().node(s.primary).unwrap().epoch;
    assert!(matches!(
        r.request(
            1600,
            &Message::AddBackup {
                region: s.region,
                primary: s.primary,
                primary_epoch,
                backup: third,
            }
        ),
        Message::ReplicaState(rs) if rs.backup == third
    ));
    drop(r);
    let (mut r, _) = Rack::open(cfg, &log, 1600).unwrap();
    let done = records(&mut r, 1600, s.region);
    assert_eq!(done.len(), 1);
    assert_eq!(
        (done[0].id, done[0].kind, done[0].outcome, done[0].from),
        (
            id,
            MigrationKind::Copy,
            MigrationOutcome::Completed,
            s.primary
        )
    );
}
