//! A single step's summary worked out from the lanes' outcomes and the
//! sender's counters: each queue and stream, the shape achieved, the verdict.

use blastdrop::attribution;
use blastdrop::figures::{per_packet, Rates};
use blastdrop::sender::{Reading, Sender, SenderWindow, StepOutcome};

use super::record::{PortCounters, QueueSummary, StreamSummary, Summary};
use crate::mode::Single;

/// The summary of the step, with the verdict from the sender's counters
/// between the two readings.
pub fn summarize(
    paced_rate: Option<f64>,
    m: &Single,
    sender: &Sender,
    outcome: &StepOutcome,
    (before, after): (&Reading, &Reading),
    host_steal_pct: Option<f64>,
) -> Summary {
    let (mut port_stats, xstats, per_port) = sender.counters_between(before, after);
    let on_sockets = sender.socket_side().is_some();
    if on_sockets {
        // No port counts what left: what the sockets took did.
        let t = outcome.total();
        (port_stats.opackets, port_stats.obytes) = (t.packets, t.bytes);
    }
    let run_window = SenderWindow {
        seconds: outcome.seconds,
        total: outcome.total(),
        on_sockets,
        port: port_stats,
        xstats,
        ports: sender.port_windows(per_port, &outcome.lanes, outcome.seconds),
        tx_wall_pct: blastdrop::sender::tx_wall_pct(&outcome.lanes),
        ..Default::default()
    };
    let verdict = attribution::verdict(&run_window, None, paced_rate);
    let port_rows = attribution::port_steps(&run_window, None, paced_rate, &sender.port_names(), m.queues);
    let (queue_rows, streams, unsent) = lanes(m, sender, outcome);
    let total = outcome.total();
    let mut stalls = control::LaneStalls::default();
    for l in &outcome.lanes {
        stalls.add(l.queue, l.outcome.tally.stalls, l.outcome.tally.stalled_ticks, l.outcome.longest_stall, sender.tsc_hz());
    }
    let achieved_shape = crate::peer::achieved_shape(&outcome.shape(), sender.tsc_hz(), outcome.seconds);
    Summary {
        side: "sender".to_owned(),
        interrupted: outcome.interrupted,
        sent: Rates::over(total.packets, total.bytes, outcome.seconds),
        offered_mpps: paced_rate.map(|r| r / 1e6),
        busy: per_packet(total.busy_cycles, total.packets),
        ring_full_retries: total.ring_full_retries,
        alloc_failures: total.alloc_failures,
        unsent,
        tx_undrained: outcome.tx_undrained.clone(),
        probe: true,
        limit: verdict.label(),
        verdict,
        port: PortCounters { opackets: port_stats.opackets, obytes: port_stats.obytes, oerrors: port_stats.oerrors },
        queues: queue_rows,
        streams,
        shape: m.shape.to_string(),
        shape_bunched: ladder::bunched(m.shape, &achieved_shape, total.ring_full_retries, &stalls, host_steal_pct),
        achieved_shape,
        stalls,
        host_steal_pct,
        latency: outcome.latency().map(|(h, _)| h.summary()),
        latency_clock: outcome.latency().map(|_| latency::LatencyClock::SenderRoundTrip),
        reflected: outcome.latency().map(|(_, n)| n),
        latency_histogram: outcome.latency().map(|(h, _)| h.buckets()).unwrap_or_default(),
        ports: port_rows,
    }
}

/// Each queue's figures, each stream's count (by stream id), and the
/// frames left unsent at the stop.
fn lanes(m: &Single, sender: &Sender, outcome: &StepOutcome) -> (Vec<QueueSummary>, Vec<StreamSummary>, u64) {
    let mut unsent = 0;
    let mut queue_rows = Vec::new();
    let mut streams = Vec::new();
    for l in &outcome.lanes {
        let o = &l.outcome;
        unsent += o.unsent;
        let secs = o.end_tsc.saturating_sub(o.start_tsc) as f64 / sender.tsc_hz() as f64;
        queue_rows.push(QueueSummary {
            queue: l.queue,
            port: m.layout.port_of(l.queue).0,
            lcore: l.lcore,
            sent: Rates::over(o.tally.packets, o.tally.bytes, secs),
            busy: per_packet(o.tally.busy_cycles, o.tally.packets),
            ring_full_retries: o.tally.ring_full_retries,
            alloc_failures: o.tally.alloc_failures,
            unsent: o.unsent,
        });
        for (st, sent) in m.layout.streams(l.queue).iter().zip(&o.per_stream) {
            streams.push(StreamSummary { id: st.id, queue: st.queue, src_port: st.src_port, sent: *sent });
        }
    }
    streams.sort_by_key(|s| s.id);
    (queue_rows, streams, unsent)
}
