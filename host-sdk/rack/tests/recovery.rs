//! The owner map survives controller restarts: replay, torn tails, corrupt records.

mod common;

use clio_control::{ErrorCode, Field, Message, Placement, Pressure, VREGION_BYTES};
use clio_rack::log::{scan, StopReason, HEADER_LEN};
use clio_rack::{Rack, RackError};
use common::{hello, rack};

/// A rack with all three nodes registered (3 records) and 4 regions allocated
/// (1 record), then region 9 placed on mn1 (1 record): 5 records.
fn populated(path: &std::path::Path) -> Vec<(u32, u16)> {
    let cfg = rack();
    let (mut r, rec) = Rack::open(cfg.clone(), path, 0).unwrap();
    assert!(rec.created);
    for n in 1..=3 {
        assert_eq!(
            r.request(0, &hello(&cfg, n, 40 + u32::from(n))),
            Message::Welcome { node: n, epoch: 1 }
        );
    }
    assert!(matches!(
        r.request(
            0,
            &Message::Allocate {
                bytes: 4 * VREGION_BYTES
            }
        ),
        Message::Allocated { .. }
    ));
    assert_eq!(
        r.request(
            0,
            &Message::AssignRegion {
                region: 9,
                owner: 2,
                epoch: 1
            }
        ),
        Message::Owner(Placement {
            region: 9,
            node: 2,
            epoch: 1
        })
    );
    r.controller().assignments().collect()
}

fn records(path: &std::path::Path) -> Vec<u64> {
    scan(&std::fs::read(path).unwrap())
        .records
        .iter()
        .map(|(o, _)| *o)
        .collect()
}

#[test]
fn a_restart_replays_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rack.log");
    let before = populated(&path);
    assert_eq!(before.len(), 5);
    let (mut r, rec) = Rack::open(rack(), &path, 0).unwrap();
    assert_eq!(
        (rec.records, rec.truncated.clone(), rec.created),
        (5, None, false)
    );
    assert_eq!(r.controller().assignments().collect::<Vec<_>>(), before);
    assert_eq!(r.controller().node(2).unwrap().epoch, 1);
    assert_eq!(
        r.request(0, &Message::Lookup { region: 9 }),
        Message::Owner(Placement {
            region: 9,
            node: 2,
            epoch: 1
        })
    );
    // Registrations survive too: the same node's old epoch is still accepted...
    let hb = |epoch| Message::Heartbeat {
        node: 1,
        epoch,
        pressure: Pressure {
            used_bytes: 0,
            free_bytes: 0,
        },
    };
    assert_eq!(r.request(10, &hb(1)), Message::Ack { epoch: 1 });
    // ... and never-issued epochs are not.
    assert_eq!(
        r.request(10, &hb(2)),
        Message::Refused {
            code: ErrorCode::StaleEpoch,
            field: Field::HeartbeatEpoch
        }
    );
    // A fresh allocation does not reuse a replayed region.
    let Message::Allocated { placements } = r.request(10, &Message::Allocate { bytes: 1 }) else {
        panic!()
    };
    assert_eq!(placements[0].region, 4);
}

#[test]
fn a_torn_last_record_is_cut_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rack.log");
    let before = populated(&path);
    let offsets = records(&path);
    let last = *offsets.last().unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    // The crash hit while the last record (the placement of region 9) was being written.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - 3).unwrap();
    drop(f);
    let (mut r, rec) = Rack::open(rack(), &path, 0).unwrap();
    assert_eq!(rec.records, 4);
    assert_eq!(
        rec.truncated,
        Some((last, StopReason::Torn, len - 3 - last))
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), last);
    let kept: Vec<_> = before
        .iter()
        .copied()
        .filter(|(region, _)| *region != 9)
        .collect();
    assert_eq!(r.controller().assignments().collect::<Vec<_>>(), kept);
    assert_eq!(
        r.request(0, &Message::Lookup { region: 9 }),
        Message::NotAssigned { region: 9 }
    );
    // New changes append after the cut and survive the next restart.
    assert_eq!(
        r.request(
            0,
            &Message::AssignRegion {
                region: 9,
                owner: 3,
                epoch: 1
            }
        ),
        Message::Owner(Placement {
            region: 9,
            node: 3,
            epoch: 1
        })
    );
    drop(r);
    let (r, rec) = Rack::open(rack(), &path, 0).unwrap();
    assert_eq!((rec.records, rec.truncated), (5, None));
    assert_eq!(r.controller().owner(9), Some(3));
    // Even a record cut inside its 8-byte length/checksum prefix is torn.
    let len = std::fs::metadata(&path).unwrap().len();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[7, 0, 0]);
    std::fs::write(&path, &bytes).unwrap();
    let (_, rec) = Rack::open(rack(), &path, 0).unwrap();
    assert_eq!(rec.truncated, Some((len, StopReason::Torn, 3)));
}

#[test]
fn a_corrupt_middle_record_stops_replay_there() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rack.log");
    populated(&path);
    let offsets = records(&path);
    // Flip a payload bit of record 2 (mn2's registration): records 0 and 1 survive,
    // 2..5 go (a later record may depend on an earlier one, so nothing after a bad
    // record is trusted).
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len() as u64;
    bytes[offsets[2] as usize + 9] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let (mut r, rec) = Rack::open(rack(), &path, 0).unwrap();
    assert_eq!(rec.records, 2);
    let (at, reason, dropped) = rec.truncated.unwrap();
    assert_eq!((at, dropped), (offsets[2], len - offsets[2]));
    assert!(matches!(reason, StopReason::Checksum { .. }), "{reason:?}");
    assert_eq!(r.controller().assignments().count(), 0);
    assert_eq!(r.controller().node(1).unwrap().epoch, 1);
    assert_eq!(r.controller().node(3).unwrap().epoch, 0);
    // mn2 must register again; mn0 still holds its epoch.
    assert_eq!(
        r.request(0, &hello(&rack(), 3, 43)),
        Message::Welcome { node: 3, epoch: 1 }
    );
    // A corrupt length field is caught as well.
    drop(r);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = records(&path)[1] as usize;
    bytes[at + 3] = 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let (_, rec) = Rack::open(rack(), &path, 0).unwrap();
    assert_eq!(rec.records, 1);
    assert!(
        matches!(rec.truncated, Some((_, StopReason::BadLength(_), _))),
        "{:?}",
        rec.truncated
    );
}

#[test]
fn fencing_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rack.log");
    populated(&path);
    let (mut r, _) = Rack::open(rack(), &path, 0).unwrap();
    let hb = |node, epoch| Message::Heartbeat {
        node,
        epoch,
        pressure: Pressure {
            used_bytes: 0,
            free_bytes: 0,
        },
    };
    assert_eq!(r.request(900, &hb(2, 1)), Message::Ack { epoch: 1 });
    assert_eq!(r.request(900, &hb(3, 1)), Message::Ack { epoch: 1 });
    // mn0 silent since the open at 0; dead_after_ms = 1000.
    let dead = r.tick(1001).unwrap();
    assert_eq!(dead.len(), 1);
    drop(r);
    let (mut r, _) = Rack::open(rack(), &path, 5000).unwrap();
    assert_eq!(r.controller().node(1).unwrap().epoch, 2);
    assert!(r.controller().node(1).unwrap().dead);
    assert_eq!(
        r.request(5000, &hb(1, 1)),
        Message::Refused {
            code: ErrorCode::StaleEpoch,
            field: Field::HeartbeatEpoch
        }
    );
    // Its regions still name it, with the fence epoch, so a cached placement is seen stale.
    assert_eq!(
        r.request(5000, &Message::Lookup { region: 0 }),
        Message::Owner(Placement {
            region: 0,
            node: 1,
            epoch: 2
        })
    );
    assert_eq!(
        r.request(5000, &hello(&rack(), 1, 41)),
        Message::Welcome { node: 1, epoch: 3 }
    );
}

#[test]
fn foreign_files_and_foreign_racks_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, b"hello, this is not a log at all").unwrap();
    let err = Rack::open(rack(), &path, 0).unwrap_err();
    assert!(err.to_string().contains("not a clio rack log"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"hello, this is not a log at all"
    );

    // A log written for a rack with mn2, opened with a rack file without it.
    let path = dir.path().join("rack.log");
    populated(&path);
    let len = std::fs::metadata(&path).unwrap().len();
    let smaller = clio_rack::config::load_str("small.toml", "[[node]]\nname = \"mn0\"\naddress = \"10.0.0.2:7700\"\ncapacity = \"4 GiB\"\n[[node]]\nname = \"mn1\"\naddress = \"10.0.0.3:7700\"\ncapacity = \"2 GiB\"\n").unwrap();
    let err = Rack::open(smaller, &path, 0).unwrap_err();
    assert!(matches!(err, RackError::Replay { index: 2, .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("node 'mn2' is not in the rack file"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains(&format!("offset {}", records(&path)[2])),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert!(records(&path)[0] == HEADER_LEN as u64);
}
