//! drop's summary as printed at the end of a run.

use crate::summary::Summary;

pub(crate) fn print_summary(s: &Summary) {
    blastdrop::say!("--- drop summary (receiver-side: frames that arrived) ---");
    blastdrop::say!(
        "received {} frames, {} bytes in {:.3} s (first to last arrival): {:.3} Mpps, {:.3} Gb/s of frames, {:.3} Gb/s on the wire (+20 B/frame)",
        s.received.packets, s.received.bytes, s.received.seconds, s.received.mpps, s.received.frame_gbps, s.received.wire_gbps
    );
    blastdrop::say!(
        "probe: {} streams, lost about {} (gap estimate: no sender counts here) reordered {} duplicates {} late {}  no-probe frames {}  untracked {}{}",
        s.streams.len(),
        s.probe.lost,
        s.probe.reordered,
        s.probe.duplicates,
        s.probe.late,
        s.no_probe,
        s.untracked,
        if s.probe.restarts > 0 { format!("  ({} stream starts of a new sender run)", s.probe.restarts) } else { String::new() }
    );
    if let Some(port) = &s.port {
        blastdrop::say!(
            "port: ipackets {}{} imissed {}{}{} rx_nombuf {} ierrors {}  {}{}",
            port.ipackets,
            if s.port_counters_reset { " (device reset its counters before the end; last live read)" } else { "" },
            port.imissed,
            // Only an af_packet port on a DPDK that leaves them out of imissed has them.
            if port.socket_drops > 0 { format!(" socket_drops {}", port.socket_drops) } else { String::new() },
            // Only a port on a kernel interface (af_packet, AF_XDP) has them.
            if port.interface_drops > 0 { format!(" interface_drops {}", port.interface_drops) } else { String::new() },
            port.rx_nombuf,
            port.ierrors,
            s.busy.map_or_else(String::new, |b| b.to_string()),
            if s.interrupted { "  (interrupted)" } else { "" }
        );
    }
    blastdrop::say!("limit: {} [receiver-side, from drop's own counters]", s.limit);
    for l in &s.verdict.limits {
        blastdrop::say!("  {}: {}", l.kind.as_str(), l.evidence);
    }
    if s.faults > 0 {
        blastdrop::say!("faults: {} burst(s) caught when a memif peer left under them (their frames are not counted)", s.faults);
    }
    print_arrivals(s);
    if !s.sizes.is_empty() {
        let by_size: Vec<String> = s.sizes.iter().map(|x| format!("{} B: {}", x.size, x.frames)).collect();
        let other = if s.sizes_other > 0 { format!(", other sizes: {}", s.sizes_other) } else { String::new() };
        blastdrop::say!("probe frames by size (FCS incl.): {}{other}", by_size.join(", "));
    }
    print_rows(s);
}

/// The arrivals' burstiness and, with --one-way, the one-way latency.
fn print_arrivals(s: &Summary) {
    let a = &s.arrivals;
    let per_interval = match (a.interval_us, a.peak_per_interval, a.mean_per_interval, a.peak_to_mean) {
        (Some(us), Some(peak), Some(mean), Some(r)) => {
            format!("; per {us} us: peak {peak} frames, mean {mean:.1}, peak-to-mean {r:.1}")
        }
        _ => String::new(),
    };
    blastdrop::say!(
        "arrivals: {} full polls (frames waiting beyond one poll), backlog up to {} frames{per_interval}{}",
        a.full_polls,
        a.max_backlog_frames,
        if s.reflect_drops > 0 { format!("; reflect: {} frames the TX queue refused", s.reflect_drops) } else { String::new() }
    );
    if let Some(o) = &s.one_way {
        blastdrop::say!(
            "one way (by both hosts' CLOCK_REALTIME, {}; this host's clock {}): {}{}{}{}",
            o.arrival,
            clock_sync(o.sync),
            o.latency.line(),
            if o.negative > 0 {
                format!("; {} probes arrived before they were sent: the clocks disagree", o.negative)
            } else {
                String::new()
            },
            if o.untimed > 0 { format!("; {} probes untimed (no usable NIC timestamp)", o.untimed) } else { String::new() },
            o.fallback.as_ref().map(|f| format!("; not the NIC's clock: {f}")).unwrap_or_default()
        );
    }
}

/// Each port's and each queue's share.
fn print_rows(s: &Summary) {
    for p in &s.ports {
        blastdrop::say!(
            "  port {} ({}): {:.3} Mpps, {} frames, lost {}; device: ipackets {} imissed {} rx_nombuf {} ierrors {}",
            p.port,
            p.name,
            p.received.mpps,
            p.received.packets,
            p.probe.lost,
            p.device.ipackets,
            p.device.imissed,
            p.device.rx_nombuf,
            p.device.ierrors
        );
    }
    for q in &s.queues {
        blastdrop::say!(
            "  q{} (port {}, lcore {}): {:.3} Mpps, {} frames, {}, lost {} reordered {} dup {}",
            q.queue,
            q.port,
            q.lcore,
            q.received.mpps,
            q.received.packets,
            q.busy.map_or_else(|| "CPU time per queue not apart (sockets)".to_string(), |b| b.to_string()),
            q.probe.lost,
            q.probe.reordered,
            q.probe.duplicates
        );
    }
}

/// This host's clock, as a one-way line says it (a port's or the sockets').
pub(crate) fn clock_sync(sync: Option<records::environment::ClockSync>) -> String {
    match sync {
        Some(c) if c.synchronized => format!("synchronised, max error {} us", c.max_error_us),
        Some(c) => format!("NOT synchronised (max error {} us): the figures are only as good as the clocks", c.max_error_us),
        None => "sync status unknown".to_string(),
    }
}
