//! The board double served over real UDP on loopback from a thread, with an
//! optional loss pattern; stops when dropped.

#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    sent: Arc<AtomicU64>,
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
        let sent = Arc::new(AtomicU64::new(0));
        let (b, st, n_sent) = (board.clone(), stop.clone(), sent.clone());
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
                    if x % 100 >= loss_percent && sock.send_to(&r, from).is_ok() {
                        n_sent.fetch_add(1, Ordering::Release);
                    }
                }
            }
        });
        UdpBoard {
            addr,
            board,
            sent,
            stop,
            thread: Some(thread),
        }
    }
}

impl UdpBoard {
    /// Datagrams the board has handed to its socket so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    /// Block until the board has sent at least `n` datagrams (panics after
    /// 30 s, naming both counts, rather than hang a test).
    pub fn wait_sent(&self, n: u64) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while self.sent() < n {
            assert!(
                std::time::Instant::now() < deadline,
                "board sent {} datagrams, expected {n}",
                self.sent()
            );
            std::thread::sleep(Duration::from_micros(200));
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
