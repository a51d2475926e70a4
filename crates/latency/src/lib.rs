//! Latency histograms: one per lcore, recorded on the data path without
//! allocating, merged after the run, summarised as the percentiles a
//! commitment is written in (P50 to P99.99 and the maximum), and exported
//! whole so nobody has to trust the summary.

pub mod arrival;
pub use arrival::{ArrivalClock, ArrivalClockChoice, LatencyClock, NicTimeMap, NicTimescale};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latencies from 1 ns to 10 s at 3 significant digits (about 200 KiB).
const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 10_000_000_000;
const SIGFIGS: u8 = 3;

/// The percentiles every latency figure reports, in this order.
pub const PERCENTILES: [(&str, f64); 5] = [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9), ("p99.99", 99.99)];

/// One lcore's latencies, in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// Allocates the whole range up front: recording never allocates.
    pub fn new() -> LatencyHistogram {
        LatencyHistogram { h: Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIGS).expect("static bounds are valid") }
    }

    /// Records one latency; values past the range count at its edge.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.h.saturating_record(ns.clamp(LOWEST_NS, HIGHEST_NS));
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Adds another lcore's histogram.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.h.add(&other.h).expect("histograms share their bounds");
    }

    /// Adds `other` to `total`, which starts as None (no lcore timed anything yet).
    pub fn merge_into(total: &mut Option<LatencyHistogram>, other: &LatencyHistogram) {
        match total {
            Some(t) => t.merge(other),
            None => *total = Some(other.clone()),
        }
    }

    pub fn summary(&self) -> LatencySummary {
        let n = self.count();
        let at = |q: f64| if n == 0 { 0.0 } else { self.h.value_at_percentile(q) as f64 / 1000.0 };
        LatencySummary {
            count: n,
            min_us: if n == 0 { 0.0 } else { self.h.min() as f64 / 1000.0 },
            mean_us: if n == 0 { 0.0 } else { self.h.mean() / 1000.0 },
            p50_us: at(50.0),
            p90_us: at(90.0),
            p99_us: at(99.0),
            p99_9_us: at(99.9),
            p99_99_us: at(99.99),
            max_us: if n == 0 { 0.0 } else { self.h.max() as f64 / 1000.0 },
        }
    }

    /// Values above `ns` (to the histogram's precision).
    pub fn count_above_ns(&self, ns: u64) -> u64 {
        self.h.len() - self.h.count_between(0, ns)
    }

    /// The value (microseconds) at percentile `q` (0 to 100); None with no samples.
    pub fn percentile_us(&self, q: f64) -> Option<f64> {
        (self.count() > 0).then(|| self.h.value_at_percentile(q) as f64 / 1000.0)
    }

    /// The whole histogram as (upper bound in ns, count) for every
    /// non-empty bucket, logarithmic buckets (ratio 2, sub-divided by 10).
    pub fn buckets(&self) -> Vec<Bucket> {
        self.h
            .iter_recorded()
            .map(|v| Bucket { le_ns: self.h.highest_equivalent(v.value_iterated_to()), count: v.count_at_value() })
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bucket {
    /// Values up to and including this many nanoseconds (within 0.1%).
    pub le_ns: u64,
    pub count: u64,
}

/// Percentiles of one run, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    pub count: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    #[serde(rename = "p99.9_us")]
    pub p99_9_us: f64,
    #[serde(rename = "p99.99_us")]
    pub p99_99_us: f64,
    pub max_us: f64,
}

/// Whether `name` is a percentile a summary carries ("p50" to "p99.99", or "max").
pub fn is_percentile(name: &str) -> bool {
    matches!(name.to_ascii_lowercase().as_str(), "p50" | "p90" | "p99" | "p99.9" | "p99.99" | "max")
}

impl LatencySummary {
    /// The value at a named percentile ("p99.9"), or "max"; None for an
    /// unknown name, and None with no samples (nothing was measured: the
    /// summary's zeros are not figures).
    pub fn at(&self, name: &str) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        Some(match name.to_ascii_lowercase().as_str() {
            "p50" => self.p50_us,
            "p90" => self.p90_us,
            "p99" => self.p99_us,
            "p99.9" => self.p99_9_us,
            "p99.99" => self.p99_99_us,
            "max" => self.max_us,
            _ => return None,
        })
    }

    /// "P50 12.3 us, P90 ..., Max 80.1 us (n = 1000)", or "no samples"
    /// when nothing was timed.
    pub fn line(&self) -> String {
        if self.count == 0 {
            return "no samples".into();
        }
        format!(
            "P50 {:.1} us, P90 {:.1} us, P99 {:.1} us, P99.9 {:.1} us, P99.99 {:.1} us, Max {:.1} us (n = {})",
            self.p50_us, self.p90_us, self.p99_us, self.p99_9_us, self.p99_99_us, self.max_us, self.count
        )
    }
}

/// A latency limit: "P99.9<=50us" (units ns, us, ms; default us).
#[derive(Debug, Clone, PartialEq)]
pub struct Sla {
    pub percentile: String,
    pub max_us: f64,
}

/// A text that is not a latency limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a latency limit: write a percentile and a bound, like P99.9<=50us (P50, P90, P99, P99.9, P99.99 or Max; ns, us or ms)"
)]
pub struct NotAnSla(pub String);

impl std::str::FromStr for Sla {
    type Err = NotAnSla;
    fn from_str(s: &str) -> Result<Sla, NotAnSla> {
        let bad = || NotAnSla(s.to_string());
        let (p, v) = s.split_once("<=").ok_or_else(bad)?;
        let percentile = p.trim().to_ascii_lowercase();
        if !is_percentile(&percentile) {
            return Err(bad());
        }
        let v = v.trim();
        let (num, scale) = if let Some(x) = v.strip_suffix("ns") {
            (x, 1e-3)
        } else if let Some(x) = v.strip_suffix("us") {
            (x, 1.0)
        } else if let Some(x) = v.strip_suffix("ms") {
            (x, 1e3)
        } else {
            (v, 1.0)
        };
        let n: f64 = num.trim().parse().map_err(|_| bad())?;
        if !(n > 0.0 && n.is_finite()) {
            return Err(bad());
        }
        Ok(Sla { percentile, max_us: n * scale })
    }
}

impl Sla {
    pub fn holds(&self, s: &LatencySummary) -> bool {
        s.count > 0 && s.at(&self.percentile).is_some_and(|v| v <= self.max_us)
    }

    /// "P99.9 <= 50.0 us".
    pub fn label(&self) -> String {
        let p = if self.percentile == "max" { "Max".to_string() } else { self.percentile.to_uppercase() };
        format!("{p} <= {} us", self.max_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_monotonic_and_right() {
        let mut h = LatencyHistogram::new();
        for v in 1..=10_000u64 {
            h.record_ns(v * 1000); // 1 us .. 10 ms
        }
        let s = h.summary();
        assert_eq!(s.count, 10_000);
        assert!((s.p50_us - 5000.0).abs() / 5000.0 < 0.002, "{}", s.p50_us);
        assert!((s.p99_us - 9900.0).abs() / 9900.0 < 0.002);
        let ps = [s.min_us, s.p50_us, s.p90_us, s.p99_us, s.p99_9_us, s.p99_99_us, s.max_us];
        assert!(ps.windows(2).all(|w| w[0] <= w[1]), "{ps:?}");
    }

    #[test]
    fn merging_adds_counts_and_keeps_extremes() {
        let (mut a, mut b) = (LatencyHistogram::new(), LatencyHistogram::new());
        for _ in 0..900 {
            a.record_ns(10_000);
        }
        for _ in 0..100 {
            b.record_ns(1_000_000);
        }
        a.merge(&b);
        let s = a.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_us - 10.0).abs() < 0.02);
        assert!((s.p99_us - 1000.0).abs() < 1.0, "{}", s.p99_us);
        assert!((s.max_us - 1000.0).abs() < 1.0);
        let total: u64 = a.buckets().iter().map(|b| b.count).sum();
        assert_eq!(total, 1000, "the exported buckets hold every sample");
    }

    #[test]
    fn out_of_range_values_are_kept_at_the_edges() {
        let mut h = LatencyHistogram::new();
        h.record_ns(0);
        h.record_ns(u64::MAX);
        assert_eq!(h.count(), 2);
        assert!(h.summary().max_us >= 9.99e6);
    }

    #[test]
    fn no_samples_give_no_figures() {
        let h = LatencyHistogram::new();
        let s = h.summary();
        assert_eq!(s.count, 0);
        assert_eq!(s.line(), "no samples");
        for name in ["p50", "p90", "p99", "p99.9", "p99.99", "max", "Max", "P99.9"] {
            assert_eq!(s.at(name), None, "{name}: nothing measured");
        }
        assert_eq!(h.percentile_us(99.9), None);
        assert_eq!(LatencySummary::default().line(), "no samples");

        let mut h = LatencyHistogram::new();
        h.record_ns(12_000);
        let s = h.summary();
        assert!(s.at("P99.9").is_some_and(|v| (v - 12.0).abs() < 0.02), "{s:?}");
        assert_eq!(s.at("p97"), None, "not a percentile a summary carries");
        assert!(h.percentile_us(50.0).is_some_and(|v| (v - 12.0).abs() < 0.02));
        assert_eq!(s.line(), "P50 12.0 us, P90 12.0 us, P99 12.0 us, P99.9 12.0 us, P99.99 12.0 us, Max 12.0 us (n = 1)");
        assert!(is_percentile("Max") && is_percentile("P99.99") && !is_percentile("p97"));
    }

    #[test]
    fn sla_parses_and_judges() {
        let sla: Sla = "P99.9<=50us".parse().unwrap();
        assert_eq!(sla, Sla { percentile: "p99.9".into(), max_us: 50.0 });
        assert_eq!("p99<=2ms".parse::<Sla>().unwrap().max_us, 2000.0);
        assert_eq!("Max<=800ns".parse::<Sla>().unwrap().max_us, 0.8);
        assert!("P97<=1us".parse::<Sla>().unwrap_err().to_string().contains("P99.9<=50us"));
        assert!("P99<=".parse::<Sla>().is_err());
        let mut h = LatencyHistogram::new();
        for _ in 0..1000 {
            h.record_ns(20_000);
        }
        assert!(sla.holds(&h.summary()));
        h.record_ns(90_000);
        h.record_ns(90_000);
        assert!(!sla.holds(&h.summary()), "2 in 1002 above 50 us breaks P99.9");
        assert!(!sla.holds(&LatencySummary::default()), "no samples: no evidence");
        assert_eq!(sla.label(), "P99.9 <= 50 us");
    }
}
