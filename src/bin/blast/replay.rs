//! --pcap: a capture replayed at its timing, with a sender-side summary
//! that says how closely the timing was kept.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use blastdrop::attribution;
use blastdrop::fail::Failure;
use blastdrop::report::{self, Environment, PerPacket, Rates};
use blastdrop::sender::{Sender, SenderWindow, StepOutcome, StepParams};
use blastdrop::session::Started;
use blastdrop::tx::replay::Replay;
use blastdrop::tx::ReplayTiming;
use capture::{Capture, Rewrite, RewriteStats, Timing};

use crate::args::Args;
use crate::mode::ReplayRun;
use crate::peer::PeerHooks;

/// The capture as read, and what was done to it.
#[derive(Serialize, schemars::JsonSchema)]
struct CaptureRecord {
    file: String,
    format: &'static str,
    frames: u64,
    /// Frames' bytes, FCS included.
    frame_bytes: u64,
    largest: u64,
    /// Both directions of a conversation count once.
    flows: u64,
    /// From the first frame's time to the last's.
    span_seconds: f64,
    /// Frames whose time is before the one ahead of them (sent at the earlier one's time).
    out_of_order: u64,
    memory_bytes: u64,
    kinds: BTreeMap<&'static str, u64>,
    /// None with --pcap-keep-addresses.
    rewrite: Option<RewriteRecord>,
}

#[derive(Serialize, schemars::JsonSchema)]
struct RewriteRecord {
    macs: u64,
    ipv4: u64,
    l4_checksums_computed: u64,
    /// UDP checksums set to 0 (none): the frames a probe is stamped into.
    udp_checksums_zeroed: u64,
    /// L4 checksums updated for the new addresses only (RFC 1624): first
    /// fragments of fragmented datagrams, datagrams captured truncated.
    l4_checksums_updated: u64,
    /// L4 checksums left as captured (their field not in the bytes captured): wrong for the new addresses.
    l4_checksums_left: u64,
}

/// How closely the replay kept the schedule.
#[derive(Serialize, schemars::JsonSchema)]
struct TimingRecord {
    timing: String,
    passes: u64,
    /// Frames whose time had come when the replay ended, and what was sent of them.
    due: u64,
    /// |gap as sent - gap asked for| between a queue's consecutive frames.
    gap_error: latency::LatencySummary,
    /// How late frames left after their time.
    lateness: latency::LatencySummary,
    /// Frames that left more than `LATE_US` after their time.
    late_frames: u64,
    /// At most `HELD_PCT` percent of the frames were late: the replay kept
    /// the capture's timing (else the verdict names the sender).
    held: bool,
}

/// A frame is late when it leaves more than this after its time.
const LATE_US: u64 = 50;
/// The timing was held when at most this share of frames was late.
const HELD_PCT: f64 = 1.0;

#[derive(Serialize, schemars::JsonSchema)]
struct QueueRow {
    queue: u16,
    lcore: u32,
    sent: Rates,
    stamped: u64,
    unstamped: u64,
    #[serde(flatten)]
    busy: PerPacket,
    ring_full_retries: u64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Summary {
    side: &'static str,
    interrupted: bool,
    sent: Rates,
    /// Frames that carried a probe (drop counts them per stream) and that did not.
    stamped: u64,
    unstamped: u64,
    timing: TimingRecord,
    ring_full_retries: u64,
    alloc_failures: u64,
    unsent: u64,
    /// With --peer: what drop counted in the window (over the sender's
    /// trial, as a ladder step), the loss, and drop's whole figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    received: Option<Rates>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loss_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receiver: Option<control::WindowFigures>,
    /// Both ends' counters with --peer, the sender's alone without.
    limit: String,
    verdict: limits::Verdict,
    queues: Vec<QueueRow>,
}

/// blast --json record of a capture replay (mode = replay): the capture, how
/// closely its timing was kept, and with --peer drop's window (docs/json.md).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "BlastReplayRecord")]
struct Record<'a> {
    tool: &'static str,
    mode: &'static str,
    version: &'static str,
    config: &'a Args,
    environment: Environment,
    /// drop's, with --peer.
    #[serde(skip_serializing_if = "Option::is_none")]
    receiver_environment: Option<control::PeerInfo>,
    capture: CaptureRecord,
    summary: Summary,
}

pub fn run(args: &Args, m: ReplayRun, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    let (mut peer, peer_info) = crate::peer::connect(args)?;
    let largest = m.capture.largest() as u32;
    if let (Some(p), Some(info)) = (peer.as_mut(), peer_info.as_ref()) {
        crate::peer::check_receiver(info, m.queues, largest, false, "the replay")?;
        crate::peer::prepare_step(p, sender, m.queues, largest).map_err(Failure::runtime)?;
    }
    sender.set_queues(m.queues)?;
    let ReplayRun { queues, file, mut capture, schedule, duration } = m;
    let rewrite = (!args.pcap_keep_addresses).then(|| capture.rewrite(&rewrite_for(sender)));
    let record = capture_record(&file, &capture, rewrite);
    announce(&record, &schedule, queues, sender, peer_info.as_ref());
    let replay = Arc::new(Replay { capture, schedule, stamp: !args.pcap_keep_payload });
    let params = StepParams {
        queues,
        size: largest,
        mix: None,
        flows: u32::from(queues),
        rate: None,
        count: None,
        duration,
        warmup: std::time::Duration::ZERO,
        // With drop --listen: one measured window around the whole replay.
        window: peer.is_some(),
        live: true,
        shape: pace::Shape::Open,
        reflect: false,
        replay: Some(replay.clone()),
    };
    let before = sender.read_counters();
    let mut hooks = PeerHooks::new(peer.as_mut(), None);
    let outcome = sender.run_step(&params, &mut hooks)?;
    let figures = hooks.take_figures();
    let summary = summarize(&replay, sender, &outcome, &before, figures);
    print_summary(&summary);
    if let Some(path) = &args.json {
        let environment = blastdrop::environment::of_sender(started, sender, queues);
        let rec = Record {
            tool: "blast",
            mode: "replay",
            version: env!("CARGO_PKG_VERSION"),
            config: args,
            environment,
            receiver_environment: peer_info,
            capture: record,
            summary,
        };
        report::write_json(path, &rec)?;
    }
    if let Some(p) = peer.as_mut() {
        let _ = p.call(control::Request::Bye);
    }
    match outcome.failure {
        Some(msg) => Err(Failure::runtime(msg)),
        None => Ok(()),
    }
}

/// The first port's addresses (a replay sends on one port's queues).
fn rewrite_for(sender: &Sender) -> Rewrite {
    let side = &sender.sides()[0];
    let a = &side.addressing;
    Rewrite { src_mac: side.src_mac, dst_mac: a.dst_mac, src_ip: a.src_ip, dst_ip: a.dst_ip, run_id: sender.run_id() }
}

fn capture_record(file: &std::path::Path, c: &Capture, rewrite: Option<RewriteStats>) -> CaptureRecord {
    CaptureRecord {
        file: file.display().to_string(),
        format: c.format.as_str(),
        frames: c.len() as u64,
        frame_bytes: c.frame_bytes(),
        largest: c.largest() as u64,
        flows: c.flows() as u64,
        span_seconds: c.span_ns() as f64 / 1e9,
        out_of_order: c.out_of_order() as u64,
        memory_bytes: c.memory(),
        kinds: c.kinds().into_iter().map(|(k, n)| (k.as_str(), n)).collect(),
        rewrite: rewrite.map(|r| RewriteRecord {
            macs: r.l2,
            ipv4: r.l3,
            l4_checksums_computed: r.l4,
            udp_checksums_zeroed: r.l4_zeroed,
            l4_checksums_updated: r.l4_incremental,
            l4_checksums_left: r.l4_left,
        }),
    }
}

/// What is about to be sent, before it is.
fn announce(c: &CaptureRecord, s: &capture::Schedule, queues: u16, sender: &Sender, peer: Option<&control::PeerInfo>) {
    let kinds: Vec<String> = c.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    blastdrop::say!(
        "blast: capture {} ({}): {} frames, {} flow(s), {:.6} s captured, {:.1} KB of frames, largest {} B (FCS incl.); {:.1} KB in memory; {}",
        c.file,
        c.format,
        c.frames,
        c.flows,
        c.span_seconds,
        c.frame_bytes as f64 / 1e3,
        c.largest,
        c.memory_bytes as f64 / 1e3,
        kinds.join(", ")
    );
    match &c.rewrite {
        Some(r) => blastdrop::say!(
            "blast: addresses rewritten to this port's: MACs of {} frames, IPv4 addresses of {}; L4 checksums computed {}, zeroed {} (probe frames), updated for the addresses {} (first fragments, truncated datagrams), left {} (not captured: wrong now)",
            r.macs, r.ipv4, r.l4_checksums_computed, r.udp_checksums_zeroed, r.l4_checksums_updated, r.l4_checksums_left
        ),
        None => blastdrop::say!("blast: addresses kept as captured (--pcap-keep-addresses)"),
    }
    if c.out_of_order > 0 {
        blastdrop::say!("blast: {} frame(s) are timed before the frame ahead of them: each leaves at the earlier time", c.out_of_order);
    }
    let idle = s.idle_queues();
    if !idle.is_empty() {
        blastdrop::say!("blast: queue(s) {idle:?} get no frames: the capture's flows all fall on the others");
    }
    let side = &sender.sides()[0];
    let length = match s.timing {
        Timing::Fast => "as fast as the queues take them".to_string(),
        _ => format!("over {:.6} s", s.duration_ns() as f64 / 1e9),
    };
    blastdrop::say!(
        "blast: replaying on port {} ({}, {}), {queues} queue(s) by flow, timing {}, {} pass(es): {} frames {length}; {}",
        side.port.id(),
        side.info.name,
        side.info.driver,
        s.timing,
        s.loops,
        s.frames(),
        match peer {
            Some(p) => format!("drop on {} ({}) counts what arrives in one window around the replay", p.hostname, p.port_name),
            None => "sender-side figures".into(),
        }
    );
}

fn summarize(
    r: &Replay,
    sender: &Sender,
    outcome: &StepOutcome,
    before: &blastdrop::sender::Reading,
    figures: Option<control::WindowFigures>,
) -> Summary {
    let total = outcome.total();
    let mut timing = ReplayTiming::default();
    let mut queues = Vec::new();
    for l in &outcome.lanes {
        let o = &l.outcome;
        let t = o.replay.clone().unwrap_or_default();
        let secs = o.end_tsc.saturating_sub(o.start_tsc) as f64 / sender.tsc_hz() as f64;
        queues.push(QueueRow {
            queue: l.queue,
            lcore: l.lcore,
            sent: Rates::over(o.tally.packets, o.tally.bytes, secs),
            stamped: t.stamped,
            unstamped: t.unstamped,
            busy: PerPacket::of(o.tally.busy_cycles, o.tally.packets),
            ring_full_retries: o.tally.ring_full_retries,
        });
        timing.merge(&t);
    }
    // The measured window's counters with --peer (run_step read them around
    // it); the run's without, read now, only then.
    let window = outcome.window.clone().unwrap_or_else(|| {
        let (port, xstats, _) = sender.counters_between(before, &sender.read_counters());
        SenderWindow { seconds: outcome.seconds, total, port, xstats, ..Default::default() }
    });
    // The schedule's frames due by the end are what a perfect sender sent; fast has no schedule.
    let offered = (r.schedule.timing != Timing::Fast).then_some(timing.due);
    let mut verdict = limits::verdict(&attribution::window_counters(&window, figures.as_ref(), offered));
    let late_frames = timing.lateness.count_above_ns(LATE_US * 1000);
    let sent = timing.lateness.count().max(1);
    let held = offered.is_none() || late_frames as f64 <= sent as f64 * HELD_PCT / 100.0;
    if !held {
        let l = timing.lateness.summary();
        verdict.add_sender_limit(
            late_frames,
            format!(
                "the replay fell behind the capture's timing: {late_frames} of {sent} frames ({:.1}%) left more than {LATE_US} us after their time (P99 {:.1} us, max {:.1} us): the sending core was busy elsewhere or too slow for the capture's gaps",
                late_frames as f64 / sent as f64 * 100.0,
                l.p99_us,
                l.max_us
            ),
        );
    }
    Summary {
        side: "sender",
        interrupted: outcome.interrupted,
        sent: Rates::over(total.packets, total.bytes, outcome.seconds),
        stamped: timing.stamped,
        unstamped: timing.unstamped,
        timing: TimingRecord {
            timing: r.schedule.timing.to_string(),
            passes: r.schedule.loops,
            due: timing.due,
            gap_error: timing.gap_error.summary(),
            lateness: timing.lateness.summary(),
            late_frames,
            held,
        },
        ring_full_retries: total.ring_full_retries,
        alloc_failures: total.alloc_failures,
        unsent: outcome.lanes.iter().map(|l| l.outcome.unsent).sum(),
        // Every frame sent carried a probe: the exact account of them; else
        // drop's frame count (other frames included), as the verdict reads it.
        received: figures.as_ref().map(|f| match blastdrop::attribution::exact_account(&window, f) {
            Some(t) => Rates::over(t.received, t.received_bytes, window.seconds),
            None => Rates::over(f.packets, f.bytes, window.seconds),
        }),
        loss_pct: figures.as_ref().map(|f| {
            let got = blastdrop::attribution::exact_account(&window, f).map_or(f.packets, |t| t.received);
            ladder::StepRecord::loss_from(window.total.packets, got)
        }),
        receiver: figures,
        limit: verdict.label(),
        verdict,
        queues,
    }
}

fn print_summary(s: &Summary) {
    blastdrop::say!("--- blast replay summary (sender-side: frames accepted by tx_burst) ---");
    blastdrop::say!(
        "sent {} frames, {} bytes in {:.6} s: {:.3} Mpps, {:.3} Gb/s of frames, {:.3} Gb/s on the wire (+20 B/frame){}",
        s.sent.packets,
        s.sent.bytes,
        s.sent.seconds,
        s.sent.mpps,
        s.sent.frame_gbps,
        s.sent.wire_gbps,
        if s.interrupted { "  (interrupted)" } else { "" }
    );
    blastdrop::say!(
        "probes in {} frames, none in {} (no room: not UDP over IPv4, a VLAN tag, IP options, or under 18 B of payload; or --pcap-keep-payload)",
        s.stamped, s.unstamped
    );
    let t = &s.timing;
    if t.timing == "fast" {
        blastdrop::say!("timing fast: no schedule to keep");
    } else {
        let g = &t.gap_error;
        blastdrop::say!(
            "timing {} ({} pass(es)): {} frames due by the end, {} sent; gap error (|gap sent - gap captured|, per queue) P50 {:.2} us, P90 {:.2}, P99 {:.2}, max {:.2} over {} gaps; late P50 {:.2} us, P99 {:.2}, max {:.2}",
            t.timing, t.passes, t.due, s.sent.packets, g.p50_us, g.p90_us, g.p99_us, g.max_us, g.count, t.lateness.p50_us, t.lateness.p99_us, t.lateness.max_us
        );
        blastdrop::say!(
            "timing {}: {} frame(s) left more than {LATE_US} us late (held: at most {HELD_PCT}% of frames)",
            if t.held { "held" } else { "NOT held" },
            t.late_frames
        );
    }
    blastdrop::say!("ring-full retries {}  alloc failures {}  unsent at stop {}", s.ring_full_retries, s.alloc_failures, s.unsent);
    if let (Some(rx), Some(loss), Some(f)) = (&s.received, s.loss_pct, &s.receiver) {
        blastdrop::say!(
            "received at drop (receiver-side, one window around the replay): {} frames, {:.3} Mpps, {:.3} Gb/s on the wire over the trial; loss {loss:.3}%",
            rx.packets, rx.mpps, rx.wire_gbps
        );
        let sizes: Vec<String> = f.sizes.iter().map(|x| format!("{} B: {}", x.size, x.frames)).collect();
        if let Some(t) = &f.trial {
            blastdrop::say!(
                "  the replay's probed frames: sent {}, received {}, lost {} (exact){}",
                t.sent,
                t.received,
                t.lost,
                f.other_frames.map_or(String::new(), |o| format!("; {o} other frame(s) in drop's window"))
            );
        }
        blastdrop::say!(
            "  probes {} (lost about {} by their gaps, reordered {}, duplicates {}), non-probe frames {}; probe frames by size: {}",
            f.probe.received,
            f.probe.lost,
            f.probe.reordered,
            f.probe.duplicates,
            f.no_probe,
            sizes.join(", ")
        );
    }
    let whose = if s.receiver.is_some() { "both ends' counters" } else { "sender-side counters only" };
    blastdrop::say!("limit: {} ({whose})", s.limit);
    for l in &s.verdict.limits {
        blastdrop::say!("  {}: {}", l.kind.as_str(), l.evidence);
    }
    for q in &s.queues {
        blastdrop::say!(
            "  q{} (lcore {}): {} frames ({} with a probe), {:.3} Mpps, {}, {} retries",
            q.queue,
            q.lcore,
            q.sent.packets,
            q.stamped,
            q.sent.mpps,
            q.busy,
            q.ring_full_retries
        );
    }
}

/// The JSON schema of a replay's record.
pub fn schema() -> schemars::Schema {
    blastdrop::report::schema_of::<Record<'static>>()
}
