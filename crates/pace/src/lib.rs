//! Pacing on a cycle counter: when each burst of a paced queue is due.
//!
//! Deadlines are kept on an absolute schedule (start + k x period), carried
//! in whole cycles plus a remainder, so the achieved rate does not drift by
//! rounding however long the run: over any whole number of bursts the error
//! is below one cycle.

/// The schedule of one paced queue.
#[derive(Debug, Clone)]
pub struct Pacer {
    next: u64,
    whole: u64,
    /// period = whole + num/den cycles
    num: u64,
    den: u64,
    acc: u64,
}

impl Pacer {
    /// A schedule of `burst` frames at `rate` frames per second on a counter
    /// running at `hz`, first burst due at `start`.
    pub fn new(hz: u64, rate: f64, burst: u32, start: u64) -> Pacer {
        assert!(rate > 0.0 && burst > 0 && hz > 0);
        // Work in milli-frames per second so fractional rates still pace exactly enough.
        let den = (rate * 1000.0).round().max(1.0) as u128;
        let cycles = u128::from(hz) * u128::from(burst) * 1000;
        Pacer { next: start, whole: (cycles / den) as u64, num: (cycles % den) as u64, den: den as u64, acc: 0 }
    }

    /// When the next burst is due.
    #[inline(always)]
    pub fn deadline(&self) -> u64 {
        self.next
    }

    /// Moves the schedule on by one burst.
    #[inline(always)]
    pub fn advance(&mut self) {
        self.next += self.whole;
        self.acc += self.num;
        if self.acc >= self.den {
            self.acc -= self.den;
            self.next += 1;
        }
    }

    /// Period of one burst in cycles, rounded down.
    pub fn period_cycles(&self) -> u64 {
        self.whole
    }
}

/// How frames are spread in time at a given mean rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Unpaced: as fast as the queue takes frames.
    Open,
    /// One frame per tick, ticks evenly spaced.
    Even,
    /// N frames back to back, then a wait.
    Burst(u32),
    /// Exponentially distributed gaps between frames (a Poisson process).
    Poisson,
}

impl Shape {
    /// Whether the shape needs a rate.
    pub fn is_paced(&self) -> bool {
        *self != Shape::Open
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shape::Open => f.write_str("open"),
            Shape::Even => f.write_str("even"),
            Shape::Burst(n) => write!(f, "burst:{n}"),
            Shape::Poisson => f.write_str("poisson"),
        }
    }
}

/// Written as its text ("even", "burst:8"), as it is typed.
impl schemars::JsonSchema for Shape {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Shape".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An arrival shape: open (unpaced), even, burst:N or poisson",
            "type": "string",
            "pattern": "^(open|even|poisson|burst:[0-9]+)$"
        })
    }
}

impl serde::Serialize for Shape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The inverse of `Serialize`: the shape's name, as `FromStr` reads it.
impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A text that names no arrival shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an arrival shape: write even, burst:N (N from 1 to 512), poisson or open")]
pub struct NotAShape(pub String);

impl std::str::FromStr for Shape {
    type Err = NotAShape;
    fn from_str(s: &str) -> Result<Shape, NotAShape> {
        match s {
            "open" => Ok(Shape::Open),
            "even" => Ok(Shape::Even),
            "poisson" => Ok(Shape::Poisson),
            _ => match s.strip_prefix("burst:").map(str::parse::<u32>) {
                Some(Ok(n)) if (1..=512).contains(&n) => Ok(Shape::Burst(n)),
                _ => Err(NotAShape(s.to_string())),
            },
        }
    }
}

/// When frames are due on one queue, for any paced shape: the loop asks
/// how many are due now and sends them in one call.
#[derive(Debug, Clone)]
pub struct Schedule {
    shape: Shape,
    /// Burst: the burst's deadlines. Even: one frame's.
    pacer: Pacer,
    /// Poisson: the next frame's deadline, and the mean gap in cycles.
    next: u64,
    mean_gap: f64,
    rng: u64,
}

impl Schedule {
    /// `rate` frames per second on a counter running at `hz`, from `start`.
    /// None for `Shape::Open`.
    pub fn new(shape: Shape, hz: u64, rate: f64, start: u64, seed: u64) -> Option<Schedule> {
        let frames_per_tick = match shape {
            Shape::Open => return None,
            Shape::Burst(n) => n,
            Shape::Even | Shape::Poisson => 1,
        };
        let mut s =
            Schedule { shape, pacer: Pacer::new(hz, rate, frames_per_tick, start), next: start, mean_gap: hz as f64 / rate, rng: seed | 1 };
        if shape == Shape::Poisson {
            s.next = start + s.exp_gap();
        }
        Some(s)
    }

    /// When the next frame (or burst) is due.
    #[inline(always)]
    pub fn deadline(&self) -> u64 {
        match self.shape {
            Shape::Poisson => self.next,
            _ => self.pacer.deadline(),
        }
    }

    /// Frames due by `now` (at least one: call it once `deadline()` has
    /// passed), at most `max`, and moves the schedule past them. A burst is
    /// always whole; even and Poisson frames that fell due while the sender
    /// was busy go together, and the achieved shape shows it.
    #[inline]
    pub fn take_due(&mut self, now: u64, max: u32) -> u32 {
        match self.shape {
            Shape::Open => max,
            Shape::Burst(n) => {
                self.pacer.advance();
                n
            }
            Shape::Even => {
                let mut k = 0;
                while k < max && self.pacer.deadline() <= now {
                    self.pacer.advance();
                    k += 1;
                }
                k.max(1)
            }
            Shape::Poisson => {
                let mut k = 0;
                while k < max && self.next <= now {
                    self.next += self.exp_gap();
                    k += 1;
                }
                k.max(1)
            }
        }
    }

    /// An exponentially distributed gap in cycles (xorshift64*, inverse CDF).
    fn exp_gap(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let x = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
        // Uniform in (0, 1]: never ln(0).
        let u = ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        (-u.ln() * self.mean_gap).round() as u64
    }
}

/// Gap histogram buckets: exact below 16 cycles, then 8 per octave.
const GAP_BUCKETS: usize = 16 + 60 * 8;

#[inline(always)]
fn gap_bucket(g: u64) -> usize {
    if g < 16 {
        return g as usize;
    }
    let e = 63 - g.leading_zeros() as usize; // >= 4
    16 + (e - 4) * 8 + ((g >> (e - 3)) & 7) as usize
}

/// The middle of a bucket, in cycles.
fn bucket_value(i: usize) -> f64 {
    if i < 16 {
        return i as f64;
    }
    let e = (i - 16) / 8 + 4;
    let sub = ((i - 16) % 8) as u64;
    let lo = (8 + sub) << (e - 3);
    lo as f64 + (1u64 << (e - 3)) as f64 / 2.0
}

/// What a paced (or open) queue really did, measured from its send times:
/// per call to tx_burst with new frames, how many, and the gaps between calls.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeStats {
    /// Sends of new frames (a retry of the same frames is not one).
    pub sends: u64,
    pub frames: u64,
    pub max_frames: u32,
    /// Gaps between one queue's consecutive sends, in cycles.
    gaps: Box<[u64; GAP_BUCKETS]>,
    gap_count: u64,
    gap_sum: f64,
    last: u64,
}

impl Default for ShapeStats {
    fn default() -> Self {
        ShapeStats { sends: 0, frames: 0, max_frames: 0, gaps: Box::new([0; GAP_BUCKETS]), gap_count: 0, gap_sum: 0.0, last: 0 }
    }
}

impl ShapeStats {
    /// Untimed counts of a loop that kept its own (blast's C lanes):
    /// `sends` of `frames` in all, at most `max_frames` in one.
    pub fn counted(sends: u64, frames: u64, max_frames: u32) -> ShapeStats {
        ShapeStats { sends, frames, max_frames, ..ShapeStats::default() }
    }

    /// Counts a send without timing it (unpaced: the gaps are the loop's own).
    #[inline(always)]
    pub fn count(&mut self, frames: u32) {
        self.sends += 1;
        self.frames += u64::from(frames);
        self.max_frames = self.max_frames.max(frames);
    }

    #[inline(always)]
    pub fn record(&mut self, tsc: u64, frames: u32) {
        if self.sends > 0 {
            let g = tsc.saturating_sub(self.last);
            self.gaps[gap_bucket(g)] += 1;
            self.gap_count += 1;
            self.gap_sum += g as f64;
        }
        self.last = tsc;
        self.sends += 1;
        self.frames += u64::from(frames);
        self.max_frames = self.max_frames.max(frames);
    }

    pub fn merge(&mut self, o: &ShapeStats) {
        self.sends += o.sends;
        self.frames += o.frames;
        self.max_frames = self.max_frames.max(o.max_frames);
        for (a, b) in self.gaps.iter_mut().zip(o.gaps.iter()) {
            *a += b;
        }
        self.gap_count += o.gap_count;
        self.gap_sum += o.gap_sum;
    }

    pub fn frames_per_send(&self) -> f64 {
        if self.sends == 0 {
            0.0
        } else {
            self.frames as f64 / self.sends as f64
        }
    }

    /// Mean gap between a queue's sends, in microseconds.
    pub fn mean_gap_us(&self, hz: u64) -> f64 {
        if self.gap_count == 0 {
            return 0.0;
        }
        self.gap_sum / self.gap_count as f64 / hz as f64 * 1e6
    }

    /// The gap at percentile `q` (0 to 100), in cycles (within 1/16).
    pub fn gap_percentile(&self, q: f64) -> f64 {
        if self.gap_count == 0 {
            return 0.0;
        }
        let want = ((q / 100.0) * self.gap_count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &n) in self.gaps.iter().enumerate() {
            seen += n;
            if seen >= want {
                return bucket_value(i);
            }
        }
        bucket_value(GAP_BUCKETS - 1)
    }

    /// How much the gaps vary, robust to the rare long gap of a descheduled
    /// core: (P90 - P10) / P50. About 0 for even or burst pacing; about 3.2
    /// for exponential gaps (ln 10 - ln 10/9, over ln 2).
    pub fn gap_spread(&self) -> f64 {
        let p50 = self.gap_percentile(50.0);
        if p50 <= 0.0 {
            return 0.0;
        }
        (self.gap_percentile(90.0) - self.gap_percentile(10.0)) / p50
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_reads_back_from_what_it_writes() {
        use serde::de::value::{Error, StrDeserializer};
        use serde::Deserialize;
        for shape in [Shape::Open, Shape::Even, Shape::Poisson, Shape::Burst(1), Shape::Burst(512)] {
            // Serialize writes the Display text (collect_str).
            let text = shape.to_string();
            assert_eq!(Shape::deserialize(StrDeserializer::<Error>::new(&text)), Ok(shape), "{text}");
        }
        let refused = Shape::deserialize(StrDeserializer::<Error>::new("burst:0")).unwrap_err().to_string();
        assert!(refused.contains("is not an arrival shape"), "{refused}");
    }

    #[test]
    fn exact_rate_over_many_bursts() {
        // 2.5 GHz, 3 Mpps, bursts of 32: period 26666.67 cycles.
        let mut p = Pacer::new(2_500_000_000, 3_000_000.0, 32, 1000);
        assert_eq!(p.period_cycles(), 26_666);
        let bursts = 3_000_000 / 32 * 10;
        for _ in 0..bursts {
            p.advance();
        }
        let elapsed = p.deadline() - 1000;
        let expected = 2_500_000_000u64 * 32 * bursts / 3_000_000;
        assert!(elapsed.abs_diff(expected) <= 1, "{elapsed} vs {expected}");
    }

    #[test]
    fn slow_fractional_rate() {
        let mut p = Pacer::new(1_000_000, 0.5, 1, 0);
        p.advance();
        assert_eq!(p.deadline(), 2_000_000);
    }

    #[test]
    fn shapes_parse_and_print() {
        for s in ["open", "even", "poisson", "burst:16"] {
            assert_eq!(s.parse::<Shape>().unwrap().to_string(), s);
        }
        assert!("burst:0".parse::<Shape>().is_err());
        assert!("bursty".parse::<Shape>().unwrap_err().to_string().contains("even, burst:N"));
    }

    /// Runs a schedule on a simulated clock where each send takes `cost` cycles.
    fn simulate(shape: Shape, rate: f64, cost: u64, frames: u64) -> (ShapeStats, u64) {
        let hz = 1_000_000_000;
        let mut s = Schedule::new(shape, hz, rate, 0, 42).unwrap();
        let mut st = ShapeStats::default();
        let mut now = 0;
        let mut sent = 0;
        while sent < frames {
            now = now.max(s.deadline());
            let n = s.take_due(now, 32);
            st.record(now, n);
            sent += u64::from(n);
            now += cost;
        }
        (st, now)
    }

    #[test]
    fn even_sends_one_frame_per_tick_at_the_rate() {
        let (st, end) = simulate(Shape::Even, 1e6, 100, 100_000);
        assert_eq!(st.max_frames, 1);
        assert!((st.mean_gap_us(1_000_000_000) - 1.0).abs() < 0.001);
        assert!(st.gap_spread() < 0.01);
        assert!((end as f64 / 1e8 - 1.0).abs() < 0.001, "100k frames at 1 Mpps take 0.1 s: {end}");
    }

    #[test]
    fn even_catches_up_in_batches_when_the_sender_is_slow() {
        // Each send costs 3 us at 1 Mpps: three frames fall due per send.
        let (st, end) = simulate(Shape::Even, 1e6, 3_000, 30_000);
        assert!(st.frames_per_send() > 2.5, "{}", st.frames_per_send());
        assert!((end as f64 / 3e7 - 1.0).abs() < 0.01, "the rate holds: {end}");
    }

    #[test]
    fn bursts_are_whole_and_spaced() {
        let (st, _) = simulate(Shape::Burst(16), 1.6e6, 100, 160_000);
        assert_eq!((st.max_frames, st.frames_per_send()), (16, 16.0));
        assert!((st.mean_gap_us(1_000_000_000) - 10.0).abs() < 0.01);
        assert!(st.gap_spread() < 0.01);
    }

    #[test]
    fn poisson_gaps_vary_as_exponential_ones_do() {
        let (st, end) = simulate(Shape::Poisson, 1e5, 10, 200_000);
        let spread = st.gap_spread();
        assert!((2.8..3.6).contains(&spread), "(P90 - P10) / P50 of exponential gaps is about 3.2: {spread}");
        let p50_us = st.gap_percentile(50.0) / 1e3;
        assert!((p50_us / (10.0 * std::f64::consts::LN_2) - 1.0).abs() < 0.1, "median gap ln 2 x 10 us: {p50_us}");
        // 200k frames at 100 kpps: about 2 s.
        assert!((end as f64 / 2e9 - 1.0).abs() < 0.02, "{end}");
    }

    #[test]
    fn shape_stats_merge() {
        let mut a = ShapeStats::default();
        a.record(0, 4);
        a.record(100, 2);
        let mut b = ShapeStats::default();
        b.record(50, 8);
        a.merge(&b);
        assert_eq!((a.sends, a.frames, a.max_frames), (3, 14, 8));
        assert_eq!(a.gap_percentile(50.0), 100.0, "one gap of 100 cycles");
    }

    #[test]
    fn gap_buckets_are_monotonic_and_tight() {
        let mut prev = 0;
        for g in [0u64, 1, 15, 16, 17, 100, 1000, 123_456, 1 << 40, u64::MAX] {
            let b = gap_bucket(g);
            assert!(b >= prev && b < GAP_BUCKETS, "{g}: {b}");
            prev = b;
            if (16..(1 << 50)).contains(&g) {
                assert!((bucket_value(b) - g as f64).abs() / g as f64 <= 1.0 / 16.0 + 1e-9, "{g} -> {}", bucket_value(b));
            }
        }
    }
}
