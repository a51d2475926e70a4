//! Latency as the main thread sees it while a run goes: each lane counts
//! its timed probes into coarse log buckets it alone writes (a relaxed load
//! and store per probe, on its own lines), and the main thread takes the
//! difference of two readings for an interval's percentiles and the
//! `/metrics` histogram. The lane's own HdrHistogram, exact to 3
//! significant digits, stays what the run's record reports.
//!
//! A bucket is a quarter of a power of two (below 4 ns, one nanosecond):
//! a percentile read from it is its bucket's upper bound, at most 25% above
//! the true value and never below it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Buckets up to 2^40 ns (18 minutes): beyond is counted in the last.
pub const BUCKETS: usize = 4 * 40;

/// The bucket of `ns`.
#[inline(always)]
pub fn bucket_of(ns: u64) -> usize {
    if ns < 4 {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros() as usize;
    (4 * (e - 1) + ((ns >> (e - 2)) & 3) as usize).min(BUCKETS - 1)
}

/// The largest nanosecond count bucket `i` holds.
pub fn upper_ns(i: usize) -> u64 {
    if i < 4 {
        return i as u64;
    }
    let (e, sub) = (i / 4 + 1, (i % 4) as u64);
    ((5 + sub) << (e - 2)) - 1
}

/// One lane's counts per bucket (single writer: the lane).
pub struct LiveLatency {
    buckets: [AtomicU64; BUCKETS],
}

impl Default for LiveLatency {
    fn default() -> Self {
        LiveLatency { buckets: std::array::from_fn(|_| AtomicU64::new(0)) }
    }
}

impl LiveLatency {
    /// One timed probe (the lane's thread only).
    #[inline(always)]
    pub fn record(&self, ns: u64) {
        let b = &self.buckets[bucket_of(ns)];
        b.store(b.load(Relaxed) + 1, Relaxed);
    }

    /// Adds this lane's counts into `into` (the main thread).
    pub fn read_into(&self, into: &mut [u64; BUCKETS]) {
        for (s, b) in into.iter_mut().zip(&self.buckets) {
            *s += b.load(Relaxed);
        }
    }
}

/// Counts per bucket summed over lanes, and their differences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyCounts(pub Box<[u64; BUCKETS]>);

impl Default for LatencyCounts {
    fn default() -> Self {
        LatencyCounts(Box::new([0; BUCKETS]))
    }
}

impl LatencyCounts {
    /// Every lane's counts now.
    pub fn read<'a>(lanes: impl IntoIterator<Item = &'a LiveLatency>) -> LatencyCounts {
        let mut c = LatencyCounts::default();
        for l in lanes {
            l.read_into(&mut c.0);
        }
        c
    }

    /// From `earlier` to these (a lane restarted since counts from zero:
    /// a bucket below its earlier reading counts as all new).
    pub fn since(&self, earlier: &LatencyCounts) -> LatencyCounts {
        let mut d = LatencyCounts::default();
        for (i, v) in d.0.iter_mut().enumerate() {
            *v = if self.0[i] >= earlier.0[i] { self.0[i] - earlier.0[i] } else { self.0[i] };
        }
        d
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// P50, P99, P99.9 and the max, in ns (each its bucket's upper bound);
    /// None without a probe.
    pub fn percentiles(&self) -> Option<[u64; 4]> {
        let n = self.total();
        if n == 0 {
            return None;
        }
        let at = |q: f64| {
            let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
            let mut seen = 0;
            for (i, &c) in self.0.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return upper_ns(i);
                }
            }
            upper_ns(BUCKETS - 1)
        };
        Some([at(0.5), at(0.99), at(0.999), at(1.0)])
    }

    /// Adds `d` to these (a run's totals, interval by interval).
    pub fn add(&mut self, d: &LatencyCounts) {
        for (s, v) in self.0.iter_mut().zip(d.0.iter()) {
            *s += v;
        }
    }

    /// Cumulative counts at fixed bounds, in seconds (the power-of-two
    /// bucket edges from about 1 us to 17 s, then +Inf), for a Prometheus
    /// histogram whose bounds must not change between scrapes; and the sum,
    /// from each bucket's upper bound (an upper estimate).
    pub fn prometheus_buckets(&self) -> (Vec<(f64, u64)>, f64) {
        let (mut out, mut seen, mut sum) = (Vec::new(), 0, 0.0);
        for (i, &c) in self.0.iter().enumerate() {
            seen += c;
            sum += upper_ns(i) as f64 / 1e9 * c as f64;
            // The last bucket of each power of two, from 2^10 ns to 2^34 ns.
            if i % 4 == 3 && (4 * 9 + 3..=4 * 33 + 3).contains(&i) {
                out.push((upper_ns(i) as f64 / 1e9, seen));
            }
        }
        out.push((f64::INFINITY, seen));
        (out, sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_within_a_quarter() {
        for ns in [0u64, 1, 3, 4, 5, 7, 8, 9, 15, 16, 1000, 1023, 1024, 65_000, 1_000_000, 123_456_789] {
            let b = bucket_of(ns);
            assert!(upper_ns(b) >= ns, "{ns} in bucket {b} up to {}", upper_ns(b));
            assert!(b == 0 || upper_ns(b - 1) < ns, "{ns}: the bucket before also holds it");
            assert!(upper_ns(b) as f64 <= ns as f64 * 1.25 + 1.0, "{ns}: bucket up to {}", upper_ns(b));
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_an_interval() {
        let lane = LiveLatency::default();
        let before = LatencyCounts::read([&lane]);
        for _ in 0..990 {
            lane.record(10_000);
        }
        for _ in 0..10 {
            lane.record(1_000_000);
        }
        let d = LatencyCounts::read([&lane]).since(&before);
        let [p50, p99, p999, max] = d.percentiles().unwrap();
        assert!((10_000..=12_500).contains(&p50), "{p50}");
        assert!((10_000..=12_500).contains(&p99), "{p99}");
        assert!((1_000_000..=1_250_000).contains(&p999) && p999 == max, "{p999} {max}");
        assert_eq!(LatencyCounts::default().percentiles(), None);
        let (cum, sum) = d.prometheus_buckets();
        assert_eq!(cum.last().unwrap(), &(f64::INFINITY, 1000));
        assert!(cum.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        assert_eq!(cum.len(), LatencyCounts::default().prometheus_buckets().0.len(), "the bounds never change");
        assert!((1e-6..3e-6).contains(&cum[0].0), "{:?}", cum[0]);
        assert!(sum > 0.0);
    }
}
