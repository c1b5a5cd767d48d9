//! Steps the host itself performs around the vendor tools: PCIe remove and
//! rescan for an Alveo card being reprogrammed, and copying a boot image to
//! an SD card.
//!
//! An FPGA that is reconfigured drops off the PCIe link; the kernel must
//! forget the old device first (sysfs `remove`) and enumerate the new design
//! after (sysfs `rescan`), so the XDMA driver binds to it (Xilinx's
//! `dma_ip_drivers/XDMA/linux-kernel/xdma/rescan_pcie.sh` does the same
//! writes). Both need root on a real host; tests point them at a directory.

use std::fmt;
use std::path::PathBuf;

use crate::FlashError;

/// When a host step runs relative to the tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Before the first tool.
    Before,
    /// After the last tool.
    After,
}

/// What a host step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostAction {
    /// Write `contents` to the existing file `path` (a sysfs attribute).
    Write {
        /// The file.
        path: PathBuf,
        /// What to write.
        contents: String,
    },
    /// Copy `from` to `to`, then flush `to` to its device.
    Copy {
        /// Source (written by an earlier tool run).
        from: PathBuf,
        /// Destination.
        to: PathBuf,
    },
}

/// One host step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostStep {
    /// When it runs.
    pub when: When,
    /// Progress label.
    pub label: String,
    /// The action.
    pub action: HostAction,
}

impl fmt::Display for HostStep {
    /// The step as the shell command a person would type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.action {
            HostAction::Write { path, contents } => {
                write!(f, "echo {contents} | sudo tee {}", path.display())
            }
            HostAction::Copy { from, to } => {
                write!(f, "cp {} {} && sync", from.display(), to.display())
            }
        }
    }
}

impl HostStep {
    /// Perform the step.
    pub fn run(&self) -> Result<(), FlashError> {
        let fail = |path: &PathBuf, source: std::io::Error| FlashError::HostStep {
            step: self.to_string(),
            path: path.clone(),
            source,
        };
        match &self.action {
            HostAction::Write { path, contents } => {
                // sysfs attributes exist already; never create one.
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| fail(path, e))?;
                std::io::Write::write_all(&mut f, contents.as_bytes()).map_err(|e| fail(path, e))
            }
            HostAction::Copy { from, to } => {
                std::fs::copy(from, to).map_err(|e| fail(from, e))?;
                std::fs::File::open(to)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| fail(to, e))
            }
        }
    }
}

/// The PCIe steps around reprogramming the card at `bdf` (e.g.
/// `0000:65:00.0`) under `sysfs` (`/sys/bus/pci`): remove it before, rescan
/// the bus after.
pub fn pcie_reprogram_steps(
    sysfs: &std::path::Path,
    bdf: &str,
) -> Result<Vec<HostStep>, FlashError> {
    let ok = bdf.len() == 12
        && bdf.char_indices().all(|(i, c)| match i {
            4 | 7 => c == ':',
            10 => c == '.',
            _ => c.is_ascii_hexdigit(),
        });
    if !ok {
        return Err(FlashError::Request(format!(
            "PCIe address `{bdf}` is not DDDD:BB:DD.F (see `lspci -D -d 10ee:`)"
        )));
    }
    Ok(vec![
        HostStep {
            when: When::Before,
            label: format!("remove PCIe device {bdf}"),
            action: HostAction::Write {
                path: sysfs.join("devices").join(bdf).join("remove"),
                contents: "1".into(),
            },
        },
        HostStep {
            when: When::After,
            label: "rescan PCIe".into(),
            action: HostAction::Write {
                path: sysfs.join("rescan"),
                contents: "1".into(),
            },
        },
    ])
}
