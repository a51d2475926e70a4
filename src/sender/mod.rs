//! blast's machinery: the port, one mempool per TX queue with its frames
//! prebuilt, the sequence numbers of every stream, and the running of one
//! step (a queue count and a frame size) with an optional measured window.
//! Ports, pools and lanes are the data plane's (`crate::plane`); here is
//! what they are for: `step` (a step through warm-up, drain and trial),
//! `phase` (the lanes of one run and the watch over them), `window` (the
//! measured window's figures and hooks), `failure` (why a step could not be measured), `outcome` (what the lanes handed back).

mod failure;
mod outcome;
mod phase;
mod socket_phase;
mod step;
mod window;

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use dpdk::{DeviceInfo, Eal, Link, Mempool, PoolSizing, Port, PortConfig};
use layout::Spread;
use wire::MacAddr;

pub use self::failure::StepFailure;
pub use self::outcome::{tx_wall_pct, LaneResult, SenderWindow, StepOutcome};
pub use self::window::{NoPeer, Reading, WindowHooks};
use crate::environment_record::MempoolRecord;
use crate::error::Error;
use crate::plane::{self, PlanePort, QueueHome};
use crate::session;
use crate::signals;
use crate::tx;
use crate::xstats::Watch;

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
    /// The live line's and the series' interval (--interval).
    pub interval: Duration,
    /// The largest frame is a capture's, not --size's (said when a port
    /// cannot take it: [`Error::Limit`]).
    pub size_from_capture: bool,
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
    /// Send with the C lanes (blast-ref's loop, `--cross-check`) instead
    /// of blast's own: unpaced, one frame size, no reflection.
    pub c_lanes: bool,
}

/// One port blast sends on, and what belongs to it alone.
pub struct TxSide {
    /// The port, its device, its watched counters and ENA state.
    pub plane: PlanePort,
    pub own_mac: MacAddr,
    pub src_mac: MacAddr,
    /// What this port's frames carry.
    pub addressing: Addressing,
    /// The link as it came up for the step.
    pub link: Link,
}

impl Deref for TxSide {
    type Target = PlanePort;
    fn deref(&self) -> &PlanePort {
        &self.plane
    }
}

impl DerefMut for TxSide {
    fn deref_mut(&mut self) -> &mut PlanePort {
        &mut self.plane
    }
}

/// blast on the kernel's UDP sockets (`--socket`): what stands in for a
/// port. There is no port, pool or lcore: each queue is a thread with its
/// own socket (crate::socket_tx).
pub struct SocketSide {
    pub cfg: crate::socket_tx::SocketTxConfig,
    /// The path as a record names a port: "udp:198.18.0.1" (the sending address), driver "udp-socket".
    pub info: DeviceInfo,
    /// The interface that holds --src-ip, its kernel driver ("veth", "ena";
    /// empty where it cannot be read), MAC and MTU.
    pub interface: String,
    pub driver: String,
    pub mac: MacAddr,
    pub mtu: u32,
    /// Its kernel driver's statistics (on ENA the allowance counters), where it has any.
    pub watch: Option<Watch>,
    /// Each socket's send buffer as the kernel granted it (0 before the first step).
    pub sndbuf_granted: usize,
}

pub struct Sender {
    sides: Vec<TxSide>,
    /// On sockets: the path, and no `sides`.
    sockets: Option<SocketSide>,
    cfg: SenderConfig,
    /// By global queue id.
    lcores: Vec<u32>,
    /// One per global queue, on its port's NUMA node.
    pools: Vec<Arc<Mempool>>,
    /// One per port: blast never reads its RX queues, but paired devices
    /// (memif) need them, and reflect mode reads them.
    /// Each port's RX pools: one for all its queues, or one per queue
    /// where the driver registers the pool as the queue's own memory
    /// (net_af_xdp's UMEM).
    rx_pools: Vec<Vec<Mempool>>,
    /// Queue handles of the current configuration while no lane holds them.
    home: QueueHome,
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
    /// The run's figures per interval, its --series CSV and --metrics, when the tool keeps them.
    timeline: Option<crate::timeline::Timeline>,
}

impl Sender {
    /// Opens the ports and makes the pools for the largest step.
    pub fn new(eal: &Eal, cfg: SenderConfig) -> Result<Sender, Error> {
        let nports = cfg.ports.len() as u16;
        if cfg.max_queues < nports {
            return Err(Error::SendQueuesBelowPorts { ports: nports, queues: cfg.max_queues });
        }
        let mbuf = dpdk::MbufLayout::get();
        let spread = Spread::new(cfg.max_queues, nports);
        // One pool per TX queue: each holds its queue's frame template, and
        // MBUF_FAST_FREE needs one pool per queue.
        let tx_sizing = PoolSizing {
            ring: u32::from(cfg.tx_ring),
            burst: cfg.burst as u32,
            cache: 256,
            data_room: (u32::from(mbuf.headroom) + cfg.max_size - wire::FCS_LEN as u32).next_multiple_of(dpdk::consts::CACHE_LINE_SIZE),
            held: 0,
            chunk: None,
        };
        // Every port's RX pool is sized for the port with the most queues.
        let rx_sizing = PoolSizing {
            ring: u32::from(cfg.tx_ring) * u32::from(spread.queues_on(0)),
            burst: cfg.burst as u32,
            cache: 0,
            data_room: dpdk::consts::MBUF_DEFAULT_BUF_SIZE,
            held: 0,
            chunk: None,
        };
        let mut sides = Vec::new();
        // The device's limits first, then the lcores: each names the flag to
        // change, where a pool sized for an impossible queue count would only
        // say "give the EAL more memory".
        let opened =
            plane::open_ports(&cfg.ports, cfg.max_queues, &cfg.watch_xstats, |n| Self::port_config(&cfg, n), cfg.size_from_capture)?;
        for (p, plane) in opened.into_iter().enumerate() {
            let own_mac = MacAddr(plane.port.mac()?);
            let addressing = cfg.addressing[p].clone();
            let src_mac = addressing.src_mac.unwrap_or(own_mac);
            sides.push(TxSide { plane, own_mac, src_mac, addressing, link: Link::default() });
        }
        let lcores = session::worker_lcores(eal, cfg.max_queues)?;
        let rx_made = sides
            .iter()
            .enumerate()
            .map(|(p, s)| rx_pools_of(s, spread.queues_on(p as u16), rx_sizing, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        let tx_made = plane::queue_pools("tx", spread, |_| tx_sizing, |p| &sides[usize::from(p)].port)?;
        let mut mempools = plane::pool_records(tx_made.iter().map(|(pool, sizing)| (pool, sizing)));
        mempools.extend(plane::pool_records(rx_made.iter().flatten().map(|(pool, sizing)| (pool, sizing))));
        let rx_pools = rx_made.into_iter().map(|v| v.into_iter().map(|(pool, _)| pool).collect()).collect();
        let pools = tx_made.into_iter().map(|(pool, _)| Arc::new(pool)).collect();
        Ok(Sender {
            sides,
            sockets: None,
            cfg,
            lcores,
            pools,
            rx_pools,
            home: QueueHome::default(),
            configured_queues: None,
            seqs: vec![0; 65536],
            templates: None,
            mixes: Vec::new(),
            run_id: new_run_id(),
            mempools,
            hz: dpdk::tsc_hz(),
            clock: crate::clock::WallClock::new(dpdk::tsc_hz()),
            own_streams: None,
            timeline: None,
        })
    }

    /// A sender on the kernel's UDP sockets, no EAL: `cfg`'s one addressing
    /// (its --src-ip held by an interface here) and `tx`.
    pub fn on_sockets(cfg: SenderConfig, tx: crate::socket_tx::SocketTxConfig) -> Result<Sender, Error> {
        let ip = tx.src_ip;
        let interface = crate::socket_rx::interface_of(std::net::IpAddr::V4(ip)).ok_or(Error::SocketSourceNotLocal { ip })?;
        let sys = |leaf: &str| std::fs::read_to_string(format!("/sys/class/net/{interface}/{leaf}")).unwrap_or_default();
        let mtu: u32 = sys("mtu").trim().parse().unwrap_or(0);
        if mtu > 0 && cfg.max_size > mtu + 18 {
            return Err(Error::SocketFrameAboveMtu { size: cfg.max_size, interface, mtu });
        }
        let mac = sys("address").trim().parse().unwrap_or(MacAddr([0; 6]));
        let watch = crate::socket_rx::watch_of(&interface, &cfg.watch_xstats)?;
        let driver = nicstats::Interface::open(&interface).and_then(|i| i.driver()).unwrap_or_default();
        let info = socket_device(&tx, mtu);
        let lcores = (0..cfg.max_queues).map(|q| tx.cpu_of(q) as u32).collect();
        let hz = crate::clock::tsc_hz();
        Ok(Sender {
            sides: Vec::new(),
            sockets: Some(SocketSide { cfg: tx, info, interface, driver, mac, mtu, watch, sndbuf_granted: 0 }),
            cfg,
            lcores,
            pools: Vec::new(),
            rx_pools: Vec::new(),
            home: QueueHome::default(),
            configured_queues: None,
            seqs: vec![0; 65536],
            templates: None,
            mixes: Vec::new(),
            // The kernel writes the IPv4 identification field: these frames
            // carry no run id, and receivers count them under run 0.
            run_id: seqtrack::NO_RUN,
            mempools: Vec::new(),
            hz,
            clock: crate::clock::WallClock::new(hz),
            own_streams: None,
            timeline: None,
        })
    }

    /// On sockets: the path in place of a port (None on a port).
    pub fn socket_side(&self) -> Option<&SocketSide> {
        self.sockets.as_ref()
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
        match &self.sockets {
            Some(s) => &s.info,
            None => &self.sides[0].info,
        }
    }

    pub fn own_mac(&self) -> MacAddr {
        self.sockets.as_ref().map_or_else(|| self.sides[0].own_mac, |s| s.mac)
    }

    /// The frames' source MAC (on sockets the interface's: the kernel writes it).
    pub fn src_mac(&self) -> MacAddr {
        self.sockets.as_ref().map_or_else(|| self.sides[0].src_mac, |s| s.mac)
    }

    /// Every port, in --port order.
    pub fn sides(&self) -> &[TxSide] {
        &self.sides
    }

    /// Every port's device name, in --port order.
    pub fn port_names(&self) -> Vec<String> {
        match &self.sockets {
            Some(s) => vec![s.info.name.clone()],
            None => self.sides.iter().map(|s| s.info.name.clone()).collect(),
        }
    }

    pub fn lcores(&self) -> &[u32] {
        &self.lcores
    }

    pub fn link(&self) -> Link {
        self.sides.first().map_or_else(Link::default, |s| s.link)
    }

    pub fn tsc_hz(&self) -> u64 {
        self.hz
    }

    /// The allowance counters that moved lately on any port, for a live line.
    pub fn live_watch_text(&self) -> Option<String> {
        plane::watch_text(&self.sides)
    }

    /// Every watched set of counters (each port's; on sockets the interface's, where it has any).
    pub fn watches(&self) -> Vec<&Watch> {
        self.watched().into_iter().map(|(_, w)| w).collect()
    }

    /// As `watches`, each with the name of the port (or socket path) it is of.
    fn watched(&self) -> Vec<(&str, &Watch)> {
        match &self.sockets {
            Some(s) => s.watch.iter().map(|w| (s.info.name.as_str(), w)).collect(),
            None => self.sides.iter().map(|s| (s.info.name.as_str(), &s.watch)).collect(),
        }
    }

    /// (Re)configures every port for its share of `queues`, starts them and
    /// waits for their links. A port whose share is 0 still gets a queue
    /// (a port cannot have none) that no lane uses.
    pub fn set_queues(&mut self, queues: u16) -> Result<(), Error> {
        if self.configured_queues == Some(queues) {
            return Ok(());
        }
        if self.sockets.is_some() {
            // Each phase opens its lanes' sockets.
            self.configured_queues = Some(queues);
            return Ok(());
        }
        if let (Some(has), Some(side)) = (self.configured_queues, self.sides.iter().find(|s| dpdk::af_xdp::is_af_xdp(&s.info.driver))) {
            return Err(Error::AfXdpQueuesFixed {
                port: side.info.name.clone(),
                has,
                asked: queues,
                fix: "give --queues one count, and run the ladder's counts one run each",
            });
        }
        let first = self.configured_queues.is_none().then_some(self.cfg.xstats_interval);
        // No lane holds a handle now: the old ones die with the old configuration.
        self.home = QueueHome::default();
        let rx_pools = &self.rx_pools;
        self.home = plane::configure(
            &mut self.sides,
            queues,
            |n| Self::port_config(&self.cfg, n),
            |p, local| {
                let port = &rx_pools[usize::from(p)];
                &port[usize::from(local).min(port.len() - 1)]
            },
            self.cfg.size_from_capture,
            first,
        )?;
        self.configured_queues = Some(queues);
        self.templates = None;
        for side in &mut self.sides {
            side.link = side.port.wait_link_up(self.cfg.link_timeout, signals::stopping)?.ok_or_else(|| {
                if signals::interrupted() {
                    Error::LinkWaitInterrupted
                } else {
                    Error::LinkDown { port: side.port.id(), name: side.info.name.clone(), waited: self.cfg.link_timeout }
                }
            })?;
        }
        Ok(())
    }

    /// Keeps a row per interval in `timeline` from now on.
    pub fn set_timeline(&mut self, timeline: crate::timeline::Timeline) {
        self.timeline = Some(timeline);
    }

    pub fn timeline_mut(&mut self) -> Option<&mut crate::timeline::Timeline> {
        self.timeline.as_mut()
    }

    pub fn take_timeline(&mut self) -> Option<crate::timeline::Timeline> {
        self.timeline.take()
    }

    pub fn mtu(&self) -> u32 {
        match &self.sockets {
            Some(s) => s.mtu,
            None => self.sides[0].port.configured().map_or(0, |c| c.mtu),
        }
    }

    pub fn configured(&self) -> dpdk::Configured {
        self.sides.first().and_then(|s| s.port.configured().cloned()).unwrap_or_default()
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

/// The socket path described as a device, for what names a port.
fn socket_device(tx: &crate::socket_tx::SocketTxConfig, mtu: u32) -> DeviceInfo {
    let unlimited = dpdk::DescLimits { max: 0, min: 0, align: 0 };
    DeviceInfo {
        name: tx.name(),
        driver: "udp-socket".into(),
        socket: -1,
        max_rx_queues: 0,
        max_tx_queues: u16::MAX,
        max_rx_pktlen: mtu + 18,
        min_mtu: 0,
        max_mtu: mtu.min(u32::from(u16::MAX)) as u16,
        rx_desc: unlimited,
        tx_desc: unlimited,
        rss_offloads: 0,
        tx_offload_capa: 0,
        rx_offload_capa: 0,
        reta_size: 0,
        if_index: 0,
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

/// A port's RX pools for blast (which receives only replies and stray
/// frames): one for all its `queues`, sized `plain`; on net_af_xdp one per
/// queue, each holding that queue's UMEM, its fill ring and the copies of
/// the frames it sends (dpdk::af_xdp).
fn rx_pools_of(side: &TxSide, queues: u16, plain: PoolSizing, cfg: &SenderConfig) -> Result<Vec<(Mempool, PoolSizing)>, Error> {
    let port = &side.port;
    if !dpdk::af_xdp::is_af_xdp(&port.info().driver) {
        return Ok(vec![(Mempool::create(&format!("bd_txrx_{}", port.id()), &plain, port.socket())?, plain)]);
    }
    let one_queue = PoolSizing { ring: u32::from(cfg.tx_ring), ..plain };
    let sizing = dpdk::af_xdp::rx_pool(one_queue, &port.info().driver, Some(u32::from(cfg.tx_ring)));
    (0..queues.max(1)).map(|q| Ok((Mempool::create(&format!("bd_txrx_{}_{q}", port.id()), &sizing, port.socket())?, sizing))).collect()
}
