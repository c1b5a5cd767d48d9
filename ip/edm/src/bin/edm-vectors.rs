//! Write RTL bench vectors from the Rust models.
//!
//! `edm-vectors pim PORTS DEPTH SRPT(0|1) CHUNK STEPS SEED OUT`
//! `edm-vectors rx BLOCKS SEED OUT`
//! `edm-vectors tx CYCLES FAIR(0|1) SEED OUT`
//! `edm-vectors phy CYCLES FAIR(0|1) SEED CORRUPT_FROM CORRUPT_LEN OUT`
//! `edm-vectors fwd PORTS CYCLES SEED OUT`
//! `edm-vectors pimconv PORTS ROUNDS SEED OUT`
//! `edm-vectors enc COUNT SEED OUT`
//! `edm-vectors dec COUNT SEED OUT`

use std::process::ExitCode;

fn arg<T: std::str::FromStr>(args: &[String], i: usize, name: &str) -> Result<T, String> {
    let v = args
        .get(i)
        .ok_or_else(|| format!("missing argument `{name}`"))?;
    v.parse()
        .map_err(|_| format!("argument `{name}` = {v:?} is not valid"))
}

fn run(args: &[String]) -> Result<(), String> {
    let (text, out) =
        match args.first().map(String::as_str) {
            Some("pim") => {
                let t = edm::vectors::pim_trace(
                    arg(args, 1, "ports")?,
                    arg(args, 2, "depth")?,
                    arg::<u8>(args, 3, "srpt")? != 0,
                    arg(args, 4, "chunk")?,
                    arg(args, 5, "steps")?,
                    arg(args, 6, "seed")?,
                );
                (t, arg::<String>(args, 7, "out")?)
            }
            Some("tx") => (
            edm::vectors::tx_trace(arg(args, 1, "cycles")?, arg::<u8>(args, 2, "fair")? != 0, arg(args, 3, "seed")?),
            arg::<String>(args, 4, "out")?,
        ),
        Some("phy") => (
            edm::vectors::phy_trace(
                arg(args, 1, "cycles")?,
                arg::<u8>(args, 2, "fair")? != 0,
                arg(args, 3, "seed")?,
                arg(args, 4, "corrupt_from")?,
                arg(args, 5, "corrupt_len")?,
            ),
            arg::<String>(args, 6, "out")?,
        ),
        Some("pimconv") => (
            edm::vectors::pim_converge_trace(arg(args, 1, "ports")?, arg(args, 2, "rounds")?, arg(args, 3, "seed")?),
            arg::<String>(args, 4, "out")?,
        ),
        Some("enc") => (
            edm::vectors::enc_trace(arg(args, 1, "count")?, arg(args, 2, "seed")?),
            arg::<String>(args, 3, "out")?,
        ),
        Some("dec") => (
            edm::vectors::dec_trace(arg(args, 1, "count")?, arg(args, 2, "seed")?),
            arg::<String>(args, 3, "out")?,
        ),
        Some("fwd") => (
            edm::vectors::fwd_trace(arg(args, 1, "ports")?, arg(args, 2, "cycles")?, arg(args, 3, "seed")?),
            arg::<String>(args, 4, "out")?,
        ),
        Some("rx") => (
                edm::vectors::rx_trace(arg(args, 1, "blocks")?, arg(args, 2, "seed")?),
                arg::<String>(args, 3, "out")?,
            ),
            _ => return Err(
                "usage: edm-vectors pim PORTS DEPTH SRPT CHUNK STEPS SEED OUT | rx BLOCKS SEED OUT | tx CYCLES FAIR SEED OUT | phy CYCLES FAIR SEED CORRUPT_FROM CORRUPT_LEN OUT | fwd PORTS CYCLES SEED OUT | pimconv PORTS ROUNDS SEED OUT | enc COUNT SEED OUT | dec COUNT SEED OUT"
                    .into(),
            ),
        };
    std::fs::write(&out, text).map_err(|e| format!("writing `{out}`: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("edm-vectors: {e}");
            ExitCode::FAILURE
        }
    }
}
