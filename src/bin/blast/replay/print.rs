//! What a replay prints: what is about to be sent, then the summary
//! (sent, timing kept, drop's window with --peer, the limit, each queue).

use blastdrop::sender::Sender;
use capture::Timing;

use super::record::{CaptureRecord, Summary, TimingRecord, HELD_PCT, LATE_US};

/// What is about to be sent, before it is.
pub fn announce(c: &CaptureRecord, s: &capture::Schedule, queues: u16, sender: &Sender, peer: Option<&control::PeerInfo>) {
    let kinds: Vec<String> = c.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    blastdrop::say!(
        "blast: capture {} ({}): {} frames, {} flow(s), {:.6} s captured, {:.1} KB of frames, largest {} B (FCS incl.); {:.1} KB in memory; {}",
        c.file,
        c.format,
        c.frames,
        c.flows,
        c.span_seconds,
        c.frame_bytes as f64 / 1e3,
        c.largest,
        c.memory_bytes as f64 / 1e3,
        kinds.join(", ")
    );
    announce_changes(c);
    if c.out_of_order > 0 {
        blastdrop::say!("blast: {} frame(s) are timed before the frame ahead of them: each leaves at the earlier time", c.out_of_order);
    }
    let idle = s.idle_queues();
    if !idle.is_empty() {
        blastdrop::say!("blast: queue(s) {idle:?} get no frames: the capture's flows all fall on the others");
    }
    let side = &sender.sides()[0];
    let length = match s.timing {
        Timing::Fast => "as fast as the queues take them".to_string(),
        _ => format!("over {:.6} s", s.duration_ns() as f64 / 1e9),
    };
    blastdrop::say!(
        "blast: replaying on port {} ({}, {}), {queues} queue(s) by flow, timing {}, {} pass(es): {} frames {length}; {}",
        side.port.id(),
        side.info.name,
        side.info.driver,
        s.timing,
        s.loops,
        s.frames(),
        match peer {
            Some(p) => format!("drop on {} ({}) counts what arrives in one window around the replay", p.hostname, p.port_name),
            None => "sender-side figures".into(),
        }
    );
}

/// What the rewrite and the probe readying changed in the frames, each
/// checksum counted once under what changed it.
fn announce_changes(c: &CaptureRecord) {
    match &c.rewrite {
        Some(r) => {
            let kept: Vec<String> = r.not_rewritten.iter().map(|(k, n)| format!("{k} {n}")).collect();
            blastdrop::say!(
                "blast: addresses rewritten to this port's: MACs of {} frames, IPv4 addresses of {} ({} behind VLAN tags), IPv6 addresses of {}, quoted headers of {} ICMP errors; L4 checksums computed {}, updated for the addresses {} (first fragments, truncated datagrams), left {} (not captured: wrong now); L3 kept as captured: {}",
                r.macs,
                r.ipv4,
                r.ipv4_tagged,
                r.ipv6,
                r.icmp_quoted_headers,
                r.l4_checksums_computed,
                r.l4_checksums_updated,
                r.l4_checksums_left,
                if kept.is_empty() { "none".to_string() } else { kept.join(", ") }
            )
        }
        None => blastdrop::say!("blast: addresses kept as captured (--pcap-keep-addresses)"),
    }
    match &c.probes {
        Some(p) => blastdrop::say!(
            "blast: a probe goes into {} frames: their UDP checksum set to 0 (none: the probe changes the payload on every send) in {} of them, the rest captured with none; their IPv4 identification is the run id",
            p.frames,
            p.udp_checksums_zeroed
        ),
        None => blastdrop::say!("blast: no probes stamped (--pcap-keep-payload): payloads and their checksums as captured or rewritten"),
    }
}

pub fn print_summary(s: &Summary) {
    blastdrop::say!("--- blast replay summary (sender-side: frames accepted by tx_burst) ---");
    blastdrop::say!(
        "sent {} frames, {} bytes in {:.6} s: {:.3} Mpps, {:.3} Gb/s of frames, {:.3} Gb/s on the wire (+20 B/frame){}",
        s.sent.packets,
        s.sent.bytes,
        s.sent.seconds,
        s.sent.mpps,
        s.sent.frame_gbps,
        s.sent.wire_gbps,
        if s.interrupted { "  (interrupted)" } else { "" }
    );
    blastdrop::say!(
        "probes in {} frames, none in {} (no room: not UDP over IPv4, a VLAN tag, IP options, or under 18 B of payload; or --pcap-keep-payload)",
        s.stamped, s.unstamped
    );
    print_timing(&s.timing, s.sent.packets);
    blastdrop::say!("ring-full retries {}  alloc failures {}  unsent at stop {}", s.ring_full_retries, s.alloc_failures, s.unsent);
    print_received(s);
    let whose = if s.receiver.is_some() { "both ends' counters" } else { "sender-side counters only" };
    blastdrop::say!("limit: {} ({whose})", s.limit);
    for l in &s.verdict.limits {
        blastdrop::say!("  {}: {}", l.kind.as_str(), l.evidence);
    }
    for q in &s.queues {
        blastdrop::say!(
            "  q{} (lcore {}): {} frames ({} with a probe), {:.3} Mpps, {}, {} retries",
            q.queue,
            q.lcore,
            q.sent.packets,
            q.stamped,
            q.sent.mpps,
            q.busy,
            q.ring_full_retries
        );
    }
}

/// The schedule kept or not (fast timing has none).
fn print_timing(t: &TimingRecord, sent: u64) {
    if t.timing == "fast" {
        blastdrop::say!("timing fast: no schedule to keep");
    } else {
        let g = &t.gap_error;
        blastdrop::say!(
            "timing {} ({} pass(es)): {} frames due by the end, {} sent; gap error (|gap sent - gap captured|, per queue) P50 {:.2} us, P90 {:.2}, P99 {:.2}, max {:.2} over {} gaps; late P50 {:.2} us, P99 {:.2}, max {:.2}",
            t.timing, t.passes, t.due, sent, g.p50_us, g.p90_us, g.p99_us, g.max_us, g.count, t.lateness.p50_us, t.lateness.p99_us, t.lateness.max_us
        );
        blastdrop::say!(
            "timing {}: {} frame(s) left more than {LATE_US} us late (held: at most {HELD_PCT}% of frames)",
            if t.held { "held" } else { "NOT held" },
            t.late_frames
        );
    }
}

/// With --peer: what drop counted in its window around the replay.
fn print_received(s: &Summary) {
    if let (Some(rx), Some(loss), Some(f)) = (&s.received, s.loss_pct, &s.receiver) {
        blastdrop::say!(
            "received at drop (receiver-side, one window around the replay): {} frames, {:.3} Mpps, {:.3} Gb/s on the wire over the trial; loss {loss:.3}%",
            rx.packets, rx.mpps, rx.wire_gbps
        );
        let sizes: Vec<String> = f.sizes.iter().map(|x| format!("{} B: {}", x.size, x.frames)).collect();
        if let Some(t) = &f.trial {
            blastdrop::say!(
                "  the replay's probed frames: sent {}, received {}, lost {} (exact){}",
                t.sent,
                t.received,
                t.lost,
                f.other_frames.map_or(String::new(), |o| format!("; {o} other frame(s) in drop's window"))
            );
        }
        blastdrop::say!(
            "  probes {} (lost about {} by their gaps, reordered {}, duplicates {}), non-probe frames {}; probe frames by size: {}",
            f.probe.received,
            f.probe.lost,
            f.probe.reordered,
            f.probe.duplicates,
            f.no_probe,
            sizes.join(", ")
        );
    }
}
