//! Progress of a run on standard error, fed by the library's progress callback
//! ([`paimon_cleanup::clean::ProgressFn`]: phase, done, total, bytes).
//!
//! * [`Mode::Bars`]: a live display, one bar per phase (versions read, manifests read, files
//!   listed, files deleted) with the count, bytes, rate and ETA (`indicatif`). Chosen by
//!   `--progress auto` (the default) when standard error is a terminal.
//! * [`Mode::Json`]: at most one line per phase per second on standard error, each a JSON object
//!   `{"progress":{"phase","done","total","bytes","rate","elapsed_ms"}}` (`bytes`: this phase's;
//!   `rate`: items per second since the phase began), for schedulers; the
//!   last state of every phase is written when the run ends. `--progress json`, tty or not.
//! * [`Mode::Off`]: nothing (`--quiet`, `--progress none`, or `auto` without a terminal).
//!
//! One display per process: [`start`] installs it, [`callback`] feeds it and [`finish`] (called
//! before the report is printed, and on an error) draws the final state and stops it.
//!
//! Log records go through the display too ([`log_writer`], the `tracing` writer of the CLI):
//! while bars are drawn, each record is written with the bars cleared and redrawn after it,
//! so a record never lands inside a bar's line nor is drawn over by the next redraw.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use indicatif::{HumanBytes, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use paimon_cleanup::clean::ProgressFn;

/// What `--progress` asks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Choice {
    /// Bars when standard error is a terminal, nothing otherwise.
    Auto,
    /// Bars (on a terminal; nothing is drawn otherwise).
    Bar,
    /// JSON lines on standard error, one per phase per second.
    Json,
    /// No progress.
    None,
}

/// The display in use.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Nothing is shown.
    Off,
    /// Live bars on a terminal.
    Bars,
    /// JSON lines.
    Json,
}

/// The mode for `choice`, `--quiet` and whether standard error is a terminal.
pub fn mode(choice: Choice, quiet: bool, stderr_is_terminal: bool) -> Mode {
    match choice {
        _ if quiet => Mode::Off,
        Choice::Json => Mode::Json,
        Choice::Auto | Choice::Bar if stderr_is_terminal => Mode::Bars,
        _ => Mode::Off,
    }
}

/// One phase's latest state.
struct Phase {
    started: Instant,
    /// The run's bytes (the callback's `bytes` counts every phase so far) when this phase began.
    base: u64,
    done: u64,
    total: u64,
    bytes: u64,
    /// The JSON display wrote this state already.
    written: bool,
    bar: Option<ProgressBar>,
}

struct Display {
    mode: Mode,
    started: Instant,
    multi: Option<MultiProgress>,
    /// Phases in the order they first reported.
    order: Vec<String>,
    phases: HashMap<String, Phase>,
    /// The last `bytes` of the callback: the bytes of the run so far.
    run_bytes: u64,
}

struct Live {
    display: Arc<Mutex<Display>>,
    ticker: Option<(crossbeam_channel::Sender<()>, std::thread::JoinHandle<()>)>,
}

static LIVE: OnceLock<Mutex<Option<Live>>> = OnceLock::new();

/// The bars while they are drawn (from [`start`] to [`finish`]), for [`log_writer`]: held apart
/// from the display's lock so that a record logged while the display is updated never waits
/// on it.
static BARS: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Standard error for log records: each write (a whole record, as `tracing`'s formatter
/// writes one) is made with the bars suspended when bars are drawn.
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let bars = BARS.lock().ok().and_then(|b| b.clone());
        match bars {
            Some(bars) => bars.suspend(|| std::io::stderr().lock().write_all(buf))?,
            None => std::io::stderr().lock().write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// The writer of the CLI's log records (`tracing_subscriber`'s `with_writer`): see
/// [`LogWriter`].
pub fn log_writer() -> LogWriter {
    LogWriter
}

/// Installs the display of this process (once; later calls change nothing).
pub fn start(mode: Mode) {
    if mode == Mode::Off {
        return;
    }
    let multi = (mode == Mode::Bars)
        .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10)));
    if let (Some(m), Ok(mut bars)) = (&multi, BARS.lock()) {
        *bars = Some(m.clone());
    }
    let display = Arc::new(Mutex::new(Display {
        mode,
        started: Instant::now(),
        multi,
        order: Vec::new(),
        phases: HashMap::new(),
        run_bytes: 0,
    }));
    let ticker = (mode == Mode::Json).then(|| {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(1);
        let d = display.clone();
        let handle = std::thread::spawn(move || {
            while let Err(crossbeam_channel::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_secs(1))
            {
                if let Ok(mut d) = d.lock() {
                    d.write_json_lines();
                }
            }
        });
        (stop, handle)
    });
    let _ = LIVE.set(Mutex::new(Some(Live { display, ticker })));
}

/// The progress callback of a run, when a display is installed.
pub fn callback() -> Option<ProgressFn> {
    let live = LIVE.get()?.lock().ok()?;
    let display = live.as_ref()?.display.clone();
    Some(Arc::new(move |phase: &str, done, total, bytes| {
        if let Ok(mut d) = display.lock() {
            d.update(phase, done, total, bytes);
        }
    }))
}

/// Draws the final state of every phase and stops the display. Later calls do nothing.
pub fn finish() {
    let Some(slot) = LIVE.get() else {
        return;
    };
    let Some(live) = slot.lock().ok().and_then(|mut l| l.take()) else {
        return;
    };
    if let Some((stop, handle)) = live.ticker {
        let _ = stop.send(());
        let _ = handle.join();
    }
    if let Ok(mut d) = live.display.lock() {
        d.finish();
    };
    if let Ok(mut bars) = BARS.lock() {
        *bars = None;
    }
}

impl Display {
    fn update(&mut self, name: &str, done: u64, total: u64, bytes: u64) {
        if !self.phases.contains_key(name) {
            let bar = self.multi.as_ref().map(|m| {
                let bar = m.add(ProgressBar::new(total));
                bar.set_style(style());
                bar.set_prefix(name.to_string());
                bar
            });
            self.order.push(name.to_string());
            self.phases.insert(
                name.to_string(),
                Phase {
                    started: Instant::now(),
                    base: self.run_bytes,
                    done: 0,
                    total,
                    bytes: 0,
                    written: true,
                    bar,
                },
            );
        }
        let run_bytes = self.run_bytes;
        self.run_bytes = bytes;
        let Some(p) = self.phases.get_mut(name) else {
            return;
        };
        // A later operation of the same command (a maintain step) counts its bytes from 0.
        if bytes < p.base {
            p.base = if bytes < run_bytes { 0 } else { run_bytes };
        }
        let phase_bytes = bytes.saturating_sub(p.base);
        // The library's counters only grow within a phase; a phase run again (per branch, per
        // maintain step) starts over from 0, and its counts are added.
        if done < p.done {
            p.total = p.total.saturating_add(total);
            p.done = p.done.saturating_add(done);
            p.bytes = p.bytes.saturating_add(phase_bytes);
        } else {
            p.total = p.total.max(total);
            p.done = done;
            p.bytes = p.bytes.max(phase_bytes);
        }
        p.written = false;
        if let Some(bar) = &p.bar {
            bar.set_length(p.total.max(p.done));
            bar.set_position(p.done);
            if p.bytes > 0 {
                bar.set_message(format!("{}", HumanBytes(p.bytes)));
            }
        }
    }

    fn write_json_lines(&mut self) {
        let now = Instant::now();
        let elapsed_ms = now.duration_since(self.started).as_millis();
        let mut err = std::io::stderr().lock();
        for name in &self.order {
            let Some(p) = self.phases.get_mut(name) else {
                continue;
            };
            if p.written {
                continue;
            }
            p.written = true;
            let secs = now.duration_since(p.started).as_secs_f64();
            let rate = if secs > 0.0 {
                p.done as f64 / secs
            } else {
                0.0
            };
            let line = serde_json::json!({"progress": {
                "phase": name,
                "done": p.done,
                "total": p.total,
                "bytes": p.bytes,
                "rate": (rate * 10.0).round() / 10.0,
                "elapsed_ms": elapsed_ms,
            }});
            // A closed stderr leaves nobody to tell; the run goes on.
            let _ = writeln!(err, "{line}");
        }
    }

    fn finish(&mut self) {
        match self.mode {
            Mode::Json => self.write_json_lines(),
            Mode::Bars => {
                for name in &self.order {
                    if let Some(bar) = self.phases.get(name).and_then(|p| p.bar.as_ref()) {
                        bar.set_style(done_style());
                        bar.finish();
                    }
                }
            }
            Mode::Off => {}
        }
    }
}

/// A running phase: name, bar, count, bytes, rate and ETA.
fn style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix:>22} [{bar:24}] {human_pos}/{human_len} {msg} ({rate}, ETA {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .with_key(
        "rate",
        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0}/s", state.per_sec());
        },
    )
    .progress_chars("=> ")
}

/// A finished phase: its counts and the time it took.
fn done_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>22} done: {human_pos}/{human_len} {msg} in {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_follows_choice_quiet_and_terminal() {
        assert_eq!(mode(Choice::Auto, false, true), Mode::Bars);
        assert_eq!(mode(Choice::Auto, false, false), Mode::Off);
        assert_eq!(mode(Choice::Auto, true, true), Mode::Off);
        assert_eq!(mode(Choice::Json, false, false), Mode::Json);
        assert_eq!(mode(Choice::Json, true, true), Mode::Off);
        assert_eq!(mode(Choice::None, false, true), Mode::Off);
        assert_eq!(mode(Choice::Bar, false, false), Mode::Off);
    }
}
