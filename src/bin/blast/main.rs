//! blast: sends UDP frames from N TX queues, one lcore per queue. Alone it
//! reports what the device accepted (sender-side); with `--peer` it drives
//! `drop --listen` through a ladder of steps and reports what arrived.

mod args;
mod knee_run;
mod ladder_run;
mod peer;
mod single;

use std::process::ExitCode;

use blastdrop::fail::{self, Failure};
use blastdrop::report::{self, Environment, LcoreRecord, PortRecord};
use blastdrop::sender::{Addressing, Sender, SenderConfig, TxSide};
use blastdrop::session;
use blastdrop::signals;

use args::Args;

fn main() -> ExitCode {
    let args = match session::parse_args::<Args>() {
        Ok(a) => a,
        Err(f) => return fail::report("blast", &f),
    };
    session::init_logging(args.verbose);
    signals::install();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail::report("blast", &f),
    }
}

fn run(args: Args) -> Result<(), Failure> {
    if args.src_mac.iter().any(|m| m.is_multicast()) {
        return Err(Failure::usage("--src-mac must be a unicast address (its first byte even)"));
    }
    if args.is_ladder() && args.count.is_some() {
        return Err(Failure::usage("--count is for a single step; a ladder measures each step over --duration"));
    }
    match (args.shape, args.rate) {
        (Some(s), None) if s.is_paced() && !args.find_knee => {
            return Err(Failure::usage(format!("--shape {s} paces frames: give the rate with --rate (frames per second, e.g. 1M)")));
        }
        (Some(pace::Shape::Open), Some(_)) => {
            return Err(Failure::usage("--shape open is unpaced: drop --rate, or pick even, burst:N or poisson"));
        }
        _ => {}
    }
    if args.find_knee {
        if args.peer.is_none() {
            return Err(Failure::usage("--find-knee measures loss at the receiver: run drop --listen ADDR:PORT and give --peer ADDR:PORT"));
        }
        if args.queues.len() > 1 || args.size.len() > 1 || args.repeat > 1 || args.count.is_some() {
            return Err(Failure::usage("--find-knee searches one traffic: give one --queues and one --size, and no --repeat or --count"));
        }
        if args.shape == Some(pace::Shape::Open) {
            return Err(Failure::usage("--find-knee paces its trials: pick --shape even, burst:N or poisson"));
        }
        if !(0.0..100.0).contains(&args.loss) || !(0.0..100.0).contains(&args.pdr_loss) || args.pdr_loss < args.loss {
            return Err(Failure::usage("--loss and --pdr-loss are percentages from 0 to 100, with --pdr-loss at least --loss"));
        }
        if !(args.knee_precision > 0.0 && args.knee_precision < 50.0) {
            return Err(Failure::usage("--knee-precision is a percentage above 0 and below 50 (e.g. 2)"));
        }
    }
    if args.sla.is_some() && !(args.find_knee && args.reflect) {
        return Err(Failure::usage(
            "--sla limits the knee's latency: use it with --find-knee and --reflect (drop --reflect on the other end)",
        ));
    }
    if args.sentence && !args.find_knee {
        return Err(Failure::usage("--sentence renders a knee: use it with --find-knee"));
    }
    // Every step's flow plan must be possible before anything starts.
    for &q in args.queues.iter() {
        layout::FlowPlan::new(q, args.flows.unwrap_or(u32::from(q)), args.src_port).map_err(blastdrop::session::layout_failure)?;
    }
    // Output files are checked now, not after the whole run.
    session::check_outputs(&[("--json", args.json.as_deref()), ("--csv", args.csv.as_deref()), ("--plot", args.plot.as_deref())])?;
    let started = session::start_eal("blast", &args.eal, args.max_queues(), &args.port)?;
    let cfg = SenderConfig {
        ports: args.port.clone(),
        max_queues: args.max_queues(),
        max_size: args.max_size(),
        burst: args.burst,
        tx_ring: args.tx_ring,
        link_timeout: args.link_timeout,
        drain: args.drain,
        addressing: addressing(&args)?,
        watch_xstats: args.watch_xstat.clone(),
        xstats_interval: args.xstats_interval,
    };
    let mut sender = Sender::new(&started.eal, cfg)?;
    println!(
        "blast: memory: {}; {}",
        sender.mempools[0].describe("TX mempools"),
        sender.mempools[1].describe(if args.reflect { "RX mempool (reflected probes)" } else { "RX mempool (unused by blast)" })
    );
    preflight(&args, &sender)?;
    let result = if args.find_knee {
        knee_run::run(&args, &started, &mut sender)
    } else if args.is_ladder() {
        ladder_run::run(&args, &started, &mut sender)
    } else {
        single::run(&args, &started, &mut sender)
    };
    drop(sender);
    result
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

/// The sender's environment, for the JSON record.
pub fn environment(started: &session::Started, sender: &Sender, queues: u16) -> Environment {
    let eal = &started.eal;
    let nports = sender.sides().len() as u16;
    let records: Vec<PortRecord> =
        sender.sides().iter().map(|side| PortRecord::of(&side.port, side.own_mac, false, side.link, side.ena.clone())).collect();
    Environment {
        hostname: report::hostname(),
        cpu_model: report::cpu_model(),
        machine: report::Machine::read(),
        dpdk_runtime: dpdk::runtime_version(),
        dpdk_built_against: dpdk::built_against().into(),
        tsc_hz: sender.tsc_hz(),
        hugepages: eal.has_hugepages(),
        eal_args: started.eal_args.clone(),
        placement: started.placement.clone(),
        port: records[0].clone(),
        ports: if nports > 1 { records } else { Vec::new() },
        lcores: sender.lcores()[..usize::from(queues)]
            .iter()
            .enumerate()
            .map(|(q, &l)| LcoreRecord {
                queue: q as u16,
                port: layout::Spread::new(queues, nports).port_of(q as u16).0,
                lcore: l,
                cpu: eal.lcore_cpu(l),
                socket: eal.lcore_socket(l),
            })
            .collect(),
        mempools: sender.mempools.clone(),
    }
}

/// On net_ena, mistakes do not fail, they vanish: check each port before sending.
fn preflight(args: &Args, sender: &Sender) -> Result<(), Failure> {
    for side in sender.sides() {
        preflight_port(args, side)?;
    }
    Ok(())
}

fn preflight_port(args: &Args, side: &TxSide) -> Result<(), Failure> {
    let (info, a) = (&side.info, &side.addressing);
    if info.driver != "net_ena" {
        if !side.watch.is_empty() {
            tracing::info!("{}: watching {}", info.name, side.watch.names().join(", "));
        }
        return Ok(());
    }
    let spec = wire::FrameSpec {
        src_mac: side.src_mac,
        dst_mac: a.dst_mac,
        src_ip: a.src_ip,
        dst_ip: a.dst_ip,
        src_port: a.src_port,
        dst_port: a.dst_port,
        frame_size: args.max_size() as usize,
        ttl: 64,
        run_id: 0,
    };
    let mut frame = vec![0u8; spec.len_without_fcs()];
    let checksum_ok = wire::write_frame(&spec, &mut frame).is_ok()
        && wire::Ipv4Packet::new_checked(&frame[wire::ETHERNET_HEADER_LEN..]).is_some_and(|ip| ip.checksum_valid());
    let findings = limits::preflight(&limits::PreflightInput {
        driver: info.driver.clone(),
        src_mac_is_own: side.src_mac == side.own_mac,
        src_ip_is_default: a.src_ip == std::net::Ipv4Addr::new(198, 18, 0, 1),
        ipv4_checksum_ok: checksum_ok,
        queues: args.max_queues(),
        flows: args.flows.unwrap_or(u32::from(args.max_queues())),
        frame_size: args.max_size(),
        rate: args.rate,
    });
    let mut errors = Vec::new();
    for f in findings {
        match f.severity {
            limits::Severity::Error => errors.push(f.message),
            limits::Severity::Warning => tracing::warn!("pre-flight ({}): {}", info.name, f.message),
        }
    }
    if !errors.is_empty() {
        return Err(Failure::usage(format!("pre-flight on net_ena port {}: {}", info.name, errors.join("; "))));
    }
    let names = side.watch.names();
    let sample = side.watch.sample();
    for (n, v) in names.iter().zip(&sample.values) {
        if limits::ENA_LEVELS.contains(&n.as_str()) {
            println!("blast: pre-flight ({}): {n} = {v}", info.name);
        }
    }
    if let Some(state) = &side.ena {
        println!("blast: {}: {}", info.name, state.describe());
    }
    println!(
        "blast: pre-flight on net_ena port {} passed: own source MAC, --src-ip set, IPv4 checksum valid; watching {}",
        info.name,
        names.join(", ")
    );
    Ok(())
}
