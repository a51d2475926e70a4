//! The ladder's record: the plan, every step with both ends' figures, each
//! step's series, the aggregates per (queues, size, traffic) and the
//! analysis (ceilings per size, the bandwidth crossover). blast writes it;
//! `blast report` reads it back.

use serde::{Deserialize, Serialize};

use crate::environment::Environments;
use crate::plan::Ladder;
use crate::step::{Aggregate, StepRecord};

/// Where adding queues stopped helping, for one frame size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ceiling {
    /// The ceiling was seen: a later step failed to add `threshold` of Mpps.
    /// False when every step grew: the ladder ended before any ceiling.
    pub reached: bool,
    pub queues: u16,
    pub mpps: f64,
    /// Every step up to the ceiling kept at least 90% of the first step's Mpps per queue.
    pub linear_before: bool,
    pub mpps_per_queue_first: f64,
}

/// What held one frame size back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SizeVerdict {
    pub size: u32,
    /// Best receiver Gb/s of frames over the size's steps.
    pub gbps: f64,
    /// "bandwidth" when within 3% of the published figure, "packet rate"
    /// below that, "above published" when more than 3% over it (the figure
    /// does not bound this port).
    pub held_by: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Crossover {
    pub published_gbps: f64,
    /// The smallest frame size that reached the published bandwidth (within
    /// 3%); none when a size carried more than 3% above it, since a figure
    /// the port exceeds is not its limit.
    pub first_size: Option<u32>,
    pub sizes: Vec<SizeVerdict>,
    /// A size carried more than 3% above the published bandwidth: it does
    /// not apply to this port (a software port such as memif, or the wrong
    /// --published-gbps), and no crossover is claimed.
    #[serde(default)]
    pub published_exceeded: bool,
}

/// Above this share of the published bandwidth a port is not bound by it.
pub const ABOVE_PUBLISHED: f64 = 1.03;

impl Crossover {
    /// Why the published figure does not apply, when a size exceeded it:
    /// "1518 B carried 310.72% of the published 1 Gb/s: that figure does not
    /// bound this port (a software port, or the wrong --published-gbps); no
    /// crossover is claimed".
    pub fn exceeded_note(&self) -> Option<String> {
        let most = self.sizes.iter().filter(|v| v.gbps > self.published_gbps * ABOVE_PUBLISHED).max_by(|a, b| a.gbps.total_cmp(&b.gbps))?;
        Some(format!(
            "{} B carried {:.2}% of the published {} Gb/s: that figure does not bound this port (a software port, or the wrong --published-gbps); no crossover is claimed",
            most.size,
            100.0 * most.gbps / self.published_gbps,
            self.published_gbps
        ))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SizeCeiling {
    pub size: u32,
    /// The traffic of the steps the ceiling is over (several rates or
    /// shapes: one ceiling per size at each).
    pub offered_mpps: Option<f64>,
    pub shape: String,
    pub ceiling: Ceiling,
    pub limit: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Analysis {
    /// Whether the figures analysed are the receiver's.
    pub receiver_side: bool,
    pub ceiling_threshold_pct: f64,
    pub ceilings: Vec<SizeCeiling>,
    pub crossover: Option<Crossover>,
}

/// blast --json record of a ladder (mode = ladder): configuration, both ends'
/// environments, the plan, every step with the sender's and (with --peer) the
/// receiver's figures over the same window, and the analysis (docs/json.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BlastLadderRecord")]
pub struct LadderBody {
    pub src_mac: String,
    pub environment: Environments,
    pub ladder: Ladder,
    pub interrupted: bool,
    pub steps: Vec<StepRecord>,
    /// Each step's sent figures per interval (--interval), warm-up and trial, as columns.
    pub step_series: Vec<StepSeries>,
    pub aggregates: Vec<Aggregate>,
    pub analysis: Analysis,
}

/// One step's figures over time and what was found in them.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepSeries {
    /// The step's index in the ladder (from 0), and its run (from 1, with --repeat).
    pub step: usize,
    pub run: u32,
    pub series: series::Series,
    pub analysis: series::Analysis,
}

impl PartialEq for StepSeries {
    /// The same step and run whose series writes the same columns (a series
    /// has no equality of its own: it is columns, not values).
    fn eq(&self, other: &StepSeries) -> bool {
        let columns = |s: &series::Series| serde_json::to_value(s).ok();
        (self.step, self.run, &self.analysis) == (other.step, other.run, &other.analysis) && columns(&self.series) == columns(&other.series)
    }
}

/// A ladder's whole record: blast writes it with its flags as given
/// (`C` = `AsGiven`), a reader reads the flags as JSON (the default).
pub type LadderRecord<C = serde_json::Value> = crate::Record<crate::Mode, crate::Config<C>, LadderBody>;
