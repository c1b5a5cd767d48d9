//! A fake clock and a fake network between one `Connection` and a
//! `FakeBoard`: every packet can be delivered, dropped, corrupted,
//! duplicated or delayed by a scripted fault function.

#![allow(dead_code)]

pub mod board;
pub mod udp_board;

pub use board::FakeBoard;

use clio::proto::{Connection, MAX_DATAGRAM};
use clio::{ClioError, Completion, OpId};
use clio_wire::{Header, Packet};

/// Direction of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Client to board.
    ToBoard,
    /// Board to client.
    ToClient,
}

/// What the network does with one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Deliver after the one-way delay.
    Deliver,
    /// Lose it.
    Drop,
    /// Flip a bit in it.
    Corrupt,
    /// Deliver it twice.
    Duplicate,
    /// Deliver after the one-way delay plus this many ns.
    Delay(u64),
}

/// A packet on the wire, logged.
#[derive(Debug, Clone)]
pub struct Sent {
    /// When it left.
    pub at: u64,
    /// Its header (parsed unverified).
    pub h: Header,
}

type Fault = Box<dyn FnMut(Dir, &Header) -> Action>;

/// The simulated world.
pub struct Sim {
    /// Fake clock, ns.
    pub now: u64,
    /// One-way delay, ns.
    pub one_way: u64,
    /// Extra board processing time per request, ns.
    pub service: u64,
    /// The board double.
    pub board: FakeBoard,
    /// The connection under test.
    pub conn: Connection,
    /// Client packets, in send order.
    pub sent: Vec<Sent>,
    /// Board packets, in send order.
    pub replies: Vec<Sent>,
    /// Completions observed, with their time.
    pub done: Vec<(u64, OpId, Result<Completion, ClioError>)>,
    /// The fault script.
    pub fault: Fault,
    wire: Vec<(u64, u64, Dir, Vec<u8>)>,
    seq: u64,
    buf: Vec<u8>,
}

impl Sim {
    /// A world with a 5 µs one-way delay and no faults.
    pub fn new(conn: Connection, board: FakeBoard) -> Self {
        Sim {
            now: 1_000,
            one_way: 5_000,
            service: 0,
            board,
            conn,
            sent: Vec::new(),
            replies: Vec::new(),
            done: Vec::new(),
            fault: Box::new(|_, _| Action::Deliver),
            wire: Vec::new(),
            seq: 0,
            buf: vec![0; MAX_DATAGRAM],
        }
    }

    fn put(&mut self, dir: Dir, at: u64, mut pkt: Vec<u8>) {
        let h = Header::parse(&Packet::new_unchecked(&pkt[..])).expect("own packets parse");
        let log = Sent { at: self.now, h };
        match dir {
            Dir::ToBoard => self.sent.push(log),
            Dir::ToClient => self.replies.push(log),
        }
        let copies = match (self.fault)(dir, &h) {
            Action::Deliver => vec![0],
            Action::Drop => vec![],
            Action::Corrupt => {
                let last = pkt.len() - 1;
                pkt[last.min(20)] ^= 0x40;
                vec![0]
            }
            Action::Duplicate => vec![0, 0],
            Action::Delay(d) => vec![d],
        };
        for extra in copies {
            self.seq += 1;
            self.wire.push((at + extra, self.seq, dir, pkt.clone()));
        }
    }

    /// Flush the connection's transmissions onto the wire.
    pub fn flush(&mut self) {
        while let Some(n) = self.conn.poll_transmit(self.now, &mut self.buf) {
            let pkt = self.buf[..n].to_vec();
            let at = self.now + self.one_way;
            self.put(Dir::ToBoard, at, pkt);
        }
    }

    /// Run one event; false when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.flush();
        let next_wire = self.wire.iter().map(|w| (w.0, w.1)).min();
        let next_timer = self.conn.poll_timeout();
        let t = match (next_wire, next_timer) {
            (None, None) => {
                // Requests can finish without a packet (no session).
                while let Some((id, r)) = self.conn.poll_completion() {
                    self.done.push((self.now, id, r));
                }
                return false;
            }
            (Some((w, _)), None) => w,
            (None, Some(t)) => t,
            (Some((w, _)), Some(t)) => w.min(t),
        };
        self.now = self.now.max(t);
        // Deliver every packet due now, in (time, seq) order.
        loop {
            let due = self
                .wire
                .iter()
                .enumerate()
                .filter(|(_, w)| w.0 <= self.now)
                .min_by_key(|(_, w)| (w.0, w.1))
                .map(|(i, _)| i);
            let Some(i) = due else { break };
            let (_, _, dir, pkt) = self.wire.swap_remove(i);
            match dir {
                Dir::ToBoard => {
                    let mut out = Vec::new();
                    self.board.handle(&pkt, &mut |r| out.push(r));
                    let at = self.now + self.one_way + self.service;
                    for r in out {
                        self.put(Dir::ToClient, at, r);
                    }
                }
                Dir::ToClient => self.conn.handle_packet(self.now, &pkt),
            }
        }
        self.conn.handle_timeout(self.now);
        while let Some((id, r)) = self.conn.poll_completion() {
            self.done.push((self.now, id, r));
        }
        true
    }

    /// Run until nothing is left to happen (bounded).
    pub fn run(&mut self) {
        for _ in 0..1_000_000 {
            if !self.step() {
                return;
            }
        }
        panic!("simulation did not settle");
    }

    /// Submit, run to quiescence, and return that operation's result.
    pub fn call(&mut self, req: clio::Request<'_>) -> Result<Completion, ClioError> {
        let id = self.conn.submit(req)?;
        self.run();
        self.result(id)
    }

    /// The recorded result of `id`.
    pub fn result(&self, id: OpId) -> Result<Completion, ClioError> {
        self.done
            .iter()
            .find(|d| d.1 == id)
            .map(|d| d.2.clone())
            .unwrap_or_else(|| panic!("operation {id:?} did not complete"))
    }

    /// When `id` completed.
    pub fn done_at(&self, id: OpId) -> u64 {
        self.done
            .iter()
            .find(|d| d.1 == id)
            .map(|d| d.0)
            .expect("completed")
    }

    /// Client packets of one opcode.
    pub fn sent_of(&self, op: clio_wire::Opcode) -> Vec<Sent> {
        self.sent
            .iter()
            .filter(|s| s.h.opcode == op)
            .cloned()
            .collect()
    }
}

/// Allocate `size` bytes read-write and return the VA.
pub fn alloc(sim: &mut Sim, size: u64) -> u64 {
    match sim.call(clio::Request::Alloc {
        size,
        perms: clio_wire::payload::perms::RW,
        page_shift: 0,
        fixed_va: None,
    }) {
        Ok(Completion::Allocated(a)) => a.va,
        other => panic!("alloc failed: {other:?}"),
    }
}
