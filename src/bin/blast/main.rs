//! blast: sends UDP frames from N TX queues, one lcore per queue. Alone it
//! reports what the device accepted (sender-side); with `--peer` it drives
//! `drop --listen` through a ladder of steps and reports what arrived.
//!
//! The flags are checked and resolved once into a `Mode` (mode.rs); `main`
//! starts the EAL and the sender and hands them to that mode's run.

mod args;
// Each binary uses its part of what both share.
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod cross_check;
mod knee_run;
mod ladder_run;
mod mode;
mod over_time;
mod paths_cmd;
mod peer;
mod preflight;
mod replay;
mod report_cmd;
mod settings;
mod single;

use std::process::ExitCode;

use blastdrop::sender::Sender;
use blastdrop::session::{self, Started};
use common::{cli, fail};
use fail::Failure;

/// The flag that sets the frame size, named when a port cannot take a frame
/// that large (common::fail).
const SIZE_FLAG: &str = "--size";
use blastdrop::signals;
use blastdrop::timeline::MetricsEndpoint;
use blastdrop::{events, out};

use args::Args;
use mode::Mode;
use settings::Settings;

fn main() -> ExitCode {
    // `blast report` reads records and starts no EAL: it parses its own flags.
    if std::env::args_os().nth(1).is_some_and(|a| a == "report") {
        let argv: Vec<_> = std::iter::once("blast report".into()).chain(std::env::args_os().skip(2)).collect();
        return match report_cmd::main(argv) {
            Ok(()) => ExitCode::SUCCESS,
            Err(f) => fail::report("blast report", &f),
        };
    }
    // `blast paths` runs blast itself once per run: it parses its own flags.
    if std::env::args_os().nth(1).is_some_and(|a| a == "paths") {
        let argv: Vec<_> = std::iter::once("blast paths".into()).chain(std::env::args_os().skip(2)).collect();
        session::init_logging(0);
        return match paths_cmd::main(argv) {
            Ok(()) => ExitCode::SUCCESS,
            Err(f) => fail::report("blast paths", &f),
        };
    }
    let args = match cli::parse_args_from::<Args>(args::size_mix_shorthand(std::env::args_os())) {
        Ok(a) => a,
        Err(f) => return fail::report("blast", &f),
    };
    session::init_logging(args.verbose);
    signals::install();
    let (json, config) = (args.json.clone(), serde_json::to_value(&args).unwrap_or_default());
    let result = run(args);
    if let Err(f) = &result {
        fail::write_if_device_call("blast", json.as_deref(), config, f);
    }
    events::end(result.is_ok(), result.as_ref().err().map(|f| f.message.as_str()));
    fail::exit("blast", result)
}

fn run(args: Args) -> Result<(), Failure> {
    if cli::generated_docs::<Args>(args.generate_completions, args.generate_man)? {
        return Ok(());
    }
    if let Some(kind) = &args.generate_schema {
        let schema = match kind.as_str() {
            "single" => single::schema(),
            "ladder" => ladder_run::schema(),
            "knee" => knee_run::schema(),
            "mlr" => knee_run::mlr_schema(),
            "replay" => replay::schema(),
            "paths" => paths_cmd::schema(),
            "not-started" => blastdrop::unfinished::schema(),
            _ => events::schema(),
        };
        blastdrop::say!("{}", serde_json::to_string_pretty(&schema).expect("a schema serializes"));
        return Ok(());
    }
    let mut mode = Mode::from_args(&args)?;
    let settings = Settings::of(&args)?;
    dpdk::deadline::set_device_timeout(args.device_timeout);
    // A record or stream on stdout: every human line goes to stderr.
    if args.json.as_deref().is_some_and(out::is_stdout) {
        out::human_to_stderr();
    }
    if let Some(path) = &args.events {
        events::open("blast", path)?;
        events::emit("start", &serde_json::json!({ "mode": mode.name(), "version": env!("CARGO_PKG_VERSION"), "config": &args }));
    }
    let endpoint = blastdrop::timeline::bind_metrics(&settings.outputs.timeline)?;
    // The socket path starts no EAL.
    let started = match settings.socket {
        Some(_) => session::Started::without_eal(),
        None => session::start_eal("blast", &args.eal, settings.sender.max_queues, &settings.sender.ports)?,
    };
    let largest = match &mode {
        Mode::Replay(r) => Some(r.capture.largest() as u32),
        _ => None,
    };
    // A ladder drops the queue counts its ports cannot take before they open for the largest.
    let max_queues = match &mut mode {
        Mode::Ladder(m) if settings.socket.is_none() => {
            ladder_run::fit_to_ports(&settings.sender.ports, m);
            m.ladder.max_queues()
        }
        _ => settings.sender.max_queues,
    };
    let mut sender = sender(&settings, &started, largest, max_queues, endpoint)?;
    preflight::preflight(&settings, &sender)?;
    let result = match mode {
        Mode::Single(m) => single::run(&settings, &m, &started, &mut sender),
        Mode::Ladder(mut m) => ladder_run::run(&settings, &mut m, &started, &mut sender),
        Mode::Knee(m) => knee_run::run(&settings, &m, &started, &mut sender),
        Mode::Replay(m) => replay::run(&settings, m, &started, &mut sender),
    };
    drop(sender);
    result
}

/// The sender, its ports open for the largest step (or the capture's
/// largest frame, `largest`), its timeline on `endpoint`, and its memory said.
fn sender(
    settings: &Settings,
    started: &Started,
    largest: Option<u32>,
    max_queues: u16,
    endpoint: MetricsEndpoint,
) -> Result<Sender, Failure> {
    let mut cfg = settings.sender.clone();
    cfg.max_queues = max_queues;
    if let Some(largest) = largest {
        cfg.max_size = largest;
        cfg.size_from_capture = true;
    }
    let mut sender = match &settings.socket {
        Some(socket) => Sender::on_sockets(cfg, socket.clone())?,
        None => Sender::new(started.eal.as_ref().ok_or_else(|| Failure::runtime("the EAL did not start"))?, cfg)?,
    };
    let columns = blastdrop::timeline::counter_columns(&sender.watches());
    sender.set_timeline(blastdrop::timeline::Timeline::new(&settings.outputs.timeline, columns, endpoint)?);
    if let Some(side) = sender.socket_side() {
        blastdrop::say!(
            "blast: sending on UDP sockets from {} ({}, MTU {}) to {}, {}, lanes on CPUs {:?}",
            side.cfg.src_ip,
            side.interface,
            side.mtu,
            side.cfg.dest,
            if side.cfg.segments > 1 { format!("up to {} datagrams per GSO buffer", side.cfg.segments) } else { "no GSO".into() },
            side.cfg.cpus
        );
        return Ok(sender);
    }
    blastdrop::say!(
        "blast: memory: {}; {}",
        sender.mempools[0].describe("TX mempools"),
        sender.mempools[1].describe(if settings.traffic.reflect {
            "RX mempool (reflected probes)"
        } else {
            "RX mempool (unused by blast)"
        })
    );
    Ok(sender)
}
