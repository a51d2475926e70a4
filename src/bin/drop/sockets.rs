//! drop --socket: the receiver on the kernel's UDP sockets (no EAL),
//! served to blast's steps as a port is, counted the same way. Standalone,
//! it counts until stopped and judges what was lost by the kernel's counters.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blastdrop::counters::Tally;
use blastdrop::figures::Rates;
use blastdrop::live::Ticker;
use blastdrop::live_latency::LatencyCounts;
use blastdrop::signals;
use blastdrop::socket_rx::{SocketReceiver, SocketRxConfig, SocketSnapshot, SocketTotals};
use blastdrop::timeline::{counter_deltas, Timeline};
use control::PeerInfo;
use records::drop::{SocketRun, Summary};
use records::window::UdpWindow;
use seqtrack::SeqCounts;

use crate::args::Args;
use crate::backend::{lock, History};
use crate::fail::Failure;
use crate::mode::{self, Mode};
use crate::settings::Settings;
use crate::start::StartingAnswer;

/// Receives on the sockets until stopped (serving blast's steps when
/// served), then prints the summary and its verdict.
pub(crate) fn receive(args: &Args, spec: &str, mode: Mode) -> Result<(), Failure> {
    let addr = mode::socket_addr(spec)?;
    // The CPUs this process may run on (taskset's choice), in order.
    let cpus: Vec<usize> = blastdrop::eal_args::allowed_cpus().into_iter().map(|c| c as usize).collect();
    let cfg = SocketRxConfig {
        addr,
        max_queues: args.queues,
        rcvbuf: args.socket_rcvbuf.map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
        gro: !args.no_gro,
        batch: args.burst,
        streams: args.streams,
        cpus: cpus.clone(),
        cost_ticks: args.rx_cost,
        watch_xstats: args.watch_xstat.clone(),
        reflect: args.reflect,
        one_way: args.one_way,
    };
    let settings = Settings::of(args);
    let outputs = &settings.outputs;
    // Bound before the sockets, so a refusal is the one line.
    let endpoint = blastdrop::timeline::bind_metrics(&outputs.timeline)?;
    let first = mode.first_queues(args.queues);
    let answering = mode.listener().map(StartingAnswer::begin).transpose()?;
    let receiver = SocketReceiver::new(cfg, first)?;
    announce(&receiver, args, first, &cpus);
    if let Some(from) = receiver.watch_source() {
        blastdrop::say!("drop: NIC counters from {from}");
    }
    drop(answering);
    let columns = blastdrop::timeline::counter_columns(&receiver.watch().into_iter().collect::<Vec<_>>());
    let mut timeline = Timeline::new(&outputs.timeline, columns, endpoint)?;
    let start = receiver.run_snapshot();
    let rx = Arc::new(Mutex::new(receiver));
    let history: Arc<Mutex<History>> = Arc::default();
    let server = match mode {
        Mode::Served(served) => Some(crate::serve(served, &rx, peer_info(args, spec, addr), &history)),
        Mode::Standalone => None,
    };
    blastdrop::unfinished::began_measuring();
    let began = Instant::now();
    watch(&rx, args, &settings, &mut timeline, began);
    signals::request_stop();
    if let Some(s) = server {
        let _ = s.join();
    }
    let mut receiver = lock(&rx);
    let end = receiver.run_snapshot();
    let kernel = receiver.kernel_between(&start, &end);
    let watched = receiver.watched_between(&start, &end);
    let totals = receiver.finish()?;
    let summary = summarize(&totals, kernel, watched.as_ref(), receiver.config());
    print_summary(&summary, &totals, began.elapsed().as_secs_f64());
    if let Some(x) = &watched {
        print_watched(x);
    }
    timeline.final_totals(totals.queues.iter().map(|q| (q.queue, q.tally)), Some(totals.tally.lost));
    let (series, series_analysis) = timeline.finish();
    blastdrop::say!("drop: over time: {}", series_analysis.sentence);
    if let Some(path) = &outputs.series_svg {
        blastdrop::timeline::write_plot(path, &series, &series_analysis, "drop: received over time (the kernel's UDP sockets)")?;
    }
    if let Some(path) = &outputs.json {
        let started = blastdrop::session::Started::without_eal();
        let environment = blastdrop::environment::of_socket_receiver(&started, &receiver, &totals);
        let history = history.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let body = records::drop::DropBody { environment, summary, series, series_analysis, history };
        blastdrop::record_file::write_json(path, &crate::Record::drop(&settings.config, body))?;
    }
    Ok(())
}

/// drop as blast's hello answer describes it.
fn peer_info(args: &Args, spec: &str, addr: std::net::SocketAddr) -> PeerInfo {
    PeerInfo {
        hostname: blastdrop::environment::hostname(),
        dpdk: blastdrop::environment::datapath(true),
        port_name: format!("udp:{spec}"),
        driver: "udp-socket".into(),
        max_rx_queues: args.queues,
        worker_lcores: args.queues,
        max_size: args.max_size,
        // SO_REUSEPORT spreads flows by their hash, as RSS does.
        rss: true,
        cpu_model: blastdrop::environment::cpu_model(),
        ports: 1,
        reflect: args.reflect,
        udp_socket: Some(addr),
    }
}

fn announce(receiver: &SocketReceiver, args: &Args, first: u16, cpus: &[usize]) {
    let cfg = receiver.config();
    blastdrop::say!(
        "drop: UDP sockets on {} ({}), {first} queue(s) of up to {}, one thread each on CPUs {:?}, UDP GRO {}, receive buffer {} B each as granted{}{}{}; receiver-side figures",
        cfg.addr,
        receiver.interface().map_or("every interface".to_string(), |i| format!("interface {i}")),
        cfg.max_queues,
        cpus,
        match (cfg.gro, cfg.reflect) {
            (true, _) => "on",
            (false, true) => "off (reflecting: each datagram goes back as it came)",
            (false, false) => "off",
        },
        receiver.rcvbuf_granted(),
        if cfg.cost_ticks > 0 { format!(", {} TSC ticks of work per datagram", cfg.cost_ticks) } else { String::new() },
        match (cfg.reflect, cfg.one_way) {
            (true, true) => ", every datagram sent back to its sender (--reflect) and each probe timed one way (--one-way)",
            (true, false) => ", every datagram sent back to its sender (--reflect)",
            (false, true) => ", each probe timed one way (--one-way)",
            (false, false) => "",
        },
        match &args.listen {
            Some(a) => format!(", control on {a} (up to {} queues)", cfg.max_queues),
            None => String::new(),
        }
    );
}

/// A line an interval (a second unless --interval says otherwise) until a
/// signal, --duration, --count or --idle-timeout; each interval's row, with
/// its verdict from the kernel's counters, goes into the series (and /metrics).
fn watch(rx: &Mutex<SocketReceiver>, args: &Args, settings: &Settings, timeline: &mut Timeline, began: Instant) {
    let mut ticker = Ticker::every(began, settings.outputs.timeline.interval);
    let mut live = Live { generation: lock(rx).generation(), ..Live::default() };
    live.snapshot = Some(lock(rx).snapshot());
    let (mut last_arrival, mut seen) = (None::<Instant>, 0u64);
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let now = Instant::now();
        if signals::stopping() || args.duration.is_some_and(|d| now.duration_since(began) >= d) {
            return;
        }
        let (cur, lane_now) = live.read_lanes(rx, timeline);
        let probed = cur.packets.saturating_sub(cur.no_probe);
        if probed > live.probed {
            live.probed = probed;
            timeline.trial_frames_at(now.duration_since(began).as_secs_f64());
        }
        if args.count.is_some_and(|c| cur.packets >= c) {
            return;
        }
        if cur.packets > seen {
            (last_arrival, seen) = (Some(now), cur.packets);
        }
        if let (Some(idle), Some(at)) = (args.idle_timeout, last_arrival) {
            if now.duration_since(at) >= idle {
                return;
            }
        }
        if let Some(tick) = ticker.due(now) {
            live.line(rx, &tick, cur, &lane_now, timeline);
        }
    }
}

/// What the live loop carries from one read and one interval to the next.
#[derive(Default)]
struct Live {
    generation: u64,
    /// The totals and each lane's counters at the last line.
    prev: Tally,
    prev_q: Vec<Tally>,
    /// Totals of lanes that a new set replaced (a ladder's queue change), so counts run on.
    carried: Tally,
    last_total: Tally,
    last_q: Vec<Tally>,
    /// The kernel's counters at the last line (None after the lanes changed).
    snapshot: Option<SocketSnapshot>,
    prev_lat: LatencyCounts,
    probed: u64,
}

impl Live {
    /// The running totals (carried over lane changes) and each lane's counters.
    fn read_lanes(&mut self, rx: &Mutex<SocketReceiver>, timeline: &mut Timeline) -> (Tally, Vec<Tally>) {
        let (generation, lanes) = {
            let r = lock(rx);
            (r.generation(), r.lane_counters())
        };
        if generation != self.generation {
            self.carried.add(&self.last_total.since(&self.carried));
            timeline.phase_done(self.last_q.iter().enumerate().map(|(q, t)| (q as u16, *t)));
            (self.generation, self.prev_q, self.snapshot) = (generation, vec![Tally::default(); lanes.len()], None);
            // The new lanes count their probes' times from nothing.
            self.prev_lat = LatencyCounts::default();
        }
        let mut cur = self.carried;
        let lane_now: Vec<Tally> = lanes.iter().map(|l| l.read()).collect();
        lane_now.iter().for_each(|t| cur.add(t));
        self.prev_q.resize(lane_now.len(), Tally::default());
        (self.last_total, self.last_q) = (cur, lane_now.clone());
        (cur, lane_now)
    }

    /// Prints the interval's line, with its verdict, and keeps its row.
    fn line(&mut self, rx: &Mutex<SocketReceiver>, tick: &blastdrop::live::Tick, cur: Tally, lane_now: &[Tally], timeline: &mut Timeline) {
        let d = cur.since(&self.prev);
        let r = Rates::over(d.packets, d.bytes, tick.secs);
        let (snapshot, lat_now, kernel) = {
            let r = lock(rx);
            let now = r.snapshot();
            let lat = LatencyCounts::read(r.lane_counters().iter().map(|l| &l.latency));
            // The interval's kernel counters, where the same lanes ran through it.
            let kernel = self.snapshot.as_ref().and_then(|a| {
                let w = r.window(a, &now).ok()?;
                Some((r.kernel_between(a, &now).0, w.socket_drops, w.interface_drops, r.watched_between(a, &now), w.xstats_invalid))
            });
            (now, lat, kernel)
        };
        let latency_ns = timeline.latency(&lat_now.since(&self.prev_lat));
        self.prev_lat = lat_now;
        // The row's verdict is a label (a metric's too); why one is unknown goes in the line.
        let (verdict, why, drops, xs) = match &kernel {
            _ if d.packets == 0 => ("idle".to_string(), String::new(), String::new(), None),
            None => ("unknown".to_string(), " (the lanes changed in this interval)".to_string(), String::new(), None),
            Some((_, _, _, _, Some(why))) => ("unknown".to_string(), format!(" ({why})"), String::new(), None),
            Some((udp, socket_drops, interface_drops, xs, None)) => {
                let v = limits::socket_verdict(&udp.receiver().counters(d.lost, *socket_drops, *interface_drops));
                let drops = if *socket_drops > 0 { format!(", the sockets dropped {socket_drops}") } else { String::new() };
                (v.label(), String::new(), drops, xs.clone())
            }
        };
        let row = series::Row {
            t_s: tick.elapsed.as_secs_f64(),
            secs: tick.secs,
            received_frames: Some(d.packets),
            received_bytes: Some(d.bytes),
            lost: Some(d.lost),
            counters: xs.as_ref().map_or_else(|| vec![0; timeline.counters().len()], |x| counter_deltas(x, timeline.counters())),
            latency_ns,
            verdict: Some(verdict.clone()),
            ..Default::default()
        };
        timeline.push(row, lane_now, false);
        let queues = tick.queue_mpps(lane_now, &self.prev_q);
        blastdrop::events::emit("tick", &blastdrop::events::TickEvent::new(tick, "received", &r, queues, Some(verdict.clone())));
        let per_q = tick.per_queue(lane_now, &mut self.prev_q);
        blastdrop::say!(
            "{} received {} Mpps  {:7.3} Gb/s wire (+20 B/frame)  | {} | on {} socket(s), lost (gap estimate) {} reordered {} dup {}{drops} | limit: {verdict}{why}",
            tick.stamp(),
            blastdrop::figures::mpps(r.mpps),
            r.wire_gbps,
            per_q,
            lane_now.len(),
            d.lost,
            d.reordered,
            d.duplicates,
        );
        (self.prev, self.snapshot) = (cur, Some(snapshot));
    }
}

/// The run's summary, as drop's record keeps it: what arrived (first to
/// last arrival), the probes' account, each queue's and stream's share,
/// one-way times, and the kernel's counters over the run with the verdict
/// they give. No port: `port` is null, and the lanes' cost is their CPUs'
/// time (`socket.udp.cpu`), not busy polls.
fn summarize(
    t: &SocketTotals,
    (mut udp, interface_drops): (UdpWindow, u64),
    watched: Option<&blastdrop::xstats::WindowXstats>,
    cpus: &SocketRxConfig,
) -> Summary {
    let hz = blastdrop::clock::tsc_hz();
    let probe = |x: &Tally, restarts| SeqCounts {
        received: x.packets - x.no_probe,
        lost: x.lost,
        reordered: x.reordered,
        duplicates: x.duplicates,
        late: x.late,
        restarts,
    };
    if let Some(c) = udp.cpu.as_mut() {
        c.ns_per_frame = c.ns_per(t.tally.packets);
    }
    let socket =
        SocketRun { udp, socket_drops: t.socket_drops, unread_drops: t.unread_drops.clone(), interface_drops, reflected: t.reflected };
    let verdict = verdict_of(t, &socket, watched);
    Summary {
        side: "receiver".to_owned(),
        interrupted: signals::interrupted(),
        received: Rates::over(t.tally.packets, t.tally.bytes, t.arrival_seconds(hz)),
        busy: None,
        no_probe: t.tally.no_probe,
        untracked: t.tally.untracked,
        probe: probe(&t.tally, 0),
        split_streams: t.split_streams(),
        port: None,
        port_counters_reset: false,
        queues: t
            .queues
            .iter()
            .map(|q| records::drop::QueueSummary {
                queue: q.queue,
                port: 0,
                lcore: cpus.cpu_of(q.queue).unwrap_or(0) as u32,
                received: Rates::over(q.tally.packets, q.tally.bytes, q.arrival_seconds(hz)),
                busy: None,
                no_probe: q.tally.no_probe,
                probe: probe(&q.tally, 0),
            })
            .collect(),
        streams: t.streams.iter().map(|(&(id, queue), c)| records::drop::StreamSummary { id, queue, counts: *c }).collect(),
        // Not measured on sockets: a recvmmsg call is no poll of a ring.
        arrivals: records::drop::Arrivals {
            polls_by_frames: Default::default(),
            full_polls: 0,
            max_backlog_frames: 0,
            interval_us: None,
            peak_per_interval: None,
            mean_per_interval: None,
            peak_to_mean: None,
        },
        sizes: Vec::new(),
        sizes_other: 0,
        reflect_drops: t.tally.reflect_drops,
        one_way: t.one_way.as_ref().map(|o| records::drop::OneWay {
            clock: latency::LatencyClock::HostPoll,
            arrival: "this host's CLOCK_REALTIME when recvmmsg returned (the socket buffer's wait included)".into(),
            fallback: None,
            untimed: 0,
            sync: blastdrop::clock::clock_sync(),
            latency: o.histogram.summary(),
            negative: o.negative,
            histogram: o.histogram.buckets(),
        }),
        ports: Vec::new(),
        limit: verdict.label(),
        verdict,
        faults: 0,
        socket: Some(socket),
    }
}

/// The run's verdict from the kernel's counters: unknown where nothing
/// arrived or a count could not be read.
fn verdict_of(t: &SocketTotals, k: &SocketRun, watched: Option<&blastdrop::xstats::WindowXstats>) -> limits::Verdict {
    let unknown = |why: String| limits::Verdict { limits: Vec::new(), invalid: Some(why) };
    if t.tally.packets == 0 {
        return unknown(format!("nothing arrived (does the sender send to {}?)", k.udp.address));
    }
    if let Some(why) = &k.unread_drops {
        // A drop count that could not be read is no zero: no verdict rests on it.
        return unknown(format!("a socket's drops could not be read ({why})"));
    }
    if let Some(why) = watched.and_then(|x| x.invalid.clone()) {
        return unknown(why);
    }
    // The gap estimate stands for the loss: without a sender's counts it
    // misses frames lost before a stream's first arrival or after its last.
    limits::socket_verdict(&k.udp.receiver().counters(t.tally.lost, k.socket_drops, k.interface_drops))
}

/// The run's summary in lines: what arrived, the kernel's counters over
/// the run, the reflections, one-way times, CPU time and the verdict.
fn print_summary(s: &Summary, totals: &SocketTotals, seconds: f64) {
    let Some(k) = &s.socket else { return };
    let (t, udp) = (&totals.tally, &k.udp);
    blastdrop::say!(
        "drop: received {} frames, {} bytes in {seconds:.3} s ({:.3} Mpps from the first arrival to the last); probes: lost (gap estimate) {}, reordered {}, duplicates {}, late {}, without a probe {}",
        t.packets,
        t.bytes,
        s.received.mpps,
        t.lost,
        t.reordered,
        t.duplicates,
        t.late,
        t.no_probe
    );
    blastdrop::say!(
        "drop: kernel: the sockets dropped {}{}; in the namespace RcvbufErrors +{}, NoPorts +{}, InCsumErrors +{}, MemErrors +{}; interface drops +{}; the host's input backlog dropped +{} (time squeezed +{})",
        k.socket_drops,
        if udp.gro { " (buffers of up to 64 frames: GRO on)" } else { "" },
        udp.rcvbuf_errors,
        udp.no_ports,
        udp.in_csum_errors,
        udp.mem_errors,
        k.interface_drops,
        udp.softnet_dropped,
        udp.softnet_time_squeeze,
    );
    if let Some(n) = k.reflected {
        blastdrop::say!("drop: reflect: {n} datagrams sent back to their senders, {} the send buffer would not take", s.reflect_drops);
    }
    if let Some(o) = &s.one_way {
        blastdrop::say!(
            "drop: one way (by both hosts' CLOCK_REALTIME, this host's read when recvmmsg returned: the socket buffer's wait included; this host's clock {}): {}{}",
            crate::print::clock_sync(o.sync),
            o.latency.line(),
            if o.negative > 0 { format!("; {} probes arrived before they were sent: the clocks disagree", o.negative) } else { String::new() }
        );
    }
    if let Some(c) = &udp.cpu {
        let per_frame = match c.ns_per_frame {
            Some(ns) => format!("{ns:.0} ns a frame received"),
            None if t.packets == 0 => "nothing received".into(),
            None => "less than one 10 ms tick of /proc/stat in all: too little to measure a frame's".into(),
        };
        blastdrop::say!(
            "drop: CPU: the lanes' CPUs {:?} spent {:.2} s user, {:.2} s system, {:.2} s softirq ({}, anything else on them included); the host's softirq {:.2} s",
            c.cpus,
            c.user_seconds,
            c.system_seconds,
            c.softirq_seconds,
            per_frame,
            c.host_softirq_seconds
        );
    }
    if let Some(why) = &s.verdict.invalid {
        blastdrop::say!("drop: limit: unknown: {why}");
    }
    for l in &s.verdict.limits {
        blastdrop::say!("drop: limit: {} ({} frames, loss from the gap estimate): {}", l.kind.as_str(), l.frames, l.evidence);
    }
}

/// The interface's watched counters over the run, where they moved: on
/// ENA the allowance counters, a limit no socket counter shows.
fn print_watched(x: &blastdrop::xstats::WindowXstats) {
    if let Some(why) = &x.invalid {
        blastdrop::say!("drop: NIC counters over the run: not believed ({why})");
        return;
    }
    let (deltas, _) = x.counters.to_wire();
    let moved: Vec<String> = deltas.iter().filter(|(_, &d)| d > 0).map(|(n, d)| format!("{n} +{d}")).collect();
    if !moved.is_empty() {
        blastdrop::say!("drop: NIC counters over the run: {}", moved.join(", "));
    }
}
