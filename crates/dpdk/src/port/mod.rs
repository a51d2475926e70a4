//! An open DPDK port: opened by id, PCI address or name, checked against
//! the device's limits, configured with one mempool per RX queue, started
//! and stopped (memif's on the EAL interrupt thread), and closed when the
//! handle drops. Its queues are handed out once each ([`queue`]); its
//! counters are read in [`stats`].

use std::time::{Duration, Instant};

use dpdk_ffi as ffi;

use crate::deadline::{guarded, wedged, Sendable};
use crate::{Error, LimitKind, Mempool, Result};

mod devices;
mod info;
mod kernel;
mod peer;
mod queue;
mod stats;

pub use devices::{available_ports, available_ports_with_driver};
pub use info::{Configured, DescLimits, DeviceInfo, Link, PortConfig};
pub use kernel::TxDrain;
pub use queue::{Queue, Rx, RxQueue, Tx, TxQueue};
pub use stats::{xstats_all, xstats_by_id, PortStats, XstatIds};

use devices::{c_string, port_name, resolve};
pub(crate) use peer::peer_managed_used;
use peer::{on_interrupt_thread, peer_managed, INTR_THREAD_WAIT, PEER_MANAGED_USED};

/// An open DPDK port. Stopped and closed when dropped.
pub struct Port {
    id: u16,
    info: DeviceInfo,
    configured: Option<Configured>,
    started: bool,
    /// af_packet: the kernel's RX ring drops read so far (each read of a
    /// socket's PACKET_STATISTICS resets it, so they are summed here).
    socket_drops: std::sync::atomic::AtomicU64,
    /// net_af_xdp: the XDP sockets' full-ring drops, on the first
    /// net_af_xdp port only (crate::af_xdp::RingFullTally says why).
    xdp_drops: Option<crate::af_xdp::RingFullTally>,
    /// af_packet and AF_XDP: the kernel interface's receive drops at the
    /// last good read (they are the interface's since it came up), and
    /// whether the last read failed (said once per run of failures).
    interface_drops: std::sync::atomic::AtomicU64,
    interface_unread: std::sync::atomic::AtomicBool,
}

/// The device's own description of itself.
fn dev_info(id: u16) -> Result<ffi::rte_eth_dev_info> {
    let mut raw = ffi::rte_eth_dev_info::default();
    // SAFETY: id names a port DPDK knows; raw is a plain struct the call fills.
    let rc = unsafe { ffi::rte_eth_dev_info_get(id, &mut raw) };
    if rc != 0 {
        return Err(Error::call("rte_eth_dev_info_get", rc));
    }
    Ok(raw)
}

/// Ports with a live `Port` handle: one handle per port, so two owners can
/// never configure or poll the same device.
static OPEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

impl Port {
    /// Opens the port `spec` names and reads its device info. Dropping the
    /// handle stops and closes the device (a closed virtual device is gone).
    pub fn open(spec: &str) -> Result<Port> {
        let (id, info) = Self::lookup(spec)?;
        // Registered only once the handle can be made, so a failed open
        // leaves the port free for the next.
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if open.contains(&id) {
            return Err(Error::AlreadyOpen { port: id });
        }
        open.push(id);
        let first_af_xdp = crate::af_xdp::is_af_xdp(&info.driver)
            && !available_ports_with_driver().iter().any(|(p, _, d)| *p < id && crate::af_xdp::is_af_xdp(d));
        let xdp_drops = first_af_xdp.then(crate::af_xdp::RingFullTally::default);
        Ok(Port {
            id,
            info,
            configured: None,
            started: false,
            socket_drops: Default::default(),
            xdp_drops,
            interface_drops: Default::default(),
            interface_unread: Default::default(),
        })
    }

    /// The device info of the port `spec` names, without opening it (a
    /// plan fitted to the device's limits before the port is opened).
    pub fn info_of(spec: &str) -> Result<DeviceInfo> {
        Self::lookup(spec).map(|(_, info)| info)
    }

    fn lookup(spec: &str) -> Result<(u16, DeviceInfo)> {
        let id = resolve(spec).ok_or_else(|| Error::NoSuchPort { spec: spec.to_owned(), available: available_ports() })?;
        let raw = dev_info(id)?;
        let info = DeviceInfo {
            name: port_name(id),
            // SAFETY: driver_name is the driver's static name (or NULL).
            driver: unsafe { c_string(raw.driver_name) },
            // SAFETY: id is a valid port (resolve checked it).
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
            if_index: raw.if_index,
        };
        Ok((id, info))
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
        if crate::af_xdp::is_af_xdp(&i.driver) && cfg.max_frame > crate::af_xdp::MAX_FRAME {
            return Err(self.limit(
                LimitKind::FrameSize,
                cfg.max_frame.into(),
                format!(
                    "{} ({}) takes frames up to {} bytes (one 4 KiB UMEM chunk per frame, no multi-buffer)",
                    i.name,
                    i.driver,
                    crate::af_xdp::MAX_FRAME
                ),
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
        let (conf, done) = self.eth_conf(cfg)?;
        let (id, nrx, ntx, sent) = (self.id, cfg.rx_queues, cfg.tx_queues, Sendable::new(conf));
        let rc = self.guard("rte_eth_dev_configure", move || {
            let conf = sent.into_inner();
            // SAFETY: a valid port this handle owns, stopped (configure is only
            // called between stop and start); conf lives in this closure.
            unsafe { ffi::rte_eth_dev_configure(id, nrx, ntx, &conf) }
        })?;
        if rc != 0 {
            return Err(Error::call("rte_eth_dev_configure", rc));
        }
        let socket = self.socket() as u32;
        let guarded = self.guard_faults()?;
        let mut rxqs = Vec::new();
        for (q, pool) in rx_pools.iter().enumerate() {
            let (ring, pool_ptr) = (cfg.rx_ring, Sendable::new(pool.as_ptr()));
            let rc = self.guard("rte_eth_rx_queue_setup", move || {
                // SAFETY: the port is configured with this many RX queues; the pool
                // outlives the queue (pools are made before and freed after ports,
                // and not freed at all once a call is given up: see deadline).
                unsafe { ffi::rte_eth_rx_queue_setup(id, q as u16, ring, socket, std::ptr::null(), pool_ptr.into_inner()) }
            })?;
            if rc != 0 && crate::af_xdp::is_af_xdp(&self.info.driver) {
                return Err(Error::Other(format!(
                    "rte_eth_rx_queue_setup failed on {} (net_af_xdp), queue {q}: {}: the PMD could not make its XDP socket; \
                     check that the interface has that queue (ethtool -l), that its MTU fits XDP without multi-buffer (3498 B on ENA), \
                     and that this runs as root (locked memory); deploy/setup.sh --af-xdp sets these up, and EAL option \
                     --log-level=pmd.net.af_xdp:debug shows the PMD's reason",
                    self.info.name,
                    crate::errno_message(rc)
                )));
            }
            if rc != 0 {
                return Err(Error::call("rte_eth_rx_queue_setup", rc));
            }
            rxqs.push(RxQueue::new(self.id, q as u16, guarded));
        }
        // The TX defaults as configured (some PMDs set them at configure).
        let mut txconf = dev_info(self.id)?.default_txconf;
        txconf.offloads = conf.txmode.offloads;
        let mut txqs = Vec::new();
        for q in 0..cfg.tx_queues {
            let (ring, sent) = (cfg.tx_ring, Sendable::new(txconf));
            let rc = self.guard("rte_eth_tx_queue_setup", move || {
                let txconf = sent.into_inner();
                // SAFETY: the port is configured with this many TX queues; txconf lives in this closure.
                unsafe { ffi::rte_eth_tx_queue_setup(id, q, ring, socket, &txconf) }
            })?;
            if rc != 0 {
                return Err(Error::call("rte_eth_tx_queue_setup", rc));
            }
            txqs.push(TxQueue::new(self.id, q, guarded));
        }
        self.configured = Some(done);
        Ok((rxqs, txqs))
    }

    /// The device configuration `cfg` asks for, within what the device
    /// offers: RSS, the MTU, TX fast free and the Rx timestamp.
    fn eth_conf(&self, cfg: &PortConfig) -> Result<(ffi::rte_eth_conf, Configured)> {
        let i = &self.info;
        let mut conf = ffi::rte_eth_conf::default();
        let mut done = Configured::default();

        // RSS spreads flows over RX queues; devices without it (memif, null)
        // pair queues one to one instead.
        // SAFETY: constants the shim exports.
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

        // SAFETY: a constant the shim exports.
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
        Ok((conf, done))
    }

    /// Whether this port's bursts are guarded (a peer-managed device, whose
    /// peer may leave mid-burst), the guard installed if they are.
    fn guard_faults(&self) -> Result<bool> {
        if !peer_managed(&self.info.driver) {
            return Ok(false);
        }
        PEER_MANAGED_USED.store(true, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: installs a process-wide handler once; see the shim.
        if unsafe { ffi::bd_fault_guard_install() } != 0 {
            // Unguarded, a peer leaving mid-burst would end the process.
            return Err(Error::Other(format!(
                "port {}: cannot install the fault guard memif's bursts need (sigaction for SIGSEGV/SIGBUS failed)",
                self.id
            )));
        }
        Ok(true)
    }

    /// What the last `configure` set.
    pub fn configured(&self) -> Option<&Configured> {
        self.configured.as_ref()
    }

    /// Starts the device (on the interrupt thread where its peer is
    /// handled there: memif).
    pub fn start(&mut self) -> Result<()> {
        let id = self.id;
        // SAFETY: a configured port this handle owns; no lane runs on it yet.
        let start = move || unsafe { ffi::rte_eth_dev_start(id) };
        let rc = self.on_its_thread("rte_eth_dev_start", start)?;
        if rc != 0 {
            return Err(Error::call("rte_eth_dev_start", rc));
        }
        self.started = true;
        Ok(())
    }

    /// Stops the device, if started. Its queue handles stay valid for the
    /// next `start` (no lane may burst on them while it is stopped).
    pub fn stop(&mut self) -> Result<()> {
        if !self.started {
            return Ok(());
        }
        // af_packet closes its sockets on stop: their last drops are read first.
        self.socket_drops();
        let id = self.id;
        // SAFETY: a started port this handle owns; the callers join its lanes first.
        let stop = move || unsafe { ffi::rte_eth_dev_stop(id) };
        let rc = self.on_its_thread("rte_eth_dev_stop", stop);
        // Stopped or not, it is not to be stopped again: a device that
        // failed to stop is in no state to be started as if it had.
        self.started = false;
        let rc = rc?;
        if rc != 0 {
            return Err(Error::call("rte_eth_dev_stop", rc));
        }
        Ok(())
    }

    /// The packet sockets of an af_packet port (none for any other driver).
    fn kernel_sockets(&self) -> Vec<std::os::fd::RawFd> {
        if self.info.driver != "net_af_packet" || !self.started {
            return Vec::new();
        }
        kernel::packet_sockets(self.info.if_index)
    }

    /// Lets what the port accepted leave before anything counts it or stops
    /// the port: on af_packet, whose `opackets` counts frames put in its TX
    /// ring, the rings are kicked until the kernel has taken and sent every
    /// frame, for at most `limit` (a qdisc that pushes back leaves frames in
    /// the ring, and stopping the port discards them). Other devices count
    /// at transmit or keep nothing back: `NotKernel`. Call with no lane
    /// bursting on the port.
    pub fn drain_tx(&self, limit: Duration) -> TxDrain {
        kernel::drain_tx(&self.kernel_sockets(), limit)
    }

    /// Frames the kernel dropped on this af_packet port's RX rings since it
    /// opened: what its sockets' PACKET_STATISTICS `tp_drops` said at each
    /// read (they reset on read), summed. 0 where the PMD reads them itself
    /// (DPDK 25.03 and later fold them into `imissed`: reading here would
    /// take them from it) and for other drivers. A socket that cannot be
    /// read adds nothing this time. Off the data path: it walks /proc.
    pub fn socket_drops(&self) -> u64 {
        use std::sync::atomic::Ordering;
        if crate::af_xdp::is_af_xdp(&self.info.driver) {
            return self.xdp_drops.as_ref().map_or(0, |t| t.read());
        }
        if !pmd_reads_socket_drops(&crate::runtime_version()) {
            if let Some(n) = kernel::take_rx_drops(&self.kernel_sockets()) {
                self.socket_drops.fetch_add(n, Ordering::Relaxed);
            }
        }
        self.socket_drops.load(Ordering::Relaxed)
    }

    /// Frames the kernel interface under an af_packet or AF_XDP port
    /// received and dropped since it came up (its `rx_dropped`,
    /// `rx_missed_errors` and `rx_fifo_errors`: on veth frames over its MTU
    /// and frames for a full XDP socket, on a NIC frames it had no buffer
    /// for); 0 for other drivers, whose PMDs count their own. A failed
    /// read gives the last good one (said in the log), so a window over it
    /// counts fewer, never more. Off the data path: it reads /proc/net/dev.
    pub fn interface_drops(&self) -> u64 {
        use std::sync::atomic::Ordering;
        let Some(index) = self.info.kernel_interface() else {
            return 0;
        };
        match nicstats::link_drops_of_index(index) {
            Ok(d) => {
                self.interface_drops.store(d.total(), Ordering::Relaxed);
                self.interface_unread.store(false, Ordering::Relaxed);
            }
            // Read every second: said when the reads start failing, not each time.
            Err(e) if !self.interface_unread.swap(true, Ordering::Relaxed) => tracing::warn!(
                "{}: the kernel interface's receive drops cannot be read ({e}): its windows count the last good read",
                self.info.name
            ),
            Err(_) => {}
        }
        self.interface_drops.load(Ordering::Relaxed)
    }

    /// Runs a start or stop, under the device deadline, where the device
    /// wants it: on the EAL interrupt thread for peer-managed devices (their
    /// connect and disconnect run there), on the deadline's helper for the rest.
    fn on_its_thread(&self, name: &'static str, call: impl FnOnce() -> i32 + Send + 'static) -> Result<i32> {
        let managed = peer_managed(&self.info.driver);
        self.guard(name, move || {
            if !managed {
                return call();
            }
            let mut rc = 0;
            on_interrupt_thread(|| rc = call(), INTR_THREAD_WAIT);
            rc
        })
    }

    /// Runs `call`, named `name`, under the device deadline (see `deadline`).
    fn guard<T: Send + 'static>(&self, name: &'static str, call: impl FnOnce() -> T + Send + 'static) -> Result<T> {
        guarded(&self.info.name, name, call)
    }

    /// Whether the device can unmap a queue's ring under a burst when its
    /// peer leaves (memif): its lanes must stop while the link is down.
    pub fn peer_managed(&self) -> bool {
        peer_managed(&self.info.driver)
    }

    /// Turns promiscuous mode on; Ok(false) where the device has none (ENA).
    pub fn promiscuous(&mut self) -> Result<bool> {
        let id = self.id;
        // SAFETY: a valid port this handle owns.
        self.guard("rte_eth_promiscuous_enable", move || unsafe { ffi::rte_eth_promiscuous_enable(id) == 0 })
    }

    /// The link as the device reports it now, without waiting; a device
    /// that cannot say (the call failed, or did not return: see
    /// [`Port::link_checked`]) reads as down.
    pub fn link(&self) -> Link {
        self.link_checked().unwrap_or_default()
    }

    /// The link now, or why the device gave no answer in time.
    pub fn link_checked(&self) -> Result<Link> {
        let id = self.id;
        let (rc, l) = self.guard("rte_eth_link_get_nowait", move || {
            let mut l = ffi::bd_link::default();
            // SAFETY: a valid port id and an out-struct the shim fills.
            let rc = unsafe { ffi::bd_link_get(id, &mut l) };
            (rc, l)
        })?;
        if rc != 0 {
            return Ok(Link::default());
        }
        Ok(Link { up: l.up == 1, speed_mbps: l.speed_mbps, full_duplex: l.full_duplex == 1 })
    }

    /// Waits up to `timeout` for the link to come up: Ok(None) when it did
    /// not (or `give_up`), an error when a read of it did not return.
    pub fn wait_link_up(&self, timeout: Duration, give_up: impl Fn() -> bool) -> Result<Option<Link>> {
        let deadline = Instant::now() + timeout;
        loop {
            let l = self.link_checked()?;
            if l.up {
                return Ok(Some(l));
            }
            if Instant::now() >= deadline || give_up() {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn mac(&self) -> Result<[u8; 6]> {
        let mut a = ffi::rte_ether_addr::default();
        // SAFETY: a valid port id and an out-struct the call fills.
        let rc = unsafe { ffi::rte_eth_macaddr_get(self.id, &mut a) };
        if rc != 0 {
            return Err(Error::call("rte_eth_macaddr_get", rc));
        }
        Ok(a.addr_bytes)
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        // A device call that did not return may still hold the device (and
        // its locks): it is left alone, for the exit to end.
        if wedged() {
            OPEN.lock().unwrap_or_else(|e| e.into_inner()).retain(|&p| p != self.id);
            return;
        }
        // Nothing is left to do about a device that will not stop or close
        // as the process lets go of it: the next open starts it afresh.
        let _ = self.stop();
        // memif's close frees its listening socket without taking it off
        // the interrupt thread's list (memif_socket_remove_device): the next
        // event on that thread (a peer leaving just then) reads freed memory.
        // Ports close only when the process ends: a memif port is stopped
        // (its peer disconnected) and left for the exit to clean up; its
        // socket file stays, and the next start removes it when stale.
        if !peer_managed(&self.info.driver) {
            let id = self.id;
            // SAFETY: a stopped port this handle owns; no queue handle is used after
            // (lanes are joined before ports drop), and the id is not reused here.
            let _ = self.guard("rte_eth_dev_close", move || unsafe { ffi::rte_eth_dev_close(id) });
        }
        OPEN.lock().unwrap_or_else(|e| e.into_inner()).retain(|&p| p != self.id);
    }
}

/// Whether this DPDK's af_packet PMD reads its sockets' drop counts into
/// `imissed` (from 25.03: "net/af_packet: provide packet drop stats"), from
/// `rte_version()` ("DPDK 25.11.0"). Unknown versions count as reading
/// them, so nothing is taken from a PMD that does.
fn pmd_reads_socket_drops(version: &str) -> bool {
    let mut nums = version.trim_start_matches(|c: char| !c.is_ascii_digit()).split(|c: char| !c.is_ascii_digit());
    match (nums.next().and_then(|y| y.parse::<u32>().ok()), nums.next().and_then(|m| m.parse::<u32>().ok())) {
        (Some(year), Some(month)) => (year, month) >= (25, 3),
        _ => true,
    }
}

#[cfg(test)]
mod version_tests {
    use super::pmd_reads_socket_drops;

    #[test]
    fn af_packet_reads_its_socket_drops_from_25_03() {
        assert!(!pmd_reads_socket_drops("DPDK 22.11.11"));
        assert!(!pmd_reads_socket_drops("DPDK 24.11.3"));
        assert!(pmd_reads_socket_drops("DPDK 25.03.0"));
        assert!(pmd_reads_socket_drops("DPDK 25.11.0"));
        assert!(pmd_reads_socket_drops("nonsense"));
    }
}
