//! What a TX lane hands back when it ends, whichever kind it is (frames
//! built from templates, or a capture replayed), and the byte count both
//! kinds keep of frames of several lengths.

use dpdk::{Burst, RxQueue};
use latency::LatencyHistogram;
use pace::ShapeStats;

use crate::counters::Tally;

/// What a send loop reports when it ends.
#[derive(Default)]
pub struct TxOutcome {
    pub tally: Tally,
    /// Frames built but never accepted by the device (freed at stop).
    pub unsent: u64,
    /// Frames accepted per stream, in the lane's stream order.
    pub per_stream: Vec<u64>,
    /// The sequence number each stream continues from next time: frames
    /// built but never accepted do not use one up.
    pub next_seqs: Vec<u32>,
    /// Cycle counter when the loop started and ended.
    pub start_tsc: u64,
    pub end_tsc: u64,
    /// The shape achieved: frames per send and the gaps between sends.
    pub shape: ShapeStats,
    /// Reflect mode: the RX queue back, the round trips, and how many
    /// frames came back with (and without) a probe.
    pub rx_queue: Option<RxQueue>,
    pub latency: Option<LatencyHistogram>,
    pub reflected: u64,
    pub reflected_unprobed: u64,
    /// Probes that came back but were sent before this lane started (not timed).
    pub reflected_stale: u64,
    /// A replay lane: how closely it kept the capture's timing.
    pub replay: Option<ReplayTiming>,
    /// The longest time the lane's loop stood still (ticks; see
    /// counters::StallWatch); their count and sum are in the tally.
    pub longest_stall: u64,
}

/// How closely one queue (or, merged, the run) kept the capture's timing.
#[derive(Debug, Clone, Default)]
pub struct ReplayTiming {
    /// |gap as sent - gap asked for|, per frame after a queue's first.
    pub gap_error: LatencyHistogram,
    /// How late each frame left after its time.
    pub lateness: LatencyHistogram,
    /// Frames whose time had come when the lane ended (what a perfect
    /// sender would have sent by then).
    pub due: u64,
    /// Frames sent with a probe, and without (no room for one).
    pub stamped: u64,
    pub unstamped: u64,
}

impl ReplayTiming {
    pub fn merge(&mut self, o: &ReplayTiming) {
        self.gap_error.merge(&o.gap_error);
        self.lateness.merge(&o.lateness);
        self.due += o.due;
        self.stamped += o.stamped;
        self.unstamped += o.unstamped;
    }
}

/// Bytes (FCS included) of the frames a queue just took from a burst of
/// frames of several lengths: `pending` (what was built and not yet taken)
/// less what is still in the burst, which becomes the new `pending`.
#[inline(always)]
pub(crate) fn bytes_taken(pkts: &Burst, pending: &mut u64) -> u64 {
    let left = if pkts.is_empty() { 0 } else { pkts.bytes() + (pkts.len() * wire::FCS_LEN) as u64 };
    std::mem::replace(pending, left) - left
}
