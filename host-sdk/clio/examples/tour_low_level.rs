//! The program of `tour.rs` on the low-level calls only (`u64` VAs, byte
//! buffers, permission bits, the nested `rpoll` result), as it had to be
//! written before the typed layer; kept to compare line counts (SDK README)
//! and to show the old calls still work.
//! Run: `clio sim &` then `cargo run -p clio --example tour_low_level [-- ADDR]`.
use std::net::{SocketAddr, ToSocketAddrs};

use clio::{AsyncSession, Client, ClientConfig, ClioError, Completion, Session};
use clio_wire::payload::perms;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Record {
    id: u64,
    score: f64,
    tag: [u8; 16],
}

const RECORD_LEN: usize = 32;
const RECORDS: u64 = 1000;

impl Record {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(&self.score.to_le_bytes());
        out.extend_from_slice(&self.tag);
    }

    fn decode(b: &[u8]) -> Record {
        Record {
            id: u64::from_le_bytes(b[0..8].try_into().unwrap()),
            score: f64::from_le_bytes(b[8..16].try_into().unwrap()),
            tag: b[16..32].try_into().unwrap(),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1);
    let board: SocketAddr = addr
        .as_deref()
        .unwrap_or("127.0.0.1:47700")
        .to_socket_addrs()?
        .next()
        .ok_or("no address")?;
    let cfg = ClientConfig {
        request_timeout_ns: 10_000_000_000,
        ..ClientConfig::default()
    };
    let client = Client::new(board, cfg)?;
    let mut s = client.session()?;

    // A 64 MiB allocation.
    let mem = s.ralloc(64 << 20, perms::RW)?;

    // An array of records.
    let recs: Vec<Record> = (0..RECORDS)
        .map(|i| Record {
            id: i,
            score: i as f64 / 2.0,
            tag: [i as u8; 16],
        })
        .collect();
    let mut bytes = Vec::with_capacity(recs.len() * RECORD_LEN);
    for r in &recs {
        r.encode(&mut bytes);
    }
    s.rwrite(mem.va, &bytes)?;
    let mut back = vec![0u8; bytes.len()];
    s.rread(mem.va, &mut back)?;
    let got: Vec<Record> = back.chunks_exact(RECORD_LEN).map(Record::decode).collect();
    assert_eq!(got, recs);
    let mut one = [0u8; RECORD_LEN];
    s.rread(mem.va + 7 * RECORD_LEN as u64, &mut one)?;
    assert_eq!(Record::decode(&one), recs[7]);

    // A counter under a lock, from 4 threads.
    let (lock, counter) = (mem.va + (32 << 20), mem.va + (32 << 20) + 8);
    std::thread::scope(|t| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                t.spawn(|| -> Result<(), ClioError> {
                    let mut s = client.session()?;
                    for _ in 0..25 {
                        s.rlock(lock)?;
                        let mut w = [0u8; 8];
                        let r = s.rread(counter, &mut w).and_then(|()| {
                            let n = u64::from_le_bytes(w) + 1;
                            s.rwrite(counter, &n.to_le_bytes())
                        });
                        s.runlock(lock)?;
                        r?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("worker panicked"))
    })?;
    let mut w = [0u8; 8];
    s.rread(counter, &mut w)?;
    assert_eq!(u64::from_le_bytes(w), 100);

    // 10 000 async reads.
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let a = AsyncSession::join(board, client.share(), ClientConfig::default()).await?;
        let reads: Vec<_> = (0..10_000u64)
            .map(|i| {
                a.rread(
                    mem.va + (i % RECORDS) * RECORD_LEN as u64,
                    RECORD_LEN as u64,
                )
            })
            .collect();
        for (i, r) in reads.into_iter().enumerate() {
            assert_eq!(Record::decode(&r.await?), recs[i % RECORDS as usize]);
        }
        Ok::<_, ClioError>(())
    })?;

    // The blocking asynchronous calls: rpoll's nested result.
    let h = s.rread_async(mem.va, 8)?;
    match s.rpoll(&[h])?.remove(0) {
        Ok(Completion::Read(d)) => assert_eq!(d, recs[0].id.to_le_bytes()),
        other => panic!("{other:?}"),
    }

    // The error cases.
    let e = s.ralloc(1 << 40, perms::RW).unwrap_err();
    assert!(matches!(e, ClioError::TooLarge { .. }), "{e}");
    let e = s.ralloc(1 << 20, perms::RW).unwrap_err();
    assert!(matches!(e, ClioError::OverQuota { .. }), "{e}");
    let mut big = vec![0u8; 8 << 20];
    let e = s.rread(mem.va + (60 << 20), &mut big).unwrap_err();
    assert!(
        matches!(e, ClioError::Unmapped { len, .. } if len == 8 << 20),
        "{e}"
    );
    println!("{e}");
    let dead = std::net::UdpSocket::bind("127.0.0.1:0")?.local_addr()?;
    let cfg = ClientConfig {
        retry_budget: 1,
        ..ClientConfig::default()
    };
    let e = Session::open(dead, cfg).unwrap_err();
    assert!(matches!(e, ClioError::Timeout { .. }), "{e}");
    println!("{e}");

    s.rfree(mem.va, mem.size)?;
    println!("tour (low level): ok");
    Ok(())
}
