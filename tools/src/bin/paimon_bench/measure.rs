//! Measurements of one phase in its own process: wall time, CPU time, peak RSS (`VmHWM`) and
//! named steps, reported to the parent as one JSON line on stdout.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Prefix of the line a child prints its [`Measure`] on.
pub const RESULT_PREFIX: &str = "BENCH-RESULT ";

/// One timed step inside a phase (milliseconds from the phase start).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Step {
    /// What was done.
    pub name: String,
    /// Start, ms after the phase started.
    pub start_ms: f64,
    /// End, ms after the phase started.
    pub end_ms: f64,
    /// Items handled (files, entries, events).
    pub count: u64,
    /// Resident set size at the end of the step, KiB (0 when not sampled).
    #[serde(default)]
    pub rss_kb: u64,
}

/// What a child process measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Measure {
    /// Phase name (`baseline`, `plan`, `floor`, `op`).
    pub phase: String,
    /// Wall time of the measured work, ms.
    pub wall_ms: f64,
    /// User + system CPU time of the whole process, ms.
    pub cpu_ms: f64,
    /// Peak resident set size of the process, KiB (`VmHWM`).
    pub vmhwm_kb: u64,
    /// Files deleted (or, for a drop, marked deleted).
    pub files: u64,
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// Anything else worth keeping (operation report summary, ...).
    pub extra: serde_json::Value,
}

/// `VmHWM` of this process in KiB (0 where `/proc` is unavailable).
pub fn vmhwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Current resident set size of this process in KiB (`VmRSS`; 0 where unavailable).
pub fn vmrss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU time of this process so far, ms.
pub fn cpu_ms() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage struct; RUSAGE_SELF is always accepted.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(ru.ru_utime) + ms(ru.ru_stime)
}

/// Records steps relative to a start instant.
#[derive(Debug)]
pub struct Clock {
    start: Instant,
    cpu_start: f64,
    steps: Vec<Step>,
}

impl Clock {
    /// Starts now.
    pub fn start() -> Self {
        Clock {
            start: Instant::now(),
            cpu_start: cpu_ms(),
            steps: Vec::new(),
        }
    }

    /// Milliseconds since the start.
    pub fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }

    /// Runs `f` as a named step and records its duration and item count.
    pub fn step<T>(&mut self, name: &str, f: impl FnOnce() -> (T, u64)) -> T {
        let start_ms = self.now_ms();
        let (out, count) = f();
        self.steps.push(Step {
            name: name.to_string(),
            start_ms,
            end_ms: self.now_ms(),
            count,
            rss_kb: vmrss_kb(),
        });
        out
    }

    /// Adds steps measured elsewhere.
    pub fn extend(&mut self, steps: impl IntoIterator<Item = Step>) {
        self.steps.extend(steps);
    }

    /// The finished measure.
    pub fn finish(self, phase: &str, files: u64, extra: serde_json::Value) -> Measure {
        Measure {
            phase: phase.to_string(),
            wall_ms: self.now_ms(),
            cpu_ms: cpu_ms() - self.cpu_start,
            vmhwm_kb: vmhwm_kb(),
            files,
            steps: self.steps,
            extra,
        }
    }
}

/// Collects `RunControl` progress calls: per phase the first and last call and the count done.
#[derive(Debug, Clone)]
pub struct ProgressLog {
    start: Instant,
    phases: Arc<Mutex<BTreeMap<String, Step>>>,
}

impl ProgressLog {
    /// A log whose times are relative to `start`.
    pub fn new(start: Instant) -> Self {
        ProgressLog {
            start,
            phases: Arc::new(Mutex::new(BTreeMap::new())),
        }
    }

    /// The callback to put into `RunControl::progress`.
    pub fn callback(&self) -> paimon_cleanup::clean::control::ProgressFn {
        let this = self.clone();
        Arc::new(move |phase: &str, done: u64, _total: u64, _bytes: u64| {
            let t = this.start.elapsed().as_secs_f64() * 1000.0;
            if let Ok(mut p) = this.phases.lock() {
                let s = p.entry(phase.to_string()).or_insert_with(|| Step {
                    name: format!("progress: {phase}"),
                    start_ms: t,
                    end_ms: t,
                    count: 0,
                    rss_kb: 0,
                });
                s.end_ms = t;
                s.count = done;
            }
        })
    }

    /// Steps ordered by their first call.
    pub fn steps(&self) -> Vec<Step> {
        let mut v: Vec<Step> = self
            .phases
            .lock()
            .map(|p| p.values().cloned().collect())
            .unwrap_or_default();
        v.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
        v
    }
}

/// A tracing layer that counts the library's events by message (and, for reads, by the kind
/// of file read) with the time of the first and last one: a cheap phase profile.
pub mod events {
    use super::*;
    use tracing::field::{Field, Visit};
    use tracing::{Event, Subscriber};
    use tracing_subscriber::layer::Context;
    use tracing_subscriber::Layer;

    /// The layer; clone it to read the results.
    #[derive(Clone)]
    pub struct EventLog {
        start: Instant,
        map: Arc<Mutex<BTreeMap<String, Step>>>,
    }

    #[derive(Default)]
    struct Fields {
        message: String,
        path: String,
    }

    impl Visit for Fields {
        fn record_str(&mut self, field: &Field, value: &str) {
            self.record(field, value.to_string());
        }
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.record(field, format!("{value:?}"));
        }
    }

    impl Fields {
        fn record(&mut self, field: &Field, value: String) {
            match field.name() {
                "message" => self.message = value,
                "path" | "dir" => self.path = value,
                _ => {}
            }
        }
    }

    /// What kind of file a path is, by its name.
    fn kind_of(path: &str) -> &'static str {
        let name = path.rsplit('/').next().unwrap_or(path);
        if path.contains("/branch/") && name.starts_with("snapshot-") {
            "branch snapshot"
        } else if name.starts_with("snapshot-") {
            "snapshot"
        } else if name.starts_with("manifest-list-") {
            "manifest list"
        } else if name.starts_with("index-manifest-") {
            "index manifest"
        } else if name.starts_with("manifest-") {
            "manifest"
        } else if name.starts_with("tag-") {
            "tag"
        } else if name.starts_with("schema-") {
            "schema"
        } else if name.starts_with("data-") || name.starts_with("changelog-") {
            "data"
        } else {
            "other"
        }
    }

    impl EventLog {
        /// A log whose times are relative to `start`.
        pub fn new(start: Instant) -> Self {
            EventLog {
                start,
                map: Arc::new(Mutex::new(BTreeMap::new())),
            }
        }

        /// Steps ordered by their first event.
        pub fn steps(&self) -> Vec<Step> {
            let mut v: Vec<Step> = self
                .map
                .lock()
                .map(|m| m.values().cloned().collect())
                .unwrap_or_default();
            v.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
            v
        }
    }

    impl<S: Subscriber> Layer<S> for EventLog {
        fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
            let mut f = Fields::default();
            event.record(&mut f);
            let key = if f.path.is_empty() {
                format!("event: {}", f.message)
            } else {
                format!("event: {} ({})", f.message, kind_of(&f.path))
            };
            let t = self.start.elapsed().as_secs_f64() * 1000.0;
            if let Ok(mut m) = self.map.lock() {
                let s = m.entry(key.clone()).or_insert_with(|| Step {
                    name: key,
                    start_ms: t,
                    end_ms: t,
                    count: 0,
                    rss_kb: 0,
                });
                s.end_ms = t;
                s.count += 1;
            }
        }
    }
}
