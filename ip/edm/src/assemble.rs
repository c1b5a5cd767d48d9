//! Reassembly of memory-side blocks ([`MemBlock`]) into messages, notifications and grants.
//! Malformed input is counted and dropped; the assembler is ready for the next message.

use clio_wire::edm::{self, Block66, GrantRepr, MsgHeader, NotifyRepr};

use crate::phy::MemBlock;

/// A whole memory message as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Parsed header.
    pub header: MsgHeader,
    /// Body bytes (address, operands, data as the kind requires).
    pub body: Vec<u8>,
    /// Cycle the first block was received.
    pub head: u64,
    /// Cycle the last block was received.
    pub tail: u64,
}

/// What a completed unit of memory blocks turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemEvent {
    /// A memory message.
    Message(Message),
    /// A demand notification.
    Notify(NotifyRepr, u64),
    /// A grant.
    Grant(GrantRepr, u64),
}

/// Error counters of the assembler.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AsmCounters {
    /// Messages, /N/ or /G/ blocks with a field out of range (header parse failed).
    pub bad_field: u64,
    /// Messages whose block count disagreed with their header.
    pub bad_length: u64,
}

/// Streaming assembler for one link.
#[derive(Debug, Clone, Default)]
pub struct Assembler {
    cur: Vec<Block66>,
    head: u64,
    /// Error counters.
    pub counters: AsmCounters,
}

impl Assembler {
    /// A fresh assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Header of the message in progress, if its first block has been seen and parses.
    pub fn current_header(&self) -> Option<MsgHeader> {
        self.cur
            .first()
            .and_then(|b| MsgHeader::parse_payload(b.payload).ok())
    }

    /// Feed one memory block received at `cycle`.
    pub fn push(&mut self, cycle: u64, b: MemBlock) -> Option<MemEvent> {
        match b {
            MemBlock::Start(blk) => {
                // The RX shim already counted a message cut short by this start.
                self.cur.clear();
                self.cur.push(blk);
                self.head = cycle;
                None
            }
            MemBlock::Data(blk) => {
                self.cur.push(blk);
                None
            }
            MemBlock::End(blk) => {
                self.cur.push(blk);
                let blocks = std::mem::take(&mut self.cur);
                self.finish(&blocks, self.head, cycle)
            }
            MemBlock::Single(blk) => self.finish(&[blk], cycle, cycle),
            MemBlock::Notify(blk) => match NotifyRepr::parse(&blk) {
                Ok(n) => Some(MemEvent::Notify(n, cycle)),
                Err(_) => {
                    self.counters.bad_field += 1;
                    None
                }
            },
            MemBlock::Grant(blk) => match GrantRepr::parse(&blk) {
                Ok(g) => Some(MemEvent::Grant(g, cycle)),
                Err(_) => {
                    self.counters.bad_field += 1;
                    None
                }
            },
        }
    }

    fn finish(&mut self, blocks: &[Block66], head: u64, tail: u64) -> Option<MemEvent> {
        let header = match MsgHeader::parse_payload(blocks[0].payload) {
            Ok(h) => h,
            Err(_) => {
                self.counters.bad_field += 1;
                return None;
            }
        };
        if header.wire_blocks() != blocks.len() {
            self.counters.bad_length += 1;
            return None;
        }
        let mut body = vec![0u8; header.body_len()];
        match edm::parse_message(blocks, &mut body) {
            Ok(_) => Some(MemEvent::Message(Message {
                header,
                body,
                head,
                tail,
            })),
            Err(_) => {
                self.counters.bad_field += 1;
                None
            }
        }
    }
}

/// Encode a message into blocks.
pub fn encode(header: &MsgHeader, body: &[u8]) -> Result<Vec<Block66>, edm::Error> {
    let mut out = vec![Block66::default(); header.wire_blocks()];
    let n = edm::emit_message(header, body, &mut out)?;
    out.truncate(n);
    Ok(out)
}
