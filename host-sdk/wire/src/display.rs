//! Readable one-line dumps of packets, ring descriptors and PTEs (`Display`), for logs and
//! test failures. Names are the wire names of `REFERENCE.md` (`READ`, `ALLOC_REQ`, ...);
//! header and PTE addresses are in hex, everything else in decimal.

use core::fmt::{self, Display, Formatter, Write};

use crate::clio::Header;
use crate::pte::Pte;
use crate::ring::Descriptor;

impl Display for Header {
    /// `READ req 7 pid 3 va 0x400000 len 64 off 0 plen 0 sess 1/epoch 2 ack 5 status OK`,
    /// with `retry of N` and `flags 0x..` only when set.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} req {}", self.opcode.name(), self.req_id)?;
        if self.retry_of != 0 {
            write!(f, " (retry of {})", self.retry_of)?;
        }
        write!(
            f,
            " pid {} va {:#x} len {} off {} plen {} sess {}/epoch {}",
            self.pid,
            self.va,
            self.total_len,
            self.offset,
            self.payload_len,
            self.session,
            self.epoch
        )?;
        if self.key != 0 {
            f.write_str(" key set")?;
        }
        if self.ack != 0 {
            write!(f, " ack {}", self.ack)?;
        }
        if self.flags != 0 {
            write!(f, " flags {:#04x}", self.flags)?;
        }
        write!(f, " status {}", self.status.name())
    }
}

impl Display for Descriptor {
    /// The ring kind's wire name, then the variant's fields as `Debug` shows them
    /// (`FREE_REQ { tag: 1, pid: 3, ... }`, decimal): every kind, present or added later, is
    /// covered without a list to keep in step.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())?;
        // Drop the Rust variant name that `Debug` prints first; keep its fields.
        let mut out = SkipFirstWord {
            out: f,
            skipping: true,
        };
        write!(out, "{self:?}")
    }
}

/// Forwards text after the first word (and the spaces that follow it).
struct SkipFirstWord<'a, 'b> {
    out: &'a mut Formatter<'b>,
    skipping: bool,
}

impl Write for SkipFirstWord<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if !self.skipping {
            return self.out.write_str(s);
        }
        match s.find(|c: char| !(c.is_alphanumeric() || c == '_')) {
            None => Ok(()),
            Some(i) => {
                self.skipping = false;
                // A fieldless variant prints only its name: nothing remains.
                self.out.write_str(&s[i..])
            }
        }
    }
}

impl Display for Pte {
    /// `pid 3 vpn 0x1 -> ppn 0x20 (2^22 B, rw)` (`unmapped` before the first touch); an
    /// unallocated slot prints `free`.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if !self.allocated {
            return f.write_str("free");
        }
        write!(f, "pid {} vpn {:#x} -> ", self.pid, self.vpn)?;
        if self.valid {
            write!(f, "ppn {:#x}", self.ppn)?;
        } else {
            f.write_str("unmapped")?;
        }
        let r = if self.perms & crate::payload::perms::READ != 0 {
            "r"
        } else {
            "-"
        };
        let w = if self.perms & crate::payload::perms::WRITE != 0 {
            "w"
        } else {
            "-"
        };
        write!(f, " (2^{} B, {r}{w})", self.page_shift)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use crate::clio::{Header, Opcode};
    use crate::pte::Pte;
    use crate::ring::Descriptor;

    #[test]
    fn header_names_the_opcode_and_shows_set_fields_only() {
        let mut h = Header::request(Opcode::Read, 3, 7, 0x40_0000, 64);
        assert_eq!(
            h.to_string(),
            "READ req 7 pid 3 va 0x400000 len 64 off 0 plen 0 sess 0/epoch 0 status OK"
        );
        h.retry_of = 5;
        h.ack = 4;
        h.flags = 1;
        let s = h.to_string();
        assert!(s.starts_with("READ req 7 (retry of 5) pid 3"), "{s}");
        assert!(s.ends_with(" ack 4 flags 0x01 status OK"), "{s}");
    }

    #[test]
    fn descriptor_prints_the_wire_kind_and_its_fields() {
        let d = Descriptor::FreeReq {
            tag: 1,
            pid: 3,
            req_id: 9,
            va: 0x40_0000,
            size: 4096,
        };
        assert_eq!(
            d.to_string(),
            "FREE_REQ { tag: 1, pid: 3, req_id: 9, va: 4194304, size: 4096 }"
        );
    }

    #[test]
    fn pte_shows_mapping_and_rights() {
        let p = Pte {
            pid: 3,
            vpn: 1,
            ppn: 0x20,
            perms: crate::payload::perms::RW,
            allocated: true,
            valid: true,
            page_shift: 22,
        };
        assert_eq!(p.to_string(), "pid 3 vpn 0x1 -> ppn 0x20 (2^22 B, rw)");
        let free = Pte {
            allocated: false,
            ..p
        };
        assert_eq!(free.to_string(), "free");
    }
}
