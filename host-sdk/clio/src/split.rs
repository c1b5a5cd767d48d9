//! Request sizes under the board's response bound.
//!
//! A board states in its INFO reply ([`InfoResp::max_resp_kib`]) the largest
//! response one request may produce; a READ above it is answered
//! `TOO_LARGE` without executing, so that one client's request cannot hold
//! the board's port for longer than the bound takes at line rate (64 KiB:
//! about 57 µs at 10 Gbit/s). The session layers ([`crate::Session`],
//! [`crate::AsyncSession`]) cut `rread`/`rwrite` at the size returned here,
//! behind one handle, before anything reaches [`crate::proto`]; the parts are
//! ordinary requests, so the ordering rules (page-granularity dependencies,
//! strictly ordered synchronous calls, request-level retry, reassembly by
//! offset) apply to each part as to any request, and a split read still
//! lands in the caller's buffer without an intermediate copy.
//!
//! Writes are cut at the same size. The board does not need it for
//! fairness (each write packet is executed and answered on its own, header
//! only, so other clients' requests interleave with a long write at packet
//! granularity), but it bounds what one loss makes the client send again
//! (request-level retry resends the whole request) and the dedup records
//! one request holds until acknowledged.

use clio_wire::payload::InfoResp;

/// The largest request (bytes) to send: `limit` (the client's own cap,
/// `max_request_bytes` or the dedup-quota cap of writes), lowered to the
/// bound `info` states. A board that states none (or no probe yet) leaves
/// `limit`.
pub(crate) fn bounded(limit: u32, info: Option<&InfoResp>) -> u32 {
    match info.and_then(InfoResp::max_resp_bytes) {
        Some(bound) => limit.min(bound).max(1),
        None => limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(kib: u16) -> InfoResp {
        InfoResp {
            board: InfoResp::board_field("t"),
            firmware_version: 0,
            rtl_version: 0,
            build_id: 0,
            config_hash: 0,
            dram_bytes: 0,
            mtu: 1450,
            page_shift: 22,
            slots_per_bucket: 16,
            tlb_entries: 64,
            epoch: 1,
            sessions: 16,
            max_resp_kib: kib,
        }
    }

    #[test]
    fn the_stated_bound_lowers_the_request_size() {
        assert_eq!(bounded(64 << 20, Some(&info(64))), 64 << 10);
        assert_eq!(bounded(16 << 10, Some(&info(64))), 16 << 10);
        assert_eq!(bounded(64 << 20, Some(&info(0))), 64 << 20);
        assert_eq!(bounded(64 << 20, None), 64 << 20);
    }
}
