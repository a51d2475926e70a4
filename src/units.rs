//! Parsing the numbers users type: rates with k/M/G suffixes, durations in
//! seconds or with a unit.

use std::time::Duration;

/// Parses "1000000", "1.5M", "200k", "2G" (frames per second, or any count).
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix("pps").unwrap_or(t);
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        Some((i, 'g' | 'G')) => (&t[..i], 1e9),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * mult),
        _ => Err(format!("{s:?} is not a positive rate: write frames per second like 1000000, 1.5M or 200k")),
    }
}

/// Parses "10", "10s", "500ms", "2m", "1.5s".
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Duration::from_secs_f64(v * scale)),
        _ => Err(format!("{s:?} is not a positive duration: write seconds like 10, 2.5s, 500ms or 1m")),
    }
}

/// Parses a count with an optional k/M/G suffix ("1000", "10M").
pub fn parse_count(s: &str) -> Result<u64, String> {
    let v = parse_rate(s).map_err(|_| format!("{s:?} is not a positive count: write a number like 1000 or 10M"))?;
    if v.fract() != 0.0 || v > u64::MAX as f64 {
        return Err(format!("{s:?} is not a whole count"));
    }
    Ok(v as u64)
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
        for bad in ["", "0", "-1", "fast", "1X", "nan"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2.5s").unwrap(), Duration::from_millis(2500));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        for bad in ["", "0", "-2", "soon", "1h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("10M").unwrap(), 10_000_000);
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("0").is_err());
    }
}
