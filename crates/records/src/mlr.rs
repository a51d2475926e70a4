//! blast's record of an RFC 9971 (MLRsearch) search, `--search mlr`: each
//! Search Goal with its attributes and results in the RFC's terms, every
//! trial with the load it counted at and what counted its frames, each
//! load's class per goal, and the statements the RFC asks a report to make.

use knee::Qualifiers;
use mlr::search::{Ended, Reason};
use mlr::{Class, Goal, Irregular};
use serde::{Deserialize, Serialize};

use crate::environment::Environments;
use crate::knee::LoadPoint;
use crate::step::StepRecord;

/// One trial as the search counted it, with the step it was.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MlrTrial {
    /// The load asked for, frames per second (whole), over all the sender's queues.
    pub intended_load: f64,
    /// The load the trial counts at: the intended one, or what the sender
    /// carried when it fell short by more than `delivery_tolerance_pct`.
    pub load: f64,
    /// It fell short of a load an earlier trial carried: held back by the
    /// path, the receiver or the host (its verdict says which), counted at
    /// what it carried; the top of the search is not lowered.
    pub held_back: bool,
    /// Trial Duration asked for, seconds.
    pub intended_duration: f64,
    /// Trial Effective Duration, seconds: the measured window's length
    /// (what the duration sums add up).
    pub effective_duration: f64,
    /// Frames the sender's TX lanes put on the wire in the window.
    pub offered: u64,
    /// Of them, frames drop's RX lanes did not receive (exact, per stream).
    pub lost: u64,
    /// Trial Loss Ratio: lost / offered.
    pub loss_ratio: f64,
    /// The goal whose target chose this trial, that target's level (0: the
    /// goal's own attributes; higher: a coarser, shorter one) and why.
    pub for_goal: String,
    pub target_level: u32,
    pub reason: Reason,
    pub step: StepRecord,
}

/// A load's class for one goal, and the duration sums it is decided from.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadClass {
    /// Frames per second.
    pub load: f64,
    pub class: Class,
    /// Seconds of full-length trials that kept the goal's loss ratio, and that did not.
    pub good_long: f64,
    pub bad_long: f64,
    /// The same for shorter trials.
    pub good_short: f64,
    pub bad_short: f64,
}

/// One Search Goal: its attributes and its Goal Result.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MlrGoalResult {
    pub goal: Goal,
    /// Relevant Lower Bound, Relevant Upper Bound and Conditional
    /// Throughput, frames per second (null: the result has none).
    pub relevant_lower_bound: Option<f64>,
    pub relevant_upper_bound: Option<f64>,
    pub conditional_throughput: Option<f64>,
    /// Set when the result is irregular: no lower bound (even the lowest
    /// load failed), no upper bound (the top of the search passed: the
    /// throughput is at least the lower bound), or neither.
    pub irregular: Option<Irregular>,
    /// The relevant bounds are within the goal's width.
    pub within_width: bool,
    /// Every load tried, rising.
    pub loads: Vec<LoadClass>,
    /// The result as printed.
    pub text: String,
}

/// What the RFC asks a report to state beside the results (section 6).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Statements {
    /// The units of loads, durations and ratios.
    pub units: String,
    /// Which interfaces' counters give the offered and the lost frames.
    pub frames_counted: String,
    /// Where this search deviates from RFC 9971 and RFC 2544, and why.
    pub deviations: Vec<String>,
}

/// blast --json record of an RFC 9971 search (mode = mlr; docs/methodology.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BlastMlrRecord")]
pub struct MlrBody {
    pub environment: Environments,
    pub qualifiers: Qualifiers,
    /// The Max Load and Min Load of the search, frames per second.
    pub max_load: f64,
    pub min_load: f64,
    /// The top of the search at its end: lower than max_load when a trial
    /// the sender fell short on capped it.
    pub top_load: f64,
    /// Coarser targets before each goal's own.
    pub preceding_targets: u32,
    /// How far short of the intended load a trial may fall and still count at it, percent.
    pub delivery_tolerance_pct: f64,
    pub goals: Vec<MlrGoalResult>,
    pub trials: Vec<MlrTrial>,
    /// How the search ended (null: interrupted, or a trial failed: `failure`).
    pub ended: Option<Ended>,
    pub failure: Option<String>,
    pub interrupted: bool,
    pub statements: Statements,
    /// Latency at fixed shares of the last goal's conditional throughput
    /// (0%: probes only), with --reflect.
    pub latency_under_load: Vec<LoadPoint>,
    /// The committable sentence: the conditional throughput with its goal.
    pub sentence: Option<String>,
    /// With --back-to-back: the burst test, the first zero-loss goal's
    /// conditional throughput as its throughput.
    pub back_to_back: Option<crate::b2b::BackToBack>,
    /// Every trial's sent figures per interval (--interval), one series for
    /// the search, and what was found in it.
    pub series: Option<series::Series>,
    pub series_analysis: Option<series::Analysis>,
}

/// A search's whole record.
pub type MlrRecord<C = serde_json::Value> = crate::Record<crate::Mode, crate::Config<C>, MlrBody>;
