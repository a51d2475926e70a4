//! drop's receiver on the kernel's UDP sockets (drop --socket), no EAL:
//! one thread per queue, each on its own socket of a `SO_REUSEPORT` group
//! (the kernel spreads flows over them by hash) and pinned to a CPU as an
//! lcore is. Its windows and exact trial accounts go through the same
//! [`TrialBoard`] as the DPDK receiver's, so blast's steps over it carry
//! the same figures; its verdicts read the kernel's counters (the sockets'
//! drops, the namespace's UDP counters, the interface's drops).
//!
//! A socket sees no IPv4 identification field, where blast's DPDK lanes
//! carry their run id: every frame is counted under run 0 ("no run id",
//! `seqtrack::NO_RUN`), and a window's stream edges are taken under it too.

use std::net::{IpAddr, SocketAddr};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use records::window::{KernelCpu, QueueFigures, UdpWindow, WindowFigures};
use seqtrack::{NoExactAccount, SeqCounts, StreamEdge};
use udpsock::snmp::UdpCounters;
use udpsock::RecvLane;

use crate::counters::{LaneCounters, Tally};
use crate::error::Error;
use crate::trial::TrialBoard;

/// How drop receives on sockets.
#[derive(Debug, Clone)]
pub struct SocketRxConfig {
    pub addr: SocketAddr,
    /// The most queues (sockets, threads) a ladder may ask for.
    pub max_queues: u16,
    /// Each socket's receive buffer, in bytes as asked (None: the kernel's default).
    pub rcvbuf: Option<usize>,
    pub gro: bool,
    /// Buffers per recvmmsg call.
    pub batch: usize,
    /// Stream ids sequence-checked per lane.
    pub streams: usize,
    /// The CPUs the lanes run on, lane i on `cpus[i % len]` (empty: where the kernel puts them).
    pub cpus: Vec<usize>,
    /// Busy work per datagram, in TSC ticks (drop --rx-cost).
    pub cost_ticks: u64,
    /// Statistics of the interface's kernel driver watched besides its
    /// driver's own set (on ENA the allowance counters): --watch-xstat.
    pub watch_xstats: Vec<String>,
    /// Send every datagram back to its sender (drop --reflect; GRO off).
    pub reflect: bool,
    /// Time every probe one way, by this host's clock when recvmmsg
    /// returned against the sender's stamp (drop --one-way).
    pub one_way: bool,
}

impl SocketRxConfig {
    /// The CPU queue `queue`'s lane is pinned to (None: not pinned).
    pub fn cpu_of(&self, queue: u16) -> Option<usize> {
        (!self.cpus.is_empty()).then(|| self.cpus[usize::from(queue) % self.cpus.len()])
    }
}

/// What a lane hands back when it stops.
#[derive(Debug, Clone, Default)]
pub struct LaneEnd {
    /// --one-way: its times.
    pub one_way: Option<OneWayTimes>,
    /// The TSC at its first and last call that took datagrams.
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
    /// Each stream's account on this lane.
    pub streams: Vec<(u16, SeqCounts)>,
}

/// One queue's figures over every set of lanes that served it.
#[derive(Debug, Clone, Default)]
pub struct QueueTotals {
    pub queue: u16,
    pub tally: Tally,
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
}

impl QueueTotals {
    /// Its first to last arrival in seconds (0 without both).
    pub fn arrival_seconds(&self, hz: u64) -> f64 {
        match (self.first_tsc, self.last_tsc) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64 / hz.max(1) as f64,
            _ => 0.0,
        }
    }

    fn span(&mut self, end: &LaneEnd) {
        self.first_tsc = match (self.first_tsc, end.first_tsc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_tsc = self.last_tsc.max(end.last_tsc);
    }
}

/// A lane's one-way times (drop --one-way), when it stops.
#[derive(Debug, Clone)]
pub struct OneWayTimes {
    pub histogram: latency::LatencyHistogram,
    /// Probes stamped later than they arrived (the clocks disagree).
    pub negative: u64,
}

/// Buffers a lane took from the kernel, and those holding several datagrams.
#[derive(Default)]
#[repr(align(64))]
struct Buffers {
    taken: AtomicU64,
    coalesced: AtomicU64,
}

struct Lane {
    queue: u16,
    counters: Arc<LaneCounters>,
    buffers: Arc<Buffers>,
    /// A second handle on the lane's socket, for its drops.
    socket: OwnedFd,
    thread: JoinHandle<Result<LaneEnd, String>>,
}

/// Counters at one instant.
#[derive(Debug, Clone)]
pub struct SocketSnapshot {
    generation: u64,
    at: Instant,
    lanes: Vec<Tally>,
    buffers: Vec<(u64, u64)>,
    /// Each lane's socket's drops (None: its line in /proc/net/udp could not be read).
    drops: Vec<Option<u64>>,
    udp: Option<UdpCounters>,
    interface_drops: Option<u64>,
    softnet: Option<udpsock::host::Softnet>,
    /// The CPUs read, their time and the host's.
    cpu: Option<(Vec<usize>, udpsock::host::CpuTime, udpsock::host::CpuTime)>,
    /// The interface's driver statistics watched.
    xs: Option<crate::xstats::Sample>,
}

/// What the lanes counted in all, when they stopped.
#[derive(Debug, Clone, Default)]
pub struct SocketTotals {
    pub tally: Tally,
    /// The sockets' own drops (buffers under GRO), over every generation of lanes.
    pub socket_drops: u64,
    /// Why a socket's drops could not be read, if one's could not: `socket_drops` is then short.
    pub unread_drops: Option<String>,
    pub queues: Vec<QueueTotals>,
    /// --one-way: every lane's times over the run, merged.
    pub one_way: Option<OneWayTimes>,
    /// --reflect: datagrams sent back to their senders (every one received
    /// less those the send buffer refused, `tally.reflect_drops`).
    pub reflected: Option<u64>,
    /// Each (stream, queue)'s account.
    pub streams: std::collections::BTreeMap<(u16, u16), SeqCounts>,
}

impl SocketTotals {
    /// The first arrival to the last over every queue, in seconds.
    pub fn arrival_seconds(&self, hz: u64) -> f64 {
        let first = self.queues.iter().filter_map(|q| q.first_tsc).min();
        let last = self.queues.iter().filter_map(|q| q.last_tsc).max();
        QueueTotals { first_tsc: first, last_tsc: last, ..QueueTotals::default() }.arrival_seconds(hz)
    }

    /// Streams seen on more than one queue (their sequence accounting is split).
    pub fn split_streams(&self) -> u32 {
        crate::receiver::split_streams(&self.streams)
    }
}

pub struct SocketReceiver {
    cfg: SocketRxConfig,
    lanes: Vec<Lane>,
    board: Arc<TrialBoard>,
    stop: Arc<AtomicBool>,
    generation: u64,
    /// Each socket's receive buffer as granted.
    granted: usize,
    /// The interface that holds the address (None: a wildcard address).
    interface: Option<String>,
    /// Its kernel driver's statistics (None: no interface, or none to read).
    watch: Option<crate::xstats::Watch>,
    totals: SocketTotals,
    /// --one-way: the wall clock the lanes read arrivals on.
    clock: Option<crate::clock::WallClock>,
}

impl SocketReceiver {
    /// Binds and starts `queues` lanes.
    pub fn new(mut cfg: SocketRxConfig, queues: u16) -> Result<SocketReceiver, Error> {
        // A GRO buffer would go back as one datagram: reflecting takes them one by one.
        cfg.gro &= !cfg.reflect;
        let clock = cfg.one_way.then(|| crate::clock::WallClock::new(crate::clock::tsc_hz()));
        let board = Arc::new(TrialBoard::new(cfg.streams, usize::from(cfg.max_queues)));
        let interface = interface_of(cfg.addr.ip());
        let watch = match &interface {
            Some(i) => watch_of(i, &cfg.watch_xstats)?,
            None if !cfg.watch_xstats.is_empty() => return Err(Error::SocketWatchWithoutInterface { addr: cfg.addr }),
            None => None,
        };
        let mut rx = SocketReceiver {
            cfg,
            lanes: Vec::new(),
            board,
            stop: Arc::new(AtomicBool::new(false)),
            generation: 0,
            granted: 0,
            interface,
            watch,
            totals: SocketTotals { one_way: cfg_one_way(clock), ..SocketTotals::default() },
            clock,
        };
        rx.start(queues)?;
        Ok(rx)
    }

    pub fn config(&self) -> &SocketRxConfig {
        &self.cfg
    }

    /// Which set of lanes runs: one more each time the queue count changes.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn queues(&self) -> u16 {
        self.lanes.len() as u16
    }

    /// Each socket's receive buffer as the kernel granted it, in bytes.
    pub fn rcvbuf_granted(&self) -> usize {
        self.granted
    }

    pub fn interface(&self) -> Option<&str> {
        self.interface.as_deref()
    }

    pub fn lane_counters(&self) -> Vec<Arc<LaneCounters>> {
        self.lanes.iter().map(|l| l.counters.clone()).collect()
    }

    fn start(&mut self, queues: u16) -> Result<(), Error> {
        self.stop = Arc::new(AtomicBool::new(false));
        self.generation += 1;
        for queue in 0..queues {
            let (fd, buffer) = udpsock::receiver_socket(self.cfg.addr, self.cfg.rcvbuf, self.cfg.gro)?;
            self.granted = buffer.granted;
            let socket = fd.try_clone().map_err(|e| Error::SocketLane { queue, why: format!("duplicating its socket failed: {e}") })?;
            let lane = if self.cfg.reflect {
                RecvLane::reflecting(fd, self.cfg.batch, self.cfg.streams)
            } else {
                RecvLane::new(fd, self.cfg.batch, self.cfg.streams)
            };
            let (counters, buffers) = (Arc::new(LaneCounters::default()), Arc::new(Buffers::default()));
            let work = LaneWork {
                queue,
                lane,
                board: self.board.clone(),
                counters: counters.clone(),
                buffers: buffers.clone(),
                stop: self.stop.clone(),
                cpu: self.cfg.cpu_of(queue),
                cost_ticks: self.cfg.cost_ticks,
                clock: self.clock,
            };
            let thread = std::thread::Builder::new()
                .name(format!("socket-lane-{queue}"))
                .spawn(move || work.run())
                .map_err(|e| Error::SocketLane { queue, why: format!("its thread did not start: {e}") })?;
            self.lanes.push(Lane { queue, counters, buffers, socket, thread });
        }
        Ok(())
    }

    /// Stops the lanes and adds what they counted to the totals. A lane
    /// whose socket failed says so.
    fn stop(&mut self) -> Result<(), Error> {
        self.stop.store(true, Relaxed);
        let mut first_error = None;
        for lane in self.lanes.drain(..) {
            // Read before the thread ends (the lane holds the other handle).
            let drops = udpsock::socket_drops(&lane.socket);
            let result = lane.thread.join().unwrap_or_else(|_| Err("its thread panicked".to_string()));
            let t = lane.counters.read();
            self.totals.tally.add(&t);
            match drops {
                Ok(d) => self.totals.socket_drops += d,
                Err(e) => self.totals.unread_drops = Some(format!("queue {}: {e}", lane.queue)),
            }
            let queue = match self.totals.queues.iter().position(|q| q.queue == lane.queue) {
                Some(i) => &mut self.totals.queues[i],
                None => {
                    self.totals.queues.push(QueueTotals { queue: lane.queue, ..QueueTotals::default() });
                    self.totals.queues.last_mut().expect("just pushed")
                }
            };
            queue.tally.add(&t);
            if let Ok(end) = &result {
                queue.span(end);
                for (id, c) in &end.streams {
                    self.totals.streams.entry((*id, lane.queue)).or_default().add(c);
                }
                if let (Some(times), Some(all)) = (&end.one_way, self.totals.one_way.as_mut()) {
                    all.histogram.merge(&times.histogram);
                    all.negative += times.negative;
                }
            }
            if let (Err(why), None) = (result, &first_error) {
                first_error = Some(Error::SocketLane { queue: lane.queue, why });
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Receives on `queues` sockets from now on; true when they changed.
    pub fn set_queues(&mut self, queues: u16) -> Result<bool, Error> {
        if queues > self.cfg.max_queues {
            return Err(Error::QueuesBeyondReserved { asked: queues, reserved: self.cfg.max_queues });
        }
        if queues == self.queues() {
            return Ok(false);
        }
        self.stop()?;
        self.start(queues)?;
        Ok(true)
    }

    /// Stops every lane: what they counted in all.
    pub fn finish(&mut self) -> Result<SocketTotals, Error> {
        self.stop()?;
        let fresh = SocketTotals { one_way: cfg_one_way(self.clock), ..SocketTotals::default() };
        let mut totals = std::mem::replace(&mut self.totals, fresh);
        if self.cfg.reflect {
            totals.reflected = Some(totals.tally.packets - totals.tally.reflect_drops);
        }
        Ok(totals)
    }

    /// Why the trial frames of the senders' streams at `edges` cannot be counted exactly here, if they cannot.
    pub fn trial_refusal(&self, edges: &[StreamEdge]) -> Option<NoExactAccount> {
        self.board.check(edges)
    }

    /// A measured window opens with the senders' streams at `edges`; its starting snapshot.
    pub fn open_window(&mut self, edges: &[StreamEdge]) -> SocketSnapshot {
        self.board.open(&without_run(edges));
        self.snapshot()
    }

    /// The exact account of each sender's trial frames (see the DPDK receiver's).
    pub fn trial_accounts(&self, starts: &[StreamEdge], ends: &[StreamEdge]) -> Result<Vec<seqtrack::TrialAccount>, NoExactAccount> {
        if let Some(why) = self.trial_refusal(starts) {
            return Err(why);
        }
        let lanes: Vec<u16> = self.lanes.iter().map(|l| l.queue).collect();
        self.board.collect(&lanes)?.accounts(&without_run(starts), &without_run(ends))
    }

    pub fn snapshot(&self) -> SocketSnapshot {
        self.snapshot_over(self.lane_cpus())
    }

    /// A snapshot whose CPU time covers every CPU a lane may run on, for
    /// figures over a whole run, whose lanes (and so their CPUs) a ladder
    /// may change: [`SocketReceiver::snapshot`] reads the running lanes' alone.
    pub fn run_snapshot(&self) -> SocketSnapshot {
        let mut cpus: Vec<usize> = (0..self.cfg.max_queues).filter_map(|q| self.cfg.cpu_of(q)).collect();
        cpus.sort_unstable();
        cpus.dedup();
        self.snapshot_over(cpus)
    }

    fn snapshot_over(&self, cpus: Vec<usize>) -> SocketSnapshot {
        SocketSnapshot {
            generation: self.generation,
            at: Instant::now(),
            lanes: self.lanes.iter().map(|l| l.counters.read()).collect(),
            buffers: self.lanes.iter().map(|l| (l.buffers.taken.load(Relaxed), l.buffers.coalesced.load(Relaxed))).collect(),
            drops: self.lanes.iter().map(|l| udpsock::socket_drops(&l.socket).ok()).collect(),
            udp: udpsock::snmp::udp_counters().ok(),
            interface_drops: self.interface.as_deref().and_then(|i| nicstats::link_drops(i).ok()).map(|d| d.total()),
            softnet: udpsock::host::softnet().ok(),
            cpu: udpsock::host::cpu_time(&cpus).ok().map(|(lanes, host)| (cpus, lanes, host)),
            xs: self.watch.as_ref().map(|w| w.sample()),
        }
    }

    /// The running sockets' drops since they opened (None: one could not be read).
    pub fn socket_drops_now(&self) -> Option<u64> {
        self.lanes.iter().map(|l| udpsock::socket_drops(&l.socket).ok()).sum()
    }

    /// Where the interface's driver statistics are read (the record's
    /// `counters_from`; None: not read).
    pub fn counters_from(&self) -> Option<String> {
        self.watch.as_ref().and_then(|w| w.kernel_source())
    }

    /// The interface's watched statistics, for the series' columns.
    pub fn watch(&self) -> Option<&crate::xstats::Watch> {
        self.watch.as_ref()
    }

    /// Where the interface's counters are read, in words (None: not read).
    pub fn watch_source(&self) -> Option<String> {
        self.watch.as_ref().and_then(|w| w.kernel_source()).map(|s| format!("{s} ({})", self.watch_names().join(", ")))
    }

    fn watch_names(&self) -> Vec<String> {
        self.watch.as_ref().map_or_else(Vec::new, |w| w.names())
    }

    /// The interface's watched counters between two snapshots.
    pub fn watched_between(&self, a: &SocketSnapshot, b: &SocketSnapshot) -> Option<crate::xstats::WindowXstats> {
        match (&self.watch, &a.xs, &b.xs) {
            (Some(w), Some(a), Some(b)) => Some(w.window(a, b)),
            _ => None,
        }
    }

    /// The CPUs the running lanes are pinned to (empty: not pinned).
    pub fn lane_cpus(&self) -> Vec<usize> {
        let mut cpus: Vec<usize> = self.lanes.iter().filter_map(|l| self.cfg.cpu_of(l.queue)).collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }

    /// Figures between two snapshots of the same lanes.
    pub fn window(&self, a: &SocketSnapshot, b: &SocketSnapshot) -> Result<WindowFigures, control::BackendError> {
        if a.generation != b.generation {
            return Err(control::BackendError::LanesStopped);
        }
        let d: Vec<Tally> = b.lanes.iter().zip(&a.lanes).map(|(b, a)| b.since(a)).collect();
        let mut sum = Tally::default();
        d.iter().for_each(|t| sum.add(t));
        let grew = |x: u64, y: u64| x.saturating_sub(y);
        let (buffers, coalesced) = b.buffers.iter().zip(&a.buffers).fold((0, 0), |(t, c), (b, a)| (t + grew(b.0, a.0), c + grew(b.1, a.1)));
        let watched = self.watched_between(a, b);
        let (xstats, levels) = watched.as_ref().map_or_else(Default::default, |x| x.counters.to_wire());
        let (mut udp, interface_drops) = self.kernel_between(a, b);
        (udp.buffers, udp.coalesced) = (buffers, coalesced);
        if let Some(cpu) = udp.cpu.as_mut() {
            cpu.ns_per_frame = cpu.ns_per(sum.packets);
        }
        Ok(WindowFigures {
            seconds: b.at.duration_since(a.at).as_secs_f64(),
            packets: sum.packets,
            bytes: sum.bytes,
            queues: self
                .lanes
                .iter()
                .zip(&d)
                .map(|(l, t)| QueueFigures { queue: l.queue, packets: t.packets, bytes: t.bytes, busy_seconds: 0.0 })
                .collect(),
            socket_drops: b.drops.iter().zip(&a.drops).map(|(b, a)| grew(b.unwrap_or(0), a.unwrap_or(0))).sum(),
            interface_drops,
            udp: Some(Box::new(udp)),
            xstats,
            levels,
            // A counter that could not be read is no zero: the verdict is then unknown.
            xstats_invalid: (a.udp.is_none() || b.udp.is_none())
                .then(|| "/proc/net/snmp could not be read".to_string())
                .or_else(|| {
                    a.drops
                        .iter()
                        .chain(&b.drops)
                        .any(Option::is_none)
                        .then(|| "a socket's drops could not be read from /proc/net/udp".to_string())
                })
                .or_else(|| watched.as_ref().and_then(|x| x.invalid.clone())),
            no_probe: sum.no_probe,
            probe: SeqCounts {
                received: sum.packets - sum.no_probe,
                lost: sum.lost,
                reordered: sum.reordered,
                duplicates: sum.duplicates,
                late: sum.late,
                restarts: 0,
            },
            ..Default::default()
        })
    }
}

impl SocketReceiver {
    /// The kernel's counters between two snapshots, whichever lanes ran
    /// (the namespace's UDP counters, the interface's drops): the UDP
    /// figures without the lanes' buffers, and the interface's drops.
    pub fn kernel_between(&self, a: &SocketSnapshot, b: &SocketSnapshot) -> (UdpWindow, u64) {
        let udp = match (&b.udp, &a.udp) {
            (Some(b), Some(a)) => b.since(a),
            _ => UdpCounters::default(),
        };
        let softnet = match (&b.softnet, &a.softnet) {
            (Some(b), Some(a)) => b.since(a),
            _ => udpsock::host::Softnet::default(),
        };
        let interface_drops = match (b.interface_drops, a.interface_drops) {
            (Some(b), Some(a)) => b.saturating_sub(a),
            _ => 0,
        };
        let figures = UdpWindow {
            address: self.cfg.addr.to_string(),
            gro: self.cfg.gro,
            rcvbuf_bytes: self.granted as u64,
            buffers: 0,
            coalesced: 0,
            in_datagrams: udp.in_datagrams,
            no_ports: udp.no_ports,
            in_errors: udp.in_errors,
            rcvbuf_errors: udp.rcvbuf_errors,
            in_csum_errors: udp.in_csum_errors,
            mem_errors: udp.mem_errors,
            softnet_dropped: softnet.dropped,
            softnet_time_squeeze: softnet.time_squeeze,
            // Time over the same CPUs at both ends, or none: a difference of
            // two sets' sums would count a CPU's whole uptime.
            cpu: match (&b.cpu, &a.cpu) {
                (Some((cpus, bl, bh)), Some((same, al, ah))) if !cpus.is_empty() && cpus == same => {
                    let (lanes, host, tick) = (bl.since(al), bh.since(ah), udpsock::host::seconds_per_tick());
                    Some(KernelCpu {
                        cpus: cpus.clone(),
                        user_seconds: lanes.user as f64 * tick,
                        system_seconds: lanes.system as f64 * tick,
                        softirq_seconds: lanes.softirq as f64 * tick,
                        host_softirq_seconds: host.softirq as f64 * tick,
                        ns_per_frame: None,
                    })
                }
                _ => None,
            },
        };
        (figures, interface_drops)
    }
}

impl Drop for SocketReceiver {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The interface's driver statistics, when its driver lists any: a driver
/// that cannot be asked (the ethtool ioctl refused) is said and left out,
/// unless --watch-xstat named statistics of it.
pub(crate) fn watch_of(interface: &str, extra: &[String]) -> Result<Option<crate::xstats::Watch>, Error> {
    match crate::xstats::Watch::of_interface(interface, extra) {
        Ok(w) if w.is_empty() => Ok(None),
        Ok(w) => Ok(Some(w)),
        Err(e) if extra.is_empty() => {
            tracing::warn!("{interface}: its driver's statistics cannot be read ({e}); only the kernel's UDP counters are watched");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The run's one-way times, empty, where --one-way times them.
fn cfg_one_way(clock: Option<crate::clock::WallClock>) -> Option<OneWayTimes> {
    clock.map(|_| OneWayTimes { histogram: latency::LatencyHistogram::new(), negative: 0 })
}

/// The edges as a socket lane counts them: under run 0.
fn without_run(edges: &[StreamEdge]) -> Vec<StreamEdge> {
    edges.iter().map(|e| StreamEdge { run: seqtrack::NO_RUN, ..e.clone() }).collect()
}

/// The interface that holds `ip` in this namespace (None for a wildcard).
pub(crate) fn interface_of(ip: IpAddr) -> Option<String> {
    if ip.is_unspecified() {
        return None;
    }
    nix::ifaddrs::getifaddrs().ok()?.find_map(|i| {
        let a = i.address?;
        let held = a.as_sockaddr_in().map(|s| IpAddr::V4(s.ip())).or_else(|| a.as_sockaddr_in6().map(|s| IpAddr::V6(s.ip())));
        (held == Some(ip)).then_some(i.interface_name)
    })
}

/// One lane's thread.
struct LaneWork {
    queue: u16,
    lane: RecvLane,
    board: Arc<TrialBoard>,
    counters: Arc<LaneCounters>,
    buffers: Arc<Buffers>,
    stop: Arc<AtomicBool>,
    cpu: Option<usize>,
    cost_ticks: u64,
    /// --one-way: the wall clock arrivals are read on.
    clock: Option<crate::clock::WallClock>,
}

impl LaneWork {
    fn run(mut self) -> Result<LaneEnd, String> {
        if let Some(cpu) = self.cpu {
            pin(cpu).map_err(|e| format!("pinning it to CPU {cpu} failed: {e}"))?;
        }
        let (board, mut epoch, mut answered) = (&*self.board, 0u64, 0u64);
        let slate = usize::from(self.queue);
        let mut tally = Tally::default();
        let mut times = self.clock.map(|_| OneWayTimes { histogram: latency::LatencyHistogram::new(), negative: 0 });
        let (mut first_tsc, mut last_tsc) = (None, None);
        let result = loop {
            if self.stop.load(Relaxed) {
                let streams = self.lane.table.active().map(|(id, c)| (id, *c)).collect();
                break Ok(LaneEnd { one_way: times, first_tsc, last_tsc, streams });
            }
            if let Some(ask) = board.asked(answered) {
                board.answer(slate, &mut self.lane.table, &mut epoch, ask);
                answered = ask;
            }
            let follow = |table: &mut seqtrack::StreamTable| board.follow(table, &mut epoch);
            let polled = match (self.clock.as_mut(), times.as_mut()) {
                (Some(clock), Some(t)) => {
                    // One clock read a call: when recvmmsg returned (the socket buffer's wait included).
                    let (mut now, live) = (None, &self.counters.latency);
                    self.lane.poll_timed(follow, |p| {
                        let at = *now.get_or_insert_with(|| clock.ns(dpdk::rdtsc()));
                        match at.checked_sub(p.tx_ns) {
                            Some(d) => {
                                t.histogram.record_ns(d);
                                live.record(d);
                            }
                            None => t.negative += 1,
                        }
                    })
                }
                _ => self.lane.poll_with(follow),
            };
            let n = match polled {
                Ok(n) => n,
                Err(e) => break Err(format!("recvmmsg failed: {e}")),
            };
            if n == 0 {
                tally.empty_polls += 1;
            } else {
                // One TSC read a call that took datagrams: the arrivals' span (a syscall dwarfs it).
                let now = dpdk::rdtsc();
                (first_tsc, last_tsc) = (first_tsc.or(Some(now)), Some(now));
                tally.bursts += 1;
                crate::rx::spend(self.cost_ticks * n as u64);
            }
            let (c, t) = (&self.lane.counts, &self.lane.table.totals);
            (tally.packets, tally.bytes, tally.no_probe) = (c.datagrams, c.frame_bytes, c.no_probe);
            (tally.lost, tally.reordered, tally.duplicates, tally.late) = (t.lost, t.reordered, t.duplicates, t.late);
            tally.untracked = self.lane.table.untracked;
            tally.reflect_drops = c.reflect_refused;
            self.counters.publish(&tally);
            self.buffers.taken.store(c.buffers, Relaxed);
            self.buffers.coalesced.store(c.coalesced, Relaxed);
        };
        self.counters.mark_done();
        result
    }
}

/// Pins the calling thread to `cpu` (a socket lane's, as an lcore is).
pub(crate) fn pin(cpu: usize) -> nix::Result<()> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu)?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
}
