//! Every message round-trips through its encoding, and arbitrary bytes through
//! the decoder never panic: they decode or fail naming a field.

use clio_control::{
    ChunkVa, Envelope, ErrorCode, Field, GateState, Message, MigrationInfo, MigrationKind,
    MigrationOutcome, MoveOrder, NodeAddr, Placement, Pressure, RegionUse, Replicas, Space,
    MAX_CHUNK_LIST, MAX_ENVELOPE_LEN, MAX_MIGRATION_LIST, MAX_PLACEMENTS, MAX_REPLICATED,
    MAX_USAGE, REGION_COUNT, VREGION_BYTES,
};
use proptest::prelude::*;

fn addr() -> impl Strategy<Value = NodeAddr> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| NodeAddr::V4 { ip, port }),
        (any::<[u8; 16]>(), any::<u16>()).prop_map(|(ip, port)| NodeAddr::V6 { ip, port }),
    ]
}

fn code() -> impl Strategy<Value = ErrorCode> {
    use ErrorCode::*;
    proptest::sample::select(vec![
        Malformed,
        UnknownNode,
        StaleEpoch,
        NodeDead,
        AddressMismatch,
        CapacityMismatch,
        AlreadyAssigned,
        NotAssigned,
        NotOwner,
        NoCapacity,
        Storage,
        NotARequest,
        Replicated,
        Busy,
        Unauthenticated,
        Replayed,
    ])
}

fn field() -> impl Strategy<Value = Field> {
    use Field::*;
    proptest::sample::select(vec![
        Envelope,
        Message,
        HelloNode,
        HelloAddr,
        HelloCapacity,
        HeartbeatNode,
        HeartbeatEpoch,
        HeartbeatPressure,
        AssignRegion,
        AssignOwner,
        AssignEpoch,
        ReleaseRegion,
        ReleaseOwner,
        ReleaseEpoch,
        LookupRegion,
        AllocateBytes,
        MoveRegion,
        MoveFrom,
        MoveFromEpoch,
        MoveTo,
        GateRegion,
        NodeStatusNode,
        AllocateReplicatedBytes,
        LookupReplicasRegion,
        BindRegion,
        UsageNode,
        UsageEpoch,
        ChunksRegion,
        PlanMoveMarks,
        AddBackupRegion,
        AddBackupBackup,
    ])
}

fn placement() -> impl Strategy<Value = Placement> {
    (0..REGION_COUNT, 1..=u16::MAX, any::<u32>()).prop_map(|(region, node, epoch)| Placement {
        region,
        node,
        epoch,
    })
}

fn replicas() -> impl Strategy<Value = Replicas> {
    (
        0..REGION_COUNT,
        1..=u16::MAX,
        any::<u32>(),
        any::<u16>(),
        any::<u32>(),
    )
        .prop_filter("backup differs from primary", |s| s.1 != s.3)
        .prop_map(
            |(region, primary, primary_epoch, backup, backup_epoch)| Replicas {
                region,
                primary,
                primary_epoch,
                backup,
                backup_epoch,
            },
        )
}

fn message() -> impl Strategy<Value = Message> {
    let node = 1..=u16::MAX;
    let region = 0..REGION_COUNT;
    prop_oneof![
        (node.clone(), addr(), VREGION_BYTES..=u64::MAX, any::<u32>()).prop_map(
            |(node, addr, capacity, boot_epoch)| Message::Hello {
                node,
                addr,
                capacity,
                boot_epoch
            }
        ),
        (node.clone(), any::<u32>()).prop_map(|(node, epoch)| Message::Welcome { node, epoch }),
        (node.clone(), any::<u32>(), 0..u64::MAX / 2, 0..u64::MAX / 2).prop_map(
            |(node, epoch, used_bytes, free_bytes)| {
                Message::Heartbeat {
                    node,
                    epoch,
                    pressure: Pressure {
                        used_bytes,
                        free_bytes,
                    },
                }
            }
        ),
        (region.clone(), node.clone(), any::<u32>()).prop_map(|(region, owner, epoch)| {
            Message::AssignRegion {
                region,
                owner,
                epoch,
            }
        }),
        (region.clone(), node, any::<u32>()).prop_map(|(region, owner, epoch)| {
            Message::ReleaseRegion {
                region,
                owner,
                epoch,
            }
        }),
        region.clone().prop_map(|region| Message::Lookup { region }),
        (1..=MAX_PLACEMENTS as u64 * VREGION_BYTES).prop_map(|bytes| Message::Allocate { bytes }),
        any::<u32>().prop_map(|epoch| Message::Ack { epoch }),
        placement().prop_map(Message::Owner),
        region.prop_map(|region| Message::NotAssigned { region }),
        proptest::collection::btree_map(0..REGION_COUNT, placement(), 0..=MAX_PLACEMENTS).prop_map(
            |m| {
                let placements = m
                    .into_iter()
                    .map(|(region, p)| Placement { region, ..p })
                    .collect();
                Message::Allocated { placements }
            }
        ),
        (code(), field()).prop_map(|(code, field)| Message::Refused { code, field }),
        (0..REGION_COUNT, 1..=u16::MAX / 2, any::<u32>()).prop_map(|(region, from, from_epoch)| {
            Message::MoveRegion {
                region,
                from,
                from_epoch,
                to: from + 1,
            }
        }),
        (
            0..REGION_COUNT,
            any::<u32>(),
            0..u64::MAX / 2,
            1..u64::MAX / 2,
            proptest::sample::select(vec![
                GateState::Open,
                GateState::Paused,
                GateState::Moved,
                GateState::Rejoin,
                GateState::Tracking
            ])
        )
            .prop_map(|(region, pid, va, len, state)| Message::Gate {
                region,
                pid,
                va,
                // A tracking gate's record is one mask.
                len: if state == GateState::Tracking {
                    1 + len % clio_control::MAX_TRACKED
                } else {
                    len
                },
                state
            }),
        (1..=u16::MAX).prop_map(|node| Message::NodeStatus { node }),
        (
            1..=u16::MAX,
            any::<u32>(),
            any::<bool>(),
            any::<u32>(),
            proptest::option::of((any::<u64>(), any::<u64>()))
        )
            .prop_map(|(node, epoch, live, regions, p)| Message::NodeReport {
                node,
                epoch,
                live,
                regions,
                pressure: p.map(|(used_bytes, free_bytes)| Pressure {
                    used_bytes,
                    free_bytes
                }),
            }),
        (1..=MAX_REPLICATED as u64 * VREGION_BYTES)
            .prop_map(|bytes| Message::AllocateReplicated { bytes }),
        proptest::collection::btree_map(0..REGION_COUNT, replicas(), 0..=MAX_REPLICATED).prop_map(
            |m| Message::AllocatedReplicated {
                sets: m
                    .into_iter()
                    .map(|(region, s)| Replicas { region, ..s })
                    .collect(),
            }
        ),
        (0..REGION_COUNT).prop_map(|region| Message::LookupReplicas { region }),
        replicas().prop_map(Message::ReplicaState),
        (
            0..REGION_COUNT,
            any::<u16>(),
            any::<u32>(),
            0..u64::MAX / 2,
            1..u64::MAX / 2,
            any::<bool>()
        )
            .prop_map(|(region, chunk, pid, va, len, import)| Message::Bind {
                region,
                chunk,
                pid,
                va,
                len,
                import
            }),
        (
            1..=u16::MAX,
            any::<u32>(),
            proptest::collection::btree_map(
                0..REGION_COUNT,
                (any::<u16>(), any::<u64>()),
                0..=MAX_USAGE
            )
        )
            .prop_map(|(node, epoch, m)| Message::Usage {
                node,
                epoch,
                regions: m
                    .into_iter()
                    .map(|(region, (chunks, hits))| RegionUse {
                        region,
                        chunks,
                        hits
                    })
                    .collect(),
            }),
        (any::<u64>(), space()).prop_map(|(client, space)| Message::Register { client, space }),
        any::<u64>().prop_map(|client| Message::FindSpace { client }),
        (any::<u64>(), proptest::option::of(space()))
            .prop_map(|(client, space)| Message::SpaceOf { client, space }),
        (0..REGION_COUNT, any::<u16>()).prop_map(|(region, from)| Message::Chunks { region, from }),
        (
            0..REGION_COUNT,
            any::<u64>(),
            any::<u32>(),
            proptest::collection::btree_map(0..u16::MAX - 1, any::<u64>(), 0..=MAX_CHUNK_LIST),
            any::<bool>()
        )
            .prop_map(|(region, client, pid, m, more)| {
                let next = m
                    .keys()
                    .last()
                    .map_or(Some(0), |&l| Some(l + 1))
                    .filter(|_| more);
                Message::ChunkList {
                    region,
                    client,
                    pid,
                    chunks: m
                        .into_iter()
                        .map(|(chunk, va)| ChunkVa { chunk, va })
                        .collect(),
                    next,
                }
            }),
        (0..=1_000_000u32, 0..=1_000_000u32).prop_map(|(a, b)| Message::PlanMove {
            high_ppm: a.max(b),
            low_ppm: a.min(b)
        }),
        proptest::option::of((0..REGION_COUNT, 1..=u16::MAX / 2, any::<u32>())).prop_map(|o| {
            Message::MovePlan(o.map(|(region, from, from_epoch)| MoveOrder {
                region,
                from,
                from_epoch,
                to: from + 1,
            }))
        }),
        Just(Message::PlanReplica),
        proptest::option::of(replicas().prop_filter("a backup", |s| s.backup != 0))
            .prop_map(Message::ReplicaPlan),
        (0..REGION_COUNT, 1..=u16::MAX / 2, any::<u32>()).prop_map(
            |(region, primary, primary_epoch)| Message::AddBackup {
                region,
                primary,
                primary_epoch,
                backup: primary + 1,
            }
        ),
        (0..REGION_COUNT, any::<u32>(), any::<u64>())
            .prop_map(|(region, pid, va)| Message::TakeDirty { region, pid, va }),
        any::<u64>().prop_map(|mask| Message::Dirty { mask }),
        (0..REGION_COUNT, 1..=u16::MAX / 2, any::<u64>(), kind()).prop_map(
            |(region, from, total_bytes, kind)| Message::MigrationBegin {
                region,
                from,
                to: from + 1,
                total_bytes,
                kind,
            }
        ),
        any::<u32>().prop_map(|id| Message::MigrationId { id }),
        (any::<u32>(), any::<u64>())
            .prop_map(|(id, copied_bytes)| Message::MigrationProgress { id, copied_bytes }),
        (
            any::<u32>(),
            proptest::sample::select(vec![
                MigrationOutcome::RolledBack,
                MigrationOutcome::TimedOut
            ])
        )
            .prop_map(|(id, outcome)| Message::MigrationEnd { id, outcome }),
        any::<u32>().prop_map(|from| Message::Migrations { from }),
        (
            proptest::collection::vec(migration(), 0..=MAX_MIGRATION_LIST),
            proptest::option::of(any::<u32>())
        )
            .prop_map(|(v, next)| Message::MigrationList {
                entries: v.into_iter().collect(),
                next,
            }),
        (1..=u16::MAX, any::<u32>()).prop_map(|(node, epoch)| Message::Probe { node, epoch }),
        (
            1..=u16::MAX,
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>()
        )
            .prop_map(|(node, boot_epoch, epoch, capacity, used, free)| {
                Message::NodeInfo {
                    node,
                    boot_epoch,
                    epoch,
                    capacity,
                    pressure: Pressure {
                        used_bytes: used / 2,
                        free_bytes: free / 2,
                    },
                }
            }),
    ]
}

fn migration() -> impl Strategy<Value = MigrationInfo> {
    (
        (
            any::<u32>(),
            0..REGION_COUNT,
            1..=u16::MAX / 2,
            any::<u64>(),
        ),
        (
            proptest::option::of(any::<u64>()),
            any::<u64>(),
            proptest::option::of(any::<u64>()),
            proptest::sample::select(vec![
                MigrationOutcome::InProgress,
                MigrationOutcome::Completed,
                MigrationOutcome::RolledBack,
                MigrationOutcome::TimedOut,
            ]),
            kind(),
        ),
    )
        .prop_map(
            |((id, region, from, total_bytes), (copied_bytes, started, ended, outcome, kind))| {
                MigrationInfo {
                    id,
                    region,
                    from,
                    to: from + 1,
                    total_bytes,
                    copied_bytes,
                    started_unix_ms: started,
                    ended_unix_ms: ended,
                    outcome,
                    kind,
                }
            },
        )
}

fn kind() -> impl Strategy<Value = MigrationKind> {
    proptest::sample::select(vec![MigrationKind::Move, MigrationKind::Copy])
}

fn space() -> impl Strategy<Value = Space> {
    (any::<u32>(), any::<u16>(), any::<u32>(), any::<u64>()).prop_map(
        |(pid, session, epoch, key)| Space {
            pid,
            session,
            epoch,
            key,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_message_round_trips(id in any::<u32>(), message in message()) {
        let e = Envelope::new(id, message);
        prop_assert!(e.message.validate().is_ok());
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let n = e.encode(&mut buf).unwrap().len();
        prop_assert_eq!(Envelope::decode(&buf[..n]).unwrap(), e.clone());
        // Sealed (v4 frame) under a key, it opens to the same envelope.
        let key = clio_control::auth::RackKey([9; 16]);
        let seal = clio_control::auth::Seal { sender: 3, counter: u64::from(id) };
        let mut fb = [0u8; MAX_ENVELOPE_LEN];
        let f = clio_control::auth::seal(&e, &key, seal, &mut fb).unwrap().to_vec();
        prop_assert_eq!(clio_control::auth::open(&f, &key).unwrap(), (e.clone(), seal));
        // Every strict prefix is refused, naming a field, without a panic.
        for cut in 0..n {
            let err = Envelope::decode(&buf[..cut]).unwrap_err();
            prop_assert!(!err.field.is_empty());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check_arbitrary(&bytes);
    }

    #[test]
    fn arbitrary_frames_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        // Random bytes do not authenticate.
        let key = clio_control::auth::RackKey([9; 16]);
        prop_assert_eq!(
            clio_control::auth::open(&bytes, &key),
            Err(clio_control::auth::FrameError::Unauthenticated)
        );
    }

    #[test]
    fn arbitrary_bodies_after_a_valid_header_never_panic(body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut bytes = b"CLRK\x04\x05".to_vec();
        bytes.extend_from_slice(&body);
        check_arbitrary(&bytes);
    }
}

fn check_arbitrary(bytes: &[u8]) {
    match Envelope::decode(bytes) {
        Ok(e) => {
            // Whatever decodes is valid and survives its own round trip.
            assert!(e.message.validate().is_ok());
            let mut buf = [0u8; MAX_ENVELOPE_LEN];
            let n = e.encode(&mut buf).unwrap().len();
            assert_eq!(Envelope::decode(&buf[..n]).unwrap(), e);
        }
        Err(err) => {
            assert!(!err.field.is_empty());
            assert!(err.to_string().starts_with(err.field));
        }
    }
}
