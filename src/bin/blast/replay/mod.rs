//! --pcap: a capture replayed at its timing, with a sender-side summary
//! that says how closely the timing was kept. summary.rs works the summary
//! out, print.rs prints, record.rs keeps the JSON record.

mod print;
mod record;
mod summary;

use std::sync::Arc;

use crate::fail::Failure;
use blastdrop::record_file;
use blastdrop::sender::{Sender, StepParams};
use blastdrop::session::Started;
use blastdrop::tx::replay::Replay;
use capture::Rewrite;

use crate::mode::ReplayRun;
use crate::peer::PeerHooks;
use crate::settings::{RewriteSettings, Settings};
pub use record::schema;
use record::{capture_record, Record, ReplayBody};

pub fn run(settings: &Settings, m: ReplayRun, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    let (mut peer, peer_info) = crate::peer::connect(&settings.peer)?;
    let largest = m.capture.largest() as u32;
    if let (Some(p), Some(info)) = (peer.as_mut(), peer_info.as_ref()) {
        crate::peer::check_receiver(info, m.queues, largest, false, "the replay")?;
        crate::peer::prepare_step(p, sender, m.queues, largest).map_err(Failure::runtime)?;
    }
    sender.set_queues(m.queues)?;
    let ReplayRun { queues, file, mut capture, schedule, duration } = m;
    let rewrite = (!settings.rewrite.keep_addresses).then(|| capture.rewrite(&rewrite_for(sender, &settings.rewrite)));
    let (replay, probes) = Replay::new(capture, schedule, (!settings.rewrite.keep_payload).then(|| sender.run_id()));
    let record = capture_record(&file, &replay.capture, rewrite, probes);
    print::announce(&record, &replay.schedule, queues, sender, peer_info.as_ref());
    let replay = Arc::new(replay);
    let params = params(queues, largest, duration, peer.is_some(), replay.clone());
    let before = sender.read_counters();
    let mut hooks = PeerHooks::new(peer.as_mut(), None);
    let outcome = sender.run_step(&params, &mut hooks)?;
    let figures = hooks.take_figures();
    let summary = summary::summarize(&replay, sender, &outcome, &before, figures);
    print::print_summary(&summary);
    let (series, series_analysis) = crate::over_time::finish(&settings.outputs, sender, "blast: replay sent over time")?;
    if let Some(path) = &settings.outputs.json {
        let environment = blastdrop::environment::of_sender(started, sender, queues);
        let rec = Record::blast(
            "replay",
            &settings.config,
            ReplayBody { environment, receiver_environment: peer_info, capture: record, summary, series, series_analysis },
        );
        record_file::write_json(path, &rec)?;
    }
    if let Some(p) = peer.as_mut() {
        let _ = p.call(control::Request::Bye);
    }
    match outcome.failure {
        Some(msg) => Err(Failure::runtime(msg)),
        None => Ok(()),
    }
}

/// The replay as one step, unpaced (the schedule paces it); with drop
/// --listen (`window`), one measured window around the whole replay.
fn params(queues: u16, largest: u32, duration: Option<std::time::Duration>, window: bool, replay: Arc<Replay>) -> StepParams {
    StepParams {
        queues,
        size: largest,
        mix: None,
        flows: u32::from(queues),
        rate: None,
        count: None,
        duration,
        warmup: std::time::Duration::ZERO,
        window,
        live: true,
        shape: pace::Shape::Open,
        reflect: false,
        replay: Some(replay),
        c_lanes: false,
    }
}

/// The first port's addresses (a replay sends on one port's queues), and
/// the IPv6 ones given.
fn rewrite_for(sender: &Sender, settings: &RewriteSettings) -> Rewrite {
    let side = &sender.sides()[0];
    let a = &side.addressing;
    let ipv6 = settings.ipv6;
    Rewrite { src_mac: side.src_mac, dst_mac: a.dst_mac, src_ip: a.src_ip, dst_ip: a.dst_ip, ipv6 }
}
