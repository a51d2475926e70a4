use std::collections::BTreeMap;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{spread, Rates, Spread, StepFailure, StepStalls};
use crate::window::{MemberFigures, WindowFigures};

/// One step as measured: both ends' figures over the same window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    /// Index in the ladder, from 0.
    pub step: usize,
    /// Which repetition, from 1.
    pub run: u32,
    pub queues: u16,
    /// Frame size, FCS included.
    pub size: u32,
    /// With a size mix: its label ("imix", "64:7,594:4,1518:1"); `size` is then its mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_mix: Option<String>,
    pub flows: u32,
    pub mtu: u32,
    /// How frames left the sender: "open" (unpaced) or "burst:B" (paced, B back-to-back).
    pub shape: String,
    /// The paced rate asked for, in Mpps.
    pub offered_mpps: Option<f64>,
    /// Sender-side: frames accepted by tx_burst during the window (drained
    /// before it closed: on af_packet, frames that left). A failed step
    /// (`error` set) keeps what the sender sent before it failed.
    pub sent: Rates,
    /// Sender-side: frames accepted by tx_burst in the step's warm-up,
    /// before the window (not measured; blast's /metrics frame counters
    /// include them). Absent without a warm-up, or where the step failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_sent: Option<Rates>,
    /// Ports whose TX had not drained when the window closed (af_packet
    /// behind a qdisc slower than its ring): `sent` there may count frames
    /// that never left. Empty (absent) when every port drained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tx_undrained: Vec<String>,
    /// The sender's busy core cycles per frame (null when the core's clock is unknown: on arm64 the
    /// lanes' counter is a platform timer, turned into cycles only with a known core frequency).
    pub sender_cycles_per_packet: Option<f64>,
    /// The sender's busy nanoseconds per frame.
    #[serde(default)]
    pub sender_ns_per_packet: f64,
    pub ring_full_retries: u64,
    /// The sender port's own counters over the window.
    pub sender_opackets: u64,
    pub sender_oerrors: u64,
    /// Watched counter deltas on the sender (allowances, --watch-xstat).
    pub sender_xstats: BTreeMap<String, u64>,
    /// Levels on the sender at the window's end (conntrack_allowance_available).
    pub sender_levels: BTreeMap<String, u64>,
    /// blast on the kernel's UDP sockets: its sockets' kernel figures over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_udp: Option<crate::window::UdpSendWindow>,
    /// Receiver-side: frames that arrived during the window (None without `--peer`).
    pub received: Option<Rates>,
    /// drop's full figures for the window.
    pub receiver: Option<WindowFigures>,
    /// Frames the sender's tx_burst accepted that did not arrive, as a share
    /// of them: from the exact per-stream account (`lost`) where drop gave
    /// one, else from the frame counts (drop's count then includes frames
    /// that are not the trial's).
    pub loss_pct: Option<f64>,
    /// The trial's frames lost: `sent - received` per stream from the
    /// sender's sequence numbers and drop's count of the trial's own frames,
    /// exact (None where drop gave no per-stream account: `receiver.trial_unavailable` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u64>,
    /// Set when the step's counts do not add up (`received + lost = sent`
    /// fails for a stream, or the sender's count differs from its sequence
    /// numbers): the figures as counted, and why they cannot all be true.
    /// The verdict is then unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting_error: Option<String>,
    /// The verdict with its evidence, the limit accounting for most frames
    /// first (None: the step was not judged). Written as two fields,
    /// `limit` (its label: [`StepRecord::limit`]) and `verdict`.
    #[serde(flatten, serialize_with = "step_limit::serialize", deserialize_with = "verdict_only")]
    #[schemars(with = "LimitFields")]
    pub verdict: Option<limits::Verdict>,
    /// The shape the sender achieved, measured from its send times.
    pub achieved_shape: Option<AchievedShape>,
    /// An even or Poisson shape whose frames went out bunched (the lanes
    /// fell behind their schedule and caught up), and what held them back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape_bunched: Option<String>,
    /// --reflect: round-trip latency of the trial's probes, and how many came back.
    pub latency: Option<latency::LatencySummary>,
    /// The clock `latency` was read on (`sender_round_trip`: both stamps from the sender's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_clock: Option<latency::LatencyClock>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_histogram: Vec<latency::Bucket>,
    pub reflected: Option<u64>,
    /// --reflect: probes that came back in the trial but had been sent
    /// before it (a warm-up's, left in a ring through the drain): not
    /// samples of this step, so not in its latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reflected_stale: Option<u64>,
    /// Lanes that stood still in the trial on either end (descheduled by
    /// their host), and the hosts' steal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<StepStalls>,
    /// --reflect with a tail of a millisecond or more: whether a stall
    /// explains it (the host's) or not (the path's), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_cause: Option<String>,
    /// The step ran twice: its first attempt found the path broken (the
    /// two ends not joined through), with this evidence; the figures are
    /// the second attempt's, after the sender's port started again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_attempt: Option<String>,
    /// The step could not be measured, and why.
    pub error: Option<StepFailure>,
    /// --cross-check: the step measured again at once with the C lanes
    /// (blast-ref's loop) on the same queues, and whose ceiling it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_check: Option<super::CrossCheck>,
    /// With several ports: each port's share of the step (the totals above
    /// are their sums); empty with one port.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortStep>,
    /// A group trial (blast --group): every member's sending and this
    /// sender's place. `sent`, `received`, `loss_pct` and the verdict are
    /// then the group's: what all members sent, drop's counts against it,
    /// and the verdict from drop's own counters (receiver-side); the
    /// sender_* fields stay this member's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<GroupStep>,
}

/// A step of a group trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupStep {
    pub name: String,
    pub senders: u16,
    /// This sender's index in the group.
    pub member: u16,
    /// What this member sent over the trial.
    pub own_sent: Rates,
    pub members: Vec<MemberFigures>,
}

/// One port's share of a step, when blast sends on several: sender port i
/// is paired with drop's port i.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PortStep {
    /// Index in --port order.
    pub port: u16,
    pub name: String,
    /// Queues of the step on this port.
    pub queues: u16,
    /// Sender-side: frames this port's queues had accepted, over the whole trial's length.
    pub sent: Rates,
    pub sender_opackets: u64,
    pub sender_oerrors: u64,
    pub sender_xstats: BTreeMap<String, u64>,
    /// Receiver-side: what arrived on drop's port of the same index.
    pub received: Option<Rates>,
    pub receiver_port: Option<String>,
    pub receiver_imissed: Option<u64>,
    pub loss_pct: Option<f64>,
    /// Its own verdict (None: no queue of the step ran on it). Written as
    /// `limit` (its label: [`PortStep::limit`], `idle` without one) and `verdict`.
    #[serde(flatten, serialize_with = "port_limit::serialize", deserialize_with = "verdict_only")]
    #[schemars(with = "LimitFields")]
    pub verdict: Option<limits::Verdict>,
}

/// What the sender really did, per call to tx_burst with new frames (a
/// queue's gaps are those between its own sends; several queues' sends
/// interleave on the wire).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AchievedShape {
    pub sends: u64,
    pub frames_per_send: f64,
    pub max_frames_per_send: u32,
    /// Mean and median gap between one queue's sends, in microseconds.
    pub mean_gap_us: f64,
    pub median_gap_us: f64,
    /// How much those gaps vary, (P90 - P10) / P50: about 0 for even or
    /// burst pacing, about 3.2 for Poisson; robust to a rare long gap.
    pub gap_spread: f64,
    /// Frames sent over the trial's length, all queues.
    pub achieved_mpps: f64,
}

/// The label of a verdict, or `none_label` when there is none.
fn label_of(verdict: Option<&limits::Verdict>, none_label: &str) -> String {
    verdict.map_or_else(|| none_label.to_string(), limits::Verdict::label)
}

/// Writes a verdict as the record's `limit` (its label, derived) and
/// `verdict` fields; `none_label` is the label when there is no verdict.
fn limit_and_verdict<S: Serializer>(verdict: &Option<limits::Verdict>, none_label: &str, s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_struct("Judged", 2)?;
    m.serialize_field("limit", &label_of(verdict.as_ref(), none_label))?;
    m.serialize_field("verdict", verdict)?;
    m.end()
}

mod step_limit {
    pub(super) fn serialize<S: serde::Serializer>(v: &Option<limits::Verdict>, s: S) -> Result<S::Ok, S::Error> {
        super::limit_and_verdict(v, super::StepRecord::NOT_JUDGED, s)
    }
}

mod port_limit {
    pub(super) fn serialize<S: serde::Serializer>(v: &Option<limits::Verdict>, s: S) -> Result<S::Ok, S::Error> {
        super::limit_and_verdict(v, super::PortStep::IDLE, s)
    }
}

/// Reads `verdict` back; `limit` is derived from it, so it is not read.
fn verdict_only<'de, D: Deserializer<'de>>(d: D) -> Result<Option<limits::Verdict>, D::Error> {
    #[derive(Deserialize)]
    struct Judged {
        #[serde(default)]
        verdict: Option<limits::Verdict>,
    }
    Ok(Judged::deserialize(d)?.verdict)
}

impl PortStep {
    /// The label of a port that ran no queue of the step.
    pub const IDLE: &'static str = "idle";

    /// What held this port back: its verdict's label, `idle` without one.
    pub fn limit(&self) -> String {
        label_of(self.verdict.as_ref(), Self::IDLE)
    }
}

impl StepRecord {
    /// The label of a step that has no verdict (it failed, or was interrupted).
    pub const NOT_JUDGED: &'static str = "n/a";

    /// Why this step stopped where it did: the verdict's label ("n/a" without one).
    pub fn limit(&self) -> String {
        label_of(self.verdict.as_ref(), Self::NOT_JUDGED)
    }

    /// What the step's verdict is grouped and coloured by.
    pub fn class(&self) -> limits::VerdictClass {
        limits::VerdictClass::of(self.verdict.as_ref())
    }

    /// The figure the analysis uses: receiver Mpps when there is one.
    pub fn headline_mpps(&self) -> f64 {
        self.received.map_or(self.sent.mpps, |r| r.mpps)
    }

    pub fn headline_frame_gbps(&self) -> f64 {
        self.received.map_or(self.sent.frame_gbps, |r| r.frame_gbps)
    }

    pub fn mpps_per_queue(&self) -> f64 {
        self.headline_mpps() / f64::from(self.queues.max(1))
    }

    /// Whether `o` is a run of the same step: queues, size and traffic.
    pub fn same_step(&self, o: &StepRecord) -> bool {
        self.same_traffic(o) && self.queues == o.queues && self.size == o.size
    }

    /// Whether `o` was offered the same rate in the same shape.
    pub fn same_traffic(&self, o: &StepRecord) -> bool {
        self.offered_mpps == o.offered_mpps && self.shape == o.shape
    }

    /// Loss from the two ends' counts: negative values (frames in flight
    /// across the window's edges) are shown as 0.
    pub fn loss_from(sent: u64, received: u64) -> f64 {
        if sent == 0 {
            return 0.0;
        }
        ((sent as f64 - received as f64) / sent as f64 * 100.0).max(0.0)
    }
}

/// The repetitions of one step, as min / median / max.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Aggregate {
    pub queues: u16,
    pub size: u32,
    /// The step's traffic: paced rate (None: unpaced) and arrival shape.
    pub offered_mpps: Option<f64>,
    pub shape: String,
    pub runs: u32,
    /// Receiver Mpps (sender Mpps without a receiver).
    pub mpps: Spread,
    pub frame_gbps: Spread,
    pub wire_gbps: Spread,
    pub sent_mpps: Spread,
    /// The runs' verdict label when they agree, else "mixed".
    pub limit: String,
    /// The runs' verdict class when they agree, else Mixed (what charts colour by).
    #[serde(skip)]
    #[schemars(skip)]
    pub class: limits::VerdictClass,
}

impl Aggregate {
    /// Whether `o` was offered the same rate in the same shape.
    pub fn same_traffic(&self, o: &Aggregate) -> bool {
        self.offered_mpps == o.offered_mpps && self.shape == o.shape
    }

    /// Groups records by step (queues, size, rate, shape), in the order
    /// the steps first ran.
    pub fn from_records(records: &[StepRecord]) -> Vec<Aggregate> {
        let mut keys: Vec<&StepRecord> = Vec::new();
        for r in records.iter().filter(|r| r.error.is_none()) {
            if !keys.iter().any(|k| k.same_step(r)) {
                keys.push(r);
            }
        }
        keys.into_iter()
            .map(|k| {
                let rs: Vec<&StepRecord> = records.iter().filter(|r| r.error.is_none() && r.same_step(k)).collect();
                let take = |f: &dyn Fn(&StepRecord) -> f64| spread(&rs.iter().map(|r| f(r)).collect::<Vec<_>>());
                Aggregate {
                    queues: k.queues,
                    size: k.size,
                    offered_mpps: k.offered_mpps,
                    shape: k.shape.clone(),
                    runs: rs.len() as u32,
                    mpps: take(&|r| r.headline_mpps()),
                    frame_gbps: take(&|r| r.headline_frame_gbps()),
                    wire_gbps: take(&|r| r.received.map_or(r.sent.wire_gbps, |x| x.wire_gbps)),
                    sent_mpps: take(&|r| r.sent.mpps),
                    limit: match rs.iter().map(|r| r.limit()).collect::<Vec<_>>() {
                        l if l.windows(2).all(|w| w[0] == w[1]) => l.into_iter().next().unwrap_or_default(),
                        _ => "mixed".into(),
                    },
                    class: limits::VerdictClass::agreed(rs.iter().map(|r| r.class())),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(q: u16, size: u32, run: u32, mpps: f64) -> StepRecord {
        StepRecord {
            queues: q,
            size,
            run,
            sent: Rates::over((mpps * 1e6) as u64 + 10, 0, 1.0),
            received: Some(Rates::over((mpps * 1e6) as u64, (mpps * 1e6) as u64 * u64::from(size), 1.0)),
            ..Default::default()
        }
    }

    #[test]
    fn loss_is_never_negative() {
        assert_eq!(StepRecord::loss_from(100, 90), 10.0);
        assert_eq!(StepRecord::loss_from(100, 101), 0.0);
        assert_eq!(StepRecord::loss_from(0, 0), 0.0);
    }

    #[test]
    fn headline_is_the_receivers() {
        let r = rec(2, 64, 1, 3.0);
        assert!((r.headline_mpps() - 3.0).abs() < 1e-9);
        assert!((r.mpps_per_queue() - 1.5).abs() < 1e-9);
        let sender_only = StepRecord { received: None, ..r };
        assert!(sender_only.headline_mpps() > 3.0);
    }

    #[test]
    fn limit_is_the_verdicts_label_and_written_where_it_was() {
        let mut r = rec(1, 64, 1, 1.0);
        assert_eq!(r.limit(), "n/a");
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""loss_pct":null,"limit":"n/a","verdict":null,"achieved_shape""#), "{json}");
        let quiet = limits::WindowCounters { offered: Some(10), accepted: 10, received: Some(10), ..Default::default() };
        r.verdict = Some(limits::verdict(&quiet));
        assert_eq!(r.limit(), "none");
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""limit":"none","verdict":{"limits":[{"kind":"none""#), "{json}");
        let back: StepRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        let idle = PortStep::default();
        assert_eq!(idle.limit(), "idle");
        let json = serde_json::to_string(&idle).unwrap();
        assert!(json.contains(r#""loss_pct":null,"limit":"idle","verdict":null}"#), "{json}");
        assert_eq!(serde_json::from_str::<PortStep>(&json).unwrap(), idle);
    }

    #[test]
    fn steps_at_other_rates_or_shapes_aggregate_apart() {
        let at = |rate: f64, shape: &str, run: u32| StepRecord { offered_mpps: Some(rate), shape: shape.into(), ..rec(1, 64, run, 1.0) };
        let recs = vec![at(0.1, "even", 1), at(0.1, "burst:8", 1), at(0.1, "even", 2), at(0.3, "even", 1)];
        let a = Aggregate::from_records(&recs);
        let keys: Vec<(Option<f64>, &str, u32)> = a.iter().map(|a| (a.offered_mpps, a.shape.as_str(), a.runs)).collect();
        assert_eq!(keys, [(Some(0.1), "even", 2), (Some(0.1), "burst:8", 1), (Some(0.3), "even", 1)]);
    }

    #[test]
    fn repeats_aggregate_per_step() {
        let recs = vec![rec(1, 64, 1, 1.0), rec(1, 64, 2, 3.0), rec(1, 64, 3, 2.0), rec(2, 64, 1, 4.0)];
        let a = Aggregate::from_records(&recs);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].runs, 3);
        assert!((a[0].mpps.median - 2.0).abs() < 1e-6 && (a[0].mpps.min - 1.0).abs() < 1e-6 && (a[0].mpps.max - 3.0).abs() < 1e-6);
        assert_eq!((a[1].queues, a[1].runs), (2, 1));
    }
}

/// How a step's or a port's verdict is written: its label and the verdict.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // describes the JSON only
struct LimitFields {
    /// The verdict's label ("none", "sender", "pps-allowance (sender) + receiver", "n/a" for a failed step, "idle" for a port no queue ran on).
    limit: String,
    verdict: Option<limits::Verdict>,
}
