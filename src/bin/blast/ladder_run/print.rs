//! What a ladder prints: the plan, progress on stderr, a row per step,
//! then the environment of both ends, the table, repeats, and the
//! ceilings and bandwidth analysis.

use std::time::Duration;

use blastdrop::environment::{cpu_model, hostname};
use blastdrop::environment_record::machine;
use blastdrop::sender::Sender;
use control::PeerInfo;
use ladder::{Aggregate, StepRecord, StepSpec};

use super::record::Analysis;
use crate::mode::LadderRun;
use crate::settings::Settings;

/// The line that opens the ladder.
pub fn announce(settings: &Settings, m: &LadderRun, peer_info: Option<&PeerInfo>) {
    blastdrop::say!(
        "blast: ladder of {}, {} run(s) each; {:.1?} warm-up then a {:.1?} window per step; {}; {}",
        m.ladder.describe(),
        settings.timing.repeat,
        settings.timing.warmup,
        m.duration,
        m.ladder.traffic(),
        match peer_info {
            Some(i) => format!("receiver: drop on {} ({}, {}); receiver-side figures", i.hostname, i.port_name, i.driver),
            None => "no --peer: sender-side figures only".into(),
        }
    );
}

/// Progress on stderr before step `n` of `total`, with the time `left`.
pub fn progress(n: usize, total: usize, step: &StepSpec, run: u32, repeat: u32, left: Duration) {
    eprintln!(
        "blast: step {}/{}: {} queue(s), {} B frames, {} arrivals{}, run {}/{}; about {} left",
        n,
        total,
        step.queues,
        step.size,
        step.shape,
        step.rate.map_or(String::new(), |r| format!(" at {:.3} Mpps", r / 1e6)),
        run,
        repeat,
        fmt_secs(left)
    );
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// After the steps: both ends, what every step had in common, the table,
/// and the repeats' spread.
pub fn print_steps(
    settings: &Settings,
    m: &LadderRun,
    sender: &Sender,
    peer_info: Option<&PeerInfo>,
    records: &[StepRecord],
    aggregates: &[Aggregate],
) {
    blastdrop::say!();
    let ena: Vec<String> =
        sender.sides().iter().filter_map(|s| s.ena.as_ref().map(|e| format!("; {}: {}", s.info.name, e.describe()))).collect();
    blastdrop::say!(
        "sender: {} on {}, {}, {}{}{}",
        hostname(),
        machine().describe(),
        cpu_model(),
        blastdrop::environment::datapath(sender.socket_side().is_some()),
        ena.concat(),
        peer_info.map_or(String::new(), |i| format!("; receiver: {} ({}, {})", i.hostname, i.cpu_model, i.dpdk))
    );
    if let Some(r) = records.iter().find(|r| r.error.is_none()) {
        let traffic = if m.ladder.varies_traffic() { "rate and shape as in their columns".to_string() } else { m.ladder.traffic() };
        blastdrop::say!(
            "every step: MTU {}, {traffic}, {} (FCS incl.); recv figures are drop's (receiver-side) where there is a --peer",
            r.mtu,
            match (&m.mix, m.ladder.sizes.as_slice()) {
                (Some(mix), _) => format!("{}, the size column its mean", crate::single::frames_text(0, Some(mix))),
                (None, [one]) => format!("{one} B frames"),
                _ => "frame sizes as in the size column".into(),
            }
        );
    }
    blastdrop::out::say_str(&ladder::render_table(records));
    if settings.timing.repeat > 1 {
        let what = if peer_info.is_some() { "received" } else { "sent" };
        blastdrop::say!("\nrepeats ({} runs per step): {} Mpps min / median / max", settings.timing.repeat, what);
        for a in aggregates {
            let traffic = a.offered_mpps.map_or(String::new(), |r| format!(" at {r:.3} Mpps {}", a.shape));
            blastdrop::say!(
                "  {:>4} queue(s) {:>6} B{traffic}: {:.3} / {:.3} / {:.3} Mpps  ({} runs)",
                a.queues,
                a.size,
                a.mpps.min,
                a.mpps.median,
                a.mpps.max,
                a.runs
            );
        }
    }
}

/// `paced`: the rates the steps were paced at, when some step delivered its pace.
pub fn print_analysis(a: &Analysis, paced: Vec<f64>) {
    let side = if a.receiver_side { "receiver-side" } else { "sender-side" };
    match paced.as_slice() {
        [] => {}
        [r] => blastdrop::say!(
            "note: every step was paced at {:.3} Mpps: steps with limit `none` delivered it: their rate is the pace, not a limit of the path",
            r / 1e6
        ),
        _ => blastdrop::say!("note: the steps were paced at their offered rate: steps with limit `none` delivered it: their rate is the pace, not a limit of the path"),
    }
    let several = a.ceilings.iter().any(|c| c.offered_mpps != a.ceilings[0].offered_mpps || c.shape != a.ceilings[0].shape);
    for c in &a.ceilings {
        let x = &c.ceiling;
        let traffic = match c.offered_mpps {
            Some(r) if several => format!(", {r:.3} Mpps {}", c.shape),
            _ => String::new(),
        };
        let growth = if x.linear_before {
            format!("linear per queue before it ({:.3} Mpps/queue)", x.mpps_per_queue_first)
        } else {
            format!("sub-linear before it (first step {:.3} Mpps/queue)", x.mpps_per_queue_first)
        };
        if x.reached {
            blastdrop::say!(
                "ceiling ({} B frames{traffic}): {:.3} Mpps at {} queues, limit: {}; growth {growth} [{side}]",
                c.size,
                x.mpps,
                x.queues,
                c.limit
            );
        } else {
            blastdrop::say!(
                "no ceiling ({} B frames{traffic}): still growing {}%+ per step up to {} queues ({:.3} Mpps, limit there: {}); growth {growth} [{side}]",
                c.size, a.ceiling_threshold_pct, x.queues, x.mpps, c.limit
            );
        }
    }
    if let Some(x) = &a.crossover {
        match x.first_size {
            None if x.published_exceeded => {
                blastdrop::say!("bandwidth: {} [{side}]", x.exceeded_note().unwrap_or_default())
            }
            Some(s) => {
                blastdrop::say!(
                    "bandwidth: {} B frames are the smallest to reach {:.1} Gb/s of frames (within 3%) [{side}]",
                    s,
                    x.published_gbps
                )
            }
            None => blastdrop::say!("bandwidth: no frame size reached {:.1} Gb/s of frames (within 3%) [{side}]", x.published_gbps),
        }
        for v in &x.sizes {
            blastdrop::say!("  {:>6} B: best {:.3} Gb/s of frames, held back by the {}", v.size, v.gbps, v.held_by);
        }
    }
}

pub fn print_row(r: &StepRecord) {
    print_step(r);
    if let Some(g) = &r.group {
        print_group(g, r);
    }
    for p in &r.ports {
        blastdrop::say!(
            "    port {} ({}, {} queue(s)): sent {:.3} Mpps{}; limit: {}",
            p.port,
            p.name,
            p.queues,
            p.sent.mpps,
            match (p.received, &p.receiver_port) {
                (Some(rx), Some(name)) => format!(", received {:.3} Mpps on {name}, loss {:.3}%", rx.mpps, p.loss_pct.unwrap_or(0.0)),
                _ => String::new(),
            },
            p.limit()
        );
    }
}

/// The group's table for a step: one row per member (its own sending and
/// verdict, drop's count of its streams), then the superposed arrivals.
fn print_group(g: &ladder::GroupStep, r: &StepRecord) {
    blastdrop::say!(
        "    group {} ({} senders; this is member {}): all sent {:.3} Mpps; received and lost are drop's counts of each member's streams",
        g.name,
        g.senders,
        g.member,
        r.sent.mpps
    );
    let secs = if r.sent.mpps > 0.0 { r.sent.packets as f64 / (r.sent.mpps * 1e6) } else { 0.0 };
    for m in &g.members {
        let mpps = if secs > 0.0 { m.sent_packets as f64 / secs / 1e6 } else { 0.0 };
        let counted = match (m.received, m.lost, m.exact) {
            (Some(rx), Some(lost), true) => format!(", received {rx}, lost {lost}"),
            (Some(rx), Some(lost), false) => format!(", received {rx} (any frame of its streams), lost about {lost} (gap estimate)"),
            _ => String::new(),
        };
        let own = match (m.cycles_per_packet, &m.sender_limit) {
            (Some(c), Some(l)) => format!("; {c:.1} cycles/frame, sender-side limit: {l}"),
            _ => String::new(),
        };
        blastdrop::say!("      member {} ({}): sent {} ({mpps:.3} Mpps){counted}{own}", m.member, m.client, m.sent_packets);
    }
    if let Some(a) = r.receiver.as_ref().and_then(|f| f.arrivals.as_ref()) {
        blastdrop::say!("      arrivals at drop: {}", blastdrop::figures::arrivals_text(a));
    }
}

/// How the step's loss was counted, and what arrived beside the trial.
fn loss_detail(r: &StepRecord) -> String {
    let f = r.receiver.as_ref();
    let mut s = match (r.lost, f.and_then(|f| f.trial_unavailable.as_deref())) {
        (Some(lost), _) => format!(" ({lost} of {} lost, exact)", f.and_then(|f| f.trial.as_ref()).map_or(0, |t| t.sent)),
        (None, Some(why)) => format!(" (from frame counts: {why})"),
        (None, None) => String::new(),
    };
    if let Some(other) = f.and_then(|f| f.other_frames).filter(|&o| o > 0) {
        s.push_str(&format!("; {other} other frame(s) arrived beside the trial's, not counted in it"));
    }
    if let Some(e) = &r.accounting_error {
        s.push_str(&format!("; {e}"));
    }
    s
}

fn print_step(r: &StepRecord) {
    match (&r.error, r.received) {
        (Some(e), _) => blastdrop::say!("  step {} ({} queue(s), {} B): failed: {e}", r.step + 1, r.queues, r.size),
        (None, Some(rx)) => blastdrop::say!(
            "  step {} ({} queue(s), {} B, run {}): sent {:.3} Mpps, received {:.3} Mpps ({:.3} Gb/s wire), loss {:.3}%{}; limit: {}",
            r.step + 1,
            r.queues,
            r.size,
            r.run,
            r.sent.mpps,
            rx.mpps,
            rx.wire_gbps,
            r.loss_pct.unwrap_or(0.0),
            loss_detail(r),
            r.limit()
        ),
        (None, None) => blastdrop::say!(
            "  step {} ({} queue(s), {} B, run {}): sent {:.3} Mpps (sender-side; no receiver); limit: {}",
            r.step + 1,
            r.queues,
            r.size,
            r.run,
            r.sent.mpps,
            r.limit()
        ),
    }
    if let Some(b) = &r.shape_bunched {
        blastdrop::say!("    {} arrivals not held: {b}", r.shape);
    }
}
