//! Parsing the numbers users type: rates with k/M/G suffixes, durations in
//! seconds or with a unit. Each refusal is one sentence that says what a
//! good value looks like.

use std::time::Duration;

/// The highest rate accepted, in frames per second: 5000 Mpps, about twice
/// what 1.6 Tb/s carries in 64-byte frames (2381 Mpps with preamble and
/// gap), so no real port is above it and a typo (an extra three zeros) is
/// caught before it overflows the frame counts.
pub const MAX_RATE: f64 = 5e9;

/// The longest duration accepted (365 days): past that a typo, not a run.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// A number with an optional k/M/G suffix (and "pps"), as typed; `Err(true)`
/// when it is a number below zero, `Err(false)` when it is no number.
fn scaled(s: &str) -> Result<f64, bool> {
    let t = s.trim();
    let t = t.strip_suffix("pps").unwrap_or(t);
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        Some((i, 'g' | 'G')) => (&t[..i], 1e9),
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_sign_negative() && !v.is_nan() => Err(true),
        Ok(v) if v.is_finite() => Ok(v * mult),
        _ => Err(false),
    }
}

/// A flag value refused, with the sentence that says what a good value is
/// (clap prints it after the flag's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadValue(pub String);

impl From<ladder::PlanError> for BadValue {
    fn from(e: ladder::PlanError) -> BadValue {
        BadValue(e.to_string())
    }
}

/// Parses "1000000", "1.5M", "200k", "2G" frames per second, above 0 and at
/// most [`MAX_RATE`].
pub fn parse_rate(s: &str) -> Result<f64, BadValue> {
    match scaled(s) {
        Ok(v) if v > 0.0 && v <= MAX_RATE => Ok(v),
        Ok(v) if v > MAX_RATE => Err(BadValue(format!(
            "{} frames per second is above the {:.0} Mpps any port could carry: give frames per second up to 5G, e.g. 1M",
            s.trim(),
            MAX_RATE / 1e6
        ))),
        Err(true) => Err(BadValue(format!("{} is negative: a rate is frames per second above 0, e.g. 1M", s.trim()))),
        _ => Err(BadValue(format!("{s:?} is not a positive rate: write frames per second like 1000000, 1.5M or 200k"))),
    }
}

/// Parses "10", "10s", "500ms", "2m", "1h", "1.5s": above 0, at most [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, BadValue> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_sign_negative() && !v.is_nan() => {
            Err(BadValue(format!("{t} is negative: a duration is a time above 0, e.g. 10, 2.5s, 500ms, 1m or 1h")))
        }
        Ok(v) if v.is_finite() && v > 0.0 => match Duration::try_from_secs_f64(v * scale) {
            Ok(d) if d <= MAX_DURATION => Ok(d),
            _ => Err(BadValue(format!("{t} is longer than 365 days: give a shorter duration, e.g. 10, 2.5s, 500ms, 1m or 1h"))),
        },
        _ => Err(BadValue(format!("{s:?} is not a positive duration: write seconds like 10, 2.5s, 500ms, 1m or 1h"))),
    }
}

/// Parses a count with an optional k/M/G suffix ("1000", "10M"), above 0.
pub fn parse_count(s: &str) -> Result<u64, BadValue> {
    // Plain digits are taken exactly (an f64 holds only 53 bits).
    if let Ok(n) = s.trim().parse::<u64>() {
        if n > 0 {
            return Ok(n);
        }
    }
    match scaled(s) {
        // 2^64 is the first value a u64 cannot hold (u64::MAX rounds up to it as f64).
        Ok(v) if v > 0.0 && v.fract() == 0.0 && v < 18_446_744_073_709_551_616.0 => Ok(v as u64),
        Ok(v) if v > 0.0 && v.fract() != 0.0 => {
            Err(BadValue(format!("{:?} is not a whole count: write a number like 1000 or 10M", s.trim())))
        }
        Ok(v) if v > 0.0 => Err(BadValue(format!("{} is above the largest count, 18446744073709551615: give fewer, e.g. 10M", s.trim()))),
        Err(true) => Err(BadValue(format!("{} is negative: a count is a number above 0, e.g. 1000 or 10M", s.trim()))),
        _ => Err(BadValue(format!("{s:?} is not a positive count: write a number like 1000 or 10M"))),
    }
}

/// Serializes a duration as seconds (a JSON number), for records.
pub fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Serializes an optional duration as seconds or null.
pub fn ser_opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1000").unwrap(), 1000.0);
        assert_eq!(parse_rate("1.5M").unwrap(), 1_500_000.0);
        assert_eq!(parse_rate("200k").unwrap(), 200_000.0);
        assert_eq!(parse_rate("2Mpps").unwrap(), 2_000_000.0);
        assert_eq!(parse_rate("5G").unwrap(), 5e9);
        for bad in ["", "0", "-1", "fast", "1X", "nan", "inf", "5.1G", "1000000000000000"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_rate("-5").unwrap_err().to_string(), "-5 is negative: a rate is frames per second above 0, e.g. 1M");
        assert!(parse_rate("-0").unwrap_err().to_string().contains("negative"));
        let e = parse_rate("1000000000000000").unwrap_err().to_string();
        assert!(e.contains("above the 5000 Mpps") && e.contains("up to 5G"), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2.5s").unwrap(), Duration::from_millis(2500));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("24h").unwrap(), Duration::from_secs(86_400));
        for bad in ["", "0", "-2", "soon", "1d", "1e30", "366d", "inf", "8761h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("-1").unwrap_err().to_string().starts_with("-1 is negative: a duration"));
        assert!(parse_duration("-500ms").unwrap_err().to_string().starts_with("-500ms is negative"));
        assert!(parse_duration("1e30").unwrap_err().to_string().contains("365 days"));
        assert!(parse_duration("525600m").is_ok(), "exactly a year");
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("10M").unwrap(), 10_000_000);
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("0").is_err());
        assert!(parse_count("-3").unwrap_err().to_string().starts_with("-3 is negative"));
        assert!(parse_count("1e30").unwrap_err().to_string().contains("above the largest count"));
        assert_eq!(parse_count("18446744073709549568").unwrap(), 18_446_744_073_709_549_568);
        assert_eq!(parse_count("18446744073709551615").unwrap(), u64::MAX);
        assert!(parse_count("18446744073709551616").is_err());
        assert!(parse_count("20000000000G").unwrap_err().to_string().contains("above the largest count"));
    }
}
