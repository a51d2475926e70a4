//! drop's machinery: the port, one mempool per RX queue, the receive lanes,
//! counter snapshots for measured windows, and restarts with another queue
//! count when a ladder asks for one. Totals survive restarts. Ports, pools
//! and lanes are the data plane's (`crate::plane`); here is what drop does
//! with them: `lanes` (launch, park, and the memif peer's comings and
//! goings), `window` (snapshots and a measured window's figures), `totals`.

mod lanes;
mod totals;
mod window;

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use dpdk::{DeviceInfo, Eal, Mempool, PoolSizing, Port, PortConfig, PortStats};

pub use self::lanes::PeerChange;
pub use self::totals::{split_streams, QueueTotals, Totals};
pub use self::window::{Snapshot, TrialFigures};
use crate::counters::LaneCounters;
use crate::environment_record::MempoolRecord;
use crate::error::Error;
use crate::plane::{self, Lanes, PlanePort, QueueHome};
use crate::rx::RxOutcome;
use crate::session;

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

/// One port drop receives on, and what belongs to it alone.
pub struct RxSide {
    /// The port, its device, its watched counters and ENA state.
    pub plane: PlanePort,
    pub promiscuous: bool,
}

impl Deref for RxSide {
    type Target = PlanePort;
    fn deref(&self) -> &PlanePort {
        &self.plane
    }
}

impl DerefMut for RxSide {
    fn deref_mut(&mut self) -> &mut PlanePort {
        &mut self.plane
    }
}

pub struct Receiver {
    sides: Vec<RxSide>,
    cfg: ReceiverConfig,
    /// By global queue id.
    lcores: Vec<u32>,
    /// One per global queue, on its port's NUMA node.
    pools: Vec<Mempool>,
    queues: u16,
    lanes: Lanes<RxOutcome>,
    /// Queue handles of the configured ports while no lane runs on them
    /// (parked, or waiting for a memif peer).
    home: QueueHome,
    /// Some port can unmap its rings under a lane when its peer leaves
    /// (memif): lanes run only while every link is up.
    peer_managed: bool,
    /// Parked for a peer that said it is leaving: not started again until
    /// its link has gone down and come back.
    held: bool,
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
    pub fn new(eal: &Eal, cfg: ReceiverConfig) -> Result<Receiver, Error> {
        let nports = cfg.ports.len() as u16;
        if cfg.max_queues < nports {
            return Err(Error::ReceiveQueuesBelowPorts { ports: nports, queues: cfg.max_queues });
        }
        let cost_ticks = rx_cost_ticks(cfg.cost_per_frame)?;
        let spread = layout::Spread::new(cfg.max_queues, nports);
        let opened = plane::open_ports(&cfg.ports, cfg.max_queues, &cfg.watch_xstats, |n| Self::port_config(&cfg, n, false), false)?;
        let sides: Vec<RxSide> = opened.into_iter().map(|plane| RxSide { plane, promiscuous: false }).collect();
        let totals =
            Totals { arrival: if cfg.one_way { Some(arrival_clock(&sides, cfg.arrival_clock)?) } else { None }, ..Default::default() };
        let lcores = session::worker_lcores(eal, cfg.max_queues)?;
        let sizing = pool_sizing(&cfg);
        let trial_streams = if cfg.count_only { 0 } else { cfg.stream_capacity };
        let trial = Arc::new(crate::trial::TrialBoard::new(trial_streams, usize::from(cfg.max_queues)));
        let made = plane::queue_pools(
            "rx",
            spread,
            |port| dpdk::af_xdp::rx_pool(sizing, &port.info().driver, None),
            |p| &sides[usize::from(p)].port,
        )?;
        let mempools = plane::pool_records(made.iter().map(|(pool, sizing)| (pool, sizing)));
        let pools = made.into_iter().map(|(pool, _)| pool).collect();
        Ok(Receiver {
            sides,
            cfg,
            lcores,
            pools,
            queues: 0,
            lanes: Lanes::default(),
            home: QueueHome::default(),
            peer_managed: false,
            held: false,
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
        self.lanes.counters()
    }

    /// Every port's counters, summed.
    pub fn port_stats(&self) -> Result<PortStats, Error> {
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
    pub fn start(&mut self, queues: u16) -> Result<(), Error> {
        if queues > self.cfg.max_queues {
            return Err(Error::QueuesBeyondReserved { asked: queues, reserved: self.cfg.max_queues });
        }
        let spread = layout::Spread::new(queues, self.sides.len() as u16);
        let nic_clock = self.nic_clock();
        let first = (self.generation == 0).then_some(self.cfg.xstats_interval);
        let (cfg, pools) = (&self.cfg, &self.pools);
        self.home = plane::configure(
            &mut self.sides,
            queues,
            |n| Self::port_config(cfg, n, nic_clock),
            |p, local| &pools[usize::from(spread.global_queue(p, local))],
            false,
            first,
        )?;
        for side in &mut self.sides {
            side.promiscuous = side.port.promiscuous()?;
        }
        if nic_clock && self.rx_stamp.is_none() {
            // The PMDs registered the field when their ports started with the offload.
            self.rx_stamp = Some(dpdk::RxTimestamp::register()?);
        }
        self.queues = queues;
        self.peer_managed = self.sides.iter().any(|s| s.port.peer_managed());
        if !self.peer_managed || self.links_up() {
            self.launch()?;
        }
        Ok(())
    }

    /// Stops every lane and the ports; what they counted joins the totals.
    pub fn stop(&mut self) -> Result<(), Error> {
        let parked = self.park();
        // The handles die with the configuration.
        self.home = QueueHome::default();
        let mut stopped = Ok(());
        for side in &mut self.sides {
            if let Err(e) = side.port.stop() {
                stopped = stopped.and(Err(e.into()));
            }
        }
        parked.and(stopped)
    }

    /// Starts over with `queues` RX queues if that differs from now.
    /// Returns whether the ports restarted.
    pub fn set_queues(&mut self, queues: u16) -> Result<bool, Error> {
        if queues == self.queues && (!self.lanes.is_empty() || (self.peer_managed && self.home.rx_count() == usize::from(queues))) {
            return Ok(false);
        }
        if let Some(side) = self.sides.iter().find(|s| dpdk::af_xdp::is_af_xdp(&s.info.driver)).filter(|_| self.queues != queues) {
            // The NIC's RSS spreads over every channel anyway: drop serves
            // them all from the start (drop's main), and keeps them.
            return Err(Error::AfXdpQueuesFixed {
                port: side.info.name.clone(),
                has: self.queues,
                asked: queues,
                fix: "drop serves every queue of its --queues, the interface's channels: give blast --rx-queues that count",
            });
        }
        self.stop()?;
        self.start(queues)?;
        Ok(true)
    }

    /// Stops everything and hands over the totals.
    pub fn finish(&mut self) -> Result<Totals, Error> {
        for side in &self.sides {
            side.watch.stop();
        }
        self.stop()?;
        Ok(std::mem::take(&mut self.totals))
    }
}

/// --rx-cost in ticks of the lanes' counter. The lanes spin on their
/// counter, whose ticks are core cycles on x86 only: on arm64 it is a
/// platform timer, turned into cycles with the core's frequency where known.
fn rx_cost_ticks(cycles: u64) -> Result<u64, Error> {
    let core = crate::clock::core();
    match (cycles, core.ticks_of_cycles(cycles)) {
        (0, _) => Ok(0),
        (_, Some(ticks)) => Ok(ticks),
        (cycles, None) => Err(Error::RxCostUnknownClock { cycles, clock: core.core_hz_source.clone() }),
    }
}

/// The clock --one-way reads arrivals on, from what every port offers.
fn arrival_clock(sides: &[RxSide], choice: latency::ArrivalClockChoice) -> Result<latency::ArrivalClock, Error> {
    let ports: Vec<latency::arrival::PortTimestamps> = sides
        .iter()
        .map(|s| latency::arrival::PortTimestamps {
            name: &s.info.name,
            driver: &s.info.driver,
            offered: s.info.offers_rx_timestamp(),
            scale: timescale_of(&s.info.driver),
        })
        .collect();
    latency::arrival::choose(choice, &ports).map_err(Error::from)
}

/// Each RX queue's pool: its ring and a burst in flight, or --rx-mbufs.
fn pool_sizing(cfg: &ReceiverConfig) -> PoolSizing {
    let mbuf = dpdk::MbufLayout::get();
    let data_room = (u32::from(mbuf.headroom) + cfg.max_size).max(dpdk::consts::MBUF_DEFAULT_BUF_SIZE);
    match cfg.mbufs {
        // A pool smaller than what can be in flight starves the PMD (rx_nombuf): on purpose.
        Some(n) => PoolSizing { ring: n, burst: 0, cache: (n / 4).min(256), data_room, held: 0, chunk: None },
        None => PoolSizing { ring: u32::from(cfg.rx_ring), burst: cfg.burst as u32, cache: 256, data_room, held: 0, chunk: None },
    }
}
