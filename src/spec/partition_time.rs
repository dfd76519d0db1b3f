//! Time of a partition for `values-time` partition expiration (spec §5.7; Java
//! `PartitionTimeExtractor`).
//!
//! The time string is the first partition value, or `partition.timestamp-pattern` with every
//! `$key` replaced by that key's value. It is parsed with `partition.timestamp-formatter` (a Java
//! `DateTimeFormatter` pattern: date-time first, then date at midnight) or, without one, with
//! Java's lenient default `y-M-d[ H:m:s[.fraction]]` (then a date at midnight). A NULL value
//! the time needs, or a string that does not parse, gives no time: such partitions never expire.
//!
//! Supported formatter letters: `y`/`u` (year), `M` (month), `d` (day), `H` (hour of day), `m`,
//! `s`, `S` (fraction), `'quoted text'` and any non-letter as a literal. Adjacent numeric fields
//! (`yyyyMMdd`) are split like Java does: fixed-width fields that follow reserve their digits.

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};

use crate::error::{Error, Result};

/// A compiled `DateTimeFormatter` pattern (the subset above).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaDateTimePattern {
    items: Vec<Item>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Fraction,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Literal(String),
    /// A number of `min..=max` digits.
    Number {
        field: Field,
        min: usize,
        max: usize,
        /// `yy`: a two-digit year based at 2000.
        reduced_year: bool,
    },
}

impl Item {
    /// Width of a fixed-width number (min == max), if it is one.
    fn fixed_width(&self) -> Option<usize> {
        match self {
            Item::Number { min, max, .. } if min == max => Some(*min),
            _ => None,
        }
    }
}

impl JavaDateTimePattern {
    /// Compiles a pattern; unsupported letters are [`Error::InvalidArgument`].
    pub fn compile(pattern: &str) -> Result<Self> {
        let bad = |m: String| {
            Error::InvalidArgument(format!("partition.timestamp-formatter '{pattern}': {m}"))
        };
        let chars: Vec<char> = pattern.chars().collect();
        let mut items = Vec::new();
        let mut i = 0;
        let push_lit = |items: &mut Vec<Item>, s: &str| match items.last_mut() {
            Some(Item::Literal(l)) => l.push_str(s),
            _ => items.push(Item::Literal(s.to_string())),
        };
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                let mut j = i + 1;
                let mut text = String::new();
                loop {
                    match chars.get(j) {
                        None => return Err(bad("unterminated quote".into())),
                        Some('\'') if chars.get(j + 1) == Some(&'\'') => {
                            text.push('\'');
                            j += 2;
                        }
                        Some('\'') => break,
                        Some(ch) => {
                            text.push(*ch);
                            j += 1;
                        }
                    }
                }
                if j == i + 1 {
                    text.push('\'');
                }
                push_lit(&mut items, &text);
                i = j + 1;
                continue;
            }
            if !c.is_ascii_alphabetic() {
                push_lit(&mut items, &c.to_string());
                i += 1;
                continue;
            }
            let mut n = 1;
            while chars.get(i + n) == Some(&c) {
                n += 1;
            }
            let item = match c {
                'y' | 'u' if n == 2 => Item::Number {
                    field: Field::Year,
                    min: 2,
                    max: 2,
                    reduced_year: true,
                },
                'y' | 'u' => Item::Number {
                    field: Field::Year,
                    min: n.max(1),
                    max: 19,
                    reduced_year: false,
                },
                'M' | 'd' | 'H' | 'm' | 's' if n <= 2 => Item::Number {
                    field: match c {
                        'M' => Field::Month,
                        'd' => Field::Day,
                        'H' => Field::Hour,
                        'm' => Field::Minute,
                        _ => Field::Second,
                    },
                    min: n,
                    max: if n == 1 { 19 } else { 2 },
                    reduced_year: false,
                },
                'S' if n <= 9 => Item::Number {
                    field: Field::Fraction,
                    min: n,
                    max: n,
                    reduced_year: false,
                },
                other => {
                    return Err(bad(format!(
                        "pattern letter '{}' (x{n}) is not supported (use y, u, M, d, H, m, s, S)",
                        other
                    )))
                }
            };
            items.push(item);
            i += n;
        }
        Ok(JavaDateTimePattern { items })
    }

    /// Java `LocalDateTime.parse(s, formatter)`, falling back to `LocalDate.parse` at midnight.
    pub fn parse(&self, s: &str) -> Option<NaiveDateTime> {
        let parsed = self.parse_fields(s)?;
        let date = smart_date(parsed.year?, parsed.month?, parsed.day?)?;
        match parsed.hour {
            Some(h) => {
                if parsed.minute.is_none() && (parsed.second.is_some() || parsed.nano.is_some()) {
                    return None;
                }
                let t = NaiveTime::from_hms_nano_opt(
                    u32::try_from(h).ok()?,
                    u32::try_from(parsed.minute.unwrap_or(0)).ok()?,
                    u32::try_from(parsed.second.unwrap_or(0)).ok()?,
                    parsed.nano.unwrap_or(0),
                )?;
                Some(date.and_time(t))
            }
            None => Some(date.and_time(NaiveTime::MIN)),
        }
    }

    fn parse_fields(&self, s: &str) -> Option<Parsed> {
        let b = s.as_bytes();
        let mut pos = 0;
        let mut p = Parsed::default();
        for (idx, item) in self.items.iter().enumerate() {
            match item {
                Item::Literal(l) => {
                    if !s[pos..].starts_with(l.as_str()) {
                        return None;
                    }
                    pos += l.len();
                }
                Item::Number {
                    field,
                    min,
                    max,
                    reduced_year,
                } => {
                    let avail = b[pos..].iter().take_while(|c| c.is_ascii_digit()).count();
                    // Fixed-width numbers that follow directly reserve their digits.
                    let reserved: usize = self.items[idx + 1..]
                        .iter()
                        .map_while(Item::fixed_width)
                        .sum();
                    let take = avail.saturating_sub(reserved).min(*max);
                    if take < *min {
                        return None;
                    }
                    let digits = &s[pos..pos + take];
                    pos += take;
                    let v: i64 = digits.parse().ok()?;
                    match field {
                        Field::Year => p.year = Some(if *reduced_year { 2000 + v } else { v }),
                        Field::Month => p.month = Some(v),
                        Field::Day => p.day = Some(v),
                        Field::Hour => p.hour = Some(v),
                        Field::Minute => p.minute = Some(v),
                        Field::Second => p.second = Some(v),
                        Field::Fraction => {
                            p.nano =
                                Some(u32::try_from(v).ok()? * 10u32.pow(9 - digits.len() as u32))
                        }
                    }
                }
            }
        }
        (pos == s.len()).then_some(p)
    }
}

#[derive(Debug, Default)]
struct Parsed {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    hour: Option<i64>,
    minute: Option<i64>,
    second: Option<i64>,
    nano: Option<u32>,
}

/// Java's SMART resolution of year/month/day: month 1–12, day 1–31, a day past the month's end
/// clamped to its last day.
fn smart_date(year: i64, month: i64, day: i64) -> Option<NaiveDate> {
    let year = i32::try_from(year).ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let month = month as u32;
    let mut d = day as u32;
    loop {
        if let Some(date) = NaiveDate::from_ymd_opt(year, month, d) {
            return Some(date);
        }
        if d <= 28 {
            return None;
        }
        d -= 1;
    }
}

/// Reads `min..=max` digits at `pos`.
fn digits(s: &[u8], pos: &mut usize, min: usize, max: usize) -> Option<i64> {
    let n = s[*pos..]
        .iter()
        .take(max)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if n < min {
        return None;
    }
    let v = std::str::from_utf8(&s[*pos..*pos + n]).ok()?.parse().ok()?;
    *pos += n;
    Some(v)
}

fn expect(s: &[u8], pos: &mut usize, c: u8) -> Option<()> {
    (s.get(*pos) == Some(&c)).then(|| *pos += 1)
}

/// Java's LENIENT resolution: out-of-range fields roll over (month 13 is January next year).
fn lenient(year: i64, month: i64, day: i64, time: [i64; 3], nano: i64) -> Option<NaiveDateTime> {
    let base = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, 1, 1)?;
    let months = u32::try_from(month - 1).ok()?;
    let date = base.checked_add_months(chrono::Months::new(months))?;
    let dt = date.and_time(NaiveTime::MIN);
    dt.checked_add_signed(Duration::days(day - 1))?
        .checked_add_signed(Duration::hours(time[0]))?
        .checked_add_signed(Duration::minutes(time[1]))?
        .checked_add_signed(Duration::seconds(time[2]))?
        .checked_add_signed(Duration::nanoseconds(nano))
}

/// Java's default `PartitionTimeExtractor` parsing: `y-M-d[ H:m:s[.fraction]]` with 1–10 digit
/// years and 1–2 digit other fields, resolved leniently; otherwise a date `y-M-d` at midnight.
pub fn parse_default(s: &str) -> Option<NaiveDateTime> {
    let b = s.as_bytes();
    let mut pos = 0;
    let year = digits(b, &mut pos, 1, 10)?;
    expect(b, &mut pos, b'-')?;
    let month = digits(b, &mut pos, 1, 2)?;
    expect(b, &mut pos, b'-')?;
    let day = digits(b, &mut pos, 1, 2)?;
    if pos == b.len() {
        return lenient(year, month, day, [0; 3], 0);
    }
    // The optional time section must then match completely.
    let mut t = pos;
    expect(b, &mut t, b' ')?;
    let h = digits(b, &mut t, 1, 2)?;
    expect(b, &mut t, b':')?;
    let m = digits(b, &mut t, 1, 2)?;
    expect(b, &mut t, b':')?;
    let sec = digits(b, &mut t, 1, 2)?;
    let mut nano = 0i64;
    if t < b.len() {
        expect(b, &mut t, b'.')?;
        let start = t;
        let f = digits(b, &mut t, 1, 9)?;
        nano = f * 10i64.pow(9 - (t - start) as u32);
    }
    if t != b.len() {
        return None;
    }
    lenient(year, month, day, [h, m, sec], nano)
}

/// Extracts a partition's time for `values-time` expiration.
#[derive(Debug, Clone)]
pub struct PartitionTimeExtractor {
    pattern: Option<String>,
    formatter: Option<JavaDateTimePattern>,
}

impl PartitionTimeExtractor {
    /// `pattern` is `partition.timestamp-pattern` (e.g. `$dt $hour:00:00`), `formatter` is
    /// `partition.timestamp-formatter` (e.g. `yyyyMMdd`). A bad formatter is an error.
    pub fn new(pattern: Option<&str>, formatter: Option<&str>) -> Result<Self> {
        Ok(PartitionTimeExtractor {
            pattern: pattern.map(str::to_string),
            formatter: formatter.map(JavaDateTimePattern::compile).transpose()?,
        })
    }

    /// The time string of a partition (`None` when a value it needs is NULL, as Java's
    /// `toString()` on null throws): the first value without a pattern; with one, every `$key`
    /// replaced by its value (longer keys first, so `$dth` is not mistaken for `$dt`).
    pub fn time_string(&self, keys: &[String], values: &[Option<String>]) -> Option<String> {
        match &self.pattern {
            None => values.first()?.clone(),
            Some(p) => {
                // Java calls toString() on every value while substituting.
                if values.iter().any(Option::is_none) {
                    return None;
                }
                let mut order: Vec<usize> = (0..keys.len().min(values.len())).collect();
                order.sort_by_key(|i| std::cmp::Reverse(keys[*i].len()));
                let mut s = p.clone();
                for i in order {
                    if let Some(v) = &values[i] {
                        s = s.replace(&format!("${}", keys[i]), v);
                    }
                }
                Some(s)
            }
        }
    }

    /// The partition's local date-time, or `None` when it has none (NULL or unparsable).
    pub fn extract(&self, keys: &[String], values: &[Option<String>]) -> Option<NaiveDateTime> {
        let s = self.time_string(keys, values)?;
        match &self.formatter {
            Some(f) => f.parse(&s),
            None => parse_default(&s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(y: i32, m: u32, d: u32, h: u32, mi: u32, s: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, mi, s)
            .unwrap()
    }

    #[test]
    fn default_parser() {
        assert_eq!(parse_default("2024-01-02"), Some(dt(2024, 1, 2, 0, 0, 0)));
        assert_eq!(parse_default("2024-1-2"), Some(dt(2024, 1, 2, 0, 0, 0)));
        assert_eq!(
            parse_default("2024-01-02 3:04:05"),
            Some(dt(2024, 1, 2, 3, 4, 5))
        );
        assert_eq!(
            parse_default("2024-01-02 03:04:05.5")
                .unwrap()
                .and_utc()
                .timestamp_subsec_millis(),
            500
        );
        // lenient roll-over
        assert_eq!(parse_default("2024-13-01"), Some(dt(2025, 1, 1, 0, 0, 0)));
        for bad in [
            "",
            "20240102",
            "2024-01-02 10",
            "2024-01-02T10:00",
            "x",
            "2024-01-02 ",
        ] {
            assert_eq!(parse_default(bad), None, "{bad}");
        }
    }

    #[test]
    fn java_patterns() {
        let p = JavaDateTimePattern::compile("yyyyMMdd").unwrap();
        assert_eq!(p.parse("20240102"), Some(dt(2024, 1, 2, 0, 0, 0)));
        assert_eq!(p.parse("2024012"), None);
        assert_eq!(p.parse("2024-01-02"), None);
        let p = JavaDateTimePattern::compile("yyyy-MM-dd HH").unwrap();
        assert_eq!(p.parse("2024-01-02 07"), Some(dt(2024, 1, 2, 7, 0, 0)));
        assert_eq!(p.parse("2024-01-02 7"), None);
        let p = JavaDateTimePattern::compile("yyyy-MM-dd").unwrap();
        assert_eq!(p.parse("2024-02-30"), Some(dt(2024, 2, 29, 0, 0, 0)));
        assert_eq!(p.parse("2024-13-01"), None);
        let p = JavaDateTimePattern::compile("yyyy-MM-dd'T'HH:mm:ss.SSS").unwrap();
        assert!(p.parse("2024-01-02T03:04:05.123").is_some());
        let p = JavaDateTimePattern::compile("yyyyMMddHH").unwrap();
        assert_eq!(p.parse("2024010213"), Some(dt(2024, 1, 2, 13, 0, 0)));
        assert!(JavaDateTimePattern::compile("yyyy-MM-dd a").is_err());
        assert!(JavaDateTimePattern::compile("'open").is_err());
    }

    #[test]
    fn extractor_patterns_and_nulls() {
        let keys = vec!["dt".to_string(), "dth".to_string()];
        let e = PartitionTimeExtractor::new(Some("$dt $dth:00:00"), None).unwrap();
        let v = vec![Some("2024-01-02".to_string()), Some("5".to_string())];
        assert_eq!(e.extract(&keys, &v), Some(dt(2024, 1, 2, 5, 0, 0)));
        assert_eq!(e.extract(&keys, &[Some("2024-01-02".into()), None]), None);
        let e = PartitionTimeExtractor::new(None, Some("yyyyMMdd")).unwrap();
        assert_eq!(
            e.extract(&keys, &[Some("20240102".into()), None]),
            Some(dt(2024, 1, 2, 0, 0, 0))
        );
        assert_eq!(e.extract(&keys, &[None, Some("1".into())]), None);
        assert_eq!(e.extract(&keys, &[Some("garbage".into())]), None);
        assert!(PartitionTimeExtractor::new(None, Some("yyyy-qq")).is_err());
    }
}
