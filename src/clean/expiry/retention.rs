//! Retention settings of snapshot and changelog expiry: caller overrides, then table options,
//! then Paimon's defaults (spec §5.1), validated so that a bad setting deletes nothing (P10).

use std::time::Duration;

use crate::clean::shared::clock::millis;
use crate::error::{Error, Result};
use crate::spec::options::TableOptions;

/// Paimon's default `snapshot.num-retained.min`.
pub const DEFAULT_RETAIN_MIN: i64 = 10;
/// Paimon's default `snapshot.num-retained.max`.
pub const DEFAULT_RETAIN_MAX: i64 = i32::MAX as i64;
/// Paimon's default `snapshot.time-retained`.
pub const DEFAULT_TIME_RETAINED: Duration = Duration::from_secs(3600);
/// Paimon's default `snapshot.expire.limit`.
pub const DEFAULT_EXPIRE_LIMIT: i64 = 50;

/// Tags and consumers that an earlier step of the same run removes (or, in a dry run, would
/// remove): they neither bound nor protect anything in the step that gets them. `maintain` fills
/// it so that its dry run plans what its real run does (tag and consumer expiry run first and
/// can widen snapshot and changelog expiry). Empty by default; in a real run the named tags and
/// consumers are already gone, so it changes nothing there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssumeRemoved {
    /// Tags of the table's own branch.
    pub tags: Vec<String>,
    /// Consumer ids.
    pub consumers: Vec<String>,
}

/// Caller-supplied retention; every field optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionOverrides {
    /// Minimum number of versions kept (≥ 1).
    pub retain_min: Option<i64>,
    /// Maximum number of versions kept (≥ retain_min).
    pub retain_max: Option<i64>,
    /// Versions younger than this are kept.
    pub time_retained: Option<Duration>,
    /// Absolute cut-off in epoch ms instead of `time_retained` (must not be in the future).
    pub older_than_ms: Option<i64>,
    /// Maximum versions expired per run (≥ 1).
    pub limit: Option<i64>,
}

/// Resolved retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Minimum kept.
    pub retain_min: i64,
    /// Maximum kept.
    pub retain_max: i64,
    /// Versions with time < this may expire.
    pub older_than_ms: i64,
    /// Maximum expired per run.
    pub limit: i64,
    /// Whether changelogs outlive snapshots (spec §5.4).
    pub changelog_decoupled: bool,
}

/// Retention as the table's options (or Paimon's defaults) give it, before the caller's overrides.
struct OptionRetention {
    retain_min: i64,
    retain_max: i64,
    time_retained: Duration,
}

/// `snapshot.num-retained.min` / `.max` and `snapshot.time-retained`.
fn snapshot_options(options: &TableOptions) -> Result<OptionRetention> {
    Ok(OptionRetention {
        retain_min: options
            .get_i64("snapshot.num-retained.min")?
            .unwrap_or(DEFAULT_RETAIN_MIN),
        retain_max: options
            .get_i64("snapshot.num-retained.max")?
            .unwrap_or(DEFAULT_RETAIN_MAX),
        time_retained: options
            .get_duration("snapshot.time-retained")?
            .unwrap_or(DEFAULT_TIME_RETAINED),
    })
}

/// `changelog.num-retained.min` / `.max` and `changelog.time-retained`, each falling back to
/// the `snapshot` value.
fn changelog_options(
    options: &TableOptions,
    snapshot: &OptionRetention,
) -> Result<OptionRetention> {
    Ok(OptionRetention {
        retain_min: options
            .get_i64("changelog.num-retained.min")?
            .unwrap_or(snapshot.retain_min),
        retain_max: options
            .get_i64("changelog.num-retained.max")?
            .unwrap_or(snapshot.retain_max),
        time_retained: options
            .get_duration("changelog.time-retained")?
            .unwrap_or(snapshot.time_retained),
    })
}

/// Whether changelogs outlive snapshots: any changelog setting keeps more than its snapshot one.
fn is_decoupled(snapshot: &OptionRetention, changelog: &OptionRetention) -> bool {
    changelog.retain_max > snapshot.retain_max
        || changelog.retain_min > snapshot.retain_min
        || changelog.time_retained > snapshot.time_retained
}

/// Applies the caller's `overrides` to `base` and `default_limit` and validates the result
/// (P10): retain min ≥ 1, max ≥ min, limit ≥ 1, and a cut-off not in the future (`now`).
fn apply_overrides(
    base: OptionRetention,
    overrides: &RetentionOverrides,
    default_limit: i64,
    now: i64,
    decoupled: bool,
) -> Result<Retention> {
    let retain_min = overrides.retain_min.unwrap_or(base.retain_min);
    let retain_max = overrides.retain_max.unwrap_or(base.retain_max);
    let limit = overrides.limit.unwrap_or(default_limit);
    if retain_min < 1 {
        return Err(Error::InvalidArgument(format!(
            "retain min must be at least 1, got {retain_min}"
        )));
    }
    if retain_max < retain_min {
        return Err(Error::InvalidArgument(format!(
            "retain max ({retain_max}) must be at least retain min ({retain_min})"
        )));
    }
    if limit < 1 {
        return Err(Error::InvalidArgument(format!(
            "max expires per run must be at least 1, got {limit}"
        )));
    }
    let older_than_ms = match (overrides.older_than_ms, overrides.time_retained) {
        (Some(_), Some(_)) => {
            return Err(Error::InvalidArgument(
                "give either an older-than timestamp or a time retained, not both".into(),
            ))
        }
        (Some(cutoff), None) => {
            if cutoff > now {
                return Err(Error::InvalidArgument(format!(
                    "older-than {cutoff} ms is in the future (now is {now} ms)"
                )));
            }
            cutoff
        }
        (None, Some(time_retained)) => now.saturating_sub(millis(time_retained)),
        (None, None) => now.saturating_sub(millis(base.time_retained)),
    };
    Ok(Retention {
        retain_min,
        retain_max,
        older_than_ms,
        limit,
        changelog_decoupled: decoupled,
    })
}

/// `snapshot.expire.limit` (both expiries use it).
fn expire_limit(options: &TableOptions) -> Result<i64> {
    Ok(options
        .get_i64("snapshot.expire.limit")?
        .unwrap_or(DEFAULT_EXPIRE_LIMIT))
}

impl Retention {
    /// Snapshot retention from overrides, options and defaults.
    pub fn resolve_snapshot(
        options: &TableOptions,
        overrides: &RetentionOverrides,
        now: i64,
    ) -> Result<Retention> {
        Self::resolve(options, overrides, now, Lifecycle::Snapshot)
    }

    /// Changelog retention (`changelog.*`, falling back to the snapshot values).
    pub fn resolve_changelog(
        options: &TableOptions,
        overrides: &RetentionOverrides,
        now: i64,
    ) -> Result<Retention> {
        Self::resolve(options, overrides, now, Lifecycle::Changelog)
    }

    /// The retention of `lifecycle`; decoupling is judged from both option sets.
    fn resolve(
        options: &TableOptions,
        overrides: &RetentionOverrides,
        now: i64,
        lifecycle: Lifecycle,
    ) -> Result<Retention> {
        let snapshot = snapshot_options(options)?;
        let changelog = changelog_options(options, &snapshot)?;
        let decoupled = is_decoupled(&snapshot, &changelog);
        let chosen = match lifecycle {
            Lifecycle::Snapshot => snapshot,
            Lifecycle::Changelog => changelog,
        };
        apply_overrides(chosen, overrides, expire_limit(options)?, now, decoupled)
    }
}

/// Which retention [`Retention::resolve`] computes.
#[derive(Clone, Copy)]
enum Lifecycle {
    Snapshot,
    Changelog,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn opts(kv: &[(&str, &str)]) -> TableOptions {
        let m: HashMap<String, String> = kv
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TableOptions::new(&m, &HashMap::new())
    }

    #[test]
    fn defaults_and_validation() {
        let r = Retention::resolve_snapshot(&opts(&[]), &RetentionOverrides::default(), 10_000_000)
            .unwrap();
        assert_eq!(
            (r.retain_min, r.retain_max, r.limit),
            (10, i32::MAX as i64, 50)
        );
        assert_eq!(r.older_than_ms, 10_000_000 - 3_600_000);
        assert!(!r.changelog_decoupled);
        let bad =
            |ov: RetentionOverrides| Retention::resolve_snapshot(&opts(&[]), &ov, 1000).is_err();
        assert!(bad(RetentionOverrides {
            retain_min: Some(0),
            ..Default::default()
        }));
        assert!(bad(RetentionOverrides {
            retain_min: Some(5),
            retain_max: Some(4),
            ..Default::default()
        }));
        assert!(bad(RetentionOverrides {
            limit: Some(0),
            ..Default::default()
        }));
        assert!(bad(RetentionOverrides {
            older_than_ms: Some(2000),
            ..Default::default()
        }));
        assert!(Retention::resolve_snapshot(
            &opts(&[("snapshot.num-retained.min", "x")]),
            &Default::default(),
            0
        )
        .is_err());
    }

    #[test]
    fn changelog_decoupling() {
        let o = opts(&[
            ("changelog.num-retained.max", "100"),
            ("snapshot.num-retained.max", "5"),
        ]);
        let r = Retention::resolve_changelog(&o, &RetentionOverrides::default(), 0).unwrap();
        assert!(r.changelog_decoupled);
        assert_eq!(r.retain_max, 100);
    }
}
