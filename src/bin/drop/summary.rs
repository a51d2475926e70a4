//! drop's final figures: the summary it prints and records, built from the
//! receiver's totals, with the receiver-side verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use blastdrop::figures::{PerPacket, Rates};
use blastdrop::receiver::Totals;
use blastdrop::signals;
use dpdk::PortStats;
use seqtrack::SeqCounts;

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct QueueSummary {
    pub(crate) queue: u16,
    /// Index of its port in --port order.
    pub(crate) port: u16,
    pub(crate) lcore: u32,
    pub(crate) received: Rates,
    #[serde(flatten)]
    pub(crate) busy: PerPacket,
    pub(crate) no_probe: u64,
    pub(crate) probe: SeqCounts,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct StreamSummary {
    pub(crate) id: u16,
    pub(crate) queue: u16,
    #[serde(flatten)]
    pub(crate) counts: SeqCounts,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Summary {
    pub(crate) side: &'static str,
    pub(crate) interrupted: bool,
    /// Over the window from the first frame's burst to the last's.
    pub(crate) received: Rates,
    #[serde(flatten)]
    pub(crate) busy: PerPacket,
    /// Frames with no blastdrop probe header.
    pub(crate) no_probe: u64,
    /// Probe frames whose stream id was beyond --streams.
    pub(crate) untracked: u64,
    /// Summed over streams. `lost_estimate` counts gaps behind the newest frame of each stream: an estimate (a standalone drop has no sender counts; the exact loss is in a measured window's `trial`).
    pub(crate) probe: SeqCounts,
    /// Streams seen on more than one queue (their sequence accounting is split).
    pub(crate) split_streams: u32,
    pub(crate) port: PortStats,
    /// The device's counters went backwards before the end (memif resets
    /// them when its peer leaves): `port` holds the last read before that.
    pub(crate) port_counters_reset: bool,
    pub(crate) queues: Vec<QueueSummary>,
    pub(crate) streams: Vec<StreamSummary>,
    pub(crate) arrivals: Arrivals,
    /// Probe frames received by size, FCS included (not counted with
    /// --count-only), and those of sizes beyond what a lane counts apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) sizes: Vec<control::FrameSize>,
    #[serde(skip_serializing_if = "control::is_zero")]
    pub(crate) sizes_other: u64,
    /// --reflect: frames the TX queues would not take back.
    pub(crate) reflect_drops: u64,
    /// --one-way: latency from the sender's stamp to arrival, by the two hosts' wall clocks
    /// (the arrival read where `clock` says).
    pub(crate) one_way: Option<OneWay>,
    /// With several --port: each port's share (its queues; its device counters).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) ports: Vec<PortSummary>,
    /// What held the received figure where it is, from what drop sees alone
    /// (its port's drop counters, allowances, watched counters, its lanes'
    /// busy time, the probes' sequence numbers): docs/limits.md.
    pub(crate) limit: String,
    pub(crate) verdict: limits::Verdict,
    /// Bursts that faulted because a memif peer left under them (caught).
    pub(crate) faults: u64,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct PortSummary {
    /// Index in --port order.
    pub(crate) port: u16,
    pub(crate) name: String,
    /// Frames its queues took, over its own first to last arrival.
    pub(crate) received: Rates,
    pub(crate) probe: SeqCounts,
    /// The device's own counters over the run (as read at the end).
    pub(crate) device: PortStats,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct OneWay {
    /// Where each arrival was read: `host_poll` (this host's CLOCK_REALTIME at the poll, the RX
    /// ring's wait included), `nic_kernel` (the kernel's receive timestamp, CLOCK_REALTIME) or
    /// `nic_device` (the NIC's receive timestamp mapped onto CLOCK_REALTIME). The sender's stamp is
    /// its CLOCK_REALTIME: the figure depends on both hosts' clocks agreeing.
    pub(crate) clock: latency::LatencyClock,
    /// The same, in words.
    pub(crate) arrival: &'static str,
    /// --arrival-clock auto took the host's clock: why not the NIC's.
    pub(crate) fallback: Option<String>,
    /// Probes not timed: no NIC timestamp on the frame, or one that came before the device
    /// clock's first calibration window closed (each lane's first 10 ms).
    pub(crate) untimed: u64,
    /// This host's kernel on its clock (adjtimex): synchronised or not, and its maximum error.
    pub(crate) sync: Option<blastdrop::clock::ClockSync>,
    pub(crate) latency: latency::LatencySummary,
    /// Probes that arrived before they were sent, by the clocks: they disagree.
    pub(crate) negative: u64,
    pub(crate) histogram: Vec<latency::Bucket>,
}

/// How bursty the arrivals were (receiver-side).
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Arrivals {
    /// Polls by frames returned: "0", "1", "2-3", "4-7", ... "512".
    pub(crate) polls_by_frames: BTreeMap<String, u64>,
    /// Polls that came back with a full burst: frames were waiting beyond one poll.
    pub(crate) full_polls: u64,
    /// The most frames taken in one run of polls that each followed a full one.
    pub(crate) max_backlog_frames: u64,
    /// Arrivals per interval (null when off).
    pub(crate) interval_us: Option<u64>,
    pub(crate) peak_per_interval: Option<u64>,
    pub(crate) mean_per_interval: Option<f64>,
    pub(crate) peak_to_mean: Option<f64>,
}

pub(crate) fn summarize(t: &Totals, hz: u64, port: PortStats, port_counters_reset: bool) -> Summary {
    let window = |a: Option<u64>, b: Option<u64>| arrival_window(a, b, hz);
    Summary {
        side: "receiver",
        interrupted: signals::interrupted(),
        received: Rates::over(t.tally.packets, t.tally.bytes, window(t.first_tsc, t.last_tsc)),
        busy: PerPacket::of(t.tally.busy_cycles, t.tally.packets),
        no_probe: t.tally.no_probe,
        untracked: t.untracked,
        probe: t.probe,
        split_streams: t.split_streams(),
        port,
        port_counters_reset,
        queues: t
            .queues
            .iter()
            .map(|(&q, x)| QueueSummary {
                queue: q,
                port: x.port,
                lcore: x.lcore,
                received: Rates::over(x.tally.packets, x.tally.bytes, window(x.first_tsc, x.last_tsc)),
                busy: PerPacket::of(x.tally.busy_cycles, x.tally.packets),
                no_probe: x.tally.no_probe,
                probe: x.probe,
            })
            .collect(),
        streams: t.streams.iter().map(|(&(id, queue), c)| StreamSummary { id, queue, counts: *c }).collect(),
        arrivals: arrivals(&t.burstiness, hz),
        sizes: control::FrameSize::list(&t.sizes),
        sizes_other: t.sizes_other,
        reflect_drops: t.tally.reflect_drops,
        one_way: t.arrival.as_ref().map(|a| OneWay {
            clock: a.clock,
            arrival: a.clock.describe(),
            fallback: a.fallback.clone(),
            untimed: t.one_way_untimed,
            sync: blastdrop::clock::clock_sync(),
            latency: t.one_way.as_ref().map(|h| h.summary()).unwrap_or_default(),
            negative: t.one_way_negative,
            histogram: t.one_way.as_ref().map(|h| h.buckets()).unwrap_or_default(),
        }),
        ports: Vec::new(),
        limit: String::new(),
        verdict: limits::Verdict { limits: Vec::new(), invalid: None },
        faults: t.tally.faults,
    }
}

/// The busiest lane's busy time over its own arrival window, in percent.
pub(crate) fn busiest_pct(t: &Totals) -> Option<f64> {
    t.queues
        .values()
        .filter_map(|q| {
            let span = q.last_tsc?.saturating_sub(q.first_tsc?);
            (span > 0).then(|| (q.tally.busy_cycles as f64 / span as f64 * 100.0).min(100.0))
        })
        .reduce(f64::max)
}

/// Receiver-side counters for the verdict.
pub(crate) fn receiver_counters(
    received: u64,
    port: &PortStats,
    xs: &blastdrop::xstats::WindowXstats,
    lost: u64,
    probes_read: bool,
    busy_pct: Option<f64>,
) -> limits::ReceiverCounters {
    limits::ReceiverCounters {
        received,
        imissed: port.imissed,
        rx_nombuf: port.rx_nombuf,
        ierrors: port.ierrors,
        socket_drops: port.socket_drops,
        xstats: xs.counters.clone(),
        probe_lost: lost,
        probes_read,
        busy_pct,
        invalid: xs.invalid.clone(),
    }
}

/// Seconds from the first arrival to the last (0 without both).
pub(crate) fn arrival_window(first: Option<u64>, last: Option<u64>, hz: u64) -> f64 {
    match (first, last) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / hz as f64,
        _ => 0.0,
    }
}

pub(crate) fn arrivals(b: &blastdrop::rx::Burstiness, hz: u64) -> Arrivals {
    let label = |k: usize| match k {
        0 => "0".to_string(),
        1 => "1".to_string(),
        k if k == blastdrop::rx::POLL_BUCKETS - 1 => format!("{}+", 1 << (k - 1)),
        k => format!("{}-{}", 1 << (k - 1), (1 << k) - 1),
    };
    let on = b.interval_cycles > 0 && b.intervals > 0;
    Arrivals {
        polls_by_frames: b.polls_by_size.iter().enumerate().filter(|(_, &n)| n > 0).map(|(k, &n)| (label(k), n)).collect(),
        full_polls: b.full_polls,
        max_backlog_frames: b.max_backlog,
        interval_us: (b.interval_cycles > 0).then(|| (b.interval_cycles as f64 / hz as f64 * 1e6).round() as u64),
        peak_per_interval: on.then_some(b.max_per_interval),
        mean_per_interval: on.then(|| b.frames_in_intervals as f64 / b.intervals as f64),
        peak_to_mean: b.peak_to_mean(),
    }
}
