//! What a step's lanes handed back: each lane's outcome, the step's, and
//! one uninterrupted run of the lanes (a phase: the warm-up, or the trial).

use ladder::StepFailure;

use super::window::SenderWindow;
use crate::counters::Tally;
use crate::tx::TxOutcome;


pub struct LaneResult {
    pub queue: u16,
    pub lcore: u32,
    pub outcome: TxOutcome,
}

pub struct StepOutcome {
    pub lanes: Vec<LaneResult>,
    pub window: Option<SenderWindow>,
    /// Why the step ended early, if it did (the receiver gone, a hook failed).
    pub failure: Option<StepFailure>,
    pub interrupted: bool,
    /// Seconds from the first lane's start to the last lane's end.
    pub seconds: f64,
}

impl StepOutcome {
    pub fn total(&self) -> Tally {
        let mut t = Tally::default();
        for l in &self.lanes {
            t.add(&l.outcome.tally);
        }
        t
    }

    pub fn shape(&self) -> pace::ShapeStats {
        merged_shape(&self.lanes)
    }

    /// Reflect mode: every queue's round trips in one histogram, and the
    /// number of probes that came back.
    pub fn latency(&self) -> Option<(latency::LatencyHistogram, u64)> {
        merged_latency(&self.lanes)
    }
}

pub(super) fn merged_shape(lanes: &[LaneResult]) -> pace::ShapeStats {
    let mut s = pace::ShapeStats::default();
    for l in lanes {
        s.merge(&l.outcome.shape);
    }
    s
}

pub(super) fn merged_latency(lanes: &[LaneResult]) -> Option<(latency::LatencyHistogram, u64)> {
    let mut h: Option<latency::LatencyHistogram> = None;
    let mut n = 0;
    for l in lanes {
        if let Some(lh) = &l.outcome.latency {
            n += l.outcome.reflected;
            latency::LatencyHistogram::merge_into(&mut h, lh);
        }
    }
    h.map(|h| (h, n))
}

/// One uninterrupted run of the lanes.
pub(super) struct Phase {
    pub(super) lanes: Vec<LaneResult>,
    pub(super) failure: Option<StepFailure>,
    pub(super) interrupted: bool,
    pub(super) seconds: f64,
}

impl Phase {
    pub(super) fn into_outcome(self, window: Option<SenderWindow>, failure: Option<StepFailure>) -> StepOutcome {
        StepOutcome { lanes: self.lanes, window, failure: self.failure.or(failure), interrupted: self.interrupted, seconds: self.seconds }
    }
}

