//! Boards the benchmarks build: the target config with 4 KiB default pages
//! and DRAM for a given number of them, and an in-process board that keeps
//! the last request packet (so the model's own cost can be timed alone).

use anyhow::{bail, Context, Result};
use clio::backend::{InProcess, InProcessBoard};
use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::Board;

/// Bytes of the small pages the scaling and fault benchmarks map.
pub const SMALL_PAGE: u64 = 4096;

/// `base` with 4 KiB default pages and a data region of at least `pages`
/// of them (the page table grows to match and the data region moves up
/// behind it; DRAM ends with the data region).
pub fn small_page_board(base: &BoardConfig, pages: u64) -> Result<BoardConfig> {
    let mut c = *base;
    if !c.pages.sizes.contains(SMALL_PAGE) {
        bail!(
            "board '{}' has no 4 KiB page size in pages.sizes; the page-table benchmarks need one",
            c.board.name
        );
    }
    c.pages.default_size = SMALL_PAGE;
    let largest = c.pages.sizes.largest();
    let want = pages
        .checked_mul(SMALL_PAGE)
        .context("page count too large")?
        .div_ceil(largest)
        * largest;
    c.regions.data.size = c.regions.data.size.max(want);
    let table = c.page_table_bytes().div_ceil(SMALL_PAGE) * SMALL_PAGE;
    c.regions.page_table.size = c.regions.page_table.size.max(table);
    let end = c.regions.page_table.base + c.regions.page_table.size;
    c.regions.data.base = c.regions.data.base.max(end.div_ceil(largest) * largest);
    c.dram.size = c.regions.data.base + c.regions.data.size - c.dram.base;
    // The benchmarks fill one address space with every page.
    c.sessions.mem_quota_bytes = c.sessions.mem_quota_bytes.max(c.regions.data.size);
    c.validate()
        .map_err(|v| anyhow::anyhow!("derived 4 KiB-page board: {v}"))?;
    Ok(c)
}

/// An emulated board called in process that can keep a copy of the
/// request packets it is handed.
#[derive(Debug)]
pub struct Tap {
    /// The board.
    pub board: Board,
    /// Keep the next packets in `last`.
    pub keep: bool,
    /// The last packet handed over while `keep` was set.
    pub last: Vec<u8>,
}

impl InProcessBoard for Tap {
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        if self.keep {
            self.last.clear();
            self.last.extend_from_slice(pkt);
        }
        // Answers to other clients (there are none on this path) are not
        // this session's.
        self.board.handle(from, pkt, &mut |to, p| {
            if to == from {
                out(p)
            }
        })
    }
}

/// An in-process session (no sockets) on a fresh board from `cfg`.
pub fn in_process(cfg: &BoardConfig) -> Result<Session<InProcess<Tap>>> {
    let board = Board::new(cfg).map_err(anyhow::Error::msg)?;
    let tap = Tap {
        board,
        keep: false,
        last: Vec::new(),
    };
    Session::open_with(InProcess::new(tap, 1), ClientConfig::from_board(cfg))
        .context("opening an in-process session")
}

/// The fast-path model's trace of the last request.
pub fn last_trace(s: &mut Session<InProcess<Tap>>) -> clio_fastpath::Trace {
    *s.transport_mut().board().board.fast().last_trace()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_page_board_holds_the_pages() {
        let base = BoardConfig::embedded("emulator").unwrap();
        for pages in [1u64, 40_000, 1 << 20] {
            let c = small_page_board(&base, pages).unwrap();
            assert_eq!(c.pages.default_size, SMALL_PAGE);
            assert!(c.data_pages(SMALL_PAGE) >= pages);
            assert!(c.regions.page_table.size >= c.page_table_bytes());
            assert!(
                c.sessions.mem_quota_bytes >= pages * SMALL_PAGE,
                "one address space holds them"
            );
            assert_eq!(c.dram.base + c.dram.size, c.regions.data.end());
        }
        // Small counts keep the base's data region.
        let c = small_page_board(&base, 1).unwrap();
        assert_eq!(c.regions.data.size, base.regions.data.size);
    }

    #[test]
    fn in_process_board_answers_and_traces() {
        let base = BoardConfig::embedded("emulator").unwrap();
        let cfg = small_page_board(&base, 64).unwrap();
        let mut s = in_process(&cfg).unwrap();
        let al = s
            .ralloc(2 * SMALL_PAGE, clio_wire::payload::perms::RW)
            .unwrap();
        s.rwrite(al.va, &[9; 16]).unwrap();
        assert!(last_trace(&mut s).faulted());
        let mut b = [0u8; 16];
        s.rread(al.va, &mut b).unwrap();
        assert_eq!(b, [9; 16]);
        assert!(last_trace(&mut s).tlb_hit());
    }
}
