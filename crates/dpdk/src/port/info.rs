//! What a device says it can do ([`DeviceInfo`], ring limits), how to set
//! a port up ([`PortConfig`]) and what that did ([`Configured`]), and its link.

use dpdk_ffi as ffi;

/// Ring size limits for one direction, as the device reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescLimits {
    pub min: u16,
    pub max: u16,
    pub align: u16,
}

impl DescLimits {
    pub(super) fn from_ffi(l: &ffi::rte_eth_desc_lim) -> DescLimits {
        DescLimits { min: l.nb_min, max: l.nb_max, align: l.nb_align.max(1) }
    }

    pub(super) fn accepts(&self, n: u16) -> bool {
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
    /// The kernel interface a kernel-backed device sits on (af_packet's
    /// `iface=`), 0 when none.
    pub if_index: u32,
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
    /// The kernel interface this port sits on, by index: a port on
    /// net_af_xdp or net_af_packet, whose PMD names its interface and
    /// passes none of that interface's own counters on (other PMDs that
    /// report an if_index, mlx5's, count their own). None for the rest.
    pub fn kernel_interface(&self) -> Option<u32> {
        let kernel_backed = crate::af_xdp::is_af_xdp(&self.driver) || self.driver == "net_af_packet";
        (kernel_backed && self.if_index != 0).then_some(self.if_index)
    }

    /// Whether the device stamps received frames (RTE_ETH_RX_OFFLOAD_TIMESTAMP).
    pub fn offers_rx_timestamp(&self) -> bool {
        // SAFETY: a constant the shim exports.
        self.rx_offload_capa & unsafe { ffi::bd_rx_offload_timestamp } != 0
    }

    /// The largest frame, FCS included, this port takes: bounded by its
    /// largest receive length, its largest MTU, one mbuf segment, and on
    /// net_af_xdp one UMEM chunk (crate::af_xdp::MAX_FRAME).
    pub fn max_frame(&self) -> u32 {
        let by_mtu = u32::from(self.max_mtu) + frame_overhead(self.max_rx_pktlen, self.max_mtu);
        let by_mbuf = u32::from(u16::MAX) - u32::from(crate::MbufLayout::get().headroom) + 4;
        let by_driver = if crate::af_xdp::is_af_xdp(&self.driver) { crate::af_xdp::MAX_FRAME } else { u32::MAX };
        self.max_rx_pktlen.min(by_mtu).min(by_mbuf).min(by_driver)
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
