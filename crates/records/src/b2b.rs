//! The back-to-back frame test's part of a knee or RFC 9971 search record
//! (RFC 2544 section 26.4, RFC 9004): every burst, and what they come to.

use serde::{Deserialize, Serialize};

use crate::step::StepRecord;

/// One burst: which repetition's search it was, its length and what it lost.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Burst {
    /// 1-based.
    pub repetition: u32,
    pub frames: u64,
    /// Of them, frames drop's RX lanes did not count (exact).
    pub lost: u64,
    pub step: StepRecord,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BackToBack {
    /// Independent searches, each a whole search from the first burst.
    pub repetitions: u32,
    /// The first burst, the longest tried, and the search's resolution (a share of the longest that passed).
    pub first_frames: u64,
    pub limit_frames: u64,
    pub resolution: f64,
    /// Where the maximum rate and the throughput come from.
    pub max_rate_from: String,
    pub throughput_from: String,
    pub summary: b2b::Summary,
    pub bursts: Vec<Burst>,
    /// Where this test deviates from RFC 9004, and why.
    pub deviations: Vec<String>,
    /// As printed.
    pub text: String,
}
