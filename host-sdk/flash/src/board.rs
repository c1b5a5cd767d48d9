//! The boards we flash, their FPGA parts, and how each is flashed.

use std::fmt;

use crate::FlashError;

/// A board kind (named as in `board-configs/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Board {
    /// Xilinx ZCU106 (Zynq UltraScale+ ZU7EV): Clio memory board.
    Zcu106,
    /// Alveo U200 PCIe card: EDM fabric.
    AlveoU200,
}

impl Board {
    /// Every board.
    pub const ALL: [Board; 2] = [Board::Zcu106, Board::AlveoU200];

    /// Name as in the board configs and manifests.
    pub const fn name(self) -> &'static str {
        match self {
            Board::Zcu106 => "zcu106",
            Board::AlveoU200 => "alveo-u200",
        }
    }

    /// The FPGA part (must equal the `BOARDS` table of `bitstream/build.tcl`;
    /// a test checks it).
    pub const fn part(self) -> &'static str {
        match self {
            Board::Zcu106 => "xczu7ev-ffvc1156-2-e",
            Board::AlveoU200 => "xcu200-fsgd2104-2-e",
        }
    }

    /// The flash route used when none is asked for.
    pub const fn default_route(self) -> Route {
        match self {
            Board::Zcu106 => Route::Jtag,
            Board::AlveoU200 => Route::Vivado,
        }
    }

    /// Routes this board supports.
    pub const fn routes(self) -> &'static [Route] {
        match self {
            Board::Zcu106 => &[Route::Jtag, Route::Qspi, Route::Sd],
            Board::AlveoU200 => &[Route::Vivado, Route::Cfgmem],
        }
    }

    /// Parse a board name.
    pub fn parse(name: &str) -> Result<Board, FlashError> {
        Board::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| {
                FlashError::Request(format!(
                    "unknown board `{name}` (known: zcu106, alveo-u200)"
                ))
            })
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a board is flashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// ZCU106 over JTAG with `xsct`: program the PL, initialise the PS,
    /// load the firmware ELF into DDR and start it (volatile: lost at power-off).
    Jtag,
    /// ZCU106: write a boot image (`BOOT.BIN`, given or built from the
    /// `.xsa`, bitstream, ATF and firmware) to the QSPI flash with
    /// `program_flash` (the board boots it in QSPI boot mode).
    Qspi,
    /// ZCU106: build `BOOT.BIN` and copy it to a mounted SD card (the board
    /// boots it in SD boot mode).
    Sd,
    /// Alveo U200: program the FPGA over JTAG with `vivado -mode batch` and
    /// `bitstream/program.tcl` (hw_server, `program_hw_devices`; volatile).
    Vivado,
    /// Alveo U200: write the bitstream into the card's configuration flash
    /// (`write_cfgmem` + `program_hw_cfgmem`) and boot the FPGA from it
    /// (persistent across power cycles).
    Cfgmem,
}

impl Route {
    /// Name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Route::Jtag => "jtag",
            Route::Qspi => "qspi",
            Route::Sd => "sd",
            Route::Vivado => "vivado",
            Route::Cfgmem => "cfgmem",
        }
    }

    /// Parse a route name.
    pub fn parse(name: &str) -> Result<Route, FlashError> {
        [
            Route::Jtag,
            Route::Qspi,
            Route::Sd,
            Route::Vivado,
            Route::Cfgmem,
        ]
        .into_iter()
        .find(|r| r.name() == name)
        .ok_or_else(|| {
            FlashError::Request(format!(
                "unknown route `{name}` (known: jtag, qspi, sd, vivado, cfgmem)"
            ))
        })
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
