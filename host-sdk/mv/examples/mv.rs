//! Clio-MV end to end over UDP. With no argument it starts an emulated board
//! (with the store registered as offload 2) in this process; with an address
//! it talks to a running `clio sim`:
//!
//! ```sh
//! cargo run --release -p clio-mv --example mv
//! # or, against a board served by `cargo run --release -p clio-cli -- sim`:
//! cargo run --release -p clio-mv --example mv -- 127.0.0.1:47700
//! ```
//!
//! Creates a document, appends versions, reads the latest and older ones,
//! shows the distinct errors of bad input, and times reads of the latest
//! version against reads of older ones.

use std::time::Instant;

use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions};
use clio_mv::{MvClient, MvError, MvOffload, ObjectId, OFFLOAD_ID};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = BoardConfig::embedded("emulator")?;
    let mut server = None;
    let addr = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => {
            let mut board = Board::new(&cfg)?;
            board.register_offload(OFFLOAD_ID, Box::<MvOffload>::default())?;
            let h = clio_emu::spawn(board, "127.0.0.1:0".parse()?, ServeOptions::for_board(&cfg))?;
            let a = h.addr();
            server = Some(h);
            a
        }
    };
    println!("Clio-MV at udp://{addr} (offload {OFFLOAD_ID})");
    let s = Session::open(addr, ClientConfig::from_board(&cfg))?;
    let mut mv = MvClient::new(s);

    // Keep the last 8 versions of up to 64 bytes.
    let doc = mv.create(8, 64)?;
    for text in ["first draft", "second draft", "reviewed", "final"] {
        let v = mv.append(doc, text.as_bytes())?;
        println!("object {doc}: appended version {v} = {text:?}");
    }
    let (v, latest) = mv.read_latest(doc)?;
    println!(
        "latest: version {v} = {:?}",
        String::from_utf8_lossy(&latest)
    );
    println!(
        "version 2 = {:?}",
        String::from_utf8_lossy(&mv.read_version(doc, 2)?)
    );
    for i in 0..6 {
        mv.append(doc, format!("edit {i}").as_bytes())?;
    }
    let info = mv.info(doc)?;
    println!(
        "after 6 more edits: versions {}..={} kept (of {})",
        info.oldest, info.latest, info.versions
    );

    let deleted = mv.create(1, 8)?;
    mv.delete(deleted)?;
    for (what, r) in [
        (
            "version 1 (no longer kept)",
            mv.read_version(doc, 1).map(drop),
        ),
        (
            "version 99 (never appended)",
            mv.read_version(doc, 99).map(drop),
        ),
        ("65-byte value", mv.append(doc, &[0; 65]).map(drop)),
        (
            "an id never issued",
            mv.read_latest(ObjectId(7 << 32 | 999)).map(drop),
        ),
        ("delete twice", mv.delete(deleted)),
    ] {
        let e: MvError = r.expect_err("bad input must fail");
        println!("{what}: {e}");
    }

    // Reading any kept version costs what reading the latest does.
    let obj = mv.create(1000, 16)?;
    for i in 0..1000u32 {
        mv.append(obj, &[i as u8; 16])?;
    }
    let n = 2000u64;
    let t = Instant::now();
    for _ in 0..n {
        mv.read_latest(obj)?;
    }
    let latest_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    for i in 0..n {
        mv.read_version(obj, 1 + (i * 7919) % 1000)?;
    }
    let any_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!(
        "{n} reads of 16-byte values: latest {latest_us:.1} µs, any version {any_us:.1} µs each (one client thread)"
    );
    mv.delete(obj)?;
    mv.delete(doc)?;
    if let Some(h) = server {
        h.stop()?;
    }
    Ok(())
}
