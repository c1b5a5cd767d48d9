//! What a long-running command tells its caller while it runs.
//!
//! The library does not print: a command such as [`crate::bringup::check`]
//! or [`crate::demo::demo`] calls a [`Progress`] sink with typed [`Event`]s
//! as it goes and returns a report value at the end. The `clio` binary
//! supplies a sink that renders the events as text; a test or another
//! program can record them (`Vec<Event>` is a sink) or ignore them
//! ([`Silent`]).

use std::time::Instant;

use anyhow::Result;

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The run began: the command (`clio bringup`) and what it runs
    /// against, in one line.
    Began {
        /// The command, as a user would type it.
        command: String,
        /// What the run targets (a board address, an emulated rack).
        against: String,
    },
    /// The board config the run chose (bring-up reads it from the board's
    /// identity answer).
    Config(String),
    /// Progress inside the running step: `done` of `total` units (the
    /// memory test's chunks).
    Advanced {
        /// Units done so far.
        done: u64,
        /// Units in the step.
        total: u64,
    },
    /// Something the run serves, and where (`card 0`: `xdma://… -> memory node 0`).
    Endpoint {
        /// What it is.
        name: String,
        /// Where it is and what is behind it.
        detail: String,
    },
    /// A step (a check, a demo step) ended.
    Step(StepOutcome),
}

/// How one step of a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    /// The step's name.
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What it measured, or why it failed (with the error's causes).
    pub detail: String,
    /// How long it took, in microseconds.
    pub micros: f64,
}

impl StepOutcome {
    /// Runs `f` as the step `name`: its time, and its text or error.
    pub fn run(name: &str, f: impl FnOnce() -> Result<String>) -> Self {
        let t = Instant::now();
        let r = f();
        let micros = t.elapsed().as_secs_f64() * 1e6;
        let (ok, detail) = match r {
            Ok(d) => (true, d),
            Err(e) => (false, format!("{e:#}")),
        };
        Self {
            name: name.into(),
            ok,
            detail,
            micros,
        }
    }
}

/// Where a command sends its events.
pub trait Progress {
    /// Called once per event, in order, on the command's thread.
    fn event(&mut self, e: Event);
}

/// A sink that drops every event (for `--json`, or a caller that only
/// wants the report).
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {
    fn event(&mut self, _: Event) {}
}

/// Records every event (tests, programs that render later).
impl Progress for Vec<Event> {
    fn event(&mut self, e: Event) {
        self.push(e);
    }
}

/// The steps among recorded events: (name, ok).
pub fn steps(events: &[Event]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Step(s) => Some((s.name.clone(), s.ok)),
            _ => None,
        })
        .collect()
}
