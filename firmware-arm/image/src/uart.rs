//! Cadence UART (Zynq UltraScale+ `UART0`/`UART1`) driver, polled.
//!
//! Exposed through the `embedded-io` traits (the serial interface of the
//! embedded-hal 1.0 family), so the logger and any later console use the
//! same driver the HAL ecosystem expects.

use core::convert::Infallible;
use core::ptr::{read_volatile, write_volatile};

/// Control register.
const CR: usize = 0x00;
/// Mode register.
const MR: usize = 0x04;
/// Interrupt disable register.
const IDR: usize = 0x0c;
/// Baud rate generator (clock divisor CD).
const BAUDGEN: usize = 0x18;
/// Channel status register.
const SR: usize = 0x2c;
/// TX/RX FIFO.
const FIFO: usize = 0x30;
/// Baud rate divider (BDIV).
const BAUDDIV: usize = 0x34;

const CR_RXRST: u32 = 1 << 0;
const CR_TXRST: u32 = 1 << 1;
const CR_RXEN: u32 = 1 << 2;
const CR_RXDIS: u32 = 1 << 3;
const CR_TXEN: u32 = 1 << 4;
const CR_TXDIS: u32 = 1 << 5;
/// Mode: 8 data bits, no parity, 1 stop bit, normal channel mode.
const MR_8N1: u32 = 0b100 << 3;
const SR_RXEMPTY: u32 = 1 << 1;
const SR_TXEMPTY: u32 = 1 << 3;
const SR_TXFULL: u32 = 1 << 4;

/// Baud divider settings `(CD, BDIV)` for `ref_hz` and `baud`:
/// `baud = ref_hz / (CD × (BDIV + 1))`, choosing the pair with the smallest
/// error (BDIV 4..=255, CD 1..=65535, as the TRM allows).
pub const fn divisors(ref_hz: u32, baud: u32) -> Option<(u32, u32)> {
    if baud == 0 {
        return None;
    }
    let mut best: Option<(u32, u32)> = None;
    let mut best_err = u64::MAX;
    let mut bdiv = 4u32;
    while bdiv <= 255 {
        let denom = baud as u64 * (bdiv as u64 + 1);
        let cd = (ref_hz as u64 + denom / 2) / denom;
        if cd >= 1 && cd <= 65535 {
            let actual = ref_hz as u64 / (cd * (bdiv as u64 + 1));
            let err = actual.abs_diff(baud as u64);
            if err < best_err {
                best_err = err;
                best = Some((cd as u32, bdiv));
            }
        }
        bdiv += 1;
    }
    best
}

/// One Cadence UART instance.
pub struct Uart {
    base: usize,
}

impl Uart {
    /// Driver for the UART whose registers start at `base`.
    ///
    /// # Safety
    /// `base` must be the address of a Cadence UART register block, and the
    /// caller must not use two drivers with conflicting settings at once.
    pub const unsafe fn new(base: usize) -> Self {
        Self { base }
    }

    fn reg_read(&self, reg: usize) -> u32 {
        // SAFETY: `new` requires `base` to be a UART register block.
        unsafe { read_volatile((self.base + reg) as *const u32) }
    }

    fn reg_write(&self, reg: usize, value: u32) {
        // SAFETY: `new` requires `base` to be a UART register block.
        unsafe { write_volatile((self.base + reg) as *mut u32, value) }
    }

    /// Reset both FIFOs and configure 8N1 at `baud` from a `ref_hz`
    /// reference clock, with interrupts disabled. Returns `false` (leaving
    /// the UART untouched) if no divisor pair reaches that baud rate.
    pub fn init(&mut self, ref_hz: u32, baud: u32) -> bool {
        let Some((cd, bdiv)) = divisors(ref_hz, baud) else {
            return false;
        };
        // Let bytes a loader left in the FIFO drain before resetting it
        // (only a running transmitter drains; a disabled one never would).
        let cr = self.reg_read(CR);
        if cr & CR_TXEN != 0 && cr & CR_TXDIS == 0 {
            self.wait_idle();
        }
        self.reg_write(CR, CR_TXDIS | CR_RXDIS);
        self.reg_write(IDR, 0x1fff);
        self.reg_write(MR, MR_8N1);
        self.reg_write(BAUDGEN, cd);
        self.reg_write(BAUDDIV, bdiv);
        self.reg_write(CR, CR_TXRST | CR_RXRST | CR_TXDIS | CR_RXDIS);
        self.reg_write(CR, CR_TXEN | CR_RXEN);
        true
    }

    /// Send one byte, waiting while the TX FIFO is full.
    pub fn write_byte(&mut self, byte: u8) {
        while self.reg_read(SR) & SR_TXFULL != 0 {}
        self.reg_write(FIFO, u32::from(byte));
    }

    /// Wait until every queued byte has left the transmitter.
    pub fn wait_idle(&mut self) {
        while self.reg_read(SR) & SR_TXEMPTY == 0 {}
    }
}

impl embedded_io::ErrorType for Uart {
    type Error = Infallible;
}

impl embedded_io::Write for Uart {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        for &b in buf {
            self.write_byte(b);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Infallible> {
        self.wait_idle();
        Ok(())
    }
}

impl embedded_io::WriteReady for Uart {
    fn write_ready(&mut self) -> Result<bool, Infallible> {
        Ok(self.reg_read(SR) & SR_TXFULL == 0)
    }
}

impl embedded_io::ReadReady for Uart {
    fn read_ready(&mut self) -> Result<bool, Infallible> {
        Ok(self.reg_read(SR) & SR_RXEMPTY == 0)
    }
}

impl embedded_io::Read for Uart {
    /// Blocks until at least one byte arrives, then returns what is queued.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.reg_read(SR) & SR_RXEMPTY != 0 {}
        let mut n = 0;
        while n < buf.len() && self.reg_read(SR) & SR_RXEMPTY == 0 {
            buf[n] = self.reg_read(FIFO) as u8;
            n += 1;
        }
        Ok(n)
    }
}
