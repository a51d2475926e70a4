//! A ladder: one measured step per (queue count, frame size), each with
//! drop's figures for the same window when there is a --peer; then the
//! table, the ceiling per frame size, and the JSON, CSV and SVG files.
//! steps.rs runs the steps, print.rs prints, record.rs analyses and writes.

mod print;
mod record;
mod steps;

use crate::fail::Failure;
use blastdrop::sender::Sender;
use blastdrop::session::Started;
use control::{PeerInfo, Request};
use ladder::Aggregate;

use crate::mode::LadderRun;
use crate::peer;
use crate::settings::Settings;
pub use record::schema;
use record::Outcome;

pub fn run(settings: &Settings, m: &mut LadderRun, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    let (mut peer, peer_info) = peer::connect(&settings.peer)?;
    if let Some(info) = peer_info.as_ref().filter(|_| settings.traffic.rx_queues.is_none()) {
        fit_to_receiver(m, info);
    }
    let m: &LadderRun = m;
    check_receiver(settings, m, sender, peer_info.as_ref())?;
    if let Some(info) = &peer_info {
        peer::check_veth_path(info, sender, settings.traffic.reflect)?;
    }
    if let Some(p) = peer.as_mut() {
        peer::join(p, &settings.peer, plan(settings, m), sender)?;
    }
    let receiver_side = peer.is_some();
    print::announce(settings, m, peer_info.as_ref());

    let (records, series, failure) = steps::run(settings, m, sender, peer.as_mut());

    let aggregates = Aggregate::from_records(&records);
    print::print_steps(settings, m, sender, peer_info.as_ref(), &records, &aggregates);
    let analysis = record::analyse(settings, &records, &aggregates, receiver_side);
    // The pace only caps steps that delivered it.
    let pace_capped = records.iter().any(|r| r.limit() == "none" && r.offered_mpps.is_some());
    print::print_analysis(&analysis, if pace_capped { settings.traffic.rates.clone() } else { Vec::new() });
    record::write_files(settings, m, started, sender, Outcome { records: &records, series: &series, aggregates, analysis, peer_info })?;
    if let Some(p) = peer.as_mut() {
        let _ = p.call(Request::Bye);
    }
    match failure {
        Some(e) => Err(Failure::runtime(format!("ladder stopped after {} step(s): {e}", records.len()))),
        None => Ok(()),
    }
}

/// Every step of the run, repeats included, as a group's members compare them.
fn plan(settings: &Settings, m: &LadderRun) -> control::StepPlan {
    let one = m.ladder.steps.iter().map(|s| control::PlannedStep {
        queues: s.queues,
        size: s.size,
        rx_queues: settings.traffic.rx_queues.unwrap_or(s.queues),
        rate: s.rate,
        shape: Some(s.shape.to_string()),
        size_mix: m.mix.as_ref().map(|x| x.label()),
        duration_ms: m.duration.as_millis() as u64,
        warmup_ms: settings.timing.warmup.as_millis() as u64,
    });
    let one: Vec<control::PlannedStep> = one.collect();
    control::StepPlan { steps: (0..settings.timing.repeat).flat_map(|_| one.iter().cloned()).collect() }
}

/// Leaves out, before blast's ports open for the largest step, the queue
/// counts its own ports cannot take (each gets its share of a step's queues,
/// as many RX as TX), saying so; a single count, or none that fits, is left
/// for the ports' own check to refuse as before (and a port that cannot be
/// found, for the opening to name).
pub fn fit_to_ports(ports: &[String], m: &mut LadderRun) {
    let Ok(infos) = ports.iter().map(|spec| dpdk::Port::info_of(spec)).collect::<Result<Vec<_>, _>>() else { return };
    let nports = infos.len() as u16;
    let fits = |q: u16| {
        infos.iter().enumerate().all(|(p, i)| layout::Spread::new(q, nports).queues_on(p as u16) <= i.max_rx_queues.min(i.max_tx_queues))
    };
    let Some(limit) = (1..=m.ladder.max_queues()).rev().find(|&q| fits(q)) else { return };
    let names: Vec<String> = infos.iter().map(|i| format!("{} ({})", i.name, i.driver)).collect();
    let port = format!("blast's port {}", names.join(", "));
    let what = if nports > 1 { "queues over its ports (RX and TX queue pairs)" } else { "queue pairs (RX and TX)" };
    if let ladder::Fit::Pruned(d) = m.ladder.fit_queues(limit, &port, what) {
        blastdrop::say!("blast: {}", d.line());
    }
}

/// Leaves out the queue counts drop cannot receive on (its RX queues follow
/// blast's queues here), saying so, so that the feasible steps run; a
/// single count, or none that fits, is left for `check_receiver` to refuse.
fn fit_to_receiver(m: &mut LadderRun, info: &PeerInfo) {
    let port = format!("drop's port {} ({})", info.port_name, info.driver);
    let lcores = format!("drop on {}", info.hostname);
    let (limit, who, what) = if info.max_rx_queues <= info.worker_lcores {
        (info.max_rx_queues, port.as_str(), "RX queues")
    } else {
        (info.worker_lcores, lcores.as_str(), "worker lcores (one per RX queue)")
    };
    if let ladder::Fit::Pruned(d) = m.ladder.fit_queues(limit, who, what) {
        blastdrop::say!("blast: {}", d.line());
    }
}

/// Refuses, before any step, what the receiver (or memif's pairing) cannot do.
fn check_receiver(settings: &Settings, m: &LadderRun, sender: &Sender, peer_info: Option<&PeerInfo>) -> Result<(), Failure> {
    if let Some(rx) = settings.traffic.rx_queues.filter(|_| sender.sides().iter().any(|s| s.port.peer_managed())) {
        if m.ladder.queues.iter().any(|&q| q != rx) {
            return Err(Failure::usage(format!(
                "--rx-queues {rx} on memif: memif pairs queues one to one, and drop would poll rings blast never made: leave --rx-queues out"
            )));
        }
    }
    if let Some(info) = peer_info {
        peer::check_receiver(
            info,
            settings.traffic.rx_queues.unwrap_or(m.ladder.max_queues()),
            m.ladder.max_size(),
            settings.traffic.reflect,
            "the ladder",
        )?;
        peer::check_port_pairing(info, sender.sides().len());
    }
    Ok(())
}
