//! Per-source state of the UDP server stays bounded under a flood of
//! distinct source addresses (issue #23, finding 1: one INFO from each of
//! 400 000 loopback addresses used to add ≈ 86 B of RSS per address, never
//! released).
//!
//! - `a_million_sources_keep_the_table_and_heap_flat`: the server's
//!   address table ([`ClientTable`], what `serve` calls per datagram) fed
//!   10^6 distinct synthetic addresses; a counting allocator shows the live
//!   heap is the same after 10^5, 5·10^5 and 10^6 sources, under 256 B per
//!   entry of capacity.
//! - `client_flood_udp.rs` floods a served board from real sockets and
//!   watches its RSS.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use clio_emu::ClientTable;

/// Counts live heap bytes per thread (other tests' threads do not count).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // During thread teardown the counter may be gone; nothing to count then.
    let _ = LIVE.try_with(|c| c.set(c.get() + delta));
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count(l.size() as isize);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        count(l.size() as isize);
        // SAFETY: as for `alloc`; keeps large zeroed buffers (board DRAM)
        // lazily mapped, as without this allocator.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        count(-(l.size() as isize));
        // SAFETY: `p` came from `alloc` with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        count(new as isize - l.size() as isize);
        // SAFETY: as for `dealloc`, and `new` is the caller's valid size.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The `i`-th distinct source: every port of every address in 127.0.0.0/8.
fn source(i: u32) -> SocketAddr {
    let ip = Ipv4Addr::from(0x7f00_0001 + (i >> 10));
    SocketAddr::V4(SocketAddrV4::new(ip, 1024 + (i & 1023) as u16))
}

#[test]
fn a_million_sources_keep_the_table_and_heap_flat() {
    const CAP: usize = 4096;
    let mut t = ClientTable::new(CAP);
    let mut ids = Vec::with_capacity(CAP);
    let mut heap_at = Vec::new();
    let base = live();
    for i in 0..1_000_000u32 {
        let id = t.id(source(i));
        if i >= 1_000_000 - CAP as u32 {
            ids.push((id, source(i)));
        }
        if [9_999, 99_999, 499_999, 999_999].contains(&i) {
            heap_at.push(live() - base);
        }
    }
    let c = t.counters();
    println!(
        "10^6 sources, capacity {CAP}: live {}, evicted {}; table heap after 10^4 / 10^5 / 5*10^5 / 10^6 sources: {heap_at:?} B",
        c.live, c.evicted
    );
    assert_eq!(t.len(), CAP);
    assert_eq!(c.evicted, 1_000_000 - CAP as u64);
    // `ids` itself was allocated before the first sample. Once full, the
    // map rehashes once into twice the buckets (evictions leave tombstones
    // that use up its growth room: hashbrown then doubles rather than
    // rehashing in place when more than half of the buckets are live), then
    // it stays: the same bytes from 10^5 to 10^6 sources.
    assert_eq!(heap_at[1], heap_at[3], "the table's heap grew: {heap_at:?}");
    assert_eq!(heap_at[2], heap_at[3], "the table's heap grew: {heap_at:?}");
    assert!(heap_at[3] <= (CAP * 256) as isize, "{heap_at:?}");
    // The newest CAP sources are the ones held, each under its own id.
    for (id, a) in ids {
        assert_eq!(t.addr(id), Some(a));
    }
}
