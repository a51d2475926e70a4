//! Parsers for clap that give one clear sentence each. Negative numbers
//! reach them (both tools' Args set `allow_negative_numbers`), and each
//! says what a good value is.

use std::str::FromStr;

pub use crate::units::BadValue;

/// True when `s` is a number with a minus sign ("-5", "-0.5", "-1..4" is not).
fn negative(s: &str) -> bool {
    let t = s.trim();
    t.strip_prefix('-').is_some_and(|r| r.parse::<f64>().is_ok() || r.parse::<u64>().is_ok())
}

/// A whole number of type T, or a sentence: "{s} is negative: give {what}"
/// or "{s} is not {what}".
fn whole<T: FromStr>(s: &str, what: &str) -> Result<T, BadValue> {
    if negative(s) {
        return Err(BadValue(format!("{} is negative: give {what}", s.trim())));
    }
    s.trim().parse::<T>().map_err(|_| BadValue(format!("{s:?} is not {what}")))
}

/// A whole number within `range`, or the sentences of [`whole`] (one out
/// of range is "not {what}").
fn whole_in<T: FromStr + PartialOrd>(s: &str, what: &str, range: std::ops::RangeInclusive<T>) -> Result<T, BadValue> {
    match whole::<T>(s, what)? {
        n if range.contains(&n) => Ok(n),
        _ => Err(BadValue(format!("{s:?} is not {what}"))),
    }
}

/// A decimal number, or the same sentences as [`whole`].
fn decimal(s: &str, what: &str) -> Result<f64, BadValue> {
    if negative(s) {
        return Err(BadValue(format!("{} is negative: give {what}", s.trim())));
    }
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(BadValue(format!("{s:?} is not {what}"))),
    }
}

/// `s` without its unit: "64B", "64 B" and "64" all read "64". The
/// help prints each default with its unit, and what it prints is taken
/// back as input.
fn without_unit<'a>(s: &'a str, unit: &str) -> &'a str {
    let t = s.trim();
    t.strip_suffix(unit).map_or(t, str::trim_end)
}

fn below_minimum(n: u64) -> String {
    format!("{n} is below the Ethernet minimum of {} bytes (FCS included): give 64 or more, e.g. 64 or 1518", wire::MIN_FRAME)
}

/// A frame size in bytes (1518, 1518B), 64 or more.
pub fn frame_size(s: &str) -> Result<u32, BadValue> {
    let n: u32 = whole(without_unit(s, "B"), "a frame size in bytes: 64 (the Ethernet minimum, FCS included) or more, e.g. 1518")?;
    if (n as usize) < wire::MIN_FRAME {
        return Err(BadValue(below_minimum(u64::from(n))));
    }
    Ok(n)
}

/// A list given as one flag value ("1,2,4", "1..32").
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct List<T>(pub Vec<T>);

impl<T> std::ops::Deref for List<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

/// Each number in a list or range ("1,2", "1..32"), as typed.
fn list_items(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').flat_map(|p| p.split("..")).map(str::trim)
}

/// A queue count, a list of them or a doubling range.
pub fn queue_list(s: &str) -> Result<List<u16>, BadValue> {
    if let Some(n) = list_items(s).find(|n| negative(n)) {
        return Err(BadValue(format!(
            "{n} is negative: a queue count is 1 to 65535: write a number, a list like 1,2,4 or a doubling range like 1..32"
        )));
    }
    Ok(List(ladder::parse_list(s, "queue count", u64::from(u16::MAX))?.into_iter().map(|v| v as u16).collect()))
}

/// A frame size, a list of them or a doubling range, each in bytes with
/// or without its unit ("64", "64B", "64B,1500B", "64..1024").
pub fn size_list(s: &str) -> Result<List<u32>, BadValue> {
    let bare: Vec<String> = s.split(',').map(|p| p.split("..").map(|n| without_unit(n, "B")).collect::<Vec<_>>().join("..")).collect();
    let s = bare.join(",");
    let s = s.as_str();
    for n in list_items(s) {
        if negative(n) {
            return Err(BadValue(format!(
                "{n} is negative: a frame size is 64 bytes (FCS included) or more: write a number or a list like 64,1500"
            )));
        }
        // Said before the list parser's "at least 1" for 0.
        if let Ok(v) = n.parse::<u64>() {
            if (v as usize) < wire::MIN_FRAME {
                return Err(BadValue(below_minimum(v)));
            }
        }
    }
    let v = ladder::parse_list(s, "frame size", u64::from(u32::MAX))?;
    for &n in &v {
        if (n as usize) < wire::MIN_FRAME {
            return Err(BadValue(below_minimum(n)));
        }
    }
    Ok(List(v.into_iter().map(|n| n as u32).collect()))
}

pub fn flows(s: &str) -> Result<u32, BadValue> {
    match whole::<u32>(s, "a number of flows, 1 to 65536")? {
        0 => Err(BadValue("there must be at least 1 flow".into())),
        n if n > 65536 => Err(BadValue(format!("{n} flows exceed the 65536 UDP source ports"))),
        n => Ok(n),
    }
}

pub fn queues(s: &str) -> Result<u16, BadValue> {
    match whole::<u16>(s, "a queue count (1 to 65535)")? {
        0 => Err(BadValue("there must be at least 1 queue".into())),
        n => Ok(n),
    }
}

pub fn burst(s: &str) -> Result<usize, BadValue> {
    whole_in(s, &format!("a burst size from 1 to {}", crate::MAX_BURST), 1..=crate::MAX_BURST)
}

pub fn ring(s: &str) -> Result<u16, BadValue> {
    whole_in(s, "a ring size (descriptors, 1 to 65535)", 1..=u16::MAX)
}

pub fn rate(s: &str) -> Result<f64, BadValue> {
    crate::units::parse_rate(s)
}

/// A frame size mix: "imix" or SIZE:WEIGHT pairs ("64:7,594:4,1518:1").
pub fn size_mix(s: &str) -> Result<wire::SizeMix, BadValue> {
    wire::SizeMix::parse(s).map_err(|e| BadValue(e.to_string()))
}

/// A rate or a list of them ("100k,1M,4M"), each its own ladder step.
pub fn rate_list(s: &str) -> Result<List<f64>, BadValue> {
    let v = s.split(',').map(crate::units::parse_rate).collect::<Result<Vec<f64>, BadValue>>()?;
    if (1..v.len()).any(|i| v[..i].contains(&v[i])) {
        return Err(BadValue(format!("rate list {s:?} repeats a rate: give each once")));
    }
    Ok(List(v))
}

/// An arrival shape or a list of them ("even,burst:8"), each its own ladder step.
pub fn shape_list(s: &str) -> Result<List<pace::Shape>, BadValue> {
    let v = s.split(',').map(|x| x.trim().parse::<pace::Shape>()).collect::<Result<Vec<_>, _>>().map_err(|e| BadValue(e.to_string()))?;
    if (1..v.len()).any(|i| v[..i].contains(&v[i])) {
        return Err(BadValue(format!("shape list {s:?} repeats a shape: give each once")));
    }
    Ok(List(v))
}

pub fn duration(s: &str) -> Result<std::time::Duration, BadValue> {
    crate::units::parse_duration(s)
}

/// How long a device call may take (--device-timeout): 100 ms to 1 h.
pub fn device_timeout(s: &str) -> Result<std::time::Duration, BadValue> {
    let d = crate::units::parse_duration(s)?;
    let (lo, hi) = (std::time::Duration::from_millis(100), std::time::Duration::from_secs(3600));
    if d < lo || d > hi {
        return Err(BadValue(format!("{s:?} is not a wait from 100ms to 1h, e.g. 20 or 20s")));
    }
    Ok(d)
}

/// A series interval, 10 ms to 1 h.
pub fn interval(s: &str) -> Result<std::time::Duration, BadValue> {
    let d = crate::units::parse_duration(s)?;
    let (lo, hi) = (std::time::Duration::from_millis(10), std::time::Duration::from_secs(3600));
    if d < lo || d > hi {
        return Err(BadValue(format!("{s:?} is not an interval from 10ms to 1h, e.g. 1 or 100ms or 10s")));
    }
    Ok(d)
}

pub fn count(s: &str) -> Result<u64, BadValue> {
    crate::units::parse_count(s)
}

/// A size in bytes with an optional k/M/G (powers of 1000) and an optional
/// B: "1G", "1GB", "512MB", "1000000".
pub fn bytes(s: &str) -> Result<u64, BadValue> {
    let t = without_unit(s, "B");
    if negative(t) {
        return Err(BadValue(format!("{t} is negative: give a size in bytes above 0, e.g. 512MB or 4GB")));
    }
    crate::units::parse_count(t).map_err(|_| BadValue(format!("{s:?} is not a size in bytes above 0: write e.g. 512MB, 4GB or 1000000")))
}

/// A percentage from 0 to 100 (loss allowed, thresholds), with or
/// without its % ("0.5", "0.5%").
pub fn percent(s: &str) -> Result<f64, BadValue> {
    let what = "a percentage from 0 to 100, e.g. 0.5";
    match decimal(without_unit(s, "%"), what)? {
        v if v <= 100.0 => Ok(v),
        v => Err(BadValue(format!("{v} is above 100: give {what}"))),
    }
}

/// A bandwidth in Gb/s, above 0.
pub fn gbps(s: &str) -> Result<f64, BadValue> {
    match decimal(s, "a bandwidth in Gb/s above 0, e.g. 100")? {
        v if v > 0.0 => Ok(v),
        _ => Err(BadValue(format!("{s:?} is not a bandwidth in Gb/s above 0, e.g. 100"))),
    }
}

/// A UDP port, 0 to 65535.
pub fn udp_port(s: &str) -> Result<u16, BadValue> {
    whole(s, "a UDP port, 0 to 65535")
}

/// How many times to run each ladder step, 1 to 100.
pub fn repeat(s: &str) -> Result<u32, BadValue> {
    whole_in(s, "a repeat count from 1 to 100", 1..=100)
}

/// CPU cycles of busy work per frame, 0 (none) or more.
pub fn cycles(s: &str) -> Result<u64, BadValue> {
    whole(s, "a number of CPU cycles per frame, 0 (none) or more, e.g. 20000")
}

/// An interval in microseconds, 0 (off) or more, with or without its
/// unit ("100", "100us").
pub fn micros(s: &str) -> Result<u64, BadValue> {
    whole(without_unit(s, "us"), "an interval in microseconds, 0 (off) or more, e.g. 100")
}

/// A number of mbufs, at least 1.
pub fn mbufs(s: &str) -> Result<u32, BadValue> {
    match whole::<u32>(s, "a number of mbufs, 1 or more, e.g. 4095")? {
        0 => Err(BadValue("a pool needs at least 1 mbuf: give 1 or more, e.g. 4095".into())),
        n => Ok(n),
    }
}

/// Streams sequence-checked per queue, 1 to 65536.
pub fn streams(s: &str) -> Result<usize, BadValue> {
    whole_in(s, "a number of streams, 1 to 65536", 1..=65536)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_numbers_say_so_and_what_fits() {
        assert!(queue_list("-2").unwrap_err().to_string().starts_with("-2 is negative: a queue count"));
        assert!(queue_list("1..-4").unwrap_err().to_string().starts_with("-4 is negative"));
        assert!(size_list("-64").unwrap_err().to_string().starts_with("-64 is negative: a frame size"));
        assert!(frame_size("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        assert!(flows("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        assert!(queues("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        assert!(burst("-32").unwrap_err().to_string().starts_with("-32 is negative"));
        assert!(ring("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        assert!(percent("-0.5").unwrap_err().to_string().starts_with("-0.5 is negative: give a percentage"));
        assert!(gbps("-100").unwrap_err().to_string().starts_with("-100 is negative"));
        assert!(udp_port("-1").unwrap_err().to_string().starts_with("-1 is negative: give a UDP port"));
        assert!(repeat("-3").unwrap_err().to_string().starts_with("-3 is negative"));
        assert!(cycles("-5").unwrap_err().to_string().starts_with("-5 is negative: give a number of CPU cycles"));
        assert!(micros("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        assert!(mbufs("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        assert!(streams("-1").unwrap_err().to_string().starts_with("-1 is negative"));
    }

    #[test]
    fn rate_and_shape_lists() {
        assert_eq!(rate_list("100k,1M,4M").unwrap().0, [1e5, 1e6, 4e6]);
        assert_eq!(rate_list("250k").unwrap().0, [2.5e5]);
        assert!(rate_list("1M,1000k").unwrap_err().to_string().contains("repeats a rate"));
        assert!(rate_list("1M,-5").unwrap_err().to_string().starts_with("-5 is negative"));
        assert_eq!(shape_list("even,burst:8").unwrap().0, [pace::Shape::Even, pace::Shape::Burst(8)]);
        assert!(shape_list("even,even").unwrap_err().to_string().contains("repeats a shape"));
        assert!(shape_list("even,bursty").unwrap_err().to_string().contains("is not an arrival shape"));
    }

    #[test]
    fn sizes_below_64_name_the_ethernet_minimum() {
        for s in ["0", "63", "0,64", "64,10", "0..128", "1..64"] {
            let e = size_list(s).unwrap_err().to_string();
            assert!(e.contains("Ethernet minimum of 64 bytes (FCS included)"), "{s}: {e}");
        }
        assert_eq!(size_list("64,1500").unwrap().0, [64, 1500]);
        assert!(frame_size("0").unwrap_err().to_string().contains("minimum of 64"));
    }

    #[test]
    fn values_with_their_unit_read_as_without() {
        assert_eq!(frame_size("1518B").unwrap(), 1518);
        assert_eq!(frame_size("1518 B").unwrap(), 1518);
        assert!(frame_size("63B").unwrap_err().to_string().contains("minimum of 64"));
        assert_eq!(size_list("64B").unwrap().0, [64]);
        assert_eq!(size_list("64B,1500 B").unwrap().0, [64, 1500]);
        assert_eq!(size_list("64B..256B").unwrap().0, [64, 128, 256]);
        assert!(size_list("-64B").unwrap_err().to_string().starts_with("-64 is negative"));
        assert_eq!(percent("0.5%").unwrap(), 0.5);
        assert_eq!(percent("5 %").unwrap(), 5.0);
        assert!(percent("101%").unwrap_err().to_string().contains("above 100"));
        assert_eq!(micros("100us").unwrap(), 100);
        assert_eq!(micros("0").unwrap(), 0);
        assert_eq!(bytes("1GB").unwrap(), 1_000_000_000);
        assert_eq!(bytes("1G").unwrap(), 1_000_000_000);
        assert_eq!(bytes("512MB").unwrap(), 512_000_000);
        assert_eq!(bytes("4096").unwrap(), 4096);
        assert!(bytes("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        assert!(bytes("lots").unwrap_err().to_string().contains("not a size in bytes"));
        assert!(bytes("0B").is_err());
    }

    #[test]
    fn ranges_and_good_values() {
        assert_eq!(percent("0").unwrap(), 0.0);
        assert_eq!(percent("100").unwrap(), 100.0);
        assert!(percent("101").unwrap_err().to_string().contains("above 100"));
        assert!(percent("nan").is_err());
        assert_eq!(udp_port("65535").unwrap(), 65535);
        assert!(udp_port("65536").is_err());
        assert_eq!(repeat("100").unwrap(), 100);
        assert!(repeat("0").is_err() && repeat("101").is_err());
        assert_eq!(cycles("0").unwrap(), 0);
        assert!(mbufs("0").is_err());
        assert_eq!(streams("65536").unwrap(), 65536);
        assert!(streams("0").is_err() && streams("65537").is_err());
        assert!(gbps("0").is_err());
    }
}
