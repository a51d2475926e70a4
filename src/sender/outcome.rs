//! What a step's lanes handed back: each lane's outcome, the step's, one
//! uninterrupted run of the lanes (a phase: the warm-up, or the trial), and
//! the sender's figures over a measured window.

use super::StepFailure;
use dpdk::PortStats;

use crate::counters::Tally;
use crate::figures::Rates;
use crate::tx::TxOutcome;
use crate::xstats::WindowXstats;

/// The sender's figures over a measured window.
#[derive(Debug, Clone, Default)]
pub struct SenderWindow {
    pub seconds: f64,
    pub total: Tally,
    pub per_queue: Vec<Tally>,
    pub port: PortStats,
    pub xstats: WindowXstats,
    /// With several ports: each port's own window (its queues, its
    /// counters); empty with one.
    pub ports: Vec<SenderWindow>,
    /// The shape achieved in the trial.
    pub shape: pace::ShapeStats,
    /// Reflect mode: round trips of the trial's probes, merged over queues.
    pub latency: Option<latency::LatencyHistogram>,
    pub reflected: u64,
    /// Reflect mode: probes that came back in the trial but were sent
    /// before it (the warm-up's, left in the ring through the drain): not timed.
    pub reflected_stale: u64,
    /// Where this sender's streams stood when the window opened and when
    /// it closed: the trial's frames are those between (None: too many
    /// streams to list, see seqtrack::MAX_EDGE_STREAMS).
    pub streams_at_start: Option<seqtrack::StreamEdge>,
    pub streams_at_end: Option<seqtrack::StreamEdge>,
    /// Every frame sent carried a probe numbered in its stream (false for a
    /// replay, whose frames without room for one are sent bare).
    pub all_probed: bool,
    /// The sending lanes' loops that stood still in the trial, and the
    /// share of this host's CPU time the hypervisor took over it.
    pub stalls: control::LaneStalls,
    pub host_steal_pct: Option<f64>,
    /// Paced: the share of the lanes' time spent inside tx_burst (see [`tx_wall_pct`]).
    pub tx_wall_pct: Option<f64>,
    /// Ports whose TX had not drained when the trial's counts were taken
    /// (`Sender::drain_tx`): frames counted as sent there may not have left.
    pub tx_undrained: Vec<String>,
    /// Sent on the kernel's UDP sockets (blast --socket): `port` holds what
    /// the sockets took, there being no port.
    pub on_sockets: bool,
    /// On sockets: the kernel's figures over the window.
    pub udp: Option<records::window::UdpSendWindow>,
}

impl SenderWindow {
    pub fn sent(&self) -> Rates {
        Rates::over(self.total.packets, self.total.bytes, self.seconds)
    }
}

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
    /// What the warm-up's lanes sent (None without a warm-up): it left the
    /// port too, outside the window (blast's /metrics counters include it).
    pub warmup_sent: Option<Rates>,
    /// Ports whose TX had not drained after the last phase (see `SenderWindow`).
    pub tx_undrained: Vec<String>,
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

/// The share of the lanes' time (each from its start to its end) spent
/// inside tx_burst calls, in percent; None where no lane timed them
/// (unpaced, or a replay).
pub fn tx_wall_pct(lanes: &[LaneResult]) -> Option<f64> {
    let inside: u64 = lanes.iter().map(|l| l.outcome.tally.tx_cycles).sum();
    let wall: u64 = lanes.iter().map(|l| l.outcome.end_tsc.saturating_sub(l.outcome.start_tsc)).sum();
    (inside > 0 && wall > 0).then(|| (inside as f64 / wall as f64 * 100.0).min(100.0))
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
    /// Ports whose TX had not drained when the lanes stopped.
    pub(super) tx_undrained: Vec<String>,
}

impl Phase {
    pub(super) fn into_outcome(self, window: Option<SenderWindow>, failure: Option<StepFailure>) -> StepOutcome {
        StepOutcome {
            lanes: self.lanes,
            window,
            failure: self.failure.or(failure),
            interrupted: self.interrupted,
            seconds: self.seconds,
            warmup_sent: None,
            tx_undrained: self.tx_undrained,
        }
    }

    /// What this phase's lanes sent, over its length.
    pub(super) fn sent(&self) -> Rates {
        let mut sent = crate::counters::Tally::default();
        self.lanes.iter().for_each(|l| sent.add(&l.outcome.tally));
        Rates::over(sent.packets, sent.bytes, self.seconds)
    }
}
