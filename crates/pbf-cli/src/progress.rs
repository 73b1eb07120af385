//! Progress of a run on standard error: an indicatif bar with steps per second and the
//! time left when standard error is a terminal, plain lines every 10% of the steps
//! when it is not (a log, a pipe, CI). Nothing shows during the first second, so
//! short runs stay quiet; `--quiet` shows nothing at all.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Nothing.
    Quiet,
    /// An animated bar (standard error is a terminal).
    Bar,
    /// A plain line every 10% of the steps.
    Lines,
}

impl ProgressMode {
    /// `Quiet` if asked, else `Bar` on a terminal and `Lines` otherwise.
    ///
    /// ```
    /// use pbf_cli::ProgressMode;
    /// assert_eq!(ProgressMode::detect(true), ProgressMode::Quiet);
    /// ```
    pub fn detect(quiet: bool) -> Self {
        if quiet {
            ProgressMode::Quiet
        } else if std::io::stderr().is_terminal() {
            ProgressMode::Bar
        } else {
            ProgressMode::Lines
        }
    }
}

/// Reports the progress of a run of `total` steps.
///
/// ```
/// let mut p = pbf_cli::Progress::new(pbf_cli::ProgressMode::Quiet, 10);
/// for step in 1..=10 {
///     p.step(step, 0.1 * step as f64);
/// }
/// p.finish();
/// ```
pub struct Progress {
    mode: ProgressMode,
    total: u64,
    start: Instant,
    bar: Option<ProgressBar>,
    shown: bool,
    next_line: u64,
}

/// Nothing is shown before this much wall time.
const QUIET_START: Duration = Duration::from_secs(1);

impl Progress {
    /// Starts reporting.
    pub fn new(mode: ProgressMode, total: u64) -> Self {
        let bar = (mode == ProgressMode::Bar).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} steps  {msg}  ETA {eta}",
            ) {
                bar.set_style(style);
            }
            bar
        });
        Self {
            mode,
            total,
            start: Instant::now(),
            bar,
            shown: false,
            next_line: 0,
        }
    }

    /// Step `step` (from 1) is done; `time` is the simulated time.
    pub fn step(&mut self, step: u64, time: f64) {
        match self.mode {
            ProgressMode::Quiet => {}
            ProgressMode::Bar => {
                let Some(bar) = &self.bar else { return };
                bar.set_position(step);
                let rate = step as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
                bar.set_message(format!("{rate:.1} steps/s  t = {time:.2} s"));
                if !self.shown && self.start.elapsed() >= QUIET_START {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    self.shown = true;
                }
            }
            ProgressMode::Lines => {
                let tenth = self.total.div_ceil(10).max(1);
                if step < self.next_line.max(tenth) && step != self.total {
                    return;
                }
                self.next_line = (step / tenth + 1) * tenth;
                let elapsed = self.start.elapsed();
                if elapsed < QUIET_START {
                    return;
                }
                let rate = step as f64 / elapsed.as_secs_f64();
                let left = (self.total - step.min(self.total)) as f64 / rate.max(1e-9);
                eprintln!(
                    "step {step}/{} ({:.0}%)  t = {time:.2} s  {rate:.1} steps/s  {left:.0} s left",
                    self.total,
                    100.0 * step as f64 / self.total.max(1) as f64
                );
            }
        }
    }

    /// Clears the bar.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
