//! Figures and their labels: rates from counts, a lane's cost per packet,
//! and the text of live lines. Every rate says which end measured it.

use serde::Serialize;

pub use ladder::Rates;

/// A lane's busy time per packet, in the core's cycles and in nanoseconds
/// (0 when nothing moved). Serialised flat into the record that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerPacket {
    /// Busy core cycles per packet; null when the core's clock is unknown
    /// (environment.clock says how the lanes' counter ticks became cycles).
    pub cycles_per_packet: Option<f64>,
    /// Busy nanoseconds per packet.
    pub ns_per_packet: f64,
}

impl PerPacket {
    /// Per packet for a lane busy `ticks` of the lanes' counter over `packets`.
    pub fn of(ticks: u64, packets: u64) -> PerPacket {
        PerPacket::with(crate::clock::core(), ticks, packets)
    }

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

/// The receiver's arrival view in one line.
pub fn arrivals_text(a: &control::WindowArrivals) -> String {
    let mut s = format!("{} full polls, backlog up to {} frames", a.full_polls, a.max_backlog_frames);
    if let (Some(us), Some(peak), Some(mean), Some(ratio)) = (a.interval_us, a.peak_per_interval, a.mean_per_interval, a.peak_to_mean) {
        s += &format!("; per {us} us on a queue: peak {peak}, mean {mean:.1}, peak-to-mean {ratio:.2}");
    }
    if let Some(q) = &a.q_burst {
        s += &format!(
            "; Q_burst = ({:.3} - {:.3} Mpps) x {:.0} us = {:.0} frames (queue {})",
            q.lambda_peak_mpps, q.mu_mpps, q.t_b_us, q.frames, q.queue
        );
    }
    s
}

/// "12.345" with a fixed width, for aligned live lines.
pub fn mpps(v: f64) -> String {
    format!("{v:7.3}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_packet_of_nothing_is_zero_and_unknown_cycles_say_so() {
        let tsc = topology::CoreClock::detect(2_000_000_000, topology::TimerKind::Tsc, "/nonexistent".as_ref(), "/nonexistent".as_ref(), 0);
        assert_eq!(PerPacket::with(&tsc, 100, 0), PerPacket { cycles_per_packet: Some(0.0), ns_per_packet: 0.0 });
        let p = PerPacket::with(&tsc, 100, 4);
        assert_eq!(p, PerPacket { cycles_per_packet: Some(25.0), ns_per_packet: 12.5 });
        assert_eq!(p.to_string(), "25.0 cycles/pkt");
        let timer = topology::CoreClock::detect(
            1_000_000_000,
            topology::TimerKind::ArmGenericTimer,
            "/nonexistent".as_ref(),
            "/nonexistent".as_ref(),
            0,
        );
        let p = PerPacket::with(&timer, 100, 4);
        assert_eq!(p.cycles_per_packet, None);
        assert_eq!(p.to_string(), "cycles/pkt unknown (25.0 ns/pkt)");
        let json = serde_json::to_value(p).unwrap();
        assert!(json["cycles_per_packet"].is_null() && json["ns_per_packet"] == 25.0, "{json}");
    }
}
