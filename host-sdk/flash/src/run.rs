//! Running one tool: stream its output as events, keep its last lines for
//! errors, enforce the time limit.

use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::plan::Invocation;
use crate::progress::{OutputParser, Parsed, DONE_MARKER};
use crate::{FlashError, Tool};

/// Lines of tool output kept for error messages.
const LAST_LINES: usize = 15;

/// Which output stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// What happens during a flash, for a progress bar or a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlashEvent {
    /// A tool starts.
    Start {
        /// The tool.
        tool: Tool,
        /// Its command line.
        command: String,
        /// 1-based number of this tool run.
        index: usize,
        /// Tool runs in the plan.
        total: usize,
    },
    /// The tool began a step.
    Step {
        /// 1-based step number, when known.
        index: Option<u32>,
        /// Steps of this tool run, when known.
        total: Option<u32>,
        /// What the step does.
        label: String,
    },
    /// Progress within the current step, 0..=100.
    Percent(u8),
    /// A line of tool output.
    Line {
        /// Stream it came from.
        stream: Stream,
        /// The line.
        text: String,
    },
    /// A host step runs (PCIe remove/rescan, SD copy).
    Host {
        /// Progress label.
        label: String,
        /// The step as a shell command.
        command: String,
    },
    /// The tool finished successfully.
    Finished {
        /// The tool.
        tool: Tool,
        /// Its run time.
        elapsed: Duration,
    },
}

fn pump(mut r: impl Read + Send + 'static, stream: Stream, tx: mpsc::Sender<(Stream, Vec<u8>)>) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send((stream, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
    });
}

/// The last lines of both streams for an error report: stdout's, then stderr's.
fn tail(last: &[VecDeque<String>; 2]) -> Vec<String> {
    last.iter().flatten().cloned().collect()
}

/// Run `inv` in `dir` until it exits or `timeout` passes.
pub(crate) fn run_tool(
    inv: &Invocation,
    dir: &Path,
    timeout: Duration,
    on_event: &mut dyn FnMut(&FlashEvent),
) -> Result<(), FlashError> {
    let tool = inv.tool.name();
    let mut child = Command::new(&inv.program)
        .args(inv.args(dir))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| FlashError::Spawn {
            tool,
            path: inv.program.clone(),
            source,
        })?;
    let (tx, rx) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        pump(out, Stream::Stdout, tx.clone());
    }
    if let Some(err) = child.stderr.take() {
        pump(err, Stream::Stderr, tx);
    }
    let deadline = Instant::now() + timeout;
    let mut parsers = [OutputParser::new(), OutputParser::new()];
    // Per stream: the two pipes are read by two threads, so their relative
    // order is arbitrary and a burst on one must not push the other's last
    // words (often the error) out of the report.
    let mut last: [VecDeque<String>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut done_seen = false;
    let mut handle = |stream: Stream, p: Parsed, last: &mut [VecDeque<String>; 2]| {
        let last = &mut last[stream as usize];
        let ev = match p {
            Parsed::Line(text) => {
                done_seen |= stream == Stream::Stdout && text.trim() == DONE_MARKER;
                if last.len() == LAST_LINES {
                    last.pop_front();
                }
                last.push_back(text.clone());
                FlashEvent::Line { stream, text }
            }
            Parsed::Step {
                index,
                total,
                label,
            } => FlashEvent::Step {
                index,
                total,
                label,
            },
            Parsed::Percent(p) => FlashEvent::Percent(p),
        };
        on_event(&ev);
    };
    loop {
        let now = Instant::now();
        if now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(FlashError::ToolTimeout {
                tool,
                after: timeout,
                last_lines: tail(&last),
            });
        }
        match rx.recv_timeout(deadline - now) {
            Ok((stream, chunk)) => {
                let i = stream as usize;
                parsers[i].feed(&chunk, &mut |p| handle(stream, p, &mut last));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            // Both pipes closed: the tool exited (or closed its output).
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    for (i, stream) in [Stream::Stdout, Stream::Stderr].into_iter().enumerate() {
        parsers[i].finish(&mut |p| handle(stream, p, &mut last));
    }
    // The pipes are closed; give the process the rest of the time limit to
    // be reaped, polling so a tool that closed its output early cannot hang us.
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(FlashError::ToolTimeout {
                    tool,
                    after: timeout,
                    last_lines: tail(&last),
                });
            }
            Err(source) => {
                return Err(FlashError::Spawn {
                    tool,
                    path: inv.program.clone(),
                    source,
                })
            }
        }
    };
    if !status.success() {
        let status = match status.code() {
            Some(c) => format!("exit status {c}"),
            None => format!("{status}"),
        };
        return Err(FlashError::ToolFailed {
            tool,
            status,
            last_lines: tail(&last),
        });
    }
    if inv.runs_our_tcl() && !done_seen {
        return Err(FlashError::ToolFailed {
            tool,
            status: format!("exited 0 without printing `{DONE_MARKER}`: the script stopped early"),
            last_lines: tail(&last),
        });
    }
    Ok(())
}
