//! Cumulative counters of the model (the RTL exposes the same set as
//! status registers).

/// Counters since construction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets handed to `receive`.
    pub packets_in: u64,
    /// Packets shorter than a header, dropped silently.
    pub runts: u64,
    /// Responses or NACKs arriving at the board, dropped silently.
    pub stray_responses: u64,
    /// NACKs sent (integrity check failed or payload truncated).
    pub nacks: u64,
    /// Responses sent with status `Malformed`.
    pub malformed: u64,
    /// Responses sent with status `BadPid`.
    pub bad_pid: u64,
    /// Responses sent with status `Unmapped`.
    pub unmapped: u64,
    /// Responses sent with status `Permission`.
    pub permission: u64,
    /// Responses sent with status `Busy`.
    pub busy: u64,
    /// Responses sent with status `Unsupported`.
    pub unsupported: u64,
    /// Responses sent with status `BadSession` (no valid session credentials).
    pub bad_session: u64,
    /// Responses sent with status `Restarted` (a session of an earlier boot).
    pub restarted: u64,
    /// Responses sent with status `OverQuota`.
    pub over_quota: u64,
    /// Reads refused `TOO_LARGE` (above `network.max_response_bytes`).
    pub too_large: u64,
    /// Non-idempotent requests refused with `Busy` because the dedup buffer
    /// or the session's share of it was full.
    pub dedup_busy: u64,
    /// Dedup records freed by acknowledgements.
    pub dedup_acked: u64,
    /// Non-idempotent packets dropped as late duplicates of requests the
    /// client had already acknowledged (id before the session's ack floor).
    pub stale_duplicates: u64,
    /// Sessions installed by the slow path.
    pub sessions_opened: u64,
    /// Sessions cleared by the slow path.
    pub sessions_closed: u64,
    /// Response packets sent (all kinds, NACKs included).
    pub packets_out: u64,
    /// Translations served by the TLB.
    pub tlb_hits: u64,
    /// Translations that read a bucket.
    pub tlb_misses: u64,
    /// First-touch faults taken.
    pub faults: u64,
    /// Faults refused because the free-PA FIFO of the page size was empty.
    pub fifo_empty: u64,
    /// Requests answered from the dedup buffer.
    pub duplicates: u64,
    /// Requests forwarded to the slow path.
    pub forwarded: u64,
    /// Forwarded requests refused because the RX ring or the tag table was full.
    pub forward_busy: u64,
    /// Retries or duplicates of a request still waiting in the slow path.
    pub pending_retargets: u64,
    /// Faults refused because the RX ring had no room for the PA-consumed notice.
    pub rx_full_faults: u64,
    /// TX commands executed.
    pub tx_commands: u64,
    /// TX slots rejected (malformed, or a command that failed its checks).
    pub tx_rejected: u64,
    /// Error reports pushed to the RX ring.
    pub error_reports: u64,
    /// Page-table slots that matched a tag but failed to parse or pointed
    /// outside the data region.
    pub pte_errors: u64,
    /// DRAM accesses.
    pub dram_accesses: u64,
    /// Pipeline cycles over all requests.
    pub cycles: u64,
    /// READs whose answer was interleaved with other requests: sent past
    /// their first packet by [`crate::FastPath::pump`].
    pub read_streams: u64,
    /// Interleaved READs cut short because a page of theirs was unmapped
    /// (or lost READ) before its packet was sent.
    pub read_streams_cut: u64,
}
