//! drop: receives on N RX queues, one lcore per queue, and counts what
//! really arrived, with loss, reordering and duplicates per stream from the
//! probe headers. With --listen it serves blast's ladder over a control
//! connection. Every figure here is receiver-side.

mod args;
mod backend;
// Each binary uses its part of what both share.
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod live;
mod mode;
mod print;
mod settings;
mod sockets;
mod start;
mod summary;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use blastdrop::figures::Rates;
use blastdrop::receiver::Receiver;
use blastdrop::record_file;
use blastdrop::session;
use blastdrop::signals;
use common::{cli, fail};
use control::{Backend, PeerInfo, ServerConfig};
use dpdk::PortStats;
use fail::Failure;

use args::Args;
use backend::{lock, DropBackend, History};
use live::live_loop;
use mode::{Mode, Served};
use print::print_summary;
use settings::{AsGiven, Settings};
use summary::{arrival_window, busiest_pct, most_stalled_pct, receiver_counters, summarize, PortSummary, Summary};

/// The flag that sets the largest frame, named when a port cannot take a
/// frame that large (common::fail).
const SIZE_FLAG: &str = "--max-size";

/// The record: the header every record begins with, then what drop received.
type Record<'a> = records::drop::DropRecord<&'a AsGiven<'a>>;

fn main() -> ExitCode {
    let args = match cli::parse_args::<Args>() {
        Ok(a) => a,
        Err(f) => return fail::report("drop", &f),
    };
    session::init_logging(args.verbose);
    signals::install();
    let (json, config) = (args.json.clone(), serde_json::to_value(&args).unwrap_or_default());
    let result = run(args);
    if let Err(f) = &result {
        fail::write_if_device_call("drop", json.as_deref(), config, f);
    }
    blastdrop::events::end(result.is_ok(), result.as_ref().err().map(|f| f.message.as_str()));
    fail::exit("drop", result)
}

fn run(args: Args) -> Result<(), Failure> {
    if cli::generated_docs::<Args>(args.generate_completions, args.generate_man)? {
        return Ok(());
    }
    if args.generate_schema {
        blastdrop::say!("{}", serde_json::to_string_pretty(&records::schema_of::<Record<'static>>()).expect("a schema serializes"));
        return Ok(());
    }
    mode::check(&args)?;
    dpdk::deadline::set_device_timeout(args.device_timeout);
    if args.json.as_deref().is_some_and(blastdrop::out::is_stdout) {
        blastdrop::out::human_to_stderr();
    }
    if let Some(path) = &args.events {
        blastdrop::events::open("drop", path)?;
        blastdrop::events::emit("start", &serde_json::json!({ "version": env!("CARGO_PKG_VERSION"), "config": &args }));
    }
    let mode = Mode::of(&args)?;
    if let Some(spec) = &args.socket {
        return sockets::receive(&args, spec, mode);
    }
    receive(&Settings::of(&args), mode)
}

/// Starts the receiver, counts (serving blast's steps when served) until
/// stopped, then reports.
fn receive(settings: &Settings, mode: Mode) -> Result<(), Failure> {
    let cfg = &settings.receiver;
    let endpoint = blastdrop::timeline::bind_metrics(&settings.outputs.timeline)?;
    let answering = mode.listener().map(start::StartingAnswer::begin).transpose()?;
    let started = session::start_eal("drop", &settings.eal, cfg.max_queues, &cfg.ports)?;
    let eal = started.eal.as_ref().expect("drop on a port starts the EAL");
    let mut receiver = Receiver::new(eal, cfg.clone())?;
    blastdrop::say!("drop: memory: {}", receiver.mempools[0].describe("RX mempools"));
    // An AF_XDP port cannot change its queue count once set up, and its
    // NIC's RSS spreads over every channel: it serves all of them from the start.
    let af_xdp = receiver.sides().iter().any(|s| dpdk::af_xdp::is_af_xdp(&s.info.driver));
    let first = if af_xdp { cfg.max_queues } else { mode.first_queues(cfg.max_queues) };
    receiver.start(first)?;
    let info = start::peer_info(&receiver, settings);
    start::announce(&receiver, settings, first);
    for side in receiver.sides().iter().filter(|s| dpdk::af_xdp::is_af_xdp(&s.info.driver)) {
        blastdrop::say!("drop: {}: {}", side.info.name, blastdrop::xdp::state(&side.info.name, &started.eal_args).describe());
    }
    for side in receiver.sides() {
        if let Some(from) = side.watch.kernel_source() {
            blastdrop::say!("drop: {}: NIC counters from {from}", side.info.name);
        }
    }
    drop(answering);

    let rx = Arc::new(Mutex::new(receiver));
    let history: Arc<Mutex<History>> = Arc::default();
    let server = match mode {
        Mode::Served(served) => Some(serve(served, &rx, info, &history)),
        Mode::Standalone => None,
    };
    let baseline_ports = lock(&rx).sides().iter().map(|s| s.port.stats()).collect::<Result<Vec<_>, _>>()?;
    let xs_start = lock(&rx).watch_samples();
    let columns = blastdrop::timeline::counter_columns(&lock(&rx).sides().iter().map(|s| &s.watch).collect::<Vec<_>>());
    let mut timeline = blastdrop::timeline::Timeline::new(&settings.outputs.timeline, columns, endpoint)?;
    blastdrop::unfinished::began_measuring();
    let last_sample = live_loop(&rx, PortStats::total(&baseline_ports), Instant::now(), settings, &mut timeline);
    signals::request_stop();
    if let Some(s) = server {
        let _ = s.join();
    }

    let mut receiver = lock(&rx);
    let (summary, totals) = finish(&mut receiver, cfg.count_only, &baseline_ports, last_sample, &xs_start)?;
    print_summary(&summary);
    timeline.final_totals(totals.queues.iter().map(|(q, t)| (*q, t.tally)), (!cfg.count_only).then_some(totals.tally.lost));
    let (series, series_analysis) = timeline.finish();
    blastdrop::say!("drop: over time: {}", series_analysis.sentence);
    if let Some(path) = &settings.outputs.series_svg {
        blastdrop::timeline::write_plot(path, &series, &series_analysis, "drop: received over time")?;
    }
    if totals.untracked > 0 {
        tracing::warn!(
            "{} probe frames had stream ids at or above --streams {}: raise --streams to check them",
            totals.untracked,
            cfg.stream_capacity
        );
    }
    if let Some(path) = &settings.outputs.json {
        let environment = blastdrop::environment::of_receiver(&started, &receiver, &totals)?;
        let history = history.lock().unwrap_or_else(|e| e.into_inner());
        let body = records::drop::DropBody { environment, summary, series, series_analysis, history: history.clone() };
        record_file::write_json(path, &Record::drop(&settings.config, body))?;
    }
    Ok(())
}

/// The control server on its own thread, driving the receiver for blast
/// until drop stops.
fn serve<R: backend::Lanes>(served: Served, rx: &Arc<Mutex<R>>, info: PeerInfo, history: &Arc<Mutex<History>>) -> JoinHandle<()> {
    let backend: Arc<Mutex<dyn Backend>> = Arc::new(Mutex::new(DropBackend {
        rx: rx.clone(),
        info,
        baseline: None,
        trial_starts: Err(seqtrack::NoExactAccount::NoWindow),
        history: history.clone(),
    }));
    let cfg = ServerConfig { secret: served.secret, ..Default::default() };
    std::thread::spawn(move || {
        if let Err(e) = control::serve(served.listener, backend, cfg, signals::stop_flag()) {
            tracing::error!("control server stopped: {e}");
        }
    })
}

/// Stops the lanes and makes the summary, with its verdict and each
/// port's share.
fn finish(
    receiver: &mut Receiver,
    count_only: bool,
    baseline_ports: &[PortStats],
    last_sample: PortStats,
    xs_start: &[blastdrop::xstats::Sample],
) -> Result<(Summary, blastdrop::receiver::Totals), Failure> {
    let hz = receiver.tsc_hz();
    // A device whose peer just left (memif) may refuse a last read: the
    // last live one stands in, as for counters that reset.
    let final_reads: Vec<_> = receiver.sides().iter().map(|s| s.port.stats()).collect();
    let final_stats = match final_reads.iter().find_map(|r| r.as_ref().err()) {
        None => PortStats::total(final_reads.iter().flatten()),
        Some(e) => {
            tracing::warn!("last read of the port counters failed ({e}): using the last live read");
            PortStats::default()
        }
    };
    let final_ports: Vec<PortStats> = final_reads.into_iter().map(Result::unwrap_or_default).collect();
    let totals = receiver.finish()?;
    // Some devices reset their counters mid-run (memif does when its peer
    // leaves): a final read below the last live one is not believed.
    let port_counters_reset = final_stats.ipackets < last_sample.ipackets;
    let baseline = PortStats::total(baseline_ports);
    let port_stats = if port_counters_reset { last_sample } else { final_stats }.since(&baseline);
    let mut summary = summarize(&totals, hz, port_stats, port_counters_reset);
    let xs = receiver.watch_between(xs_start, &receiver.watch_samples());
    let lanes = (busiest_pct(&totals), most_stalled_pct(&totals));
    let verdict =
        limits::receiver_verdict(&receiver_counters(totals.tally.packets, &port_stats, &xs, totals.probe.lost, !count_only, lanes));
    summary.limit = verdict.label();
    summary.verdict = verdict;
    if receiver.sides().len() > 1 {
        summary.ports = receiver
            .sides()
            .iter()
            .enumerate()
            .map(|(p, side)| {
                let share = totals.port_share(p as u16);
                PortSummary {
                    port: p as u16,
                    name: side.info.name.clone(),
                    received: Rates::over(share.tally.packets, share.tally.bytes, arrival_window(share.first_tsc, share.last_tsc, hz)),
                    probe: share.probe,
                    device: blastdrop::figures::port_stats(&final_ports[p].since(&baseline_ports[p])),
                }
            })
            .collect();
    }
    Ok((summary, totals))
}
