//! Workloads: message traces of reads and writes with Poisson arrivals (EDM §4.3).
//!
//! Load `ρ` is the offered data load per node link: every node issues requests at rate
//! `λ = ρ·B / E[size]` (B = link bandwidth, size = data bytes of a write or of a read response),
//! to a destination chosen uniformly among the other nodes, so with uniform all-to-all traffic
//! every uplink and downlink carries `ρ` of data on average (read requests add their 8 B on top).

use std::path::Path;

use edm_pim::XorShift64;
use serde::Serialize;

use crate::config::SimConfig;
use crate::SimError;

/// Direction of a memory message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Kind {
    /// RREQ requester → target, then RRES (the data) target → requester.
    Read,
    /// WREQ carrying the data requester → target.
    Write,
}

/// One memory message of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Message {
    /// Index in the trace.
    pub id: u32,
    /// Read or write.
    pub kind: Kind,
    /// Compute node issuing the request.
    pub requester: u16,
    /// Memory node targeted.
    pub target: u16,
    /// Data bytes (written, or read back).
    pub bytes: u64,
    /// Issue time in picoseconds.
    pub arrival: u64,
}

impl Message {
    /// Node that sends the data.
    pub fn data_src(&self) -> u16 {
        match self.kind {
            Kind::Write => self.requester,
            Kind::Read => self.target,
        }
    }

    /// Node that receives the data.
    pub fn data_dst(&self) -> u16 {
        match self.kind {
            Kind::Write => self.target,
            Kind::Read => self.requester,
        }
    }
}

/// Largest message the simulator accepts (1 GiB): far above any trace's, and small enough
/// that times in picoseconds (80 ps per byte) and byte counts cannot overflow.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 30;

/// A discrete message-size distribution read from a CDF file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeCdf {
    /// Name (file stem) for reports.
    pub name: String,
    /// (size in bytes, cumulative probability), non-decreasing in both.
    pub points: Vec<(u64, f64)>,
}

impl SizeCdf {
    /// Parse the CDF format of the EDM workload files: one `size_in_packets 1 cumulative_prob`
    /// line per point; sizes are multiplied by `mtu` bytes. Errors name the source and line.
    pub fn parse(name: &str, text: &str, mtu: u32) -> Result<SizeCdf, SimError> {
        let mut points: Vec<(u64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |why: &str| SimError::Cdf {
                name: name.to_string(),
                line: i + 1,
                why: why.to_string(),
            };
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() != 3 {
                return Err(err(
                    "expected 3 columns: size_in_packets 1 cumulative_probability",
                ));
            }
            let pkts: f64 = cols[0].parse().map_err(|_| err("size is not a number"))?;
            let cum: f64 = cols[2]
                .parse()
                .map_err(|_| err("cumulative probability is not a number"))?;
            if !(pkts > 0.0 && pkts.is_finite()) {
                return Err(err("size must be positive"));
            }
            let bytes = (pkts * f64::from(mtu)).round();
            if bytes < 1.0 || bytes > MAX_MESSAGE_BYTES as f64 {
                return Err(err("size must be 1 byte to 1 GiB"));
            }
            if !(0.0..=1.0 + 1e-9).contains(&cum) {
                return Err(err("cumulative probability must be in [0, 1]"));
            }
            if let Some(&(_, prev)) = points.last() {
                if cum < prev {
                    return Err(err("cumulative probability decreases"));
                }
            }
            points.push((bytes as u64, cum));
        }
        match points.last() {
            None => Err(SimError::Cdf {
                name: name.to_string(),
                line: 0,
                why: "no data lines".into(),
            }),
            Some(&(_, c)) if (c - 1.0).abs() > 1e-6 => Err(SimError::Cdf {
                name: name.to_string(),
                line: text.lines().count(),
                why: format!("last cumulative probability is {c}, expected 1"),
            }),
            Some(_) => Ok(SizeCdf {
                name: name.to_string(),
                points,
            }),
        }
    }

    /// Load `dir/CDF_<name>.txt`.
    pub fn load(dir: &Path, name: &str, mtu: u32) -> Result<SizeCdf, SimError> {
        let path = dir.join(format!("CDF_{name}.txt"));
        let text = std::fs::read_to_string(&path).map_err(|e| SimError::Io {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        SizeCdf::parse(name, &text, mtu)
    }

    /// Probability mass of each point (the first point's cumulative value goes to that size).
    fn masses(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let mut prev = 0.0;
        self.points.iter().map(move |&(b, c)| {
            let m = c - prev;
            prev = c;
            (b, m)
        })
    }

    /// Mean size in bytes.
    pub fn mean(&self) -> f64 {
        self.masses().map(|(b, m)| b as f64 * m).sum()
    }

    /// Draw a size: the first point whose cumulative probability reaches `u` (no interpolation,
    /// like the pHost/pFabric `CDFRandomVariable`).
    pub fn sample(&self, u: f64) -> u64 {
        self.points
            .iter()
            .find(|&&(_, c)| c >= u)
            .map_or(self.points[self.points.len() - 1].0, |p| p.0)
    }
}

/// Message sizes of a workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Sizes {
    /// Every message has this many data bytes.
    Fixed(u64),
    /// Drawn from a CDF.
    Cdf(SizeCdf),
}

impl Sizes {
    fn mean(&self) -> f64 {
        match self {
            Sizes::Fixed(b) => *b as f64,
            Sizes::Cdf(c) => c.mean(),
        }
    }
}

/// Parameters of a generated trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadSpec {
    /// Offered data load per node link, in (0, 1].
    pub load: f64,
    /// Fraction of messages that are writes.
    pub write_ratio: f64,
    /// Message sizes.
    pub sizes: Sizes,
    /// Number of messages.
    pub messages: usize,
    /// Seed of the generator.
    pub seed: u64,
}

/// One drawn message: its arrival time (in the caller's time unit), its two
/// ends, its kind and its size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Draw {
    pub(crate) t: f64,
    pub(crate) src: u16,
    pub(crate) dst: u16,
    pub(crate) kind: Kind,
    pub(crate) bytes: u64,
}

/// Messages of a Poisson process of `rate` arrivals per time unit over `n`
/// nodes (n ≥ 2): a uniformly drawn ordered pair of distinct nodes, a write
/// with probability `write_share` (else a read), a size from `sizes`. Both
/// trace generators (ours and the published one's definitions) draw their
/// messages here, so the draw order, and with it every seeded trace, is one.
pub(crate) fn draw_messages(
    seed: u64,
    n: usize,
    rate: f64,
    write_share: f64,
    sizes: &Sizes,
) -> impl Iterator<Item = Draw> + '_ {
    let mut rng = XorShift64::new(seed);
    let mut t = 0.0f64;
    std::iter::from_fn(move || {
        t += -(1.0 - unit(&mut rng)).ln() / rate;
        let src = rng.below(n as u32) as u16;
        let mut dst = rng.below(n as u32 - 1) as u16;
        if dst >= src {
            dst += 1;
        }
        let kind = if unit(&mut rng) < write_share {
            Kind::Write
        } else {
            Kind::Read
        };
        let bytes = match sizes {
            Sizes::Fixed(b) => *b,
            Sizes::Cdf(c) => c.sample(unit(&mut rng)),
        };
        Some(Draw {
            t,
            src,
            dst,
            kind,
            bytes,
        })
    })
}

/// Uniform double in [0, 1) from 53 random bits.
pub(crate) fn unit(rng: &mut XorShift64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Generate the trace of `spec` on `cfg.nodes` nodes. Deterministic for a seed.
pub fn generate(spec: &WorkloadSpec, cfg: &SimConfig) -> Result<Vec<Message>, SimError> {
    if !(spec.load > 0.0 && spec.load <= 1.0) {
        return Err(SimError::Workload {
            field: "load",
            why: format!("{} is not in (0, 1]", spec.load),
        });
    }
    if !(0.0..=1.0).contains(&spec.write_ratio) {
        return Err(SimError::Workload {
            field: "write_ratio",
            why: format!("{} is not in [0, 1]", spec.write_ratio),
        });
    }
    if let Sizes::Fixed(b) = spec.sizes {
        if b == 0 || b > MAX_MESSAGE_BYTES {
            return Err(SimError::Workload {
                field: "sizes",
                why: format!("message size {b} is not in 1..={MAX_MESSAGE_BYTES} bytes"),
            });
        }
    }
    let n = cfg.nodes;
    // Arrivals over the whole cluster: rate N·ρ·B / E[size] messages per picosecond.
    let bytes_per_ps = 1.0 / cfg.ps_per_byte as f64;
    let rate = n as f64 * spec.load * bytes_per_ps / spec.sizes.mean();
    let draws = draw_messages(
        spec.seed ^ 0x005E_ED0F_ED35_u64,
        n,
        rate,
        spec.write_ratio,
        &spec.sizes,
    );
    let mut out = Vec::with_capacity(spec.messages);
    for (id, d) in draws.take(spec.messages).enumerate() {
        out.push(Message {
            id: id as u32,
            kind: d.kind,
            requester: d.src,
            target: d.dst,
            bytes: d.bytes,
            arrival: d.t.round() as u64,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HADOOP: &str = "4 1 0.00\n4 1 0.70\n88 1 0.80\n167 1 0.90\n920 1 1.00";

    #[test]
    fn cdf_parses_and_samples_discretely() {
        let c = SizeCdf::parse("hadoop", HADOOP, 1460).unwrap();
        assert_eq!(c.sample(0.0), 4 * 1460);
        assert_eq!(c.sample(0.7), 4 * 1460);
        assert_eq!(c.sample(0.71), 88 * 1460);
        assert_eq!(c.sample(0.999), 920 * 1460);
        let mean = (0.7 * 4.0 + 0.1 * 88.0 + 0.1 * 167.0 + 0.1 * 920.0) * 1460.0;
        assert!((c.mean() - mean).abs() < 1e-6);
    }

    #[test]
    fn cdf_errors_name_the_line() {
        let e = SizeCdf::parse("x", "4 1 0.5\n2 1 0.4", 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x") && e.contains("line 2") && e.contains("decreases"),
            "{e}"
        );
        let e = SizeCdf::parse("y", "4 1 0.5", 1).unwrap_err().to_string();
        assert!(e.contains("expected 1"), "{e}");
        let e = SizeCdf::parse("z", "4 0.5", 1).unwrap_err().to_string();
        assert!(e.contains("3 columns"), "{e}");
    }

    #[test]
    fn generated_load_matches_the_target() {
        let cfg = SimConfig {
            nodes: 16,
            ..SimConfig::default()
        };
        let spec = WorkloadSpec {
            load: 0.5,
            write_ratio: 0.5,
            sizes: Sizes::Fixed(64),
            messages: 20_000,
            seed: 3,
        };
        let m = generate(&spec, &cfg).unwrap();
        let span = m.last().unwrap().arrival as f64;
        let bytes: u64 = m.iter().map(|x| x.bytes).sum();
        let load = bytes as f64 * 80.0 / span / 16.0;
        assert!((load - 0.5).abs() < 0.02, "measured load {load}");
        let writes = m.iter().filter(|x| x.kind == Kind::Write).count() as f64 / m.len() as f64;
        assert!((writes - 0.5).abs() < 0.02);
        assert!(m
            .iter()
            .all(|x| x.requester != x.target && usize::from(x.target) < 16));
        assert_eq!(m, generate(&spec, &cfg).unwrap(), "same seed, same trace");
    }

    #[test]
    fn bad_workload_fields_are_named() {
        let cfg = SimConfig::default();
        let spec = WorkloadSpec {
            load: 1.5,
            write_ratio: 0.5,
            sizes: Sizes::Fixed(64),
            messages: 1,
            seed: 0,
        };
        assert!(generate(&spec, &cfg)
            .unwrap_err()
            .to_string()
            .contains("load"));
    }
}
