//! drop: receives on N RX queues, one lcore per queue, and counts what
//! really arrived, with loss, reordering and duplicates per stream from the
//! probe headers. With --listen it serves blast's ladder over a control
//! connection. Every figure here is receiver-side.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Serialize;

use blastdrop::counters::Tally;
use blastdrop::fail::{self, Failure};
use blastdrop::receiver::{Receiver, ReceiverConfig, Snapshot, Totals};
use blastdrop::report::{self, cycles_per_packet, Environment, LcoreRecord, PortRecord, Rates};
use blastdrop::session::{self, parse};
use blastdrop::signals;
use control::{Backend, PeerInfo, Prepared, ServerConfig, WindowFigures};
use dpdk::PortStats;
use seqtrack::SeqCounts;

/// Receive on N RX queues (one worker lcore each, RSS across them) and count
/// what arrived: rates, per-queue figures, and per-stream loss, reordering
/// and duplicates from blast's probe headers. All figures are receiver-side.
#[derive(Parser, Debug, Serialize)]
#[command(
    name = "drop",
    version,
    allow_negative_numbers = true,
    after_help = "DPDK EAL arguments go after --, passed through unchanged, for example:\n  \
                  drop --queues 4 -- -l 0-4 -a 0000:00:07.0\n  \
                  drop --listen 10.0.0.2:7700 --queues 32 -- -l 0-32 -a 0000:00:07.0   (serves blast --peer ladders)\n  \
                  drop --port net_memif0 -- --vdev=net_memif0,role=server,socket=/tmp/bd.sock,socket-abstract=no --no-huge -m 512 --no-pci --no-shconf\n\
                  Without -l/--lcores, lcores are placed from the machine's topology (sysfs): the NIC's NUMA node first,\n\
                  one worker per physical core before any hyperthread sibling, the main lcore apart; the placement is printed."
)]
struct Args {
    /// Port to receive on: a port id (0), a PCI address (0000:00:07.0) or a device name (net_memif0).
    /// Repeat it to receive on several ports (blast's port i pairs with drop's port i); queues are
    /// spread over them round robin
    #[arg(long, default_value = "0")]
    port: Vec<String>,
    /// RX queues, each polled by its own worker lcore; RSS spreads flows over them where the device has it.
    /// With --listen: the most a ladder may ask for (it starts with 1)
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
    /// Serve blast's control connection on this address (ADDR:PORT, an explicit address: the
    /// management network's, never the port under test); runs until Ctrl-C or --duration
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<String>,
    /// File whose first line is the shared secret blast must prove (never sent on the wire); or set
    /// BLASTDROP_TOKEN. Required when --listen is reachable from other hosts (not loopback)
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// The shared secret on the command line (visible in ps: prefer --token-file or BLASTDROP_TOKEN)
    #[arg(long)]
    #[serde(skip)]
    token: Option<String>,
    /// Frames per rx_burst call
    #[arg(long, default_value = "32", value_parser = parse::burst)]
    burst: usize,
    /// RX ring size per queue, in descriptors
    #[arg(long, default_value = "1024", value_parser = parse::ring)]
    rx_ring: u16,
    /// Busy work per frame, in CPU cycles, as an application behind drop would spend: shows
    /// where a receiver with that cost per packet stops keeping up
    #[arg(long, default_value_t = 0, value_name = "CYCLES", value_parser = parse::cycles)]
    rx_cost: u64,
    /// Count frames and bytes only, without parsing the probe header: the cheapest receive
    /// loop (no loss, reorder or duplicate figures; every frame counts as no-probe)
    #[arg(long)]
    count_only: bool,
    /// Send every frame back on the queue it came in on, source and destination swapped (MAC,
    /// IPv4, UDP ports), so blast can time the round trip of its probes
    #[arg(long)]
    reflect: bool,
    /// Count arrivals per interval of this many microseconds, for the peak-to-mean ratio of
    /// micro-bursts (0: off; off with --count-only; a TSC read per poll that brings frames)
    #[arg(long, default_value_t = 100, value_name = "US", value_parser = parse::micros)]
    arrival_interval_us: u64,
    /// Time every probe one way: this host's wall clock at arrival against the sender's at
    /// sending (CLOCK_REALTIME on both; meaningful only when the two hosts' clocks are
    /// synchronised, e.g. by PTP; the run states the kernel's sync status)
    #[arg(long)]
    one_way: bool,
    /// Mbufs per RX pool, overriding the size derived from ring, burst and cache (docs/memory.md);
    /// a pool too small starves the device (rx_nombuf), as an undersized receiver would
    #[arg(long, value_name = "N", value_parser = parse::mbufs)]
    rx_mbufs: Option<u32>,
    /// Watch this extended stat too (repeatable): its movement joins the record and the verdict as
    /// "other" (e.g. a mlx5 or ice drop counter). net_ena's allowance counters are always watched
    #[arg(long = "watch-xstat", value_name = "NAME")]
    watch_xstat: Vec<String>,
    /// How often the watched counters are read for the live view (on ENA each read is an admin command)
    #[arg(long, default_value = "1", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    xstats_interval: Duration,
    /// Streams sequence-checked per queue (stream ids at or above are counted as untracked)
    #[arg(long, default_value_t = 4096, value_parser = parse::streams)]
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
    /// Index of its port in --port order.
    port: u16,
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
    arrivals: Arrivals,
    /// --reflect: frames the TX queues would not take back.
    reflect_drops: u64,
    /// --one-way: latency from the sender's stamp to arrival, by the two hosts' wall clocks.
    one_way: Option<OneWay>,
    /// With several --port: each port's share (its queues; its device counters).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<PortSummary>,
    /// What held the received figure where it is, from what drop sees alone
    /// (its port's drop counters, allowances, watched counters, its lanes'
    /// busy time, the probes' sequence numbers): docs/limits.md.
    limit: String,
    verdict: limits::Verdict,
    /// Bursts that faulted because a memif peer left under them (caught).
    faults: u64,
}

#[derive(Serialize)]
struct PortSummary {
    /// Index in --port order.
    port: u16,
    name: String,
    /// Frames its queues took, over its own first to last arrival.
    received: Rates,
    probe: SeqCounts,
    /// The device's own counters over the run (as read at the end).
    device: PortStats,
}

#[derive(Serialize)]
struct OneWay {
    /// Always "CLOCK_REALTIME": the figure depends on both hosts' clocks agreeing.
    clock: &'static str,
    /// This host's kernel on its clock (adjtimex): synchronised or not, and its maximum error.
    sync: Option<blastdrop::clock::ClockSync>,
    latency: latency::LatencySummary,
    /// Probes that arrived before they were sent, by the clocks: they disagree.
    negative: u64,
    histogram: Vec<latency::Bucket>,
}

/// How bursty the arrivals were (receiver-side).
#[derive(Serialize)]
struct Arrivals {
    /// Polls by frames returned: "0", "1", "2-3", "4-7", ... "512".
    polls_by_frames: BTreeMap<String, u64>,
    /// Polls that came back with a full burst: frames were waiting beyond one poll.
    full_polls: u64,
    /// The most frames taken in one run of polls that each followed a full one.
    max_backlog_frames: u64,
    /// Arrivals per interval (null when off).
    interval_us: Option<u64>,
    peak_per_interval: Option<u64>,
    mean_per_interval: Option<f64>,
    peak_to_mean: Option<f64>,
}

#[derive(Serialize)]
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
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail::report("drop", &f),
    }
}

/// How long a window waits for a memif peer's link before refusing to open.
const PEER_WAIT: Duration = Duration::from_secs(5);

fn lock(rx: &Mutex<Receiver>) -> MutexGuard<'_, Receiver> {
    rx.lock().unwrap_or_else(|e| e.into_inner())
}

/// The control server's view of the receiver.
struct DropBackend {
    rx: Arc<Mutex<Receiver>>,
    info: PeerInfo,
    baseline: Option<Snapshot>,
    /// The sessions and windows served, for the JSON record.
    history: Arc<Mutex<History>>,
}

/// What drop served, bounded: a client that loops windows forever cannot
/// grow drop's memory or its JSON without limit.
#[derive(Default, Serialize)]
struct History {
    /// The last MAX_WINDOWS windows served, of every session.
    windows: std::collections::VecDeque<WindowFigures>,
    /// Windows served in all, and those no longer kept above.
    windows_served: u64,
    windows_not_kept: u64,
    /// The last MAX_SESSIONS sessions, and those no longer kept.
    sessions: std::collections::VecDeque<SessionRecord>,
    sessions_not_kept: u64,
}

#[derive(Serialize)]
struct SessionRecord {
    client: String,
    /// Seconds since the Unix epoch.
    started: u64,
    ended: Option<u64>,
    why_ended: Option<String>,
    windows: u64,
    incomplete_windows: u64,
}

const MAX_WINDOWS: usize = 1000;
const MAX_SESSIONS: usize = 100;

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl History {
    fn push(&mut self, f: WindowFigures) {
        if let Some(s) = self.sessions.back_mut() {
            s.windows += 1;
            s.incomplete_windows += u64::from(f.incomplete.is_some());
        }
        self.windows_served += 1;
        self.windows.push_back(f);
        if self.windows.len() > MAX_WINDOWS {
            self.windows.pop_front();
            self.windows_not_kept += 1;
        }
    }
}

impl Backend for DropBackend {
    fn info(&mut self) -> PeerInfo {
        self.info.clone()
    }

    fn prepare(&mut self, rx_queues: u16, max_size: u32) -> Result<Prepared, String> {
        self.baseline = None;
        if max_size > self.info.max_size {
            return Err(format!(
                "frames of {max_size} B asked, drop takes up to {} B: restart drop with --max-size {max_size}",
                self.info.max_size
            ));
        }
        let mut rx = lock(&self.rx);
        let restarted = rx.set_queues(rx_queues).map_err(|f| f.message)?;
        if restarted {
            tracing::info!("control: now receiving on {rx_queues} queue(s)");
        }
        Ok(Prepared { rx_queues, restarted, link_up: rx.links_up() })
    }

    fn start_window(&mut self) -> Result<(), String> {
        // A memif port's lanes start once its peer is connected: a window
        // opened before then would count what no lane polled.
        let until = Instant::now() + PEER_WAIT;
        loop {
            {
                let mut rx = lock(&self.rx);
                if let Some(what) = rx.supervise().map_err(|f| f.message)? {
                    println!("drop: {what}");
                }
                if rx.receiving() {
                    self.baseline = Some(rx.snapshot());
                    return Ok(());
                }
            }
            if Instant::now() >= until {
                return Err(format!(
                    "drop is not receiving: the link of its port stayed down for {PEER_WAIT:?} (is blast's port connected?)"
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn end_window(&mut self, window: u64) -> Result<WindowFigures, String> {
        let a = self.baseline.take().ok_or("no window open")?;
        let rx = lock(&self.rx);
        let b = rx.snapshot();
        let mut f = rx.window(&a, &b)?;
        f.window = window;
        println!(
            "drop: window {window}: received {} frames, {} bytes in {:.3} s on {} queue(s) ({:.3} Mpps); imissed {} rx_nombuf {} lost {}",
            f.packets,
            f.bytes,
            f.seconds,
            f.queues.len(),
            f.packets as f64 / f.seconds.max(1e-9) / 1e6,
            f.imissed,
            f.rx_nombuf,
            f.probe.lost
        );
        self.history.lock().unwrap_or_else(|e| e.into_inner()).push(f.clone());
        Ok(f)
    }

    fn abandon_window(&mut self, window: u64, why: &str) {
        let Some(a) = self.baseline.take() else { return };
        let rx = lock(&self.rx);
        let b = rx.snapshot();
        let mut f = match rx.window(&a, &b) {
            Ok(f) => f,
            Err(e) => control::WindowFigures { incomplete: Some(e), ..Default::default() },
        };
        f.window = window;
        f.incomplete = Some(format!("{why}{}", f.incomplete.as_ref().map_or(String::new(), |e| format!("; {e}"))));
        println!("drop: window {window} incomplete ({why}): {} frames until then; not a measurement", f.packets);
        self.history.lock().unwrap_or_else(|e| e.into_inner()).push(f);
    }

    fn session_started(&mut self, client: &str) {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        h.sessions.push_back(SessionRecord {
            client: client.to_string(),
            started: unix_now(),
            ended: None,
            why_ended: None,
            windows: 0,
            incomplete_windows: 0,
        });
        if h.sessions.len() > MAX_SESSIONS {
            h.sessions.pop_front();
            h.sessions_not_kept += 1;
        }
        self.baseline = None;
    }

    fn session_ended(&mut self, _client: &str, why: &str) {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = h.sessions.back_mut() {
            s.ended = Some(unix_now());
            s.why_ended = Some(why.to_string());
        }
        self.baseline = None;
    }

    fn client_leaving(&mut self) {
        // memif unmaps its rings on the interrupt thread when the peer
        // leaves, under any lane still polling them: the lanes park before
        // blast may exit, and start again when a peer connects.
        match lock(&self.rx).hold_for_departure() {
            Ok(true) => tracing::info!("control: client leaving; memif lanes parked until a peer connects again"),
            Ok(false) => {}
            Err(f) => tracing::error!("control: parking the lanes failed: {}", f.message),
        }
    }
}

fn run(args: Args) -> Result<(), Failure> {
    if args.one_way && args.count_only {
        return Err(Failure::usage("--one-way reads every probe and --count-only reads none: drop one of them"));
    }
    if args.streams == 0 || args.streams > 65536 {
        return Err(Failure::usage("--streams must be from 1 to 65536"));
    }
    session::check_outputs(&[("--json", args.json.as_deref())])?;
    let secret = control::Secret::load(args.token_file.as_deref(), std::env::var(control::SECRET_ENV).ok(), args.token.as_deref())
        .map_err(Failure::usage)?;
    if let Some((_, control::SecretSource::CommandLine)) = &secret {
        tracing::warn!("--token shows in ps and /proc/PID/cmdline: prefer --token-file FILE or BLASTDROP_TOKEN");
    }
    let listener = match &args.listen {
        Some(addr) => {
            let addrs = control::listen_addrs(addr).map_err(Failure::usage)?;
            if secret.is_none() && !control::all_loopback(&addrs) {
                return Err(Failure::usage(format!(
                    "--listen {addr} is reachable from other hosts: give a shared secret (--token-file FILE or BLASTDROP_TOKEN), or listen on 127.0.0.1"
                )));
            }
            Some(
                TcpListener::bind(&addrs[..])
                    .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}; give ADDR:PORT of this host")))?,
            )
        }
        None => None,
    };
    let started = session::start_eal("drop", &args.eal, args.queues, &args.port)?;
    let eal = &started.eal;
    let cfg = ReceiverConfig {
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
        mbufs: args.rx_mbufs,
        watch_xstats: args.watch_xstat.clone(),
        xstats_interval: args.xstats_interval,
    };
    let mut receiver = Receiver::new(eal, cfg)?;
    println!("drop: memory: {}", receiver.mempools[0].describe("RX mempools"));
    // Listening, a ladder chooses the queue count; start small.
    let first = if listener.is_some() { 1 } else { args.queues };
    receiver.start(first)?;
    let info = receiver.info().clone();
    let configured = receiver.port().configured().cloned().unwrap_or_default();
    if args.queues > 1 && !configured.rss {
        tracing::warn!("{} has no RSS: each RX queue gets only what its peer queue sends (memif pairs queues one to one)", info.driver);
    }
    for side in receiver.sides() {
        if let Some(state) = &side.ena {
            println!("drop: {}: {}", side.info.name, state.describe());
        }
    }
    let hz = receiver.tsc_hz();
    let nports = receiver.sides().len() as u16;
    let names: Vec<String> = receiver.sides().iter().map(|s| s.info.name.clone()).collect();
    let peer_info = PeerInfo {
        hostname: report::hostname(),
        dpdk: dpdk::runtime_version(),
        port_name: names.join("+"),
        driver: info.driver.clone(),
        // A queue count is possible while each port's share fits that port.
        max_rx_queues: (1..=args.queues)
            .take_while(|&q| {
                receiver.sides().iter().enumerate().all(|(p, s)| ladder::ports::share(q, nports, p as u16) <= s.info.max_rx_queues)
            })
            .last()
            .unwrap_or(1),
        ports: nports,
        worker_lcores: args.queues,
        max_size: args.max_size,
        rss: info.rss_offloads != 0,
        cpu_model: report::cpu_model(),
        reflect: args.reflect,
    };
    let described: Vec<String> = receiver.sides().iter().map(|s| format!("{} ({}, {})", s.port.id(), s.info.name, s.info.driver)).collect();
    println!(
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

    let rx = Arc::new(Mutex::new(receiver));
    let history: Arc<Mutex<History>> = Arc::default();
    let server = listener.map(|l| {
        let backend = DropBackend { rx: rx.clone(), info: peer_info.clone(), baseline: None, history: history.clone() };
        let backend: Arc<Mutex<dyn Backend>> = Arc::new(Mutex::new(backend));
        let cfg = ServerConfig { secret: secret.map(|(s, _)| s), ..Default::default() };
        std::thread::spawn(move || {
            if let Err(e) = control::serve(l, backend, cfg, signals::stop_flag()) {
                tracing::error!("control server stopped: {e}");
            }
        })
    });

    let baseline_ports = lock(&rx).sides().iter().map(|s| s.port.stats()).collect::<Result<Vec<_>, _>>()?;
    let baseline = PortStats::total(&baseline_ports);
    let began = Instant::now();
    let xs_start = lock(&rx).watch_samples();
    let last_sample = live_loop(&rx, baseline, began, &args);
    signals::request_stop();
    if let Some(s) = server {
        let _ = s.join();
    }

    let mut receiver = lock(&rx);
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
    let port_stats = if port_counters_reset { last_sample } else { final_stats }.since(&baseline);
    let mut summary = summarize(&totals, hz, port_stats, port_counters_reset);
    let xs_end = receiver.watch_samples();
    let xs = receiver.watch_between(&xs_start, &xs_end);
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
    if nports > 1 {
        summary.ports = names
            .iter()
            .enumerate()
            .map(|(p, name)| {
                let share = totals.port_share(p as u16);
                PortSummary {
                    port: p as u16,
                    name: name.clone(),
                    received: Rates::over(share.tally.packets, share.tally.bytes, arrival_window(share.first_tsc, share.last_tsc, hz)),
                    probe: share.probe,
                    device: final_ports[p].since(&baseline_ports[p]),
                }
            })
            .collect();
    }
    print_summary(&summary);
    if totals.untracked > 0 {
        tracing::warn!(
            "{} probe frames had stream ids at or above --streams {}: raise --streams to check them",
            totals.untracked,
            args.streams
        );
    }
    if let Some(path) = &args.json {
        let records = receiver
            .sides()
            .iter()
            .map(|side| {
                let mac = wire::MacAddr(side.port.mac()?);
                Ok(PortRecord::of(&side.port, mac, side.promiscuous, side.port.link(), side.ena.clone()))
            })
            .collect::<Result<Vec<PortRecord>, Failure>>()?;
        let environment = Environment {
            hostname: report::hostname(),
            cpu_model: report::cpu_model(),
            machine: report::Machine::read(),
            dpdk_runtime: dpdk::runtime_version(),
            dpdk_built_against: dpdk::built_against().into(),
            tsc_hz: hz,
            hugepages: eal.has_hugepages(),
            eal_args: started.eal_args.clone(),
            placement: started.placement.clone(),
            port: records[0].clone(),
            ports: if nports > 1 { records } else { Vec::new() },
            lcores: totals
                .queues
                .iter()
                .map(|(&q, t)| LcoreRecord {
                    queue: q,
                    port: t.port,
                    lcore: t.lcore,
                    cpu: eal.lcore_cpu(t.lcore),
                    socket: eal.lcore_socket(t.lcore),
                })
                .collect(),
            mempools: receiver.mempools.clone(),
        };
        let history = history.lock().unwrap_or_else(|e| e.into_inner());
        let record = Record { tool: "drop", version: env!("CARGO_PKG_VERSION"), config: &args, environment, summary, history: &history };
        report::write_json(path, &record).map_err(Failure::runtime)?;
    }
    Ok(())
}

fn summarize(t: &Totals, hz: u64, port: PortStats, port_counters_reset: bool) -> Summary {
    let window = |a: Option<u64>, b: Option<u64>| arrival_window(a, b, hz);
    Summary {
        side: "receiver",
        interrupted: signals::interrupted(),
        received: Rates::over(t.tally.packets, t.tally.bytes, window(t.first_tsc, t.last_tsc)),
        cycles_per_packet: cycles_per_packet(t.tally.busy_cycles, t.tally.packets),
        no_probe: t.tally.no_probe,
        untracked: t.untracked,
        probe: t.probe,
        split_streams: t.split_streams(),
        port,
        port_counters_reset,
        queues: t
            .queues
            .iter()
            .map(|(&q, x)| QueueSummary {
                queue: q,
                port: x.port,
                lcore: x.lcore,
                received: Rates::over(x.tally.packets, x.tally.bytes, window(x.first_tsc, x.last_tsc)),
                cycles_per_packet: cycles_per_packet(x.tally.busy_cycles, x.tally.packets),
                no_probe: x.tally.no_probe,
                probe: x.probe,
            })
            .collect(),
        streams: t.streams.iter().map(|(&(id, queue), c)| StreamSummary { id, queue, counts: *c }).collect(),
        arrivals: arrivals(&t.burstiness, hz),
        reflect_drops: t.tally.reflect_drops,
        one_way: t.one_way.as_ref().map(|h| OneWay {
            clock: "CLOCK_REALTIME",
            sync: blastdrop::clock::clock_sync(),
            latency: h.summary(),
            negative: t.one_way_negative,
            histogram: h.buckets(),
        }),
        ports: Vec::new(),
        limit: String::new(),
        verdict: limits::Verdict { limits: Vec::new(), invalid: None },
        faults: t.tally.faults,
    }
}

/// The busiest lane's busy time over its own arrival window, in percent.
fn busiest_pct(t: &Totals) -> Option<f64> {
    t.queues
        .values()
        .filter_map(|q| {
            let span = q.last_tsc?.saturating_sub(q.first_tsc?);
            (span > 0).then(|| (q.tally.busy_cycles as f64 / span as f64 * 100.0).min(100.0))
        })
        .reduce(f64::max)
}

/// Receiver-side counters for the verdict.
fn receiver_counters(
    received: u64,
    port: &PortStats,
    xs: &blastdrop::xstats::WindowXstats,
    lost: u64,
    probes_read: bool,
    busy_pct: Option<f64>,
) -> limits::ReceiverCounters {
    let (allowances, watched) = blastdrop::xstats::split_allowances(&xs.deltas);
    limits::ReceiverCounters {
        received,
        imissed: port.imissed,
        rx_nombuf: port.rx_nombuf,
        ierrors: port.ierrors,
        allowances,
        watched,
        probe_lost: lost,
        probes_read,
        busy_pct,
        invalid: xs.invalid.clone(),
    }
}

/// Seconds from the first arrival to the last (0 without both).
fn arrival_window(first: Option<u64>, last: Option<u64>, hz: u64) -> f64 {
    match (first, last) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / hz as f64,
        _ => 0.0,
    }
}

fn arrivals(b: &blastdrop::rx::Burstiness, hz: u64) -> Arrivals {
    let label = |k: usize| match k {
        0 => "0".to_string(),
        1 => "1".to_string(),
        k if k == blastdrop::rx::POLL_BUCKETS - 1 => format!("{}+", 1 << (k - 1)),
        k => format!("{}-{}", 1 << (k - 1), (1 << k) - 1),
    };
    let on = b.interval_cycles > 0 && b.intervals > 0;
    Arrivals {
        polls_by_frames: b.polls_by_size.iter().enumerate().filter(|(_, &n)| n > 0).map(|(k, &n)| (label(k), n)).collect(),
        full_polls: b.full_polls,
        max_backlog_frames: b.max_backlog,
        interval_us: (b.interval_cycles > 0).then(|| (b.interval_cycles as f64 / hz as f64 * 1e6).round() as u64),
        peak_per_interval: on.then_some(b.max_per_interval),
        mean_per_interval: on.then(|| b.frames_in_intervals as f64 / b.intervals as f64),
        peak_to_mean: b.peak_to_mean(),
    }
}

/// A line a second until the duration, count or idle timeout ends the run,
/// or a signal arrives. Returns the last port counters read.
fn live_loop(rx: &Mutex<Receiver>, baseline: PortStats, began: Instant, args: &Args) -> PortStats {
    let mut generation = 0;
    let mut prev = Tally::default();
    let mut prev_q: Vec<Tally> = Vec::new();
    let mut prev_port = baseline;
    let mut prev_t = began;
    let mut next_tick = began + Duration::from_secs(1);
    let mut last_arrival: Option<(Instant, u64)> = None;
    // Totals of lanes that ended in restarts, so counts stay monotonic.
    let mut carried = Tally::default();
    let mut last_total = Tally::default();
    let mut prev_xs: Option<Vec<blastdrop::xstats::Sample>> = None;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        match lock(rx).supervise() {
            Ok(Some(what)) => println!("drop: {what}"),
            Ok(None) => {}
            Err(f) => tracing::error!("{}", f.message),
        }
        let now = Instant::now();
        if signals::stopping() || args.duration.is_some_and(|d| now.duration_since(began) >= d) {
            return prev_port;
        }
        let (gen, lanes) = {
            let r = lock(rx);
            (r.generation(), r.lane_counters())
        };
        if gen != generation {
            carried.add(&last_total.since(&carried));
            generation = gen;
            prev_q = vec![Tally::default(); lanes.len()];
        }
        let mut cur = carried;
        let mut lane_now = Vec::with_capacity(lanes.len());
        for l in &lanes {
            let t = l.read();
            cur.add(&t);
            lane_now.push(t);
        }
        last_total = cur;
        if args.count.is_some_and(|c| cur.packets >= c) {
            return lock(rx).port_stats().unwrap_or(prev_port);
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
        let (stats, watch, xs_now, hz) = {
            let r = lock(rx);
            (r.port_stats().unwrap_or(prev_port), r.watch_text(), r.watch_samples(), r.tsc_hz())
        };
        let ds = stats.since(&prev_port);
        // The second's verdict: the busiest lane's busy share of the second.
        let busy = lane_now
            .iter()
            .zip(prev_q.iter())
            .map(|(c, p)| c.busy_cycles.saturating_sub(p.busy_cycles) as f64 / (secs * hz as f64) * 100.0)
            .reduce(f64::max)
            .map(|b| b.min(100.0));
        let xs = prev_xs.as_ref().map(|a| lock(rx).watch_between(a, &xs_now)).unwrap_or_default();
        let second = if d.packets == 0 {
            "idle".to_string()
        } else {
            limits::receiver_verdict(&receiver_counters(d.packets, &ds, &xs, d.lost, !args.count_only, busy)).label()
        };
        prev_xs = Some(xs_now);
        let per_q: Vec<String> = lane_now
            .iter()
            .zip(prev_q.iter_mut())
            .enumerate()
            .map(|(q, (c, p))| {
                let s = format!("q{q} {:.3}", c.packets.saturating_sub(p.packets) as f64 / secs / 1e6);
                *p = *c;
                s
            })
            .collect();
        println!(
            "[{:6.1}s] received {} Mpps  {:7.3} Gb/s wire (+20 B/frame)  | {} | imissed {} rx_nombuf {} | lost {} reordered {} dup {} no-probe {}{} | limit: {second}",
            now.duration_since(began).as_secs_f64(),
            report::mpps(r.mpps),
            r.wire_gbps,
            per_q.join(" "),
            ds.imissed,
            ds.rx_nombuf,
            d.lost,
            d.reordered,
            d.duplicates,
            d.no_probe,
            watch.map(|w| format!(" | {w}")).unwrap_or_default()
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
        "probe: {} streams, lost {} reordered {} duplicates {} late {}  no-probe frames {}  untracked {}{}",
        s.streams.len(),
        s.probe.lost,
        s.probe.reordered,
        s.probe.duplicates,
        s.probe.late,
        s.no_probe,
        s.untracked,
        if s.probe.restarts > 0 { format!("  ({} stream starts of a new sender run)", s.probe.restarts) } else { String::new() }
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
    println!("limit: {} [receiver-side, from drop's own counters]", s.limit);
    for l in &s.verdict.limits {
        println!("  {}: {}", l.kind.as_str(), l.evidence);
    }
    if s.faults > 0 {
        println!("faults: {} burst(s) caught when a memif peer left under them (their frames are not counted)", s.faults);
    }
    let a = &s.arrivals;
    let per_interval = match (a.interval_us, a.peak_per_interval, a.mean_per_interval, a.peak_to_mean) {
        (Some(us), Some(peak), Some(mean), Some(r)) => {
            format!("; per {us} us: peak {peak} frames, mean {mean:.1}, peak-to-mean {r:.1}")
        }
        _ => String::new(),
    };
    println!(
        "arrivals: {} full polls (frames waiting beyond one poll), backlog up to {} frames{per_interval}{}",
        a.full_polls,
        a.max_backlog_frames,
        if s.reflect_drops > 0 { format!("; reflect: {} frames the TX queue refused", s.reflect_drops) } else { String::new() }
    );
    if let Some(o) = &s.one_way {
        println!(
            "one way (by both hosts' CLOCK_REALTIME; this host's clock {}): {}{}",
            match o.sync {
                Some(c) if c.synchronized => format!("synchronised, max error {} us", c.max_error_us),
                Some(c) => format!("NOT synchronised (max error {} us): the figures are only as good as the clocks", c.max_error_us),
                None => "sync status unknown".to_string(),
            },
            o.latency.line(),
            if o.negative > 0 {
                format!("; {} probes arrived before they were sent: the clocks disagree", o.negative)
            } else {
                String::new()
            }
        );
    }
    for p in &s.ports {
        println!(
            "  port {} ({}): {:.3} Mpps, {} frames, lost {}; device: ipackets {} imissed {} rx_nombuf {} ierrors {}",
            p.port,
            p.name,
            p.received.mpps,
            p.received.packets,
            p.probe.lost,
            p.device.ipackets,
            p.device.imissed,
            p.device.rx_nombuf,
            p.device.ierrors
        );
    }
    for q in &s.queues {
        println!(
            "  q{} (port {}, lcore {}): {:.3} Mpps, {} frames, {:.1} cycles/pkt, lost {} reordered {} dup {}",
            q.queue,
            q.port,
            q.lcore,
            q.received.mpps,
            q.received.packets,
            q.cycles_per_packet,
            q.probe.lost,
            q.probe.reordered,
            q.probe.duplicates
        );
    }
}
