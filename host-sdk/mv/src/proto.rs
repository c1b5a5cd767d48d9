//! Clio-MV's call format: the arguments after the `OffloadCallReq` of an
//! `OFFLOAD_CALL` to [`crate::OFFLOAD_ID`], its results and its refusal
//! codes. All integers big-endian.
//!
//! | op | arguments | result |
//! |---|---|---|
//! | `CREATE` | `versions: u32`, `value_size: u32` | `id: u64` |
//! | `APPEND` | `id: u64`, `value_len: u32`, `reserved: u32 = 0`, value | `version: u64` |
//! | `READ` | `id: u64`, `version: u64` (0 = the latest) | `version: u64`, value |
//! | `DELETE` | `id: u64` | nothing |
//! | `INFO` | `id: u64` | `latest: u64`, `oldest: u64`, `versions: u32`, `value_size: u32` |
//!
//! `versions` is how many of an object's latest versions are kept (older
//! ones are overwritten in place: a read of one is `VERSION_GONE`);
//! `value_size` bounds every value appended to the object. Versions count
//! from 1; `oldest` is 0 while the object has none.

/// Operations (the `op` of the `OffloadCallReq`).
pub mod op {
    /// Create an object; returns its id.
    pub const CREATE: u16 = 1;
    /// Append a version; returns its number.
    pub const APPEND: u16 = 2;
    /// Read a version (or the latest).
    pub const READ: u16 = 3;
    /// Delete an object (its id may be issued again, with a new generation).
    pub const DELETE: u16 = 4;
    /// An object's version range and shape.
    pub const INFO: u16 = 5;
}

/// Refusal codes (the `code` of an `OFFLOAD_REFUSED` answer).
pub mod code {
    /// The arguments do not parse (length, reserved bits, unknown op).
    pub const BAD_ARGS: u16 = 1;
    /// No object was ever issued under this id.
    pub const NO_SUCH_OBJECT: u16 = 2;
    /// The object was deleted (a read, append or second delete of it).
    pub const DELETED: u16 = 3;
    /// The version was never appended (above the latest, or the object has
    /// none yet).
    pub const NO_SUCH_VERSION: u16 = 4;
    /// The version was appended but is older than the versions kept.
    pub const VERSION_GONE: u16 = 5;
    /// The value is longer than the object's `value_size` (or than
    /// [`crate::MAX_VALUE`]).
    pub const VALUE_TOO_LONG: u16 = 6;
    /// `CREATE` with `versions` or `value_size` of 0, a value size over
    /// [`crate::MAX_VALUE`], or a version array over
    /// [`crate::MAX_ARRAY_BYTES`].
    pub const BAD_SHAPE: u16 = 7;
    /// The store is out of memory, over its quota, or out of object ids.
    pub const FULL: u16 = 8;
}

/// Bytes of `CREATE`'s arguments.
pub const CREATE_LEN: usize = 8;
/// Bytes of `APPEND`'s fixed arguments (before the value).
pub const APPEND_LEN: usize = 16;
/// Bytes of `READ`'s arguments.
pub const READ_LEN: usize = 16;
/// Bytes of `DELETE`'s and `INFO`'s arguments.
pub const ID_LEN: usize = 8;
/// Bytes of `INFO`'s result.
pub const INFO_LEN: usize = 24;

fn be64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(w)
}

fn be32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_be_bytes(w)
}

/// A decoded call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call<'a> {
    /// `CREATE`.
    Create {
        /// Versions kept.
        versions: u32,
        /// Largest value.
        value_size: u32,
    },
    /// `APPEND`.
    Append {
        /// Object.
        id: u64,
        /// The new version's value.
        value: &'a [u8],
    },
    /// `READ`.
    Read {
        /// Object.
        id: u64,
        /// Version (0 = the latest).
        version: u64,
    },
    /// `DELETE`.
    Delete {
        /// Object.
        id: u64,
    },
    /// `INFO`.
    Info {
        /// Object.
        id: u64,
    },
}

impl<'a> Call<'a> {
    /// Decode operation `op` with `args`; `Err(code)` says what is wrong.
    pub fn decode(op: u16, args: &'a [u8]) -> Result<Call<'a>, u16> {
        let exact = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(code::BAD_ARGS)
            }
        };
        match op {
            op::CREATE => {
                exact(CREATE_LEN)?;
                Ok(Call::Create {
                    versions: be32(args, 0),
                    value_size: be32(args, 4),
                })
            }
            op::APPEND => {
                if args.len() < APPEND_LEN || be32(args, 12) != 0 {
                    return Err(code::BAD_ARGS);
                }
                let len = be32(args, 8) as usize;
                exact(APPEND_LEN + len)?;
                Ok(Call::Append {
                    id: be64(args, 0),
                    value: &args[APPEND_LEN..],
                })
            }
            op::READ => {
                exact(READ_LEN)?;
                Ok(Call::Read {
                    id: be64(args, 0),
                    version: be64(args, 8),
                })
            }
            op::DELETE => {
                exact(ID_LEN)?;
                Ok(Call::Delete { id: be64(args, 0) })
            }
            op::INFO => {
                exact(ID_LEN)?;
                Ok(Call::Info { id: be64(args, 0) })
            }
            _ => Err(code::BAD_ARGS),
        }
    }

    /// The operation and its encoded arguments.
    pub fn encode(&self) -> (u16, Vec<u8>) {
        let mut b = Vec::new();
        let op = match *self {
            Call::Create {
                versions,
                value_size,
            } => {
                b.extend_from_slice(&versions.to_be_bytes());
                b.extend_from_slice(&value_size.to_be_bytes());
                op::CREATE
            }
            Call::Append { id, value } => {
                b.extend_from_slice(&id.to_be_bytes());
                b.extend_from_slice(&(value.len() as u32).to_be_bytes());
                b.extend_from_slice(&[0; 4]);
                b.extend_from_slice(value);
                op::APPEND
            }
            Call::Read { id, version } => {
                b.extend_from_slice(&id.to_be_bytes());
                b.extend_from_slice(&version.to_be_bytes());
                op::READ
            }
            Call::Delete { id } => {
                b.extend_from_slice(&id.to_be_bytes());
                op::DELETE
            }
            Call::Info { id } => {
                b.extend_from_slice(&id.to_be_bytes());
                op::INFO
            }
        };
        (op, b)
    }
}

/// Read a big-endian `u64` result at `at` (`None` if the result is short).
pub fn result_u64(b: &[u8], at: usize) -> Option<u64> {
    (b.len() >= at + 8).then(|| be64(b, at))
}

/// Read a big-endian `u32` result at `at` (`None` if the result is short).
pub fn result_u32(b: &[u8], at: usize) -> Option<u32> {
    (b.len() >= at + 4).then(|| be32(b, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser's contract (as a fuzz target would check it, on stable):
    /// any bytes under any op decode or are refused, never panic, and what
    /// decodes encodes back to the same bytes.
    #[test]
    fn any_bytes_decode_or_are_refused_and_round_trip() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let op = (next() % 7) as u16;
            let len = (next() % 40) as usize;
            let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Often a well-formed APPEND length and reserved word.
            if op == op::APPEND && len >= APPEND_LEN && next() % 2 == 0 {
                b[8..12].copy_from_slice(&((len - APPEND_LEN) as u32).to_be_bytes());
                b[12..16].fill(0);
            }
            if let Ok(c) = Call::decode(op, &b) {
                assert_eq!(c.encode(), (op, b.clone()), "{c:?}");
            }
        }
        assert_eq!(Call::decode(op::READ, &[0; 15]), Err(code::BAD_ARGS));
        assert_eq!(Call::decode(0, &[]), Err(code::BAD_ARGS));
    }
}
