//! The program of issue #19's "Done when", with the typed API: a 64 MiB
//! allocation, an array of records, a counter under a lock from 4 threads,
//! 10 000 async reads, and the error cases.
//! Run: `clio sim &` then `cargo run -p clio --example tour [-- ADDR]`.
use clio::bytemuck::{Pod, Zeroable};
use clio::{AsyncSession, Client, ClientConfig, ClioError, Completion, Session};

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[bytemuck(crate = "clio::bytemuck")]
#[repr(C)]
struct Record {
    id: u64,
    score: f64,
    tag: [u8; 16],
}

const RECORDS: u64 = 1000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1);
    // A waiter for a busy lock backs off (doubling to 100 ms) and the lock
    // is not fair: under contention one can lose it for over a second, the
    // default request timeout. Give lock waiters 10 s.
    let cfg = ClientConfig {
        request_timeout_ns: 10_000_000_000,
        ..ClientConfig::default()
    };
    let client = Client::connect_with(addr.as_deref().unwrap_or("127.0.0.1:47700"), cfg)?;
    let mut s = client.session()?;

    // A 64 MiB allocation (the emulator's quota for one address space).
    let mem = s.alloc(64 << 20)?;

    // An array of records.
    let recs: Vec<Record> = (0..RECORDS)
        .map(|i| Record {
            id: i,
            score: i as f64 / 2.0,
            tag: [i as u8; 16],
        })
        .collect();
    s.write_pods(mem.addr(), &recs)?;
    assert_eq!(s.read_pods::<Record>(mem.addr(), recs.len())?, recs);
    assert_eq!(s.read_pod::<Record>(mem.index::<Record>(7))?, recs[7]);

    // A counter under a lock, from 4 threads (a session each, one address space).
    let (lock, counter) = (mem.at(32 << 20), mem.at((32 << 20) + 8));
    std::thread::scope(|t| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                t.spawn(|| -> Result<(), ClioError> {
                    let mut s = client.session()?;
                    for _ in 0..25 {
                        s.with_lock(lock, |s| {
                            let n: u64 = s.read_pod(counter)?;
                            s.write_pod(counter, &(n + 1))
                        })?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("worker panicked"))
    })?;
    assert_eq!(s.read_pod::<u64>(counter)?, 100);

    // 10 000 async reads, all in flight at once (calls are eager).
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let a = AsyncSession::join(client.board(), client.share(), ClientConfig::default()).await?;
        let reads: Vec<_> = (0..10_000u64)
            .map(|i| a.read_pod::<Record>(mem.index::<Record>(i % RECORDS)))
            .collect();
        for (i, r) in reads.into_iter().enumerate() {
            assert_eq!(r.await?, recs[i % RECORDS as usize]);
        }
        Ok::<_, ClioError>(())
    })?;

    // The blocking asynchronous calls: one handle, one flat result.
    let h = s.rread_async(mem.addr().get(), 8)?;
    assert_eq!(
        s.rwait(h)?,
        Completion::Read(recs[0].id.to_le_bytes().to_vec())
    );

    // The error cases: each is its own typed error with an honest message.
    let e = s.alloc(1 << 40).unwrap_err(); // more than the board has
    assert!(matches!(e, ClioError::TooLarge { .. }), "{e}");
    let e = s.alloc(1 << 20).unwrap_err(); // past this address space's quota
    assert!(matches!(e, ClioError::OverQuota { .. }), "{e}");
    let e = s.rread_vec(mem.at(60 << 20).get(), 8 << 20).unwrap_err(); // past the end
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
    let e = Session::open(dead, cfg).unwrap_err(); // nobody there
    assert!(matches!(e, ClioError::Timeout { .. }), "{e}");
    println!("{e}");

    s.free(mem)?;
    println!("tour: ok");
    Ok(())
}
