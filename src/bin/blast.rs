//! blast: sends UDP frames from N TX queues, one lcore per queue, and
//! reports what the device accepted. Every figure here is sender-side:
//! what arrived is for `drop` to say.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Serialize;

use blastdrop::counters::{self, LaneCounters, Tally};
use blastdrop::fail::{self, Failure};
use blastdrop::report::{self, cycles_per_packet, Environment, LcoreRecord, MempoolRecord, PortRecord, Rates};
use blastdrop::session::{self, parse};
use blastdrop::signals;
use blastdrop::tx::{self, TxLane, TxOutcome};
use dpdk::{Mempool, PoolSizing, PortConfig};
use wire::{FlowPlan, FrameSpec, MacAddr};

/// Send UDP-over-IPv4 frames from N TX queues (one worker lcore each) and
/// report what the port accepted. All figures are sender-side.
#[derive(Parser, Debug, Serialize)]
#[command(
    name = "blast",
    version,
    after_help = "DPDK EAL arguments go after --, passed through unchanged, for example:\n  \
                  blast --queues 2 --size 64 -- -l 0-2 -a 0000:00:06.0\n  \
                  blast --port net_memif0 --count 1M --rate 1M -- --vdev=net_memif0,role=client,socket=/tmp/bd.sock --no-huge -m 512 --no-pci --no-shconf\n\
                  Without -l/--lcores, lcore 0 (main) and one worker per queue are placed on this process's CPUs in order."
)]
struct Args {
    /// Port to send on: a port id (0), a PCI address (0000:00:06.0) or a device name (net_memif0)
    #[arg(long, default_value = "0")]
    port: String,
    /// TX queues, each driven by its own worker lcore
    #[arg(long, default_value = "1", value_parser = parse::queues)]
    queues: u16,
    /// Frame size in bytes, including the 4-byte FCS: 64 up to the port's largest frame
    #[arg(long, default_value = "64", value_parser = parse::frame_size, value_name = "BYTES")]
    size: u32,
    /// Flows (distinct UDP source ports), split across queues so the receiver's RSS spreads them [default: one per queue]
    #[arg(long, value_parser = parse::flows)]
    flows: Option<u32>,
    /// Source MAC [default: the port's own MAC; EC2 drops frames from any other]
    #[arg(long)]
    src_mac: Option<MacAddr>,
    /// Destination MAC: the receiver's (or, across a VPC subnet, the gateway's)
    #[arg(long, default_value = "02:00:00:00:00:02")]
    dst_mac: MacAddr,
    /// Source IPv4 address (on EC2: the sending interface's own)
    #[arg(long, default_value = "198.18.0.1")]
    src_ip: Ipv4Addr,
    /// Destination IPv4 address
    #[arg(long, default_value = "198.18.0.2")]
    dst_ip: Ipv4Addr,
    /// UDP source port of the first flow; flow i uses this + i
    #[arg(long, default_value_t = 1024)]
    src_port: u16,
    /// UDP destination port
    #[arg(long, default_value_t = 9)]
    dst_port: u16,
    /// How long to send, in seconds (10, 2.5s, 500ms, 1m) [default: 10s unless --count is given]
    #[arg(long, value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_opt_secs")]
    duration: Option<Duration>,
    /// Frames to send in all, split over the queues (1000, 10M); the run ends when all are accepted
    #[arg(long, value_parser = parse::count)]
    count: Option<u64>,
    /// Total frames per second over all queues (1M, 250k), paced per queue on the TSC [default: unpaced]
    #[arg(long, value_parser = parse::rate)]
    rate: Option<f64>,
    /// Frames per tx_burst call; when paced, frames sent back-to-back before each wait
    #[arg(long, default_value = "32", value_parser = parse::burst)]
    burst: usize,
    /// TX ring size per queue, in descriptors
    #[arg(long, default_value = "1024", value_parser = parse::ring)]
    tx_ring: u16,
    /// Seconds to wait for the link to come up before sending, and for progress while sending
    #[arg(long, default_value = "10", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    link_timeout: Duration,
    /// How long the port keeps running after the last frame, so frames still in the TX ring (or a
    /// memif ring the peer has not read yet) leave before the port stops
    #[arg(long, default_value = "0.5", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    drain: Duration,
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
    sent: Rates,
    cycles_per_packet: f64,
    ring_full_retries: u64,
    alloc_failures: u64,
    unsent: u64,
}

#[derive(Serialize)]
struct StreamSummary {
    id: u16,
    queue: u16,
    src_port: u16,
    sent: u64,
}

#[derive(Serialize)]
struct PortCounters {
    opackets: u64,
    obytes: u64,
    oerrors: u64,
}

#[derive(Serialize)]
struct Summary {
    side: &'static str,
    interrupted: bool,
    /// Frames accepted by tx_burst over the send window.
    sent: Rates,
    offered_mpps: Option<f64>,
    cycles_per_packet: f64,
    ring_full_retries: u64,
    alloc_failures: u64,
    unsent: u64,
    probe: bool,
    port: PortCounters,
    queues: Vec<QueueSummary>,
    streams: Vec<StreamSummary>,
}

#[derive(Serialize)]
struct Record<'a> {
    tool: &'static str,
    version: &'static str,
    config: &'a Args,
    flows: u32,
    src_mac: MacAddr,
    environment: Environment,
    summary: Summary,
}

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
    let flows = args.flows.unwrap_or(u32::from(args.queues));
    let plan = FlowPlan::new(args.queues, flows, args.src_port).map_err(Failure::usage)?;
    if args.src_mac.is_some_and(|m| m.is_multicast()) {
        return Err(Failure::usage("--src-mac must be a unicast address (its first byte even)"));
    }
    let started = session::start_eal("blast", &args.eal, args.queues)?;
    let eal = &started.eal;
    let mut port = session::open_port(&args.port)?;
    let info = port.info().clone();
    let cfg = PortConfig {
        rx_queues: args.queues,
        tx_queues: args.queues,
        rx_ring: args.tx_ring,
        tx_ring: args.tx_ring,
        max_frame: args.size,
        tx_fast_free: true,
    };
    port.check(&cfg).map_err(|e| session::limit_failure(e, "--size"))?;
    let lcores = session::worker_lcores(eal, args.queues)?;

    let own_mac = MacAddr(port.mac()?);
    let src_mac = args.src_mac.unwrap_or(own_mac);
    let layout = dpdk::MbufLayout::get();
    let frame_len = args.size - wire::FCS_LEN as u32;
    let socket = port.socket();

    // One pool per TX queue: each holds its queue's frame template, and
    // MBUF_FAST_FREE needs one pool per queue.
    let tx_sizing = PoolSizing {
        ring: u32::from(args.tx_ring),
        burst: args.burst as u32,
        cache: 256,
        data_room: (u32::from(layout.headroom) + frame_len).next_multiple_of(64),
    };
    // blast never reads its RX queues, but paired devices (memif) need them.
    let rx_sizing = PoolSizing {
        ring: u32::from(args.tx_ring) * u32::from(args.queues),
        burst: args.burst as u32,
        cache: 0,
        data_room: dpdk::ffi::RTE_MBUF_DEFAULT_BUF_SIZE,
    };
    let mempools = vec![MempoolRecord::new(u32::from(args.queues), &tx_sizing), MempoolRecord::new(1, &rx_sizing)];
    println!("blast: memory: {}; {}", mempools[0].describe("TX mempools"), mempools[1].describe("RX mempool (unused by blast)"));

    let mut pools = Vec::new();
    for q in 0..args.queues {
        let pool = Mempool::create(&format!("bd_tx_{}_{q}", port.id()), &tx_sizing, socket)?;
        let first = plan.streams_for_queue(q)[0];
        let spec = FrameSpec {
            src_mac,
            dst_mac: args.dst_mac,
            src_ip: args.src_ip,
            dst_ip: args.dst_ip,
            src_port: first.src_port,
            dst_port: args.dst_port,
            frame_size: args.size as usize,
            ttl: 64,
        };
        tx::write_templates(&pool, &spec).map_err(Failure::usage)?;
        pools.push(Arc::new(pool));
    }
    let rx_pool = Mempool::create(&format!("bd_txrx_{}", port.id()), &rx_sizing, socket)?;
    let rx_refs: Vec<&Mempool> = (0..args.queues).map(|_| &rx_pool).collect();
    let (_rxqs, txqs) = port.configure(&cfg, &rx_refs).map_err(|e| session::limit_failure(e, "--size"))?;
    port.start().map_err(|e| session::start_failure(&port, e))?;
    let link = port.wait_link_up(args.link_timeout, signals::stopping).ok_or_else(|| {
        Failure::runtime(format!(
            "link of port {} ({}) still down after {:.0?}: is the peer running (drop, or the memif server)? raise --link-timeout to wait longer",
            port.id(),
            info.name,
            args.link_timeout
        ))
    });
    let link = match link {
        Ok(l) => l,
        Err(f) if signals::interrupted() => return Err(Failure::runtime(format!("interrupted before sending ({})", f.message))),
        Err(f) => return Err(f),
    };
    let configured = port.configured().cloned().unwrap_or_default();
    let hz = dpdk::tsc_hz();

    let per_queue_rate = args.rate.map(|r| pace::per_queue_rate(r, args.queues));
    let duration = args.duration.or(if args.count.is_none() { Some(Duration::from_secs(10)) } else { None });
    let what = match (args.count, duration) {
        (Some(c), Some(d)) => format!("{c} frames or {:.1?}, whichever first", d),
        (Some(c), None) => format!("{c} frames"),
        (None, Some(d)) => format!("{:.1?}", d),
        (None, None) => unreachable!(),
    };
    println!(
        "blast: port {} ({}, {}), {} queue(s), {} B frames (FCS incl.), {} flow(s), {}, {}; sender-side figures",
        port.id(),
        info.name,
        info.driver,
        args.queues,
        args.size,
        flows,
        args.rate.map_or("unpaced".into(), |r| format!("paced at {:.3} Mpps in bursts of {}", r / 1e6, args.burst)),
        what
    );

    let lanes: Vec<Arc<LaneCounters>> = (0..args.queues).map(|_| Arc::new(LaneCounters::default())).collect();
    let stop = signals::stop_flag();
    let mut jobs = Vec::new();
    let mut lcore_records = Vec::new();
    let stream_plan: Vec<Vec<wire::Stream>> = (0..args.queues).map(|q| plan.streams_for_queue(q)).collect();
    for ((q, txq), lcore) in txqs.into_iter().enumerate().zip(&lcores) {
        let lane = TxLane {
            queue: txq,
            pool: pools[q].clone(),
            streams: stream_plan[q].clone(),
            frame_len: frame_len as u16,
            burst: args.burst,
            quota: args.count.map(|c| pace::per_queue_count(c, args.queues, q as u16)),
            rate: per_queue_rate,
            tsc_hz: hz,
            counters: lanes[q].clone(),
        };
        let start = dpdk::rdtsc();
        jobs.push((dpdk::launch(*lcore, move || (start, lane.run(stop), dpdk::rdtsc()))?, q));
        lcore_records.push(LcoreRecord { queue: q as u16, lcore: *lcore, cpu: eal.lcore_cpu(*lcore), socket: eal.lcore_socket(*lcore) });
    }

    let began = Instant::now();
    let mut stall: Option<String> = None;
    live_loop(&lanes, began, duration, args.link_timeout, args.count.is_some(), &mut stall);
    signals::request_stop();

    let mut outcomes: Vec<(u16, u32, u64, TxOutcome, u64)> = Vec::new();
    let mut panicked = None;
    for (job, q) in jobs {
        let lcore = job.lcore();
        match job.join() {
            Ok((s, o, e)) => outcomes.push((q as u16, lcore, s, o, e)),
            Err(e) => panicked = Some(e),
        }
    }
    if let Some(e) = panicked {
        return Err(e.into());
    }
    // Frames accepted but still in a ring are lost if the port stops now.
    std::thread::sleep(args.drain);
    let port_stats = port.stats()?;

    let window_start = outcomes.iter().map(|o| o.2).min().unwrap_or(0);
    let window_end = outcomes.iter().map(|o| o.4).max().unwrap_or(0);
    let seconds = window_end.saturating_sub(window_start) as f64 / hz as f64;
    let mut total = Tally::default();
    let mut unsent = 0;
    let mut queues = Vec::new();
    let mut streams = Vec::new();
    for (q, lcore, s, o, e) in &outcomes {
        total.add(&o.tally);
        unsent += o.unsent;
        let secs = e.saturating_sub(*s) as f64 / hz as f64;
        queues.push(QueueSummary {
            queue: *q,
            lcore: *lcore,
            sent: Rates::over(o.tally.packets, o.tally.bytes, secs),
            cycles_per_packet: cycles_per_packet(o.tally.busy_cycles, o.tally.packets),
            ring_full_retries: o.tally.retries,
            alloc_failures: o.tally.alloc_failures,
            unsent: o.unsent,
        });
        for (st, sent) in stream_plan[usize::from(*q)].iter().zip(&o.per_stream) {
            streams.push(StreamSummary { id: st.id, queue: st.queue, src_port: st.src_port, sent: *sent });
        }
    }
    streams.sort_by_key(|s| s.id);
    let summary = Summary {
        side: "sender",
        interrupted: signals::interrupted(),
        sent: Rates::over(total.packets, total.bytes, seconds),
        offered_mpps: args.rate.map(|r| r / 1e6),
        cycles_per_packet: cycles_per_packet(total.busy_cycles, total.packets),
        ring_full_retries: total.retries,
        alloc_failures: total.alloc_failures,
        unsent,
        probe: true,
        port: PortCounters { opackets: port_stats.opackets, obytes: port_stats.obytes, oerrors: port_stats.oerrors },
        queues,
        streams,
    };
    print_summary(&summary);
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
                mac: own_mac.to_string(),
                max_rx_queues: info.max_rx_queues,
                max_tx_queues: info.max_tx_queues,
                max_frame: info.max_frame(),
                mtu: configured.mtu,
                rss: configured.rss,
                tx_offloads: configured.tx_offloads.clone(),
                promiscuous: false,
                link_up: link.up,
                link_speed_mbps: link.speed_mbps,
            },
            lcores: lcore_records,
            mempools,
        };
        let record = Record { tool: "blast", version: env!("CARGO_PKG_VERSION"), config: &args, flows, src_mac, environment, summary };
        report::write_json(path, &record).map_err(Failure::runtime)?;
    }
    drop(port);
    drop(pools);
    drop(rx_pool);
    if let Some(msg) = stall {
        return Err(Failure::runtime(msg));
    }
    Ok(())
}

/// Prints a line a second until every lane is done, the duration is up, a
/// stall is seen (count mode) or a signal arrives.
fn live_loop(
    lanes: &[Arc<LaneCounters>],
    began: Instant,
    duration: Option<Duration>,
    stall_after: Duration,
    counting: bool,
    stall: &mut Option<String>,
) {
    let mut prev = Tally::default();
    let mut prev_q: Vec<Tally> = vec![Tally::default(); lanes.len()];
    let mut prev_t = began;
    let mut last_progress = began;
    let mut next_tick = began + Duration::from_secs(1);
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        let done = lanes.iter().all(|l| l.is_done());
        let timed_out = duration.is_some_and(|d| now.duration_since(began) >= d);
        if signals::stopping() || done || timed_out {
            return;
        }
        if now < next_tick {
            continue;
        }
        next_tick += Duration::from_secs(1);
        let cur = counters::total(lanes);
        let d = cur.since(&prev);
        let secs = now.duration_since(prev_t).as_secs_f64();
        let r = Rates::over(d.packets, d.bytes, secs);
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
            "[{:6.1}s] sent {} Mpps  {:7.3} Gb/s wire (+20 B/frame preamble+gap)  {:6.1} cycles/pkt  ring-full retries {}  | {}",
            now.duration_since(began).as_secs_f64(),
            report::mpps(r.mpps),
            r.wire_gbps,
            cycles_per_packet(d.busy_cycles, d.packets),
            d.retries,
            per_q.join(" ")
        );
        if d.packets > 0 {
            last_progress = now;
        } else if counting && now.duration_since(last_progress) >= stall_after {
            *stall = Some(format!(
                "no frame accepted for {:.0?}: the device stopped taking frames (peer gone, or link down); {} of the --count were sent",
                stall_after, cur.packets
            ));
            return;
        }
        prev = cur;
        prev_t = now;
    }
}

fn print_summary(s: &Summary) {
    println!("--- blast summary (sender-side: frames accepted by tx_burst) ---");
    println!(
        "sent {} frames, {} bytes in {:.3} s: {:.3} Mpps, {:.3} Gb/s of frames, {:.3} Gb/s on the wire (+20 B/frame)",
        s.sent.packets, s.sent.bytes, s.sent.seconds, s.sent.mpps, s.sent.frame_gbps, s.sent.wire_gbps
    );
    if let Some(o) = s.offered_mpps {
        println!("offered {o:.3} Mpps (paced)");
    }
    println!(
        "cycles/pkt {:.1}  ring-full retries {}  alloc failures {}  unsent at stop {}  port opackets {} oerrors {}{}",
        s.cycles_per_packet,
        s.ring_full_retries,
        s.alloc_failures,
        s.unsent,
        s.port.opackets,
        s.port.oerrors,
        if s.interrupted { "  (interrupted)" } else { "" }
    );
    for q in &s.queues {
        println!(
            "  q{} (lcore {}): {:.3} Mpps, {} frames, {:.1} cycles/pkt, {} retries",
            q.queue, q.lcore, q.sent.mpps, q.sent.packets, q.cycles_per_packet, q.ring_full_retries
        );
    }
}
