//! A ladder: one measured step per (queue count, frame size), each with
//! drop's figures for the same window when there is a --peer; then the
//! table, the ceiling per frame size, and the JSON, CSV and SVG files.
//! steps.rs runs the steps, report.rs prints, record.rs analyses and writes.

mod record;
mod report;
mod steps;

use blastdrop::fail::Failure;
use blastdrop::sender::Sender;
use blastdrop::session::Started;
use control::{PeerInfo, Request};
use ladder::Aggregate;

use crate::args::Args;
use crate::mode::LadderRun;
use crate::peer;
pub use record::schema;
use record::Outcome;

pub fn run(args: &Args, m: &LadderRun, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    let (mut peer, peer_info) = peer::connect(args)?;
    check_receiver(args, m, sender, peer_info.as_ref())?;
    if let Some(p) = peer.as_mut() {
        peer::join(p, args, plan(args, m), sender)?;
    }
    let receiver_side = peer.is_some();
    report::announce(args, m, peer_info.as_ref());

    let (records, series, failure) = steps::run(args, m, sender, peer.as_mut());

    let aggregates = Aggregate::from_records(&records);
    report::print_steps(args, m, sender, peer_info.as_ref(), &records, &aggregates);
    let analysis = record::analyse(args, &records, &aggregates, receiver_side);
    // The pace only caps steps that delivered it.
    let pace_capped = records.iter().any(|r| r.limit() == "none" && r.offered_mpps.is_some());
    report::print_analysis(&analysis, if pace_capped { args.rates() } else { Vec::new() });
    record::write_files(args, m, started, sender, Outcome { records: &records, series: &series, aggregates, analysis, peer_info })?;
    if let Some(p) = peer.as_mut() {
        let _ = p.call(Request::Bye);
    }
    match failure {
        Some(e) => Err(Failure::runtime(format!("ladder stopped after {} step(s): {e}", records.len()))),
        None => Ok(()),
    }
}

/// Every step of the run, repeats included, as a group's members compare them.
fn plan(args: &Args, m: &LadderRun) -> control::StepPlan {
    let one = m.ladder.steps.iter().map(|s| control::PlannedStep {
        queues: s.queues,
        size: s.size,
        rx_queues: args.rx_queues.unwrap_or(s.queues),
        rate: s.rate,
        shape: Some(s.shape.to_string()),
        size_mix: m.mix.as_ref().map(|x| x.label()),
        duration_ms: m.duration.as_millis() as u64,
        warmup_ms: args.warmup.as_millis() as u64,
    });
    let one: Vec<control::PlannedStep> = one.collect();
    control::StepPlan { steps: (0..args.repeat).flat_map(|_| one.iter().cloned()).collect() }
}

/// Refuses, before any step, what the receiver (or memif's pairing) cannot do.
fn check_receiver(args: &Args, m: &LadderRun, sender: &Sender, peer_info: Option<&PeerInfo>) -> Result<(), Failure> {
    if let Some(rx) = args.rx_queues.filter(|_| sender.sides().iter().any(|s| s.port.peer_managed())) {
        if m.ladder.queues.iter().any(|&q| q != rx) {
            return Err(Failure::usage(format!(
                "--rx-queues {rx} on memif: memif pairs queues one to one, and drop would poll rings blast never made: leave --rx-queues out"
            )));
        }
    }
    if let Some(info) = peer_info {
        peer::check_receiver(info, args.rx_queues.unwrap_or(m.ladder.max_queues()), m.ladder.max_size(), args.reflect, "the ladder")?;
        peer::check_port_pairing(info, sender.sides().len());
    }
    Ok(())
}
