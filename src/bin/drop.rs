//! drop: receives on N RX queues, one lcore per queue, and counts what
//! really arrived, with loss, reordering and duplicates per stream from the
//! probe headers. Every figure here is receiver-side.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Serialize;

use blastdrop::counters::{self, LaneCounters, Tally};
use blastdrop::fail::{self, Failure};
use blastdrop::report::{self, cycles_per_packet, Environment, LcoreRecord, MempoolRecord, PortRecord, Rates};
use blastdrop::rx::{RxLane, RxOutcome};
use blastdrop::session::{self, parse};
use blastdrop::signals;
use dpdk::{Mempool, PoolSizing, PortConfig, PortStats};
use seqtrack::SeqCounts;

/// Receive on N RX queues (one worker lcore each, RSS across them) and count
/// what arrived: rates, per-queue figures, and per-stream loss, reordering
/// and duplicates from blast's probe headers. All figures are receiver-side.
#[derive(Parser, Debug, Serialize)]
#[command(
    name = "drop",
    version,
    after_help = "DPDK EAL arguments go after --, passed through unchanged, for example:\n  \
                  drop --queues 4 -- -l 0-4 -a 0000:00:07.0\n  \
                  drop --port net_memif0 -- --vdev=net_memif0,role=server,socket=/tmp/bd.sock --no-huge -m 512 --no-pci --no-shconf\n\
                  Without -l/--lcores, lcore 0 (main) and one worker per queue are placed on this process's CPUs in order."
)]
struct Args {
    /// Port to receive on: a port id (0), a PCI address (0000:00:07.0) or a device name (net_memif0)
    #[arg(long, default_value = "0")]
    port: String,
    /// RX queues, each polled by its own worker lcore; RSS spreads flows over them where the device has it
    #[arg(long, default_value = "1", value_parser = parse::queues)]
    queues: u16,
    /// Largest frame to receive, in bytes including FCS: sets the MTU and the mbuf size
    #[arg(long, default_value = "1518", value_parser = parse::frame_size, value_name = "BYTES")]
    max_size: u32,
    /// How long to receive (10, 2.5s, 1m) [default: until Ctrl-C, --count or --idle-timeout]
    #[arg(long, value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_opt_secs")]
    duration: Option<Duration>,
    /// Stop once this many frames have arrived (1000, 10M)
    #[arg(long, value_parser = parse::count)]
    count: Option<u64>,
    /// Stop when nothing has arrived for this long after the first frame (2s, 500ms)
    #[arg(long, value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_opt_secs")]
    idle_timeout: Option<Duration>,
    /// Frames per rx_burst call
    #[arg(long, default_value = "32", value_parser = parse::burst)]
    burst: usize,
    /// RX ring size per queue, in descriptors
    #[arg(long, default_value = "1024", value_parser = parse::ring)]
    rx_ring: u16,
    /// Streams sequence-checked per queue (stream ids at or above are counted as untracked)
    #[arg(long, default_value_t = 4096)]
    streams: usize,
    /// Write the summary with its configuration and environment as JSON to this file
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// More log output (-v debug, -vv trace)
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// DPDK EAL arguments, after --
    #[arg(last = true, value_name = "EAL ARGS")]
    eal: Vec<String>,
}

#[derive(Serialize)]
struct QueueSummary {
    queue: u16,
    lcore: u32,
    received: Rates,
    cycles_per_packet: f64,
    no_probe: u64,
    probe: SeqCounts,
}

#[derive(Serialize)]
struct StreamSummary {
    id: u16,
    queue: u16,
    #[serde(flatten)]
    counts: SeqCounts,
}

#[derive(Serialize)]
struct Summary {
    side: &'static str,
    interrupted: bool,
    /// Over the window from the first frame's burst to the last's.
    received: Rates,
    cycles_per_packet: f64,
    /// Frames with no blastdrop probe header.
    no_probe: u64,
    /// Probe frames whose stream id was beyond --streams.
    untracked: u64,
    /// Summed over streams. `lost` counts gaps behind the newest frame of each stream.
    probe: SeqCounts,
    /// Streams seen on more than one queue (their sequence accounting is split).
    split_streams: u32,
    port: PortStats,
    /// The device's counters went backwards before the end (memif resets
    /// them when its peer leaves): `port` holds the last read before that.
    port_counters_reset: bool,
    queues: Vec<QueueSummary>,
    streams: Vec<StreamSummary>,
}

#[derive(Serialize)]
struct Record<'a> {
    tool: &'static str,
    version: &'static str,
    config: &'a Args,
    environment: Environment,
    summary: Summary,
}

fn main() -> ExitCode {
    let args = match session::parse_args::<Args>() {
        Ok(a) => a,
        Err(f) => return fail::report("drop", &f),
    };
    session::init_logging(args.verbose);
    signals::install();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail::report("drop", &f),
    }
}

fn run(args: Args) -> Result<(), Failure> {
    if args.streams == 0 || args.streams > 65536 {
        return Err(Failure::usage("--streams must be from 1 to 65536"));
    }
    let started = session::start_eal("drop", &args.eal, args.queues)?;
    let eal = &started.eal;
    let mut port = session::open_port(&args.port)?;
    let info = port.info().clone();
    let cfg = PortConfig {
        rx_queues: args.queues,
        tx_queues: args.queues,
        rx_ring: args.rx_ring,
        tx_ring: args.rx_ring,
        max_frame: args.max_size,
        tx_fast_free: false,
    };
    port.check(&cfg).map_err(|e| session::limit_failure(e, "--max-size"))?;
    let lcores = session::worker_lcores(eal, args.queues)?;
    let layout = dpdk::MbufLayout::get();
    let sizing = PoolSizing {
        ring: u32::from(args.rx_ring),
        burst: args.burst as u32,
        cache: 256,
        data_room: (u32::from(layout.headroom) + args.max_size).max(dpdk::ffi::RTE_MBUF_DEFAULT_BUF_SIZE),
    };
    let mempools = vec![MempoolRecord::new(u32::from(args.queues), &sizing)];
    println!("drop: memory: {}", mempools[0].describe("RX mempools"));
    let pools: Vec<Mempool> =
        (0..args.queues).map(|q| Mempool::create(&format!("bd_rx_{}_{q}", port.id()), &sizing, port.socket())).collect::<Result<_, _>>()?;
    let refs: Vec<&Mempool> = pools.iter().collect();
    let (rxqs, _txqs) = port.configure(&cfg, &refs).map_err(|e| session::limit_failure(e, "--max-size"))?;
    port.start().map_err(|e| session::start_failure(&port, e))?;
    let promiscuous = port.promiscuous();
    let link = port.link();
    let configured = port.configured().cloned().unwrap_or_default();
    if args.queues > 1 && !configured.rss {
        tracing::warn!("{} has no RSS: each RX queue gets only what its peer queue sends (memif pairs queues one to one)", info.driver);
    }
    let hz = dpdk::tsc_hz();
    println!(
        "drop: port {} ({}, {}), {} queue(s), frames up to {} B, link {}; receiver-side figures",
        port.id(),
        info.name,
        info.driver,
        args.queues,
        args.max_size,
        if link.up { "up" } else { "down (waiting for the peer)" }
    );

    let lanes: Vec<Arc<LaneCounters>> = (0..args.queues).map(|_| Arc::new(LaneCounters::default())).collect();
    let stop = signals::stop_flag();
    let mut jobs = Vec::new();
    let mut lcore_records = Vec::new();
    for ((q, rxq), lcore) in rxqs.into_iter().enumerate().zip(&lcores) {
        let lane = RxLane { queue: rxq, burst: args.burst, stream_capacity: args.streams, counters: lanes[q].clone() };
        jobs.push((dpdk::launch(*lcore, move || lane.run(stop))?, q as u16));
        lcore_records.push(LcoreRecord { queue: q as u16, lcore: *lcore, cpu: eal.lcore_cpu(*lcore), socket: eal.lcore_socket(*lcore) });
    }

    let baseline = port.stats()?;
    let began = Instant::now();
    let last_sample = live_loop(&port, &lanes, baseline, began, &args);
    signals::request_stop();

    let mut outcomes: Vec<(u16, u32, RxOutcome)> = Vec::new();
    let mut panicked = None;
    for (job, q) in jobs {
        let lcore = job.lcore();
        match job.join() {
            Ok(o) => outcomes.push((q, lcore, o)),
            Err(e) => panicked = Some(e),
        }
    }
    if let Some(e) = panicked {
        return Err(e.into());
    }
    // Some devices reset their counters mid-run (memif does when its peer
    // leaves): a final read below the last live one is not believed.
    let final_stats = port.stats()?;
    let port_counters_reset = final_stats.ipackets < last_sample.ipackets;
    let port_stats = if port_counters_reset { last_sample } else { final_stats }.since(&baseline);

    let first = outcomes.iter().filter_map(|o| o.2.first_tsc).min();
    let last = outcomes.iter().filter_map(|o| o.2.last_tsc).max();
    let window = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / hz as f64,
        _ => 0.0,
    };
    let mut total = Tally::default();
    let mut probe = SeqCounts::default();
    let mut queues = Vec::new();
    let mut streams: Vec<StreamSummary> = Vec::new();
    let mut seen_on = std::collections::HashMap::<u16, u32>::new();
    let mut untracked = 0;
    for (q, lcore, o) in &outcomes {
        total.add(&o.tally);
        probe.add(&o.streams.totals);
        untracked += o.streams.untracked;
        queues.push(QueueSummary {
            queue: *q,
            lcore: *lcore,
            received: Rates::over(o.tally.packets, o.tally.bytes, window(o.first_tsc, o.last_tsc)),
            cycles_per_packet: cycles_per_packet(o.tally.busy_cycles, o.tally.packets),
            no_probe: o.tally.no_probe,
            probe: o.streams.totals,
        });
        for (id, c) in o.streams.active() {
            *seen_on.entry(id).or_default() += 1;
            streams.push(StreamSummary { id, queue: *q, counts: *c });
        }
    }
    streams.sort_by_key(|s| (s.id, s.queue));
    let summary = Summary {
        side: "receiver",
        interrupted: signals::interrupted(),
        received: Rates::over(total.packets, total.bytes, window(first, last)),
        cycles_per_packet: cycles_per_packet(total.busy_cycles, total.packets),
        no_probe: total.no_probe,
        untracked,
        probe,
        split_streams: seen_on.values().filter(|&&n| n > 1).count() as u32,
        port: port_stats,
        port_counters_reset,
        queues,
        streams,
    };
    print_summary(&summary);
    if untracked > 0 {
        tracing::warn!("{untracked} probe frames had stream ids at or above --streams {}: raise --streams to check them", args.streams);
    }
    if let Some(path) = &args.json {
        let environment = Environment {
            hostname: report::hostname(),
            cpu_model: report::cpu_model(),
            dpdk_runtime: dpdk::runtime_version(),
            dpdk_built_against: dpdk::built_against().into(),
            tsc_hz: hz,
            hugepages: eal.has_hugepages(),
            eal_args: started.eal_args.clone(),
            port: PortRecord {
                id: port.id(),
                name: info.name.clone(),
                driver: info.driver.clone(),
                socket: info.socket,
                mac: wire::MacAddr(port.mac()?).to_string(),
                max_rx_queues: info.max_rx_queues,
                max_tx_queues: info.max_tx_queues,
                max_frame: info.max_frame(),
                mtu: configured.mtu,
                rss: configured.rss,
                tx_offloads: configured.tx_offloads.clone(),
                promiscuous,
                link_up: port.link().up,
                link_speed_mbps: port.link().speed_mbps,
            },
            lcores: lcore_records,
            mempools,
        };
        let record = Record { tool: "drop", version: env!("CARGO_PKG_VERSION"), config: &args, environment, summary };
        report::write_json(path, &record).map_err(Failure::runtime)?;
    }
    drop(port);
    drop(pools);
    Ok(())
}

/// A line a second until the duration, count or idle timeout ends the run,
/// or a signal arrives.
/// Returns the last port counters read.
fn live_loop(port: &dpdk::Port, lanes: &[Arc<LaneCounters>], baseline: PortStats, began: Instant, args: &Args) -> PortStats {
    let mut prev = Tally::default();
    let mut prev_q: Vec<Tally> = vec![Tally::default(); lanes.len()];
    let mut prev_port = baseline;
    let mut prev_t = began;
    let mut next_tick = began + Duration::from_secs(1);
    let mut last_arrival: Option<(Instant, u64)> = None;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let now = Instant::now();
        if signals::stopping() || args.duration.is_some_and(|d| now.duration_since(began) >= d) {
            return prev_port;
        }
        let cur = counters::total(lanes);
        if args.count.is_some_and(|c| cur.packets >= c) {
            return port.stats().unwrap_or(prev_port);
        }
        match last_arrival {
            Some((_, n)) if n == cur.packets => {}
            _ if cur.packets > 0 => last_arrival = Some((now, cur.packets)),
            _ => {}
        }
        if let (Some(idle), Some((t, _))) = (args.idle_timeout, last_arrival) {
            if now.duration_since(t) >= idle {
                return prev_port;
            }
        }
        if now < next_tick {
            continue;
        }
        next_tick += Duration::from_secs(1);
        let d = cur.since(&prev);
        let secs = now.duration_since(prev_t).as_secs_f64();
        let r = Rates::over(d.packets, d.bytes, secs);
        let stats = port.stats().unwrap_or(prev_port);
        let ds = stats.since(&prev_port);
        let per_q: Vec<String> = lanes
            .iter()
            .zip(prev_q.iter_mut())
            .enumerate()
            .map(|(q, (l, p))| {
                let c = l.read();
                let s = format!("q{q} {:.3}", (c.packets - p.packets) as f64 / secs / 1e6);
                *p = c;
                s
            })
            .collect();
        println!(
            "[{:6.1}s] received {} Mpps  {:7.3} Gb/s wire (+20 B/frame)  | {} | imissed {} rx_nombuf {} | lost {} reordered {} dup {} no-probe {}",
            now.duration_since(began).as_secs_f64(),
            report::mpps(r.mpps),
            r.wire_gbps,
            per_q.join(" "),
            ds.imissed,
            ds.rx_nombuf,
            d.lost,
            d.reordered,
            d.duplicates,
            d.no_probe
        );
        prev = cur;
        prev_port = stats;
        prev_t = now;
    }
}

fn print_summary(s: &Summary) {
    println!("--- drop summary (receiver-side: frames that arrived) ---");
    println!(
        "received {} frames, {} bytes in {:.3} s (first to last arrival): {:.3} Mpps, {:.3} Gb/s of frames, {:.3} Gb/s on the wire (+20 B/frame)",
        s.received.packets, s.received.bytes, s.received.seconds, s.received.mpps, s.received.frame_gbps, s.received.wire_gbps
    );
    println!(
        "probe: {} streams, lost {} reordered {} duplicates {} late {}  no-probe frames {}  untracked {}",
        s.streams.len(),
        s.probe.lost,
        s.probe.reordered,
        s.probe.duplicates,
        s.probe.late,
        s.no_probe,
        s.untracked
    );
    println!(
        "port: ipackets {}{} imissed {} rx_nombuf {} ierrors {}  cycles/pkt {:.1}{}",
        s.port.ipackets,
        if s.port_counters_reset { " (device reset its counters before the end; last live read)" } else { "" },
        s.port.imissed,
        s.port.rx_nombuf,
        s.port.ierrors,
        s.cycles_per_packet,
        if s.interrupted { "  (interrupted)" } else { "" }
    );
    for q in &s.queues {
        println!(
            "  q{} (lcore {}): {:.3} Mpps, {} frames, {:.1} cycles/pkt, lost {} reordered {} dup {}",
            q.queue, q.lcore, q.received.mpps, q.received.packets, q.cycles_per_packet, q.probe.lost, q.probe.reordered, q.probe.duplicates
        );
    }
}
