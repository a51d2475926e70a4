//! One step, no receiver: a line a second and a sender-side summary.
//! summary.rs works the summary out, print.rs prints, record.rs keeps
//! the JSON record.

mod print;
mod record;
mod summary;

use std::time::Duration;

use crate::fail::Failure;
use blastdrop::record_file;
use blastdrop::sender::{NoPeer, Sender, StepParams};
use blastdrop::session::Started;

use crate::mode::Single;
use crate::settings::Settings;
pub use print::frames_text;
pub use record::schema;
use record::{Record, SingleBody};

pub fn run(settings: &Settings, m: &Single, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    sender.set_queues(m.queues)?;
    print::announce(settings.traffic.paced_rate, m, sender);
    for side in sender.sides().iter().filter(|s| dpdk::af_xdp::is_af_xdp(&s.info.driver)) {
        blastdrop::say!("blast: {}: {}", side.info.name, blastdrop::xdp::state(&side.info.name, &started.eal_args).describe());
    }
    for side in sender.sides() {
        if let Some(from) = side.watch.kernel_source() {
            blastdrop::say!("blast: {}: NIC counters from {from}", side.info.name);
        }
    }
    let params = StepParams {
        queues: m.queues,
        size: m.size,
        mix: m.mix.clone(),
        flows: m.flows,
        rate: settings.traffic.paced_rate,
        count: m.count,
        duration: m.duration,
        warmup: Duration::ZERO,
        window: false,
        live: true,
        shape: m.shape,
        reflect: settings.traffic.reflect,
        replay: None,
        c_lanes: false,
    };
    let before = sender.read_counters();
    let cpu_before = blastdrop::host::CpuTimes::now();
    let outcome = sender.run_step(&params, &mut NoPeer)?;
    let host_steal_pct = blastdrop::host::CpuTimes::steal_pct(cpu_before, blastdrop::host::CpuTimes::now());
    let after = sender.read_counters();
    let summary = summary::summarize(settings.traffic.paced_rate, m, sender, &outcome, (&before, &after), host_steal_pct);
    print::print_summary(&summary, sender.socket_side().is_some());
    let (series, series_analysis) = crate::over_time::finish(&settings.outputs, sender, "blast: sent over time")?;
    let cross_check = match settings.traffic.cross_check && outcome.failure.is_none() && !outcome.interrupted {
        true => cross_check(m, sender, &params, &summary)?,
        false => None,
    };
    if let Some(path) = &settings.outputs.json {
        let environment = blastdrop::environment::of_sender(started, sender, m.queues);
        let record = Record::blast(
            "single",
            &settings.config,
            SingleBody { flows: m.flows, src_mac: sender.src_mac(), environment, summary, series, series_analysis, cross_check },
        );
        record_file::write_json(path, &record)?;
    }
    match outcome.failure {
        Some(msg) => Err(Failure::runtime(msg)),
        None => Ok(()),
    }
}

/// --cross-check of a single run: unpaced, or held back by the sender, it
/// runs again at once with the C lanes (the same count or duration),
/// and the two summaries are compared sender-side as steps.
fn cross_check(
    m: &Single,
    sender: &mut Sender,
    params: &StepParams,
    summary: &record::Summary,
) -> Result<Option<ladder::CrossCheck>, Failure> {
    let blast = as_step(m, summary);
    if !crate::cross_check::wanted(&blast) {
        return Ok(None);
    }
    let c_params = StepParams { rate: None, shape: pace::Shape::Open, c_lanes: true, live: false, ..params.clone() };
    blastdrop::say!("blast: cross-check: the same run again with the C lanes (blast-ref's loop), unpaced");
    let before = sender.read_counters();
    let cpu_before = blastdrop::host::CpuTimes::now();
    let outcome = sender.run_step(&c_params, &mut NoPeer)?;
    let steal = blastdrop::host::CpuTimes::steal_pct(cpu_before, blastdrop::host::CpuTimes::now());
    let after = sender.read_counters();
    let c = summary::summarize(None, m, sender, &outcome, (&before, &after), steal);
    if let Some(t) = sender.timeline_mut() {
        let _ = t.cut();
    }
    let mut c_step = as_step(m, &c);
    if let Some(f) = &outcome.failure {
        c_step.error = Some(records::step::StepFailure(f.to_string()));
    }
    let check = ladder::CrossCheck::judge(&blast, c_step);
    blastdrop::say!("blast: cross-check: {}", check.sentence);
    Ok(Some(check))
}

/// A single run's summary in a step's terms (sender-side), for the cross-check.
fn as_step(m: &Single, s: &record::Summary) -> ladder::StepRecord {
    ladder::StepRecord {
        queues: m.queues,
        size: m.size,
        flows: m.flows,
        shape: s.shape.clone(),
        offered_mpps: s.offered_mpps,
        sent: s.sent,
        sender_cycles_per_packet: s.busy.cycles_per_packet,
        sender_ns_per_packet: s.busy.ns_per_packet,
        ring_full_retries: s.ring_full_retries,
        sender_opackets: s.port.opackets,
        sender_oerrors: s.port.oerrors,
        verdict: Some(s.verdict.clone()),
        stalls: Some(ladder::StepStalls { sender: s.stalls, sender_host_steal_pct: s.host_steal_pct, ..Default::default() }),
        error: s.interrupted.then(|| records::step::StepFailure("interrupted".into())),
        ..Default::default()
    }
}
