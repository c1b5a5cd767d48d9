//! Finding the Xilinx tools: the install named by `XILINX_VITIS` /
//! `XILINX_VIVADO` first, then `PATH`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::FlashError;

/// A vendor tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// Xilinx Software Command-line Tool (XSDB in Tcl), from Vitis.
    Xsct,
    /// Vitis' flash programmer.
    ProgramFlash,
    /// Vivado (batch mode, hardware manager).
    Vivado,
    /// Vitis' boot-image generator.
    Bootgen,
}

impl Tool {
    /// Executable name.
    pub const fn name(self) -> &'static str {
        match self {
            Tool::Xsct => "xsct",
            Tool::ProgramFlash => "program_flash",
            Tool::Vivado => "vivado",
            Tool::Bootgen => "bootgen",
        }
    }

    /// The install-root variable the Xilinx settings script sets for it.
    pub const fn home_var(self) -> &'static str {
        match self {
            Tool::Xsct | Tool::ProgramFlash | Tool::Bootgen => "XILINX_VITIS",
            Tool::Vivado => "XILINX_VIVADO",
        }
    }
}

/// Where to look for tools. [`Toolchain::from_env`] reads the process
/// environment; tests build one by hand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toolchain {
    /// `PATH` entries.
    pub path: Vec<PathBuf>,
    /// `XILINX_VITIS`.
    pub vitis: Option<PathBuf>,
    /// `XILINX_VIVADO`.
    pub vivado: Option<PathBuf>,
}

fn is_executable(p: &Path) -> bool {
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

impl Toolchain {
    /// From `PATH`, `XILINX_VITIS` and `XILINX_VIVADO`.
    pub fn from_env() -> Toolchain {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Toolchain {
            path: std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect(),
            vitis: var("XILINX_VITIS"),
            vivado: var("XILINX_VIVADO"),
        }
    }

    /// Only `PATH` = `dirs`.
    pub fn with_path(dirs: Vec<PathBuf>) -> Toolchain {
        Toolchain {
            path: dirs,
            ..Toolchain::default()
        }
    }

    fn candidates(&self, tool: Tool) -> Vec<PathBuf> {
        let home = match tool {
            Tool::Xsct | Tool::ProgramFlash | Tool::Bootgen => &self.vitis,
            Tool::Vivado => &self.vivado,
        };
        home.iter()
            .map(|h| h.join("bin"))
            .chain(self.path.iter().cloned())
            .map(|d| d.join(tool.name()))
            .collect()
    }

    /// The first executable `tool` in `$XILINX_*/bin`, then `PATH`.
    pub fn find(&self, tool: Tool) -> Result<PathBuf, FlashError> {
        let candidates = self.candidates(tool);
        candidates
            .iter()
            .find(|p| is_executable(p))
            .cloned()
            .ok_or_else(|| FlashError::ToolNotFound {
                tool: tool.name(),
                searched: if candidates.is_empty() {
                    format!("nothing: PATH and {} are empty", tool.home_var())
                } else {
                    format!(
                        "${}/bin and PATH: {}",
                        tool.home_var(),
                        candidates
                            .iter()
                            .filter_map(|c| c.parent())
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(":")
                    )
                },
            })
    }
}
