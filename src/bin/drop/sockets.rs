//! drop --socket: the receiver on the kernel's UDP sockets (no EAL),
//! served to blast's steps as a port is, counted the same way. Standalone,
//! it counts until stopped and judges what was lost by the kernel's counters.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blastdrop::counters::Tally;
use blastdrop::signals;
use blastdrop::socket_rx::{SocketReceiver, SocketRxConfig, SocketTotals};
use control::PeerInfo;
use records::window::UdpWindow;

use crate::args::Args;
use crate::backend::{lock, History};
use crate::fail::Failure;
use crate::mode::{self, Mode};
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
    let first = mode.first_queues(args.queues);
    let answering = mode.listener().map(StartingAnswer::begin).transpose()?;
    let receiver = SocketReceiver::new(cfg, first)?;
    announce(&receiver, args, first, &cpus);
    if let Some(from) = receiver.watch_source() {
        blastdrop::say!("drop: NIC counters from {from}");
    }
    drop(answering);
    let start = receiver.run_snapshot();
    let rx = Arc::new(Mutex::new(receiver));
    let history: Arc<Mutex<History>> = Arc::default();
    let server = match mode {
        Mode::Served(served) => Some(crate::serve(served, &rx, peer_info(args, spec, addr), &history)),
        Mode::Standalone => None,
    };
    blastdrop::unfinished::began_measuring();
    let began = Instant::now();
    watch(&rx, args);
    signals::request_stop();
    if let Some(s) = server {
        let _ = s.join();
    }
    let mut receiver = lock(&rx);
    let end = receiver.run_snapshot();
    let kernel = receiver.kernel_between(&start, &end);
    let watched = receiver.watched_between(&start, &end);
    let totals = receiver.finish()?;
    print_summary(&totals, kernel, began.elapsed().as_secs_f64());
    if let Some(x) = watched {
        print_watched(&x);
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

/// A line a second until a signal, --duration, --count or --idle-timeout.
fn watch(rx: &Mutex<SocketReceiver>, args: &Args) {
    let began = Instant::now();
    let (mut last_tick, mut last, mut last_arrival, mut seen) = (began, Tally::default(), None::<Instant>, 0u64);
    let mut lanes_of = lock(rx).generation();
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let now = Instant::now();
        if signals::stopping() || args.duration.is_some_and(|d| now.duration_since(began) >= d) {
            return;
        }
        let (lanes, generation) = {
            let r = lock(rx);
            (r.lane_counters(), r.generation())
        };
        if generation != lanes_of {
            // New lanes (a ladder changed the queue count) count from zero.
            (lanes_of, last, seen) = (generation, Tally::default(), 0);
        }
        let cur = blastdrop::counters::total(&lanes);
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
        if now.duration_since(last_tick) >= Duration::from_secs(1) {
            let d = cur.since(&last);
            let s = now.duration_since(last_tick).as_secs_f64();
            // Read once a second, off the lanes: /proc/net/udp's lines of the sockets.
            let drops = match lock(rx).socket_drops_now() {
                Some(0) => String::new(),
                Some(n) => format!(", the sockets dropped {n}"),
                None => ", the sockets' drops unreadable".into(),
            };
            blastdrop::say!(
                "drop: {:.3} Mpps received on {} socket(s), {} frames on them, lost (gap estimate) {}{drops}",
                d.packets as f64 / s / 1e6,
                lanes.len(),
                cur.packets,
                cur.lost
            );
            (last_tick, last) = (now, cur);
        }
    }
}

/// The run's summary: what arrived, the probes' account, the kernel's
/// counters over the run and the verdict they give.
fn print_summary(totals: &SocketTotals, (udp, interface_drops): (UdpWindow, u64), seconds: f64) {
    let (t, socket_drops) = (&totals.tally, totals.socket_drops);
    blastdrop::say!(
        "drop: received {} frames, {} bytes in {seconds:.3} s ({:.3} Mpps over the run); probes: lost (gap estimate) {}, reordered {}, duplicates {}, late {}, without a probe {}",
        t.packets,
        t.bytes,
        t.packets as f64 / seconds.max(1e-9) / 1e6,
        t.lost,
        t.reordered,
        t.duplicates,
        t.late,
        t.no_probe
    );
    blastdrop::say!(
        "drop: kernel: the sockets dropped {socket_drops}{}; in the namespace RcvbufErrors +{}, NoPorts +{}, InCsumErrors +{}, MemErrors +{}; interface drops +{interface_drops}; the host's input backlog dropped +{} (time squeezed +{})",
        if udp.gro { " (buffers of up to 64 frames: GRO on)" } else { "" },
        udp.rcvbuf_errors,
        udp.no_ports,
        udp.in_csum_errors,
        udp.mem_errors,
        udp.softnet_dropped,
        udp.softnet_time_squeeze,
    );
    if t.reflect_drops > 0 || totals.reflected.is_some() {
        blastdrop::say!(
            "drop: reflect: {} datagrams sent back to their senders, {} the send buffer would not take",
            totals.reflected.unwrap_or(0),
            t.reflect_drops
        );
    }
    if let Some(o) = &totals.one_way {
        blastdrop::say!(
            "drop: one way (by both hosts' CLOCK_REALTIME, this host's read when recvmmsg returned: the socket buffer's wait included; this host's clock {}): {}{}",
            match blastdrop::clock::clock_sync() {
                Some(c) if c.synchronized => format!("synchronised, max error {} us", c.max_error_us),
                Some(c) => format!("NOT synchronised (max error {} us): the figures are only as good as the clocks", c.max_error_us),
                None => "sync status unknown".to_string(),
            },
            o.histogram.summary().line(),
            if o.negative > 0 { format!("; {} probes arrived before they were sent: the clocks disagree", o.negative) } else { String::new() }
        );
    }
    if let Some(c) = &udp.cpu {
        let per_frame = match c.ns_per(t.packets) {
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
    if t.packets == 0 {
        blastdrop::say!("drop: limit: unknown: nothing arrived (does the sender send to {}?)", udp.address);
        return;
    }
    if let Some(why) = &totals.unread_drops {
        // A drop count that could not be read is no zero: no verdict rests on it.
        blastdrop::say!("drop: limit: unknown: a socket's drops could not be read ({why})");
        return;
    }
    // The gap estimate stands for the loss: without a sender's counts it
    // misses frames lost before a stream's first arrival or after its last.
    let verdict = limits::socket_verdict(&udp.receiver().counters(t.lost, socket_drops, interface_drops));
    for l in &verdict.limits {
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
