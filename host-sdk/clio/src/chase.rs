//! `rchase`: a pointer chase with value compare, executed by the board
//! (`POINTER_CHASE`, the extend path of dissertation §3.4.6).
//!
//! The board walks a linked structure in the session's address space: from
//! the node at [`ChaseRequest::va`] it compares the 8-byte little-endian key
//! at `key_offset` of each node with [`ChaseRequest::key`]; on a match it
//! returns the node's VA and `value_len` bytes at `value_offset` of it;
//! otherwise it follows the 8-byte little-endian pointer at `next_offset`
//! (0 ends the list), visiting at most `max_hops` nodes. One request, one
//! answer: a lookup that would take one `rread` per node takes one round
//! trip.
//!
//! Outcomes ([`ChaseOutcome`]):
//! - `Found`: a node's key matched.
//! - `End`: the walk reached a null `next` after fewer than `max_hops` nodes.
//! - `HopLimit`: `max_hops` nodes were visited without a match. This is
//!   **not an error** but a distinct result with `hops == max_hops`: the
//!   list may continue (a longer list, or a cycle in a corrupt structure),
//!   or, the wire does not tell, it may end exactly at the cap. Choose
//!   `max_hops` above the longest legitimate list (e.g. a radix level's
//!   fan-out + 1) and `HopLimit` then means corruption.
//!
//! Errors: a node, key, next pointer or value outside the address space is
//! the board's `UNMAPPED`, returned as [`crate::ClioError::Unmapped`] with
//! `op` = [`crate::OpKind::PointerChase`] and `va` = the chase's start VA
//! (the board's answer does not say which node's pointer was bad; a
//! client that needs it re-walks the list with `rread`). Fields out of the
//! wire's ranges are refused before sending as
//! [`crate::ClioError::InvalidArgument`].
//!
//! Ordering: the pages a chase reads are not known before it runs, so it is
//! ordered as a barrier (it waits for every earlier operation of the
//! session and later ones wait for it, like a fence without a packet):
//! a chase always sees the session's earlier writes.

use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::{ChaseReq, ChaseResp};

use crate::ClioError;

/// The fields of one pointer chase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChaseRequest {
    /// VA of the first node.
    pub va: u64,
    /// Key searched for (compared with the node's 8-byte little-endian word).
    pub key: u64,
    /// Offset of the key within a node.
    pub key_offset: u16,
    /// Offset of the next-node pointer within a node (0 ends the list).
    pub next_offset: u16,
    /// Offset of the value within the matching node.
    pub value_offset: u16,
    /// Value bytes returned on a match: at most [`ChaseRequest::MAX_VALUE`]
    /// and at most the board's MTU minus the 16-byte result header.
    pub value_len: u16,
    /// Most nodes visited: 1..=[`ChaseRequest::MAX_HOPS`].
    pub max_hops: u32,
}

impl ChaseRequest {
    /// Largest `value_len` the wire allows.
    pub const MAX_VALUE: u16 = ChaseReq::MAX_VALUE;
    /// Largest `max_hops` the wire allows.
    pub const MAX_HOPS: u32 = ChaseReq::MAX_HOPS;

    /// Check the fields against the wire's limits for a payload of `mtu`
    /// bytes per packet.
    pub fn validate(&self, mtu: usize) -> Result<(), ClioError> {
        if self.max_hops == 0 || self.max_hops > Self::MAX_HOPS {
            return Err(ClioError::InvalidArgument {
                what: "max_hops",
                reason: "must be in 1..=4096",
            });
        }
        if self.value_len > Self::MAX_VALUE {
            return Err(ClioError::InvalidArgument {
                what: "value_len",
                reason: "must be at most 1024",
            });
        }
        if ChaseResp::LEN + self.value_len as usize > mtu {
            return Err(ClioError::InvalidArgument {
                what: "value_len",
                reason: "16 + value_len exceeds the MTU",
            });
        }
        Ok(())
    }

    /// The request payload on the wire.
    pub fn wire(&self) -> ChaseReq {
        ChaseReq {
            key: self.key,
            key_offset: self.key_offset,
            next_offset: self.next_offset,
            value_offset: self.value_offset,
            value_len: self.value_len,
            max_hops: self.max_hops,
        }
    }

    /// Bytes of the largest answer (header, result, value).
    pub fn response_bytes(&self) -> u64 {
        (HEADER_LEN + ChaseResp::LEN + self.value_len as usize) as u64
    }
}

/// How a chase ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChaseOutcome {
    /// A node's key matched.
    Found {
        /// VA of the matching node.
        node_va: u64,
        /// `value_len` bytes at `value_offset` of that node.
        value: Vec<u8>,
    },
    /// The list ended (a null `next`) before `max_hops` nodes, without a match.
    End,
    /// `max_hops` nodes were visited without a match (the list continues,
    /// a cycle, or it ends exactly at the cap: the wire does not tell).
    HopLimit,
}

/// The result of a chase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChaseResult {
    /// Nodes visited (1..=`max_hops`).
    pub hops: u32,
    /// How the walk ended.
    pub outcome: ChaseOutcome,
}

impl ChaseResult {
    /// The matching node's value, if found.
    pub fn value(&self) -> Option<&[u8]> {
        match &self.outcome {
            ChaseOutcome::Found { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The matching node's VA, if found.
    pub fn node_va(&self) -> Option<u64> {
        match self.outcome {
            ChaseOutcome::Found { node_va, .. } => Some(node_va),
            _ => None,
        }
    }

    /// Decode an OK answer's payload to `req`; `Err(field)` names the
    /// response field that contradicts the request.
    pub(crate) fn decode(req: &ChaseReq, payload: &[u8]) -> Result<ChaseResult, &'static str> {
        let r = ChaseResp::parse(payload).map_err(|e| e.field)?;
        if r.hops == 0 || r.hops > req.max_hops {
            return Err("chase_resp.hops");
        }
        let rest = &payload[ChaseResp::LEN..];
        let outcome = if r.found {
            if rest.len() != req.value_len as usize {
                return Err("clio.payload_len");
            }
            ChaseOutcome::Found {
                node_va: r.node_va,
                value: rest.to_vec(),
            }
        } else {
            if !rest.is_empty() {
                return Err("clio.payload_len");
            }
            if r.node_va != 0 {
                return Err("chase_resp.node_va");
            }
            if r.hops == req.max_hops {
                ChaseOutcome::HopLimit
            } else {
                ChaseOutcome::End
            }
        };
        Ok(ChaseResult {
            hops: r.hops,
            outcome,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(node_va: u64, hops: u32, found: bool, value: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; ChaseResp::LEN];
        ChaseResp {
            node_va,
            hops,
            found,
        }
        .emit(&mut b)
        .unwrap();
        b.extend_from_slice(value);
        b
    }

    fn req(value_len: u16, max_hops: u32) -> ChaseReq {
        ChaseRequest {
            va: 0x1000,
            key: 7,
            key_offset: 0,
            next_offset: 8,
            value_offset: 16,
            value_len,
            max_hops,
        }
        .wire()
    }

    #[test]
    fn answers_decode_to_outcomes() {
        let r = ChaseResult::decode(&req(4, 10), &resp(0x2000, 3, true, &[1, 2, 3, 4])).unwrap();
        assert_eq!(r.hops, 3);
        assert_eq!(r.node_va(), Some(0x2000));
        assert_eq!(r.value(), Some(&[1, 2, 3, 4][..]));
        let r = ChaseResult::decode(&req(4, 10), &resp(0, 9, false, &[])).unwrap();
        assert_eq!((r.hops, r.outcome), (9, ChaseOutcome::End));
        let r = ChaseResult::decode(&req(4, 10), &resp(0, 10, false, &[])).unwrap();
        assert_eq!((r.hops, r.outcome.clone()), (10, ChaseOutcome::HopLimit));
        assert_eq!(r.value(), None);
        assert_eq!(r.node_va(), None);
    }

    #[test]
    fn answers_that_contradict_the_request_name_the_field() {
        let q = req(4, 10);
        let bad = |p: Vec<u8>| ChaseResult::decode(&q, &p).unwrap_err();
        assert_eq!(bad(resp(0x2000, 3, true, &[1, 2])), "clio.payload_len");
        assert_eq!(bad(resp(0, 3, false, &[1])), "clio.payload_len");
        assert_eq!(bad(resp(0, 0, false, &[])), "chase_resp.hops");
        assert_eq!(bad(resp(0, 11, false, &[])), "chase_resp.hops");
        assert_eq!(bad(resp(0x40, 2, false, &[])), "chase_resp.node_va");
        assert_eq!(bad(vec![0; 8]), "chase_resp.payload");
        let mut p = resp(0, 2, false, &[]);
        p[15] = 2;
        assert_eq!(bad(p), "chase_resp.found");
    }

    #[test]
    fn arguments_are_checked_against_the_wire() {
        let ok = ChaseRequest {
            va: 0,
            key: 0,
            key_offset: 0,
            next_offset: 8,
            value_offset: 0,
            value_len: 1024,
            max_hops: 4096,
        };
        assert_eq!(ok.validate(1450), Ok(()));
        assert_eq!(ok.response_bytes(), 56 + 16 + 1024);
        let what = |r: ChaseRequest, mtu| match r.validate(mtu) {
            Err(ClioError::InvalidArgument { what, .. }) => what,
            other => panic!("{other:?}"),
        };
        assert_eq!(what(ChaseRequest { max_hops: 0, ..ok }, 1450), "max_hops");
        assert_eq!(
            what(
                ChaseRequest {
                    max_hops: 4097,
                    ..ok
                },
                1450
            ),
            "max_hops"
        );
        assert_eq!(
            what(
                ChaseRequest {
                    value_len: 1025,
                    ..ok
                },
                9000
            ),
            "value_len"
        );
        assert_eq!(what(ok, 1039), "value_len");
        assert_eq!(ok.validate(1040), Ok(()));
    }
}
