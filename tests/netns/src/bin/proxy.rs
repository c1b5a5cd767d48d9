//! `clio-fault-proxy`: relay UDP between clients and a Clio board with seeded
//! faults. Prints `ready ADDR` on standard output once it relays, runs until
//! its standard input reaches end of file, then prints its counters as
//! `key=value` lines on standard output.
//!
//! ```text
//! clio-fault-proxy --listen 10.77.1.1:47700 --board 10.77.2.2:47700 \
//!     --upstream-bind 10.77.2.1:0 \
//!     --to-board drop=0.05,dup=0.02,reorder=0.25,window_us=2000,corrupt=0.01,seed=1 \
//!     --to-client drop=0.05,dup=0.02,reorder=0.25,window_us=2000,corrupt=0.01,seed=2
//! ```

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::process::ExitCode;

use clio_emu::FaultConfig;
use clio_netns::{Proxy, ProxyConfig};

const USAGE: &str = "usage: clio-fault-proxy --listen ADDR:PORT --board ADDR:PORT \
[--upstream-bind ADDR:PORT] [--to-board SPEC] [--to-client SPEC]
SPEC: drop=P,dup=P,corrupt=P,reorder=P,window_us=N,delay_us=N,seed=N (the emulator's fault syntax)
Stops at end of standard input and prints its counters.";

fn parse() -> Result<ProxyConfig, String> {
    let mut listen = None;
    let mut board = None;
    let mut upstream: SocketAddr = ([0, 0, 0, 0], 0).into();
    let mut to_board = FaultConfig::NONE;
    let mut to_client = FaultConfig::NONE;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        let addr = |name: &str, v: String| -> Result<SocketAddr, String> {
            v.parse()
                .map_err(|e| format!("{name} '{v}': not an address:port ({e})"))
        };
        match a.as_str() {
            "--listen" => listen = Some(addr("--listen", val("--listen")?)?),
            "--board" => board = Some(addr("--board", val("--board")?)?),
            "--upstream-bind" => upstream = addr("--upstream-bind", val("--upstream-bind")?)?,
            "--to-board" => {
                to_board = FaultConfig::parse(&val("--to-board")?)
                    .map_err(|e| format!("--to-board: {e}"))?
            }
            "--to-client" => {
                to_client = FaultConfig::parse(&val("--to-client")?)
                    .map_err(|e| format!("--to-client: {e}"))?
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(ProxyConfig {
        listen: listen.ok_or("--listen is required")?,
        board: board.ok_or("--board is required")?,
        upstream_bind: upstream,
        to_board,
        to_client,
    })
}

fn main() -> ExitCode {
    let cfg = match parse() {
        Ok(c) => c,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("clio-fault-proxy: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let proxy = match Proxy::start(cfg.clone()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("clio-fault-proxy: binding {}: {e}", cfg.listen);
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "clio-fault-proxy: relaying {} <-> {} (to board: {:?}; to client: {:?})",
        proxy.addr(),
        cfg.board,
        cfg.to_board,
        cfg.to_client
    );
    // The suite starts its clients when it reads this line.
    println!("ready {}", proxy.addr());
    let _ = std::io::stdout().flush();
    // End of standard input is the stop signal (the suite closes the pipe).
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    let stats = proxy.stop();
    print!("{}", stats.lines());
    ExitCode::SUCCESS
}
