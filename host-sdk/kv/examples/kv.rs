//! Clio-KV end to end over UDP. With no argument it starts an emulated board
//! (with the store registered as offload 1) in this process; with an address
//! it talks to a running `clio sim`:
//!
//! ```sh
//! cargo run --release -p clio-kv --example kv
//! # or, against a board served by `cargo run --release -p clio-cli -- sim`:
//! cargo run --release -p clio-kv --example kv -- 127.0.0.1:47700
//! ```
//!
//! Creates, reads, updates and deletes a few keys, shows the distinct errors
//! of bad input, and times 10 000 reads.

use std::time::Instant;

use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions};
use clio_kv::{KvClient, KvError, KvOffload, OFFLOAD_ID};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = BoardConfig::embedded("emulator")?;
    let mut server = None;
    let addr = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => {
            let mut board = Board::new(&cfg)?;
            board.register_offload(OFFLOAD_ID, Box::<KvOffload>::default())?;
            let h = clio_emu::spawn(board, "127.0.0.1:0".parse()?, ServeOptions::for_board(&cfg))?;
            let a = h.addr();
            server = Some(h);
            a
        }
    };
    println!("Clio-KV at udp://{addr} (offload {OFFLOAD_ID})");
    let s = Session::open(addr, ClientConfig::from_board(&cfg))?;
    let mut kv = KvClient::new(vec![s])?;

    kv.put(b"greeting", b"hello, disaggregated memory")?;
    println!(
        "read greeting -> {:?}",
        String::from_utf8(kv.read(b"greeting")?)?
    );
    kv.update(
        b"greeting",
        b"updated in place? no: written anew, published by one CAS",
    )?;
    println!(
        "read greeting -> {:?}",
        String::from_utf8(kv.read(b"greeting")?)?
    );
    kv.delete(b"greeting")?;
    for (what, r) in [
        ("read after delete", kv.read(b"greeting").map(drop)),
        ("delete twice", kv.delete(b"greeting")),
        ("251-byte key", kv.put(&[b'k'; 251], b"v")),
        ("1025-byte value", kv.put(b"k", &[0; 1025])),
    ] {
        let e: KvError = r.expect_err("bad input must fail");
        println!("{what}: {e}");
    }

    let n = 10_000u32;
    for i in 0..1000u32 {
        kv.put(format!("key{i}").as_bytes(), &[i as u8; 256])?;
    }
    let t = Instant::now();
    for i in 0..n {
        let v = kv.read(format!("key{}", i % 1000).as_bytes())?;
        assert_eq!(v.len(), 256);
    }
    let dt = t.elapsed();
    println!(
        "{n} reads of 256-byte values: {:.1} µs each ({:.0} reads/s, one client thread, one call per round trip)",
        dt.as_secs_f64() * 1e6 / f64::from(n),
        f64::from(n) / dt.as_secs_f64()
    );
    for i in 0..1000u32 {
        kv.delete(format!("key{i}").as_bytes())?;
    }
    if let Some(h) = server {
        h.stop()?;
    }
    Ok(())
}
