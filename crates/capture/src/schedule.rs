//! When each frame leaves, and from which queue. Frames are spread over
//! queues by flow (so a flow keeps its order) and keep the capture's
//! times (`original`), those times compressed or stretched (`scaled:X`),
//! an even rate over the whole capture (`rate`), or none (`fast`).

use std::fmt;
use std::str::FromStr;

use crate::Capture;

/// How the replay is timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// The gaps between frames as captured.
    Original,
    /// X times the capture's speed: every gap divided by X.
    Scaled(f64),
    /// Evenly at --rate frames per second over all queues, in the capture's order.
    Rate,
    /// As fast as the queues take frames.
    Fast,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TimingError(String);

impl FromStr for Timing {
    type Err = TimingError;
    fn from_str(s: &str) -> Result<Timing, TimingError> {
        match s {
            "original" => Ok(Timing::Original),
            "rate" => Ok(Timing::Rate),
            "fast" => Ok(Timing::Fast),
            _ => match s.strip_prefix("scaled:").map(str::parse::<f64>) {
                Some(Ok(x)) if x.is_finite() && x > 0.0 => Ok(Timing::Scaled(x)),
                Some(_) => Err(TimingError(format!("{s}: scaled:X needs X above 0 (2 replays twice as fast, 0.5 at half speed)"))),
                None => Err(TimingError(format!("{s}: expected original, scaled:X, rate or fast"))),
            },
        }
    }
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Timing::Original => write!(f, "original"),
            Timing::Scaled(x) => write!(f, "scaled:{x}"),
            Timing::Rate => write!(f, "rate"),
            Timing::Fast => write!(f, "fast"),
        }
    }
}

/// One queue's share of a pass over the capture: which frames, in order,
/// and when each leaves (nanoseconds from the pass's start).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueuePlan {
    pub frames: Vec<u32>,
    pub offsets_ns: Vec<u64>,
}

/// The whole replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub timing: Timing,
    pub queues: Vec<QueuePlan>,
    /// One pass's length: the next pass starts this long after the last
    /// one did (the span plus one mean gap, so the seam is not a burst).
    pub period_ns: u64,
    /// Passes over the capture.
    pub loops: u64,
}

impl Schedule {
    /// `rate`: frames per second over all queues, for `Timing::Rate`.
    pub fn new(c: &Capture, timing: Timing, rate: Option<f64>, queues: u16, loops: u64) -> Schedule {
        let n = c.len();
        let t0 = c.ts_ns(0);
        let mut offsets = Vec::with_capacity(n);
        let mut last = 0u64;
        for i in 0..n {
            let captured = c.ts_ns(i).saturating_sub(t0).max(last);
            last = captured;
            offsets.push(match timing {
                Timing::Original => captured,
                Timing::Scaled(x) => (captured as f64 / x) as u64,
                Timing::Rate => (i as f64 * 1e9 / rate.expect("a rate for Timing::Rate")) as u64,
                Timing::Fast => 0,
            });
        }
        let span = *offsets.last().expect("a capture holds frames");
        let period_ns = match timing {
            Timing::Fast => 0,
            Timing::Rate => (n as f64 * 1e9 / rate.expect("a rate for Timing::Rate")) as u64,
            _ if n > 1 => span + span / (n as u64 - 1),
            _ => 0,
        };
        let mut plans = vec![QueuePlan::default(); usize::from(queues.max(1))];
        for (i, &off) in offsets.iter().enumerate() {
            let q = (c.info(i).flow % u64::from(queues.max(1))) as usize;
            plans[q].frames.push(i as u32);
            plans[q].offsets_ns.push(off);
        }
        Schedule { timing, queues: plans, period_ns, loops }
    }

    /// Frames in all passes.
    pub fn frames(&self) -> u64 {
        self.queues.iter().map(|q| q.frames.len() as u64).sum::<u64>() * self.loops
    }

    /// How long the replay lasts at its timing (0 for `fast`).
    pub fn duration_ns(&self) -> u64 {
        self.period_ns.saturating_mul(self.loops)
    }

    /// Queues no flow of the capture falls on.
    pub fn idle_queues(&self) -> Vec<u16> {
        self.queues.iter().enumerate().filter(|(_, q)| q.frames.is_empty()).map(|(i, _)| i as u16).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::tests::udp_frame;
    use crate::read::tests::pcap;

    fn capture() -> Capture {
        // Two flows, out of step: flow A at 0, 100, 300 us; flow B at 50, 250 us.
        let (a, b) = (udp_frame(64, 1, 9), udp_frame(128, 2, 9));
        Capture::parse(pcap(&[(0, a.clone()), (50, b.clone()), (100, a.clone()), (250, b), (300, a)])).unwrap()
    }

    #[test]
    fn timings_parse_and_print() {
        assert_eq!("original".parse::<Timing>().unwrap(), Timing::Original);
        assert_eq!("scaled:2.5".parse::<Timing>().unwrap(), Timing::Scaled(2.5));
        assert_eq!(Timing::Scaled(2.5).to_string(), "scaled:2.5");
        assert!("scaled:0".parse::<Timing>().unwrap_err().to_string().contains("above 0"));
        assert!("slow".parse::<Timing>().unwrap_err().to_string().contains("expected original"));
    }

    #[test]
    fn original_timing_keeps_each_flow_on_one_queue_in_order() {
        let c = capture();
        let s = Schedule::new(&c, Timing::Original, None, 2, 3);
        let (a, b) = (c.info(0).flow, c.info(1).flow);
        assert_ne!(a % 2, b % 2, "the test's two flows land on different queues");
        let qa = &s.queues[(a % 2) as usize];
        assert_eq!(qa.frames, [0, 2, 4]);
        assert_eq!(qa.offsets_ns, [0, 100_000, 300_000]);
        assert_eq!(s.queues[(b % 2) as usize].offsets_ns, [50_000, 250_000]);
        // 300 us span plus a mean gap of 75 us.
        assert_eq!(s.period_ns, 375_000);
        assert_eq!((s.frames(), s.duration_ns()), (15, 1_125_000));
        assert!(s.idle_queues().is_empty());
    }

    #[test]
    fn scaled_rate_and_fast() {
        let c = capture();
        let s = Schedule::new(&c, Timing::Scaled(2.0), None, 1, 1);
        assert_eq!(s.queues[0].offsets_ns, [0, 25_000, 50_000, 125_000, 150_000]);
        let r = Schedule::new(&c, Timing::Rate, Some(1e6), 1, 1);
        assert_eq!(r.queues[0].offsets_ns, [0, 1000, 2000, 3000, 4000]);
        assert_eq!(r.period_ns, 5000);
        let f = Schedule::new(&c, Timing::Fast, None, 4, 2);
        assert_eq!((f.period_ns, f.frames()), (0, 10));
        assert_eq!(f.idle_queues().len(), 2);
    }

    #[test]
    fn times_that_go_back_are_held_at_the_last() {
        let f = udp_frame(64, 1, 2);
        let c = Capture::parse(pcap(&[(100, f.clone()), (300, f.clone()), (200, f.clone()), (50, f)])).unwrap();
        assert_eq!(c.out_of_order(), 2);
        let s = Schedule::new(&c, Timing::Original, None, 1, 1);
        assert_eq!(s.queues[0].offsets_ns, [0, 200_000, 200_000, 200_000]);
    }
}
