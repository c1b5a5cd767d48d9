//! The SDK's one error type: every failure a caller can see, typed.

use clio_wire::{Opcode, Status};

/// Which kind of operation failed (named in errors and stats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `rread`.
    Read,
    /// `rwrite`.
    Write,
    /// `ralloc`.
    Alloc,
    /// `rfree`.
    Free,
    /// Test-and-set.
    TestAndSet,
    /// Compare-and-swap.
    CompareAndSwap,
    /// Fetch-and-add.
    FetchAndAdd,
    /// `rlock`.
    Lock,
    /// `runlock`.
    Unlock,
    /// `rfence`.
    Fence,
    /// `rrelease` (local: no packet).
    Release,
    /// Board info query.
    Info,
    /// Open a session (a new address space, or join one).
    OpenSession,
    /// Close this session.
    CloseSession,
    /// `rchase`: a pointer chase executed by the board (`POINTER_CHASE`).
    PointerChase,
    /// `offload_call`: a call of an offload at the memory node (`OFFLOAD_CALL`).
    OffloadCall,
}

impl OpKind {
    /// The request opcode on the wire (`None` for the local `Release`).
    pub const fn opcode(self) -> Option<Opcode> {
        Some(match self {
            OpKind::Read => Opcode::Read,
            OpKind::Write => Opcode::Write,
            OpKind::Alloc => Opcode::Alloc,
            OpKind::Free => Opcode::Free,
            OpKind::TestAndSet => Opcode::TestAndSet,
            OpKind::CompareAndSwap => Opcode::CompareAndSwap,
            OpKind::FetchAndAdd => Opcode::FetchAndAdd,
            OpKind::Lock => Opcode::Lock,
            OpKind::Unlock => Opcode::Unlock,
            OpKind::Fence => Opcode::Fence,
            OpKind::Info => Opcode::Info,
            OpKind::OpenSession => Opcode::OpenSession,
            OpKind::CloseSession => Opcode::CloseSession,
            OpKind::PointerChase => Opcode::PointerChase,
            OpKind::OffloadCall => Opcode::OffloadCall,
            OpKind::Release => return None,
        })
    }

    /// Lower-case name used in messages.
    pub const fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Alloc => "alloc",
            OpKind::Free => "free",
            OpKind::TestAndSet => "test-and-set",
            OpKind::CompareAndSwap => "compare-and-swap",
            OpKind::FetchAndAdd => "fetch-and-add",
            OpKind::Lock => "lock",
            OpKind::Unlock => "unlock",
            OpKind::Fence => "fence",
            OpKind::Release => "release",
            OpKind::Info => "info",
            OpKind::OpenSession => "open-session",
            OpKind::CloseSession => "close-session",
            OpKind::PointerChase => "pointer-chase",
            OpKind::OffloadCall => "offload-call",
        }
    }
}

impl core::fmt::Display for OpKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can go wrong in the SDK.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClioError {
    /// No valid response within the retry budget or the request deadline.
    #[error("{op} request got no valid response{} after {attempts} attempts", at_board(.board))]
    Timeout {
        /// The operation that failed.
        op: OpKind,
        /// Attempts sent (first send included).
        attempts: u32,
        /// The board asked, as its transport names it (`udp://ip:port`);
        /// `None` from the bare state machine and from transports that
        /// have no address.
        board: Option<String>,
    },
    /// The board kept answering `BUSY` (e.g. a held lock) until the request deadline.
    #[error("{op} request still busy after {attempts} attempts")]
    Busy {
        /// The operation that failed.
        op: OpKind,
        /// Attempts sent.
        attempts: u32,
    },
    /// The board restarted since this session was opened (its boot epoch
    /// changed): every session, allocation and lock of the earlier boot is
    /// gone. Every call of the session, in flight or later, fails with this;
    /// open a new session (and rebuild the data) to go on.
    #[error(
        "{op}: the board restarted (epoch now {epoch:#010x}); the session and its memory are gone"
    )]
    BoardRestarted {
        /// The operation that saw it.
        op: OpKind,
        /// The board's current epoch.
        epoch: u32,
    },
    /// The board has no open session matching this session's id, key and
    /// PID (closed, expired, or never opened), or refused a join token.
    #[error("{op}: board refused session {session} (not open, or key/PID mismatch)")]
    BadSession {
        /// The operation.
        op: OpKind,
        /// The session id sent.
        session: u16,
    },
    /// A per-session or per-address-space limit (memory, locks held,
    /// sessions) would be exceeded.
    #[error("{op} at {va:#x}: over the board's quota for this session or address space")]
    OverQuota {
        /// The operation.
        op: OpKind,
        /// Its VA.
        va: u64,
    },
    /// The request asks for more than the board can ever serve in one
    /// request (e.g. an allocation larger than its data region); retrying
    /// cannot help.
    #[error("{op} at {va:#x}: larger than the board serves in one request")]
    TooLarge {
        /// The operation.
        op: OpKind,
        /// Its VA.
        va: u64,
    },
    /// The VA's 1 GiB vRegion migrated away from this memory node (a rack's
    /// node answered `MOVED`); nothing executed. A rack client looks the
    /// region up at the controller and resends to the new owner.
    #[error("{op} at {va:#x}: region moved to another memory node")]
    Moved {
        /// The operation.
        op: OpKind,
        /// Its VA.
        va: u64,
    },
    /// The call needs an open session and this connection has none (not
    /// opened yet, or closed).
    #[error("{op}: no open session")]
    NoSession {
        /// The operation.
        op: OpKind,
    },
    /// The PID is out of the board's range.
    #[error("board does not know PID {pid}")]
    BadPid {
        /// The PID used.
        pid: u32,
    },
    /// The page's permissions forbid the access.
    #[error("{op} at {va:#x}: permission denied")]
    Permission {
        /// The operation.
        op: OpKind,
        /// Its VA.
        va: u64,
    },
    /// The request's range `[va, va + len)` is not entirely inside an
    /// allocated range (the board does not say which byte is outside).
    #[error("{}", unmapped(*.op, *.va, *.len))]
    Unmapped {
        /// The operation.
        op: OpKind,
        /// First byte of the request's range.
        va: u64,
        /// Bytes of the request's range (a read's or write's length, a
        /// free's size, 8 for atomics and locks); 0 when the request names
        /// no range up front (a pointer chase: `va` is where it started).
        len: u64,
    },
    /// The board has no memory (or VA space) left.
    #[error("{op}: board out of memory")]
    OutOfMemory {
        /// The operation.
        op: OpKind,
    },
    /// The board found the request's fields invalid.
    #[error("{op} at {va:#x}: board rejected the request as malformed")]
    Malformed {
        /// The operation.
        op: OpKind,
        /// Its VA.
        va: u64,
    },
    /// The board does not support this request.
    #[error("{op}: not supported by the board")]
    Unsupported {
        /// The operation.
        op: OpKind,
    },
    /// No offload is registered at the board under the id the call named.
    #[error("{op}: no such offload at the board")]
    NoSuchOffload {
        /// The operation.
        op: OpKind,
    },
    /// The offload faulted serving the call (the board keeps serving).
    #[error("{op}: the offload faulted")]
    OffloadFault {
        /// The operation.
        op: OpKind,
    },
    /// The offload refused the call; `code` is its reason (offload-defined).
    #[error("{op}: the offload refused the call (code {code})")]
    OffloadRefused {
        /// The operation.
        op: OpKind,
        /// The offload's reason.
        code: u16,
    },
    /// A checksum-valid response disagrees with its request (a board bug).
    #[error("{op}: response field {field} is inconsistent with the request")]
    Protocol {
        /// The operation.
        op: OpKind,
        /// Dotted name of the response field at fault.
        field: &'static str,
    },
    /// A caller argument is invalid.
    #[error("invalid argument {what}: {reason}")]
    InvalidArgument {
        /// Parameter name.
        what: &'static str,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// A [`crate::ClientConfig`] field is out of range.
    #[error("client config {field}: {reason}")]
    Config {
        /// Field name.
        field: &'static str,
        /// Why it is rejected.
        reason: String,
    },
    /// All operation slots are in use; poll completions first.
    #[error("too many operations outstanding ({max})")]
    QueueFull {
        /// Slot capacity.
        max: usize,
    },
    /// The handle names no outstanding operation (already taken, or foreign).
    #[error("unknown operation handle")]
    UnknownOp,
    /// The backend failed (socket error, closed channel).
    #[error("transport: {0}")]
    Transport(String),
}

fn at_board(board: &Option<String>) -> String {
    board
        .as_ref()
        .map_or_else(String::new, |b| format!(" from the board at {b}"))
}

fn unmapped(op: OpKind, va: u64, len: u64) -> String {
    match va.checked_add(len) {
        Some(end) if len > 0 => format!(
            "{op} of {len} bytes at {va:#x}: [{va:#x}, {end:#x}) is not entirely inside an allocation"
        ),
        _ => format!("{op} at {va:#x}: address not allocated"),
    }
}

impl ClioError {
    /// Name the board a [`ClioError::Timeout`] came from (other errors are
    /// returned unchanged; a board already named is kept).
    pub fn at_board(self, board: Option<&str>) -> ClioError {
        match self {
            ClioError::Timeout {
                op,
                attempts,
                board: None,
            } => ClioError::Timeout {
                op,
                attempts,
                board: board.map(str::to_string),
            },
            e => e,
        }
    }

    /// Map a non-OK response status to an error; `None` for `Ok`, `Busy` and
    /// `Corrupt`, which the transport handles by retrying. `va` and `len`
    /// are the request's range, `session` the id it carried, `epoch` the
    /// one the answer carried.
    #[allow(clippy::too_many_arguments)]
    pub fn from_status(
        status: Status,
        op: OpKind,
        va: u64,
        len: u64,
        pid: u32,
        session: u16,
        epoch: u32,
    ) -> Option<ClioError> {
        Some(match status {
            Status::Ok | Status::Busy | Status::Corrupt => return None,
            Status::BadSession => ClioError::BadSession { op, session },
            Status::Restarted => ClioError::BoardRestarted { op, epoch },
            Status::OverQuota => ClioError::OverQuota { op, va },
            Status::TooLarge => ClioError::TooLarge { op, va },
            Status::Moved => ClioError::Moved { op, va },
            Status::BadPid => ClioError::BadPid { pid },
            Status::Permission => ClioError::Permission { op, va },
            Status::Unmapped => ClioError::Unmapped { op, va, len },
            Status::OutOfMemory => ClioError::OutOfMemory { op },
            Status::Malformed => ClioError::Malformed { op, va },
            Status::Unsupported => ClioError::Unsupported { op },
            Status::NoSuchOffload => ClioError::NoSuchOffload { op },
            Status::OffloadFault => ClioError::OffloadFault { op },
            // The reason code travels in the payload; the connection reads it.
            Status::OffloadRefused => ClioError::OffloadRefused { op, code: 0 },
        })
    }
}

impl ClioError {
    /// An error of one part of a call that the SDK split into several
    /// requests (at `max_request_bytes` or the board's response bound), as
    /// the caller sees it: `Unmapped` names the whole call's range
    /// `[va, va + len)` (the part that failed is not what was asked for);
    /// anything else is unchanged.
    pub fn for_call(self, va: u64, len: u64) -> ClioError {
        match self {
            ClioError::Unmapped { op, .. } => ClioError::Unmapped { op, va, len },
            e => e,
        }
    }
}

impl From<std::io::Error> for ClioError {
    fn from(e: std::io::Error) -> Self {
        ClioError::Transport(e.to_string())
    }
}
