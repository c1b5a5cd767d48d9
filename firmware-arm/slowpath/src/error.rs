//! Typed outcomes of slow-path requests and the status each one is answered with.

use clio_wire::Status;
use core::fmt;

/// Why an allocation, free or notice was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowPathError {
    /// An allocation of zero bytes.
    ZeroSize,
    /// More bytes than the VA space or the data region can ever hold.
    Oversize {
        /// Bytes asked for.
        size: u64,
        /// Largest allocation of that page size.
        max: u64,
    },
    /// Permission bits that are empty or not defined.
    BadPerms(u8),
    /// A page shift the board does not support.
    UnsupportedPageSize(u8),
    /// No free VA range of the size is left in the PID's address space.
    VaExhausted,
    /// Every candidate range would overflow a bucket within the retry budget.
    TableFull {
        /// Candidates rejected before giving up.
        retries: u32,
    },
    /// Not enough physical memory to back the allocation.
    PhysExhausted,
    /// The PID has no state here (or is the reserved PID 0).
    UnknownPid(u32),
    /// The PID table is full.
    PidTableFull,
    /// The range table is full.
    RangeTableFull,
    /// A free of a range in which no page is allocated.
    NotAllocated {
        /// First VA of the range.
        va: u64,
    },
    /// A free of a range that is only partly allocated, or that cuts a live range.
    PartiallyAllocated {
        /// First VA of the range.
        va: u64,
    },
    /// A free of a range that was freed before and not allocated since.
    DoubleFree {
        /// First VA of the range.
        va: u64,
    },
    /// A free spanning ranges whose permissions or page sizes differ.
    PermissionMismatch {
        /// Permissions of the first range.
        first: u8,
        /// Permissions of the range that differs.
        other: u8,
    },
    /// A PA-consumed notice naming a page that was not in the free-PA FIFO,
    /// or a slot that does not exist.
    BadNotice,
    /// The slow path is still emitting the commands of the previous request.
    Busy,
    /// No open session for this request: the session id is not open, its
    /// key or PID does not match, or the PID has no open session.
    BadSession,
    /// A new address space was asked for with a nonzero PID.
    PidOnNewSession(u32),
    /// Every session id is in use (`sessions.capacity`).
    SessionTableFull,
    /// Every PID in `1..=va.max_pids` is in use.
    NoFreePid,
    /// The allocation would take the PID past `sessions.mem_quota_bytes`.
    OverQuota {
        /// VA bytes the PID has allocated.
        used: u64,
        /// Its quota.
        quota: u64,
    },
}

impl SlowPathError {
    /// The status a reply carries for this error.
    pub const fn status(&self) -> Status {
        use SlowPathError::*;
        match self {
            ZeroSize | BadPerms(_) | UnsupportedPageSize(_) | BadNotice => Status::Malformed,
            // Retrying cannot help, but the request itself is well formed.
            Oversize { .. } => Status::TooLarge,
            VaExhausted | TableFull { .. } | PhysExhausted | PidTableFull | RangeTableFull => {
                Status::OutOfMemory
            }
            UnknownPid(_) => Status::BadPid,
            NotAllocated { .. } | PartiallyAllocated { .. } | DoubleFree { .. } => Status::Unmapped,
            PermissionMismatch { .. } => Status::Permission,
            Busy => Status::Busy,
            BadSession => Status::BadSession,
            PidOnNewSession(_) => Status::Malformed,
            SessionTableFull | NoFreePid | OverQuota { .. } => Status::OverQuota,
        }
    }
}

impl fmt::Display for SlowPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SlowPathError::*;
        match *self {
            ZeroSize => write!(f, "alloc.size: zero bytes"),
            Oversize { size, max } => write!(f, "alloc.size: {size} bytes exceeds {max}"),
            BadPerms(p) => write!(f, "alloc.perms: invalid bits {p:#x}"),
            UnsupportedPageSize(s) => {
                write!(f, "alloc.page_shift: {s} not supported by this board")
            }
            VaExhausted => write!(f, "VA space exhausted"),
            TableFull { retries } => write!(
                f,
                "page table: no overflow-free range after {retries} retries"
            ),
            PhysExhausted => write!(f, "physical memory exhausted"),
            UnknownPid(p) => write!(f, "pid {p}: unknown"),
            PidTableFull => write!(f, "pid table full"),
            RangeTableFull => write!(f, "range table full"),
            NotAllocated { va } => write!(f, "free.va {va:#x}: not allocated"),
            PartiallyAllocated { va } => write!(f, "free.va {va:#x}: range only partly allocated"),
            DoubleFree { va } => write!(f, "free.va {va:#x}: already freed"),
            PermissionMismatch { first, other } => {
                write!(
                    f,
                    "free: ranges with different permissions ({first:#x} vs {other:#x})"
                )
            }
            BadNotice => write!(f, "pa_consumed: page or slot unknown"),
            Busy => write!(f, "busy emitting the previous request"),
            BadSession => write!(f, "session: not open, or key or pid mismatch"),
            PidOnNewSession(p) => {
                write!(f, "open_session.pid: {p} must be 0 for a new address space")
            }
            SessionTableFull => write!(f, "sessions.capacity: every session id is open"),
            NoFreePid => write!(f, "va.max_pids: every pid is in use"),
            OverQuota { used, quota } => write!(
                f,
                "sessions.mem_quota_bytes: {used} bytes allocated, quota {quota}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way an allocation can fail has its own status: a size no board
    /// state could serve is TOO_LARGE (not MALFORMED), a board that is
    /// merely full is OUT_OF_MEMORY, a PID past its share is OVER_QUOTA.
    #[test]
    fn allocation_errors_map_to_distinct_statuses() {
        use SlowPathError::*;
        let cases = [
            (
                Oversize {
                    size: 1 << 40,
                    max: 1 << 27,
                },
                Status::TooLarge,
            ),
            (ZeroSize, Status::Malformed),
            (BadPerms(0), Status::Malformed),
            (UnsupportedPageSize(13), Status::Malformed),
            (PhysExhausted, Status::OutOfMemory),
            (VaExhausted, Status::OutOfMemory),
            (TableFull { retries: 3 }, Status::OutOfMemory),
            (OverQuota { used: 1, quota: 1 }, Status::OverQuota),
        ];
        for (e, want) in cases {
            assert_eq!(e.status(), want, "{e}");
        }
    }
}
