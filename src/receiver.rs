//! drop's machinery: the port, one mempool per RX queue, the receive lanes,
//! counter snapshots for measured windows, and restarts with another queue
//! count when a ladder asks for one. Totals survive restarts.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dpdk::{DeviceInfo, Eal, LcoreJob, Mempool, PoolSizing, Port, PortConfig, PortStats, RxQueue, TxQueue};
use layout::Spread;
use seqtrack::SeqCounts;

use crate::counters::{ArrivalCounts, LaneCounters, SizeCounts, Tally};
use crate::fail::Failure;
use crate::port_set::{open_ports, OpenedPort};
use crate::report::MempoolRecord;
use crate::rx::{OneWayClock, RxLane, RxOutcome};
use crate::session;
use crate::xstats::{Sample, Watch, WindowXstats};

/// A device clock's calibration window (its least drained-poll offset per
/// window; see latency::NicTimeMap): probes of a lane's first 10 ms go
/// untimed, and 10 ppm of rate difference moves the offset 0.1 us in one.
const NIC_CALIBRATION_WINDOW_NS: u64 = 10_000_000;

/// How `driver`'s Rx timestamps read. BLASTDROP_NIC_TIMESCALE=device
/// treats every port's as a device clock's: a test hook, so the mapping a
/// real device clock needs (net_ena's, mlx5's) runs in a real lane on
/// net_af_packet's stamps, whose true offset (none) is known.
fn timescale_of(driver: &str) -> latency::NicTimescale {
    match std::env::var("BLASTDROP_NIC_TIMESCALE").as_deref() {
        Ok("device") => latency::NicTimescale::Device,
        _ => latency::arrival::nic_timescale(driver),
    }
}

#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    /// Every port to receive on; queues are spread over them round robin.
    pub ports: Vec<String>,
    /// The most RX queues any step may ask for (pools and lcores are reserved for them).
    pub max_queues: u16,
    pub max_size: u32,
    pub rx_ring: u16,
    pub burst: usize,
    pub stream_capacity: usize,
    /// Busy work per frame, in cycles (--rx-cost).
    pub cost_per_frame: u64,
    /// No probe parsing: frames and bytes only.
    pub count_only: bool,
    /// Send every frame back, turned round, on the same queue (--reflect).
    pub reflect: bool,
    /// Count arrivals per interval of this many microseconds (0: off).
    pub interval_us: u64,
    /// Time each probe one way against this host's wall clock (--one-way).
    pub one_way: bool,
    /// Where --one-way reads arrivals: the NIC's receive timestamp or the poll's clock.
    pub arrival_clock: latency::ArrivalClockChoice,
    /// Mbufs per RX pool instead of the derived size (--rx-mbufs).
    pub mbufs: Option<u32>,
    /// Extended stats to watch beyond the driver's allowance counters.
    pub watch_xstats: Vec<String>,
    /// How often the counters are polled for the live view.
    pub xstats_interval: std::time::Duration,
}

struct Lane {
    queue: u16,
    port: u16,
    lcore: u32,
    counters: Arc<LaneCounters>,
    job: LcoreJob<RxOutcome>,
}

/// Counters at one instant.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub generation: u64,
    pub tsc: u64,
    pub lanes: Vec<Tally>,
    /// Each lane's arrivals and losses per block of stream ids.
    pub blocks: Vec<[seqtrack::BlockCounts; seqtrack::STREAM_BLOCKS]>,
    /// The measured window open when it was taken, and each lane's arrival counts.
    pub window: u64,
    pub arrivals: Vec<ArrivalCounts>,
    /// Each lane's frames by size.
    pub sizes: Vec<SizeCounts>,
    /// By port, in --port order.
    pub ports: Vec<PortStats>,
    pub xs: Vec<Sample>,
    /// The host's CPU times (steal), where /proc/stat reads.
    pub cpu: Option<crate::host::CpuTimes>,
}

/// The exact account of a window: each sender's, and what of the trial
/// arrived on each port (frames, bytes).
pub struct TrialFigures {
    pub accounts: Vec<seqtrack::TrialAccount>,
    pub per_port: Vec<(u64, u64)>,
}

/// One queue's figures over a run, summed across restarts.
#[derive(Debug, Clone, Default)]
pub struct QueueTotals {
    pub lcore: u32,
    /// Index of the queue's port in --port order.
    pub port: u16,
    pub tally: Tally,
    pub probe: SeqCounts,
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
}

/// Everything received, across restarts.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub tally: Tally,
    pub probe: SeqCounts,
    pub untracked: u64,
    pub queues: BTreeMap<u16, QueueTotals>,
    /// Per (stream id, queue).
    pub streams: BTreeMap<(u16, u16), SeqCounts>,
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
    pub burstiness: crate::rx::Burstiness,
    pub one_way: Option<latency::LatencyHistogram>,
    pub one_way_negative: u64,
    /// --one-way: probes that arrived without a usable NIC timestamp (not
    /// stamped, or before the device clock's first calibration window closed).
    pub one_way_untimed: u64,
    /// --one-way: the clock arrivals were read on, and why not the NIC's when auto fell back.
    pub arrival: Option<latency::ArrivalClock>,
    /// Frames by size (FCS included), and those of sizes beyond a lane's slots.
    pub sizes: BTreeMap<u32, u64>,
    pub sizes_other: u64,
}

impl Totals {
    fn absorb(&mut self, queue: u16, port: u16, lcore: u32, o: &RxOutcome) {
        self.tally.add(&o.tally);
        self.probe.add(&o.streams.totals);
        self.untracked += o.streams.untracked;
        let q = self.queues.entry(queue).or_default();
        q.lcore = lcore;
        q.port = port;
        q.tally.add(&o.tally);
        q.probe.add(&o.streams.totals);
        q.first_tsc = min_opt(q.first_tsc, o.first_tsc);
        q.last_tsc = max_opt(q.last_tsc, o.last_tsc);
        for (id, c) in o.streams.active() {
            self.streams.entry((id, queue)).or_default().add(c);
        }
        self.first_tsc = min_opt(self.first_tsc, o.first_tsc);
        self.last_tsc = max_opt(self.last_tsc, o.last_tsc);
        self.burstiness.merge(&o.burstiness);
        if let Some(h) = &o.one_way {
            latency::LatencyHistogram::merge_into(&mut self.one_way, h);
        }
        self.one_way_negative += o.one_way_negative;
        self.one_way_untimed += o.one_way_untimed;
        self.sizes_other += o.sizes.since_into(&crate::counters::SizeCounts::default(), &mut self.sizes);
    }

    /// One port's share: its queues' figures summed (no lcore of its own).
    pub fn port_share(&self, port: u16) -> QueueTotals {
        let mut t = QueueTotals { port, ..Default::default() };
        for q in self.queues.values().filter(|q| q.port == port) {
            t.tally.add(&q.tally);
            t.probe.add(&q.probe);
            t.first_tsc = min_opt(t.first_tsc, q.first_tsc);
            t.last_tsc = max_opt(t.last_tsc, q.last_tsc);
        }
        t
    }

    /// Streams seen on more than one queue.
    pub fn split_streams(&self) -> u32 {
        let mut per: BTreeMap<u16, u32> = BTreeMap::new();
        for (id, _) in self.streams.keys() {
            *per.entry(*id).or_default() += 1;
        }
        per.values().filter(|&&n| n > 1).count() as u32
    }
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// One port drop receives on, and what belongs to it alone.
pub struct RxSide {
    pub port: Port,
    pub info: DeviceInfo,
    pub promiscuous: bool,
    pub watch: Watch,
    /// net_ena only: LLQ and write-combining, as found when the port opened.
    pub ena: Option<crate::report::EnaTxState>,
}

pub struct Receiver {
    sides: Vec<RxSide>,
    cfg: ReceiverConfig,
    /// By global queue id.
    lcores: Vec<u32>,
    /// One per global queue, on its port's NUMA node.
    pools: Vec<Mempool>,
    queues: u16,
    lanes: Vec<Lane>,
    /// Queue handles of the configured ports while no lane runs on them
    /// (parked, or waiting for a memif peer), by global queue id.
    idle: Vec<(RxQueue, Option<TxQueue>)>,
    /// Some port can unmap its rings under a lane when its peer leaves
    /// (memif): lanes run only while every link is up.
    peer_managed: bool,
    /// Parked for a peer that said it is leaving: not started again until
    /// its link has gone down and come back.
    held: bool,
    stop: Arc<AtomicBool>,
    generation: u64,
    /// Measured windows opened (lanes keep their arrival maxima per window).
    windows_opened: u64,
    totals: Totals,
    pub mempools: Vec<MempoolRecord>,
    hz: u64,
    clock: crate::clock::WallClock,
    /// --one-way from the NIC's receive timestamps: where mbufs carry them
    /// (known once a port started with the offload).
    rx_stamp: Option<dpdk::RxTimestamp>,
    /// --rx-cost in ticks of the lanes' counter (it is given in core cycles).
    cost_ticks: u64,
    /// The measured window's streams, shared with the lanes.
    trial: Arc<crate::trial::TrialBoard>,
}

impl Receiver {
    pub fn new(eal: &Eal, cfg: ReceiverConfig) -> Result<Receiver, Failure> {
        let nports = cfg.ports.len() as u16;
        if cfg.max_queues < nports {
            return Err(Failure::usage(format!(
                "{nports} ports but --queues {}: give every --port a queue (--queues {nports} or more)",
                cfg.max_queues
            )));
        }
        // The lanes spin on their counter, whose ticks are core cycles on x86
        // only: on arm64 it is a platform timer.
        let core = crate::clock::core();
        let cost_ticks = match (cfg.cost_per_frame, core.ticks_of_cycles(cfg.cost_per_frame)) {
            (0, _) => 0,
            (_, Some(ticks)) => ticks,
            (cycles, None) => {
                return Err(Failure::usage(format!(
                    "--rx-cost {cycles} is in core cycles, but this machine's core clock is {}: give --rx-cost 0 here, or run where the kernel has cpufreq in sysfs",
                    core.core_hz_source
                )))
            }
        };
        let spread = Spread::new(cfg.max_queues, nports);
        let opened = open_ports(&cfg.ports, cfg.max_queues, &cfg.watch_xstats, |n| Self::port_config(&cfg, n, false), "--max-size")?;
        let sides: Vec<RxSide> =
            opened.into_iter().map(|OpenedPort { port, info, watch, ena }| RxSide { port, info, promiscuous: false, watch, ena }).collect();
        let mut totals = Totals::default();
        if cfg.one_way {
            let ports: Vec<latency::arrival::PortTimestamps> = sides
                .iter()
                .map(|s| latency::arrival::PortTimestamps {
                    name: &s.info.name,
                    driver: &s.info.driver,
                    offered: s.info.offers_rx_timestamp(),
                    scale: timescale_of(&s.info.driver),
                })
                .collect();
            totals.arrival = Some(latency::arrival::choose(cfg.arrival_clock, &ports).map_err(|e| Failure::usage(e.to_string()))?);
        }
        let lcores = session::worker_lcores(eal, cfg.max_queues)?;
        let mbuf = dpdk::MbufLayout::get();
        let mut sizing = PoolSizing {
            ring: u32::from(cfg.rx_ring),
            burst: cfg.burst as u32,
            cache: 256,
            data_room: (u32::from(mbuf.headroom) + cfg.max_size).max(dpdk::ffi::RTE_MBUF_DEFAULT_BUF_SIZE),
        };
        if let Some(n) = cfg.mbufs {
            // A pool smaller than what can be in flight starves the PMD (rx_nombuf): on purpose.
            sizing = PoolSizing { ring: n, burst: 0, cache: (n / 4).min(256), data_room: sizing.data_room };
        }
        let mempools = vec![MempoolRecord::new(u32::from(cfg.max_queues), &sizing)];
        let trial_streams = if cfg.count_only { 0 } else { cfg.stream_capacity };
        let trial = Arc::new(crate::trial::TrialBoard::new(trial_streams, usize::from(cfg.max_queues)));
        let pools = (0..cfg.max_queues)
            .map(|q| {
                let (p, local) = spread.port_of(q);
                let port = &sides[usize::from(p)].port;
                Mempool::create(&format!("bd_rx_{}_{local}", port.id()), &sizing, port.socket())
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Receiver {
            sides,
            cfg,
            lcores,
            pools,
            queues: 0,
            lanes: Vec::new(),
            idle: Vec::new(),
            peer_managed: false,
            held: false,
            stop: Arc::new(AtomicBool::new(false)),
            generation: 0,
            windows_opened: 0,
            totals,
            mempools,
            hz: dpdk::tsc_hz(),
            clock: crate::clock::WallClock::new(dpdk::tsc_hz()),
            rx_stamp: None,
            cost_ticks,
            trial,
        })
    }

    fn port_config(cfg: &ReceiverConfig, queues: u16, nic_clock: bool) -> PortConfig {
        PortConfig { rx_timestamp: nic_clock, ..PortConfig::paired(queues, cfg.rx_ring, cfg.max_size, false) }
    }

    /// Whether --one-way reads arrivals from the NIC's timestamps.
    fn nic_clock(&self) -> bool {
        self.totals.arrival.as_ref().is_some_and(|a| a.clock.is_nic())
    }

    /// The first port (the only one, usually).
    pub fn port(&self) -> &Port {
        &self.sides[0].port
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.sides[0].info
    }

    /// Every port, in --port order.
    pub fn sides(&self) -> &[RxSide] {
        &self.sides
    }

    pub fn config(&self) -> &ReceiverConfig {
        &self.cfg
    }

    pub fn queues(&self) -> u16 {
        self.queues
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether every port took promiscuous mode.
    pub fn promiscuous(&self) -> bool {
        self.sides.iter().all(|s| s.promiscuous)
    }

    pub fn tsc_hz(&self) -> u64 {
        self.hz
    }

    pub fn lcores(&self) -> &[u32] {
        &self.lcores
    }

    /// The counters of the lanes running now.
    pub fn lane_counters(&self) -> Vec<Arc<LaneCounters>> {
        self.lanes.iter().map(|l| l.counters.clone()).collect()
    }

    /// Every port's counters, summed.
    pub fn port_stats(&self) -> Result<PortStats, Failure> {
        let each = self.sides.iter().map(|s| s.port.stats()).collect::<Result<Vec<_>, _>>()?;
        Ok(PortStats::total(&each))
    }

    /// Whether every port's link is up.
    pub fn links_up(&self) -> bool {
        self.sides.iter().all(|s| s.port.link().up)
    }

    /// Configures every port for its share of `queues` RX queues (at least
    /// one: a port cannot have none), starts them, and a lane per queue
    /// (on a memif port, once its peer is connected: see [`Receiver::supervise`]).
    pub fn start(&mut self, queues: u16) -> Result<(), Failure> {
        if queues > self.cfg.max_queues {
            return Err(Failure::usage(format!(
                "{queues} RX queues asked, but drop reserved lcores and pools for {}: restart drop with --queues {queues}",
                self.cfg.max_queues
            )));
        }
        let spread = Spread::new(queues, self.sides.len() as u16);
        let nic_clock = self.nic_clock();
        let mut per_side = Vec::new();
        for (p, side) in self.sides.iter_mut().enumerate() {
            let n = spread.queues_on(p as u16).max(1);
            let refs: Vec<&Mempool> = (0..n).map(|local| &self.pools[usize::from(spread.global_queue(p as u16, local))]).collect();
            let (rxqs, txqs) = side
                .port
                .configure(&Self::port_config(&self.cfg, n, nic_clock), &refs)
                .map_err(|e| session::limit_failure(e, "--max-size"))?;
            side.port.start().map_err(|e| session::start_failure(&side.port, e))?;
            side.promiscuous = side.port.promiscuous();
            // Per-queue stats ahead of the watched ones shift with the queue count.
            side.watch.resolve(&side.port)?;
            if self.generation == 0 {
                side.watch.start_polling(self.cfg.xstats_interval);
            }
            per_side.push((rxqs.into_iter().map(Some).collect::<Vec<_>>(), txqs.into_iter().map(Some).collect::<Vec<_>>()));
        }
        if nic_clock && self.rx_stamp.is_none() {
            // The PMDs registered the field when their ports started with the offload.
            self.rx_stamp = Some(dpdk::RxTimestamp::register()?);
        }
        self.idle.clear();
        for q in 0..queues {
            let (p, local) = spread.port_of(q);
            let (rxqs, txqs) = &mut per_side[usize::from(p)];
            let rxq = rxqs[usize::from(local)].take().expect("each local queue is taken once");
            let txq = txqs[usize::from(local)].take();
            self.idle.push((rxq, txq));
        }
        self.queues = queues;
        self.peer_managed = self.sides.iter().any(|s| s.port.peer_managed());
        if !self.peer_managed || self.links_up() {
            self.launch()?;
        }
        Ok(())
    }

    /// A lane on every idle queue of the configured ports.
    fn launch(&mut self) -> Result<(), Failure> {
        let spread = Spread::new(self.queues, self.sides.len() as u16);
        self.stop = Arc::new(AtomicBool::new(false));
        self.generation += 1;
        for (q, (mut rxq, txq)) in std::mem::take(&mut self.idle).into_iter().enumerate() {
            let q = q as u16;
            rxq.rearm();
            let (p, _) = spread.port_of(q);
            let lcore = self.lcores[usize::from(q)];
            let counters = Arc::new(LaneCounters::default());
            let lane = RxLane {
                queue: rxq,
                burst: self.cfg.burst,
                stream_capacity: self.cfg.stream_capacity,
                cost_per_frame: self.cost_ticks,
                count_only: self.cfg.count_only,
                counters: counters.clone(),
                reflect: if self.cfg.reflect {
                    txq.map(|mut t| {
                        t.rearm();
                        t
                    })
                } else {
                    None
                },
                interval_cycles: self.cfg.interval_us * self.hz / 1_000_000,
                one_way: self.cfg.one_way.then(|| self.one_way_clock(p)),
                trial: self.trial.clone(),
                slate: usize::from(q),
                tsc_hz: self.hz,
            };
            let stop = self.stop.clone();
            let job = dpdk::launch(lcore, move || lane.run(&stop))?;
            self.lanes.push(Lane { queue: q, port: p, lcore, counters, job });
        }
        Ok(())
    }

    /// What a lane on port `p` (index in --port order) times probes with.
    fn one_way_clock(&self, p: u16) -> OneWayClock {
        let nic = self.rx_stamp.filter(|_| self.nic_clock()).map(|field| {
            let scale = timescale_of(&self.sides[usize::from(p)].info.driver);
            (field, latency::NicTimeMap::for_timescale(scale, NIC_CALIBRATION_WINDOW_NS))
        });
        OneWayClock { wall: self.clock, nic }
    }

    /// Stops every lane; what they counted joins the totals, and their
    /// queues wait in `idle` (valid while the ports stay configured).
    fn park(&mut self) -> Result<(), Failure> {
        self.stop.store(true, Ordering::SeqCst);
        // Lanes gone is a new generation too: readers carry what they saw.
        if !self.lanes.is_empty() {
            self.generation += 1;
        }
        let mut panicked = None;
        let mut idle: Vec<(u16, RxQueue, Option<TxQueue>)> = Vec::new();
        for lane in self.lanes.drain(..) {
            match lane.job.join() {
                Ok(mut o) => {
                    self.totals.absorb(lane.queue, lane.port, lane.lcore, &o);
                    let txq = o.reflect.take();
                    idle.push((lane.queue, o.queue, txq));
                }
                Err(e) => panicked = Some(e),
            }
        }
        idle.sort_by_key(|(q, _, _)| *q);
        self.idle = idle.into_iter().map(|(_, r, t)| (r, t)).collect();
        match panicked {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Stops every lane and the ports; what they counted joins the totals.
    pub fn stop(&mut self) -> Result<(), Failure> {
        let parked = self.park();
        self.idle.clear();
        let mut stopped = Ok(());
        for side in &mut self.sides {
            if let Err(e) = side.port.stop() {
                stopped = stopped.and(Err(e.into()));
            }
        }
        parked.and(stopped)
    }

    /// Keeps lanes off a memif port whose peer is gone: DPDK's memif unmaps
    /// the rings on its interrupt thread when the peer leaves, under any
    /// lane still polling (a fault the guarded burst catches, or, with a new
    /// peer mapped at the same place, frames that are not frames). Parks the
    /// lanes when a link goes down or a lane faulted, and starts them again
    /// once every link is up. Call it often (every few ms). Returns what it
    /// did, for the log.
    pub fn supervise(&mut self) -> Result<Option<String>, Failure> {
        if !self.peer_managed || self.queues == 0 {
            return Ok(None);
        }
        let up = self.links_up();
        if self.held {
            if up {
                return Ok(None);
            }
            self.held = false;
        }
        if !self.lanes.is_empty() {
            let faulted = self.lanes.iter().any(|l| l.counters.read().faults > 0);
            if up && !faulted {
                return Ok(None);
            }
            self.park()?;
            return Ok(Some(if faulted {
                "the memif peer left while a lane was inside a burst (the fault was caught; that burst is lost): lanes parked until a peer connects".into()
            } else {
                "the memif peer left: lanes parked until a peer connects".into()
            }));
        }
        if up && self.idle.len() == usize::from(self.queues) {
            self.launch()?;
            return Ok(Some(format!("a memif peer connected: receiving on {} queue(s)", self.queues)));
        }
        Ok(None)
    }

    /// Parks the lanes of memif ports before their peer leaves (it said
    /// so): they stay parked until the link has gone down and come back.
    /// Other devices keep receiving.
    pub fn hold_for_departure(&mut self) -> Result<bool, Failure> {
        if !self.peer_managed || self.lanes.is_empty() {
            return Ok(false);
        }
        self.park()?;
        self.held = true;
        Ok(true)
    }

    /// Whether lanes are polling now (not parked, not waiting for a peer).
    pub fn receiving(&self) -> bool {
        !self.lanes.is_empty()
    }

    /// Starts over with `queues` RX queues if that differs from now.
    /// Returns whether the ports restarted.
    pub fn set_queues(&mut self, queues: u16) -> Result<bool, Failure> {
        if queues == self.queues && (!self.lanes.is_empty() || (self.peer_managed && self.idle.len() == usize::from(queues))) {
            return Ok(false);
        }
        self.stop()?;
        self.start(queues)?;
        Ok(true)
    }

    /// A measured window opens: the lanes count their arrival maxima anew
    /// from here, and the trial frames of the senders' streams at `edges`
    /// (none: no exact account of this window). Its starting snapshot.
    pub fn open_window(&mut self, edges: &[seqtrack::StreamEdge]) -> Snapshot {
        self.windows_opened += 1;
        self.trial.open(edges);
        for l in &self.lanes {
            l.counters.open_window(self.windows_opened);
        }
        self.snapshot()
    }

    /// Why the trial frames of the senders' streams at `edges` cannot be
    /// counted exactly here, if they cannot.
    pub fn trial_refusal(&self, edges: &[seqtrack::StreamEdge]) -> Option<String> {
        if self.cfg.count_only {
            return Some("drop runs with --count-only (no probe is read): loss is not counted per stream".into());
        }
        self.trial.check(edges)
    }

    /// The exact account of each sender's trial frames, from the running
    /// lanes' counts (`starts` as the window opened with, `ends` where the
    /// senders' streams stand now), and each port's share of the trial's
    /// frames that arrived (frames, bytes; in --port order); Err says why there is none.
    pub fn trial_accounts(&self, starts: &[seqtrack::StreamEdge], ends: &[seqtrack::StreamEdge]) -> Result<TrialFigures, String> {
        if let Some(why) = self.trial_refusal(starts) {
            return Err(why);
        }
        let lanes: Vec<u16> = self.lanes.iter().map(|l| l.queue).collect();
        let counts = self.trial.collect(&lanes)?;
        let per_port = (0..self.sides.len() as u16)
            .map(|p| {
                let mine: Vec<u16> = self.lanes.iter().filter(|l| l.port == p).map(|l| l.queue).collect();
                counts.of_lanes(&mine).received(starts)
            })
            .collect();
        Ok(TrialFigures { accounts: counts.accounts(starts, ends)?, per_port })
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            generation: self.generation,
            tsc: dpdk::rdtsc(),
            lanes: self.lanes.iter().map(|l| l.counters.read()).collect(),
            blocks: self.lanes.iter().map(|l| l.counters.read_blocks()).collect(),
            window: self.windows_opened,
            arrivals: self.lanes.iter().map(|l| l.counters.read_arrivals()).collect(),
            sizes: self.lanes.iter().map(|l| l.counters.read_sizes()).collect(),
            ports: self.sides.iter().map(|s| s.port.stats().unwrap_or_default()).collect(),
            xs: self.sides.iter().map(|s| s.watch.sample()).collect(),
            cpu: crate::host::CpuTimes::now(),
        }
    }

    /// Figures between two snapshots of the same generation: the sums, and
    /// with several ports each port's own.
    pub fn window(&self, a: &Snapshot, b: &Snapshot) -> Result<control::WindowFigures, control::BackendError> {
        if a.generation != b.generation {
            return Err(control::BackendError::LanesStopped);
        }
        let seconds = b.tsc.saturating_sub(a.tsc) as f64 / self.hz as f64;
        let nports = self.sides.len();
        let mut per: Vec<control::WindowFigures> = self
            .sides
            .iter()
            .map(|s| control::WindowFigures { seconds, port_name: Some(s.info.name.clone()), ..Default::default() })
            .collect();
        for (lane, (x, y)) in self.lanes.iter().zip(b.lanes.iter().zip(&a.lanes)) {
            let f = &mut per[usize::from(lane.port)];
            let d = x.since(y);
            f.packets += d.packets;
            f.bytes += d.bytes;
            f.no_probe += d.no_probe;
            f.probe.lost += d.lost;
            f.probe.reordered += d.reordered;
            f.probe.duplicates += d.duplicates;
            f.probe.late += d.late;
            f.polls += d.bursts + d.empty_polls;
            f.empty_polls += d.empty_polls;
            let busy_seconds = d.busy_cycles as f64 / self.hz as f64;
            f.busy_seconds = f.busy_seconds.max(busy_seconds);
            f.queues.push(control::QueueFigures { queue: lane.queue, packets: d.packets, bytes: d.bytes, busy_seconds });
        }
        let mut port_xs = Vec::with_capacity(nports);
        for (i, (f, side)) in per.iter_mut().zip(&self.sides).enumerate() {
            f.probe.received = f.packets - f.no_probe;
            let port = b.ports[i].since(&a.ports[i]);
            f.imissed = port.imissed;
            f.rx_nombuf = port.rx_nombuf;
            f.ierrors = port.ierrors;
            port_xs.push(side.watch.window(&a.xs[i], &b.xs[i]));
            put_xstats(f, &port_xs[i]);
        }
        let arrivals = self.arrivals_between(a, b);
        let (sizes, sizes_other) = sizes_between(a, b);
        let mut stalls = control::LaneStalls::default();
        for (lane, (x, y)) in self.lanes.iter().zip(b.lanes.iter().zip(&a.lanes)) {
            let d = x.since(y);
            stalls.add(lane.queue, d.stalls, d.stalled_ticks, lane.counters.longest_stall(a.window), self.hz);
        }
        let host_steal_pct = crate::host::CpuTimes::steal_pct(a.cpu, b.cpu);
        if nports == 1 {
            let mut f = per.pop().expect("one port");
            f.port_name = None;
            f.stream_blocks = blocks_between(a, b);
            f.arrivals = arrivals;
            (f.sizes, f.sizes_other) = (control::FrameSize::list(&sizes), sizes_other);
            (f.stalls, f.host_steal_pct) = (Some(stalls), host_steal_pct);
            return Ok(f);
        }
        let mut t = control::WindowFigures { seconds, ..Default::default() };
        let mut xs = WindowXstats::default();
        for (f, fx) in per.iter().zip(&port_xs) {
            t.packets += f.packets;
            t.bytes += f.bytes;
            t.no_probe += f.no_probe;
            t.probe.add(&f.probe);
            t.polls += f.polls;
            t.empty_polls += f.empty_polls;
            t.busy_seconds = t.busy_seconds.max(f.busy_seconds);
            t.queues.extend(f.queues.iter().cloned());
            t.imissed += f.imissed;
            t.rx_nombuf += f.rx_nombuf;
            t.ierrors += f.ierrors;
            xs.merge(f.port_name.as_deref().unwrap_or("?"), fx);
        }
        put_xstats(&mut t, &xs);
        t.queues.sort_by_key(|q| q.queue);
        t.ports = per;
        t.stream_blocks = blocks_between(a, b);
        t.arrivals = arrivals;
        (t.sizes, t.sizes_other) = (control::FrameSize::list(&sizes), sizes_other);
        (t.stalls, t.host_steal_pct) = (Some(stalls), host_steal_pct);
        Ok(t)
    }

    /// How the arrivals bunched up between two snapshots (None with
    /// --count-only, whose lanes do not measure it).
    fn arrivals_between(&self, a: &Snapshot, b: &Snapshot) -> Option<Box<control::WindowArrivals>> {
        if self.cfg.count_only {
            return None;
        }
        let lanes: Vec<control::LaneArrivals> = self
            .lanes
            .iter()
            .zip(b.lanes.iter().zip(&a.lanes))
            .zip(b.arrivals.iter().zip(&a.arrivals))
            .map(|((lane, (x, y)), (ax, ay))| {
                let d = x.since(y);
                let w = ax.over_window(ay, a.window);
                control::LaneArrivals {
                    queue: lane.queue,
                    full_polls: w.full_polls,
                    max_backlog: w.max_backlog,
                    intervals: w.intervals,
                    frames_in_intervals: w.frames_in_intervals,
                    peak_per_interval: w.peak_per_interval,
                    packets: d.packets,
                    busy_seconds: d.busy_cycles as f64 / self.hz as f64,
                }
            })
            .collect();
        Some(Box::new(control::window_arrivals(&lanes, (self.cfg.interval_us > 0).then_some(self.cfg.interval_us))))
    }

    /// Every port's watched counters now, in --port order.
    pub fn watch_samples(&self) -> Vec<Sample> {
        self.sides.iter().map(|s| s.watch.sample()).collect()
    }

    /// Watched counters between two `watch_samples`, merged over ports.
    pub fn watch_between(&self, a: &[Sample], b: &[Sample]) -> WindowXstats {
        let mut xs = WindowXstats::default();
        for (side, (x, y)) in self.sides.iter().zip(a.iter().zip(b)) {
            xs.merge(&side.info.name, &side.watch.window(x, y));
        }
        xs
    }

    /// The allowance counters that moved lately on any port, for a live line.
    pub fn watch_text(&self) -> Option<String> {
        let watches: Vec<(&str, &Watch)> = self.sides.iter().map(|s| (s.info.name.as_str(), &s.watch)).collect();
        crate::xstats::live_text_of(&watches)
    }

    /// Stops everything and hands over the totals.
    pub fn finish(&mut self) -> Result<Totals, Failure> {
        for side in &self.sides {
            side.watch.stop();
        }
        self.stop()?;
        Ok(std::mem::take(&mut self.totals))
    }
}

/// drop's end of the control link, its one conversion: the watched
/// counters, grouped by kind, into the figures' flat wire form.
fn put_xstats(f: &mut control::WindowFigures, xs: &WindowXstats) {
    (f.xstats, f.levels) = xs.counters.to_wire();
    f.xstats_invalid = xs.invalid.clone();
}

/// Frames by size between two snapshots, over every lane, and those of
/// sizes beyond a lane's slots.
fn sizes_between(a: &Snapshot, b: &Snapshot) -> (BTreeMap<u32, u64>, u64) {
    let mut sizes = BTreeMap::new();
    let other = b.sizes.iter().zip(&a.sizes).map(|(x, y)| x.since_into(y, &mut sizes)).sum();
    (sizes, other)
}

/// Every lane's arrivals and losses per block of stream ids between two
/// snapshots, summed (losses as wrapping sums: exact over the window).
fn blocks_between(a: &Snapshot, b: &Snapshot) -> Vec<seqtrack::BlockCounts> {
    let mut sum = vec![seqtrack::BlockCounts::default(); seqtrack::STREAM_BLOCKS];
    for (x, y) in b.blocks.iter().zip(&a.blocks) {
        for (s, (bx, by)) in sum.iter_mut().zip(x.iter().zip(y)) {
            s.received += bx.received.wrapping_sub(by.received);
            s.lost = s.lost.wrapping_add(bx.lost.wrapping_sub(by.lost));
        }
    }
    sum
}
