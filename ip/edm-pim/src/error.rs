//! Typed errors of the scheduler.

use thiserror::Error;

/// A configuration field is out of range.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// `ports` must be in `2..=max`.
    #[error("config field `ports` = {ports} is out of range (2..={max})")]
    Ports {
        /// The rejected value.
        ports: usize,
        /// The largest supported port count.
        max: usize,
    },
    /// A field that must be positive is zero.
    #[error("config field `{field}` must be positive")]
    Zero {
        /// Name of the field.
        field: &'static str,
    },
}

/// A notification was refused; the scheduler state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotifyError {
    /// `src` or `dst` is not a port of this switch.
    #[error("notification field `{field}` = {port} is not a port (switch has {ports} ports)")]
    PortOutOfRange {
        /// `"src"` or `"dst"`.
        field: &'static str,
        /// The rejected port.
        port: u16,
        /// Number of ports.
        ports: usize,
    },
    /// Source and destination are the same port.
    #[error("notification has src = dst = {port}; a port cannot send to itself")]
    SelfLoop {
        /// The port.
        port: u16,
    },
    /// The message has no bytes to transfer.
    #[error("notification field `bytes` is 0 for {src}->{dst}")]
    ZeroLength {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// The ordering lane is not below [`crate::MAX_LANES`].
    #[error("notification lane {lane} is out of range (lanes 0..{max})")]
    LaneOutOfRange {
        /// The rejected lane.
        lane: u8,
        /// [`crate::MAX_LANES`].
        max: u8,
    },
    /// The pair already has `X` active notifications (the sender broke its rate limit).
    #[error("pair {src}->{dst} already has {limit} active notifications (X)")]
    PairFull {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
        /// The configured `X`.
        limit: u32,
    },
    /// The destination's notification queue holds `capacity` entries already.
    #[error("notification queue of destination {dst} is full ({capacity} entries)")]
    QueueFull {
        /// Destination port.
        dst: u16,
        /// The configured queue capacity.
        capacity: u32,
    },
}
