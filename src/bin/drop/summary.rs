//! drop's final figures: the summary it prints and records, built from the
//! receiver's totals, with the receiver-side verdict.

use blastdrop::figures::{per_packet, port_stats, Rates};
use blastdrop::receiver::Totals;
use blastdrop::signals;
use dpdk::PortStats;
pub(crate) use records::drop::{Arrivals, OneWay, PortSummary, QueueSummary, StreamSummary, Summary};

pub(crate) fn summarize(t: &Totals, hz: u64, port: PortStats, port_counters_reset: bool) -> Summary {
    let window = |a: Option<u64>, b: Option<u64>| arrival_window(a, b, hz);
    Summary {
        side: "receiver".to_owned(),
        interrupted: signals::interrupted(),
        received: Rates::over(t.tally.packets, t.tally.bytes, window(t.first_tsc, t.last_tsc)),
        busy: Some(per_packet(t.tally.busy_cycles, t.tally.packets)),
        no_probe: t.tally.no_probe,
        untracked: t.untracked,
        probe: t.probe,
        split_streams: t.split_streams(),
        port: Some(port_stats(&port)),
        port_counters_reset,
        queues: t
            .queues
            .iter()
            .map(|(&q, x)| QueueSummary {
                queue: q,
                port: x.port,
                lcore: x.lcore,
                received: Rates::over(x.tally.packets, x.tally.bytes, window(x.first_tsc, x.last_tsc)),
                busy: Some(per_packet(x.tally.busy_cycles, x.tally.packets)),
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
            arrival: a.clock.describe().to_owned(),
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
        socket: None,
    }
}

/// The busiest lane's busy time over its own arrival window, in percent.
pub(crate) fn busiest_pct(t: &Totals) -> Option<f64> {
    largest_lane_share(t, |tally| tally.busy_cycles)
}

/// The most stood-still lane's time stood still over its arrival window,
/// percent (None where no lane saw frames over a span).
pub(crate) fn most_stalled_pct(t: &Totals) -> Option<f64> {
    largest_lane_share(t, |tally| tally.stalled_ticks)
}

/// The largest share of its own arrival window (first to last frame)
/// that `ticks` of a lane's tally take, in percent, over every lane.
fn largest_lane_share(t: &Totals, ticks: impl Fn(&blastdrop::counters::Tally) -> u64) -> Option<f64> {
    t.queues
        .values()
        .filter_map(|q| {
            let span = q.last_tsc?.saturating_sub(q.first_tsc?);
            (span > 0).then(|| (ticks(&q.tally) as f64 / span as f64 * 100.0).min(100.0))
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
    (busy_pct, stalled_pct): (Option<f64>, Option<f64>),
) -> limits::ReceiverCounters {
    limits::ReceiverCounters {
        received,
        imissed: port.imissed,
        rx_nombuf: port.rx_nombuf,
        ierrors: port.ierrors,
        socket_drops: port.socket_drops,
        interface_drops: port.interface_drops,
        xstats: xs.counters.clone(),
        probe_lost: lost,
        probes_read,
        busy_pct,
        invalid: xs.invalid.clone(),
        stalled_pct,
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
