//! The EL3 boot path of the image over recording fakes of the system
//! registers and the PS bus (issue #17, finding 2): QEMU does not model
//! `CPUECTLR_EL1` or the PMU, so these are the checks that see them.

use std::collections::HashMap;

use clio_slowpath::apu_boot::*;

#[derive(Default)]
struct FakeSysRegs {
    cpuectlr: u64,
    cntfrq: u64,
    log: Vec<String>,
}

impl El3SysRegs for FakeSysRegs {
    fn read_cpuectlr(&mut self) -> u64 {
        self.log.push("r cpuectlr".into());
        self.cpuectlr
    }
    fn write_cpuectlr(&mut self, value: u64) {
        self.log.push(format!("w cpuectlr {value:#x}"));
        self.cpuectlr = value;
    }
    fn read_cntfrq(&mut self) -> u64 {
        self.log.push("r cntfrq".into());
        self.cntfrq
    }
    fn write_cntfrq(&mut self, value: u64) {
        self.log.push(format!("w cntfrq {value}"));
        self.cntfrq = value;
    }
}

#[test]
fn el3_setup_sets_smpen_keeping_other_bits_and_programs_cntfrq() {
    // Reset values: CNTFRQ UNKNOWN (garbage here), CPUECTLR with unrelated bits set.
    let mut r = FakeSysRegs {
        cpuectlr: 0x0000_0000_0000_0023,
        cntfrq: 0xdead_beef,
        ..Default::default()
    };
    let s = el3_cpu_setup(&mut r, 99_999_001);
    assert_eq!(r.cpuectlr, 0x63, "SMPEN (bit 6) set, other bits kept");
    assert_eq!(
        r.cntfrq, 99_999_001,
        "CNTFRQ_EL0 written even when non-zero (UNKNOWN at reset)"
    );
    assert_eq!(
        s,
        El3Setup {
            cpuectlr_before: 0x23,
            cpuectlr_written: 0x63,
            cntfrq_before: 0xdead_beef,
            cntfrq_written: 99_999_001
        }
    );
    assert_eq!(
        r.log,
        [
            "r cntfrq",
            "w cntfrq 99999001",
            "r cpuectlr",
            "w cpuectlr 0x63"
        ],
        "each register read once and written once, CNTFRQ first as the BSP does"
    );
}

#[test]
fn el3_setup_is_idempotent() {
    let mut r = FakeSysRegs {
        cpuectlr: CPUECTLR_SMPEN,
        cntfrq: 100_000_000,
        ..Default::default()
    };
    let s = el3_cpu_setup(&mut r, 100_000_000);
    assert_eq!(s.cpuectlr_written, CPUECTLR_SMPEN);
    assert_eq!(r.cpuectlr, CPUECTLR_SMPEN);
}

/// PS registers as a map; `REQ_PWRUP_STATUS` clears a requested bit after
/// `pmu_delay` reads (a PMU that is answering), or never (`None`).
struct FakePs {
    regs: HashMap<u64, u32>,
    log: Vec<(char, u64, u32)>,
    pmu_delay: Option<u32>,
    pending: u32,
    reads_since_trig: u32,
}

impl FakePs {
    fn new(csu_version: u32, pmu_delay: Option<u32>) -> Self {
        let mut regs = HashMap::new();
        regs.insert(CSU_VERSION, csu_version);
        // Out of reset: every ACPU and PWRON reset bit set (+ L2, bit 8).
        regs.insert(RST_FPD_APU, 0x0000_3d0f | 1 << 8);
        FakePs {
            regs,
            log: Vec::new(),
            pmu_delay,
            pending: 0,
            reads_since_trig: 0,
        }
    }
    fn writes(&self) -> Vec<(u64, u32)> {
        self.log
            .iter()
            .filter(|e| e.0 == 'w')
            .map(|e| (e.1, e.2))
            .collect()
    }
}

impl PsBus for FakePs {
    fn read32(&mut self, addr: u64) -> u32 {
        let v = if addr == PMU_REQ_PWRUP_STATUS {
            self.reads_since_trig += 1;
            if let Some(d) = self.pmu_delay {
                if self.reads_since_trig > d {
                    self.pending = 0;
                }
            }
            self.pending
        } else {
            *self.regs.get(&addr).unwrap_or(&0)
        };
        self.log.push(('r', addr, v));
        v
    }
    fn write32(&mut self, addr: u64, value: u32) {
        self.log.push(('w', addr, value));
        if addr == PMU_REQ_PWRUP_TRIG {
            self.pending |= value;
            self.reads_since_trig = 0;
        }
        self.regs.insert(addr, value);
    }
}

#[test]
fn release_requests_pmu_power_up_before_taking_the_core_out_of_reset() {
    let mut ps = FakePs::new(0x0000_0000, Some(3)); // silicon
    let how = power_up_and_release(&mut ps, 2, 0x0810_0040, 1000).unwrap();
    assert_eq!(how, PowerUp::Requested { polls: 4 });
    let w = ps.writes();
    assert_eq!(
        w,
        [
            (PMU_REQ_PWRUP_INT_EN, 1 << 2),
            (PMU_REQ_PWRUP_TRIG, 1 << 2),
            (RVBARADDR0L + 16, 0x0810_0040),
            (RVBARADDR0L + 20, 0),
            // Only core 2's ACPU2_RESET (bit 2) and ACPU2_PWRON_RESET (bit 12) cleared.
            (RST_FPD_APU, (0x0000_3d0f | 1 << 8) & !(1 << 2 | 1 << 12)),
        ]
    );
    // The reset is released only after the PMU reported the island up.
    let last_status = ps
        .log
        .iter()
        .rposition(|e| e.0 == 'r' && e.1 == PMU_REQ_PWRUP_STATUS)
        .unwrap();
    let release = ps
        .log
        .iter()
        .position(|e| e.0 == 'w' && e.1 == RST_FPD_APU)
        .unwrap();
    assert!(last_status < release);
    assert_eq!(ps.log[last_status].2 & (1 << 2), 0);
}

#[test]
fn a_silent_pmu_is_an_error_naming_the_core_and_the_core_stays_in_reset() {
    let mut ps = FakePs::new(0, None);
    let e = power_up_and_release(&mut ps, 3, 0x1000, 50).unwrap_err();
    assert_eq!(
        e,
        ApuError::PowerUpTimeout {
            core: 3,
            status: 1 << 3
        }
    );
    assert!(ps
        .writes()
        .iter()
        .all(|w| w.0 != RST_FPD_APU && !(RVBARADDR0L..RVBARADDR0L + 32).contains(&w.0)));
}

#[test]
fn qemu_platform_skips_the_pmu_as_the_fsbl_does() {
    let mut ps = FakePs::new(PLATFORM_QEMU << 12, None);
    let how = power_up_and_release(&mut ps, 1, 0x1000, 50).unwrap();
    assert_eq!(how, PowerUp::SkippedQemu);
    assert!(ps.writes().iter().all(|w| w.0 != PMU_REQ_PWRUP_TRIG));
    assert_eq!(ps.regs[&RST_FPD_APU] & (1 << 1 | 1 << 11), 0);
}

#[test]
fn system_counter_started_only_when_stopped() {
    let mut ps = FakePs::new(0, Some(0));
    assert!(start_system_counter(&mut ps, 99_999_001));
    assert_eq!(ps.writes(), [(SCNTRS_FREQ, 99_999_001), (SCNTRS_CNTCR, 1)]);
    let mut running = FakePs::new(0, Some(0));
    running.regs.insert(SCNTRS_CNTCR, 1);
    assert!(!start_system_counter(&mut running, 99_999_001));
    assert!(running.writes().is_empty());
}
