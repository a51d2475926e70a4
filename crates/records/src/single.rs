//! blast's record of a single step: the sender-side summary with each
//! port, queue and stream, the shape achieved, stalls and round trips.
//! blast writes it; `blast report` reads it.

use serde::{Deserialize, Serialize};
use wire::MacAddr;

use crate::environment::Environment;
use crate::figures::PerPacket;
use crate::step::{AchievedShape, PortStep, Rates};
use crate::window::LaneStalls;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueSummary {
    pub queue: u16,
    /// Index of its port in --port order.
    pub port: u16,
    pub lcore: u32,
    pub sent: Rates,
    #[serde(flatten)]
    pub busy: PerPacket,
    pub ring_full_retries: u64,
    pub alloc_failures: u64,
    pub unsent: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamSummary {
    pub id: u16,
    pub queue: u16,
    pub src_port: u16,
    pub sent: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PortCounters {
    pub opackets: u64,
    pub obytes: u64,
    pub oerrors: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub side: String,
    pub interrupted: bool,
    /// Frames accepted by tx_burst over the send window.
    pub sent: Rates,
    pub offered_mpps: Option<f64>,
    #[serde(flatten)]
    pub busy: PerPacket,
    pub ring_full_retries: u64,
    pub alloc_failures: u64,
    pub unsent: u64,
    /// Ports whose TX had not drained when the run ended: `sent` there may
    /// count frames that never left (af_packet behind a slow qdisc).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tx_undrained: Vec<String>,
    pub probe: bool,
    /// What held the run back, from the sender's counters alone (no receiver).
    pub limit: String,
    pub verdict: limits::Verdict,
    pub port: PortCounters,
    pub queues: Vec<QueueSummary>,
    pub streams: Vec<StreamSummary>,
    /// The arrival shape asked for, and the one achieved (from the send times).
    pub shape: String,
    pub achieved_shape: AchievedShape,
    /// An even or Poisson shape whose frames went out bunched (the lanes
    /// fell behind their schedule and caught up), and what held them back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape_bunched: Option<String>,
    /// Lanes that stood still in the run (their loop's TSC reads more than 1 ms apart).
    pub stalls: LaneStalls,
    /// The share of the host's CPU time the hypervisor took during the run (/proc/stat).
    pub host_steal_pct: Option<f64>,
    /// --reflect: round trips of the probes that came back.
    pub latency: Option<latency::LatencySummary>,
    /// The clock `latency` was read on (`sender_round_trip`: both stamps from the sender's clock).
    pub latency_clock: Option<latency::LatencyClock>,
    pub reflected: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_histogram: Vec<latency::Bucket>,
    /// With several --port: each port's share and verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortStep>,
}

/// blast --json record of a single step (mode = single): sender-side figures
/// and the sender-side verdict (docs/json.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BlastSingleRecord")]
pub struct SingleBody {
    pub flows: u32,
    pub src_mac: MacAddr,
    pub environment: Environment,
    pub summary: Summary,
    /// The run's figures per interval (--interval), as columns: sent-side.
    pub series: Option<series::Series>,
    /// Where the sent rate moved and held, allowance counters' onsets, and a
    /// credit bucket when the rate fell to a baseline and held it.
    pub series_analysis: Option<series::Analysis>,
    /// --cross-check: the run again at once with the C lanes (blast-ref's
    /// loop) on the same queues, sender-side, and whose ceiling it is.
    /// Both windows are written as steps: `cross_check.c_lanes` the C
    /// lanes', compared with this run's summary in the same terms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_check: Option<crate::step::CrossCheck>,
}

/// A single step's whole record: blast writes it with its flags as given
/// (`C` = `AsGiven`), a reader reads the flags as JSON (the default).
pub type SingleRecord<C = serde_json::Value> = crate::Record<crate::Mode, crate::Config<C>, SingleBody>;
