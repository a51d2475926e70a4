//! One step, no receiver: a line a second and a sender-side summary.

use std::time::Duration;

use serde::Serialize;

use blastdrop::attribution;
use blastdrop::fail::Failure;
use blastdrop::report::{self, Environment, PerPacket, Rates};
use blastdrop::sender::{NoPeer, Reading, Sender, SenderWindow, StepOutcome, StepParams};
use blastdrop::session::Started;
use wire::MacAddr;

use crate::args::Args;
use crate::mode::Single;

#[derive(Serialize, schemars::JsonSchema)]
struct QueueSummary {
    queue: u16,
    /// Index of its port in --port order.
    port: u16,
    lcore: u32,
    sent: Rates,
    #[serde(flatten)]
    busy: PerPacket,
    ring_full_retries: u64,
    alloc_failures: u64,
    unsent: u64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct StreamSummary {
    id: u16,
    queue: u16,
    src_port: u16,
    sent: u64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct PortCounters {
    opackets: u64,
    obytes: u64,
    oerrors: u64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Summary {
    side: &'static str,
    interrupted: bool,
    /// Frames accepted by tx_burst over the send window.
    sent: Rates,
    offered_mpps: Option<f64>,
    #[serde(flatten)]
    busy: PerPacket,
    ring_full_retries: u64,
    alloc_failures: u64,
    unsent: u64,
    probe: bool,
    /// What held the run back, from the sender's counters alone (no receiver).
    limit: String,
    verdict: limits::Verdict,
    port: PortCounters,
    queues: Vec<QueueSummary>,
    streams: Vec<StreamSummary>,
    /// The arrival shape asked for, and the one achieved (from the send times).
    shape: String,
    achieved_shape: ladder::AchievedShape,
    /// An even or Poisson shape whose frames went out bunched (the lanes
    /// fell behind their schedule and caught up), and what held them back.
    #[serde(skip_serializing_if = "Option::is_none")]
    shape_bunched: Option<String>,
    /// Lanes that stood still in the run (their loop's TSC reads more than 1 ms apart).
    stalls: control::LaneStalls,
    /// The share of the host's CPU time the hypervisor took during the run (/proc/stat).
    host_steal_pct: Option<f64>,
    /// --reflect: round trips of the probes that came back.
    latency: Option<latency::LatencySummary>,
    /// The clock `latency` was read on (`sender_round_trip`: both stamps from the sender's clock).
    latency_clock: Option<latency::LatencyClock>,
    reflected: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    latency_histogram: Vec<latency::Bucket>,
    /// With several --port: each port's share and verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<ladder::PortStep>,
}

/// blast --json record of a single step (mode = single): sender-side figures
/// and the sender-side verdict (docs/json.md).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "BlastSingleRecord")]
struct Record<'a> {
    tool: &'static str,
    mode: &'static str,
    version: &'static str,
    config: &'a Args,
    flows: u32,
    src_mac: MacAddr,
    environment: Environment,
    summary: Summary,
}

pub fn run(args: &Args, m: &Single, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    sender.set_queues(m.queues)?;
    announce(args, m, sender);
    let params = StepParams {
        queues: m.queues,
        size: m.size,
        mix: m.mix.clone(),
        flows: m.flows,
        rate: args.paced_rate(),
        count: m.count,
        duration: m.duration,
        warmup: Duration::ZERO,
        window: false,
        live: true,
        shape: m.shape,
        reflect: args.reflect,
        replay: None,
    };
    let before = sender.read_counters();
    let cpu_before = blastdrop::host::CpuTimes::now();
    let outcome = sender.run_step(&params, &mut NoPeer)?;
    let host_steal_pct = blastdrop::host::CpuTimes::steal_pct(cpu_before, blastdrop::host::CpuTimes::now());
    let after = sender.read_counters();
    let summary = summarize(args, m, sender, &outcome, (&before, &after), host_steal_pct);
    print_summary(&summary);
    if let Some(path) = &args.json {
        let environment = blastdrop::environment::of_sender(started, sender, m.queues);
        let record = Record {
            tool: "blast",
            mode: "single",
            version: env!("CARGO_PKG_VERSION"),
            config: args,
            flows: m.flows,
            src_mac: sender.src_mac(),
            environment,
            summary,
        };
        report::write_json(path, &record)?;
    }
    match outcome.failure {
        Some(msg) => Err(Failure::runtime(msg)),
        None => Ok(()),
    }
}

/// The line that says what this run sends.
fn announce(args: &Args, m: &Single, sender: &Sender) {
    let what = match (m.count, m.duration) {
        (Some(c), Some(d)) => format!("{c} frames or {d:.1?}, whichever first"),
        (Some(c), None) => format!("{c} frames"),
        (None, Some(d)) => format!("{d:.1?}"),
        (None, None) => unreachable!("a duration defaults when there is no count"),
    };
    let ports: Vec<String> = sender.sides().iter().map(|s| format!("{} ({}, {})", s.port.id(), s.info.name, s.info.driver)).collect();
    blastdrop::say!(
        "blast: port{} {}, {} queue(s), {} (FCS incl.), {} flow(s), {}, {}; sender-side figures",
        if ports.len() > 1 { "s" } else { "" },
        ports.join(" + "),
        m.queues,
        frames_text(m.size, m.mix.as_ref()),
        m.flows,
        args.paced_rate().map_or("unpaced".into(), |r| format!("paced at {:.3} Mpps, {} arrivals", r / 1e6, m.shape)),
        what
    );
}

/// "64 B frames", or a mix with its sizes and mean.
pub fn frames_text(size: u32, mix: Option<&wire::SizeMix>) -> String {
    match mix {
        None => format!("{size} B frames"),
        Some(m) => {
            let parts: Vec<String> = m.parts().iter().map(|(s, w)| format!("{w} x {s} B")).collect();
            format!("size mix {} ({} per cycle of {}; mean {:.1} B)", m.label(), parts.join(", "), m.cycle_len(), m.mean_size())
        }
    }
}

/// The summary of the step, with the verdict from the sender's counters
/// between the two readings.
fn summarize(
    args: &Args,
    m: &Single,
    sender: &Sender,
    outcome: &StepOutcome,
    (before, after): (&Reading, &Reading),
    host_steal_pct: Option<f64>,
) -> Summary {
    let (port_stats, xstats, per_port) = sender.counters_between(before, after);
    let run_window = SenderWindow {
        seconds: outcome.seconds,
        total: outcome.total(),
        port: port_stats,
        xstats,
        ports: sender.port_windows(per_port, &outcome.lanes, outcome.seconds),
        ..Default::default()
    };
    let verdict = attribution::verdict(&run_window, None, args.paced_rate());
    let port_rows = attribution::port_steps(&run_window, None, args.paced_rate(), &sender.port_names(), m.queues);
    let (queue_rows, streams, unsent) = lanes(m, sender, outcome);
    let total = outcome.total();
    let mut stalls = control::LaneStalls::default();
    for l in &outcome.lanes {
        stalls.add(l.queue, l.outcome.tally.stalls, l.outcome.tally.stalled_ticks, l.outcome.longest_stall, sender.tsc_hz());
    }
    let achieved_shape = crate::peer::achieved_shape(&outcome.shape(), sender.tsc_hz(), outcome.seconds);
    Summary {
        side: "sender",
        interrupted: outcome.interrupted,
        sent: Rates::over(total.packets, total.bytes, outcome.seconds),
        offered_mpps: args.paced_rate().map(|r| r / 1e6),
        busy: PerPacket::of(total.busy_cycles, total.packets),
        ring_full_retries: total.ring_full_retries,
        alloc_failures: total.alloc_failures,
        unsent,
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
            busy: PerPacket::of(o.tally.busy_cycles, o.tally.packets),
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

fn print_summary(s: &Summary) {
    blastdrop::say!("--- blast summary (sender-side: frames accepted by tx_burst) ---");
    blastdrop::say!(
        "sent {} frames, {} bytes in {:.3} s: {:.3} Mpps, {:.3} Gb/s of frames, {:.3} Gb/s on the wire (+20 B/frame)",
        s.sent.packets,
        s.sent.bytes,
        s.sent.seconds,
        s.sent.mpps,
        s.sent.frame_gbps,
        s.sent.wire_gbps
    );
    if let Some(o) = s.offered_mpps {
        blastdrop::say!("offered {o:.3} Mpps (paced)");
    }
    blastdrop::say!(
        "{}  ring-full retries {}  alloc failures {}  unsent at stop {}  port opackets {} oerrors {}{}",
        s.busy,
        s.ring_full_retries,
        s.alloc_failures,
        s.unsent,
        s.port.opackets,
        s.port.oerrors,
        if s.interrupted { "  (interrupted)" } else { "" }
    );
    let a = &s.achieved_shape;
    let gaps = if s.shape == "open" {
        "unpaced: no gaps to measure".to_string()
    } else {
        format!("a queue's sends {:.2} us apart (median {:.2}, spread {:.2})", a.mean_gap_us, a.median_gap_us, a.gap_spread)
    };
    blastdrop::say!(
        "shape: {} asked; achieved {:.3} Mpps, {:.2} frames per send (max {}), {gaps}",
        s.shape,
        a.achieved_mpps,
        a.frames_per_send,
        a.max_frames_per_send
    );
    if let Some(b) = &s.shape_bunched {
        blastdrop::say!("  shape not held: {b}");
    }
    if let (Some(l), Some(n)) = (&s.latency, s.reflected) {
        blastdrop::say!("round trip (reflected by drop, {n} probes back of {} sent; on blast's own clock): {}", s.sent.packets, l.line());
    }
    blastdrop::say!("limit: {} (sender-side counters only; with --peer the receiver's count too)", s.limit);
    for l in &s.verdict.limits {
        blastdrop::say!("  {}: {}", l.kind.as_str(), l.evidence);
    }
    for p in &s.ports {
        let limit = p.limit();
        blastdrop::say!(
            "  port {} ({}, {} queue(s)): {:.3} Mpps, {} frames, {:.3} Gb/s wire, port opackets {} oerrors {}; limit: {}",
            p.port,
            p.name,
            p.queues,
            p.sent.mpps,
            p.sent.packets,
            p.sent.wire_gbps,
            p.sender_opackets,
            p.sender_oerrors,
            limit
        );
    }
    for q in &s.queues {
        blastdrop::say!(
            "  q{} (port {}, lcore {}): {:.3} Mpps, {} frames, {}, {} retries",
            q.queue,
            q.port,
            q.lcore,
            q.sent.mpps,
            q.sent.packets,
            q.busy,
            q.ring_full_retries
        );
    }
}

/// The JSON schema of a single step's record.
pub fn schema() -> schemars::Schema {
    blastdrop::report::schema_of::<Record<'static>>()
}
