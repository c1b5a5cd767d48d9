//! A radix tree in remote memory, against an emulated board started in this
//! process and served over UDP on loopback (nothing to set up):
//!
//! ```sh
//! cargo run --release -p clio-radix --example radix
//! ```
//!
//! Inserts a few keys, looks them up by `rchase` (one pointer chase per
//! level) and by `rread` (one round trip per list entry), and prints the
//! round trips each took, counted by the SDK.

use clio::backend::UdpTransport;
use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions};
use clio_radix::RadixTree;

fn round_trips(s: &Session<UdpTransport>) -> u64 {
    s.connection().stats().requests_sent
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = BoardConfig::embedded("emulator")?;
    let server = clio_emu::spawn(
        Board::new(&cfg)?,
        "127.0.0.1:0".parse()?,
        ServeOptions::for_board(&cfg),
    )?;
    println!("emulated board on udp://{}", server.addr());
    let mut s = Session::open(server.addr(), ClientConfig::from_board(&cfg))?;

    // 8 levels of 8 bits: 64-bit keys.
    let mut tree = RadixTree::create(&mut s, 8, 8)?;
    println!("tree root at {:#x}", tree.root());
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut keys = Vec::new();
    for i in 0..1000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        tree.insert(&mut s, x, i)?;
        keys.push(x);
    }
    println!("inserted {} keys", keys.len());
    for &k in keys.iter().take(3).chain([0xdead_beef_u64].iter()) {
        let before = round_trips(&s);
        let a = tree.get(&mut s, k)?;
        let chase = round_trips(&s) - before;
        let before = round_trips(&s);
        let b = tree.get_rread(&mut s, k)?;
        let rread = round_trips(&s) - before;
        assert_eq!(a, b);
        println!("key {k:#018x} -> {a:?}: rchase {chase} round trips, rread {rread}");
    }
    s.close()?;
    server.stop()?;
    Ok(())
}
