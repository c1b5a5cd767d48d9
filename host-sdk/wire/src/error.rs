//! The one error type of the wire crate: what went wrong, and which field.

use core::fmt;

/// A malformed or truncated buffer, naming the field at fault.
///
/// Parsers never panic on input bytes; they return this instead, so the
/// board can answer with a `Malformed` status and keep serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    /// Dotted name of the field at fault, e.g. `"clio.opcode"`.
    pub field: &'static str,
    /// What is wrong with it.
    pub kind: ErrorKind,
}

/// What is wrong with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The buffer ends before the field does.
    Truncated {
        /// Bytes needed to hold the whole structure.
        need: usize,
        /// Bytes present.
        have: usize,
    },
    /// The field holds a value that no format version defines.
    Unknown(u64),
    /// The field's value is out of its allowed range.
    OutOfRange {
        /// The value found.
        value: u64,
        /// The largest allowed value.
        max: u64,
    },
    /// An integrity check did not match.
    Checksum {
        /// Value carried by the buffer.
        carried: u32,
        /// Value computed over the buffer.
        computed: u32,
    },
    /// Two fields disagree (e.g. a payload that runs past the request).
    Inconsistent,
    /// A reserved field or bit is not zero.
    Reserved(u64),
}

impl Error {
    /// Shorthand constructor.
    pub const fn new(field: &'static str, kind: ErrorKind) -> Self {
        Error { field, kind }
    }

    /// A truncation error for `field`.
    pub const fn truncated(field: &'static str, need: usize, have: usize) -> Self {
        Error::new(field, ErrorKind::Truncated { need, have })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Truncated { need, have } => {
                write!(
                    f,
                    "{}: buffer too short ({have} bytes, need {need})",
                    self.field
                )
            }
            ErrorKind::Unknown(v) => write!(f, "{}: unknown value {v:#x}", self.field),
            ErrorKind::OutOfRange { value, max } => {
                write!(f, "{}: value {value} out of range (max {max})", self.field)
            }
            ErrorKind::Checksum { carried, computed } => write!(
                f,
                "{}: checksum mismatch (carried {carried:#010x}, computed {computed:#010x})",
                self.field
            ),
            ErrorKind::Inconsistent => write!(f, "{}: inconsistent with other fields", self.field),
            ErrorKind::Reserved(v) => write!(f, "{}: reserved bits set ({v:#x})", self.field),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// Result alias for wire parsing.
pub type Result<T> = core::result::Result<T, Error>;

/// Fixed-offset little/big-endian field access on byte slices whose length
/// the caller has already checked; every accessor is bounds-checked by
/// construction of the caller (`check_len`).
pub(crate) mod bytes {
    use core::ops::Range;

    /// Where a value sits: a byte offset, or a [`Field`](crate::Field) whose
    /// width must match the value's.
    pub(crate) trait Place {
        /// The bytes of a value `width` bytes wide.
        fn bytes(self, width: usize) -> Range<usize>;
    }

    impl Place for usize {
        #[inline]
        fn bytes(self, width: usize) -> Range<usize> {
            self..self + width
        }
    }

    impl Place for Range<usize> {
        #[inline]
        fn bytes(self, width: usize) -> Range<usize> {
            debug_assert_eq!(self.len(), width, "field {self:?} is not {width} bytes");
            self
        }
    }

    macro_rules! rw {
        ($get:ident, $set:ident, $t:ty, $from:ident, $to:ident) => {
            #[inline]
            pub(crate) fn $get(b: &[u8], at: impl Place) -> $t {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(&b[at.bytes(core::mem::size_of::<$t>())]);
                <$t>::$from(a)
            }
            #[inline]
            pub(crate) fn $set(b: &mut [u8], at: impl Place, v: $t) {
                b[at.bytes(core::mem::size_of::<$t>())].copy_from_slice(&v.$to());
            }
        };
    }
    rw!(be16, set_be16, u16, from_be_bytes, to_be_bytes);
    rw!(be32, set_be32, u32, from_be_bytes, to_be_bytes);
    rw!(be64, set_be64, u64, from_be_bytes, to_be_bytes);
    rw!(le16, set_le16, u16, from_le_bytes, to_le_bytes);
    rw!(le32, set_le32, u32, from_le_bytes, to_le_bytes);
    rw!(le64, set_le64, u64, from_le_bytes, to_le_bytes);
}
