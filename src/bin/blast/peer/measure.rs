//! One measured step: blast's window and drop's window over the same
//! trial, merged into a step record with its verdict.

use crate::fail::Failure;
use blastdrop::attribution;
use blastdrop::figures::{per_packet, Rates};
use blastdrop::sender::{Sender, SenderWindow, StepFailure, StepParams};
use control::WindowFigures;
use ladder::{AchievedShape, StepRecord};

use super::hooks::PeerHooks;
use super::{Membership, Peer};

/// A measured step: its record, why the run must stop (if it must), and
/// whether it was interrupted.
pub type Measured = (StepRecord, Option<StepFailure>, bool);

/// Runs one step as a trial and merges both ends' figures.
pub fn measure(sender: &mut Sender, peer: Option<&mut Peer>, params: &StepParams, step: usize, run: u32) -> Result<Measured, Failure> {
    let group_member = peer.as_deref().and_then(|p| p.member.clone());
    let mut hooks = PeerHooks::new(peer, params.rate);
    let outcome = sender.run_step(params, &mut hooks)?;
    let figures = hooks.take_figures();
    let mut rec = step_record(sender, params, step, run);
    rec.warmup_sent = outcome.warmup_sent;
    let mut failure = None;
    match (&outcome.failure, outcome.window) {
        (None, Some(w)) => {
            sender_figures(&mut rec, &w, sender, params.shape);
            rec.stalls = Some(ladder::StepStalls {
                sender: w.stalls,
                receiver: figures.as_ref().and_then(|f| f.stalls),
                sender_host_steal_pct: w.host_steal_pct,
                receiver_host_steal_pct: figures.as_ref().and_then(|f| f.host_steal_pct),
            });
            if let Some(member) = group_member {
                group_step(&mut rec, member, figures.as_ref(), w.seconds);
            } else {
                both_ends_verdict(&mut rec, &w, figures.as_ref(), sender, params);
            }
            if let Some(f) = figures {
                receiver_figures(&mut rec, &w, f, step);
            }
            name_the_tail(&mut rec);
        }
        (Some(e), w) => {
            // What the sender sent before the step failed, sender-side (the
            // receiver's figures are gone with it): it left the port.
            if let Some(w) = w {
                sender_figures(&mut rec, &w, sender, params.shape);
            }
            rec.error = Some(e.into());
            failure = Some(e.clone());
        }
        (None, None) => rec.error = Some(StepFailure::Interrupted.into()),
    }
    // Every measured step, a knee's trials too, as it ends; a C lanes'
    // window (--cross-check) as its own event, not as a step of the run.
    blastdrop::events::emit(if params.c_lanes { "cross_check_window" } else { "step" }, &rec);
    Ok((rec, failure, outcome.interrupted))
}

/// The step as asked for, before any figure.
fn step_record(sender: &Sender, params: &StepParams, step: usize, run: u32) -> StepRecord {
    StepRecord {
        step,
        run,
        queues: params.queues,
        // With a mix, its mean frame size (rates and Gb/s count each frame's own bytes).
        size: params.mix.as_ref().map_or(params.size, |m| m.mean_size().round() as u32),
        size_mix: params.mix.as_ref().map(|m| m.label()),
        flows: params.flows,
        mtu: sender.mtu(),
        shape: params.shape.to_string(),
        offered_mpps: params.rate.map(|r| r / 1e6),
        ..Default::default()
    }
}

/// blast's own figures over the trial: what it sent and at what cost, its
/// port's counters, the shape it achieved and, with --reflect, round trips.
fn sender_figures(rec: &mut StepRecord, w: &SenderWindow, sender: &Sender, shape: pace::Shape) {
    rec.sent = w.sent();
    rec.tx_undrained = w.tx_undrained.clone();
    let busy = per_packet(w.total.busy_cycles, w.total.packets);
    (rec.sender_cycles_per_packet, rec.sender_ns_per_packet) = (busy.cycles_per_packet, busy.ns_per_packet);
    rec.ring_full_retries = w.total.ring_full_retries;
    rec.sender_opackets = w.port.opackets;
    rec.sender_oerrors = w.port.oerrors;
    rec.sender_xstats = w.xstats.counters.deltas();
    rec.sender_levels = w.xstats.counters.levels.clone();
    rec.sender_udp = w.udp.clone();
    rec.achieved_shape = Some(achieved_shape(&w.shape, sender.tsc_hz(), w.seconds));
    if let Some(h) = &w.latency {
        rec.latency = Some(h.summary());
        rec.latency_clock = Some(latency::LatencyClock::SenderRoundTrip);
        rec.latency_histogram = h.buckets();
        rec.reflected = Some(w.reflected);
        rec.reflected_stale = Some(w.reflected_stale);
    }
    if let Some(a) = &rec.achieved_shape {
        rec.shape_bunched = ladder::bunched(shape, a, w.total.ring_full_retries, &w.stalls, w.host_steal_pct);
    }
}

/// A lone sender's step: the verdict from both ends' counters (the
/// sender's alone without drop), each port's, and drop's count as the loss.
fn both_ends_verdict(rec: &mut StepRecord, w: &SenderWindow, figures: Option<&WindowFigures>, sender: &Sender, params: &StepParams) {
    rec.verdict = Some(attribution::verdict(w, figures, params.rate));
    rec.ports = attribution::port_steps(w, figures, params.rate, &sender.port_names(), params.queues);
    if let Some(f) = figures {
        rec.loss_pct = Some(StepRecord::loss_from(w.total.packets, f.packets));
    }
}

/// drop's figures over the trial, with the exact account of the trial's
/// own frames where there is one (it replaces drop's whole count).
fn receiver_figures(rec: &mut StepRecord, w: &SenderWindow, f: WindowFigures, step: usize) {
    // Frames of the trial that arrived, over the trial's length
    // (RFC 2544's throughput); drop's own window is longer by the drains.
    rec.received = Some(Rates::over(f.packets, f.bytes, w.seconds));
    let exact = match rec.group.as_ref() {
        Some(_) => f.trial.as_ref(),
        None => attribution::exact_account(w, &f),
    };
    if let Some(t) = exact {
        let sent = if rec.group.is_some() { t.sent } else { w.total.packets };
        rec.received = Some(Rates::over(t.received, t.received_bytes, w.seconds));
        rec.loss_pct = Some(StepRecord::loss_from(t.sent, t.received));
        rec.lost = Some(t.lost);
        rec.accounting_error = t.error(Some(sent)).map(|e| e.to_string());
        if let Some(e) = &rec.accounting_error {
            blastdrop::say!("blast: step {step}: {e} (the figures are kept as counted)");
        }
    }
    rec.receiver = Some(f);
}

/// A latency tail of a millisecond or more says whether a lane's stall
/// explains it, in the record and in the verdict's evidence (a tail the
/// host caused is a fact about the host, not the path).
fn name_the_tail(rec: &mut StepRecord) {
    let (Some(l), Some(s)) = (&rec.latency, &rec.stalls) else { return };
    rec.tail_cause = s.tail_cause(l);
    if let (Some(cause), Some(v)) = (&rec.tail_cause, rec.verdict.as_mut()) {
        if let Some(first) = v.limits.first_mut() {
            first.evidence = format!("{}; latency: {cause}", first.evidence);
        }
    }
}

/// A group trial's step: the loss is drop's count against what every
/// member sent, and the verdict drop's own (receiver-side): this sender's
/// counters are one member's, so a both-ends verdict would compare one
/// member's sending with everybody's arrivals.
fn group_step(rec: &mut StepRecord, m: Membership, figures: Option<&WindowFigures>, seconds: f64) {
    let Some(f) = figures else { return };
    let Some(g) = f.group.as_deref() else {
        rec.error = Some(StepFailure::NoGroupFigures.into());
        return;
    };
    let (packets, bytes) = g.members.iter().fold((0, 0), |(p, b), x| (p + x.sent_packets, b + x.sent_bytes));
    rec.loss_pct = Some(StepRecord::loss_from(packets, f.packets));
    let busy_pct = (f.seconds > 0.0).then(|| 100.0 * f.busy_seconds / f.seconds);
    let accounting_error = f.trial.as_ref().and_then(|t| t.error(Some(packets))).map(|e| e.to_string());
    let received = f.trial.as_ref().map_or(f.packets, |t| t.received);
    let mut verdict = match &f.udp {
        // A socket receiver: its kernel's counters, a GRO drop a buffer.
        Some(u) => limits::socket_verdict(&u.receiver().counters(packets.saturating_sub(received), f.socket_drops, f.interface_drops)),
        None => receiver_only_verdict(f, received, busy_pct),
    };
    if accounting_error.is_some() {
        (verdict.limits, verdict.invalid) = (Vec::new(), accounting_error);
    }
    rec.verdict = Some(verdict);
    rec.group =
        Some(ladder::GroupStep { name: m.group, senders: m.senders, member: m.member, own_sent: rec.sent, members: g.members.clone() });
    rec.sent = Rates::over(packets, bytes, seconds);
}

/// drop's own verdict on a DPDK port's window, from its counters alone.
fn receiver_only_verdict(f: &WindowFigures, received: u64, busy_pct: Option<f64>) -> limits::Verdict {
    limits::receiver_verdict(&limits::ReceiverCounters {
        received,
        imissed: f.imissed,
        rx_nombuf: f.rx_nombuf,
        ierrors: f.ierrors,
        socket_drops: f.socket_drops,
        interface_drops: f.interface_drops,
        xstats: limits::XstatsByKind::from_wire(&f.xstats, &f.levels),
        probe_lost: f.trial.as_ref().map_or(f.probe.lost, |t| t.lost),
        probes_read: f.no_probe < f.packets,
        busy_pct,
        invalid: f.xstats_invalid.clone(),
        // A window carries its lanes' stand-stills summed, not per lane.
        stalled_pct: None,
    })
}

/// The shape a trial achieved, from its send times.
pub fn achieved_shape(s: &pace::ShapeStats, hz: u64, seconds: f64) -> AchievedShape {
    AchievedShape {
        sends: s.sends,
        frames_per_send: s.frames_per_send(),
        max_frames_per_send: s.max_frames,
        mean_gap_us: s.mean_gap_us(hz),
        median_gap_us: s.gap_percentile(50.0) / hz as f64 * 1e6,
        gap_spread: s.gap_spread(),
        achieved_mpps: if seconds > 0.0 { s.frames as f64 / seconds / 1e6 } else { 0.0 },
    }
}
