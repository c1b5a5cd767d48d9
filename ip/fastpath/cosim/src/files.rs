//! The files the RTL harness reads.
//!
//! - `cfg.txt`: `name hex` lines, the configuration inputs of the RTL top;
//! - `stim.txt`: `P <hex>` (packet), `R` (poll the TX ring), `M <pa hex> <hex>` (ARM memory write),
//!   `G <cycles>` (nothing arrives for that long), `X <pa hex> <hex>` (the slow path reads an RX
//!   slot: memory there must hold these bytes),
//!   `S` (the packets after it are sent back to back: throughput run);
//! - `expect.txt`: `O <event> <hex>` responses in order, `L <event> hit|miss|fault|bound|2big|probe` path classes;
//! - `init.bin`, `final.bin`: board memory before and after.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use clio_fastpath::Layout;
use clio_wire::payload::InfoResp;

use crate::trace::{Case, Event, PathClass};

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// The configuration inputs of the RTL top level for `lay` (with the INFO payload of the board).
pub fn config_lines(lay: &Layout, info: &[u8; InfoResp::LEN], seed: u64) -> String {
    let mut s = String::new();
    let class = lay
        .class_shift
        .iter()
        .enumerate()
        .fold(0u64, |a, (i, &v)| a | u64::from(v) << (8 * i));
    let rows: [(&str, u64); 11] = [
        ("seed", seed),
        ("table_base", lay.table.base),
        ("rx_base", lay.dram_base + lay.rx_ring.start as u64),
        (
            "rx_slots",
            ((lay.rx_ring.len() - clio_wire::ring::HEADER_LEN) / clio_wire::ring::SLOT_LEN) as u64,
        ),
        ("tx_base", lay.dram_base + lay.tx_ring.start as u64),
        (
            "tx_slots",
            ((lay.tx_ring.len() - clio_wire::ring::HEADER_LEN) / clio_wire::ring::SLOT_LEN) as u64,
        ),
        ("data_start", lay.data_start),
        ("data_end", lay.data_end),
        ("va_bits", u64::from(lay.va_bits)),
        ("class_shift", class),
        ("max_pid", u64::from(lay.max_pid)),
    ];
    for (k, v) in rows {
        let _ = writeln!(s, "{k} {v:x}");
    }
    let _ = writeln!(s, "mtu {:x}", lay.mtu);
    let _ = writeln!(s, "dram_base {:x}", lay.dram_base);
    // `cfg_info` (register map FPREG_INFO): the whole InfoResp; the RTL
    // fills in its own epoch.
    let _ = writeln!(s, "info {}", hex(info));
    s
}

/// The text of `stim.txt` for `case`.
pub fn stim_text(case: &Case) -> String {
    let mut stim = String::new();
    for (i, e) in case.events.iter().enumerate() {
        if case.stream_from == Some(i) {
            stim.push_str("S\n");
        }
        match e {
            Event::Packet(p) => {
                let _ = writeln!(stim, "P {}", hex(p));
            }
            Event::Poll => stim.push_str("R\n"),
            Event::Gap(n) => {
                let _ = writeln!(stim, "G {n}");
            }
            Event::Mem(pa, b) => {
                let _ = writeln!(stim, "M {pa:x} {}", hex(b));
            }
            Event::Expect(pa, b) => {
                let _ = writeln!(stim, "X {pa:x} {}", hex(b));
            }
        }
    }
    stim
}

/// Write `case` into `dir` (created if missing).
pub fn write_case(
    case: &Case,
    lay: &Layout,
    info: &[u8; InfoResp::LEN],
    dir: &Path,
) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("cfg.txt"), config_lines(lay, info, case.seed))?;
    std::fs::write(dir.join("stim.txt"), stim_text(case))?;
    let mut exp = String::new();
    for (i, o) in &case.outputs {
        let _ = writeln!(exp, "O {i} {}", hex(o));
    }
    for (i, c) in &case.paths {
        let name = match c {
            PathClass::Hit => "hit",
            PathClass::Miss => "miss",
            PathClass::Fault => "fault",
            PathClass::Bound => "bound",
            PathClass::TooLarge => "2big",
            PathClass::Probe => "probe",
        };
        let _ = writeln!(exp, "L {i} {name}");
    }
    std::fs::write(dir.join("expect.txt"), exp)?;
    std::fs::write(dir.join("init.bin"), &case.initial)?;
    std::fs::write(dir.join("final.bin"), &case.last)?;
    Ok(())
}
