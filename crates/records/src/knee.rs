//! blast's record of a knee search: every trial, the NDR and PDR with what
//! bounds them and their qualifiers, and latency under load. blast writes
//! it; `blast report` reads it.

use knee::{Bound, Goal, Qualifiers, TrialKind};
use serde::{Deserialize, Serialize};

use crate::environment::Environments;
use crate::step::StepRecord;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Trial {
    pub kind: TrialKind,
    /// For a confirmation, the goal it confirms.
    pub goal: Option<Goal>,
    /// Whether the trial kept the NDR and PDR limits (loss, and the SLA when
    /// given), at the rate it counted at (`counted_at_mpps`).
    pub ndr_pass: bool,
    pub pdr_pass: bool,
    /// The sender delivered less than the offered rate beyond the tolerance
    /// (`result.delivery_tolerance_pct`): no pass at the offered rate.
    pub sender_short: bool,
    /// What the sender delivered, percent of the offered rate.
    pub delivered_pct: f64,
    /// The sender fell short of a rate it had delivered in an earlier
    /// trial: held back by the path, the receiver or the host (the trial's
    /// verdict says which), so the trial is a fail at the offered rate
    /// rather than the sender's cap.
    pub held_back: bool,
    /// The rate the trial's result counted at: the offered one, or what the
    /// sender delivered when it fell short; null when it delivered less than
    /// the search's floor (then it only capped the search).
    pub counted_at_mpps: Option<f64>,
    /// For a confirmation: whether it confirmed its goal.
    pub confirmed: Option<bool>,
    #[serde(flatten)]
    pub step: StepRecord,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadPoint {
    /// Share of the knee, percent.
    pub share_pct: u32,
    pub step: StepRecord,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KneeResult {
    /// Confirmed results: each the rate its confirming trial delivered.
    pub ndr_mpps: Option<f64>,
    pub pdr_mpps: Option<f64>,
    /// The knee: the PDR, which with --sla also kept the latency limit.
    pub knee_mpps: Option<f64>,
    pub committable_mpps: Option<f64>,
    /// What bounds each result: "path" (a trial above it failed: the knee),
    /// "held-back" (a trial above it fell short of a rate the sender had
    /// delivered before: the path, the receiver or the host held it back),
    /// "sender" (the sender delivered no more) or "top" (the top of the
    /// search passed); the last two make the result "at least".
    pub ndr_bounded_by: Option<Bound>,
    pub pdr_bounded_by: Option<Bound>,
    pub ndr_sender_limited: bool,
    pub pdr_sender_limited: bool,
    /// The knee (PDR) is a lower bound: the sender delivered no more, or its
    /// maximum passed. The path's knee is at least knee_mpps.
    pub sender_limited: bool,
    /// Each result as printed: "6.550 Mpps", "at least 6.550 Mpps: the
    /// sender delivered no more", "none found", "none confirmed: ...".
    pub ndr: String,
    pub pdr: String,
    /// The trial (1-based, in `trials`) that confirmed each result.
    pub ndr_confirmed_by: Option<usize>,
    pub pdr_confirmed_by: Option<usize>,
    /// The lowest offered rate the sender fell short of, if any.
    pub sender_cap_mpps: Option<f64>,
    /// How far short of the offered rate a trial may fall and still count at it, percent.
    pub delivery_tolerance_pct: f64,
    /// The verdict of the first trial above the knee that failed: what stops the path there.
    pub limit_above: Option<String>,
    pub sentence: Option<String>,
}

/// blast --json record of a knee search (mode = knee): every trial, the NDR
/// and PDR with their qualifiers, and latency under load (docs/json.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BlastKneeRecord")]
pub struct KneeBody {
    pub environment: Environments,
    pub qualifiers: Qualifiers,
    pub max_rate_mpps: f64,
    pub result: KneeResult,
    pub trials: Vec<Trial>,
    pub latency_under_load: Vec<LoadPoint>,
    /// With --back-to-back: the burst test, the NDR as its throughput.
    pub back_to_back: Option<crate::b2b::BackToBack>,
    pub interrupted: bool,
    /// Every trial's sent figures per interval (--interval), one series for
    /// the search, and what was found in it (rates step with the trials).
    pub series: Option<series::Series>,
    pub series_analysis: Option<series::Analysis>,
}

/// A knee search's whole record: blast writes it with its flags as given
/// (`C` = `AsGiven`), a reader reads the flags as JSON (the default).
pub type KneeRecord<C = serde_json::Value> = crate::Record<crate::Mode, crate::Config<C>, KneeBody>;
