//! `clio flash`: program a board's bitstream and firmware from build
//! manifests through the vendor tools, with a progress bar.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use clio_flash::{Board, FlashEvent, FlashPlan, FlashReport, FlashRequest, Route, Toolchain};

/// Flash a board (ZCU106 over JTAG, to QSPI or to an SD card; Alveo U200
/// over JTAG or into its configuration flash).
#[derive(Debug, Args)]
pub struct FlashArgs {
    /// Board: `zcu106` or `alveo-u200`.
    #[arg(long)]
    pub board: String,
    /// Route: `jtag`, `qspi`, `sd` (ZCU106) or `vivado`, `cfgmem` (U200); default `jtag` / `vivado`.
    #[arg(long)]
    pub route: Option<String>,
    /// Bitstream manifest written by `bitstream/build.tcl`.
    #[arg(long)]
    pub bitstream: Option<PathBuf>,
    /// Firmware manifest written by `firmware-arm/image/package.sh`.
    #[arg(long)]
    pub firmware: Option<PathBuf>,
    /// `psu_init.tcl` of the hardware platform (ZCU106 over JTAG with firmware).
    #[arg(long)]
    pub psu_init: Option<PathBuf>,
    /// Boot image `BOOT.BIN` (ZCU106 QSPI).
    #[arg(long)]
    pub boot_image: Option<PathBuf>,
    /// First-stage boot loader ELF (ZCU106 QSPI).
    #[arg(long)]
    pub fsbl: Option<PathBuf>,
    /// Hardware platform (`.xsa`, beside the bitstream): `loadhw` for firmware
    /// over JTAG, and the FSBL/PMU firmware of a built boot image.
    #[arg(long)]
    pub xsa: Option<PathBuf>,
    /// ARM Trusted Firmware `bl31.elf` for a built ZCU106 boot image.
    #[arg(long)]
    pub atf: Option<PathBuf>,
    /// Where built boot files (FSBL, PMU firmware, BOOT.BIN, the U200's MCS) go;
    /// default `boot/` beside the bitstream manifest.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Mounted SD card (first FAT partition) for route `sd`.
    #[arg(long)]
    pub sd_mount: Option<PathBuf>,
    /// The U200's PCIe address (`lspci -D -d 10ee:`): removed before programming,
    /// the bus rescanned after (needs root).
    #[arg(long)]
    pub pci_bdf: Option<String>,
    /// PCI sysfs directory (for testing against a stand-in).
    #[arg(long, default_value = "/sys/bus/pci", hide = true)]
    pub pci_sysfs: PathBuf,
    /// hw_server URL.
    #[arg(long, default_value = clio_flash::DEFAULT_HW_SERVER)]
    pub hw_server: String,
    /// Serial (or part of it) of the board's JTAG cable when a hw_server sees several.
    #[arg(long)]
    pub cable: Option<String>,
    /// Seconds each tool run may take before it is killed.
    #[arg(long, default_value_t = clio_flash::DEFAULT_TIMEOUT.as_secs())]
    pub timeout_s: u64,
    /// Check everything and print the commands and scripts, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print tool output lines as they come.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print the final report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The flash request `a` describes (board, route, manifests, images, tool
/// time limit).
pub fn request(a: &FlashArgs) -> Result<FlashRequest> {
    let mut req = FlashRequest::new(Board::parse(&a.board)?);
    req.route = a.route.as_deref().map(Route::parse).transpose()?;
    req.bitstream_manifest = a.bitstream.clone();
    req.firmware_manifest = a.firmware.clone();
    req.psu_init = a.psu_init.clone();
    req.boot_image = a.boot_image.clone();
    req.fsbl = a.fsbl.clone();
    req.hw_server = a.hw_server.clone();
    req.jtag_cable = a.cable.clone();
    req.xsa = a.xsa.clone();
    req.atf = a.atf.clone();
    req.out_dir = a.out_dir.clone();
    req.sd_mount = a.sd_mount.clone();
    req.pci_bdf = a.pci_bdf.clone();
    req.pci_sysfs = a.pci_sysfs.clone();
    req.timeout = Duration::from_secs(a.timeout_s);
    Ok(req)
}

/// `clio flash --dry-run`: the checked plan's commands and scripts, as
/// text; nothing runs.
pub fn dry_run(a: &FlashArgs, tools: &Toolchain) -> Result<String> {
    let plan = FlashPlan::dry_run(&request(a)?, tools)?;
    Ok(plan.describe(&std::env::temp_dir()))
}

/// Runs `clio flash` with the vendor `tools`, each tool event (step, line,
/// progress) sent to `on_event` as it happens (`clio_flash::ProgressTracker`
/// turns them into a fraction done); the report when the board is flashed.
pub fn flash(
    a: &FlashArgs,
    tools: &Toolchain,
    on_event: &mut dyn FnMut(&FlashEvent),
) -> Result<FlashReport> {
    let plan = FlashPlan::new(&request(a)?, tools)?;
    plan.run(on_event)
        .with_context(|| format!("flashing {}", a.board))
}

/// A flash report as `clio flash --json` prints it.
pub fn report_json(report: &FlashReport) -> serde_json::Value {
    serde_json::json!({
        "board": report.board.to_string(),
        "route": format!("{:?}", report.route),
        "bitstream_sha256": report.bitstream_sha256,
        "firmware_build_id": report.firmware_build_id,
        "seconds": report.elapsed.as_secs_f64(),
    })
}

/// A flash report's one line of text.
pub fn report_line(report: &FlashReport) -> String {
    format!(
        "flashed {} via {:?} in {:.1} s (bitstream {}, firmware {})",
        report.board,
        report.route,
        report.elapsed.as_secs_f64(),
        report.bitstream_sha256.as_deref().unwrap_or("-"),
        report.firmware_build_id.as_deref().unwrap_or("-")
    )
}

#[cfg(test)]
mod tests {
    use super::{flash, request, FlashArgs};
    use clap::Parser;
    use clio_flash::Toolchain;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: FlashArgs,
    }

    fn args(argv: &[&str]) -> FlashArgs {
        Cli::try_parse_from(std::iter::once("flash").chain(argv.iter().copied()))
            .unwrap()
            .a
    }

    /// The flags land in the request the flash library plans from.
    #[test]
    fn flags_make_the_request() {
        let a = args(&[
            "--board",
            "zcu106",
            "--route",
            "jtag",
            "--bitstream",
            "b.json",
            "--timeout-s",
            "7",
        ]);
        let r = request(&a).unwrap();
        assert_eq!(r.board, clio_flash::Board::Zcu106);
        assert_eq!(r.bitstream_manifest.as_deref(), Some("b.json".as_ref()));
        assert_eq!(r.timeout, std::time::Duration::from_secs(7));
        assert!(request(&args(&["--board", "nope"])).is_err());
    }

    /// Without the vendor tools nothing runs: an error, and no event.
    #[test]
    fn no_tools_is_an_error_before_any_event() {
        let dir = tempfile::tempdir().unwrap();
        let tools = Toolchain::with_path(vec![dir.path().to_path_buf()]);
        let a = args(&["--board", "zcu106"]);
        let mut events = 0;
        let e = flash(&a, &tools, &mut |_| events += 1).unwrap_err();
        assert_eq!(events, 0, "{e:#}");
    }
}
