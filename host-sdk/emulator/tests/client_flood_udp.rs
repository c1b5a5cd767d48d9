//! Per-source state of a served board stays bounded when thousands of real
//! sockets send to it (issue #23, finding 1), measured as process RSS. Its
//! own test binary, so no other test's allocations move the RSS samples.
//!
//! `thousands_of_real_sources_keep_rss_flat`: a served board answering one
//! INFO from each of 20 000 sockets bound to distinct 127.0.x.y addresses;
//! the table stays at its capacity and the process RSS (`/proc/self/statm`)
//! grows by less than [`RSS_BOUND`] from the sample after the first 2 000
//! sources to the end. Without the bound (capacity 2^24) the same run grew
//! by 1 780 KiB (≈ 100 B per source) and fails; with it, by 72 KiB.

use std::net::{Ipv4Addr, UdpSocket};
use std::time::Duration;

use clio_emu::{Board, ServeOptions};
use clio_wire::{Header, Opcode, Packet};

/// Most RSS the real-socket flood may add after its warm-up.
const RSS_BOUND: u64 = 512 << 10;

fn rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = s.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

#[test]
fn thousands_of_real_sources_keep_rss_flat() {
    const CAP: usize = 512;
    const SOURCES: u32 = 20_000;
    const WARM: u32 = 2_000;
    let cfg = clio_config::BoardConfig::embedded("emulator").unwrap();
    let board = Board::new(&cfg).unwrap();
    let opts = ServeOptions {
        clients: CAP,
        ..ServeOptions::default()
    };
    let h = clio_emu::spawn(board, "127.0.0.1:0".parse().unwrap(), opts).unwrap();
    let info = Header::request(Opcode::Info, 1, 1, 0, 0)
        .encode(&[])
        .unwrap();
    let mut buf = vec![0u8; 2048];
    let mut warm_rss = 0;
    for i in 0..SOURCES {
        // 127.0.x.y, y in 1..=250: thousands of distinct addresses.
        let ip = Ipv4Addr::new(127, 0, 1 + (i / 250) as u8, 1 + (i % 250) as u8);
        let s = UdpSocket::bind((ip, 0)).unwrap_or_else(|e| panic!("bind {ip}: {e}"));
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.send_to(&info, h.addr()).unwrap();
        // The answer says the server has handled (and recorded) this source.
        let (n, _) = s
            .recv_from(&mut buf)
            .unwrap_or_else(|e| panic!("no INFO answer for source {i} ({ip}): {e}"));
        let p = Packet::new_checked(&buf[..n]).unwrap();
        assert_eq!(Header::parse_verified(&p).unwrap().opcode, Opcode::InfoResp);
        if i + 1 == WARM {
            warm_rss = rss_bytes();
        }
    }
    let end_rss = rss_bytes();
    let s = h.stop().unwrap();
    let c = s.clients;
    println!(
        "{SOURCES} real sources, capacity {CAP}: live {}, evicted {}; RSS {} KiB after {WARM}, {} KiB at the end (+{} KiB)",
        c.live,
        c.evicted,
        warm_rss >> 10,
        end_rss >> 10,
        (end_rss as i64 - warm_rss as i64) / 1024
    );
    assert_eq!(c.live, CAP as u64);
    assert_eq!(c.evicted, u64::from(SOURCES) - CAP as u64);
    assert!(
        end_rss < warm_rss + RSS_BOUND,
        "RSS grew by {} KiB over {} sources (bound {} KiB)",
        (end_rss - warm_rss) >> 10,
        SOURCES - WARM,
        RSS_BOUND >> 10
    );
    assert_eq!(s.received, u64::from(SOURCES));
}
