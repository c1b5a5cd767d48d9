//! Flashing against fake vendor tools on a temporary PATH: the fakes record
//! their argv and scripts (and run the scripts under tclsh with the vendor
//! commands stubbed), so the tests check exact invocations, script
//! contents, command order, progress events, and every failure path.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clio_flash::manifest::sha256_file;
use clio_flash::{Board, FlashError, FlashEvent, FlashPlan, FlashRequest, Route, Toolchain};
use object::write::Object;
use object::{Architecture, BinaryFormat, Endianness, SectionKind};

const FAKES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake");

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let f = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(f.bin()).unwrap();
        f
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn bin(&self) -> PathBuf {
        self.path("bin")
    }

    /// Put fake `tool` (and its Tcl stub) on the fixture's PATH.
    fn install(&self, tool: &str) {
        for name in [tool.to_string(), format!("{tool}_stub.tcl")] {
            let src = Path::new(FAKES).join(&name);
            if src.exists() {
                copy_executable(&src, &self.bin().join(&name));
            }
        }
    }

    fn tools(&self) -> Toolchain {
        Toolchain::with_path(vec![self.bin()])
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// A bitstream and the manifest `bitstream/build.tcl` writes for it.
    fn bitstream(&self, board: Board) -> PathBuf {
        let out = self.path(&format!("build-{}", board.name()));
        fs::create_dir_all(&out).unwrap();
        let bit = out.join(format!("clio_{}.bit", board.name().replace('-', "_")));
        fs::write(&bit, b"\x00\x09\x0f\xf0\x0f\xf0 fake bitstream body").unwrap();
        let manifest = serde_json::json!({
            "format": "clio-bitstream-manifest",
            "format_version": 1,
            "board": board.name(),
            "part": board.part(),
            "top": "clio_top",
            "bitstream": bit.file_name().unwrap().to_str().unwrap(),
            "sha256": sha256_file(&bit).unwrap(),
            "source_hash": "ab".repeat(32),
            "tool_version": "Vivado v2023.2 (64-bit)",
        });
        let m = out.join("manifest.json");
        fs::write(&m, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
        m
    }

    /// A firmware ELF with a build-id note and `.clio_manifest` section, and
    /// its manifest as `fwlog manifest` (package.sh) writes it.
    fn firmware(&self) -> PathBuf {
        let out = self.path("fw");
        fs::create_dir_all(&out).unwrap();
        let elf = out.join("clio-firmware.elf");
        fs::write(&elf, elf_bytes(&[0xc1, 0x10, 0xfe, 0xed], "zcu106", "5eed")).unwrap();
        let image =
            clio_fwlog::ImageManifest::from_elf("clio-firmware.elf", &fs::read(&elf).unwrap())
                .unwrap();
        let m = out.join("manifest.json");
        fs::write(&m, serde_json::to_string_pretty(&image).unwrap()).unwrap();
        m
    }

    /// A hardware platform (`.xsa`) as `build.tcl` writes beside the bitstream.
    fn xsa(&self) -> PathBuf {
        let p = self.path("build-zcu106/clio_zcu106.xsa");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, b"PK\x03\x04 fake xsa").unwrap();
        p
    }

    /// ATF BL31.
    fn atf(&self) -> PathBuf {
        let p = self.path("bl31.elf");
        fs::write(&p, b"\x7fELF fake bl31").unwrap();
        p
    }

    fn psu_init(&self) -> PathBuf {
        let p = self.path("psu_init.tcl");
        let procs = [
            "psu_init",
            "psu_ps_pl_isolation_removal",
            "psu_ps_pl_reset_config",
            "psu_protection",
        ];
        let text: String = procs
            .iter()
            .map(|p| format!("proc {p} {{}} {{ rec {p} }}\n"))
            .collect();
        fs::write(&p, text).unwrap();
        p
    }

    fn edit_manifest(
        &self,
        m: &Path,
        f: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
    ) {
        let mut v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(m).unwrap()).unwrap();
        f(v.as_object_mut().unwrap());
        fs::write(m, v.to_string()).unwrap();
    }
}

fn copy_executable(src: &Path, dst: &Path) {
    fs::copy(src, dst).unwrap();
    fs::set_permissions(dst, fs::Permissions::from_mode(0o755)).unwrap();
}

fn elf_bytes(build_id: &[u8], board: &str, config_hash: &str) -> Vec<u8> {
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::Aarch64, Endianness::Little);
    let mut note = Vec::new();
    note.extend_from_slice(&4u32.to_le_bytes());
    note.extend_from_slice(&(build_id.len() as u32).to_le_bytes());
    note.extend_from_slice(&3u32.to_le_bytes());
    note.extend_from_slice(b"GNU\0");
    note.extend_from_slice(build_id);
    let n = obj.add_section(vec![], b".note.gnu.build-id".to_vec(), SectionKind::Note);
    obj.set_section_data(n, note, 4);
    let m = obj.add_section(
        vec![],
        b".clio_manifest".to_vec(),
        SectionKind::ReadOnlyData,
    );
    let text = format!("board={board}\nconfig_hash={config_hash}\nversion=0.1.0\n");
    obj.set_section_data(m, text.into_bytes(), 1);
    obj.write().unwrap()
}

fn run(plan: &FlashPlan) -> (Result<clio_flash::FlashReport, FlashError>, Vec<FlashEvent>) {
    let mut events = Vec::new();
    let r = plan.run(&mut |e| events.push(e.clone()));
    (r, events)
}

fn percents(events: &[FlashEvent]) -> Vec<u8> {
    events
        .iter()
        .filter_map(|e| match e {
            FlashEvent::Percent(p) => Some(*p),
            _ => None,
        })
        .collect()
}

fn steps(events: &[FlashEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            FlashEvent::Step {
                index,
                total,
                label,
            } => Some(match (index, total) {
                (Some(i), Some(t)) => format!("{i}/{t} {label}"),
                _ => label.clone(),
            }),
            _ => None,
        })
        .collect()
}

fn lines(events: &[FlashEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            FlashEvent::Line { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn zcu106_jtag(f: &Fixture) -> FlashRequest {
    FlashRequest {
        bitstream_manifest: Some(f.bitstream(Board::Zcu106)),
        firmware_manifest: Some(f.firmware()),
        psu_init: Some(f.psu_init()),
        xsa: Some(f.xsa()),
        ..FlashRequest::new(Board::Zcu106)
    }
}

#[test]
fn zcu106_jtag_programs_pl_inits_ps_and_starts_firmware() {
    let f = Fixture::new();
    f.install("xsct");
    let plan = FlashPlan::new(&zcu106_jtag(&f), &f.tools()).unwrap();
    assert_eq!(plan.route, Route::Jtag);
    let (r, events) = run(&plan);
    let report = r.unwrap();
    assert_eq!(report.firmware_build_id.as_deref(), Some("c110feed"));
    assert_eq!(
        report.bitstream_sha256,
        Some(plan.bitstream.as_ref().unwrap().sha256.clone())
    );

    let bit = f.path("build-zcu106/clio_zcu106.bit");
    let elf = f.path("fw/clio-firmware.elf");
    let init = f.path("psu_init.tcl");
    let xsa = f.path("build-zcu106/clio_zcu106.xsa");
    // argv: exactly the generated script.
    let argv = f.read("bin/xsct.argv");
    assert!(
        argv.trim().ends_with("/flash_zcu106.tcl") && argv.lines().count() == 1,
        "{argv}"
    );
    let expected_script = format!(
        r#"# Generated by clio-flash: ZCU106 over JTAG with xsct. Volatile: lost at power-off.
proc clio_step {{n total label}} {{
    puts "clio-step: $n/$total $label"
    flush stdout
}}
connect -url {{TCP:127.0.0.1:3121}}
targets -set -nocase -filter {{name =~ "PSU"}}
set clio_boot_mode [expr {{[mrd -value 0xff5e0200] & 0xf}}]
if {{$clio_boot_mode != 0}} {{
    puts "clio-warning: boot-mode pins read $clio_boot_mode, not JTAG (0): forcing JTAG boot for this reset"
    mwr 0xff5e0200 0x100
}}
rst -system
after 3000
clio_step 1 4 {{program PL}}
targets -set -nocase -filter {{name =~ "PL"}}
fpga -file {{{bit}}}
clio_step 2 4 {{initialise PS}}
targets -set -nocase -filter {{name =~ "APU*"}}
loadhw -hw {{{xsa}}} -mem-ranges [list {{0x80000000 0xbfffffff}} {{0x400000000 0x5ffffffff}} {{0x1000000000 0x7fffffffff}}] -regs
configparams force-mem-access 1
source {{{init}}}
psu_init
after 1000
psu_ps_pl_isolation_removal
after 1000
psu_ps_pl_reset_config
catch {{psu_protection}}
clio_step 3 4 {{load firmware}}
targets -set -nocase -filter {{name =~ "*A53*#0"}}
rst -processor
dow {{{elf}}}
configparams force-mem-access 0
clio_step 4 4 {{start firmware}}
con
disconnect
puts "clio-done"
"#,
        init = init.display(),
        bit = bit.display(),
        elf = elf.display(),
        xsa = xsa.display()
    );
    assert_eq!(f.read("bin/xsct.script"), expected_script);
    // The commands the tool executed, in order.
    let calls = f.read("bin/xsct.calls");
    let expected_calls = format!(
        "connect -url TCP:127.0.0.1:3121\n\
         targets -set -nocase -filter name =~ \"PSU\"\n\
         mrd -value 0xff5e0200\n\
         rst -system\n\
         after 3000\n\
         targets -set -nocase -filter name =~ \"PL\"\n\
         fpga -file {bit}\n\
         targets -set -nocase -filter name =~ \"APU*\"\n\
         loadhw -hw {xsa} -mem-ranges {{0x80000000 0xbfffffff}} {{0x400000000 0x5ffffffff}} {{0x1000000000 0x7fffffffff}} -regs\n\
         configparams force-mem-access 1\n\
         psu_init\n\
         after 1000\n\
         psu_ps_pl_isolation_removal\n\
         after 1000\n\
         psu_ps_pl_reset_config\n\
         psu_protection\n\
         targets -set -nocase -filter name =~ \"*A53*#0\"\n\
         rst -processor\n\
         dow {elf}\n\
         configparams force-mem-access 0\n\
         con\n\
         disconnect\n",
        bit = bit.display(),
        elf = elf.display(),
        xsa = xsa.display()
    );
    assert_eq!(calls, expected_calls);

    assert_eq!(
        steps(&events),
        [
            "1/4 program PL",
            "2/4 initialise PS",
            "3/4 load firmware",
            "4/4 start firmware"
        ]
    );
    // fpga redraws 0% -> 47% -> 100% with carriage returns; dow 0% -> 100%.
    assert_eq!(percents(&events), [0, 47, 100, 0, 100]);
    assert!(
        matches!(&events[0], FlashEvent::Start { index: 1, total: 1, command, .. } if command.ends_with("flash_zcu106.tcl"))
    );
    assert!(matches!(events.last(), Some(FlashEvent::Finished { .. })));
    assert!(lines(&events)
        .iter()
        .any(|l| l.starts_with("Successfully downloaded")));
    // One progress bar over the whole run: never goes back, ends full.
    let mut tracker = clio_flash::ProgressTracker::new();
    let mut last = 0.0;
    for e in &events {
        tracker.update(e);
        assert!(
            tracker.fraction() >= last,
            "{e:?}: {} < {last}",
            tracker.fraction()
        );
        last = tracker.fraction();
    }
    assert_eq!(last, 1.0);
}

#[test]
fn zcu106_jtag_bitstream_only_skips_the_ps() {
    let f = Fixture::new();
    f.install("xsct");
    let req = FlashRequest {
        bitstream_manifest: Some(f.bitstream(Board::Zcu106)),
        ..FlashRequest::new(Board::Zcu106)
    };
    let plan = FlashPlan::new(&req, &f.tools()).unwrap();
    let (r, events) = run(&plan);
    r.unwrap();
    let bit = f.path("build-zcu106/clio_zcu106.bit");
    assert_eq!(
        f.read("bin/xsct.calls"),
        format!(
            "connect -url TCP:127.0.0.1:3121\ntargets -set -nocase -filter name =~ \"PL\"\nfpga -file {}\ndisconnect\n",
            bit.display()
        )
    );
    assert_eq!(steps(&events), ["1/1 program PL"]);
}

#[test]
fn zcu106_qspi_writes_the_boot_image_with_program_flash() {
    let f = Fixture::new();
    f.install("program_flash");
    let boot = f.path("BOOT.BIN");
    let fsbl = f.path("fsbl.elf");
    fs::write(&boot, b"boot image").unwrap();
    fs::write(&fsbl, b"fsbl").unwrap();
    let req = FlashRequest {
        route: Some(Route::Qspi),
        boot_image: Some(boot.clone()),
        fsbl: Some(fsbl.clone()),
        ..FlashRequest::new(Board::Zcu106)
    };
    let plan = FlashPlan::new(&req, &f.tools()).unwrap();
    let (r, events) = run(&plan);
    r.unwrap();
    let argv: Vec<String> = f
        .read("bin/program_flash.argv")
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        argv,
        [
            "-f",
            &boot.display().to_string(),
            "-offset",
            "0",
            "-flash_type",
            "qspi-x8-dual_parallel",
            "-fsbl",
            &fsbl.display().to_string(),
            "-verify",
            "-url",
            "TCP:127.0.0.1:3121",
        ]
    );
    assert_eq!(steps(&events), ["erase", "program", "verify"]);
    assert_eq!(
        percents(&events),
        [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 0, 50, 100]
    );
}

#[test]
fn alveo_u200_is_programmed_with_vivado_and_program_tcl() {
    let f = Fixture::new();
    f.install("vivado");
    let req = FlashRequest {
        bitstream_manifest: Some(f.bitstream(Board::AlveoU200)),
        ..FlashRequest::new(Board::AlveoU200)
    };
    let plan = FlashPlan::new(&req, &f.tools()).unwrap();
    assert_eq!(plan.route, Route::Vivado);
    let (r, events) = run(&plan);
    r.unwrap();
    let bit = f.path("build-alveo-u200/clio_alveo_u200.bit");
    let argv: Vec<String> = f
        .read("bin/vivado.argv")
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(argv.len(), 12, "{argv:?}");
    assert_eq!(
        argv[..6],
        [
            "-mode",
            "batch",
            "-nojournal",
            "-nolog",
            "-notrace",
            "-source"
        ]
    );
    assert!(argv[6].ends_with("/program.tcl"));
    assert_eq!(
        argv[7..],
        [
            "-tclargs",
            &bit.display().to_string(),
            "127.0.0.1:3121",
            "xcu200_0",
            "*"
        ]
    );
    // The script run is the repository's bitstream/program.tcl, unchanged.
    let repo_script = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bitstream/program.tcl"
    ))
    .unwrap();
    assert_eq!(f.read("bin/vivado.script"), repo_script);
    let calls: Vec<String> = f
        .read("bin/vivado.calls")
        .lines()
        .map(String::from)
        .collect();
    let program_at = calls
        .iter()
        .position(|c| c == "program_hw_devices xcu200_0")
        .unwrap();
    let file_at = calls
        .iter()
        .position(|c| *c == format!("set_property PROGRAM.FILE {} xcu200_0", bit.display()))
        .unwrap();
    assert_eq!(calls[0], "open_hw_manager");
    assert_eq!(calls[1], "connect_hw_server -url 127.0.0.1:3121");
    assert_eq!(calls[2], "get_hw_targets -quiet *");
    assert!(file_at < program_at);
    assert_eq!(calls.last().unwrap(), "close_hw_manager");
    assert_eq!(
        steps(&events),
        [
            "1/4 connect to hw_server 127.0.0.1:3121",
            "2/4 find device xcu200_0",
            "3/4 program xcu200_0",
            "4/4 check DONE"
        ]
    );
}

#[test]
fn missing_tool_is_named_before_anything_runs() {
    let f = Fixture::new();
    let e = FlashPlan::new(&zcu106_jtag(&f), &f.tools()).unwrap_err();
    assert!(
        matches!(e, FlashError::ToolNotFound { tool: "xsct", .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains(&f.bin().display().to_string()),
        "{e}"
    );
    // XILINX_VITIS is searched first.
    let vitis = f.path("Vitis/2023.2");
    fs::create_dir_all(vitis.join("bin")).unwrap();
    let tools = Toolchain {
        vitis: Some(vitis.clone()),
        ..f.tools()
    };
    let e = FlashPlan::new(&zcu106_jtag(&f), &tools).unwrap_err();
    assert!(e.to_string().contains("Vitis/2023.2/bin"), "{e}");
    copy_executable(&Path::new(FAKES).join("xsct"), &vitis.join("bin/xsct"));
    let plan = FlashPlan::new(&zcu106_jtag(&f), &tools).unwrap();
    assert_eq!(plan.invocations[0].program, vitis.join("bin/xsct"));
}

#[test]
fn failing_tool_reports_its_exit_status_and_last_lines() {
    let f = Fixture::new();
    f.install("xsct");
    fs::write(f.bin().join("fail"), "fpga").unwrap();
    let plan = FlashPlan::new(&zcu106_jtag(&f), &f.tools()).unwrap();
    let (r, events) = run(&plan);
    let e = r.unwrap_err();
    match &e {
        FlashError::ToolFailed {
            tool,
            status,
            last_lines,
        } => {
            assert_eq!(*tool, "xsct");
            assert_eq!(status, "exit status 1");
            assert!(
                last_lines.iter().any(|l| l.contains("no targets found")),
                "{last_lines:?}"
            );
        }
        other => panic!("wrong error {other}"),
    }
    assert!(e.to_string().contains("no targets found"));
    // The firmware was never loaded.
    assert!(!f.read("bin/xsct.calls").contains("dow"));
    assert!(!events
        .iter()
        .any(|e| matches!(e, FlashEvent::Finished { .. })));
}

#[test]
fn tool_that_exits_0_before_the_script_ends_is_a_failure() {
    let f = Fixture::new();
    f.install("xsct");
    fs::write(f.bin().join("fail"), "exit0:dow").unwrap();
    let plan = FlashPlan::new(&zcu106_jtag(&f), &f.tools()).unwrap();
    let e = run(&plan).0.unwrap_err();
    assert!(
        matches!(&e, FlashError::ToolFailed { status, .. } if status.contains("clio-done")),
        "{e}"
    );
}

#[test]
fn qspi_failure_maps_to_tool_failed_with_stderr() {
    let f = Fixture::new();
    f.install("program_flash");
    fs::write(f.bin().join("fail"), "").unwrap();
    let (boot, fsbl) = (f.path("BOOT.BIN"), f.path("fsbl.elf"));
    fs::write(&boot, b"b").unwrap();
    fs::write(&fsbl, b"f").unwrap();
    let req = FlashRequest {
        route: Some(Route::Qspi),
        boot_image: Some(boot),
        fsbl: Some(fsbl),
        ..FlashRequest::new(Board::Zcu106)
    };
    let e = run(&FlashPlan::new(&req, &f.tools()).unwrap())
        .0
        .unwrap_err();
    assert!(
        e.to_string().contains("ERROR: Flash Operation Failed"),
        "{e}"
    );
}

#[test]
fn hung_tool_is_killed_at_its_time_limit() {
    let f = Fixture::new();
    copy_executable(
        &Path::new(FAKES).join("hang"),
        &f.bin().join("program_flash"),
    );
    let (boot, fsbl) = (f.path("BOOT.BIN"), f.path("fsbl.elf"));
    fs::write(&boot, b"b").unwrap();
    fs::write(&fsbl, b"f").unwrap();
    let req = FlashRequest {
        route: Some(Route::Qspi),
        boot_image: Some(boot),
        fsbl: Some(fsbl),
        timeout: Duration::from_millis(300),
        ..FlashRequest::new(Board::Zcu106)
    };
    let t = std::time::Instant::now();
    let e = run(&FlashPlan::new(&req, &f.tools()).unwrap())
        .0
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(10));
    match e {
        FlashError::ToolTimeout {
            tool, last_lines, ..
        } => {
            assert_eq!(tool, "program_flash");
            assert_eq!(last_lines, ["attempting to connect"]);
        }
        other => panic!("wrong error {other}"),
    }
}

#[test]
fn bitstream_hash_mismatch_stops_before_any_tool_runs() {
    let f = Fixture::new();
    f.install("xsct");
    let req = zcu106_jtag(&f);
    let bit = f.path("build-zcu106/clio_zcu106.bit");
    fs::write(&bit, b"tampered").unwrap();
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    match &e {
        FlashError::Mismatch {
            file, key, path, ..
        } => {
            assert_eq!(*key, "sha256");
            assert_eq!(path, &bit);
            assert!(file.ends_with("build-zcu106/manifest.json"));
        }
        other => panic!("wrong error {other}"),
    }
    assert!(!f.path("bin/xsct.argv").exists());
}

#[test]
fn missing_or_wrong_manifest_keys_are_named() {
    let f = Fixture::new();
    f.install("xsct");
    let req = zcu106_jtag(&f);
    let m = req.bitstream_manifest.clone().unwrap();
    f.edit_manifest(&m, |o| {
        o.remove("sha256");
    });
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    assert!(
        matches!(&e, FlashError::ManifestKey { key: "sha256", .. }),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("manifest.json: key `sha256`: missing"),
        "{e}"
    );

    let m = f.bitstream(Board::Zcu106);
    f.edit_manifest(&m, |o| {
        o.insert("part".into(), "xcu200-fsgd2104-2-e".into());
    });
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    assert!(
        matches!(&e, FlashError::ManifestKey { key: "part", .. }),
        "{e}"
    );

    // A bitstream built for another board.
    let req_u200 = FlashRequest {
        bitstream_manifest: Some(f.bitstream(Board::AlveoU200)),
        ..FlashRequest::new(Board::Zcu106)
    };
    let e = FlashPlan::new(&req_u200, &f.tools()).unwrap_err();
    assert!(
        matches!(&e, FlashError::ManifestKey { key: "board", .. }),
        "{e}"
    );

    // The bitstream file is gone.
    let m = f.bitstream(Board::Zcu106);
    fs::remove_file(f.path("build-zcu106/clio_zcu106.bit")).unwrap();
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    assert!(
        matches!(
            &e,
            FlashError::MissingFile {
                key: "bitstream",
                ..
            }
        ),
        "{e}"
    );
    let _ = m;

    // Not JSON at all.
    let bad = f.path("bad.json");
    fs::write(&bad, "{ not json").unwrap();
    let req_bad = FlashRequest {
        bitstream_manifest: Some(bad),
        ..FlashRequest::new(Board::Zcu106)
    };
    let e = FlashPlan::new(&req_bad, &f.tools()).unwrap_err();
    assert!(matches!(&e, FlashError::ManifestParse { .. }), "{e}");
}

#[test]
fn firmware_must_match_its_manifest() {
    let f = Fixture::new();
    f.install("xsct");
    let req = zcu106_jtag(&f);
    let fw = req.firmware_manifest.clone().unwrap();
    // Rebuilt ELF with another build id, stale manifest.
    fs::write(
        f.path("fw/clio-firmware.elf"),
        elf_bytes(&[1, 2, 3], "zcu106", "5eed"),
    )
    .unwrap();
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    match &e {
        FlashError::Mismatch {
            key,
            expected,
            actual,
            ..
        } => {
            assert_eq!(
                (*key, expected.as_str(), actual.as_str()),
                ("build_id", "c110feed", "010203")
            );
        }
        other => panic!("wrong error {other}"),
    }
    f.firmware();
    f.edit_manifest(&fw, |o| {
        o.remove("config_hash");
    });
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    assert!(
        matches!(
            &e,
            FlashError::ManifestKey {
                key: "config_hash",
                ..
            }
        ),
        "{e}"
    );
    f.firmware();
    f.edit_manifest(&fw, |o| {
        o.insert("elf".into(), "missing.elf".into());
    });
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    assert!(
        matches!(&e, FlashError::MissingFile { key: "elf", .. }),
        "{e}"
    );
    // Firmware over JTAG needs psu_init.tcl.
    f.firmware();
    let no_init = FlashRequest {
        psu_init: None,
        ..req.clone()
    };
    let e = FlashPlan::new(&no_init, &f.tools()).unwrap_err();
    assert!(e.to_string().contains("psu_init.tcl"), "{e}");
}

#[test]
fn routes_and_inputs_must_fit_the_board() {
    let f = Fixture::new();
    let e = FlashPlan::new(
        &FlashRequest {
            route: Some(Route::Vivado),
            ..FlashRequest::new(Board::Zcu106)
        },
        &f.tools(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("route `vivado` does not apply to the zcu106"),
        "{e}"
    );
    let e = FlashPlan::new(&FlashRequest::new(Board::AlveoU200), &f.tools()).unwrap_err();
    assert!(e.to_string().contains("needs a bitstream manifest"), "{e}");
    let e = FlashPlan::new(
        &FlashRequest {
            route: Some(Route::Qspi),
            ..FlashRequest::new(Board::Zcu106)
        },
        &f.tools(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("BOOT.BIN"), "{e}");
    let e = FlashPlan::new(
        &FlashRequest {
            psu_init: Some(f.path("nope.tcl")),
            ..FlashRequest::new(Board::Zcu106)
        },
        &f.tools(),
    )
    .unwrap_err();
    assert!(
        matches!(
            &e,
            FlashError::MissingInput {
                what: "psu_init.tcl",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(Board::parse("alveo-u200").unwrap(), Board::AlveoU200);
    assert!(Board::parse("zcu102").is_err());
}

#[test]
fn dry_run_prints_commands_and_scripts_without_tools() {
    let f = Fixture::new();
    let req = zcu106_jtag(&f);
    let plan = FlashPlan::dry_run(&req, &Toolchain::default()).unwrap();
    let text = plan.describe(Path::new("/tmp/clio-flash-XXXX"));
    assert!(text.starts_with("flash zcu106 via jtag\n"), "{text}");
    assert!(
        text.contains("$ xsct /tmp/clio-flash-XXXX/flash_zcu106.tcl\n"),
        "{text}"
    );
    assert!(text.contains("(xsct not found"), "{text}");
    assert!(text.contains("fpga -file {"), "{text}");
    assert!(text.contains("build id c110feed"), "{text}");
    let e = run(&plan).0.unwrap_err();
    assert!(
        matches!(e, FlashError::ToolNotFound { tool: "xsct", .. }),
        "{e}"
    );
    // A dry run still checks the inputs.
    fs::write(f.path("build-zcu106/clio_zcu106.bit"), b"x").unwrap();
    let e = FlashPlan::dry_run(&req, &Toolchain::default()).unwrap_err();
    assert!(
        matches!(e, FlashError::Mismatch { key: "sha256", .. }),
        "{e}"
    );
}

#[test]
fn board_parts_match_the_bitstream_build_script() {
    let tcl = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bitstream/build.tcl"
    ))
    .unwrap();
    for b in Board::ALL {
        let needle = format!("{} {{part {}", b.name(), b.part());
        assert!(tcl.contains(&needle), "build.tcl has no `{needle}`");
    }
}

#[test]
fn manifest_written_by_build_tcl_is_accepted_and_programmed() {
    // bitstream/build.tcl under tclsh with the Vivado commands stubbed
    // (the CI check of the build flow) writes a real manifest.json.
    let f = Fixture::new();
    let out = f.path("build");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let status = std::process::Command::new("tclsh")
        .arg(format!("{root}/bitstream/ci/stubbed_build.tcl"))
        .args(["alveo-u200", out.to_str().unwrap(), "clio_fastpath_top"])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("tclsh (Tcl 8.6) is needed to run bitstream/build.tcl's stubbed flow");
    assert!(status.success());
    f.install("vivado");
    let req = FlashRequest {
        bitstream_manifest: Some(out.join("manifest.json")),
        ..FlashRequest::new(Board::AlveoU200)
    };
    let plan = FlashPlan::new(&req, &f.tools()).unwrap();
    let b = plan.bitstream.as_ref().unwrap();
    assert_eq!(b.bitstream, out.join("clio_alveo_u200.bit"));
    assert_eq!(
        (b.top.as_str(), b.tool_version.as_str()),
        ("clio_fastpath_top", "Vivado 0.0-tclsh-stub")
    );
    run(&plan).0.unwrap();
    // The same manifest does not flash a ZCU106.
    let req = FlashRequest {
        bitstream_manifest: Some(out.join("manifest.json")),
        ..FlashRequest::new(Board::Zcu106)
    };
    let e = FlashPlan::new(&req, &f.tools()).unwrap_err();
    assert!(e.to_string().contains("built for `alveo-u200`"), "{e}");
}

/// `abs` as a path relative to the current directory.
fn relative_to_cwd(abs: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    let up = cwd.components().count() - 1;
    let mut p: PathBuf = std::iter::repeat_n("..", up).collect();
    p.push(abs.canonicalize().unwrap().strip_prefix("/").unwrap());
    p
}

#[test]
fn relative_input_paths_work_although_tools_run_elsewhere() {
    let f = Fixture::new();
    f.install("xsct");
    let abs = zcu106_jtag(&f);
    let req = FlashRequest {
        bitstream_manifest: abs.bitstream_manifest.as_deref().map(relative_to_cwd),
        firmware_manifest: abs.firmware_manifest.as_deref().map(relative_to_cwd),
        psu_init: abs.psu_init.as_deref().map(relative_to_cwd),
        xsa: abs.xsa.as_deref().map(relative_to_cwd),
        ..abs.clone()
    };
    assert!(req.psu_init.as_ref().unwrap().is_relative());
    let plan = FlashPlan::new(&req, &f.tools()).unwrap();
    run(&plan).0.unwrap();
    let script = f.read("bin/xsct.script");
    let bit = f
        .path("build-zcu106/clio_zcu106.bit")
        .canonicalize()
        .unwrap();
    assert!(
        script.contains(&format!("fpga -file {{{}}}", bit.display())),
        "{script}"
    );
    let init = f.path("psu_init.tcl").canonicalize().unwrap();
    assert!(
        script.contains(&format!("source {{{}}}", init.display())),
        "{script}"
    );
}

#[test]
fn jtag_cable_selects_one_board_among_several() {
    let f = Fixture::new();
    f.install("xsct");
    f.install("vivado");
    let req = FlashRequest {
        jtag_cable: Some("ABC-123".into()),
        ..zcu106_jtag(&f)
    };
    run(&FlashPlan::new(&req, &f.tools()).unwrap()).0.unwrap();
    let script = f.read("bin/xsct.script");
    for name in ["APU*", "PSU", "PL", "*A53*#0"] {
        let filter = format!(
            "targets -set -nocase -filter {{name =~ \"{name}\" && jtag_cable_serial =~ \"*ABC-123*\"}}\n"
        );
        assert!(script.contains(&filter), "{filter} not in {script}");
    }
    assert!(!script.contains("filter {name =~ \"PSU\"}"));

    // Alveo: the cable becomes program.tcl's target pattern.
    let u200 = |cable: &str| FlashRequest {
        bitstream_manifest: Some(f.bitstream(Board::AlveoU200)),
        jtag_cable: Some(cable.into()),
        ..FlashRequest::new(Board::AlveoU200)
    };
    run(&FlashPlan::new(&u200("21290594G00LA"), &f.tools()).unwrap())
        .0
        .unwrap();
    assert!(f
        .read("bin/vivado.argv")
        .ends_with("xcu200_0\n*21290594G00LA*\n"));
    let e = run(&FlashPlan::new(&u200("NOPE"), &f.tools()).unwrap())
        .0
        .unwrap_err();
    assert!(
        e.to_string().contains("no JTAG target matching *NOPE*"),
        "{e}"
    );

    // Serials are plain words; QSPI cannot select a cable.
    let bad = FlashRequest {
        jtag_cable: Some("a b".into()),
        ..zcu106_jtag(&f)
    };
    let e = FlashPlan::new(&bad, &f.tools()).unwrap_err();
    assert!(e.to_string().contains("JTAG cable serial `a b`"), "{e}");
    let (boot, fsbl) = (f.path("BOOT.BIN"), f.path("fsbl.elf"));
    fs::write(&boot, b"b").unwrap();
    fs::write(&fsbl, b"f").unwrap();
    let qspi = FlashRequest {
        route: Some(Route::Qspi),
        boot_image: Some(boot),
        fsbl: Some(fsbl),
        jtag_cable: Some("ABC".into()),
        ..FlashRequest::new(Board::Zcu106)
    };
    let e = FlashPlan::new(&qspi, &f.tools()).unwrap_err();
    assert!(e.to_string().contains("cannot select a JTAG cable"), "{e}");
}

/// Issue #17 finding 7: with the boot-mode switches on QSPI/SD, `rst
/// -system` would boot the flash image; the script must force JTAG boot
/// for that reset, and program the PL on the PL target after `loadhw`.
#[test]
fn zcu106_jtag_forces_jtag_boot_when_the_switches_say_otherwise() {
    let f = Fixture::new();
    f.install("xsct");
    fs::write(f.path("bin/bootmode"), "2\n").unwrap(); // QSPI32
    let (r, events) = run(&FlashPlan::new(&zcu106_jtag(&f), &f.tools()).unwrap());
    r.unwrap();
    let calls = f.read("bin/xsct.calls");
    let order: Vec<&str> = calls.lines().collect();
    let at = |p: &str| {
        order
            .iter()
            .position(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("{p} not in {calls}"))
    };
    assert!(at("mrd -value 0xff5e0200") < at("mwr 0xff5e0200 0x100"));
    assert!(at("mwr 0xff5e0200 0x100") < at("rst -system"));
    assert!(at("targets -set -nocase -filter name =~ \"PL\"") < at("fpga -file"));
    assert!(at("loadhw -hw") < at("psu_init"));
    assert!(lines(&events)
        .iter()
        .any(|l| l.contains("clio-warning: boot-mode pins read 2, not JTAG")));
    // JTAG switches: no override.
    fs::write(f.path("bin/bootmode"), "0\n").unwrap();
    run(&FlashPlan::new(&zcu106_jtag(&f), &f.tools()).unwrap())
        .0
        .unwrap();
    assert!(!f.read("bin/xsct.calls").contains("mwr"));
    // Firmware over JTAG without the .xsa is refused by name.
    let e = FlashPlan::new(
        &FlashRequest {
            xsa: None,
            ..zcu106_jtag(&f)
        },
        &f.tools(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--xsa"), "{e}");
}

fn boot_build(f: &Fixture, route: Route) -> FlashRequest {
    FlashRequest {
        route: Some(route),
        bitstream_manifest: Some(f.bitstream(Board::Zcu106)),
        firmware_manifest: Some(f.firmware()),
        xsa: Some(f.xsa()),
        atf: Some(f.atf()),
        out_dir: Some(f.path("out")),
        ..FlashRequest::new(Board::Zcu106)
    }
}

/// Issue #17 finding 3: BOOT.BIN built from the .xsa (FSBL, PMU firmware
/// with xsct), the bitstream, ATF and our image with bootgen, then written
/// to QSPI with the FSBL just built.
#[test]
fn zcu106_qspi_builds_boot_bin_from_the_xsa_and_writes_it() {
    let f = Fixture::new();
    for t in ["xsct", "bootgen", "program_flash"] {
        f.install(t);
    }
    let plan = FlashPlan::new(&boot_build(&f, Route::Qspi), &f.tools()).unwrap();
    assert_eq!(
        plan.invocations
            .iter()
            .map(|i| i.tool.name())
            .collect::<Vec<_>>(),
        ["xsct", "bootgen", "program_flash"]
    );
    let (r, events) = run(&plan);
    r.unwrap();
    let out = f.path("out");
    let (xsa, bit, atf) = (
        f.path("build-zcu106/clio_zcu106.xsa"),
        f.path("build-zcu106/clio_zcu106.bit"),
        f.path("bl31.elf"),
    );
    let elf = f.path("fw/clio-firmware.elf");
    assert_eq!(
        f.read("bin/xsct.calls"),
        format!(
            "hsi::open_hw_design {xsa}\n\
             hsi::generate_app -hw design_1 -os standalone -proc psu_cortexa53_0 -app zynqmp_fsbl -compile -sw fsbl -dir {o}/fsbl\n\
             hsi::generate_app -hw design_1 -os standalone -proc psu_pmu_0 -app zynqmp_pmufw -compile -sw pmufw -dir {o}/pmufw\n\
             hsi::close_hw_design design_1\n",
            xsa = xsa.display(),
            o = out.display()
        )
    );
    let argv = f.read("bin/bootgen.argv");
    let argv: Vec<&str> = argv.lines().collect();
    assert_eq!(argv.len(), 8, "{argv:?}");
    assert_eq!(&argv[..3], ["-arch", "zynqmp", "-image"]);
    assert!(argv[3].ends_with("/boot.bif"));
    assert_eq!(
        &argv[4..],
        [
            "-o",
            &out.join("BOOT.BIN").display().to_string(),
            "-w",
            "on"
        ]
    );
    assert_eq!(
        f.read("bin/bootgen.bif"),
        format!(
            "// Generated by clio-flash: ZCU106 boot image (FSBL, PMU firmware, bitstream, ATF, clio-firmware).\n\
             the_ROM_image:\n{{\n\
             \t[bootloader, destination_cpu=a53-0] {o}/fsbl/executable.elf\n\
             \t[pmufw_image] {o}/pmufw/executable.elf\n\
             \t[destination_device=pl] {bit}\n\
             \t[destination_cpu=a53-0, exception_level=el-3, trustzone] {atf}\n\
             \t[destination_cpu=a53-0, exception_level=el-1] {elf}\n\
             }}\n",
            o = out.display(),
            bit = bit.display(),
            atf = atf.display(),
            elf = elf.display()
        )
    );
    assert!(out.join("BOOT.BIN").is_file());
    assert_eq!(
        f.read("bin/program_flash.argv"),
        format!(
            "-f\n{}\n-offset\n0\n-flash_type\nqspi-x8-dual_parallel\n-fsbl\n{}\n-verify\n-url\nTCP:127.0.0.1:3121\n",
            out.join("BOOT.BIN").display(),
            out.join("fsbl/executable.elf").display()
        )
    );
    assert_eq!(
        steps(&events)[..2],
        [
            "1/2 build FSBL".to_string(),
            "2/2 build PMU firmware".to_string()
        ]
    );
    // ATF is required to build an image, and named.
    let e = FlashPlan::new(
        &FlashRequest {
            atf: None,
            ..boot_build(&f, Route::Qspi)
        },
        &f.tools(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--atf"), "{e}");
}

#[test]
fn zcu106_sd_copies_the_built_boot_bin_to_the_card() {
    let f = Fixture::new();
    for t in ["xsct", "bootgen"] {
        f.install(t);
    }
    let sd = f.path("sdcard");
    fs::create_dir_all(&sd).unwrap();
    let req = FlashRequest {
        sd_mount: Some(sd.clone()),
        ..boot_build(&f, Route::Sd)
    };
    let plan = FlashPlan::new(&req, &f.tools()).unwrap();
    let (r, events) = run(&plan);
    r.unwrap();
    assert_eq!(
        fs::read(sd.join("BOOT.BIN")).unwrap(),
        fs::read(f.path("out/BOOT.BIN")).unwrap()
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, FlashEvent::Host { command, .. } if command.starts_with("cp ") && command.ends_with("sdcard/BOOT.BIN && sync"))));
    let e = FlashPlan::new(
        &FlashRequest {
            sd_mount: Some(f.path("no-card")),
            ..boot_build(&f, Route::Sd)
        },
        &f.tools(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            FlashError::MissingInput {
                what: "SD card mount point",
                ..
            }
        ),
        "{e}"
    );
}

/// A directory standing in for /sys/bus/pci with the card at `bdf`.
fn fake_pci(f: &Fixture, bdf: &str) -> PathBuf {
    let root = f.path("sys/bus/pci");
    fs::create_dir_all(root.join("devices").join(bdf)).unwrap();
    fs::write(root.join("devices").join(bdf).join("remove"), "").unwrap();
    fs::write(root.join("rescan"), "").unwrap();
    root
}

/// Issue #17 finding 5: the U200's configuration memory (write_cfgmem +
/// program_hw_cfgmem, boot from flash), with the card removed from PCIe
/// before and the bus rescanned after.
#[test]
fn alveo_u200_cfgmem_writes_the_flash_and_rescans_pcie() {
    let f = Fixture::new();
    f.install("vivado");
    let sysfs = fake_pci(&f, "0000:65:00.0");
    let req = FlashRequest {
        route: Some(Route::Cfgmem),
        bitstream_manifest: Some(f.bitstream(Board::AlveoU200)),
        pci_bdf: Some("0000:65:00.0".into()),
        pci_sysfs: sysfs.clone(),
        ..FlashRequest::new(Board::AlveoU200)
    };
    let plan = FlashPlan::new(&req, &f.tools()).unwrap();
    let (r, events) = run(&plan);
    r.unwrap();
    let bit = f.path("build-alveo-u200/clio_alveo_u200.bit");
    let mcs = f.path("build-alveo-u200/boot/clio_alveo_u200.mcs");
    assert_eq!(
        f.read("bin/vivado.argv"),
        format!(
            "-mode\nbatch\n-nojournal\n-nolog\n-notrace\n-source\n{}\n-tclargs\n{}\n{}\n127.0.0.1:3121\nxcu200_0\n*\n",
            f.read("bin/vivado.argv").lines().nth(6).unwrap(),
            bit.display(),
            mcs.display()
        )
    );
    let calls = f.read("bin/vivado.calls");
    assert!(calls.starts_with(&format!(
        "write_cfgmem -force -format mcs -size 128 -interface SPIx4 -loadbit up 0x01002000 {} -file {}\n",
        bit.display(),
        mcs.display()
    )), "{calls}");
    for c in [
        "create_hw_cfgmem -hw_device xcu200_0 mt25qu01g-spi-x1_x2_x4",
        "program_hw_cfgmem -hw_cfgmem cfgmem_0",
        "boot_hw_device xcu200_0",
    ] {
        assert!(calls.contains(c), "{c} not in {calls}");
    }
    assert!(calls.find("program_hw_cfgmem").unwrap() < calls.find("boot_hw_device").unwrap());
    assert!(mcs.is_file());
    // PCIe: removed before Vivado starts, rescanned after it finished.
    assert_eq!(
        fs::read_to_string(sysfs.join("devices/0000:65:00.0/remove")).unwrap(),
        "1"
    );
    assert_eq!(fs::read_to_string(sysfs.join("rescan")).unwrap(), "1");
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            FlashEvent::Host { label, .. } if label.starts_with("remove") => Some("remove"),
            FlashEvent::Host { .. } => Some("rescan"),
            FlashEvent::Start { .. } => Some("start"),
            FlashEvent::Finished { .. } => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["remove", "start", "finished", "rescan"]);
    // The volatile route rescans too; a bad address is named.
    let e = FlashPlan::new(
        &FlashRequest {
            route: Some(Route::Vivado),
            pci_bdf: Some("65:00.0".into()),
            ..req.clone()
        },
        &f.tools(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("`65:00.0` is not DDDD:BB:DD.F"),
        "{e}"
    );
}

/// `--dry-run` prints the exact vendor commands of every persistent route.
#[test]
fn dry_run_prints_the_vendor_commands_of_the_boot_routes() {
    let f = Fixture::new();
    let plan = FlashPlan::dry_run(&boot_build(&f, Route::Qspi), &Toolchain::default()).unwrap();
    let text = plan.describe(Path::new("/tmp/S"));
    let out = f.path("out");
    for line in [
        "$ xsct /tmp/S/boot_firmware.tcl".to_string(),
        format!("$ bootgen -arch zynqmp -image /tmp/S/boot.bif -o {} -w on", out.join("BOOT.BIN").display()),
        format!(
            "$ program_flash -f {} -offset 0 -flash_type qspi-x8-dual_parallel -fsbl {} -verify -url TCP:127.0.0.1:3121",
            out.join("BOOT.BIN").display(),
            out.join("fsbl/executable.elf").display()
        ),
    ] {
        assert!(text.lines().any(|l| l == line), "no line `{line}` in:\n{text}");
    }
    assert!(text.contains("[pmufw_image]"), "{text}");
    let sysfs = fake_pci(&f, "0000:65:00.0");
    let u200 = FlashRequest {
        route: Some(Route::Cfgmem),
        bitstream_manifest: Some(f.bitstream(Board::AlveoU200)),
        pci_bdf: Some("0000:65:00.0".into()),
        pci_sysfs: sysfs.clone(),
        ..FlashRequest::new(Board::AlveoU200)
    };
    let text = FlashPlan::dry_run(&u200, &Toolchain::default())
        .unwrap()
        .describe(Path::new("/tmp/S"));
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("$ ")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[0],
        format!(
            "$ echo 1 | sudo tee {}",
            sysfs.join("devices/0000:65:00.0/remove").display()
        )
    );
    assert!(
        lines[1].starts_with(
            "$ vivado -mode batch -nojournal -nolog -notrace -source /tmp/S/cfgmem.tcl -tclargs "
        ),
        "{text}"
    );
    assert_eq!(
        lines[2],
        format!("$ echo 1 | sudo tee {}", sysfs.join("rescan").display())
    );
    assert!(text.contains("write_cfgmem -force -format mcs -size 128 -interface SPIx4 -loadbit \"up 0x01002000 $bitstream\""), "{text}");
}
