//! Figures records share: a lane's cost per packet and a port's basic
//! counters as recorded (the EAL's own type is dpdk's; blastdrop converts).

use serde::{Deserialize, Serialize};

/// A lane's busy time per packet, in the core's cycles and in nanoseconds
/// (0 when nothing moved). Serialised flat into the record that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PerPacket {
    /// Busy core cycles per packet; null when the core's clock is unknown
    /// (environment.clock says how the lanes' counter ticks became cycles).
    pub cycles_per_packet: Option<f64>,
    /// Busy nanoseconds per packet.
    pub ns_per_packet: f64,
}

impl PerPacket {
    pub fn with(clock: &topology::CoreClock, ticks: u64, packets: u64) -> PerPacket {
        PerPacket { cycles_per_packet: clock.cycles_per_packet(ticks, packets), ns_per_packet: clock.ns_per_packet(ticks, packets) }
    }
}

/// "41.5 cycles/pkt", or "cycles/pkt unknown (16.2 ns/pkt)" where the core's clock is not known.
impl std::fmt::Display for PerPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cycles_per_packet {
            Some(c) => write!(f, "{c:.1} cycles/pkt"),
            None => write!(f, "cycles/pkt unknown ({:.1} ns/pkt)", self.ns_per_packet),
        }
    }
}

/// The port's basic counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PortStats {
    pub ipackets: u64,
    pub opackets: u64,
    pub ibytes: u64,
    pub obytes: u64,
    pub imissed: u64,
    pub ierrors: u64,
    pub oerrors: u64,
    pub rx_nombuf: u64,
    /// Frames the kernel dropped because an af_packet port's RX ring was
    /// full (its sockets' PACKET_STATISTICS `tp_drops`), summed since the
    /// port opened; read here where the PMD does not fold them into
    /// `imissed` itself (DPDK before 25.03), else 0. Not in `imissed`.
    #[serde(default)]
    pub socket_drops: u64,
    /// af_packet and AF_XDP: frames the kernel interface under the port
    /// received and dropped (rx_dropped, rx_missed_errors, rx_fifo_errors:
    /// on veth frames over its MTU and frames for a full XDP socket, on a
    /// NIC frames without a buffer); 0 for other drivers and from an older
    /// drop. On AF_XDP over veth a frame for a full XDP socket is counted
    /// here and in `socket_drops` both.
    #[serde(default)]
    pub interface_drops: u64,
}
