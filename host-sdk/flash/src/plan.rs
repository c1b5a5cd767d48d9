//! A flash request, checked and turned into tool invocations.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::boot::{self, BootOutputs};
use crate::host::{self, HostStep, When};
use crate::manifest::{BitstreamManifest, FirmwareManifest};
use crate::run::{run_tool, FlashEvent};
use crate::script::{self, JtagFirmware};
use crate::{Board, FlashError, Route, Tool, Toolchain};

/// Default hw_server URL (a local `hw_server` on its standard port).
pub const DEFAULT_HW_SERVER: &str = "TCP:127.0.0.1:3121";

/// Default limit on each tool run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// What to flash, where, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlashRequest {
    /// Target board.
    pub board: Board,
    /// Route; `None` = the board's default.
    pub route: Option<Route>,
    /// Manifest written by `bitstream/build.tcl`.
    pub bitstream_manifest: Option<PathBuf>,
    /// Manifest written by `firmware-arm/image/package.sh` (ZCU106 only).
    pub firmware_manifest: Option<PathBuf>,
    /// `psu_init.tcl` of the bitstream's hardware platform (ZCU106 JTAG with firmware).
    pub psu_init: Option<PathBuf>,
    /// Boot image `BOOT.BIN` (ZCU106 QSPI).
    pub boot_image: Option<PathBuf>,
    /// First-stage boot loader ELF (ZCU106 QSPI).
    pub fsbl: Option<PathBuf>,
    /// hw_server URL.
    pub hw_server: String,
    /// Serial (or part of it) of the JTAG cable of the board to flash, when
    /// one hw_server sees several boards (jtag and vivado routes).
    pub jtag_cable: Option<String>,
    /// Limit on each tool run; the tool is killed after it.
    pub timeout: Duration,
    /// The bitstream's hardware platform (`.xsa`, written next to it by
    /// `bitstream/build.tcl`): `loadhw` for the ZCU106 JTAG firmware load,
    /// and the FSBL/PMU firmware build of a boot image.
    pub xsa: Option<PathBuf>,
    /// ARM Trusted Firmware BL31 ELF for a ZCU106 boot image (Xilinx's
    /// prebuilt `bl31.elf`, or `make PLAT=zynqmp RESET_TO_BL31=1 bl31`).
    pub atf: Option<PathBuf>,
    /// Where a built boot image (FSBL, PMU firmware, `BOOT.BIN`) or the
    /// U200's MCS file goes; default `boot/` next to the bitstream manifest.
    pub out_dir: Option<PathBuf>,
    /// Mounted SD card (ZCU106 route sd): `BOOT.BIN` is copied there.
    pub sd_mount: Option<PathBuf>,
    /// PCIe address of the U200 (`lspci -D -d 10ee:`): removed before it is
    /// programmed, the bus rescanned after.
    pub pci_bdf: Option<String>,
    /// The PCI sysfs directory (`/sys/bus/pci`; tests use a directory).
    pub pci_sysfs: PathBuf,
}

impl FlashRequest {
    /// A request for `board` with defaults and no inputs yet.
    pub fn new(board: Board) -> FlashRequest {
        FlashRequest {
            board,
            route: None,
            bitstream_manifest: None,
            firmware_manifest: None,
            psu_init: None,
            boot_image: None,
            fsbl: None,
            hw_server: DEFAULT_HW_SERVER.into(),
            jtag_cable: None,
            timeout: DEFAULT_TIMEOUT,
            xsa: None,
            atf: None,
            out_dir: None,
            sd_mount: None,
            pci_bdf: None,
            pci_sysfs: PathBuf::from("/sys/bus/pci"),
        }
    }
}

/// One argument of a tool command.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Arg {
    Lit(String),
    /// The path of the invocation's script, known once it is written.
    Script,
}

/// One tool run of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The tool.
    pub tool: Tool,
    /// Its executable (the bare name in a dry run that did not find it).
    pub program: PathBuf,
    /// Whether `program` was found.
    pub found: bool,
    args: Vec<Arg>,
    /// Script file name and contents, written next to each other in a
    /// temporary directory before the run.
    pub script: Option<(String, String)>,
}

impl Invocation {
    /// Whether the tool runs a Tcl script of ours, which ends by printing
    /// the done marker (a BIF for bootgen is input, not a script).
    pub fn runs_our_tcl(&self) -> bool {
        self.script.is_some() && matches!(self.tool, Tool::Xsct | Tool::Vivado)
    }

    /// The argument list, with the script at `script_dir`.
    pub fn args(&self, script_dir: &Path) -> Vec<String> {
        self.args
            .iter()
            .map(|a| match a {
                Arg::Lit(s) => s.clone(),
                Arg::Script => script_dir
                    .join(self.script.as_ref().map_or("", |s| s.0.as_str()))
                    .display()
                    .to_string(),
            })
            .collect()
    }

    /// The command line as text (arguments with spaces are quoted).
    pub fn command_line(&self, script_dir: &Path) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args(script_dir))
            .map(|a| {
                if a.contains(' ') || a.is_empty() {
                    format!("'{a}'")
                } else {
                    a
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What a finished flash did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlashReport {
    /// Board flashed.
    pub board: Board,
    /// Route used.
    pub route: Route,
    /// SHA-256 of the bitstream programmed.
    pub bitstream_sha256: Option<String>,
    /// Build id of the firmware loaded.
    pub firmware_build_id: Option<String>,
    /// Wall time.
    pub elapsed: Duration,
}

/// A checked request: inputs verified, tools located, commands fixed.
#[derive(Debug, Clone)]
pub struct FlashPlan {
    /// Board.
    pub board: Board,
    /// Route.
    pub route: Route,
    /// The verified bitstream manifest.
    pub bitstream: Option<BitstreamManifest>,
    /// The verified firmware manifest.
    pub firmware: Option<FirmwareManifest>,
    /// Tool runs, in order.
    pub invocations: Vec<Invocation>,
    /// Host steps before and after the tool runs (PCIe remove/rescan, SD copy).
    pub host_steps: Vec<HostStep>,
    timeout: Duration,
}

/// The file `p`, checked to exist and made absolute (the tools run in a
/// temporary directory, where a relative path would name nothing).
fn existing(what: &'static str, p: &Option<PathBuf>) -> Result<Option<PathBuf>, FlashError> {
    match p {
        None => Ok(None),
        Some(p) if !p.is_file() => Err(FlashError::MissingInput {
            what,
            path: p.clone(),
        }),
        Some(p) => std::fs::canonicalize(p)
            .map(Some)
            .map_err(|_| FlashError::MissingInput {
                what,
                path: p.clone(),
            }),
    }
}

/// `p` made absolute against the current directory (the tools run in a
/// temporary one), without requiring it to exist yet.
fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    }
}

fn refuse(cond: bool, msg: impl FnOnce() -> String) -> Result<(), FlashError> {
    if cond {
        Err(FlashError::Request(msg()))
    } else {
        Ok(())
    }
}

impl FlashPlan {
    /// Check `req` (manifests, hashes, build ids, input files) and locate
    /// the tools. Nothing runs.
    pub fn new(req: &FlashRequest, tools: &Toolchain) -> Result<FlashPlan, FlashError> {
        FlashPlan::build(req, tools, true)
    }

    /// As [`FlashPlan::new`], but a missing tool is shown by its bare name
    /// (for printing the commands on a machine without the tools).
    pub fn dry_run(req: &FlashRequest, tools: &Toolchain) -> Result<FlashPlan, FlashError> {
        FlashPlan::build(req, tools, false)
    }

    fn build(req: &FlashRequest, tools: &Toolchain, strict: bool) -> Result<FlashPlan, FlashError> {
        let board = req.board;
        let route = req.route.unwrap_or(board.default_route());
        refuse(!board.routes().contains(&route), || {
            format!(
                "route `{route}` does not apply to the {board} (use {})",
                board
                    .routes()
                    .iter()
                    .map(|r| r.name())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        })?;
        let inputs = Inputs::load(req, tools, strict, route)?;
        refuse(req.sd_mount.is_some() && route != Route::Sd, || {
            "an SD card mount is only used by route sd".into()
        })?;
        refuse(req.pci_bdf.is_some() && board != Board::AlveoU200, || {
            format!("the {board} is not a PCIe card (no --pci-bdf)")
        })?;
        let mut host_steps = Vec::new();
        let invocations = match route {
            Route::Jtag => inputs.jtag()?,
            Route::Qspi | Route::Sd => inputs.boot_image(&mut host_steps)?,
            Route::Vivado | Route::Cfgmem => inputs.fpga(&mut host_steps)?,
        };
        let Inputs {
            bitstream,
            firmware,
            ..
        } = inputs;
        Ok(FlashPlan {
            board,
            route,
            bitstream,
            firmware,
            invocations,
            host_steps,
            timeout: req.timeout,
        })
    }

    /// The plan as text: checked inputs, then each command and its script
    /// (with scripts shown under `script_dir`). This is what a dry run prints.
    pub fn describe(&self, script_dir: &Path) -> String {
        let mut s = format!("flash {} via {}\n", self.board, self.route);
        if let Some(b) = &self.bitstream {
            let _ = writeln!(
                s,
                "bitstream {} (sha256 {}, part {}, top {}, {}) — verified",
                b.bitstream.display(),
                b.sha256,
                b.part,
                b.top,
                b.tool_version
            );
        }
        if let Some(f) = &self.firmware {
            let _ = writeln!(
                s,
                "firmware {} (build id {}, config hash {}) — verified",
                f.elf.display(),
                f.image.build_id,
                f.image.config_hash
            );
        }
        for h in self.host_steps.iter().filter(|h| h.when == When::Before) {
            let _ = writeln!(s, "$ {h}");
        }
        for inv in &self.invocations {
            let _ = writeln!(s, "$ {}", inv.command_line(script_dir));
            if !inv.found {
                let _ = writeln!(
                    s,
                    "  ({} not found; install it before flashing)",
                    inv.tool.name()
                );
            }
            if let Some((name, text)) = &inv.script {
                let _ = writeln!(
                    s,
                    "--- {} ---\n{}--- end ---",
                    script_dir.join(name).display(),
                    text
                );
            }
        }
        for h in self.host_steps.iter().filter(|h| h.when == When::After) {
            let _ = writeln!(s, "$ {h}");
        }
        s
    }

    /// Run the plan: write the scripts to a temporary directory, run each
    /// tool there, and report its output and progress to `on_event`.
    pub fn run(&self, on_event: &mut dyn FnMut(&FlashEvent)) -> Result<FlashReport, FlashError> {
        let start = Instant::now();
        let dir = tempfile::Builder::new()
            .prefix("clio-flash-")
            .tempdir()
            .map_err(|source| FlashError::Script {
                path: std::env::temp_dir(),
                source,
            })?;
        let total = self.invocations.len();
        if let Some(inv) = self.invocations.iter().find(|inv| !inv.found) {
            return Err(FlashError::ToolNotFound {
                tool: inv.tool.name(),
                searched: "nothing (plan made for a dry run)".into(),
            });
        }
        for h in self.host_steps.iter().filter(|h| h.when == When::Before) {
            on_event(&FlashEvent::Host {
                label: h.label.clone(),
                command: h.to_string(),
            });
            h.run()?;
        }
        for (i, inv) in self.invocations.iter().enumerate() {
            if !inv.found {
                return Err(FlashError::ToolNotFound {
                    tool: inv.tool.name(),
                    searched: "nothing (plan made for a dry run)".into(),
                });
            }
            if let Some((name, text)) = &inv.script {
                let path = dir.path().join(name);
                std::fs::write(&path, text)
                    .map_err(|source| FlashError::Script { path, source })?;
            }
            on_event(&FlashEvent::Start {
                tool: inv.tool,
                command: inv.command_line(dir.path()),
                index: i + 1,
                total,
            });
            let t = Instant::now();
            run_tool(inv, dir.path(), self.timeout, on_event)?;
            on_event(&FlashEvent::Finished {
                tool: inv.tool,
                elapsed: t.elapsed(),
            });
        }
        for h in self.host_steps.iter().filter(|h| h.when == When::After) {
            on_event(&FlashEvent::Host {
                label: h.label.clone(),
                command: h.to_string(),
            });
            h.run()?;
        }
        Ok(FlashReport {
            board: self.board,
            route: self.route,
            bitstream_sha256: self.bitstream.as_ref().map(|b| b.sha256.clone()),
            firmware_build_id: self.firmware.as_ref().map(|f| f.image.build_id.clone()),
            elapsed: start.elapsed(),
        })
    }
}

/// A request's inputs, checked and loaded, and how to find the tools: what
/// every route's command builder reads.
struct Inputs<'r> {
    req: &'r FlashRequest,
    tools: &'r Toolchain,
    /// Missing tools are errors (else shown by bare name, for dry runs).
    strict: bool,
    board: Board,
    route: Route,
    hw: &'r str,
    psu_init: Option<PathBuf>,
    boot_image: Option<PathBuf>,
    fsbl: Option<PathBuf>,
    xsa: Option<PathBuf>,
    atf: Option<PathBuf>,
    bitstream: Option<BitstreamManifest>,
    firmware: Option<FirmwareManifest>,
    /// Where built outputs go: given, else boot/ beside the bitstream manifest.
    out_dir: Option<PathBuf>,
}

impl<'r> Inputs<'r> {
    fn load(
        req: &'r FlashRequest,
        tools: &'r Toolchain,
        strict: bool,
        route: Route,
    ) -> Result<Inputs<'r>, FlashError> {
        let board = req.board;
        let psu_init = existing("psu_init.tcl", &req.psu_init)?;
        let boot_image = existing("boot image", &req.boot_image)?;
        let fsbl = existing("FSBL", &req.fsbl)?;
        let bitstream = req
            .bitstream_manifest
            .as_deref()
            .map(|f| BitstreamManifest::load(f, board))
            .transpose()?;
        let firmware = req
            .firmware_manifest
            .as_deref()
            .map(|f| FirmwareManifest::load(f, board))
            .transpose()?;
        let xsa = existing("hardware platform (.xsa)", &req.xsa)?;
        let atf = existing("ATF (bl31.elf)", &req.atf)?;
        let out_dir = match (&req.out_dir, &req.bitstream_manifest) {
            (Some(d), _) => Some(absolute(d)),
            (None, Some(m)) => Some(
                absolute(m)
                    .parent()
                    .map_or_else(|| PathBuf::from("boot"), |p| p.join("boot")),
            ),
            (None, None) => None,
        };
        Ok(Inputs {
            req,
            tools,
            strict,
            board,
            route,
            hw: req.hw_server.as_str(),
            psu_init,
            boot_image,
            fsbl,
            xsa,
            atf,
            bitstream,
            firmware,
            out_dir,
        })
    }

    /// A tool's path, and whether it was found.
    fn find(&self, tool: Tool) -> Result<(PathBuf, bool), FlashError> {
        match self.tools.find(tool) {
            Ok(p) => Ok((p, true)),
            Err(_) if !self.strict => Ok((PathBuf::from(tool.name()), false)),
            Err(e) => Err(e),
        }
    }

    /// An invocation of `tool`: its path, or its bare name in a dry run.
    fn invoke(
        &self,
        tool: Tool,
        args: Vec<Arg>,
        script: Option<(String, String)>,
    ) -> Result<Invocation, FlashError> {
        let (program, found) = self.find(tool)?;
        Ok(Invocation {
            tool,
            program,
            found,
            args,
            script,
        })
    }

    /// Route jtag: one xsct script that programs the bitstream and, with a
    /// firmware manifest, loads and starts the firmware.
    fn jtag(&self) -> Result<Vec<Invocation>, FlashError> {
        let (board, hw) = (self.board, self.hw);
        refuse(
            self.boot_image.is_some() || self.fsbl.is_some() || self.atf.is_some(),
            || "a boot image, FSBL or ATF belongs to route qspi or sd, not jtag".into(),
        )?;
        let fw = match (&self.firmware, &self.psu_init, &self.xsa) {
            (Some(fw), Some(init), Some(xsa)) => Some(JtagFirmware {
                elf: &fw.elf,
                psu_init: init,
                xsa,
            }),
            (Some(_), None, _) => {
                return Err(FlashError::Request(
                    "loading firmware over JTAG needs psu_init.tcl (PS clocks and DDR); \
                     take it from the bitstream's hardware platform (.xsa)"
                        .into(),
                ))
            }
            (Some(_), Some(_), None) => {
                return Err(FlashError::Request(
                    "loading firmware over JTAG needs the hardware platform (--xsa, written \
                     next to the bitstream by build.tcl) for xsct's loadhw"
                        .into(),
                ))
            }
            (None, Some(_), _) => {
                return Err(FlashError::Request(
                    "psu_init.tcl given without a firmware manifest".into(),
                ))
            }
            (None, None, _) => None,
        };
        let text = script::xsct_jtag(
            hw,
            self.req.jtag_cable.as_deref(),
            self.bitstream.as_ref().map(|b| b.bitstream.as_path()),
            fw,
        )?;
        Ok(vec![self.invoke(
            Tool::Xsct,
            vec![Arg::Script],
            Some((format!("flash_{}.tcl", board.name()), text)),
        )?])
    }

    /// Routes qspi and sd: a BOOT.BIN (given, or built by xsct and
    /// bootgen), then written to QSPI flash or copied to the SD card.
    fn boot_image(&self, host_steps: &mut Vec<HostStep>) -> Result<Vec<Invocation>, FlashError> {
        let (route, hw) = (self.route, self.hw);
        refuse(self.req.jtag_cable.is_some(), || {
            format!("route {route} cannot select a JTAG cable; leave one board on the hw_server")
        })?;
        refuse(self.psu_init.is_some(), || {
            format!("route {route} boots through the FSBL, which does what psu_init.tcl does")
        })?;
        let mut runs = Vec::new();
        // BOOT.BIN and the FSBL: given, or built here.
        let (image, fsbl_elf) = match (&self.boot_image, &self.fsbl) {
            (Some(image), Some(fsbl)) => {
                refuse(
                    self.bitstream.is_some()
                        || self.firmware.is_some()
                        || self.xsa.is_some()
                        || self.atf.is_some(),
                    || {
                        "a given boot image already holds bitstream and firmware; \
                     pass either --boot-image/--fsbl or the manifests with --xsa and --atf"
                            .into()
                    },
                )?;
                (image.clone(), fsbl.clone())
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(FlashError::Request(
                    "a given boot image needs its FSBL ELF too (--boot-image with --fsbl)".into(),
                ))
            }
            (None, None) => {
                let (Some(bit), Some(fw), Some(xsa), Some(atf), Some(out)) = (
                    &self.bitstream,
                    &self.firmware,
                    &self.xsa,
                    &self.atf,
                    &self.out_dir,
                ) else {
                    return Err(FlashError::Request(format!(
                        "route {route} needs a boot image (BOOT.BIN): either --boot-image and --fsbl, or \
                         --bitstream and --firmware manifests with --xsa (hardware platform) and \
                         --atf (bl31.elf) to build one"
                    )));
                };
                let outputs = BootOutputs::under(out);
                runs.push(self.invoke(
                    Tool::Xsct,
                    vec![Arg::Script],
                    Some((
                        "boot_firmware.tcl".into(),
                        boot::xsct_boot_firmware(xsa, out)?,
                    )),
                )?);
                let bif = boot::zcu106_bif(&outputs, &bit.bitstream, atf, &fw.elf)?;
                let args = boot::bootgen_args(String::new(), &outputs.boot_bin)
                    .into_iter()
                    .map(|a| {
                        if a.is_empty() {
                            Arg::Script
                        } else {
                            Arg::Lit(a)
                        }
                    })
                    .collect();
                runs.push(self.invoke(Tool::Bootgen, args, Some(("boot.bif".into(), bif)))?);
                (outputs.boot_bin, outputs.fsbl)
            }
        };
        if route == Route::Qspi {
            let args = script::program_flash_args(hw, &image, &fsbl_elf)
                .into_iter()
                .map(Arg::Lit)
                .collect();
            runs.push(self.invoke(Tool::ProgramFlash, args, None)?);
        } else {
            let Some(mount) = &self.req.sd_mount else {
                return Err(FlashError::Request(
                    "route sd needs the SD card's mount point (--sd-mount, its first FAT partition)".into(),
                ));
            };
            if !mount.is_dir() {
                return Err(FlashError::MissingInput {
                    what: "SD card mount point",
                    path: mount.clone(),
                });
            }
            host_steps.push(HostStep {
                when: When::After,
                label: "copy BOOT.BIN to the SD card".into(),
                action: host::HostAction::Copy {
                    from: image.clone(),
                    to: absolute(mount).join("BOOT.BIN"),
                },
            });
        }
        Ok(runs)
    }

    /// Routes vivado and cfgmem (the U200): program the FPGA, or write the
    /// configuration memory; PCIe remove/rescan around it for a card in use.
    fn fpga(&self, host_steps: &mut Vec<HostStep>) -> Result<Vec<Invocation>, FlashError> {
        let (board, route, hw) = (self.board, self.route, self.hw);
        refuse(self.firmware.is_some() || self.psu_init.is_some(), || {
            format!("the {board} has no ARM firmware to load")
        })?;
        refuse(
            self.boot_image.is_some()
                || self.fsbl.is_some()
                || self.atf.is_some()
                || self.xsa.is_some(),
            || format!("the {board} is programmed from its bitstream manifest, not a boot image"),
        )?;
        let Some(bit) = &self.bitstream else {
            return Err(FlashError::Request(format!(
                "the {board} needs a bitstream manifest"
            )));
        };
        if let Some(bdf) = &self.req.pci_bdf {
            host_steps.extend(host::pcie_reprogram_steps(&self.req.pci_sysfs, bdf)?);
        }
        let url = hw.strip_prefix("TCP:").unwrap_or(hw);
        let target = match &self.req.jtag_cable {
            Some(c) => {
                script::check_cable(c)?;
                format!("*{c}*")
            }
            None => "*".to_string(),
        };
        let lit = |s: &str| Arg::Lit(s.to_string());
        let mut args = vec![
            lit("-mode"),
            lit("batch"),
            lit("-nojournal"),
            lit("-nolog"),
            lit("-notrace"),
            lit("-source"),
            Arg::Script,
            lit("-tclargs"),
            Arg::Lit(bit.bitstream.display().to_string()),
        ];
        let script = if route == Route::Vivado {
            (
                "program.tcl".to_string(),
                script::VIVADO_PROGRAM_TCL.to_string(),
            )
        } else {
            let out = self
                .out_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from("boot"));
            let stem = bit
                .bitstream
                .file_stem()
                .map_or_else(|| "clio".into(), |s| s.to_string_lossy().into_owned());
            args.push(Arg::Lit(
                out.join(format!("{stem}.mcs")).display().to_string(),
            ));
            ("cfgmem.tcl".to_string(), boot::vivado_cfgmem_tcl())
        };
        args.extend([lit(url), lit(script::U200_DEVICE), Arg::Lit(target)]);
        Ok(vec![self.invoke(Tool::Vivado, args, Some(script))?])
    }
}
