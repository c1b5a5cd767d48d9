//! `clio-netns-workload`: the SDK against a board at an address (through the
//! fault proxy in the netns campaign), checked against a local model.
//!
//! Mode `model` (default): a seeded random mix of sync writes (1 B – 40 KB,
//! across page and MTU boundaries), sync reads, FAA and CAS on counters,
//! batches of async writes and reads, and allocate-use-free cycles. Every
//! read must equal the model, every atomic's old value must be the model's
//! (so each was applied exactly once), and at the end the whole data region
//! and every counter are read back and compared.
//!
//! Mode `restart`: writes, FAAs and reads that print `progress N` after
//! each call; the suite kills and restarts the board meanwhile. The run
//! passes when the session reports `BoardRestarted` (before that, every read
//! equals the model: never OK with zeros), a later call of the same session
//! reports it too, and a new session works. Every call is bounded by the
//! request deadline; the whole run by `--deadline-s`.
//!
//! The last line is `key=value` counters; exit status 0 = passed.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clio::{ClientConfig, ClioError, Session};
use clio_emu::faults::SplitMix64;
use clio_wire::payload::perms;

struct Args {
    board: SocketAddr,
    seed: u64,
    ops: u64,
    restart: bool,
    deadline: Duration,
    config: String,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        board: ([127, 0, 0, 1], 47700).into(),
        seed: 1,
        ops: 2000,
        restart: false,
        deadline: Duration::from_secs(120),
        config: "emulator".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or_else(|| format!("{k} needs a value"));
        match k.as_str() {
            "--board" => a.board = v()?.parse().map_err(|e| format!("--board: {e}"))?,
            "--seed" => a.seed = v()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--ops" => a.ops = v()?.parse().map_err(|e| format!("--ops: {e}"))?,
            "--deadline-s" => {
                a.deadline =
                    Duration::from_secs(v()?.parse().map_err(|e| format!("--deadline-s: {e}"))?)
            }
            "--board-config" => a.config = v()?,
            "--mode" => match v()?.as_str() {
                "model" => a.restart = false,
                "restart" => a.restart = true,
                m => return Err(format!("--mode '{m}': expected model or restart")),
            },
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(a)
}

/// Client settings: the board config's, with a request deadline and retry
/// budget wide enough for 5 % loss each way plus corruption on a loaded CI
/// machine (a lost packet still costs only an RTO).
fn client_config(board: &str) -> Result<ClientConfig, String> {
    let cfg = clio_config::BoardConfig::embedded(board)
        .map_err(|e| format!("board config '{board}': {e}"))?;
    Ok(ClientConfig {
        request_timeout_ns: 10_000_000_000,
        retry_budget: 64,
        ..ClientConfig::from_board(&cfg)
    })
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut r = SplitMix64::new(seed);
    (0..len).map(|_| r.next_u64() as u8).collect()
}

/// Index of the first differing byte.
fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

type Res<T> = Result<T, String>;

fn e(what: &str) -> impl Fn(ClioError) -> String + '_ {
    move |err| format!("{what}: {err}")
}

/// The model run.
fn model_run(a: &Args, cfg: ClientConfig) -> Res<String> {
    let mut s = Session::open(a.board, cfg).map_err(e("open"))?;
    let page = 4u64 << 20;
    let data = s.ralloc(2 * page, perms::RW).map_err(e("alloc data"))?;
    let ctr = s.ralloc(page, perms::RW).map_err(e("alloc counters"))?;
    let mut mem = vec![0u8; (2 * page) as usize];
    let mut counters = [0u64; 16];
    let mut faa_total = 0u64;
    let mut rng = SplitMix64::new(a.seed);
    let mut kinds = [0u64; 6];
    // Offsets near the start, the page boundary and the end of the region.
    let spot = |rng: &mut SplitMix64, len: usize| -> usize {
        let max = mem_len(page) - len;
        let centre = [0usize, page as usize, max][rng.below(3) as usize];
        let lo = centre.saturating_sub(48 << 10);
        let hi = (centre + (48 << 10)).min(max);
        lo + rng.below((hi - lo + 1) as u64) as usize
    };
    fn mem_len(page: u64) -> usize {
        (2 * page) as usize
    }
    for op in 0..a.ops {
        let roll = rng.below(100);
        if roll < 30 {
            kinds[0] += 1;
            let len = match rng.below(10) {
                0..=3 => 1 + rng.below(64) as usize,
                4..=7 => 1 + rng.below(4096) as usize,
                _ => 4096 + rng.below(36 << 10) as usize,
            };
            let at = spot(&mut rng, len);
            let d = pattern(len, a.seed ^ op);
            s.rwrite(data.va + at as u64, &d)
                .map_err(e(&format!("op {op}: write {len} B at +{at:#x}")))?;
            mem[at..at + len].copy_from_slice(&d);
        } else if roll < 50 {
            kinds[1] += 1;
            let len = 1 + rng.below(12 << 10) as usize;
            let at = spot(&mut rng, len);
            let mut got = vec![0u8; len];
            s.rread(data.va + at as u64, &mut got)
                .map_err(e(&format!("op {op}: read {len} B at +{at:#x}")))?;
            if let Some(i) = first_diff(&got, &mem[at..at + len]) {
                return Err(format!(
                    "op {op}: read {len} B at +{at:#x}: byte {i} is {:#04x}, the model has {:#04x}",
                    got[i],
                    mem[at + i]
                ));
            }
        } else if roll < 70 {
            kinds[2] += 1;
            let c = rng.below(16) as usize;
            let add = rng.below(1 << 32);
            let old = s
                .faa(ctr.va + 8 * c as u64, add)
                .map_err(e(&format!("op {op}: FAA counter {c}")))?;
            if old != counters[c] {
                return Err(format!(
                    "op {op}: FAA counter {c} returned {old}, the model has {} (applied twice or lost)",
                    counters[c]
                ));
            }
            counters[c] = counters[c].wrapping_add(add);
            faa_total += 1;
        } else if roll < 80 {
            kinds[3] += 1;
            let c = rng.below(16) as usize;
            let hit = rng.below(2) == 0;
            let expected = if hit { counters[c] } else { counters[c] ^ 1 };
            let new = rng.next_u64();
            let old = s
                .cas(ctr.va + 8 * c as u64, expected, new)
                .map_err(e(&format!("op {op}: CAS counter {c}")))?;
            if old != counters[c] {
                return Err(format!(
                    "op {op}: CAS counter {c} returned {old}, the model has {}",
                    counters[c]
                ));
            }
            if hit {
                counters[c] = new;
            }
        } else if roll < 90 {
            // Async batch: disjoint slots of one window, written, then read.
            kinds[4] += 1;
            let n = 4 + rng.below(13) as usize;
            let slot = 2048usize;
            let base = spot(&mut rng, n * slot);
            let mut hs = Vec::new();
            for i in 0..n {
                let len = 1 + rng.below(slot as u64) as usize;
                let at = base + i * slot;
                let d = pattern(len, a.seed ^ op ^ (i as u64) << 32);
                hs.push(
                    s.rwrite_async(data.va + at as u64, &d)
                        .map_err(e(&format!("op {op}: async write")))?,
                );
                mem[at..at + len].copy_from_slice(&d);
            }
            for (i, r) in s.rpoll(&hs).map_err(e("rpoll"))?.into_iter().enumerate() {
                r.map_err(e(&format!("op {op}: async write {i}")))?;
            }
            let len = n * slot;
            let h = s
                .rread_async(data.va + base as u64, len as u64)
                .map_err(e(&format!("op {op}: async read")))?;
            let mut got = vec![0u8; len];
            s.rread_wait(h, &mut got)
                .map_err(e(&format!("op {op}: async read")))?;
            if let Some(i) = first_diff(&got, &mem[base..base + len]) {
                return Err(format!(
                    "op {op}: async read at +{base:#x}: byte {i} differs"
                ));
            }
        } else {
            kinds[5] += 1;
            let scratch = s.ralloc(page, perms::RW).map_err(e("alloc scratch"))?;
            let d = pattern(3000, op);
            s.rwrite(scratch.va + page - 1500, &d[..1500])
                .map_err(e(&format!("op {op}: scratch write")))?;
            let mut got = vec![0u8; 1500];
            s.rread(scratch.va + page - 1500, &mut got)
                .map_err(e(&format!("op {op}: scratch read")))?;
            if got[..] != d[..1500] {
                return Err(format!("op {op}: scratch range read back differently"));
            }
            s.rfree(scratch.va, scratch.size)
                .map_err(e(&format!("op {op}: free scratch")))?;
        }
    }
    // Final comparison of everything.
    // In 64 KiB reads: a retried read asks for its whole range again, so
    // one 8 MiB read (5 800 answer packets) behind a lossy link would need
    // every chunk of one attempt to arrive (see the README).
    const PIECE: usize = 64 << 10;
    for at in (0..mem.len()).step_by(PIECE) {
        let mut got = vec![0u8; PIECE];
        s.rread(data.va + at as u64, &mut got)
            .map_err(e(&format!("final read at +{at:#x}")))?;
        if let Some(i) = first_diff(&got, &mem[at..at + PIECE]) {
            return Err(format!(
                "final read: byte +{:#x} differs from the model",
                at + i
            ));
        }
    }
    for (c, want) in counters.iter().enumerate() {
        let mut w = [0u8; 8];
        s.rread(ctr.va + 8 * c as u64, &mut w)
            .map_err(e("counter read"))?;
        if u64::from_le_bytes(w) != *want {
            return Err(format!(
                "counter {c} is {}, the model has {want}",
                u64::from_le_bytes(w)
            ));
        }
    }
    let st = s.connection().stats();
    s.rfree(data.va, data.size).map_err(e("free data"))?;
    s.rfree(ctr.va, ctr.size).map_err(e("free counters"))?;
    s.close().map_err(e("close"))?;
    Ok(format!(
        "ops={} writes={} reads={} faa={} cas={} async_batches={} alloc_free={} faa_applied_once={} \
         requests_sent={} packets_sent={} retries={} timeouts={} nacks={} corrupt={} busy={} duplicates={} stale={}",
        a.ops, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], faa_total,
        st.requests_sent, st.packets_sent, st.retries, st.timeouts, st.nacks, st.corrupt, st.busy,
        st.duplicates, st.stale
    ))
}

/// The restart run.
fn restart_run(a: &Args, cfg: ClientConfig) -> Res<String> {
    let t0 = Instant::now();
    let mut s = Session::open(a.board, cfg.clone()).map_err(e("open"))?;
    let page = 4u64 << 20;
    let r = s.ralloc(page, perms::RW).map_err(e("alloc"))?;
    let mut mem = vec![0u8; 4096];
    let mut counter = 0u64;
    let mut rng = SplitMix64::new(a.seed);
    let mut timeouts = 0u64;
    let mut out = std::io::stdout();
    let mut op = 0u64;
    let seen = loop {
        if t0.elapsed() > a.deadline {
            return Err(format!(
                "no BoardRestarted within {:?} ({op} calls, {timeouts} timeouts)",
                a.deadline
            ));
        }
        op += 1;
        let res: Result<(), ClioError> = match op % 3 {
            0 => {
                let at = rng.below(4000) as usize;
                let d = pattern(96, op);
                s.rwrite(r.va + at as u64, &d).map(|()| {
                    mem[at..at + 96].copy_from_slice(&d);
                })
            }
            1 => s.faa(r.va + 8192, 1).and_then(|old| {
                if old != counter {
                    return Err(ClioError::Protocol {
                        op: clio::OpKind::FetchAndAdd,
                        field: "faa.old",
                    });
                }
                counter += 1;
                Ok(())
            }),
            _ => {
                let mut got = vec![0u8; 4096];
                s.rread(r.va, &mut got).and_then(|()| {
                    if got != mem {
                        return Err(ClioError::Protocol {
                            op: clio::OpKind::Read,
                            field: "data (read OK with bytes the model does not have)",
                        });
                    }
                    Ok(())
                })
            }
        };
        match res {
            Ok(()) => {}
            Err(ClioError::BoardRestarted { op: k, epoch }) => break (k, epoch),
            Err(ClioError::Timeout { .. }) => timeouts += 1,
            Err(other) => return Err(format!("call {op}: {other}")),
        }
        let _ = writeln!(out, "progress {op}");
        let _ = out.flush();
    };
    let detected = t0.elapsed();
    // Every later call of the session reports it too.
    match s.faa(r.va + 8192, 1) {
        Err(ClioError::BoardRestarted { .. }) => {}
        other => return Err(format!("after BoardRestarted, FAA answered {other:?}")),
    }
    drop(s);
    // A new session of the new boot works.
    let mut n = Session::open(a.board, cfg).map_err(e("reopen"))?;
    let r2 = n
        .ralloc(page, perms::RW)
        .map_err(e("alloc after restart"))?;
    n.rwrite(r2.va, b"after")
        .map_err(e("write after restart"))?;
    let mut b = [0u8; 5];
    n.rread(r2.va, &mut b).map_err(e("read after restart"))?;
    if &b != b"after" {
        return Err("a new session after the restart read back differently".into());
    }
    let _ = n.faa(r2.va + 8, 1).map_err(e("faa after restart"))?;
    match n.rread(r2.va, &mut b) {
        Ok(()) => {}
        Err(err) => return Err(format!("read after restart: {err}")),
    }
    Ok(format!(
        "calls={op} timeouts_while_down={timeouts} restarted_seen_by={:?} new_epoch={:#010x} detected_after_s={:.2}",
        seen.0,
        seen.1,
        detected.as_secs_f64()
    ))
}

fn main() -> ExitCode {
    let a = match parse() {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("clio-netns-workload: {msg}");
            eprintln!(
                "usage: clio-netns-workload --board ADDR:PORT [--mode model|restart] [--seed N] [--ops N] [--deadline-s N] [--board-config NAME]"
            );
            return ExitCode::from(2);
        }
    };
    let cfg = match client_config(&a.config) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("clio-netns-workload: {msg}");
            return ExitCode::FAILURE;
        }
    };
    let t0 = Instant::now();
    let r = if a.restart {
        restart_run(&a, cfg)
    } else {
        model_run(&a, cfg)
    };
    match r {
        Ok(line) => {
            println!("PASS {line} wall_s={:.1}", t0.elapsed().as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(msg) => {
            println!("FAIL seed={} {msg}", a.seed);
            ExitCode::FAILURE
        }
    }
}
