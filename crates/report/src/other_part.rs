//! The parts of a single run (sender-side only), a capture replay and
//! drop's own record.

use crate::doc::{Block, Section, Table};
use crate::fmt::{gbps, limit_cell, mpps, opt, pct};
use crate::record::{Record, J};

/// Per queue: where it ran, its rate and its cost.
fn queue_table(r: &Record, side: &str, rates: &str) -> Table {
    let mut t = Table::new(format!("Per queue ({side})"), &["queue", "port", "lcore", "Mpps", "Gb/s (frames)", "ns/pkt", "cycles/pkt"]);
    for q in r.j().arr("summary/queues") {
        let q = J(q);
        t.row(vec![
            q.text("queue").into(),
            q.text("port").into(),
            q.text("lcore").into(),
            opt(q.f64(&format!("{rates}/mpps")), mpps).into(),
            opt(q.f64(&format!("{rates}/frame_gbps")), gbps).into(),
            opt(q.f64("ns_per_packet"), |x| format!("{x:.1}")).into(),
            opt(q.f64("cycles_per_packet"), |x| format!("{x:.1}")).into(),
        ]);
    }
    t
}

pub fn single(r: &Record, s: &mut Section) {
    let m = r.j().at("summary");
    s.push(Block::Para(format!(
        "Sender-side only (no receiver): {} Mpps, {} Gb/s of frames accepted by tx_burst over {:.2} s{}. This is what the device took, not what arrived.",
        opt(m.f64("sent/mpps"), mpps),
        opt(m.f64("sent/frame_gbps"), gbps),
        m.f64("sent/seconds").unwrap_or(0.0),
        m.f64("offered_mpps").map_or(String::new(), |o| format!(", paced at {} Mpps", mpps(o)))
    )));
    let mut t = Table::new(
        "The run (sender-side)",
        &["sent Mpps", "ring-full retries", "alloc failures", "unsent", "port opackets", "port oerrors", "limit"],
    );
    t.row(vec![
        opt(m.f64("sent/mpps"), mpps).into(),
        m.text("ring_full_retries").into(),
        m.text("alloc_failures").into(),
        m.text("unsent").into(),
        m.text("port/opackets").into(),
        m.text("port/oerrors").into(),
        limit_cell(m),
    ]);
    s.push(Block::Table(t));
    s.push(Block::Table(queue_table(r, "sender-side", "sent")));
}

pub fn replay(r: &Record, s: &mut Section) {
    let c = r.j().at("capture");
    s.push(Block::Para(format!(
        "Capture {} ({}): {} frames, {} flows, {:.3} s long, largest frame {} B; timing {}, held: {}.",
        c.text("file"),
        c.text("format"),
        c.text("frames"),
        c.text("flows"),
        c.f64("span_seconds").unwrap_or(0.0),
        c.text("largest"),
        r.j().text("summary/timing/timing"),
        r.j().text("summary/timing/held")
    )));
    let m = r.j().at("summary");
    let mut t = Table::new("The replay", &["sent Mpps (blast)", "received Mpps (drop)", "loss", "late frames", "limit"]);
    t.row(vec![
        opt(m.f64("sent/mpps"), mpps).into(),
        opt(m.f64("received/mpps"), mpps).into(),
        opt(m.f64("loss_pct"), pct).into(),
        m.text("timing/late_frames").into(),
        limit_cell(m),
    ]);
    s.push(Block::Table(t));
    s.push(Block::Table(queue_table(r, "sender-side", "sent")));
}

pub fn drop(r: &Record, s: &mut Section) {
    let m = r.j().at("summary");
    s.push(Block::Para(format!(
        "Receiver-side: {} Mpps, {} Gb/s of frames arrived over {:.2} s (first to last arrival). Lost: an estimate of {} from gaps in the streams' sequence numbers (a standalone drop has no sender's counts).",
        opt(m.f64("received/mpps"), mpps),
        opt(m.f64("received/frame_gbps"), gbps),
        m.f64("received/seconds").unwrap_or(0.0),
        m.text("probe/lost_estimate")
    )));
    let mut t = Table::new(
        "The run (receiver-side)",
        &["received frames", "no probe", "reordered", "duplicates", "port imissed", "port rx_nombuf", "port ierrors", "limit"],
    );
    t.row(vec![
        m.text("received/packets").into(),
        m.text("no_probe").into(),
        m.text("probe/reordered").into(),
        m.text("probe/duplicates").into(),
        m.text("port/imissed").into(),
        m.text("port/rx_nombuf").into(),
        m.text("port/ierrors").into(),
        limit_cell(m),
    ]);
    s.push(Block::Table(t));
    s.push(Block::Table(queue_table(r, "receiver-side", "received")));
    if let Some(t) = windows(r) {
        s.push(Block::Table(t));
    }
}

/// The measured windows served to blast (drop --listen).
fn windows(r: &Record) -> Option<Table> {
    let w = r.j().arr("windows");
    if w.is_empty() {
        return None;
    }
    let mut t = Table::new(
        format!("Windows served to blast ({} in all; the last {} kept)", r.j().text("windows_served"), w.len()),
        &["window", "seconds", "frames", "Mpps", "trial lost", "incomplete"],
    );
    for v in w {
        let v = J(v);
        let (p, secs) = (v.f64("packets").unwrap_or(0.0), v.f64("seconds").unwrap_or(0.0));
        t.row(vec![
            v.text("window").into(),
            format!("{secs:.3}").into(),
            v.text("packets").into(),
            (if secs > 0.0 { mpps(p / secs / 1e6) } else { "-".into() }).into(),
            v.u64("trial/lost").map_or_else(|| "no account".to_string(), |l| l.to_string()).into(),
            v.text("incomplete").into(),
        ]);
    }
    Some(t)
}

/// The one sentence a sender-side run can give, and it says what it is not.
pub fn sentences(r: &Record) -> Vec<String> {
    let m = r.j().at("summary");
    let q = r.j().arr("summary/queues").len();
    let port = r.env().at("port");
    match r.kind {
        crate::Kind::Single => vec![format!(
            "{} ({}) accepted {} Mpps of {} B frames from {q} queue(s) ({} flows, {} arrivals) at tx_burst: sender-side, not what arrived.",
            port.text("name"),
            port.text("driver"),
            opt(m.f64("sent/mpps"), mpps),
            r.j().text("config/size"),
            r.j().text("flows"),
            m.text("shape"),
        )],
        crate::Kind::Drop => vec![format!(
            "{} ({}) received {} Mpps on {q} queue(s) (receiver-side, first to last arrival); limit: {}.",
            port.text("name"),
            port.text("driver"),
            opt(m.f64("received/mpps"), mpps),
            m.text("limit")
        )],
        crate::Kind::Replay => vec![format!(
            "{} ({}) replayed {} ({} frames, {} flows) from {q} queue(s): {} Mpps sent (sender-side), {} Mpps received (receiver-side), loss {}; timing {} held: {}.",
            port.text("name"),
            port.text("driver"),
            r.j().text("capture/file"),
            r.j().text("capture/frames"),
            r.j().text("capture/flows"),
            opt(m.f64("sent/mpps"), mpps),
            opt(m.f64("received/mpps"), mpps),
            opt(m.f64("loss_pct"), pct),
            m.text("timing/timing"),
            m.text("timing/held")
        )],
        _ => vec![],
    }
}
