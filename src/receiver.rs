//! drop's machinery: the port, one mempool per RX queue, the receive lanes,
//! counter snapshots for measured windows, and restarts with another queue
//! count when a ladder asks for one. Totals survive restarts.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dpdk::{DeviceInfo, Eal, LcoreJob, Mempool, PoolSizing, Port, PortConfig, PortStats};
use seqtrack::SeqCounts;

use crate::counters::{LaneCounters, Tally};
use crate::fail::Failure;
use crate::report::MempoolRecord;
use crate::rx::{RxLane, RxOutcome};
use crate::session;
use crate::xstats::{Sample, Watch};

#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    pub port: String,
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
    /// Mbufs per RX pool instead of the derived size (--rx-mbufs).
    pub mbufs: Option<u32>,
    /// Extended stats to watch beyond the driver's allowance counters.
    pub watch_xstats: Vec<String>,
    /// How often the counters are polled for the live view.
    pub xstats_interval: std::time::Duration,
}

struct Lane {
    queue: u16,
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
    pub port: PortStats,
    pub xs: Sample,
}

/// One queue's figures over a run, summed across restarts.
#[derive(Debug, Clone, Default)]
pub struct QueueTotals {
    pub lcore: u32,
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
}

impl Totals {
    fn absorb(&mut self, queue: u16, lcore: u32, o: &RxOutcome) {
        self.tally.add(&o.tally);
        self.probe.add(&o.streams.totals);
        self.untracked += o.streams.untracked;
        let q = self.queues.entry(queue).or_default();
        q.lcore = lcore;
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

pub struct Receiver {
    port: Port,
    info: DeviceInfo,
    cfg: ReceiverConfig,
    lcores: Vec<u32>,
    pools: Vec<Mempool>,
    queues: u16,
    lanes: Vec<Lane>,
    stop: Arc<AtomicBool>,
    generation: u64,
    totals: Totals,
    promiscuous: bool,
    watch: Watch,
    pub mempools: Vec<MempoolRecord>,
    hz: u64,
    clock: crate::clock::WallClock,
}

impl Receiver {
    pub fn new(eal: &Eal, cfg: ReceiverConfig) -> Result<Receiver, Failure> {
        let port = session::open_port(&cfg.port)?;
        let info = port.info().clone();
        port.check(&Self::port_config(&cfg, cfg.max_queues)).map_err(|e| session::limit_failure(e, "--max-size"))?;
        let lcores = session::worker_lcores(eal, cfg.max_queues)?;
        let layout = dpdk::MbufLayout::get();
        let mut sizing = PoolSizing {
            ring: u32::from(cfg.rx_ring),
            burst: cfg.burst as u32,
            cache: 256,
            data_room: (u32::from(layout.headroom) + cfg.max_size).max(dpdk::ffi::RTE_MBUF_DEFAULT_BUF_SIZE),
        };
        if let Some(n) = cfg.mbufs {
            // A pool smaller than what can be in flight starves the PMD (rx_nombuf): on purpose.
            sizing = PoolSizing { ring: n, burst: 0, cache: (n / 4).min(256), data_room: sizing.data_room };
        }
        let mempools = vec![MempoolRecord::new(u32::from(cfg.max_queues), &sizing)];
        let pools = (0..cfg.max_queues)
            .map(|q| Mempool::create(&format!("bd_rx_{}_{q}", port.id()), &sizing, port.socket()))
            .collect::<Result<Vec<_>, _>>()?;
        let watch = Watch::new(&port, &cfg.watch_xstats)?;
        Ok(Receiver {
            port,
            info,
            cfg,
            lcores,
            pools,
            queues: 0,
            lanes: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            generation: 0,
            totals: Totals::default(),
            promiscuous: false,
            watch,
            mempools,
            hz: dpdk::tsc_hz(),
            clock: crate::clock::WallClock::new(dpdk::tsc_hz()),
        })
    }

    fn port_config(cfg: &ReceiverConfig, queues: u16) -> PortConfig {
        PortConfig {
            rx_queues: queues,
            tx_queues: queues,
            rx_ring: cfg.rx_ring,
            tx_ring: cfg.rx_ring,
            max_frame: cfg.max_size,
            tx_fast_free: false,
        }
    }

    pub fn port(&self) -> &Port {
        &self.port
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
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

    pub fn promiscuous(&self) -> bool {
        self.promiscuous
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

    /// Configures `queues` RX queues, starts the port and a lane per queue.
    pub fn start(&mut self, queues: u16) -> Result<(), Failure> {
        if queues > self.cfg.max_queues {
            return Err(Failure::usage(format!(
                "{queues} RX queues asked, but drop reserved lcores and pools for {}: restart drop with --queues {queues}",
                self.cfg.max_queues
            )));
        }
        let refs: Vec<&Mempool> = self.pools[..usize::from(queues)].iter().collect();
        let (rxqs, txqs) =
            self.port.configure(&Self::port_config(&self.cfg, queues), &refs).map_err(|e| session::limit_failure(e, "--max-size"))?;
        self.port.start().map_err(|e| session::start_failure(&self.port, e))?;
        self.promiscuous = self.port.promiscuous();
        // Per-queue stats ahead of the watched ones shift with the queue count.
        self.watch.resolve(&self.port)?;
        if self.generation == 0 {
            self.watch.start_polling(self.cfg.xstats_interval);
        }
        self.stop = Arc::new(AtomicBool::new(false));
        self.generation += 1;
        let mut txqs = txqs.into_iter();
        for (rxq, &lcore) in rxqs.into_iter().zip(&self.lcores) {
            let queue = rxq.id();
            let counters = Arc::new(LaneCounters::default());
            let lane = RxLane {
                queue: rxq,
                burst: self.cfg.burst,
                stream_capacity: self.cfg.stream_capacity,
                cost_per_frame: self.cfg.cost_per_frame,
                count_only: self.cfg.count_only,
                counters: counters.clone(),
                reflect: if self.cfg.reflect { txqs.next() } else { None },
                interval_cycles: self.cfg.interval_us * self.hz / 1_000_000,
                one_way: self.cfg.one_way.then_some(self.clock),
            };
            let stop = self.stop.clone();
            let job = dpdk::launch(lcore, move || lane.run(&stop))?;
            self.lanes.push(Lane { queue, lcore, counters, job });
        }
        self.queues = queues;
        Ok(())
    }

    /// Stops every lane and the port; what they counted joins the totals.
    pub fn stop(&mut self) -> Result<(), Failure> {
        self.stop.store(true, Ordering::SeqCst);
        // Lanes gone is a new generation too: readers carry what they saw.
        if !self.lanes.is_empty() {
            self.generation += 1;
        }
        let mut panicked = None;
        for lane in self.lanes.drain(..) {
            match lane.job.join() {
                Ok(o) => self.totals.absorb(lane.queue, lane.lcore, &o),
                Err(e) => panicked = Some(e),
            }
        }
        self.port.stop();
        match panicked {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Starts over with `queues` RX queues if that differs from now.
    /// Returns whether the port restarted.
    pub fn set_queues(&mut self, queues: u16) -> Result<bool, Failure> {
        if queues == self.queues && !self.lanes.is_empty() {
            return Ok(false);
        }
        self.stop()?;
        self.start(queues)?;
        Ok(true)
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            generation: self.generation,
            tsc: dpdk::rdtsc(),
            lanes: self.lanes.iter().map(|l| l.counters.read()).collect(),
            port: self.port.stats().unwrap_or_default(),
            xs: self.watch.sample(),
        }
    }

    /// Figures between two snapshots of the same generation.
    pub fn window(&self, a: &Snapshot, b: &Snapshot) -> Result<control::WindowFigures, String> {
        if a.generation != b.generation {
            return Err("drop restarted its port during the window".into());
        }
        let mut f = control::WindowFigures { seconds: b.tsc.saturating_sub(a.tsc) as f64 / self.hz as f64, ..Default::default() };
        for (q, (x, y)) in b.lanes.iter().zip(&a.lanes).enumerate() {
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
            f.queues.push(control::QueueFigures { queue: q as u16, packets: d.packets, bytes: d.bytes, busy_seconds });
        }
        f.probe.received = f.packets - f.no_probe;
        let port = b.port.since(&a.port);
        f.imissed = port.imissed;
        f.rx_nombuf = port.rx_nombuf;
        f.ierrors = port.ierrors;
        let xs = self.watch.window(&a.xs, &b.xs);
        f.xstats = xs.deltas;
        f.levels = xs.levels;
        f.xstats_invalid = xs.invalid;
        Ok(f)
    }

    /// The allowance counters that moved lately, for a live line.
    pub fn watch_text(&self) -> Option<String> {
        self.watch.live_text()
    }

    /// Stops everything and hands over the totals.
    pub fn finish(&mut self) -> Result<Totals, Failure> {
        self.watch.stop();
        self.stop()?;
        Ok(std::mem::take(&mut self.totals))
    }
}
