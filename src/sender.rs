//! blast's machinery: the port, one mempool per TX queue with its frames
//! prebuilt, the sequence numbers of every stream, and the running of one
//! step (a queue count and a frame size) with an optional measured window.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{DeviceInfo, Eal, Link, Mempool, PoolSizing, Port, PortConfig, PortStats, RxQueue, TxQueue};
pub use ladder::StepFailure;
use layout::{Spread, StepLayout};
use wire::{FrameSpec, MacAddr};

use crate::counters::{self, LaneCounters, Tally};
use crate::fail::Failure;
use crate::live::{Tick, Ticker};
use crate::port_set::{open_ports, OpenedPort};
use crate::report::{self, MempoolRecord, PerPacket, Rates};
use crate::session;
use crate::signals;
use crate::tx::replay::ReplayLane;
use crate::tx::{self, TxLane, TxOutcome};
use crate::xstats::{Watch, WindowXstats};

/// What the frames look like, apart from size and flows.
#[derive(Debug, Clone)]
pub struct Addressing {
    pub src_mac: Option<MacAddr>,
    pub dst_mac: MacAddr,
    pub src_ip: std::net::Ipv4Addr,
    pub dst_ip: std::net::Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
}

/// Fixed for the whole run.
#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// Every port to send on; queues are spread over them round robin.
    pub ports: Vec<String>,
    /// The most queues any step uses.
    pub max_queues: u16,
    /// The largest frame any step sends (FCS included).
    pub max_size: u32,
    pub burst: usize,
    pub tx_ring: u16,
    pub link_timeout: Duration,
    pub drain: Duration,
    /// One per port: each port's frames carry its own addresses.
    pub addressing: Vec<Addressing>,
    /// Extended stats to watch beyond the driver's allowance counters.
    pub watch_xstats: Vec<String>,
    /// How often the counters are polled for the live view.
    pub xstats_interval: Duration,
    /// The flag that sets the largest frame, named when a port cannot take it.
    pub size_flag: &'static str,
}

/// One step.
#[derive(Debug, Clone)]
pub struct StepParams {
    pub queues: u16,
    /// The frame size, FCS included (with a mix, its largest).
    pub size: u32,
    /// Frames of several sizes in a repeating cycle (--size-mix), or None.
    pub mix: Option<wire::SizeMix>,
    pub flows: u32,
    /// Total frames per second over all queues; None: unpaced.
    pub rate: Option<f64>,
    /// Frames in all; None: until the duration (or the window) ends.
    pub count: Option<u64>,
    /// How long to send; with a window, how long the measured trial lasts.
    pub duration: Option<Duration>,
    /// With a window: how long to send before the trial (then a pause to drain).
    pub warmup: Duration,
    pub window: bool,
    /// Print a line a second.
    pub live: bool,
    /// How frames are spread in time when paced.
    pub shape: pace::Shape,
    /// Time the probes drop --reflect sends back (round trip).
    pub reflect: bool,
    /// Replay this capture instead of building frames (size, mix, rate
    /// and shape are then the capture's and its schedule's).
    pub replay: Option<Arc<crate::tx::replay::Replay>>,
}

/// The sender's figures over a measured window.
#[derive(Debug, Clone, Default)]
pub struct SenderWindow {
    pub seconds: f64,
    pub total: Tally,
    pub per_queue: Vec<Tally>,
    pub port: PortStats,
    pub xstats: WindowXstats,
    /// With several ports: each port's own window (its queues, its
    /// counters); empty with one.
    pub ports: Vec<SenderWindow>,
    /// The shape achieved in the trial.
    pub shape: pace::ShapeStats,
    /// Reflect mode: round trips of the trial's probes, merged over queues.
    pub latency: Option<latency::LatencyHistogram>,
    pub reflected: u64,
    /// Reflect mode: probes that came back in the trial but were sent
    /// before it (the warm-up's, left in the ring through the drain): not timed.
    pub reflected_stale: u64,
    /// Where this sender's streams stood when the window opened and when
    /// it closed: the trial's frames are those between (None: too many
    /// streams to list, see seqtrack::MAX_EDGE_STREAMS).
    pub streams_at_start: Option<seqtrack::StreamEdge>,
    pub streams_at_end: Option<seqtrack::StreamEdge>,
    /// Every frame sent carried a probe numbered in its stream (false for a
    /// replay, whose frames without room for one are sent bare).
    pub all_probed: bool,
    /// The sending lanes' loops that stood still in the trial, and the
    /// share of this host's CPU time the hypervisor took over it.
    pub stalls: control::LaneStalls,
    pub host_steal_pct: Option<f64>,
}

impl SenderWindow {
    pub fn sent(&self) -> Rates {
        Rates::over(self.total.packets, self.total.bytes, self.seconds)
    }
}

/// Called at the window's edges; an error ends the step.
pub trait WindowHooks {
    /// The window opens; `streams`: where this sender's streams stand.
    fn start(&mut self, streams: Option<&seqtrack::StreamEdge>) -> Result<(), StepFailure>;
    /// The window ends; `sent` is what this sender's lanes sent in it.
    fn end(&mut self, sent: &SenderWindow) -> Result<(), StepFailure>;
    /// Whether the receiver is still there (asked about once a second
    /// while sending): an error names how it went, and ends the step.
    fn peer_alive(&mut self) -> Result<(), StepFailure> {
        Ok(())
    }
}

/// No receiver to tell.
pub struct NoPeer;

impl WindowHooks for NoPeer {
    fn start(&mut self, _streams: Option<&seqtrack::StreamEdge>) -> Result<(), StepFailure> {
        Ok(())
    }
    fn end(&mut self, _sent: &SenderWindow) -> Result<(), StepFailure> {
        Ok(())
    }
}

pub struct LaneResult {
    pub queue: u16,
    pub lcore: u32,
    pub outcome: TxOutcome,
}

pub struct StepOutcome {
    pub lanes: Vec<LaneResult>,
    pub window: Option<SenderWindow>,
    /// Why the step ended early, if it did (the receiver gone, a hook failed).
    pub failure: Option<StepFailure>,
    pub interrupted: bool,
    /// Seconds from the first lane's start to the last lane's end.
    pub seconds: f64,
}

impl StepOutcome {
    pub fn total(&self) -> Tally {
        let mut t = Tally::default();
        for l in &self.lanes {
            t.add(&l.outcome.tally);
        }
        t
    }

    pub fn shape(&self) -> pace::ShapeStats {
        merged_shape(&self.lanes)
    }

    /// Reflect mode: every queue's round trips in one histogram, and the
    /// number of probes that came back.
    pub fn latency(&self) -> Option<(latency::LatencyHistogram, u64)> {
        merged_latency(&self.lanes)
    }
}

fn merged_shape(lanes: &[LaneResult]) -> pace::ShapeStats {
    let mut s = pace::ShapeStats::default();
    for l in lanes {
        s.merge(&l.outcome.shape);
    }
    s
}

fn merged_latency(lanes: &[LaneResult]) -> Option<(latency::LatencyHistogram, u64)> {
    let mut h: Option<latency::LatencyHistogram> = None;
    let mut n = 0;
    for l in lanes {
        if let Some(lh) = &l.outcome.latency {
            n += l.outcome.reflected;
            latency::LatencyHistogram::merge_into(&mut h, lh);
        }
    }
    h.map(|h| (h, n))
}

/// One uninterrupted run of the lanes.
struct Phase {
    lanes: Vec<LaneResult>,
    failure: Option<StepFailure>,
    interrupted: bool,
    seconds: f64,
}

impl Phase {
    fn into_outcome(self, window: Option<SenderWindow>, failure: Option<StepFailure>) -> StepOutcome {
        StepOutcome { lanes: self.lanes, window, failure: self.failure.or(failure), interrupted: self.interrupted, seconds: self.seconds }
    }
}

/// One port blast sends on, and what belongs to it alone.
pub struct TxSide {
    pub port: Port,
    pub info: DeviceInfo,
    pub own_mac: MacAddr,
    pub src_mac: MacAddr,
    /// What this port's frames carry.
    pub addressing: Addressing,
    /// blast never reads its RX queues, but paired devices (memif) need them.
    rx_pool: Mempool,
    pub watch: Watch,
    pub link: Link,
    /// net_ena only: LLQ and write-combining, as found when the port opened.
    pub ena: Option<crate::report::EnaTxState>,
}

/// Port counters (None where the read failed) and watched counters of
/// every port at one instant.
pub type Reading = Vec<(Option<PortStats>, crate::xstats::Sample)>;

pub struct Sender {
    sides: Vec<TxSide>,
    cfg: SenderConfig,
    /// By global queue id.
    lcores: Vec<u32>,
    /// One per global queue, on its port's NUMA node.
    pools: Vec<Arc<Mempool>>,
    /// Queue handles of the current configuration, by global queue id.
    txqs: Vec<Option<TxQueue>>,
    rxqs: Vec<Option<RxQueue>>,
    configured_queues: Option<u16>,
    /// Next sequence number by stream id: streams keep counting across steps.
    seqs: Vec<u32>,
    /// Frame size, flow count and queues the pools' templates hold now,
    /// and the size mix they were written for.
    templates: Option<(u32, u32, u16, Option<String>)>,
    /// With a size mix: each queue's frames of every size of the mix.
    mixes: Vec<Option<Arc<tx::MixFrames>>>,
    /// This process's run id, in every frame (wire::run_id): a receiver
    /// that outlives this run starts each stream afresh for the next.
    run_id: u16,
    pub mempools: Vec<MempoolRecord>,
    hz: u64,
    clock: crate::clock::WallClock,
    /// A group member's share of the stream ids: (first, how many).
    own_streams: Option<(u16, u32)>,
}

impl Sender {
    /// Opens the ports and makes the pools for the largest step.
    pub fn new(eal: &Eal, cfg: SenderConfig) -> Result<Sender, Failure> {
        let nports = cfg.ports.len() as u16;
        if cfg.max_queues < nports {
            return Err(Failure::usage(format!(
                "{} ports but at most {} queue(s): give every --port a queue (--queues {nports} or more)",
                nports, cfg.max_queues
            )));
        }
        let mbuf = dpdk::MbufLayout::get();
        let spread = Spread::new(cfg.max_queues, nports);
        // One pool per TX queue: each holds its queue's frame template, and
        // MBUF_FAST_FREE needs one pool per queue.
        let tx_sizing = PoolSizing {
            ring: u32::from(cfg.tx_ring),
            burst: cfg.burst as u32,
            cache: 256,
            data_room: (u32::from(mbuf.headroom) + cfg.max_size - wire::FCS_LEN as u32).next_multiple_of(dpdk::ffi::RTE_CACHE_LINE_SIZE),
        };
        // Every port's RX pool is sized for the port with the most queues.
        let rx_sizing = PoolSizing {
            ring: u32::from(cfg.tx_ring) * u32::from(spread.queues_on(0)),
            burst: cfg.burst as u32,
            cache: 0,
            data_room: dpdk::ffi::RTE_MBUF_DEFAULT_BUF_SIZE,
        };
        let mut sides = Vec::new();
        let opened = open_ports(&cfg.ports, cfg.max_queues, &cfg.watch_xstats, |n| Self::port_config(&cfg, n), cfg.size_flag)?;
        for (p, OpenedPort { port, info, watch, ena }) in opened.into_iter().enumerate() {
            let own_mac = MacAddr(port.mac()?);
            let addressing = cfg.addressing[p].clone();
            let src_mac = addressing.src_mac.unwrap_or(own_mac);
            let rx_pool = Mempool::create(&format!("bd_txrx_{}", port.id()), &rx_sizing, port.socket())?;
            sides.push(TxSide { port, info, own_mac, src_mac, addressing, rx_pool, watch, link: Link::default(), ena });
        }
        // The device's limits first: they name the flag to change.
        let lcores = session::worker_lcores(eal, cfg.max_queues)?;
        let mempools = vec![MempoolRecord::new(u32::from(cfg.max_queues), &tx_sizing), MempoolRecord::new(u32::from(nports), &rx_sizing)];
        let pools = (0..cfg.max_queues)
            .map(|q| {
                let (p, local) = spread.port_of(q);
                let side = &sides[usize::from(p)];
                Mempool::create(&format!("bd_tx_{}_{local}", side.port.id()), &tx_sizing, side.port.socket()).map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Sender {
            sides,
            cfg,
            lcores,
            pools,
            txqs: Vec::new(),
            rxqs: Vec::new(),
            configured_queues: None,
            seqs: vec![0; 65536],
            templates: None,
            mixes: Vec::new(),
            run_id: new_run_id(),
            mempools,
            hz: dpdk::tsc_hz(),
            clock: crate::clock::WallClock::new(dpdk::tsc_hz()),
            own_streams: None,
        })
    }

    fn port_config(cfg: &SenderConfig, queues: u16) -> PortConfig {
        PortConfig::paired(queues, cfg.tx_ring, cfg.max_size, true)
    }

    /// This process's run id (in every frame's IPv4 identification).
    pub fn run_id(&self) -> u16 {
        self.run_id
    }

    /// The first port (the only one, usually).
    pub fn port(&self) -> &Port {
        &self.sides[0].port
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.sides[0].info
    }

    pub fn own_mac(&self) -> MacAddr {
        self.sides[0].own_mac
    }

    pub fn src_mac(&self) -> MacAddr {
        self.sides[0].src_mac
    }

    /// Every port, in --port order.
    pub fn sides(&self) -> &[TxSide] {
        &self.sides
    }

    /// Every port's device name, in --port order.
    pub fn port_names(&self) -> Vec<String> {
        self.sides.iter().map(|s| s.info.name.clone()).collect()
    }

    pub fn lcores(&self) -> &[u32] {
        &self.lcores
    }

    pub fn link(&self) -> Link {
        self.sides[0].link
    }

    pub fn tsc_hz(&self) -> u64 {
        self.hz
    }

    /// Every port's counters now.
    pub fn read_counters(&self) -> Reading {
        self.sides.iter().map(|s| (s.port.stats().ok(), s.watch.sample())).collect()
    }

    /// Each port's counters between two readings, and their sum. A device
    /// whose peer just left (memif) may refuse a read: its port figures
    /// are then zero, and the lanes' own counts stand.
    pub fn counters_between(&self, a: &Reading, b: &Reading) -> (PortStats, WindowXstats, Vec<(PortStats, WindowXstats)>) {
        let mut per = Vec::new();
        let (mut port, mut xs) = (PortStats::default(), WindowXstats::default());
        for (side, ((pa, xa), (pb, xb))) in self.sides.iter().zip(a.iter().zip(b)) {
            let d = match (pa, pb) {
                (Some(pa), Some(pb)) => pb.since(pa),
                _ => {
                    tracing::warn!("reading the counters of port {} failed: its port figures are zero", side.info.name);
                    PortStats::default()
                }
            };
            let w = side.watch.window(xa, xb);
            port.add(&d);
            xs.merge(&side.info.name, &w);
            per.push((d, w));
        }
        (port, xs, per)
    }

    /// With several ports, each port's own window: its counters
    /// (`counters_between`) and its lanes' tallies; empty with one port.
    pub fn port_windows(&self, per_port: Vec<(PortStats, WindowXstats)>, lanes: &[LaneResult], seconds: f64) -> Vec<SenderWindow> {
        let nports = self.sides.len() as u16;
        let spread = Spread::new(lanes.len() as u16, nports);
        if nports < 2 {
            return Vec::new();
        }
        per_port
            .into_iter()
            .enumerate()
            .map(|(i, (port, xstats))| {
                let mut w = SenderWindow { seconds, port, xstats, ..Default::default() };
                for l in lanes.iter().filter(|l| spread.port_of(l.queue).0 == i as u16) {
                    w.total.add(&l.outcome.tally);
                    w.per_queue.push(l.outcome.tally);
                }
                w
            })
            .collect()
    }

    /// The allowance counters that moved lately on any port, for a live line.
    pub fn live_watch_text(&self) -> Option<String> {
        let watches: Vec<(&str, &Watch)> = self.sides.iter().map(|s| (s.info.name.as_str(), &s.watch)).collect();
        crate::xstats::live_text_of(&watches)
    }

    /// The first port's watched counters (allowances on ENA, --watch-xstat names).
    pub fn watch(&self) -> &Watch {
        &self.sides[0].watch
    }

    /// (Re)configures every port for its share of `queues`, starts them and
    /// waits for their links. A port whose share is 0 still gets a queue
    /// (a port cannot have none) that no lane uses.
    pub fn set_queues(&mut self, queues: u16) -> Result<(), Failure> {
        if self.configured_queues == Some(queues) {
            return Ok(());
        }
        let spread = Spread::new(queues, self.sides.len() as u16);
        self.txqs.clear();
        self.rxqs.clear();
        let mut per_side = Vec::new();
        for (p, side) in self.sides.iter_mut().enumerate() {
            side.port.stop()?;
            let n = spread.queues_on(p as u16).max(1);
            let rx: Vec<&Mempool> = (0..n).map(|_| &side.rx_pool).collect();
            let (rxqs, txqs) =
                side.port.configure(&Self::port_config(&self.cfg, n), &rx).map_err(|e| session::limit_failure(e, self.cfg.size_flag))?;
            side.port.start().map_err(|e| session::start_failure(&side.port, e))?;
            // Per-queue stats ahead of the watched ones shift with the queue count.
            side.watch.resolve(&side.port)?;
            if self.configured_queues.is_none() {
                side.watch.start_polling(self.cfg.xstats_interval);
            }
            per_side.push((rxqs.into_iter().map(Some).collect::<Vec<_>>(), txqs.into_iter().map(Some).collect::<Vec<_>>()));
        }
        for q in 0..queues {
            let (p, local) = spread.port_of(q);
            let (rxqs, txqs) = &mut per_side[usize::from(p)];
            self.txqs.push(txqs[usize::from(local)].take());
            self.rxqs.push(rxqs[usize::from(local)].take());
        }
        self.configured_queues = Some(queues);
        self.templates = None;
        for side in &mut self.sides {
            side.link = side.port.wait_link_up(self.cfg.link_timeout, signals::stopping).ok_or_else(|| {
                if signals::interrupted() {
                    Failure::runtime("interrupted while waiting for the link")
                } else {
                    Failure::runtime(format!(
                        "link of port {} ({}) still down after {:.0?}: is the peer running (drop, or the memif server)? raise --link-timeout to wait longer",
                        side.port.id(),
                        side.info.name,
                        self.cfg.link_timeout
                    ))
                }
            })?;
        }
        Ok(())
    }

    pub fn mtu(&self) -> u32 {
        self.sides[0].port.configured().map_or(0, |c| c.mtu)
    }

    pub fn configured(&self) -> dpdk::Configured {
        self.sides[0].port.configured().cloned().unwrap_or_default()
    }

    fn write_templates(&mut self, layout: &StepLayout, size: u32, mix: Option<&wire::SizeMix>) -> Result<(), Failure> {
        let key = (size, layout.flows.flows, layout.queues(), mix.map(|m| m.label()));
        if self.templates == Some(key.clone()) {
            return Ok(());
        }
        self.mixes = vec![None; self.pools.len()];
        for slot in layout.slots() {
            let (q, first) = (slot.queue, slot.streams[0]);
            let side = &self.sides[usize::from(slot.port)];
            let a = &side.addressing;
            let spec = FrameSpec {
                src_mac: side.src_mac,
                dst_mac: a.dst_mac,
                src_ip: a.src_ip,
                dst_ip: a.dst_ip,
                src_port: first.src_port,
                dst_port: a.dst_port,
                frame_size: size as usize,
                ttl: 64,
                run_id: self.run_id,
            };
            tx::write_templates(&self.pools[usize::from(q)], &spec)?;
            if let Some(m) = mix {
                self.mixes[usize::from(q)] = Some(Arc::new(tx::MixFrames::new(m, &spec)?));
            }
        }
        self.templates = Some(key);
        Ok(())
    }

    /// Runs one step. Without a window: sends until the count or the
    /// duration. With one: sends through the warm-up, pauses for the drain,
    /// has the receiver open its window, sends for the duration as one
    /// trial, drains, and has the receiver close its window. Every frame of
    /// the trial is thus inside the receiver's window and nothing else is,
    /// so the two ends' counts compare exactly (RFC 2544's trial).
    pub fn run_step(&mut self, p: &StepParams, hooks: &mut dyn WindowHooks) -> Result<StepOutcome, Failure> {
        let plan = self.layout(p)?;
        self.set_queues(p.queues)?;
        if p.replay.is_none() {
            self.write_templates(&plan, p.size, p.mix.as_ref())?;
        }
        if !p.window {
            let phase = self.run_phase(&plan, p, p.duration, p.count, hooks)?;
            std::thread::sleep(self.cfg.drain);
            return Ok(phase.into_outcome(None, None));
        }
        if !p.warmup.is_zero() {
            let warm = self.run_phase(&plan, p, Some(p.warmup), None, hooks)?;
            std::thread::sleep(self.cfg.drain);
            if warm.failure.is_some() || warm.interrupted {
                return Ok(warm.into_outcome(None, None));
            }
        }
        let streams_at_start = self.stream_edge(&plan);
        if let Err(e) = hooks.start(streams_at_start.as_ref()) {
            return Ok(StepOutcome {
                lanes: Vec::new(),
                window: None,
                failure: Some(e),
                interrupted: signals::interrupted(),
                seconds: 0.0,
            });
        }
        let before = self.read_counters();
        let cpu_before = crate::host::CpuTimes::now();
        let trial = self.run_phase(&plan, p, p.duration, None, hooks)?;
        let host_steal_pct = crate::host::CpuTimes::steal_pct(cpu_before, crate::host::CpuTimes::now());
        // Frames accepted but still in a ring are lost if the window closes now.
        std::thread::sleep(self.cfg.drain);
        let after = self.read_counters();
        let (port, xstats, per_port) = self.counters_between(&before, &after);
        let latency = merged_latency(&trial.lanes);
        let ports = self.port_windows(per_port, &trial.lanes, trial.seconds);
        let mut window = SenderWindow {
            seconds: trial.seconds,
            port,
            xstats,
            ports,
            shape: merged_shape(&trial.lanes),
            reflected: latency.as_ref().map_or(0, |l| l.1),
            latency: latency.map(|l| l.0),
            streams_at_start,
            streams_at_end: self.stream_edge(&plan),
            all_probed: p.replay.is_none(),
            host_steal_pct,
            ..Default::default()
        };
        for l in &trial.lanes {
            let t = &l.outcome.tally;
            window.total.add(t);
            window.per_queue.push(*t);
            window.stalls.add(l.queue, t.stalls, t.stalled_ticks, l.outcome.longest_stall, self.hz);
            window.reflected_stale += l.outcome.reflected_stale;
        }
        let closed = if trial.interrupted { Ok(()) } else { hooks.end(&window) };
        Ok(trial.into_outcome(Some(window), closed.err()))
    }

    /// Where this step's streams stand now (None: more than an edge lists).
    fn stream_edge(&self, plan: &StepLayout) -> Option<seqtrack::StreamEdge> {
        let (first, n) = (plan.flows.first_stream, plan.flows.stream_count() as usize);
        let seqs = self.seqs.get(usize::from(first)..usize::from(first) + n).filter(|_| n <= seqtrack::MAX_EDGE_STREAMS)?;
        Some(seqtrack::StreamEdge { run: self.run_id, first, seqs: seqs.to_vec() })
    }

    /// The step's layout over this sender's ports.
    pub fn layout(&self, p: &StepParams) -> Result<StepLayout, Failure> {
        let base = self.sides[0].addressing.src_port;
        let mut layout = StepLayout::new(p.queues, self.sides.len() as u16, p.flows, base).map_err(crate::session::layout_failure)?;
        if let Some((first, room)) = self.own_streams {
            layout = layout.with_streams_from(first, room).map_err(crate::session::layout_failure)?;
        }
        Ok(layout.with_rate(p.rate))
    }

    /// This sender numbers its streams from `first`, at most `room` of them
    /// (its share of a group's stream ids, so the receiver tells the members apart).
    pub fn own_streams(&mut self, first: u16, room: u32) {
        self.own_streams = Some((first, room));
    }

    /// Sends on every queue of `plan` until `duration`, `count`, a stall or a signal.
    fn run_phase(
        &mut self,
        plan: &StepLayout,
        p: &StepParams,
        duration: Option<Duration>,
        count: Option<u64>,
        hooks: &mut dyn WindowHooks,
    ) -> Result<Phase, Failure> {
        let frame_len = (p.size - wire::FCS_LEN as u32) as u16;
        let plan = plan.clone().with_count(count);
        let stop = Arc::new(AtomicBool::new(false));
        let counters: Vec<Arc<LaneCounters>> = (0..p.queues).map(|_| Arc::new(LaneCounters::default())).collect();
        let mut jobs = Vec::new();
        // A replay's lanes share one start, a moment ahead, so the queues
        // keep the capture's timing between them too.
        let replay_start = dpdk::rdtsc() + self.hz / 100;
        for slot in plan.slots() {
            let q = slot.queue;
            let lcore = self.lcores[usize::from(q)];
            let flag = stop.clone();
            let job = match &p.replay {
                Some(r) => {
                    let lane = self.replay_lane(q, slot.streams[0].id, r, replay_start, counters[usize::from(q)].clone());
                    dpdk::launch(lcore, move || lane.run(&flag))?
                }
                None => {
                    let lane = self.tx_lane(p, slot, frame_len, counters[usize::from(q)].clone());
                    dpdk::launch(lcore, move || lane.run(&flag))?
                }
            };
            jobs.push((q, lcore, job));
        }
        let mut failure = self.drive(p, duration, count, &counters, Instant::now(), hooks);
        stop.store(true, std::sync::atomic::Ordering::SeqCst);

        let mut lanes = Vec::new();
        let mut panicked = None;
        for (q, lcore, job) in jobs {
            match job.join() {
                Ok((queue, mut outcome)) => {
                    // Home again for the next phase.
                    self.txqs[usize::from(q)] = Some(queue);
                    if let Some(rxq) = outcome.rx_queue.take() {
                        self.rxqs[usize::from(q)] = Some(rxq);
                    }
                    lanes.push(LaneResult { queue: q, lcore, outcome });
                }
                Err(e) => panicked = Some(e),
            }
        }
        if let Some(e) = panicked {
            return Err(e.into());
        }
        let faults: u64 = lanes.iter().map(|l| l.outcome.tally.faults).sum();
        if faults > 0 && failure.is_none() {
            failure = Some(StepFailure::RingsLost { queues: faults });
        }
        if faults > 0 {
            // The ring is gone: the next step needs the port started again.
            self.configured_queues = None;
        }
        for l in &lanes {
            for (s, next) in plan.streams(l.queue).iter().zip(&l.outcome.next_seqs) {
                self.seqs[usize::from(s.id)] = *next;
            }
        }
        let start = lanes.iter().map(|l| l.outcome.start_tsc).min().unwrap_or(0);
        let end = lanes.iter().map(|l| l.outcome.end_tsc).max().unwrap_or(0);
        Ok(Phase { lanes, failure, interrupted: signals::interrupted(), seconds: end.saturating_sub(start) as f64 / self.hz as f64 })
    }

    /// A send lane for queue `q` of this step.
    fn tx_lane(&mut self, p: &StepParams, slot: layout::QueueSlot, frame_len: u16, counters: Arc<LaneCounters>) -> TxLane {
        let (q, streams) = (slot.queue, slot.streams);
        let first_seqs = streams.iter().map(|s| self.seqs[usize::from(s.id)]).collect();
        TxLane {
            queue: self.txqs[usize::from(q)].take().expect("queue handle is home between phases"),
            pool: self.pools[usize::from(q)].clone(),
            streams,
            first_seqs,
            frame_len,
            mix: self.mixes.get(usize::from(q)).cloned().flatten(),
            burst: self.cfg.burst,
            quota: slot.quota,
            rate: slot.rate,
            shape: p.shape,
            seed: 0x9e37_79b9_7f4a_7c15 ^ (u64::from(q) << 32) ^ dpdk::rdtsc(),
            tsc_hz: self.hz,
            clock: self.clock,
            counters,
            reflect: if p.reflect {
                Some(tx::Reflect::new(
                    self.rxqs[usize::from(q)].take().expect("RX queue handle is home between phases"),
                    self.hz / 10,
                    self.clock,
                ))
            } else {
                None
            },
        }
    }

    /// A replay lane for queue `q`: its share of the capture, stamped as `stream`.
    fn replay_lane(
        &mut self,
        q: u16,
        stream: u16,
        r: &Arc<crate::tx::replay::Replay>,
        start_tsc: u64,
        counters: Arc<LaneCounters>,
    ) -> ReplayLane {
        ReplayLane {
            queue: self.txqs[usize::from(q)].take().expect("queue handle is home between phases"),
            pool: self.pools[usize::from(q)].clone(),
            replay: r.clone(),
            plan: usize::from(q),
            stream,
            first_seq: self.seqs[usize::from(stream)],
            burst: self.cfg.burst,
            start_tsc,
            tsc_hz: self.hz,
            clock: self.clock,
            counters,
        }
    }

    /// The main thread's part of a phase: live lines, and the reasons to end.
    fn drive(
        &self,
        p: &StepParams,
        duration: Option<Duration>,
        count: Option<u64>,
        lanes: &[Arc<LaneCounters>],
        began: Instant,
        hooks: &mut dyn WindowHooks,
    ) -> Option<StepFailure> {
        let mut prev = Tally::default();
        let mut next_link_check = began;
        let mut prev_q: Vec<Tally> = vec![Tally::default(); lanes.len()];
        let mut last_progress = began;
        let mut ticker = Ticker::new(began);
        loop {
            std::thread::sleep(Duration::from_millis(5));
            let now = Instant::now();
            if signals::stopping() || duration.is_some_and(|d| now.duration_since(began) >= d) {
                return None;
            }
            if lanes.iter().all(|l| l.is_done()) {
                // Lanes that stopped on a fault are reported by the caller.
                return None;
            }
            if now >= next_link_check {
                next_link_check = now + LINK_CHECK;
                if let Some(gone) = self.link_gone(now.duration_since(began)) {
                    return Some(gone);
                }
            }
            let Some(tick) = ticker.due(now) else { continue };
            if let Err(e) = hooks.peer_alive() {
                return Some(e);
            }
            let cur = counters::total(lanes);
            let d = cur.since(&prev);
            if p.live || crate::events::enabled() {
                self.print_live(&tick, &d, lanes, &mut prev_q, p.live);
            }
            if d.packets > 0 {
                last_progress = now;
            } else if count.is_some() && now.duration_since(last_progress) >= self.cfg.link_timeout {
                return Some(StepFailure::NothingAccepted { waited: self.cfg.link_timeout, sent: cur.packets });
            }
            prev = cur;
        }
    }

    /// The once-a-second line: the second's sending, and each queue's.
    /// `print`: the line too (else only the tick event, with --events).
    fn print_live(&self, tick: &Tick, d: &Tally, lanes: &[Arc<LaneCounters>], prev_q: &mut [Tally], print: bool) {
        let r = Rates::over(d.packets, d.bytes, tick.secs);
        let now_q: Vec<Tally> = lanes.iter().map(|l| l.read()).collect();
        crate::events::emit("tick", &crate::events::TickEvent::new(tick, "sent", &r, tick.queue_mpps(&now_q, prev_q), None));
        if !print {
            prev_q.copy_from_slice(&now_q);
            return;
        }
        crate::say!(
            "{} sent {} Mpps  {:7.3} Gb/s wire (+20 B/frame preamble+gap)  {}  ring-full retries {}  | {}{}",
            tick.stamp(),
            report::mpps(r.mpps),
            r.wire_gbps,
            PerPacket::of(d.busy_cycles, d.packets),
            d.ring_full_retries,
            tick.per_queue(&now_q, prev_q),
            self.live_watch_text().map(|w| format!(" | {w}")).unwrap_or_default()
        );
    }
}

impl Sender {
    /// A port whose link was up went down: the receiver (a memif peer, or
    /// the far end of a cable) is gone.
    fn link_gone(&self, at: Duration) -> Option<StepFailure> {
        let side = self.sides.iter().find(|s| s.link.up && !s.port.link().up)?;
        Some(StepFailure::LinkDown { port: side.port.id(), name: side.info.name.clone(), after: at, memif: side.port.peer_managed() })
    }

    /// Configures the ports again before the next step, even for the same
    /// queue count: the peer restarted its end (a memif client does not
    /// reconnect by itself).
    pub fn reconnect_next_step(&mut self) {
        if self.sides.iter().any(|s| s.port.peer_managed()) {
            self.configured_queues = None;
        }
    }
}

/// A run id unlikely to repeat between two runs against the same receiver:
/// the clock's nanoseconds and the process id, folded, never 0 (what a
/// sender that sets none writes).
fn new_run_id() -> u16 {
    let ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let mixed = (u64::from(ns) ^ (u64::from(std::process::id()) << 16) ^ dpdk::rdtsc()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    match (mixed >> 48) as u16 {
        0 => 1,
        r => r,
    }
}

/// How often a phase checks that every link is still up.
const LINK_CHECK: Duration = Duration::from_millis(100);

impl Drop for Sender {
    fn drop(&mut self) {
        // No counter read may outlive the port.
        for side in &self.sides {
            side.watch.stop();
        }
        // A memif peer unmaps the rings on its interrupt thread when this
        // side leaves, under its lanes if they still poll (DPDK's memif has
        // no guard): give a receiver that stops on its own (drop --count,
        // or parked after bye) a moment to stop first.
        let until = std::time::Instant::now() + MEMIF_PEER_GRACE;
        for side in self.sides.iter().filter(|s| s.info.driver == "net_memif") {
            while side.port.link().up && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// How long blast waits at exit for a memif peer to stop polling.
const MEMIF_PEER_GRACE: Duration = Duration::from_secs(1);
