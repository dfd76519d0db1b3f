//! The growth check over a series of sizes of one shape (`--size all`: small, medium, large;
//! `--size meta`: meta-1k, meta-2k, meta-4k): per operation, peak memory above the baseline per
//! data file, and operation time per data file, at each size; a size whose bytes per data file
//! pass [`MAX_BYTES_PER_DATA_FILE`] above [`CONSTANT_MIB`], or whose time or memory per data
//! file grows past [`MAX_STEP`] times the previous size's, is flagged. `paimon-bench growth
//! --results FILE` runs the same check over the results of separate runs (medium, large and
//! xlarge, each on its own reused master).

use serde_json::Value;

/// The most peak memory above the baseline per data file an operation may take ...
pub const MAX_BYTES_PER_DATA_FILE: f64 = 64.0;

/// ... above this constant (MiB: runtime, I/O buffers, manifests in flight, the bounded
/// caches such as expiry's reduced manifests kept for protection).
pub const CONSTANT_MIB: f64 = 16.0;

/// Per data file, time and memory may grow at most this much from one size to the next.
pub const MAX_STEP: f64 = 1.3;

/// One size's figures of one operation (medians over its runs).
#[derive(Debug, Clone)]
pub struct Point {
    /// The preset.
    pub size: String,
    /// Data files the generator wrote.
    pub data_files: f64,
    /// Peak RSS above the baseline, bytes.
    pub above: f64,
    /// The operation's CPU time, milliseconds.
    pub cpu_ms: f64,
}

impl Point {
    /// From the runs' JSON results (`run_one`), medians; `None` without runs.
    pub fn of(runs: &[Value]) -> Option<Point> {
        let first = runs.first()?;
        let med = |f: &dyn Fn(&Value) -> Option<f64>| -> f64 {
            let mut v: Vec<f64> = runs.iter().filter_map(f).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
        };
        Some(Point {
            size: first["size"].as_str().unwrap_or("?").to_string(),
            data_files: first["generated"]["data_files"]
                .as_f64()
                .unwrap_or(f64::NAN),
            above: med(&|r| {
                let run = r["run"]["vmhwm_kb"].as_f64()?;
                let base = r["baseline"]["vmhwm_kb"].as_f64()?;
                Some((run - base).max(0.0) * 1024.0)
            }),
            cpu_ms: med(&|r| r["run"]["cpu_ms"].as_f64()),
        })
    }

    /// Bytes per data file above the constant.
    pub fn bytes_over_constant(&self) -> f64 {
        (self.above - CONSTANT_MIB * 1048576.0).max(0.0) / self.data_files
    }
}

/// Markdown rows (one per size) for one operation's series, and the problems found.
pub fn check(op: &str, points: &[Point]) -> (Vec<String>, Vec<String>) {
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    let mut prev: Option<&Point> = None;
    for p in points {
        let per_file = p.above / p.data_files;
        let over = p.bytes_over_constant();
        let cpu_us = p.cpu_ms * 1000.0 / p.data_files;
        let (mem_step, cpu_step) = match prev {
            Some(q) => (
                per_file / (q.above / q.data_files),
                cpu_us / (q.cpu_ms * 1000.0 / q.data_files),
            ),
            None => (f64::NAN, f64::NAN),
        };
        if over > MAX_BYTES_PER_DATA_FILE {
            problems.push(format!(
                "{op} at {}: {over:.0} B per data file above {CONSTANT_MIB} MiB (goal {MAX_BYTES_PER_DATA_FILE})",
                p.size
            ));
        }
        // The memory step only counts once the size is past the constant (below it the
        // constant dominates and the ratio says nothing about growth).
        if over > 0.0 && mem_step > MAX_STEP {
            problems.push(format!(
                "{op} at {}: memory per data file {mem_step:.2}x the previous size's",
                p.size
            ));
        }
        if cpu_step > MAX_STEP {
            problems.push(format!(
                "{op} at {}: CPU per data file {cpu_step:.2}x the previous size's",
                p.size
            ));
        }
        rows.push(format!(
            "| {op} | {} | {:.0} | {:.0} | {per_file:.0} | {over:.0} | {mem_step:.2} | {cpu_us:.1} | {cpu_step:.2} |",
            p.size,
            p.data_files,
            p.above / 1048576.0,
        ));
        prev = Some(p);
    }
    (rows, problems)
}

/// The growth check over results written by separate runs (`--results FILE`, one JSON object
/// per line, as `run_one` returns them): grouped by operation (in the order first seen), each
/// operation's sizes ordered by their data files, medians per size. Lets a series whose sizes
/// need different masters (xlarge's, generated once and reused) be checked as one.
pub fn check_results(results: &[Value]) -> (Vec<String>, Vec<String>) {
    let ops = distinct(results.iter(), "op");
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for op in ops {
        let sizes = distinct(
            results.iter().filter(|r| r["op"].as_str() == Some(op)),
            "size",
        );
        let mut points: Vec<Point> = sizes
            .iter()
            .filter_map(|size| {
                let runs: Vec<Value> = results
                    .iter()
                    .filter(|r| r["op"].as_str() == Some(op) && r["size"].as_str() == Some(size))
                    .cloned()
                    .collect();
                Point::of(&runs)
            })
            .collect();
        points.sort_by(|a, b| a.data_files.total_cmp(&b.data_files));
        let (r, p) = check(op, &points);
        rows.extend(r);
        problems.extend(p);
    }
    (rows, problems)
}

/// The distinct string values of `field` in `results`, in the order first seen.
fn distinct<'a>(results: impl Iterator<Item = &'a Value>, field: &str) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for value in results.filter_map(|r| r[field].as_str()) {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    seen
}

/// Prints the growth table (header, one row per size) and the problems found.
pub fn print(rows: &[String], problems: &[String]) {
    println!("Growth per data file:\n{HEADER}");
    for line in rows {
        println!("{line}");
    }
    for p in problems {
        println!("growth: {p}");
    }
}

/// The header of [`check`]'s rows.
pub const HEADER: &str = "| operation | size | data files | peak above baseline MiB | B / data file | B / data file above the constant | memory step | CPU µs / data file | CPU step |\n|---|---|---|---|---|---|---|---|---|";

#[cfg(test)]
mod tests {
    use super::*;

    fn point(size: &str, files: f64, mib: f64, cpu_ms: f64) -> Point {
        Point {
            size: size.into(),
            data_files: files,
            above: mib * 1048576.0,
            cpu_ms,
        }
    }

    #[test]
    fn linear_series_within_the_goal_pass_and_superlinear_ones_are_flagged() {
        let good = [
            point("meta-1k", 100_000.0, 20.0, 1000.0),
            point("meta-2k", 200_000.0, 24.0, 2100.0),
        ];
        let (rows, problems) = check("expire-snapshots", &good);
        assert_eq!(rows.len(), 2);
        assert!(problems.is_empty(), "{problems:?}");
        let bad = [
            point("meta-1k", 100_000.0, 88.0, 1000.0),
            point("meta-2k", 200_000.0, 300.0, 3000.0),
        ];
        let (_, problems) = check("expire-snapshots", &bad);
        assert_eq!(problems.len(), 4, "{problems:?}");
    }

    fn result(op: &str, size: &str, files: u64, above_kb: u64, cpu_ms: u64) -> Value {
        serde_json::json!({
            "op": op, "size": size, "generated": {"data_files": files},
            "baseline": {"vmhwm_kb": 9000}, "run": {"vmhwm_kb": 9000 + above_kb, "cpu_ms": cpu_ms},
        })
    }

    #[test]
    fn results_of_separate_runs_are_grouped_by_operation_and_ordered_by_size() {
        // Written out of order (xlarge first, then medium, then large), two operations mixed,
        // medium twice: the medians per size, each operation's sizes by their data files.
        let results = [
            result("expire-snapshots", "xlarge", 10_000_000, 600_000, 100_000),
            result("drop-partition", "medium", 100_000, 20_000, 100),
            result("expire-snapshots", "medium", 100_000, 20_000, 1_000),
            result("expire-snapshots", "medium", 100_000, 22_000, 1_200),
            result("expire-snapshots", "large", 1_000_000, 70_000, 10_000),
            result("drop-partition", "large", 1_000_000, 30_000, 5_000),
        ];
        let (rows, problems) = check_results(&results);
        let sizes: Vec<&str> = rows
            .iter()
            .map(|r| r.split(" | ").nth(1).unwrap_or(""))
            .collect();
        assert_eq!(sizes, ["medium", "large", "xlarge", "medium", "large"]);
        assert!(
            rows[0].starts_with("| expire-snapshots | medium | 100000 | 21 |"),
            "{}",
            rows[0]
        );
        // expiry grows linearly; drop partition's CPU per file grows 5x from medium to large.
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("drop-partition at large: CPU"),
            "{problems:?}"
        );
    }
}
