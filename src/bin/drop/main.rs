//! drop: receives on N RX queues, one lcore per queue, and counts what
//! really arrived, with loss, reordering and duplicates per stream from the
//! probe headers. With --listen it serves blast's ladder over a control
//! connection. Every figure here is receiver-side.

mod args;
mod backend;
mod live;
mod print;
mod summary;

use std::net::TcpListener;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use blastdrop::fail::{self, Failure};
use blastdrop::receiver::{Receiver, ReceiverConfig};
use blastdrop::report::{self, Environment, Rates};
use blastdrop::session;
use blastdrop::signals;
use control::{Backend, PeerInfo, ServerConfig};
use dpdk::PortStats;

use args::Args;
use backend::{lock, DropBackend, History};
use live::live_loop;
use print::print_summary;
use summary::{arrival_window, busiest_pct, receiver_counters, summarize, PortSummary, Summary};

/// drop --json record: receiver-side figures, the verdict, and with --listen
/// every window served (docs/json.md).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "DropRecord")]
struct Record<'a> {
    tool: &'static str,
    version: &'static str,
    config: &'a Args,
    environment: Environment,
    summary: Summary,
    /// With --listen: the measured windows served (the last 1000), as sent
    /// to blast, and the sessions (the last 100); counts of what was not kept.
    #[serde(flatten)]
    history: &'a History,
}

fn main() -> ExitCode {
    let args = match session::parse_args::<Args>() {
        Ok(a) => a,
        Err(f) => return fail::report("drop", &f),
    };
    session::init_logging(args.verbose);
    signals::install();
    let result = run(args);
    blastdrop::events::end(result.is_ok(), result.as_ref().err().map(|f| f.message.as_str()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail::report("drop", &f),
    }
}

fn run(args: Args) -> Result<(), Failure> {
    if session::generated_docs::<Args>(args.generate_completions, args.generate_man)? {
        return Ok(());
    }
    if args.generate_schema {
        blastdrop::say!(
            "{}",
            serde_json::to_string_pretty(&blastdrop::report::schema_of::<Record<'static>>()).expect("a schema serializes")
        );
        return Ok(());
    }
    check(&args)?;
    if args.json.as_deref().is_some_and(blastdrop::out::is_stdout) {
        blastdrop::out::human_to_stderr();
    }
    if let Some(path) = &args.events {
        blastdrop::events::open("drop", path)?;
        blastdrop::events::emit("start", &serde_json::json!({ "version": env!("CARGO_PKG_VERSION"), "config": &args }));
    }
    let secret = secret(&args)?;
    let listener = listener(&args, secret.is_some())?;
    let started = session::start_eal("drop", &args.eal, args.queues, &args.port)?;
    let mut receiver = Receiver::new(&started.eal, receiver_config(&args))?;
    blastdrop::say!("drop: memory: {}", receiver.mempools[0].describe("RX mempools"));
    // Listening, a ladder chooses the queue count; start small.
    let first = if listener.is_some() { 1 } else { args.queues };
    receiver.start(first)?;
    let info = peer_info(&receiver, &args);
    announce(&receiver, &args, first);

    let rx = Arc::new(Mutex::new(receiver));
    let history: Arc<Mutex<History>> = Arc::default();
    let server = listener.map(|l| {
        let backend: Arc<Mutex<dyn Backend>> = Arc::new(Mutex::new(DropBackend {
            rx: rx.clone(),
            info,
            baseline: None,
            trial_starts: Err("no window open".into()),
            history: history.clone(),
        }));
        let cfg = ServerConfig { secret: secret.map(|(s, _)| s), ..Default::default() };
        std::thread::spawn(move || {
            if let Err(e) = control::serve(l, backend, cfg, signals::stop_flag()) {
                tracing::error!("control server stopped: {e}");
            }
        })
    });

    let baseline_ports = lock(&rx).sides().iter().map(|s| s.port.stats()).collect::<Result<Vec<_>, _>>()?;
    let xs_start = lock(&rx).watch_samples();
    let last_sample = live_loop(&rx, PortStats::total(&baseline_ports), Instant::now(), &args);
    signals::request_stop();
    if let Some(s) = server {
        let _ = s.join();
    }

    let mut receiver = lock(&rx);
    let (summary, totals) = finish(&mut receiver, &args, &baseline_ports, last_sample, &xs_start)?;
    print_summary(&summary);
    if totals.untracked > 0 {
        tracing::warn!(
            "{} probe frames had stream ids at or above --streams {}: raise --streams to check them",
            totals.untracked,
            args.streams
        );
    }
    if let Some(path) = &args.json {
        let environment = blastdrop::environment::of_receiver(&started, &receiver, &totals)?;
        let history = history.lock().unwrap_or_else(|e| e.into_inner());
        let record = Record { tool: "drop", version: env!("CARGO_PKG_VERSION"), config: &args, environment, summary, history: &history };
        report::write_json(path, &record)?;
    }
    Ok(())
}

/// What clap cannot check alone, before anything starts.
fn check(args: &Args) -> Result<(), Failure> {
    if args.one_way && args.count_only {
        return Err(Failure::usage("--one-way reads every probe and --count-only reads none: drop one of them"));
    }
    if !args.one_way && args.arrival_clock != args::ArrivalClockArg::Auto {
        return Err(Failure::usage("--arrival-clock says where --one-way reads arrivals: add --one-way, or leave --arrival-clock out"));
    }
    if args.streams == 0 || args.streams > 65536 {
        return Err(Failure::usage("--streams must be from 1 to 65536"));
    }
    session::check_outputs(&[("--json", args.json.as_deref()), ("--events", args.events.as_deref())])
}

/// The shared secret, from --token-file, BLASTDROP_TOKEN or --token.
fn secret(args: &Args) -> Result<Option<(control::Secret, control::SecretSource)>, Failure> {
    let secret = control::Secret::load(args.token_file.as_deref(), std::env::var(control::SECRET_ENV).ok(), args.token.as_deref())
        .map_err(blastdrop::session::secret_failure)?;
    if let Some((_, control::SecretSource::CommandLine)) = &secret {
        tracing::warn!("--token shows in ps and /proc/PID/cmdline: prefer --token-file FILE or BLASTDROP_TOKEN");
    }
    Ok(secret)
}

/// The control port, when --listen asks for one: an explicit address, and
/// a secret unless only this host can reach it.
fn listener(args: &Args, has_secret: bool) -> Result<Option<TcpListener>, Failure> {
    let Some(addr) = &args.listen else { return Ok(None) };
    let addrs = control::listen_addrs(addr).map_err(blastdrop::session::listen_failure)?;
    if !has_secret && !control::all_loopback(&addrs) {
        return Err(Failure::usage(format!(
            "--listen {addr} is reachable from other hosts: give a shared secret (--token-file FILE or BLASTDROP_TOKEN), or listen on 127.0.0.1"
        )));
    }
    TcpListener::bind(&addrs[..])
        .map(Some)
        .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}; give ADDR:PORT of this host")))
}

fn receiver_config(args: &Args) -> ReceiverConfig {
    ReceiverConfig {
        ports: args.port.clone(),
        max_queues: args.queues,
        max_size: args.max_size,
        rx_ring: args.rx_ring,
        burst: args.burst,
        stream_capacity: args.streams,
        cost_per_frame: args.rx_cost,
        count_only: args.count_only,
        reflect: args.reflect,
        interval_us: if args.count_only { 0 } else { args.arrival_interval_us },
        one_way: args.one_way,
        arrival_clock: args.arrival_clock.into(),
        mbufs: args.rx_mbufs,
        watch_xstats: args.watch_xstat.clone(),
        xstats_interval: args.xstats_interval,
    }
}

/// drop as blast's hello answer describes it.
fn peer_info(receiver: &Receiver, args: &Args) -> PeerInfo {
    let info = receiver.info();
    let nports = receiver.sides().len() as u16;
    let names: Vec<String> = receiver.sides().iter().map(|s| s.info.name.clone()).collect();
    PeerInfo {
        hostname: report::hostname(),
        dpdk: dpdk::runtime_version(),
        port_name: names.join("+"),
        driver: info.driver.clone(),
        // A queue count is possible while each port's share fits that port.
        max_rx_queues: (1..=args.queues)
            .take_while(|&q| {
                receiver.sides().iter().enumerate().all(|(p, s)| layout::Spread::new(q, nports).queues_on(p as u16) <= s.info.max_rx_queues)
            })
            .last()
            .unwrap_or(1),
        ports: nports,
        worker_lcores: args.queues,
        max_size: args.max_size,
        rss: info.rss_offloads != 0,
        cpu_model: report::cpu_model(),
        reflect: args.reflect,
    }
}

/// The start-up lines: ports, queues, what is measured.
fn announce(receiver: &Receiver, args: &Args, first: u16) {
    let configured = receiver.port().configured().cloned().unwrap_or_default();
    if args.queues > 1 && !configured.rss {
        tracing::warn!(
            "{} has no RSS: each RX queue gets only what its peer queue sends (memif pairs queues one to one)",
            receiver.info().driver
        );
    }
    for side in receiver.sides() {
        if let Some(state) = &side.ena {
            blastdrop::say!("drop: {}: {}", side.info.name, state.describe());
        }
    }
    let nports = receiver.sides().len();
    let described: Vec<String> = receiver.sides().iter().map(|s| format!("{} ({}, {})", s.port.id(), s.info.name, s.info.driver)).collect();
    blastdrop::say!(
        "drop: port{} {}, {} queue(s), frames up to {} B, link {}{}{}; receiver-side figures",
        if nports > 1 { "s" } else { "" },
        described.join(" + "),
        first,
        args.max_size,
        if receiver.links_up() { "up" } else { "down (waiting for the peer)" },
        if args.count_only { ", counting only (no probe parsing: no loss or reorder figures)" } else { "" },
        match &args.listen {
            Some(a) => format!(", control on {a} (up to {} queues)", args.queues),
            None => String::new(),
        }
    );
}

/// Stops the lanes and makes the summary, with its verdict and each
/// port's share.
fn finish(
    receiver: &mut Receiver,
    args: &Args,
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
    let verdict = limits::receiver_verdict(&receiver_counters(
        totals.tally.packets,
        &summary.port,
        &xs,
        totals.probe.lost,
        !args.count_only,
        busiest_pct(&totals),
    ));
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
                    device: final_ports[p].since(&baseline_ports[p]),
                }
            })
            .collect();
    }
    Ok((summary, totals))
}
