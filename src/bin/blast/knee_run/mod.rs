//! --find-knee: the highest rate this traffic (queues, size, flows, shape)
//! crosses the path with loss, and optionally a latency percentile, within
//! the user's limits. The search logic is in crates/knee; search.rs runs
//! its trials, print.rs prints them and the results, record.rs keeps the
//! JSON record.

mod b2b;
mod mlr;
mod print;
mod record;
mod search;

use std::time::Instant;

use crate::fail::Failure;
use blastdrop::sender::Sender;
use blastdrop::session::Started;
use knee::{Goal, Qualifiers};

use crate::mode::{Knee, Method};
use crate::peer;
use crate::settings::Settings;
pub use mlr::schema as mlr_schema;
pub use record::schema;
use record::{knee_result, KneeBody, KneeRecord};
use search::Trials;

pub fn run(settings: &Settings, m: &Knee, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    let (mut peer, peer_info) = peer::connect(&settings.peer)?;
    let info = peer_info.as_ref().expect("--find-knee is checked to have --peer");
    peer::check_receiver(info, m.rx_queues, m.size, settings.traffic.reflect, "the knee search")?;
    peer::check_port_pairing(info, sender.sides().len());
    peer::check_veth_path(info, sender, settings.traffic.reflect)?;
    let p = peer.as_mut().expect("connected");
    peer::prepare_step(p, sender, m.rx_queues, m.size).map_err(Failure::runtime)?;
    // Configured now, so the qualifiers carry the MTU in force.
    sender.set_queues(m.queues)?;
    if let Method::Mlr(goals) = &m.method {
        return mlr::run(settings, m, goals, started, sender, p, &peer_info);
    }

    let began = Instant::now();
    let mut trials = Trials::new(settings, m, sender, p);
    let max_rate = trials.top()?;
    let qualifiers = Qualifiers { queues: m.queues, size: m.size, flows: m.flows, mtu: trials.sender.mtu(), shape: m.shape.to_string() };
    print::announce(settings, m, max_rate, &qualifiers, info);
    let mut searched = trials.search(max_rate)?;
    let result = knee_result(settings, &searched.search, &searched.trials, &qualifiers);
    // Latency under load, below the knee.
    let mut under_load = Vec::new();
    if settings.traffic.reflect && !searched.interrupted && searched.failure.is_none() {
        if let Some(k) = searched.search.result(Goal::Pdr) {
            under_load = trials.under_load(k, &[10, 50, 90], 0.0, &mut searched.failure)?;
        }
    }
    let mut back_to_back = None;
    if let (Some((reps, limit)), false, None) = (m.back_to_back, searched.interrupted, &searched.failure) {
        let t =
            searched.search.result(Goal::Ndr).map(|r| (r, "the NDR of this knee search (confirmed by a full-length trial)".to_string()));
        let mut f = None;
        back_to_back = b2b::run(&mut trials, reps, limit, t, &mut f)?;
        searched.failure = f.map(records::step::StepFailure);
    }
    let n = trials.n;

    print::print_result(settings, &searched.search, &result, &qualifiers, max_rate, &under_load);
    eprintln!("blast: knee search took {:.0?}, {} trials", began.elapsed(), n);

    let title = plot_title(sender, m);
    let (series, series_analysis) = crate::over_time::finish(&settings.outputs, sender, "blast: knee search, sent over time")?;
    record::write_plot_and_csv(settings, &searched.trials, &result, &under_load, &title)?;
    if let Some(path) = &settings.outputs.json {
        let body = KneeBody {
            environment: peer::Environments {
                sender: blastdrop::environment::of_sender(started, sender, m.queues),
                receiver: peer_info.clone(),
            },
            qualifiers,
            max_rate_mpps: max_rate / 1e6,
            result,
            trials: searched.trials,
            latency_under_load: under_load,
            back_to_back,
            interrupted: searched.interrupted,
            series,
            series_analysis,
        };
        record::write(&KneeRecord::blast("knee", &settings.config, body), path)?;
    }
    if let Some(e) = searched.failure {
        return Err(Failure::runtime(format!("knee search stopped: {e}")));
    }
    Ok(())
}

/// The plot's title: the port and the traffic searched.
fn plot_title(sender: &Sender, m: &Knee) -> String {
    format!(
        "blastdrop knee: {} ({}), {} queue(s), {} B, {} flow(s), {}",
        sender.info().name,
        sender.info().driver,
        m.queues,
        m.size,
        m.flows,
        m.shape
    )
}
