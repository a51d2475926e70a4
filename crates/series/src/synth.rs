//! Synthetic series for the tests: a piecewise-constant rate sampled into
//! intervals, with seeded noise.

use crate::store::{CounterKind, Row, Series};

/// splitmix64: small, seeded, good enough for noise.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [-1, 1).
    pub fn signed(&mut self) -> f64 {
        self.unit() * 2.0 - 1.0
    }

    /// Standard normal (Box-Muller).
    pub fn gauss(&mut self) -> f64 {
        let u = self.unit().max(1e-300);
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()
    }
}

/// How each interval's frames are disturbed.
#[derive(Clone, Copy)]
pub enum Noise {
    /// Uniform in ±p (a fraction).
    Uniform(f64),
    /// Gaussian with sigma p (a fraction).
    Gauss(f64),
}

/// A sender that starts `offset_s` into the first interval and runs each
/// `(frames per second, seconds)` level in turn; `iv` s intervals.
pub struct Shape {
    pub levels: Vec<(f64, f64)>,
    pub offset_s: f64,
    pub iv: f64,
    pub noise: Noise,
    pub seed: u64,
    pub frame_bytes: u64,
    /// An allowance counter ticks in intervals that end after this time.
    pub allowance_from: Option<f64>,
    /// Which end's figures the rows carry.
    pub received: bool,
    pub sent: bool,
    /// The sender's row label from this time on (rows that end after it), "none" before.
    pub label_from: Option<(f64, &'static str)>,
    /// The series is told when the trial's first and last frames were seen.
    pub marks: bool,
}

impl Shape {
    pub fn new(levels: &[(f64, f64)]) -> Shape {
        Shape {
            levels: levels.to_vec(),
            offset_s: 0.4,
            iv: 1.0,
            noise: Noise::Uniform(0.03),
            seed: 1,
            frame_bytes: 512,
            allowance_from: None,
            received: true,
            sent: true,
            label_from: None,
            marks: false,
        }
    }

    /// The exact frames in [t0, t1).
    pub fn frames_between(&self, t0: f64, t1: f64) -> f64 {
        let mut at = self.offset_s;
        let mut sum = 0.0;
        for &(rate, secs) in &self.levels {
            let (a, b) = (at.max(t0), (at + secs).min(t1));
            if b > a {
                sum += rate * (b - a);
            }
            at += secs;
        }
        sum
    }

    pub fn end_s(&self) -> f64 {
        self.offset_s + self.levels.iter().map(|l| l.1).sum::<f64>()
    }

    pub fn rows(&self) -> impl Iterator<Item = Row> + '_ {
        let n = (self.end_s() / self.iv - 1e-9).ceil() as usize;
        let mut rng = Rng::new(self.seed);
        (0..n).map(move |i| {
            let (t0, t1) = (i as f64 * self.iv, (i + 1) as f64 * self.iv);
            let exact = self.frames_between(t0, t1);
            let k = match self.noise {
                Noise::Uniform(p) => 1.0 + p * rng.signed(),
                Noise::Gauss(p) => 1.0 + p * rng.gauss(),
            };
            let received = (exact * k.max(0.0)).round() as u64;
            let tick = self.allowance_from.is_some_and(|f| t1 > f);
            Row {
                t_s: t1,
                secs: self.iv,
                sent_frames: self.sent.then(|| exact.round() as u64),
                sent_bytes: self.sent.then(|| exact.round() as u64 * self.frame_bytes),
                received_frames: self.received.then_some(received),
                received_bytes: self.received.then_some(received * self.frame_bytes),
                lost: (self.sent && self.received).then(|| (exact.round() as u64).saturating_sub(received)),
                counters: vec![if tick { 100 } else { 0 }, 0],
                latency_ns: None,
                verdict: self.label_from.map(|(from, label)| if t1 > from { label } else { "none" }.to_string()),
            }
        })
    }

    pub fn series(&self, max_rows: usize) -> Series {
        let mut s = Series::new(self.iv, counters(), max_rows);
        self.rows().for_each(|r| s.push(r));
        if self.marks {
            s.trial_frames_at(self.offset_s);
            s.trial_frames_at(self.end_s());
        }
        s
    }
}

pub fn counters() -> Vec<(String, CounterKind)> {
    vec![("pps_allowance_exceeded".into(), CounterKind::Allowance), ("rx_missed_errors".into(), CounterKind::Watched)]
}
