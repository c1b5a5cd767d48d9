//! The board double served over real UDP on loopback from a thread, with an
//! optional loss pattern; stops when dropped.

#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::FakeBoard;

/// A running UDP board.
pub struct UdpBoard {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The board state (lock to inspect).
    pub board: Arc<Mutex<FakeBoard>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl UdpBoard {
    /// Serve on 127.0.0.1, losing each received and each sent packet with
    /// probability `loss_percent` / 100 (deterministic pseudo-random sequence).
    pub fn start(mtu: usize, loss_percent: u64) -> UdpBoard {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let board = Arc::new(Mutex::new(FakeBoard::new(mtu)));
        let stop = Arc::new(AtomicBool::new(false));
        let (b, st) = (board.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            let mut x: u64 = 0x2545_f491_4f6c_dd1d;
            while !st.load(Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x % 100 < loss_percent {
                    continue;
                }
                let mut out = Vec::new();
                b.lock().unwrap().handle(&buf[..n], &mut |r| out.push(r));
                for r in out {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if x % 100 >= loss_percent {
                        let _ = sock.send_to(&r, from);
                    }
                }
            }
        });
        UdpBoard {
            addr,
            board,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for UdpBoard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
