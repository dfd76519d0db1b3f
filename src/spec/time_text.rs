//! Dates, times and timestamps written as Paimon Java users type them, and the `older_than`
//! cut-offs of the procedures.
//!
//! Java reference: `DateTimeUtils.DEFAULT_TIMESTAMP_FORMATTER` (what `parseTimestampData` and
//! `toLocalDateTime(String, int)` read: `yyyy-M-d`, `yyyy-M-d H:m:s[.fffffffff]`,
//! `yyyy-M-dTH:m[:s[.fffffffff]]`), `BinaryStringUtils.{toDate, toTime}` (an all-digit text is
//! the internal number: epoch days, millis of day). The procedures read `older_than` in the JVM's
//! default time zone; here it is this process's local time zone (`TZ`), unless the text ends
//! with a zone (`Z`, `UTC`, `+08:00`, `-0530`), which Java does not accept.

use chrono::{FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};

use crate::error::{Error, Result};
use crate::spec::options::parse_duration;

/// Reads `min..=max` ASCII digits at `*pos` as a number.
fn digits(s: &[u8], pos: &mut usize, min: usize, max: usize) -> Option<u32> {
    let start = *pos;
    let mut value: u32 = 0;
    while *pos < s.len() && *pos - start < max && s[*pos].is_ascii_digit() {
        value = value * 10 + u32::from(s[*pos] - b'0');
        *pos += 1;
    }
    (*pos - start >= min).then_some(value)
}

fn expect(s: &[u8], pos: &mut usize, c: u8) -> Option<()> {
    (s.get(*pos) == Some(&c)).then(|| *pos += 1)
}

/// An optional fraction (`.` then 0 to 9 digits) as nanoseconds.
fn fraction(s: &[u8], pos: &mut usize) -> Option<u32> {
    if s.get(*pos) != Some(&b'.') {
        return Some(0);
    }
    *pos += 1;
    let start = *pos;
    let value = digits(s, pos, 0, 9)?;
    let width = (*pos - start) as u32;
    Some(value * 10u32.pow(9 - width))
}

/// Parses the longest prefix of `text` that Java's `DEFAULT_TIMESTAMP_FORMATTER` reads, and
/// returns it with the byte length consumed.
fn java_timestamp_prefix(text: &str) -> Option<(NaiveDateTime, usize)> {
    let s = text.as_bytes();
    let mut pos = 0;
    let year = digits(s, &mut pos, 4, 4)?;
    expect(s, &mut pos, b'-')?;
    let month = digits(s, &mut pos, 1, 2)?;
    expect(s, &mut pos, b'-')?;
    let day = digits(s, &mut pos, 1, 2)?;
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    let (h, m, sec, nano) = match s.get(pos) {
        Some(b' ') if s.get(pos + 1).is_some_and(u8::is_ascii_digit) => {
            pos += 1;
            let h = digits(s, &mut pos, 1, 2)?;
            expect(s, &mut pos, b':')?;
            let m = digits(s, &mut pos, 1, 2)?;
            expect(s, &mut pos, b':')?;
            let sec = digits(s, &mut pos, 1, 2)?;
            (h, m, sec, fraction(s, &mut pos)?)
        }
        Some(b'T') => {
            pos += 1;
            let h = digits(s, &mut pos, 1, 2)?;
            expect(s, &mut pos, b':')?;
            let m = digits(s, &mut pos, 1, 2)?;
            if s.get(pos) == Some(&b':') {
                pos += 1;
                let sec = digits(s, &mut pos, 1, 2)?;
                (h, m, sec, fraction(s, &mut pos)?)
            } else {
                (h, m, 0, 0)
            }
        }
        _ => (0, 0, 0, 0),
    };
    let time = NaiveTime::from_hms_nano_opt(h, m, sec, nano)?;
    Some((NaiveDateTime::new(date, time), pos))
}

/// A wall-clock timestamp in the forms Java's `DateTimeUtils.parseTimestampData` reads:
/// `2024-01-01`, `2024-01-01 12:00:00[.123456789]`, `2024-01-01T12:00[:00[.123]]` (month, day,
/// hour, minute and second may have one digit). Nothing may follow.
pub fn parse_timestamp(text: &str) -> Option<NaiveDateTime> {
    match java_timestamp_prefix(text) {
        Some((t, used)) if used == text.len() => Some(t),
        _ => None,
    }
}

/// A zone suffix: `Z`, `UTC`, `+HH`, `+HH:MM`, `+HHMM` (or `-`), after optional spaces.
fn zone_suffix(rest: &str) -> Option<FixedOffset> {
    let z = rest.trim_start();
    if z == "Z" || z.eq_ignore_ascii_case("UTC") {
        return FixedOffset::east_opt(0);
    }
    let (sign, s) = match z.as_bytes().split_first()? {
        (b'+', s) => (1, s),
        (b'-', s) => (-1, s),
        _ => return None,
    };
    let mut pos = 0;
    let h = digits(s, &mut pos, 2, 2)?;
    if s.get(pos) == Some(&b':') {
        pos += 1;
    }
    let m = if pos < s.len() {
        digits(s, &mut pos, 2, 2)?
    } else {
        0
    };
    if pos != s.len() || h > 18 || m > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60) as i32)
}

/// The epoch milliseconds of a timestamp text: Java's forms ([`parse_timestamp`]) read in this
/// process's local time zone, or in the zone the text ends with. A local time that does not
/// exist (a daylight-saving gap) is an error; one that exists twice is the earlier instant.
pub fn timestamp_millis(text: &str) -> Result<i64> {
    let t = text.trim();
    let bad = || {
        Error::InvalidArgument(format!(
            "'{text}' is not a timestamp (yyyy-MM-dd[ HH:mm:ss[.fff]] or yyyy-MM-ddTHH:mm[:ss[.fff]], \
             optionally followed by a zone such as Z or +08:00)"
        ))
    };
    let (local, used) = java_timestamp_prefix(t).ok_or_else(bad)?;
    let rest = &t[used..];
    let instant = if rest.is_empty() {
        chrono::Local
            .from_local_datetime(&local)
            .earliest()
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "'{text}' does not exist in the local time zone (a daylight-saving gap); \
                     give a zone such as +01:00"
                ))
            })?
            .timestamp_millis()
    } else {
        let zone = zone_suffix(rest).ok_or_else(bad)?;
        zone.from_local_datetime(&local)
            .single()
            .ok_or_else(bad)?
            .timestamp_millis()
    };
    Ok(instant)
}

/// An `older_than` cut-off as the procedures take it, in epoch milliseconds: a timestamp
/// ([`timestamp_millis`], Java's `older_than`) or a Paimon duration counted back from `now_ms`
/// (`1 d`, `30 min`). A bare number is refused: it could be a duration in milliseconds or an
/// epoch time (which the CLI takes as `--older-than-ms`). A cut-off after `now_ms` is refused:
/// it would select versions (or files) that are being made right now.
pub fn parse_older_than(text: &str, now_ms: i64) -> Result<i64> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::InvalidArgument("older-than is empty".into()));
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::InvalidArgument(format!(
            "older-than '{text}' is a bare number: give a timestamp ('2024-01-01 12:00:00'), a \
             duration with a unit ('1 d'), or epoch milliseconds with --older-than-ms"
        )));
    }
    let cutoff = if java_timestamp_prefix(t).is_some() {
        timestamp_millis(t)?
    } else {
        let d = parse_duration(t).map_err(|_| {
            Error::InvalidArgument(format!(
                "older-than '{text}' is neither a timestamp ('2024-01-01 12:00:00') nor a \
                 duration ('1 d', '30 min')"
            ))
        })?;
        now_ms.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    };
    if cutoff > now_ms {
        return Err(Error::InvalidArgument(format!(
            "older-than '{text}' ({cutoff} ms) is in the future (now is {now_ms} ms)"
        )));
    }
    Ok(cutoff)
}

/// Days since 1970-01-01 of a DATE value: Java `BinaryStringUtils.toDate` — all digits are the
/// epoch-day number itself (the legacy directory form), otherwise `yyyy-M-d`.
pub fn parse_date_days(text: &str) -> Option<i32> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok();
    }
    let s = t.as_bytes();
    let mut pos = 0;
    let year = digits(s, &mut pos, 4, 4)?;
    expect(s, &mut pos, b'-')?;
    let month = digits(s, &mut pos, 1, 2)?;
    expect(s, &mut pos, b'-')?;
    let day = digits(s, &mut pos, 1, 2)?;
    if pos != s.len() {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from((date - epoch).num_days()).ok()
}

/// Milliseconds of the day of a TIME value: Java `BinaryStringUtils.toTime` — all digits are
/// the number itself (the legacy directory form), otherwise `H:m[:s[.fff]]` (finer digits than
/// milliseconds are dropped, as TIME keeps milliseconds).
pub fn parse_time_millis(text: &str) -> Option<i32> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok().filter(|ms| (0..86_400_000).contains(ms));
    }
    let s = t.as_bytes();
    let mut pos = 0;
    let h = digits(s, &mut pos, 1, 2)?;
    expect(s, &mut pos, b':')?;
    let m = digits(s, &mut pos, 1, 2)?;
    let (sec, nano) = if s.get(pos) == Some(&b':') {
        pos += 1;
        let sec = digits(s, &mut pos, 1, 2)?;
        (sec, fraction(s, &mut pos)?)
    } else {
        (0, 0)
    };
    if pos != s.len() || h > 23 || m > 59 || sec > 59 {
        return None;
    }
    Some(((h * 3600 + m * 60 + sec) * 1000 + nano / 1_000_000) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, n: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_nano_opt(h, mi, s, n)
            .unwrap()
    }

    #[test]
    fn java_timestamp_forms() {
        assert_eq!(
            parse_timestamp("2024-01-01 12:00:00"),
            Some(ts(2024, 1, 1, 12, 0, 0, 0))
        );
        assert_eq!(
            parse_timestamp("2024-1-2 3:4:5.12"),
            Some(ts(2024, 1, 2, 3, 4, 5, 120_000_000))
        );
        assert_eq!(
            parse_timestamp("2024-01-02T03:04"),
            Some(ts(2024, 1, 2, 3, 4, 0, 0))
        );
        assert_eq!(
            parse_timestamp("2024-01-02T03:04:05.000000001"),
            Some(ts(2024, 1, 2, 3, 4, 5, 1))
        );
        assert_eq!(
            parse_timestamp("2024-01-02"),
            Some(ts(2024, 1, 2, 0, 0, 0, 0))
        );
        for bad in [
            "",
            "2024",
            "24-01-01",
            "2024-13-01",
            "2024-02-30",
            "2024-01-01 12:00",
            "2024-01-01 25:00:00",
            "2024-01-01T12",
            "2024-01-01 12:00:00x",
            "2024-01-01 12:00:00.1234567891",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn zones_and_cutoffs() {
        let utc = timestamp_millis("2024-01-01 00:00:00Z").unwrap();
        assert_eq!(utc, 1_704_067_200_000);
        assert_eq!(timestamp_millis("2024-01-01T08:00+08:00").unwrap(), utc);
        assert_eq!(timestamp_millis("2024-01-01 00:00:00 UTC").unwrap(), utc);
        assert_eq!(timestamp_millis("2023-12-31 19:00:00 -0500").unwrap(), utc);
        assert!(timestamp_millis("2024-01-01 00:00:00 +25:00").is_err());
        assert!(timestamp_millis("2024-01-01 00:00:00 Europe/Paris").is_err());

        let now = utc + 86_400_000;
        assert_eq!(parse_older_than("1 d", now).unwrap(), utc);
        assert_eq!(parse_older_than(" 2024-01-01T00:00Z ", now).unwrap(), utc);
        assert!(parse_older_than("1700000000000", now).is_err());
        assert!(parse_older_than("", now).is_err());
        assert!(parse_older_than("yesterday", now).is_err());
        assert!(parse_older_than("2024-01-03 00:00:00Z", now).is_err());
        // the local zone: whatever it is, a local text and the same text with the local
        // offset agree
        let local = chrono::Local
            .from_local_datetime(&ts(2024, 6, 1, 12, 0, 0, 0))
            .earliest()
            .unwrap();
        let offset = local.offset().to_string();
        assert_eq!(
            timestamp_millis("2024-06-01 12:00:00").unwrap(),
            timestamp_millis(&format!("2024-06-01 12:00:00{offset}")).unwrap()
        );
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(parse_date_days("2024-01-01"), Some(19723));
        assert_eq!(parse_date_days("2024-1-1"), Some(19723));
        assert_eq!(parse_date_days("19723"), Some(19723));
        assert_eq!(parse_date_days("1969-12-31"), Some(-1));
        for bad in ["", "-1", "2024-01-01 00:00:00", "yesterday", "2024-02-30"] {
            assert_eq!(parse_date_days(bad), None, "{bad}");
        }
        assert_eq!(parse_time_millis("13:05:07.12"), Some(47_107_120));
        assert_eq!(parse_time_millis("13:05"), Some(47_100_000));
        assert_eq!(parse_time_millis("47107120"), Some(47_107_120));
        for bad in ["", "24:00", "86400000", "1:2:3:4", "noon"] {
            assert_eq!(parse_time_millis(bad), None, "{bad}");
        }
    }
}
