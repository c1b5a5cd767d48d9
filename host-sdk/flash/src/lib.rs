//! Flashing boards: bitstreams and firmware through the Xilinx tools,
//! driven from build manifests. The library behind `clio flash`.
//!
//! 1. Describe what to flash in a [`FlashRequest`] (board, route, the
//!    manifests written by `bitstream/build.tcl` and
//!    `firmware-arm/image/package.sh`, or a boot image for QSPI).
//! 2. [`FlashPlan::new`] checks everything before any tool runs: manifest
//!    keys, board and part, that every file exists, the bitstream's SHA-256,
//!    the firmware ELF's build id and config hash; and finds the tools
//!    (`$XILINX_VITIS/bin`, `$XILINX_VIVADO/bin`, then `PATH`).
//!    [`FlashPlan::describe`] prints the commands and scripts (dry run).
//! 3. [`FlashPlan::run`] writes the generated script, runs the tool, and
//!    streams [`FlashEvent`]s: output lines, steps, percentages (for a
//!    progress bar). A failing tool becomes [`FlashError::ToolFailed`] with
//!    its last output lines.
//!
//! Routes ([`Route`]): ZCU106 over JTAG with `xsct` (PL bitstream, PS init,
//! firmware ELF into DDR; volatile), to QSPI with `program_flash` or to an
//! SD card, both with a `BOOT.BIN` built here ([`boot`]: FSBL and PMU
//! firmware from the `.xsa` with xsct, then `bootgen`) or given; Alveo U200
//! with `vivado -mode batch` and `bitstream/program.tcl` (volatile) or into
//! its configuration memory (`write_cfgmem`, persistent), each with PCIe
//! remove/rescan around it ([`host`]). See `README.md` beside this crate.

mod board;
pub mod boot;
mod error;
pub mod host;
pub mod manifest;
mod plan;
pub mod progress;
mod run;
pub mod script;
mod tools;

pub use board::{Board, Route};
pub use error::FlashError;
pub use manifest::{BitstreamManifest, FirmwareManifest};
pub use plan::{
    FlashPlan, FlashReport, FlashRequest, Invocation, DEFAULT_HW_SERVER, DEFAULT_TIMEOUT,
};
pub use progress::ProgressTracker;
pub use run::{FlashEvent, Stream};
pub use tools::{Tool, Toolchain};
