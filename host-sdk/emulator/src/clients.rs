//! The server's table of client addresses: a bounded map from UDP source
//! address to the [`ClientId`] the engine sees, with least-recently-used
//! eviction.
//!
//! **Why ids carry a generation.** The engine keeps a [`ClientId`] for as long
//! as it owes that client an answer: a request forwarded to the slow path
//! waits in the fast-path model's pending table with its sender's id, a fence
//! waits with its id, and the faulty links hold ids of delayed datagrams. If
//! an evicted client's id were handed to a new address, such a late answer
//! would go to the new address. So an id is `generation << 32 | slot`: a slot
//! taken over by another address gets the next generation, and [`ClientTable::addr`]
//! answers only for the current one. A late answer for an evicted client is
//! dropped (counted in [`ClientCounters::unroutable`]); that client retries,
//! as after any loss, and its retry gets a fresh id. A slot's id repeats only
//! after 2^32 evictions of that slot, far longer than any answer can wait.
//!
//! Memory is fixed by the capacity: at most `capacity` slots and map entries
//! (about 100 bytes per client), whatever the number of source addresses.

use std::collections::HashMap;
use std::net::SocketAddr;

use crate::server::ClientId;

/// No neighbour in the recency list.
const NIL: u32 = u32::MAX;

/// Largest capacity: slot numbers fit the low 32 bits of an id, with
/// `u32::MAX` (no neighbour in the recency list) kept free.
pub const MAX_CAPACITY: usize = (u32::MAX - 1) as usize;

/// One remembered address and its place in the recency list.
#[derive(Debug, Clone, Copy)]
struct Slot {
    addr: SocketAddr,
    /// Generation of the id currently naming this slot.
    gen: u32,
    /// Towards the least recently used end.
    older: u32,
    /// Towards the most recently used end.
    newer: u32,
}

/// Counters of a [`ClientTable`] (shown by `clio info` for an emulated board).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientCounters {
    /// Addresses the table holds now.
    pub live: u64,
    /// Most addresses it may hold (`network.clients`).
    pub capacity: u64,
    /// Addresses dropped to make room for a new one, since start.
    pub evicted: u64,
    /// Answers for an id whose address was evicted, dropped, since start.
    pub unroutable: u64,
}

/// A bounded address-to-id table with LRU eviction.
#[derive(Debug)]
pub struct ClientTable {
    ids: HashMap<SocketAddr, u32>,
    slots: Vec<Slot>,
    capacity: usize,
    /// Least recently used slot, or [`NIL`].
    oldest: u32,
    /// Most recently used slot, or [`NIL`].
    newest: u32,
    evicted: u64,
    unroutable: u64,
}

fn id_of(slot: u32, gen: u32) -> ClientId {
    (u64::from(gen) << 32) | u64::from(slot)
}

impl ClientTable {
    /// An empty table holding at most `capacity` addresses (clamped to
    /// `1..=MAX_CAPACITY`). Nothing is allocated up front.
    pub fn new(capacity: usize) -> ClientTable {
        ClientTable {
            ids: HashMap::new(),
            slots: Vec::new(),
            capacity: capacity.clamp(1, MAX_CAPACITY),
            oldest: NIL,
            newest: NIL,
            evicted: 0,
            unroutable: 0,
        }
    }

    /// The id of `addr`, which becomes the most recently used address. A new
    /// address takes a free slot, or the least recently used address's slot
    /// under a new generation.
    pub fn id(&mut self, addr: SocketAddr) -> ClientId {
        if let Some(&s) = self.ids.get(&addr) {
            self.touch(s);
            return id_of(s, self.slots[s as usize].gen);
        }
        let s = if self.slots.len() < self.capacity {
            let s = self.slots.len() as u32;
            self.slots.push(Slot {
                addr,
                gen: 0,
                older: NIL,
                newer: NIL,
            });
            s
        } else {
            let s = self.oldest;
            self.unlink(s);
            let slot = &mut self.slots[s as usize];
            self.ids.remove(&slot.addr);
            slot.addr = addr;
            slot.gen = slot.gen.wrapping_add(1);
            self.evicted += 1;
            s
        };
        self.ids.insert(addr, s);
        self.push_newest(s);
        id_of(s, self.slots[s as usize].gen)
    }

    /// The address `id` names, if it is still the current id of its slot.
    /// Does not change recency: only requests keep a client alive.
    pub fn addr(&self, id: ClientId) -> Option<SocketAddr> {
        let slot = self.slots.get((id & 0xffff_ffff) as usize)?;
        (u64::from(slot.gen) == id >> 32).then_some(slot.addr)
    }

    /// [`ClientTable::addr`], counting a miss as an unroutable answer.
    pub fn route(&mut self, id: ClientId) -> Option<SocketAddr> {
        let a = self.addr(id);
        if a.is_none() {
            self.unroutable += 1;
        }
        a
    }

    /// Addresses held now.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no address is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The counters.
    pub fn counters(&self) -> ClientCounters {
        ClientCounters {
            live: self.ids.len() as u64,
            capacity: self.capacity as u64,
            evicted: self.evicted,
            unroutable: self.unroutable,
        }
    }

    fn unlink(&mut self, s: u32) {
        let Slot { older, newer, .. } = self.slots[s as usize];
        match older {
            NIL => self.oldest = newer,
            o => self.slots[o as usize].newer = newer,
        }
        match newer {
            NIL => self.newest = older,
            n => self.slots[n as usize].older = older,
        }
    }

    fn push_newest(&mut self, s: u32) {
        let prev = self.newest;
        {
            let slot = &mut self.slots[s as usize];
            slot.older = prev;
            slot.newer = NIL;
        }
        match prev {
            NIL => self.oldest = s,
            p => self.slots[p as usize].newer = s,
        }
        self.newest = s;
    }

    fn touch(&mut self, s: u32) {
        if self.newest != s {
            self.unlink(s);
            self.push_newest(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, SocketAddrV4};

    fn a(n: u32) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(0x0a00_0000 + n), 7))
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut t = ClientTable::new(3);
        let (i1, i2, i3) = (t.id(a(1)), t.id(a(2)), t.id(a(3)));
        assert_eq!(t.id(a(1)), i1, "a known address keeps its id");
        // 2 is now the least recently used.
        let i4 = t.id(a(4));
        assert_eq!(t.addr(i2), None);
        assert_eq!(t.addr(i1), Some(a(1)));
        assert_eq!(t.addr(i3), Some(a(3)));
        assert_eq!(t.addr(i4), Some(a(4)));
        assert_ne!(i4, i2, "the slot is reused under a new generation");
        assert_eq!(i4 & 0xffff_ffff, i2 & 0xffff_ffff);
        // 2 comes back: it evicts 3 (1 was used after 3).
        let i2b = t.id(a(2));
        assert_ne!(i2b, i2);
        assert_eq!(t.addr(i3), None);
        assert_eq!(t.len(), 3);
        let c = t.counters();
        assert_eq!((c.live, c.capacity, c.evicted), (3, 3, 2));
        assert_eq!(t.route(i2), None);
        assert_eq!(t.counters().unroutable, 1);
    }

    #[test]
    fn an_old_id_never_names_a_new_address() {
        // Every id ever handed out either names its own address or nothing.
        let mut t = ClientTable::new(4);
        let mut seen: Vec<(ClientId, SocketAddr)> = Vec::new();
        let mut x = 12345u32;
        for _ in 0..5000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let addr = a(x >> 28);
            let id = t.id(addr);
            seen.push((id, addr));
            for &(i, ad) in &seen[seen.len().saturating_sub(64)..] {
                if let Some(now) = t.addr(i) {
                    assert_eq!(now, ad);
                }
            }
        }
        assert!(t.counters().evicted > 1000);
    }
}
