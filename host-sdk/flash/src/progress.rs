//! Tool output as events: lines, step markers and percentages, parsed
//! incrementally from raw output chunks (a pure state machine; the runner
//! feeds it bytes as they arrive).
//!
//! - Lines end at `\n` or `\r` (xsct redraws its progress line with `\r`).
//! - A percentage is digits immediately before `%` (`100%    7MB …` from
//!   xsct's `fpga`/`dow`, `0%...10%...` from `program_flash`); it is
//!   reported as soon as the `%` arrives, before the line ends.
//! - Our generated scripts print `clio-step: N/T label` before each step;
//!   `program_flash` prints `Performing Erase Operation...` and the like.

/// Marker our scripts print before each step.
pub const STEP_MARKER: &str = "clio-step: ";
/// Marker our scripts print as their last action.
pub const DONE_MARKER: &str = "clio-done";

/// What the parser found in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A complete output line (without its terminator).
    Line(String),
    /// A new step began.
    Step {
        /// 1-based step number, when the tool says it.
        index: Option<u32>,
        /// Number of steps, when the tool says it.
        total: Option<u32>,
        /// What the step does.
        label: String,
    },
    /// Progress within the current step, 0..=100.
    Percent(u8),
}

/// Longest line kept (bytes): a tool writing more without a line break has it cut into lines
/// of this size, so its output cannot grow the parser's memory without bound.
pub const MAX_LINE: usize = 64 * 1024;

/// Incremental parser of one output stream.
#[derive(Debug, Default)]
pub struct OutputParser {
    line: Vec<u8>,
    last_percent: Option<u8>,
}

impl OutputParser {
    /// A parser at the start of a stream.
    pub fn new() -> OutputParser {
        OutputParser::default()
    }

    /// Feed a chunk; found items go to `out` in order.
    pub fn feed(&mut self, chunk: &[u8], out: &mut dyn FnMut(Parsed)) {
        for &b in chunk {
            match b {
                b'\n' | b'\r' => self.end_line(out),
                b'%' => {
                    let digits = self
                        .line
                        .iter()
                        .rev()
                        .take_while(|c| c.is_ascii_digit())
                        .count();
                    self.line.push(b);
                    if (1..=3).contains(&digits) {
                        let start = self.line.len() - 1 - digits;
                        let text = &self.line[start..self.line.len() - 1];
                        let v = text.iter().fold(0u32, |a, &d| a * 10 + (d - b'0') as u32);
                        if v <= 100 && self.last_percent != Some(v as u8) {
                            self.last_percent = Some(v as u8);
                            out(Parsed::Percent(v as u8));
                        }
                    }
                }
                _ => {
                    if self.line.len() >= MAX_LINE {
                        self.end_line(out);
                    }
                    self.line.push(b)
                }
            }
        }
    }

    /// End of stream: flush a final unterminated line.
    pub fn finish(&mut self, out: &mut dyn FnMut(Parsed)) {
        self.end_line(out);
    }

    fn end_line(&mut self, out: &mut dyn FnMut(Parsed)) {
        if self.line.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.line).trim_end().to_string();
        self.line.clear();
        if let Some(step) = parse_step(&text) {
            self.last_percent = None;
            out(step);
        }
        if !text.is_empty() {
            out(Parsed::Line(text));
        }
    }
}

fn parse_step(line: &str) -> Option<Parsed> {
    if let Some(rest) = line.trim_start().strip_prefix(STEP_MARKER) {
        let (count, label) = rest.split_once(' ').unwrap_or((rest, ""));
        let (i, t) = count.split_once('/')?;
        return Some(Parsed::Step {
            index: i.parse().ok(),
            total: t.parse().ok(),
            label: label.trim().to_string(),
        });
    }
    // program_flash: "Performing Erase Operation..."
    let op = line
        .trim_start()
        .strip_prefix("Performing ")?
        .split_once(" Operation")?
        .0;
    Some(Parsed::Step {
        index: None,
        total: None,
        label: op.to_ascii_lowercase(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FlashEvent, Tool};
    use proptest::prelude::*;

    proptest! {
        /// Whatever a vendor tool prints, in whatever pieces the pipe delivers it: no
        /// panic, percentages within 0..=100, lines within MAX_LINE, and the progress bar
        /// fed with the events stays within 0..=1.
        #[test]
        fn arbitrary_output_never_panics(
            chunks in proptest::collection::vec(
                prop_oneof![
                    proptest::collection::vec(any::<u8>(), 0..64),
                    "[0-9%/ \r\nA-Za-z#.]{0,40}".prop_map(String::into_bytes),
                    Just(b"##STEP 3/2 x\n".to_vec()),
                    Just(b"##STEP 0/0\n999% 100% 1000%\n".to_vec()),
                    Just(b"Performing Program Operation...\n".to_vec()),
                ],
                0..12,
            )
        ) {
            let mut events = Vec::new();
            let mut p = OutputParser::new();
            for c in &chunks {
                p.feed(c, &mut |e| events.push(e));
            }
            p.finish(&mut |e| events.push(e));
            let mut t = ProgressTracker::new();
            t.update(&FlashEvent::Start {
                tool: Tool::Xsct,
                command: String::new(),
                index: 1,
                total: 1,
            });
            for e in events {
                let ev = match e {
                    Parsed::Percent(v) => {
                        prop_assert!(v <= 100);
                        FlashEvent::Percent(v)
                    }
                    Parsed::Line(text) => {
                        prop_assert!(text.len() <= 3 * MAX_LINE, "{} bytes", text.len());
                        FlashEvent::Line { stream: crate::Stream::Stdout, text }
                    }
                    Parsed::Step { index, total, label } => FlashEvent::Step { index, total, label },
                };
                t.update(&ev);
                prop_assert!((0.0..=1.0).contains(&t.fraction()));
            }
        }
    }

    #[test]
    fn a_line_without_breaks_is_cut_at_max_line() {
        let mut lines = Vec::new();
        let mut p = OutputParser::new();
        p.feed(&vec![b'x'; MAX_LINE * 2 + 5], &mut |e| {
            if let Parsed::Line(t) = e {
                lines.push(t.len())
            }
        });
        p.finish(&mut |e| {
            if let Parsed::Line(t) = e {
                lines.push(t.len())
            }
        });
        assert_eq!(lines, [MAX_LINE, MAX_LINE, 5]);
    }

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<Parsed> {
        let mut p = OutputParser::new();
        let mut v = Vec::new();
        for c in chunks {
            p.feed(c, &mut |e| v.push(e));
        }
        p.finish(&mut |e| v.push(e));
        v
    }

    #[test]
    fn xsct_progress_redraws_with_carriage_returns() {
        let v = parse_chunks(&[
            b"  0%    0MB   0.0MB/s  ??:?? ETA\r 4",
            b"7%    3MB   1.6MB/s  00:02 ETA\r100%    7MB   1.7MB/s  00:04    \n",
        ]);
        let pct: Vec<u8> = v
            .iter()
            .filter_map(|e| match e {
                Parsed::Percent(p) => Some(*p),
                _ => None,
            })
            .collect();
        assert_eq!(pct, [0, 47, 100]);
        assert!(v.contains(&Parsed::Line("100%    7MB   1.7MB/s  00:04".into())));
    }

    #[test]
    fn percentages_arrive_before_the_line_ends() {
        let mut p = OutputParser::new();
        let mut v = Vec::new();
        p.feed(b"0%...10%...2", &mut |e| v.push(e));
        assert_eq!(v, [Parsed::Percent(0), Parsed::Percent(10)]);
        p.feed(b"0%...", &mut |e| v.push(e));
        assert_eq!(v.last(), Some(&Parsed::Percent(20)));
    }

    #[test]
    fn steps_from_markers_and_program_flash() {
        let v = parse_chunks(&[
            b"clio-step: 2/4 program PL\nPerforming Erase Operation...\n250% 1234% x%\n",
        ]);
        assert_eq!(
            v,
            [
                Parsed::Step {
                    index: Some(2),
                    total: Some(4),
                    label: "program PL".into()
                },
                Parsed::Line("clio-step: 2/4 program PL".into()),
                Parsed::Step {
                    index: None,
                    total: None,
                    label: "erase".into()
                },
                Parsed::Line("Performing Erase Operation...".into()),
                Parsed::Line("250% 1234% x%".into()),
            ]
        );
    }
}

/// Folds [`FlashEvent`](crate::FlashEvent)s into one overall fraction and a
/// label, for a single progress bar.
///
/// Tool runs split the bar evenly; within a run, numbered steps
/// (`clio-step: N/T`) split it evenly and a step's percentage fills its
/// share. Steps without a total (`program_flash`'s erase/program/verify)
/// fill the whole run's share each, so the bar restarts per step; their
/// label says which.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgressTracker {
    run: usize,
    runs: usize,
    step: Option<(u32, u32)>,
    label: String,
    percent: u8,
    done_runs: usize,
}

impl ProgressTracker {
    /// A tracker before the first event.
    pub fn new() -> ProgressTracker {
        ProgressTracker::default()
    }

    /// Take one event; `true` if the fraction or the label changed.
    pub fn update(&mut self, ev: &crate::FlashEvent) -> bool {
        use crate::FlashEvent as E;
        let before = (self.fraction(), self.label.clone());
        match ev {
            E::Start {
                tool, index, total, ..
            } => {
                self.run = *index;
                self.runs = *total;
                self.step = None;
                self.percent = 0;
                self.label = tool.name().to_string();
            }
            E::Step {
                index,
                total,
                label,
            } => {
                self.step = index.zip(*total).filter(|&(i, t)| i >= 1 && i <= t);
                self.percent = 0;
                self.label = label.clone();
            }
            E::Percent(p) => self.percent = (*p).min(100),
            E::Finished { .. } => {
                self.done_runs = self.run;
                self.step = None;
                self.percent = 0;
            }
            // A host step shows its label; it moves no fraction (it takes
            // milliseconds next to the tool runs).
            E::Host { label, .. } => self.label = label.clone(),
            E::Line { .. } => {}
        }
        before != (self.fraction(), self.label.clone())
    }

    /// Overall progress, 0.0 to 1.0.
    pub fn fraction(&self) -> f64 {
        if self.runs == 0 {
            return 0.0;
        }
        let within = if self.done_runs >= self.run {
            0.0
        } else {
            let p = self.percent as f64 / 100.0;
            match self.step {
                Some((i, t)) => ((i - 1) as f64 + p) / t as f64,
                None => p,
            }
        };
        ((self.done_runs as f64 + within) / self.runs as f64).min(1.0)
    }

    /// What is happening now (the current step, or the tool).
    pub fn label(&self) -> &str {
        &self.label
    }
}

#[cfg(test)]
mod tracker_tests {
    use super::*;
    use crate::{FlashEvent, Tool};
    use std::time::Duration;

    #[test]
    fn numbered_steps_and_percentages_fill_one_bar() {
        let mut t = ProgressTracker::new();
        let ev = |e: FlashEvent, t: &mut ProgressTracker| {
            t.update(&e);
            t.fraction()
        };
        let start = FlashEvent::Start {
            tool: Tool::Xsct,
            command: "xsct s.tcl".into(),
            index: 1,
            total: 1,
        };
        assert_eq!(ev(start, &mut t), 0.0);
        assert_eq!(t.label(), "xsct");
        let step = |i| FlashEvent::Step {
            index: Some(i),
            total: Some(4),
            label: format!("s{i}"),
        };
        assert_eq!(ev(step(1), &mut t), 0.0);
        assert_eq!(ev(FlashEvent::Percent(50), &mut t), 0.125);
        assert_eq!(ev(step(2), &mut t), 0.25);
        assert_eq!(t.label(), "s2");
        assert_eq!(ev(step(4), &mut t), 0.75);
        assert_eq!(ev(FlashEvent::Percent(100), &mut t), 1.0);
        let done = FlashEvent::Finished {
            tool: Tool::Xsct,
            elapsed: Duration::ZERO,
        };
        assert_eq!(ev(done, &mut t), 1.0);
        assert!(!t.update(&FlashEvent::Line {
            stream: crate::Stream::Stdout,
            text: "x".into()
        }));
    }

    #[test]
    fn unnumbered_steps_restart_the_bar() {
        let mut t = ProgressTracker::new();
        t.update(&FlashEvent::Start {
            tool: Tool::ProgramFlash,
            command: String::new(),
            index: 1,
            total: 1,
        });
        t.update(&FlashEvent::Step {
            index: None,
            total: None,
            label: "program".into(),
        });
        t.update(&FlashEvent::Percent(70));
        assert_eq!((t.fraction(), t.label()), (0.7, "program"));
        t.update(&FlashEvent::Step {
            index: None,
            total: None,
            label: "verify".into(),
        });
        assert_eq!((t.fraction(), t.label()), (0.0, "verify"));
    }
}
