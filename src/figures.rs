//! Figures and their labels: rates from counts, a lane's cost per packet,
//! and the text of live lines. Every rate says which end measured it.

pub use ladder::Rates;

pub use records::figures::PerPacket;

/// Per packet for a lane busy `ticks` of the lanes' counter over `packets`,
/// with this machine's core clock.
pub fn per_packet(ticks: u64, packets: u64) -> PerPacket {
    PerPacket::with(crate::clock::core(), ticks, packets)
}

/// A port's basic counters as a record keeps them.
pub fn port_stats(s: &dpdk::PortStats) -> records::figures::PortStats {
    let dpdk::PortStats { ipackets, opackets, ibytes, obytes, imissed, ierrors, oerrors, rx_nombuf, socket_drops, interface_drops } = *s;
    records::figures::PortStats { ipackets, opackets, ibytes, obytes, imissed, ierrors, oerrors, rx_nombuf, socket_drops, interface_drops }
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
