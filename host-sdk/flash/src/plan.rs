//! A flash request, checked and turned into tool invocations.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
        let find = |tool: Tool| -> Result<(PathBuf, bool), FlashError> {
            match tools.find(tool) {
                Ok(p) => Ok((p, true)),
                Err(_) if !strict => Ok((PathBuf::from(tool.name()), false)),
                Err(e) => Err(e),
            }
        };
        let hw = req.hw_server.as_str();
        let invocation = match route {
            Route::Jtag => {
                refuse(boot_image.is_some() || fsbl.is_some(), || {
                    "a boot image and FSBL are written with route qspi, not jtag".into()
                })?;
                let fw =
                    match (&firmware, &psu_init) {
                        (Some(fw), Some(init)) => Some(JtagFirmware {
                            elf: &fw.elf,
                            psu_init: init,
                        }),
                        (Some(_), None) => return Err(FlashError::Request(
                            "loading firmware over JTAG needs psu_init.tcl (PS clocks and DDR); \
                             take it from the bitstream's hardware platform (.xsa)"
                                .into(),
                        )),
                        (None, Some(_)) => {
                            return Err(FlashError::Request(
                                "psu_init.tcl given without a firmware manifest".into(),
                            ))
                        }
                        (None, None) => None,
                    };
                let text = script::xsct_jtag(
                    hw,
                    req.jtag_cable.as_deref(),
                    bitstream.as_ref().map(|b| b.bitstream.as_path()),
                    fw,
                )?;
                let (program, found) = find(Tool::Xsct)?;
                Invocation {
                    tool: Tool::Xsct,
                    program,
                    found,
                    args: vec![Arg::Script],
                    script: Some((format!("flash_{}.tcl", board.name()), text)),
                }
            }
            Route::Qspi => {
                refuse(bitstream.is_some() || firmware.is_some(), || {
                    "route qspi writes a finished boot image (BOOT.BIN holds bitstream and firmware); \
                     manifests are flashed with route jtag"
                        .into()
                })?;
                refuse(req.jtag_cable.is_some(), || {
                    "route qspi cannot select a JTAG cable; leave one board on the hw_server".into()
                })?;
                let (Some(image), Some(fsbl)) = (&boot_image, &fsbl) else {
                    return Err(FlashError::Request(
                        "route qspi needs a boot image (BOOT.BIN) and the FSBL ELF".into(),
                    ));
                };
                let (program, found) = find(Tool::ProgramFlash)?;
                Invocation {
                    tool: Tool::ProgramFlash,
                    program,
                    found,
                    args: script::program_flash_args(hw, image, fsbl)
                        .into_iter()
                        .map(Arg::Lit)
                        .collect(),
                    script: None,
                }
            }
            Route::Vivado => {
                refuse(firmware.is_some() || psu_init.is_some(), || {
                    format!("the {board} has no ARM firmware to load")
                })?;
                refuse(boot_image.is_some() || fsbl.is_some(), || {
                    format!(
                        "the {board} is programmed from its bitstream manifest, not a boot image"
                    )
                })?;
                let Some(bit) = &bitstream else {
                    return Err(FlashError::Request(format!(
                        "the {board} needs a bitstream manifest"
                    )));
                };
                let (program, found) = find(Tool::Vivado)?;
                let url = hw.strip_prefix("TCP:").unwrap_or(hw);
                let target = match &req.jtag_cable {
                    Some(c) => {
                        script::check_cable(c)?;
                        format!("*{c}*")
                    }
                    None => "*".to_string(),
                };
                let lit = |s: &str| Arg::Lit(s.to_string());
                Invocation {
                    tool: Tool::Vivado,
                    program,
                    found,
                    args: vec![
                        lit("-mode"),
                        lit("batch"),
                        lit("-nojournal"),
                        lit("-nolog"),
                        lit("-notrace"),
                        lit("-source"),
                        Arg::Script,
                        lit("-tclargs"),
                        Arg::Lit(bit.bitstream.display().to_string()),
                        lit(url),
                        lit(script::U200_DEVICE),
                        Arg::Lit(target),
                    ],
                    script: Some(("program.tcl".into(), script::VIVADO_PROGRAM_TCL.into())),
                }
            }
        };
        Ok(FlashPlan {
            board,
            route,
            bitstream,
            firmware,
            invocations: vec![invocation],
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
        Ok(FlashReport {
            board: self.board,
            route: self.route,
            bitstream_sha256: self.bitstream.as_ref().map(|b| b.sha256.clone()),
            firmware_build_id: self.firmware.as_ref().map(|f| f.image.build_id.clone()),
            elapsed: start.elapsed(),
        })
    }
}
