//! EDM numbers from cycle-accurate simulation of the model: Table 1 latency breakdown,
//! PIM iterations vs N, preemption waits, goodput. `--json` for machine-readable output;
//! `--write-pkg PATH` regenerates the SystemVerilog package from clio-wire.

use std::process::ExitCode;

use clio_wire::edm::{message_blocks, MsgHeader, MsgKind};
use edm::fabric::{Dir, Fabric, FabricConfig};
use edm::host::Request;
use edm::load::{self, LoadConfig, LoadResult, READ_STAGES, WRITE_STAGES};
use edm::phy::frame_blocks;
use edm::switch::SwitchConfig;
use edm::timing::{ns, LinkPhysical};
use edm::vectors::Rng;
use edm_pim::{Config, Notification, Scheduler};

/// Per-segment cycles of one unloaded operation, measured from the link taps.
struct Breakdown {
    compute: u64,
    switch: u64,
    memory: u64,
    pcs_traversals: u64,
    pcs_cycles: u64,
    total: u64,
}

fn breakdown(write: bool) -> Breakdown {
    let mut f = Fabric::new(FabricConfig::new(2)).expect("valid config");
    f.tap = true;
    f.hosts[0]
        .submit(0, edm::load::probe_request(write))
        .expect("valid request");
    assert!(
        f.run_until_quiet(10_000),
        "unloaded operation did not finish"
    );
    let dequeued = f.hosts[0].completions[0].dequeued;
    let end = if write {
        f.hosts[1].applied[0].first
    } else {
        f.hosts[0].completions[0].first_data
    };
    // Taps in time order: each hop's TX (leaving a shim) and RX (entering the next).
    let t: Vec<_> = f.taps.iter().collect();
    let find = |dir: Dir, rx: bool, k: usize| {
        t.iter()
            .filter(|x| x.dir == dir && x.rx == rx)
            .nth(k)
            .map(|x| x.cycle)
            .expect("tap")
    };
    let lat = f.hosts[0].config().lat;
    let pcs = lat.pcs_tx + lat.pcs_rx;
    // Read: RREQ up, RREQ down (to MN... here port 1), RRES up, RRES down.
    // Write: /N/ up, /G/ down, WREQ up, WREQ down.
    let (cn_tx0, sw_rx0) = (find(Dir::Up, false, 0), find(Dir::Up, true, 0));
    let (cn_tx1, sw_rx1) = (find(Dir::Up, false, 1), find(Dir::Up, true, 1));
    // Down taps: first is the switch's emission towards a host.
    let downs: Vec<_> = t.iter().filter(|x| x.dir == Dir::Down).collect();
    let sw_tx0 = downs[0].cycle;
    let host_rx0 = downs[1].cycle;
    let sw_tx1 = downs[2].cycle;
    let host_rx1 = downs[3].cycle;
    let switch = (sw_tx0 - sw_rx0) + (sw_tx1 - sw_rx1);
    let (compute, memory) = if write {
        // CN: /N/ generation, then /G/ in to WREQ out; MN: WREQ in to data written.
        ((cn_tx0 - dequeued) + (cn_tx1 - host_rx0), end - host_rx1)
    } else {
        // CN: RREQ generation, RRES in to data written; MN: RREQ in to RRES out.
        ((cn_tx0 - dequeued) + (end - host_rx1), cn_tx1 - host_rx0)
    };
    let total = end - dequeued;
    let pcs_cycles = total - compute - switch - memory;
    Breakdown {
        compute,
        switch,
        memory,
        pcs_traversals: 2 * pcs_cycles / pcs,
        pcs_cycles,
        total,
    }
}

fn pim_iterations(n: usize, trials: usize, seed: u64) -> f64 {
    let mut rng = Rng::new(seed);
    let mut total = 0u64;
    for _ in 0..trials {
        let mut s = Scheduler::new(Config::new(n)).expect("valid config");
        // Every pair has a message with probability 1/2, with random arrival times.
        for src in 0..n as u16 {
            for dst in 0..n as u16 {
                if src != dst && rng.below(2) == 0 {
                    let n = Notification {
                        src,
                        dst,
                        bytes: 64,
                        id: 0,
                    };
                    s.notify(rng.below(1 << 20), n).expect("within bounds");
                }
            }
        }
        total += s.schedule(0).iterations as u64;
    }
    total as f64 / trials as f64
}

/// Cycles a 64 B write's /N/ waits at the sender behind a frame of `frame_bytes`, with EDM's
/// preemption; the same frame's transmission time is the wait without it.
fn preemption(frame_bytes: usize, policy: edm::phy::TxPolicy) -> (u64, u64, bool) {
    let mut cfg = FabricConfig::new(2);
    cfg.host.policy = policy;
    let mut f = Fabric::new(cfg).expect("valid config");
    f.tap = true;
    let frame: Vec<u8> = (0..frame_bytes).map(|i| (i * 7) as u8).collect();
    let blocks = frame_blocks(&frame);
    f.hosts[0].send_frame(&blocks);
    for _ in 0..20 {
        f.tick();
    }
    let now = f.now();
    f.hosts[0]
        .submit(
            now,
            Request::Write {
                dst: 1,
                addr: 0,
                data: vec![1; 64],
            },
        )
        .expect("valid request");
    assert!(f.run_until_quiet(100_000));
    let lat = f.hosts[0].config().lat;
    let n_out = f
        .taps
        .iter()
        .find(|t| t.dir == Dir::Up && !t.rx)
        .expect("notify tap")
        .cycle;
    let wait = n_out - (now + lat.host_gen_request);
    let intact = edm::phy::frames_from_stream(f.switch.frames_received(0)) == vec![Ok(frame)];
    (wait, blocks.len() as u64, intact)
}

/// One fabric setting of the loaded-latency experiment.
struct Setting {
    key: &'static str,
    name: &'static str,
    fabric: FabricConfig,
    cycles: u64,
    unit_ns: f64,
}

fn settings() -> Vec<Setting> {
    let before = FabricConfig::new(16);
    let mut after = before;
    after.switch = after.switch.paper_timing();
    let mut wire = after;
    wire.wire_cycles = load::TABLE1_WIRE_CYCLES;
    let mut fast = wire;
    fast.switch.sched_clock = 8;
    let mut sim_old = load::paper_sim_fabric(144, true);
    sim_old.switch.release_slack = SwitchConfig::new(144).release_slack;
    sim_old.switch.grants_first = false;
    let s = |key, name, fabric, cycles, unit_ns| Setting {
        key,
        name,
        fabric,
        cycles,
        unit_ns,
    };
    vec![
        s(
            "before",
            "before: 25G prototype, 16 hosts, PHY-clock scheduler, no wire delay, default switch",
            before,
            20_000,
            2.56,
        ),
        s(
            "after_stack",
            "after: same setting, paper port timing (grants first, release at l/B)",
            after,
            20_000,
            2.56,
        ),
        s(
            "after_table1",
            "after + Table 1 PMA/PMD and propagation (19 cycles per hop)",
            wire,
            20_000,
            2.56,
        ),
        s(
            "after_table1_sched8",
            "after + Table 1 wire + scheduler clock 8x the PHY (3.1 GHz)",
            fast,
            20_000,
            2.56,
        ),
        s(
            "paper_sim_fpga_sched",
            "paper's simulation setting (144 hosts, 100G), 390.625 MHz scheduler",
            load::paper_sim_fabric(144, false),
            10_000,
            0.64,
        ),
        s(
            "paper_sim_asic_sched",
            "paper's simulation setting (144 hosts, 100G), 3 GHz scheduler",
            load::paper_sim_fabric(144, true),
            10_000,
            0.64,
        ),
        s(
            "paper_sim_asic_sched_default_switch",
            "paper's simulation setting, 3 GHz scheduler, default switch timing",
            sim_old,
            10_000,
            0.64,
        ),
    ]
}

const LOADS: [f64; 4] = [0.2, 0.4, 0.6, 0.8];

fn goodput() -> [(String, f64, f64); 2] {
    let rreq = MsgHeader::rreq(1, 0, 64);
    let rres = MsgHeader {
        kind: MsgKind::Rres,
        last: true,
        op: None,
        peer: 1,
        id: 0,
        len: 64,
    };
    // EDM: payload bytes per 8 bytes of block payload, measured on a saturated TX shim.
    let edm = |h: MsgHeader, payload: usize| {
        let mut tx = edm::phy::TxMux::new(edm::phy::TxPolicy::Fair);
        let blocks = edm::assemble::encode(&h, &vec![0; h.body_len()]).expect("valid");
        let cycles = 10_000u64;
        let mut done = 0u64;
        for _ in 0..cycles {
            if tx.memory_backlog() < 2 {
                tx.push_memory(edm::phy::MemUnit {
                    blocks: blocks.clone(),
                });
            }
            if let (_, edm::phy::TxSource::Memory(i)) = tx.tick() {
                if i + 1 == message_blocks(h.body_len()) {
                    done += 1;
                }
            }
        }
        (done * payload as u64) as f64 / (cycles * 8) as f64
    };
    // Ethernet: each message in a minimum frame (64 B incl. 14 B header, 4 B FCS; 46 B payload)
    // plus 8 B preamble and 12 B IFG.
    let eth = |payload: usize| {
        let frame = (14 + payload + 4).max(64);
        payload as f64 / (frame + 20) as f64
    };
    [
        ("RREQ 8 B".into(), edm(rreq, 8), eth(8)),
        ("RRES 64 B".into(), edm(rres, 64), eth(64)),
    ]
}

/// Mean of the per-operation ratios over reads and writes together.
fn mixed_ratio(r: &LoadResult) -> f64 {
    let (nr, nw) = (r.read.count as f64, r.write.count as f64);
    (r.read.ratio * nr + r.write.ratio * nw) / (nr + nw).max(1.0)
}

fn loaded_json(st: &Setting, row: &[LoadResult]) -> String {
    let stages = |names: &[&str; 8], v: &[f64; 8]| {
        names
            .iter()
            .zip(v)
            .map(|(n, x)| format!("\"{n}\": {x:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let points = LOADS
        .iter()
        .zip(row)
        .map(|(l, r)| {
            format!(
                "{{\"load\": {l}, \"read_vs_unloaded\": {:.3}, \"write_vs_unloaded\": {:.3}, \"reads\": {}, \"writes\": {}, \"read_mean\": {:.2}, \"write_mean\": {:.2}, \"read_stages\": {{{}}}, \"write_stages\": {{{}}}}}",
                r.read.ratio,
                r.write.ratio,
                r.read.count,
                r.write.count,
                r.read.mean,
                r.write.mean,
                stages(&READ_STAGES, &r.read.stages),
                stages(&WRITE_STAGES, &r.write.stages)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let (ur, uw) = row
        .first()
        .map_or((0, 0), |r| (r.unloaded_read, r.unloaded_write));
    format!(
        "{{\"setting\": \"{}\", \"description\": \"{}\", \"time_unit_ns\": {}, \"ports\": {}, \"sched_clock\": {}, \"wire_cycles\": {}, \"unloaded_read\": {ur}, \"unloaded_write\": {uw}, \"points\": [{points}]}}",
        st.key, st.name, st.unit_ns, st.fabric.switch.ports, st.fabric.switch.sched_clock, st.fabric.wire_cycles
    )
}

fn print_loaded(sets: &[Setting], loaded: &[Vec<LoadResult>]) {
    println!("Mean latency under load / unloaded latency of the same fabric (64 B reads and writes, half each, uniform random destinations; paper at 0.8: read 1.20, write 1.35, mixed 1.24)");
    println!(
        "  {:<84} {:>11} {:>11} {:>11} {:>11}",
        "setting (unloaded read / write)", "0.2", "0.4", "0.6", "0.8"
    );
    for (st, row) in sets.iter().zip(loaded) {
        let u = &row[0];
        println!(
            "  {:<84} {}",
            format!(
                "{} ({} / {} units of {} ns)",
                st.name, u.unloaded_read, u.unloaded_write, st.unit_ns
            ),
            row.iter()
                .map(|r| format!("{:>5.2}/{:<5.2}", r.read.ratio, r.write.ratio))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    println!("  (each cell: read/write)");
    for (st, row) in sets.iter().zip(loaded) {
        println!("Where the latency goes: {} (mean time units of {} ns per stage; loads 0.2 0.4 0.6 0.8)", st.name, st.unit_ns);
        for (op, names, pick) in [
            (
                "read ",
                &READ_STAGES,
                (|r: &LoadResult| r.read.clone()) as fn(&LoadResult) -> load::OpStats,
            ),
            ("write", &WRITE_STAGES, |r: &LoadResult| r.write.clone()),
        ] {
            for (i, n) in names.iter().enumerate() {
                println!(
                    "  {op} {:<15} {}",
                    n,
                    row.iter()
                        .map(|r| format!("{:>8.1}", pick(r).stages[i]))
                        .collect::<Vec<_>>()
                        .join("")
                );
            }
            println!(
                "  {op} {:<15} {}",
                "total",
                row.iter()
                    .map(|r| format!("{:>8.1}", pick(r).mean))
                    .collect::<Vec<_>>()
                    .join("")
            );
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--write-pkg") {
        let Some(path) = args.get(i + 1) else {
            eprintln!("edm-report: `--write-pkg` needs a path");
            return ExitCode::FAILURE;
        };
        if let Err(e) = std::fs::write(path, clio_wire::edm::sv_package()) {
            eprintln!("edm-report: writing `{path}`: {e}");
            return ExitCode::FAILURE;
        }
        return ExitCode::SUCCESS;
    }
    let json = args.iter().any(|a| a == "--json");
    let rd = breakdown(false);
    let wr = breakdown(true);
    // Both a 64 B read and a write cross four links (see LinkPhysical::added_ns).
    let phys = LinkPhysical::TABLE1.added_ns(4);
    let ns_fixed = |b: &Breakdown| ns(b.total) + phys.total_ns();
    let ns_list = [4usize, 8, 16, 32, 64, 128, 256, 512];
    let iters: Vec<(usize, f64)> = ns_list
        .iter()
        .map(|&n| {
            (
                n,
                pim_iterations(n, if n > 128 { 3 } else { 20 }, 7 + n as u64),
            )
        })
        .collect();
    let pre: Vec<(usize, (u64, u64, bool), u64)> = [1500usize, 9000]
        .iter()
        .map(|&b| {
            let with = preemption(b, edm::phy::TxPolicy::Fair);
            let without = preemption(b, edm::phy::TxPolicy::IfgOnly).0;
            (b, with, without)
        })
        .collect();
    let gp = goodput();
    let sets = settings();
    let mut loaded: Vec<Vec<LoadResult>> = Vec::new();
    for st in &sets {
        let mut row = Vec::new();
        for &l in &LOADS {
            let cfg = LoadConfig {
                fabric: st.fabric,
                load: l,
                cycles: st.cycles,
                seed: 3,
                write_share: 0.5,
            };
            match load::run(&cfg) {
                Ok(r) => row.push(r),
                Err(e) => {
                    eprintln!("edm-report: loaded latency, setting `{}`: {e}", st.key);
                    return ExitCode::FAILURE;
                }
            }
        }
        loaded.push(row);
    }
    // Read/write mix at load 0.8 in the paper's setting with the 3 GHz scheduler.
    let mut mixes: Vec<(f64, LoadResult, f64)> = Vec::new();
    for (share, paper) in [(0.0, 1.20), (0.2, 1.23), (0.8, 1.30), (1.0, 1.35)] {
        let cfg = LoadConfig {
            fabric: load::paper_sim_fabric(144, true),
            load: 0.8,
            cycles: 10_000,
            seed: 3,
            write_share: share,
        };
        match load::run(&cfg) {
            Ok(r) => mixes.push((share, r, paper)),
            Err(e) => {
                eprintln!("edm-report: loaded latency, write share {share}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if json {
        let mut s = String::from("{\n");
        for (name, b) in [("read", &rd), ("write", &wr)] {
            s += &format!(
                "  \"{name}\": {{\"compute_cycles\": {}, \"switch_cycles\": {}, \"memory_cycles\": {}, \"pcs_cycles\": {}, \"stack_cycles\": {}, \"stack_ns\": {:.2}, \"pma_pmd_traversals\": {}, \"pma_pmd_ns\": {:.2}, \"propagations\": {}, \"propagation_ns\": {:.2}, \"fabric_ns\": {:.2}}},\n",
                b.compute, b.switch, b.memory, b.pcs_cycles, b.total, ns(b.total), phys.pma_pmd_traversals, phys.pma_pmd_ns, phys.propagations, phys.propagation_ns, ns_fixed(b)
            );
        }
        s += "  \"pim_iterations\": [";
        s += &iters
            .iter()
            .map(|(n, i)| {
                format!(
                    "{{\"ports\": {n}, \"avg_iterations\": {i:.2}, \"log2_n\": {:.2}}}",
                    (*n as f64).log2()
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        s += "],\n  \"preemption\": [";
        s += &pre.iter().map(|(b, (w, fb, ok), base)| format!("{{\"frame_bytes\": {b}, \"wait_blocks\": {w}, \"wait_blocks_without_preemption\": {base}, \"frame_blocks\": {fb}, \"frame_intact\": {ok}}}")).collect::<Vec<_>>().join(", ");
        s += "],\n  \"loaded_latency\": [";
        s += &sets
            .iter()
            .zip(&loaded)
            .map(|(st, row)| loaded_json(st, row))
            .collect::<Vec<_>>()
            .join(", ");
        s += "],\n  \"mix_at_0_8_paper_setting\": [";
        s += &mixes
            .iter()
            .map(|(w, r, p)| {
                format!(
                    "{{\"write_share\": {w}, \"vs_unloaded\": {:.3}, \"paper\": {p}}}",
                    mixed_ratio(r)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        s += "],\n  \"goodput\": [";
        s += &gp
            .iter()
            .map(|(n, e, x)| {
                format!("{{\"stream\": \"{n}\", \"edm\": {e:.4}, \"ethernet_min_frames\": {x:.4}}}")
            })
            .collect::<Vec<_>>()
            .join(", ");
        s += "]\n}";
        println!("{s}");
    } else {
        println!("Unloaded latency, 64 B (cycles of 2.56 ns; paper Table 1 in brackets)");
        println!(
            "  fabric = stack + PMA/PMD {} x {} ns + propagation {} x {} ns (Table 1's physical rows) = stack + {:.0} ns",
            phys.pma_pmd_traversals,
            LinkPhysical::TABLE1.pma_pmd_ns,
            phys.propagations,
            LinkPhysical::TABLE1.propagation_ns,
            phys.total_ns()
        );
        for (name, b, paper) in [
            ("read ", &rd, (5, 11, 10, 107.52, 299.52)),
            ("write", &wr, (11, 11, 3, 104.96, 296.96)),
        ] {
            println!(
                "  {name}: compute {} [{}]  switch {} [{}]  memory {} [{}]  PCS {} ({} traversals)  stack {} cycles = {:.2} ns [{}]  fabric {:.2} ns [{}]",
                b.compute, paper.0, b.switch, paper.1, b.memory, paper.2, b.pcs_cycles, b.pcs_traversals, b.total, ns(b.total), paper.3, ns_fixed(b), paper.4
            );
        }
        println!("PIM iterations to a maximal matching (half-full random demand, random arrivals)");
        for (n, i) in &iters {
            println!(
                "  N = {n:>3}: {i:.2} iterations (log2 N = {:.1}), {:.0} cycles at 3 per iteration",
                (*n as f64).log2(),
                i * 3.0
            );
        }
        println!("Preemption: /N/ of a 64 B write queued behind a frame");
        for (b, (w, fb, ok), base) in &pre {
            println!(
                "  {b} B frame ({fb} blocks): waited {w} blocks ({base} without preemption); frame intact at the switch: {ok}"
            );
        }
        print_loaded(&sets, &loaded);
        println!("Read/write mix at load 0.8, paper's setting with the 3 GHz scheduler (mean over all operations / unloaded; paper in brackets)");
        for (w, r, p) in &mixes {
            println!(
                "  write share {w:.1}: {:.2}x [{p:.2}]  (reads {}, writes {})",
                mixed_ratio(r),
                r.read.count,
                r.write.count
            );
        }
        println!("Goodput (payload / line data rate)");
        for (n, e, x) in &gp {
            println!(
                "  {n}: EDM {:.1} %  vs minimum Ethernet frames {:.1} %",
                e * 100.0,
                x * 100.0
            );
        }
    }
    ExitCode::SUCCESS
}
