//! Co-simulation trace for the EDM RTL fabric (`edm_host_top` × PORTS around
//! `edm_switch_top`): a random mix of remote reads, writes and atomics between hosts, with standard
//! frames sent in both directions at the same time (so memory blocks preempt them), run
//! through the Rust fabric model. Writes the stimulus and the model's results; the cocotb
//! bench `tb/edm_fabric` replays the stimulus and requires the same results.
//!
//! `edm-cosim PORTS REQUESTS FRAMES SEED OUT [SPAN | apart]`
//!
//! Requests and frames start at random cycles below SPAN (default `40 · REQUESTS / PORTS +
//! 200`, a moderate load; a small SPAN makes a burst that fills every queue). SPAN `apart`
//! puts request k at cycle `APART · k` (one at a time, each done before the next starts: the
//! unloaded latency of every message) and frames at random cycles over the same time. A
//! host's requests are submitted in distinct cycles, as its request port takes one per cycle.
//!
//! The mix is built so that its outcome does not depend on timing: each host's memory has
//! a region others read (never written), a region others write (each write to its own
//! bytes), a region its writes come from (never written) and a region its reads land in
//! (each read to its own bytes); each atomic (CAS, FAA, SWAP, TAS) has a word of its own in
//! the written region. About one read or atomic in eight is outside memory and must get a
//! NULL response. Lengths are multiples of 8 bytes, some longer than a chunk.
//!
//! Output lines (numbers decimal, blocks as `sync payload` in hex):
//! `P ports mem_words chunk x` · `M host word value` (initial memory) ·
//! `R cycle host kind dst addr len local tag op a b` (kind 0 read, 1 write, 2 atomic with its
//! op and operands) · `F cycle side port n` then `n` lines `B sync
//! payload` (side 0: host uplink, 1: switch downlink) · expected: `C host tag ok latency
//! result` (model completions; latency from submission; result: an atomic's result bytes as a
//! little-endian hex number, else 0) · `W host word value` (final memory) ·
//! `E host unknown_grant unknown_response unexpected bad_address` (host error counters) ·
//! `Y side port n` then `n` lines `K sync payload` (non-idle blocks the receiving decoder got)
//! · `Q cycles` (model cycles to quiet) · `T cycle link dir rx sync payload` (the model's link
//! taps: every /MS/, /MST/, /N/, /G/ and frame start block leaving (`rx` 0) or entering (1) a shim, `dir` 0
//! host → switch, 1 switch → host; the bench compares per-message latency stage by stage).

use std::fmt::Write as _;
use std::process::ExitCode;

use clio_wire::edm::RmwOp;
use clio_wire::edm::{Block66, BlockClass};
use edm::fabric::{Dir, Fabric, FabricConfig};
use edm::host::Request;
use edm::phy::{frame_blocks, TxPolicy};
use edm::vectors::Rng;

const MEM_BYTES: usize = 8192;
const REGION: usize = MEM_BYTES / 4;
const READ_REGION: u64 = 0;
const WRITE_REGION: u64 = REGION as u64;
const SOURCE_REGION: u64 = 2 * REGION as u64;
const LAND_REGION: u64 = 3 * REGION as u64;
/// Cycles between requests with SPAN `apart` (the longest message takes under 200).
const APART: u64 = 400;
const LENGTHS: [u16; 10] = [8, 16, 24, 64, 64, 128, 200, 256, 264, 320];

fn arg<T: std::str::FromStr>(args: &[String], i: usize, name: &str) -> Result<T, String> {
    let v = args
        .get(i)
        .ok_or_else(|| format!("missing argument `{name}`"))?;
    v.parse()
        .map_err(|_| format!("argument `{name}` = {v:?} is not valid"))
}

fn block_line(out: &mut String, tag: char, b: &Block66) {
    let _ = writeln!(out, "{tag} {:x} {:x}", b.sync, b.payload);
}

struct Frame {
    cycle: u64,
    side: u8,
    port: usize,
    blocks: Vec<Block66>,
}

fn trace(
    ports: usize,
    requests: usize,
    frames: usize,
    seed: u64,
    span: Option<u64>,
    apart: bool,
) -> Result<String, String> {
    if !(2..=16).contains(&ports) {
        return Err(format!("`ports` = {ports} must be in 2..=16"));
    }
    let mut cfg = FabricConfig::new(ports);
    cfg.host.mem_bytes = MEM_BYTES;
    // The RTL switch gives memory strict priority on its egress (fixed forwarding latency).
    cfg.switch.policy = TxPolicy::StrictMemory;
    let (chunk, x) = (cfg.host.chunk_bytes, cfg.host.active_per_dst);
    let mut fab = Fabric::new(cfg).map_err(|e| format!("fabric config: {e}"))?;
    fab.tap = true;
    fab.tap_frames = true;
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let _ = writeln!(out, "P {ports} {} {chunk} {x}", MEM_BYTES / 8);

    for (h, host) in fab.hosts.iter_mut().enumerate() {
        for w in 0..MEM_BYTES / 8 {
            let v = rng.next_u64();
            host.mem[w * 8..w * 8 + 8].copy_from_slice(&v.to_le_bytes());
            let _ = writeln!(out, "M {h} {w} {v:x}");
        }
    }

    // Requests, each on bytes of its own (see the module docs).
    let span = if apart {
        APART * requests as u64
    } else {
        span.unwrap_or(40 * requests as u64 / ports as u64 + 200)
    }
    .max(1);
    let mut write_top = vec![WRITE_REGION; ports];
    let mut land_top = vec![LAND_REGION; ports];
    // (cycle, host, request, local byte address of the request's data)
    let mut reqs: Vec<(u64, usize, Request, u64)> = Vec::new();
    for k in 0..requests {
        let h = rng.below(ports as u64) as usize;
        let dst = (h + 1 + rng.below(ports as u64 - 1) as usize) % ports;
        let len = LENGTHS[rng.below(LENGTHS.len() as u64) as usize];
        let drawn = rng.below(span);
        let cycle = if apart { APART * k as u64 } else { drawn };
        let kind = rng.below(10);
        if kind >= 8 {
            if write_top[dst] + 8 > SOURCE_REGION {
                continue;
            }
            let addr = if rng.below(8) == 0 {
                MEM_BYTES as u64 + 8 * rng.below(64)
            } else {
                write_top[dst] += 8;
                write_top[dst] - 8
            };
            let op = RmwOp::ALL[rng.below(4) as usize];
            let a = addr as usize;
            let current = fab.hosts[dst]
                .mem
                .get(a..a + 8)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            // A CAS whose compare value is the word's (so it succeeds) half of the time.
            let first = if op == RmwOp::Cas && rng.below(2) == 0 {
                current
            } else {
                rng.next_u64()
            };
            let operands = [first, rng.next_u64()];
            reqs.push((
                cycle,
                h,
                Request::Rmw {
                    dst: dst as u16,
                    addr,
                    op,
                    operands,
                },
                0,
            ));
        } else if kind < 4 {
            if land_top[h] + len as u64 > MEM_BYTES as u64 {
                continue;
            }
            let addr = if rng.below(8) == 0 {
                MEM_BYTES as u64 + 8 * rng.below(64)
            } else {
                READ_REGION + 8 * rng.below((REGION as u64 - len as u64) / 8 + 1)
            };
            let local_addr = land_top[h];
            land_top[h] += len as u64;
            reqs.push((
                cycle,
                h,
                Request::Read {
                    dst: dst as u16,
                    addr,
                    len,
                    local_addr,
                },
                local_addr,
            ));
        } else {
            if write_top[dst] + len as u64 > SOURCE_REGION {
                continue;
            }
            let addr = write_top[dst];
            write_top[dst] += len as u64;
            let local = SOURCE_REGION + 8 * rng.below((REGION as u64 - len as u64) / 8 + 1);
            let l = local as usize;
            let data = fab.hosts[h].mem[l..l + len as usize].to_vec();
            // The RTL takes write data from local memory: the trace carries its address.
            reqs.push((
                cycle,
                h,
                Request::Write {
                    dst: dst as u16,
                    addr,
                    data,
                },
                local,
            ));
        }
    }
    // A host's request port takes one request per cycle (the RTL's `req_valid`/`req_ready`):
    // requests drawn for the same host and cycle are submitted in consecutive cycles.
    reqs.sort_by_key(|r| r.0);
    let mut next_free = vec![0u64; ports];
    for r in reqs.iter_mut() {
        r.0 = r.0.max(next_free[r.1]);
        next_free[r.1] = r.0 + 1;
    }
    reqs.sort_by_key(|r| r.0);

    let mut frame_list: Vec<Frame> = (0..frames)
        .map(|_| {
            let len = 8 + rng.below(300) as usize;
            let f: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            Frame {
                cycle: rng.below(span),
                side: rng.below(2) as u8,
                port: rng.below(ports as u64) as usize,
                blocks: frame_blocks(&f),
            }
        })
        .collect();
    frame_list.sort_by_key(|f| f.cycle);

    // Replay into the model; the request lines carry the model's tags.
    let mut ri = 0;
    let mut fi = 0;
    let mut atomics: Vec<(usize, u64)> = Vec::new();
    let end = span + 1;
    for now in 0..end {
        while ri < reqs.len() && reqs[ri].0 == now {
            let (cycle, h, req, local) = reqs[ri].clone();
            let tag = fab.hosts[h]
                .submit(now, req.clone())
                .map_err(|e| format!("request {ri}: {e}"))?;
            let (kind, dst, addr, len, rmw) = match &req {
                Request::Read { dst, addr, len, .. } => (0, *dst, *addr, *len, (0, 0, 0)),
                Request::Write { dst, addr, data } => {
                    (1, *dst, *addr, data.len() as u16, (0, 0, 0))
                }
                Request::Rmw {
                    dst,
                    addr,
                    op,
                    operands,
                } => (2, *dst, *addr, 0, (*op as u8, operands[0], operands[1])),
            };
            if kind == 2 {
                atomics.push((h, tag));
            }
            let _ = writeln!(
                out,
                "R {cycle} {h} {kind} {dst} {addr} {len} {local} {tag} {} {:x} {:x}",
                rmw.0, rmw.1, rmw.2
            );
            ri += 1;
        }
        while fi < frame_list.len() && frame_list[fi].cycle == now {
            let f = &frame_list[fi];
            if f.side == 0 {
                fab.hosts[f.port].send_frame(&f.blocks);
            } else {
                fab.switch.send_frame(f.port, &f.blocks);
            }
            let _ = writeln!(
                out,
                "F {} {} {} {}",
                f.cycle,
                f.side,
                f.port,
                f.blocks.len()
            );
            for b in &f.blocks {
                block_line(&mut out, 'B', b);
            }
            fi += 1;
        }
        fab.tick();
    }
    if !fab.run_until_quiet(2_000_000) {
        return Err(format!("seed {seed}: the model did not go quiet"));
    }
    let _ = writeln!(out, "Q {}", fab.now());
    for t in &fab.taps {
        let _ = writeln!(
            out,
            "T {} {} {} {} {:x} {:x}",
            t.cycle,
            t.link,
            matches!(t.dir, Dir::Down) as u8,
            t.rx as u8,
            t.block.sync,
            t.block.payload
        );
    }

    for (h, host) in fab.hosts.iter().enumerate() {
        let mut c: Vec<_> = host.completions.iter().collect();
        c.sort_by_key(|c| c.tag);
        for c in c {
            let mut result = [0u8; 8];
            if atomics.contains(&(h, c.tag)) {
                let n = c.result.len().min(8);
                result[..n].copy_from_slice(&c.result[..n]);
            }
            let _ = writeln!(
                out,
                "C {h} {} {} {} {:x}",
                c.tag,
                c.ok as u8,
                c.done - c.submitted,
                u64::from_le_bytes(result)
            );
        }
        let k = host.counters;
        let _ = writeln!(
            out,
            "E {h} {} {} {} {}",
            k.unknown_grant, k.unknown_response, k.unexpected, k.bad_address
        );
        if host.outstanding() != 0 {
            return Err(format!("seed {seed}: host {h} has unfinished requests"));
        }
        for w in 0..MEM_BYTES / 8 {
            let v = u64::from_le_bytes(host.mem[w * 8..w * 8 + 8].try_into().expect("8 bytes"));
            let _ = writeln!(out, "W {h} {w} {v:x}");
        }
    }
    let idle = |b: &&Block66| matches!(b.class(), BlockClass::Idle);
    for p in 0..ports {
        let got: Vec<&Block66> = fab.hosts[p]
            .frames_received()
            .iter()
            .filter(|b| !idle(b))
            .collect();
        let _ = writeln!(out, "Y 1 {p} {}", got.len());
        for b in got {
            block_line(&mut out, 'K', b);
        }
        let got: Vec<&Block66> = fab
            .switch
            .frames_received(p)
            .iter()
            .filter(|b| !idle(b))
            .collect();
        let _ = writeln!(out, "Y 0 {p} {}", got.len());
        for b in got {
            block_line(&mut out, 'K', b);
        }
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = || -> Result<(), String> {
        let text = trace(
            arg(&args, 0, "ports")?,
            arg(&args, 1, "requests")?,
            arg(&args, 2, "frames")?,
            arg(&args, 3, "seed")?,
            match args.get(5).map(String::as_str) {
                Some("apart") | None => None,
                Some(_) => Some(arg(&args, 5, "span")?),
            },
            args.get(5).is_some_and(|a| a == "apart"),
        )?;
        let out: String = arg(&args, 4, "out")?;
        std::fs::write(&out, text).map_err(|e| format!("writing `{out}`: {e}"))
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("edm-cosim: {e}");
            ExitCode::FAILURE
        }
    }
}
