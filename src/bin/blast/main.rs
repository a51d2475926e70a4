//! blast: sends UDP frames from N TX queues, one lcore per queue. Alone it
//! reports what the device accepted (sender-side); with `--peer` it drives
//! `drop --listen` through a ladder of steps and reports what arrived.
//!
//! The flags are checked and resolved once into a `Mode` (mode.rs); `main`
//! starts the EAL and the sender and hands them to that mode's run.

mod args;
mod knee_run;
mod ladder_run;
mod mode;
mod over_time;
mod peer;
mod preflight;
mod replay;
mod report_cmd;
mod single;

use std::process::ExitCode;

use blastdrop::fail::{self, Failure};
use blastdrop::sender::{Addressing, Sender, SenderConfig};
use blastdrop::session::{self, Started};
use blastdrop::signals;
use blastdrop::timeline::MetricsEndpoint;
use blastdrop::{events, out};

use args::Args;
use mode::Mode;

fn main() -> ExitCode {
    // `blast report` reads records and starts no EAL: it parses its own flags.
    if std::env::args_os().nth(1).is_some_and(|a| a == "report") {
        let argv: Vec<_> = std::iter::once("blast report".into()).chain(std::env::args_os().skip(2)).collect();
        return match report_cmd::main(argv) {
            Ok(()) => ExitCode::SUCCESS,
            Err(f) => fail::report("blast report", &f),
        };
    }
    let args = match session::parse_args_from::<Args>(args::size_mix_shorthand(std::env::args_os())) {
        Ok(a) => a,
        Err(f) => return fail::report("blast", &f),
    };
    session::init_logging(args.verbose);
    signals::install();
    let (json, config) = (args.json.clone(), serde_json::to_value(&args).unwrap_or_default());
    let result = run(args);
    if let Err(f) = &result {
        blastdrop::unfinished::write_if_device_call("blast", json.as_deref(), config, f);
    }
    events::end(result.is_ok(), result.as_ref().err().map(|f| f.message.as_str()));
    blastdrop::exit::exit("blast", result)
}

fn run(args: Args) -> Result<(), Failure> {
    if session::generated_docs::<Args>(args.generate_completions, args.generate_man)? {
        return Ok(());
    }
    if let Some(kind) = &args.generate_schema {
        let schema = match kind.as_str() {
            "single" => single::schema(),
            "ladder" => ladder_run::schema(),
            "knee" => knee_run::schema(),
            "replay" => replay::schema(),
            "not-started" => blastdrop::unfinished::schema(),
            _ => events::schema(),
        };
        blastdrop::say!("{}", serde_json::to_string_pretty(&schema).expect("a schema serializes"));
        return Ok(());
    }
    let mut mode = Mode::from_args(&args)?;
    dpdk::deadline::set_device_timeout(args.device_timeout);
    // A record or stream on stdout: every human line goes to stderr.
    if args.json.as_deref().is_some_and(out::is_stdout) {
        out::human_to_stderr();
    }
    if let Some(path) = &args.events {
        events::open("blast", path)?;
        events::emit("start", &serde_json::json!({ "mode": mode.name(), "version": env!("CARGO_PKG_VERSION"), "config": &args }));
    }
    let endpoint = blastdrop::timeline::bind_metrics(&args.timeline.config("blast", "sent"))?;
    let started = session::start_eal("blast", &args.eal, args.max_queues(), &args.port)?;
    let largest = match &mode {
        Mode::Replay(r) => Some(r.capture.largest() as u32),
        _ => None,
    };
    // A ladder drops the queue counts its ports cannot take before they open for the largest.
    let max_queues = match &mut mode {
        Mode::Ladder(m) => {
            ladder_run::fit_to_ports(&args, m);
            m.ladder.max_queues()
        }
        _ => args.max_queues(),
    };
    let mut sender = sender(&args, &started, largest, max_queues, endpoint)?;
    preflight::preflight(&args, &sender)?;
    let result = match mode {
        Mode::Single(m) => single::run(&args, &m, &started, &mut sender),
        Mode::Ladder(mut m) => ladder_run::run(&args, &mut m, &started, &mut sender),
        Mode::Knee(m) => knee_run::run(&args, &m, &started, &mut sender),
        Mode::Replay(m) => replay::run(&args, m, &started, &mut sender),
    };
    drop(sender);
    result
}

/// The sender, its ports open for the largest step (or the capture's
/// largest frame, `largest`), its timeline on `endpoint`, and its memory said.
fn sender(args: &Args, started: &Started, largest: Option<u32>, max_queues: u16, endpoint: MetricsEndpoint) -> Result<Sender, Failure> {
    let cfg = SenderConfig {
        ports: args.port.clone(),
        max_queues,
        max_size: largest.unwrap_or_else(|| args.max_size()),
        burst: args.burst,
        tx_ring: args.tx_ring,
        link_timeout: args.link_timeout,
        drain: args.drain,
        addressing: addressing(args)?,
        watch_xstats: args.watch_xstat.clone(),
        xstats_interval: args.xstats_interval,
        interval: args.timeline.interval,
        size_flag: if largest.is_some() {
            "the capture's largest frame (leave such frames out: tshark -r IN -Y 'frame.len <= N' -w OUT)"
        } else {
            "--size"
        },
    };
    let mut sender = Sender::new(&started.eal, cfg)?;
    let columns = blastdrop::timeline::counter_columns(&sender.sides().iter().map(|s| &s.watch).collect::<Vec<_>>());
    sender.set_timeline(blastdrop::timeline::Timeline::new(&args.timeline.config("blast", "sent"), columns, endpoint)?);
    blastdrop::say!(
        "blast: memory: {}; {}",
        sender.mempools[0].describe("TX mempools"),
        sender.mempools[1].describe(if args.reflect { "RX mempool (reflected probes)" } else { "RX mempool (unused by blast)" })
    );
    Ok(sender)
}

/// Each port's addresses: a flag given once serves every port, or it is
/// given once per --port, in the same order.
fn addressing(args: &Args) -> Result<Vec<Addressing>, Failure> {
    let n = args.port.len();
    fn pick<T: Copy>(v: &[T], i: usize, n: usize, flag: &str) -> Result<Option<T>, Failure> {
        match v.len() {
            0 => Ok(None),
            1 => Ok(Some(v[0])),
            k if k == n => Ok(Some(v[i])),
            k => Err(Failure::usage(format!("{flag} is given {k} times for {n} --port: give it once for all ports or once per port"))),
        }
    }
    (0..n)
        .map(|i| {
            Ok(Addressing {
                src_mac: pick(&args.src_mac, i, n, "--src-mac")?,
                dst_mac: pick(&args.dst_mac, i, n, "--dst-mac")?.expect("has a default"),
                src_ip: pick(&args.src_ip, i, n, "--src-ip")?.expect("has a default"),
                dst_ip: pick(&args.dst_ip, i, n, "--dst-ip")?.expect("has a default"),
                src_port: args.src_port,
                dst_port: args.dst_port,
            })
        })
        .collect()
}
