//! The value parsers of the numeric command-line options, with their bounds. Clap runs them
//! while it parses the arguments, so every command validates an option the same way and a bad
//! value is a usage error (exit 2) before anything is opened.

use std::time::Duration;

use paimon_cleanup::spec::options::parse_duration;

/// Largest `--threads` (the C ABI's `paimon_cleanup_executor_new` accepts the same).
pub const MAX_THREADS: usize = 1024;
/// Largest count (`--retain-min`, `--retain-max`, `--max-deletes`, `--max-num`,
/// `--batch-size`): Java's `int`, the type of the table options they override.
pub const MAX_COUNT: i64 = i32::MAX as i64;
/// Largest duration in milliseconds (`--time-retained`, `--expiration-time`).
pub const MAX_DURATION_MS: u128 = i64::MAX as u128;

/// `--threads`: 1 to [`MAX_THREADS`].
pub fn threads(s: &str) -> Result<usize, String> {
    let n = integer(s)?;
    if (1..=MAX_THREADS as u128).contains(&n) {
        Ok(n as usize)
    } else {
        Err(format!("must be 1 to {MAX_THREADS}"))
    }
}

/// A count: 1 to [`MAX_COUNT`].
pub fn count(s: &str) -> Result<i64, String> {
    let n = integer(s)?;
    if (1..=MAX_COUNT as u128).contains(&n) {
        Ok(n as i64)
    } else {
        Err(format!("must be 1 to {MAX_COUNT}"))
    }
}

/// A count used as a `usize`: 1 to [`MAX_COUNT`].
pub fn count_usize(s: &str) -> Result<usize, String> {
    count(s).and_then(|n| usize::try_from(n).map_err(|e| e.to_string()))
}

/// Epoch milliseconds: 0 to `i64::MAX` (that it is not in the future is checked when the
/// command runs).
pub fn epoch_ms(s: &str) -> Result<i64, String> {
    let n = integer(s)?;
    i64::try_from(n).map_err(|_| format!("must be 0 to {} (epoch milliseconds)", i64::MAX))
}

/// A Paimon duration (`0s`, `30 min`, `7 d`; a bare number is milliseconds) of at most
/// `i64::MAX` ms.
pub fn duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| e.to_string())?;
    if d.as_millis() > MAX_DURATION_MS {
        return Err(format!("must be at most {MAX_DURATION_MS} ms"));
    }
    Ok(d)
}

/// `--max-plan-age`: a Paimon duration of 1 ms to 30 days, in milliseconds.
pub fn plan_age(s: &str) -> Result<i64, String> {
    let d = parse_duration(s).map_err(|e| e.to_string())?;
    let bound = paimon_cleanup::clean::apply::MAX_PLAN_AGE_BOUND_MS;
    match i64::try_from(d.as_millis()) {
        Ok(ms) if (1..=bound).contains(&ms) => Ok(ms),
        _ => Err("must be 1 ms to 30 d".to_string()),
    }
}

/// A Paimon duration of at least 1 ms and at most `i64::MAX` ms.
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.as_millis() == 0 {
        return Err("must be at least 1 ms".into());
    }
    Ok(d)
}

/// A plain non-negative decimal integer: digits only (no sign, exponent, hex or fraction).
fn integer(s: &str) -> Result<u128, String> {
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a whole decimal number".into());
    }
    // Leading zeros could make a longer string; anything past 30 digits is out of every range.
    let t = t.trim_start_matches('0');
    if t.len() > 30 {
        return Ok(u128::MAX);
    }
    Ok(t.parse().unwrap_or(0))
}

/// `--max-memory`: bytes of a size such as `1024`, `64KiB`, `512MiB`, `1GiB`, `1.5G` (K/M/G/T
/// and KB/MB/GB/TB are decimal, KiB/MiB/GiB/TiB binary); at least 1 byte and below 2^64. A
/// fraction needs a unit and may not be finer than a byte.
pub fn memory_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let factor: u128 = match unit.trim_start() {
        "" | "B" | "b" => 1,
        "K" | "KB" | "k" | "kB" => 1_000,
        "M" | "MB" => 1_000_000,
        "G" | "GB" => 1_000_000_000,
        "T" | "TB" => 1_000_000_000_000,
        "KiB" | "Ki" => 1 << 10,
        "MiB" | "Mi" => 1 << 20,
        "GiB" | "Gi" => 1 << 30,
        "TiB" | "Ti" => 1 << 40,
        other => {
            return Err(format!(
                "unknown unit {other:?} (use B, KiB, MiB, GiB, TiB, K, M, G, T)"
            ))
        }
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !digits_ok(whole)
        || !digits_ok(frac)
        || (num.contains('.') && frac.is_empty())
    {
        return Err("not a size (a number, then a unit such as MiB or GiB)".into());
    }
    let too_large = || format!("too large (at most {} bytes)", u64::MAX);
    let whole: u128 = if whole.trim_start_matches('0').len() > 25 {
        return Err(too_large());
    } else {
        whole.parse().map_err(|_| too_large())?
    };
    let mut bytes = whole.checked_mul(factor).ok_or_else(too_large)?;
    if !frac.is_empty() {
        if frac.len() > 12 {
            return Err("too many decimals".into());
        }
        let scale = 10u128.pow(frac.len() as u32);
        let part: u128 = frac.parse().map_err(|_| "not a size".to_string())?;
        let scaled = part * factor;
        if scaled % scale != 0 {
            return Err("not a whole number of bytes".into());
        }
        bytes = bytes.checked_add(scaled / scale).ok_or_else(too_large)?;
    }
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    u64::try_from(bytes).map_err(|_| too_large())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(memory_size("1024"), Ok(1024));
        assert_eq!(memory_size("64KiB"), Ok(64 << 10));
        assert_eq!(memory_size("512MiB"), Ok(512 << 20));
        assert_eq!(memory_size("1 GiB"), Ok(1 << 30));
        assert_eq!(memory_size("1.5G"), Ok(1_500_000_000));
        assert_eq!(memory_size(" 800M "), Ok(800_000_000));
        assert_eq!(memory_size("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "",
            "0",
            "-1",
            "abc",
            "NaN",
            "inf",
            "1e9",
            "2^64",
            "0x100",
            "1 GiB GiB",
            "GiB",
            "12 parsecs",
            "1e999",
            "18446744073709551616",
            "16384PiB",
            "1.",
            ".5G",
            "1.5",
            "0.1B",
            "99999999999999999999999999999999TiB",
        ] {
            assert!(memory_size(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn counts_threads_and_times_are_bounded() {
        assert_eq!(threads("1"), Ok(1));
        assert_eq!(threads("1024"), Ok(1024));
        for bad in ["0", "1025", "20000", "-1", "1e3", "", "0x10", "4294967297"] {
            assert!(threads(bad).is_err(), "{bad:?}");
        }
        assert_eq!(count("2147483647"), Ok(2_147_483_647));
        for bad in ["0", "2147483648", "-5", "9223372036854775808", "1.0"] {
            assert!(count(bad).is_err(), "{bad:?}");
        }
        assert_eq!(epoch_ms("0"), Ok(0));
        assert!(epoch_ms("9223372036854775808").is_err());
        assert!(epoch_ms("-1").is_err());
        assert_eq!(duration("0s"), Ok(Duration::ZERO));
        assert!(positive_duration("0 s").is_err());
        assert!(duration("106751991167300 d").is_err());
        assert!(duration("abc").is_err());
    }
}
