//! What a single step prints: the line that says what is sent, and the
//! sender-side summary (rates, shape, round trips, the limit, each port and queue).

use blastdrop::sender::Sender;

use super::record::Summary;
use crate::mode::Single;

/// The line that says what this run sends.
pub fn announce(paced_rate: Option<f64>, m: &Single, sender: &Sender) {
    let what = match (m.count, m.duration) {
        (Some(c), Some(d)) => format!("{c} frames or {d:.1?}, whichever first"),
        (Some(c), None) => format!("{c} frames"),
        (None, Some(d)) => format!("{d:.1?}"),
        (None, None) => unreachable!("a duration defaults when there is no count"),
    };
    let ports: Vec<String> = match sender.socket_side() {
        Some(side) => vec![format!("{} ({}, to {})", side.info.name, side.info.driver, side.cfg.dest)],
        None => sender.sides().iter().map(|s| format!("{} ({}, {})", s.port.id(), s.info.name, s.info.driver)).collect(),
    };
    blastdrop::say!(
        "blast: port{} {}, {} queue(s), {} (FCS incl.), {} flow(s), {}, {}; sender-side figures",
        if ports.len() > 1 { "s" } else { "" },
        ports.join(" + "),
        m.queues,
        frames_text(m.size, m.mix.as_ref()),
        m.flows,
        paced_rate.map_or("unpaced".into(), |r| format!("paced at {:.3} Mpps, {} arrivals", r / 1e6, m.shape)),
        what
    );
}

/// "64 B frames", or a mix with its sizes and mean.
pub fn frames_text(size: u32, mix: Option<&wire::SizeMix>) -> String {
    match mix {
        None => format!("{size} B frames"),
        Some(m) => {
            let parts: Vec<String> = m.parts().iter().map(|(s, w)| format!("{w} x {s} B")).collect();
            format!("size mix {} ({} per cycle of {}; mean {:.1} B)", m.label(), parts.join(", "), m.cycle_len(), m.mean_size())
        }
    }
}

/// `on_sockets`: blast sent on the kernel's UDP sockets (sendmmsg, no port).
pub fn print_summary(s: &Summary, on_sockets: bool) {
    let taken_by = if on_sockets { "datagrams the sockets' sendmmsg took" } else { "frames accepted by tx_burst" };
    blastdrop::say!("--- blast summary (sender-side: {taken_by}) ---");
    blastdrop::say!(
        "sent {} frames, {} bytes in {:.3} s: {:.3} Mpps, {:.3} Gb/s of frames, {:.3} Gb/s on the wire (+20 B/frame)",
        s.sent.packets,
        s.sent.bytes,
        s.sent.seconds,
        s.sent.mpps,
        s.sent.frame_gbps,
        s.sent.wire_gbps
    );
    if let Some(o) = s.offered_mpps {
        blastdrop::say!("offered {o:.3} Mpps (paced)");
    }
    let port = if on_sockets {
        "no port: what the sockets took is what left".to_string()
    } else {
        format!("port opackets {} oerrors {}", s.port.opackets, s.port.oerrors)
    };
    let retries = if on_sockets { "short sendmmsg calls" } else { "ring-full retries" };
    blastdrop::say!(
        "{}  {retries} {}  alloc failures {}  unsent at stop {}  {port}{}",
        s.busy,
        s.ring_full_retries,
        s.alloc_failures,
        s.unsent,
        if s.interrupted { "  (interrupted)" } else { "" }
    );
    print_shape(s);
    if let (Some(l), Some(n)) = (&s.latency, s.reflected) {
        blastdrop::say!("round trip (reflected by drop, {n} probes back of {} sent; on blast's own clock): {}", s.sent.packets, l.line());
    }
    print_limit(s);
    for q in &s.queues {
        blastdrop::say!(
            "  q{} (port {}, lcore {}): {:.3} Mpps, {} frames, {}, {} retries",
            q.queue,
            q.port,
            q.lcore,
            q.sent.mpps,
            q.sent.packets,
            q.busy,
            q.ring_full_retries
        );
    }
}

/// The arrival shape asked for and the one achieved, and what held it back.
fn print_shape(s: &Summary) {
    let a = &s.achieved_shape;
    let gaps = if s.shape == "open" {
        "unpaced: no gaps to measure".to_string()
    } else {
        format!("a queue's sends {:.2} us apart (median {:.2}, spread {:.2})", a.mean_gap_us, a.median_gap_us, a.gap_spread)
    };
    blastdrop::say!(
        "shape: {} asked; achieved {:.3} Mpps, {:.2} frames per send (max {}), {gaps}",
        s.shape,
        a.achieved_mpps,
        a.frames_per_send,
        a.max_frames_per_send
    );
    if let Some(b) = &s.shape_bunched {
        blastdrop::say!("  shape not held: {b}");
    }
}

/// The verdict from the sender's counters, and each port's with several --port.
fn print_limit(s: &Summary) {
    blastdrop::say!("limit: {} (sender-side counters only; with --peer the receiver's count too)", s.limit);
    for l in &s.verdict.limits {
        blastdrop::say!("  {}: {}", l.kind.as_str(), l.evidence);
    }
    for p in &s.ports {
        let limit = p.limit();
        blastdrop::say!(
            "  port {} ({}, {} queue(s)): {:.3} Mpps, {} frames, {:.3} Gb/s wire, port opackets {} oerrors {}; limit: {}",
            p.port,
            p.name,
            p.queues,
            p.sent.mpps,
            p.sent.packets,
            p.sent.wire_gbps,
            p.sender_opackets,
            p.sender_oerrors,
            limit
        );
    }
}
