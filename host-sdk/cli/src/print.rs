//! The binary's rendering of progress events (`clio_cli::progress`) as the
//! text `clio` prints while a command runs. The library only reports
//! events; what a row looks like on a terminal is decided here.

use clio_cli::progress::{Event, Progress};
use clio_cli::report::fmt_ns;
use indicatif::{ProgressBar, ProgressStyle};

/// How step rows are laid out.
#[derive(Debug, Clone, Copy)]
pub enum Rows {
    /// `  PASS  identity           board 'x', …` (bring-up checks).
    Checks,
    /// `  ok   name…  12.3 µs  detail`, the name padded to this width (demos).
    Timed(usize),
}

/// Prints events to standard output as they come.
pub struct Printer {
    rows: Rows,
    bar: Option<ProgressBar>,
}

impl Printer {
    /// A printer laying rows out as `rows`.
    pub fn new(rows: Rows) -> Self {
        Self { rows, bar: None }
    }
}

impl Progress for Printer {
    fn event(&mut self, e: Event) {
        match e {
            Event::Began { command, against } => println!("{command}: {against}"),
            Event::Config(name) => println!("  (board config '{name}')"),
            Event::Endpoint { name, detail } => println!("  {name}: {detail}"),
            Event::Advanced { done, total } => {
                let bar = self.bar.get_or_insert_with(|| {
                    let b = ProgressBar::new(total);
                    b.set_style(
                        ProgressStyle::with_template(
                            "  memory test {bar:40} {pos}/{len} chunks {msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    b
                });
                bar.set_position(done);
            }
            Event::Step(s) => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                match self.rows {
                    Rows::Checks => println!(
                        "  {:<5} {:<18} {}",
                        if s.ok { "PASS" } else { "FAIL" },
                        s.name,
                        s.detail
                    ),
                    Rows::Timed(w) => println!(
                        "  {:<4} {:<w$} {:>10}  {}",
                        if s.ok { "ok" } else { "FAIL" },
                        s.name,
                        fmt_ns(s.micros * 1e3),
                        s.detail
                    ),
                }
            }
        }
    }
}

/// `clio flash`: the plan with `--dry-run`, else a progress bar over the
/// tools' events (their lines with `--verbose`), then the report.
pub fn flash(a: &clio_cli::flash::FlashArgs) -> anyhow::Result<()> {
    use clio_cli::flash;
    use clio_flash::{FlashEvent, ProgressTracker, Toolchain};
    let tools = Toolchain::from_env();
    if a.dry_run {
        print!("{}", flash::dry_run(a, &tools)?);
        return Ok(());
    }
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(1000)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {percent:>3}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut tracker = ProgressTracker::new();
    let report = flash::flash(a, &tools, &mut |ev: &FlashEvent| {
        match ev {
            FlashEvent::Line { text, .. } if a.verbose => bar.println(text),
            FlashEvent::Host { command, .. } => bar.println(format!("$ {command}")),
            _ => {}
        }
        if tracker.update(ev) {
            bar.set_position((tracker.fraction() * 1000.0) as u64);
            bar.set_message(tracker.label().to_string());
        }
    })?;
    bar.finish_and_clear();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&flash::report_json(&report))?
        );
    } else {
        println!("{}", flash::report_line(&report));
    }
    Ok(())
}
