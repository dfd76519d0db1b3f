//! Time helpers of the cleanup jobs: the wall clock in epoch milliseconds and durations as
//! milliseconds (saturating, never negative).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Current wall-clock time in epoch ms (0 if the clock is before 1970).
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(millis)
        .unwrap_or(0)
}

/// A duration as whole milliseconds, `i64::MAX` when it does not fit.
pub fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
