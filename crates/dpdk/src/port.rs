use std::ffi::{c_char, CStr, CString};
use std::time::{Duration, Instant};

use dpdk_ffi as ffi;

use crate::{Error, LimitKind, Mbuf, Mempool, Result};

/// Ring size limits for one direction, as the device reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescLimits {
    pub min: u16,
    pub max: u16,
    pub align: u16,
}

impl DescLimits {
    fn from_ffi(l: &ffi::rte_eth_desc_lim) -> DescLimits {
        DescLimits { min: l.nb_min, max: l.nb_max, align: l.nb_align.max(1) }
    }

    fn accepts(&self, n: u16) -> bool {
        n >= self.min && n <= self.max && n.is_multiple_of(self.align)
    }
}

impl std::fmt::Display for DescLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} to {} descriptors in steps of {}", self.min, self.max, self.align)
    }
}

/// What a device says it can do.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub name: String,
    pub driver: String,
    /// NUMA socket, or -1 when unknown (virtual devices).
    pub socket: i32,
    pub max_rx_queues: u16,
    pub max_tx_queues: u16,
    pub max_rx_pktlen: u32,
    pub min_mtu: u16,
    pub max_mtu: u16,
    pub rx_desc: DescLimits,
    pub tx_desc: DescLimits,
    pub rss_offloads: u64,
    pub tx_offload_capa: u64,
    pub rx_offload_capa: u64,
    pub reta_size: u16,
}

/// Bytes a frame carries beyond its MTU: Ethernet header and FCS, unless
/// the device reports its own overhead (ethdev's convention).
fn frame_overhead(max_rx_pktlen: u32, max_mtu: u16) -> u32 {
    if max_mtu != u16::MAX && max_rx_pktlen > u32::from(max_mtu) {
        max_rx_pktlen - u32::from(max_mtu)
    } else {
        18
    }
}

impl DeviceInfo {
    /// Whether the device stamps received frames (RTE_ETH_RX_OFFLOAD_TIMESTAMP).
    pub fn offers_rx_timestamp(&self) -> bool {
        // SAFETY: a constant the shim exports.
        self.rx_offload_capa & unsafe { ffi::bd_rx_offload_timestamp } != 0
    }

    /// The largest frame, FCS included, this port takes: bounded by its
    /// largest receive length, its largest MTU, and one mbuf segment.
    pub fn max_frame(&self) -> u32 {
        let by_mtu = u32::from(self.max_mtu) + frame_overhead(self.max_rx_pktlen, self.max_mtu);
        let by_mbuf = u32::from(u16::MAX) - u32::from(crate::MbufLayout::get().headroom) + 4;
        self.max_rx_pktlen.min(by_mtu).min(by_mbuf)
    }

    /// The MTU that carries frames of `frame` bytes (FCS included).
    pub fn mtu_for_frame(&self, frame: u32) -> u32 {
        frame.saturating_sub(frame_overhead(self.max_rx_pktlen, self.max_mtu))
    }
}

/// How to set a port up.
#[derive(Debug, Clone)]
pub struct PortConfig {
    pub rx_queues: u16,
    pub tx_queues: u16,
    pub rx_ring: u16,
    pub tx_ring: u16,
    /// Largest frame to carry, FCS included: sets the MTU.
    pub max_frame: u32,
    /// Ask for MBUF_FAST_FREE when offered (only valid with one mempool per
    /// queue and mbufs of refcount 1, which is how `blast` sends).
    pub tx_fast_free: bool,
    /// Ask the device to stamp received frames (drop --arrival-clock nic);
    /// refused when it does not offer it.
    pub rx_timestamp: bool,
}

impl PortConfig {
    /// As many RX as TX queues, one ring size for both: how blast and drop
    /// set their ports up.
    pub fn paired(queues: u16, ring: u16, max_frame: u32, tx_fast_free: bool) -> PortConfig {
        PortConfig { rx_queues: queues, tx_queues: queues, rx_ring: ring, tx_ring: ring, max_frame, tx_fast_free, rx_timestamp: false }
    }
}

/// What `configure` ended up doing, for the record.
#[derive(Debug, Clone, Default)]
pub struct Configured {
    pub mtu: u32,
    pub rss: bool,
    pub tx_offloads: Vec<&'static str>,
    pub rx_offloads: Vec<&'static str>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Link {
    pub up: bool,
    pub speed_mbps: u32,
    pub full_duplex: bool,
}

/// The port's basic counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct PortStats {
    pub ipackets: u64,
    pub opackets: u64,
    pub ibytes: u64,
    pub obytes: u64,
    pub imissed: u64,
    pub ierrors: u64,
    pub oerrors: u64,
    pub rx_nombuf: u64,
}

impl PortStats {
    /// Counter-by-counter sum (several ports' figures as one).
    pub fn add(&mut self, o: &PortStats) {
        self.ipackets += o.ipackets;
        self.opackets += o.opackets;
        self.ibytes += o.ibytes;
        self.obytes += o.obytes;
        self.imissed += o.imissed;
        self.ierrors += o.ierrors;
        self.oerrors += o.oerrors;
        self.rx_nombuf += o.rx_nombuf;
    }

    /// Several ports' figures summed.
    pub fn total<'a>(all: impl IntoIterator<Item = &'a PortStats>) -> PortStats {
        let mut t = PortStats::default();
        for p in all {
            t.add(p);
        }
        t
    }

    /// Counter-by-counter difference since `earlier`.
    pub fn since(&self, earlier: &PortStats) -> PortStats {
        PortStats {
            ipackets: self.ipackets.wrapping_sub(earlier.ipackets),
            opackets: self.opackets.wrapping_sub(earlier.opackets),
            ibytes: self.ibytes.wrapping_sub(earlier.ibytes),
            obytes: self.obytes.wrapping_sub(earlier.obytes),
            imissed: self.imissed.wrapping_sub(earlier.imissed),
            ierrors: self.ierrors.wrapping_sub(earlier.ierrors),
            oerrors: self.oerrors.wrapping_sub(earlier.oerrors),
            rx_nombuf: self.rx_nombuf.wrapping_sub(earlier.rx_nombuf),
        }
    }
}

/// Extended-stat ids resolved once by name, for cheap repeated reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XstatIds {
    pub names: Vec<String>,
    pub ids: Vec<u64>,
}

/// An open DPDK port. Stopped and closed when dropped.
pub struct Port {
    id: u16,
    info: DeviceInfo,
    configured: Option<Configured>,
    started: bool,
}

/// The receive side of one queue. One per queue exists, so no two lcores
/// can poll the same queue.
pub struct RxQueue {
    port: u16,
    queue: u16,
    /// The device may unmap this queue's ring under a burst (memif):
    /// bursts run guarded, and a fault ends them instead of the process.
    guarded: bool,
    faulted: bool,
}

/// The send side of one queue; one per queue exists.
pub struct TxQueue {
    port: u16,
    queue: u16,
    guarded: bool,
    faulted: bool,
}

impl RxQueue {
    pub fn id(&self) -> u16 {
        self.queue
    }

    /// Receives up to `bufs.len()` packets; returns how many. On a guarded
    /// queue whose ring vanished under the burst, returns 0 and from then
    /// on [`RxQueue::faulted`] is true: stop polling it.
    #[inline(always)]
    pub fn rx_burst(&mut self, bufs: &mut [*mut Mbuf]) -> usize {
        if self.guarded {
            let mut faulted = 0;
            // SAFETY: as below; a fault inside the burst returns here with `faulted` set.
            let n = unsafe { ffi::bd_rx_burst_guarded(self.port, self.queue, bufs.as_mut_ptr(), bufs.len() as u16, &mut faulted) };
            self.faulted |= faulted != 0;
            return usize::from(n);
        }
        // SAFETY: the queue is set up and started, and only this handle polls it.
        usize::from(unsafe { ffi::bd_rx_burst(self.port, self.queue, bufs.as_mut_ptr(), bufs.len() as u16) })
    }

    /// A burst faulted: the device unmapped the ring (its peer left).
    pub fn faulted(&self) -> bool {
        self.faulted
    }

    /// Polling may go on: the ring is mapped again (the peer is back).
    pub fn rearm(&mut self) {
        self.faulted = false;
    }
}

impl TxQueue {
    pub fn id(&self) -> u16 {
        self.queue
    }

    /// Offers `pkts` to the device; returns how many it took. The ones not
    /// taken stay the caller's. On a guarded queue whose ring vanished under
    /// the burst, every frame counts as taken (none may be freed: the device
    /// may hold some) and from then on [`TxQueue::faulted`] is true.
    #[inline(always)]
    pub fn tx_burst(&mut self, pkts: &mut [*mut Mbuf]) -> usize {
        if self.guarded {
            let mut faulted = 0;
            // SAFETY: as below; a fault inside the burst returns here with `faulted` set.
            let n = unsafe { ffi::bd_tx_burst_guarded(self.port, self.queue, pkts.as_mut_ptr(), pkts.len() as u16, &mut faulted) };
            self.faulted |= faulted != 0;
            return usize::from(n);
        }
        // SAFETY: the queue is set up and started, and only this handle sends on it.
        usize::from(unsafe { ffi::bd_tx_burst(self.port, self.queue, pkts.as_mut_ptr(), pkts.len() as u16) })
    }

    /// A burst faulted: the device unmapped the ring (its peer left).
    pub fn faulted(&self) -> bool {
        self.faulted
    }

    /// Polling may go on: the ring is mapped again (the peer is back).
    pub fn rearm(&mut self) {
        self.faulted = false;
    }
}

/// Drivers that unmap a queue's ring on another thread while an lcore may
/// be inside a burst on it, and connect or disconnect their peer on the
/// EAL interrupt thread.
fn peer_managed(driver: &str) -> bool {
    driver == "net_memif"
}

/// Runs `f` on the EAL interrupt thread (where memif handles its peer) and
/// waits for it; after `timeout` it runs here instead.
fn on_interrupt_thread<F: FnOnce()>(f: F, timeout: Duration) {
    unsafe extern "C" fn call<F: FnOnce()>(arg: *mut std::ffi::c_void) {
        // SAFETY: arg is the Option<F> below, alive until bd_run_on_intr_thread returns.
        let slot = unsafe { &mut *(arg as *mut Option<F>) };
        if let Some(f) = slot.take() {
            // A panic must not unwind into C.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        }
    }
    let mut slot = Some(f);
    let ms = timeout.as_millis().min(u128::from(u32::MAX)) as u32;
    // SAFETY: the callback runs exactly once, on one thread, before this returns.
    unsafe { ffi::bd_run_on_intr_thread(Some(call::<F>), &mut slot as *mut Option<F> as *mut std::ffi::c_void, ms) };
}

/// Whether a peer-managed (memif) port was configured in this process.
static PEER_MANAGED_USED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn peer_managed_used() -> bool {
    PEER_MANAGED_USED.load(std::sync::atomic::Ordering::Relaxed)
}

/// How long a memif port operation waits for the interrupt thread.
const INTR_THREAD_WAIT: Duration = Duration::from_secs(5);

fn c_string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn port_name(id: u16) -> String {
    let mut buf = [0 as c_char; ffi::RTE_ETH_NAME_MAX_LEN as usize];
    let rc = unsafe { ffi::rte_eth_dev_get_name_by_port(id, buf.as_mut_ptr()) };
    if rc == 0 {
        c_string(buf.as_ptr())
    } else {
        String::new()
    }
}

/// Reads extended stats by id in one call (on ENA: one admin command).
/// Takes a port id, so a polling thread needs no `Port` handle.
pub fn xstats_by_id(port: u16, ids: &[u64]) -> Result<Vec<u64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut values = vec![0u64; ids.len()];
    // SAFETY: both arrays hold ids.len() elements.
    let rc = unsafe { ffi::rte_eth_xstats_get_by_id(port, ids.as_ptr(), values.as_mut_ptr(), ids.len() as u32) };
    if rc < 0 || rc as usize != ids.len() {
        return Err(Error::call("rte_eth_xstats_get_by_id", rc.min(0)));
    }
    Ok(values)
}

/// Every extended stat of `port`, indexed by id: `rte_eth_xstats_get`,
/// for PMDs whose by-id read is wrong for some counters (limits::ReadPath).
pub fn xstats_all(port: u16) -> Result<Vec<u64>> {
    // SAFETY: a NULL array asks for the count.
    let n = unsafe { ffi::rte_eth_xstats_get(port, std::ptr::null_mut(), 0) };
    if n < 0 {
        return Err(Error::call("rte_eth_xstats_get", n));
    }
    let mut xs = vec![ffi::rte_eth_xstat::default(); n as usize + 8];
    // SAFETY: xs holds xs.len() entries.
    let got = unsafe { ffi::rte_eth_xstats_get(port, xs.as_mut_ptr(), xs.len() as u32) };
    if got < 0 || got as usize > xs.len() {
        return Err(Error::call("rte_eth_xstats_get", got.min(0)));
    }
    let mut values = vec![0u64; got as usize];
    for x in &xs[..got as usize] {
        if let Some(v) = values.get_mut(x.id as usize) {
            *v = x.value;
        }
    }
    Ok(values)
}

/// Every port DPDK sees: (id, name).
pub fn available_ports() -> Vec<(u16, String)> {
    (0..ffi::RTE_MAX_ETHPORTS as u16)
        .filter(|&id| unsafe { ffi::rte_eth_dev_is_valid_port(id) } == 1)
        .map(|id| (id, port_name(id)))
        .collect()
}

/// Every port DPDK sees, with its driver's name: (id, name, driver).
pub fn available_ports_with_driver() -> Vec<(u16, String, String)> {
    available_ports()
        .into_iter()
        .map(|(id, name)| {
            let mut raw = ffi::rte_eth_dev_info::default();
            // SAFETY: id is a valid port; raw is a plain struct the call fills.
            let rc = unsafe { ffi::rte_eth_dev_info_get(id, &mut raw) };
            let driver = if rc == 0 { c_string(raw.driver_name) } else { String::new() };
            (id, name, driver)
        })
        .collect()
}

fn lookup(name: &str) -> Option<u16> {
    let c = CString::new(name).ok()?;
    let mut id = 0u16;
    (unsafe { ffi::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) } == 0).then_some(id)
}

/// Finds a port by id ("0"), PCI address ("0000:00:05.0" or "00:05.0") or
/// device name ("net_memif0").
fn resolve(spec: &str) -> Option<u16> {
    if let Ok(id) = spec.parse::<u16>() {
        return (unsafe { ffi::rte_eth_dev_is_valid_port(id) } == 1).then_some(id);
    }
    lookup(spec).or_else(|| lookup(&format!("0000:{spec}")))
}

/// Ports with a live `Port` handle: one handle per port, so two owners can
/// never configure or poll the same device.
static OPEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

impl Port {
    /// Opens the port `spec` names and reads its device info. Dropping the
    /// handle stops and closes the device (a closed virtual device is gone).
    pub fn open(spec: &str) -> Result<Port> {
        let id = resolve(spec).ok_or_else(|| Error::NoSuchPort { spec: spec.to_owned(), available: available_ports() })?;
        {
            let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
            if open.contains(&id) {
                return Err(Error::AlreadyOpen { port: id });
            }
            open.push(id);
        }
        let mut raw = ffi::rte_eth_dev_info::default();
        let rc = unsafe { ffi::rte_eth_dev_info_get(id, &mut raw) };
        if rc != 0 {
            return Err(Error::call("rte_eth_dev_info_get", rc));
        }
        let info = DeviceInfo {
            name: port_name(id),
            driver: c_string(raw.driver_name),
            socket: unsafe { ffi::rte_eth_dev_socket_id(id) },
            max_rx_queues: raw.max_rx_queues,
            max_tx_queues: raw.max_tx_queues,
            max_rx_pktlen: raw.max_rx_pktlen,
            min_mtu: raw.min_mtu,
            max_mtu: raw.max_mtu,
            rx_desc: DescLimits::from_ffi(&raw.rx_desc_lim),
            tx_desc: DescLimits::from_ffi(&raw.tx_desc_lim),
            rss_offloads: raw.flow_type_rss_offloads,
            tx_offload_capa: raw.tx_offload_capa,
            rx_offload_capa: raw.rx_offload_capa,
            reta_size: raw.reta_size,
        };
        Ok(Port { id, info, configured: None, started: false })
    }

    pub fn id(&self) -> u16 {
        self.id
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The NUMA socket to allocate this port's memory on (0 when unknown).
    pub fn socket(&self) -> i32 {
        self.info.socket.max(0)
    }

    fn limit(&self, what: LimitKind, asked: u64, limit: String) -> Error {
        Error::Limit { port: self.id, what, asked, limit }
    }

    /// Checks `cfg` against the device's limits without touching the device.
    pub fn check(&self, cfg: &PortConfig) -> Result<()> {
        let i = &self.info;
        if cfg.rx_queues > i.max_rx_queues {
            return Err(self.limit(
                LimitKind::RxQueues,
                cfg.rx_queues.into(),
                format!("{} ({}) has at most {}", i.name, i.driver, i.max_rx_queues),
            ));
        }
        if cfg.tx_queues > i.max_tx_queues {
            return Err(self.limit(
                LimitKind::TxQueues,
                cfg.tx_queues.into(),
                format!("{} ({}) has at most {}", i.name, i.driver, i.max_tx_queues),
            ));
        }
        if cfg.max_frame > i.max_frame() {
            return Err(self.limit(
                LimitKind::FrameSize,
                cfg.max_frame.into(),
                format!("{} ({}) takes frames up to {} bytes", i.name, i.driver, i.max_frame()),
            ));
        }
        if cfg.rx_queues > 0 && !i.rx_desc.accepts(cfg.rx_ring) {
            return Err(self.limit(LimitKind::RxRing, cfg.rx_ring.into(), i.rx_desc.to_string()));
        }
        if cfg.tx_queues > 0 && !i.tx_desc.accepts(cfg.tx_ring) {
            return Err(self.limit(LimitKind::TxRing, cfg.tx_ring.into(), i.tx_desc.to_string()));
        }
        Ok(())
    }

    /// Configures queues, RSS, MTU and TX offloads, and sets up every queue.
    /// RX queue `q` takes its mbufs from `rx_pools[q]`.
    pub fn configure(&mut self, cfg: &PortConfig, rx_pools: &[&Mempool]) -> Result<(Vec<RxQueue>, Vec<TxQueue>)> {
        self.check(cfg)?;
        assert_eq!(rx_pools.len(), usize::from(cfg.rx_queues), "one pool per RX queue");
        let i = self.info.clone();
        let mut conf = ffi::rte_eth_conf::default();
        let mut done = Configured::default();

        // RSS spreads flows over RX queues; devices without it (memif, null)
        // pair queues one to one instead.
        let (rss_ip, rss_udp, rss_tcp) = unsafe { (ffi::bd_rss_ip, ffi::bd_rss_udp, ffi::bd_rss_tcp) };
        let rss_hf = (rss_ip | rss_udp | rss_tcp) & i.rss_offloads;
        if cfg.rx_queues > 1 && rss_hf != 0 {
            conf.rxmode.mq_mode = ffi::RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
            done.rss = true;
        }

        // Leave the MTU at the usual 1500 unless bigger frames need more.
        let mtu = i.mtu_for_frame(cfg.max_frame).max(1500).min(u32::from(i.max_mtu)).max(u32::from(i.min_mtu));
        conf.rxmode.mtu = mtu;
        done.mtu = mtu;

        let fast_free = unsafe { ffi::bd_tx_offload_mbuf_fast_free };
        if cfg.tx_fast_free && i.tx_offload_capa & fast_free != 0 {
            conf.txmode.offloads |= fast_free;
            done.tx_offloads.push("MBUF_FAST_FREE");
        }
        if cfg.rx_timestamp {
            if !i.offers_rx_timestamp() {
                return Err(Error::Other(format!("port {}: {} ({}) offers no Rx timestamp offload", self.id, i.name, i.driver)));
            }
            // SAFETY: a constant the shim exports.
            conf.rxmode.offloads |= unsafe { ffi::bd_rx_offload_timestamp };
            done.rx_offloads.push("TIMESTAMP");
        }

        let rc = unsafe { ffi::rte_eth_dev_configure(self.id, cfg.rx_queues, cfg.tx_queues, &conf) };
        if rc != 0 {
            return Err(Error::call("rte_eth_dev_configure", rc));
        }
        let socket = self.socket() as u32;
        let guarded = peer_managed(&i.driver);
        if guarded {
            PEER_MANAGED_USED.store(true, std::sync::atomic::Ordering::Relaxed);
            // SAFETY: installs a process-wide handler once; see the shim.
            unsafe { ffi::bd_fault_guard_install() };
        }
        let mut rxqs = Vec::new();
        for (q, pool) in rx_pools.iter().enumerate() {
            let rc = unsafe { ffi::rte_eth_rx_queue_setup(self.id, q as u16, cfg.rx_ring, socket, std::ptr::null(), pool.as_ptr()) };
            if rc != 0 {
                return Err(Error::call("rte_eth_rx_queue_setup", rc));
            }
            rxqs.push(RxQueue { port: self.id, queue: q as u16, guarded, faulted: false });
        }
        let mut raw = ffi::rte_eth_dev_info::default();
        unsafe { ffi::rte_eth_dev_info_get(self.id, &mut raw) };
        let mut txconf = raw.default_txconf;
        txconf.offloads = conf.txmode.offloads;
        let mut txqs = Vec::new();
        for q in 0..cfg.tx_queues {
            let rc = unsafe { ffi::rte_eth_tx_queue_setup(self.id, q, cfg.tx_ring, socket, &txconf) };
            if rc != 0 {
                return Err(Error::call("rte_eth_tx_queue_setup", rc));
            }
            txqs.push(TxQueue { port: self.id, queue: q, guarded, faulted: false });
        }
        self.configured = Some(done);
        Ok((rxqs, txqs))
    }

    /// What the last `configure` set.
    pub fn configured(&self) -> Option<&Configured> {
        self.configured.as_ref()
    }

    pub fn start(&mut self) -> Result<()> {
        let id = self.id;
        let mut rc = 0;
        if peer_managed(&self.info.driver) {
            on_interrupt_thread(|| rc = unsafe { ffi::rte_eth_dev_start(id) }, INTR_THREAD_WAIT);
        } else {
            rc = unsafe { ffi::rte_eth_dev_start(id) };
        }
        if rc != 0 {
            return Err(Error::call("rte_eth_dev_start", rc));
        }
        self.started = true;
        Ok(())
    }

    pub fn stop(&mut self) {
        if self.started {
            let id = self.id;
            if peer_managed(&self.info.driver) {
                on_interrupt_thread(
                    || {
                        unsafe { ffi::rte_eth_dev_stop(id) };
                    },
                    INTR_THREAD_WAIT,
                );
            } else {
                unsafe { ffi::rte_eth_dev_stop(id) };
            }
            self.started = false;
        }
    }

    /// Whether the device can unmap a queue's ring under a burst when its
    /// peer leaves (memif): its lanes must stop while the link is down.
    pub fn peer_managed(&self) -> bool {
        peer_managed(&self.info.driver)
    }

    /// Turns promiscuous mode on; false where the device has none (ENA).
    pub fn promiscuous(&mut self) -> bool {
        unsafe { ffi::rte_eth_promiscuous_enable(self.id) == 0 }
    }

    pub fn link(&self) -> Link {
        let mut l = ffi::bd_link::default();
        // SAFETY: a valid port id and an out-struct the shim fills.
        unsafe { ffi::bd_link_get(self.id, &mut l) };
        Link { up: l.up == 1, speed_mbps: l.speed_mbps, full_duplex: l.full_duplex == 1 }
    }

    /// Waits up to `timeout` for the link to come up.
    pub fn wait_link_up(&self, timeout: Duration, give_up: impl Fn() -> bool) -> Option<Link> {
        let deadline = Instant::now() + timeout;
        loop {
            let l = self.link();
            if l.up {
                return Some(l);
            }
            if Instant::now() >= deadline || give_up() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stats(&self) -> Result<PortStats> {
        let mut s = ffi::rte_eth_stats::default();
        let rc = unsafe { ffi::rte_eth_stats_get(self.id, &mut s) };
        if rc != 0 {
            return Err(Error::call("rte_eth_stats_get", rc));
        }
        Ok(PortStats {
            ipackets: s.ipackets,
            opackets: s.opackets,
            ibytes: s.ibytes,
            obytes: s.obytes,
            imissed: s.imissed,
            ierrors: s.ierrors,
            oerrors: s.oerrors,
            rx_nombuf: s.rx_nombuf,
        })
    }

    /// Names of every extended stat, in id order (names can repeat).
    pub fn xstat_names(&self) -> Result<Vec<String>> {
        let n = unsafe { ffi::rte_eth_xstats_get_names(self.id, std::ptr::null_mut(), 0) };
        if n < 0 {
            return Err(Error::call("rte_eth_xstats_get_names", n));
        }
        let mut names = vec![ffi::rte_eth_xstat_name::default(); n as usize];
        let got = unsafe { ffi::rte_eth_xstats_get_names(self.id, names.as_mut_ptr(), n as u32) };
        if got < 0 {
            return Err(Error::call("rte_eth_xstats_get_names", got));
        }
        Ok(names.iter().take(got as usize).map(|x| c_string(x.name.as_ptr())).collect())
    }

    /// Resolves stat names to ids once; a name the device lacks is an error naming it.
    pub fn xstat_ids(&self, names: &[&str]) -> Result<XstatIds> {
        let mut ids = Vec::with_capacity(names.len());
        for name in names {
            let c = CString::new(*name).map_err(|_| Error::Other("xstat name contains NUL".into()))?;
            let mut id = 0u64;
            let rc = unsafe { ffi::rte_eth_xstats_get_id_by_name(self.id, c.as_ptr(), &mut id) };
            if rc != 0 {
                return Err(Error::Other(format!("port {} ({}) has no extended stat {name:?}", self.id, self.info.driver)));
            }
            ids.push(id);
        }
        Ok(XstatIds { names: names.iter().map(|s| s.to_string()).collect(), ids })
    }

    /// Reads the stats `ids` names, in one call to the device.
    pub fn xstats(&self, ids: &XstatIds) -> Result<Vec<u64>> {
        xstats_by_id(self.id, &ids.ids)
    }

    pub fn mac(&self) -> Result<[u8; 6]> {
        let mut a = ffi::rte_ether_addr::default();
        let rc = unsafe { ffi::rte_eth_macaddr_get(self.id, &mut a) };
        if rc != 0 {
            return Err(Error::call("rte_eth_macaddr_get", rc));
        }
        Ok(a.addr_bytes)
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        self.stop();
        // memif's close frees its listening socket without taking it off
        // the interrupt thread's list (memif_socket_remove_device): the next
        // event on that thread (a peer leaving just then) reads freed memory.
        // Ports close only when the process ends: a memif port is stopped
        // (its peer disconnected) and left for the exit to clean up; its
        // socket file stays, and the next start removes it when stale.
        if !peer_managed(&self.info.driver) {
            unsafe { ffi::rte_eth_dev_close(self.id) };
        }
        OPEN.lock().unwrap_or_else(|e| e.into_inner()).retain(|&p| p != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_follows_ethdev() {
        assert_eq!(frame_overhead(u32::MAX, u16::MAX), 18);
        assert_eq!(frame_overhead(9018, 9000), 18);
        assert_eq!(frame_overhead(9026, 9000), 26);
        assert_eq!(frame_overhead(1500, 9000), 18);
    }

    #[test]
    fn ring_limits() {
        let l = DescLimits { min: 64, max: 4096, align: 32 };
        assert!(l.accepts(1024));
        assert!(!l.accepts(32));
        assert!(!l.accepts(8192));
        assert!(!l.accepts(1000));
    }
}
