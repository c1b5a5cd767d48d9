//! Loaded-latency experiment: unloaded anchors per setting, the stage breakdown adds up,
//! latency grows with load, and bad parameters are refused by name.

use edm::fabric::FabricConfig;
use edm::load::{self, LoadConfig, TABLE1_WIRE_CYCLES};
use edm::switch::Switch;

#[test]
fn unloaded_latency_per_setting() {
    // Stack only (Table 1 "network stack"): 42 / 41 cycles.
    assert_eq!(load::unloaded(&FabricConfig::new(2)).unwrap(), (42, 41));
    // With PMA/PMD and propagation: 4 hops of 19 cycles.
    let mut wire = FabricConfig::new(2);
    wire.wire_cycles = TABLE1_WIRE_CYCLES;
    assert_eq!(load::unloaded(&wire).unwrap(), (118, 117));
    // A scheduler clocked 8x the PHY: insert (2) and iteration (3) take 5/8 of a cycle, the
    // grant leaves on the next PHY cycle: 4 cycles fewer than on the PHY clock.
    let mut fast = FabricConfig::new(2);
    fast.switch.sched_clock = 8;
    assert_eq!(load::unloaded(&fast).unwrap(), (38, 37));
    // The paper's simulation setting counts 0.64 ns block times: with the prototype's
    // scheduler clock that is exactly Table 1 (299.52 / 296.96 ns) times 4.
    assert_eq!(
        load::unloaded(&load::paper_sim_fabric(2, false)).unwrap(),
        (468, 464)
    );
    assert_eq!(
        load::unloaded(&load::paper_sim_fabric(2, true)).unwrap(),
        (451, 447)
    );
}

fn point(load: f64) -> load::LoadResult {
    load::run(&LoadConfig {
        fabric: FabricConfig::new(6),
        load,
        cycles: 3000,
        seed: 11,
        write_share: 0.5,
    })
    .unwrap()
}

#[test]
fn stages_add_up_and_latency_grows_with_load() {
    let low = point(0.1);
    let high = point(0.7);
    for r in [&low, &high] {
        assert!(r.read.count > 50 && r.write.count > 50, "{r:?}");
        for op in [&r.read, &r.write] {
            let sum: f64 = op.stages.iter().sum();
            assert!(
                (sum - op.mean).abs() < 1e-6,
                "stages {sum} vs mean {}",
                op.mean
            );
            // Fixed pipeline stages: PCS 2 + 2 then classify 1 + insert 2; PCS 4 + RX 3.
            assert!((op.stages[2] - 7.0).abs() < 1e-9, "{:?}", op.stages);
            assert!((op.stages[7] - 7.0).abs() < 1e-9, "{:?}", op.stages);
            // Nothing is faster than unloaded.
            assert!(op.ratio >= 1.0, "{op:?}");
        }
    }
    assert!(low.read.ratio < 1.2 && low.write.ratio < 1.2, "{low:?}");
    assert!(high.read.mean > low.read.mean + 5.0, "{high:?} vs {low:?}");
    assert!(
        high.write.stages[3] > low.write.stages[3],
        "scheduler wait grows"
    );
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let mut cfg = FabricConfig::new(4);
    cfg.switch.sched_clock = 0;
    let e = Switch::new(cfg.switch).unwrap_err().to_string();
    assert!(e.contains("sched_clock"), "{e}");
    for bad in [0.0, 1.5, f64::NAN] {
        let e = load::run(&LoadConfig {
            fabric: FabricConfig::new(4),
            load: bad,
            cycles: 10,
            seed: 1,
            write_share: 0.5,
        })
        .unwrap_err();
        assert!(e.contains("`load`"), "{e}");
    }
    let e = load::run(&LoadConfig {
        fabric: FabricConfig::new(4),
        load: 0.5,
        cycles: 10,
        seed: 1,
        write_share: 1.5,
    })
    .unwrap_err();
    assert!(e.contains("`write_share`"), "{e}");
}

#[test]
fn paper_timing_keeps_unloaded_latency_and_cuts_loaded_latency() {
    let mut paper = FabricConfig::new(6);
    paper.switch = paper.switch.paper_timing();
    assert_eq!(load::unloaded(&paper).unwrap(), (42, 41));
    let run = |fabric| {
        load::run(&LoadConfig {
            fabric,
            load: 0.75,
            cycles: 4000,
            seed: 5,
            write_share: 0.5,
        })
        .unwrap()
    };
    let (old, new) = (run(FabricConfig::new(6)), run(paper));
    // Grants no longer wait behind forwarded chunks.
    assert!(
        new.read.stages[4] < old.read.stages[4],
        "{new:?} vs {old:?}"
    );
    assert!(
        new.write.stages[4] < old.write.stages[4],
        "{new:?} vs {old:?}"
    );
    assert!(new.read.mean < old.read.mean && new.write.mean < old.write.mean);
}
