//! The parts of a single run (sender-side only), a capture replay and
//! drop's own record, each read as its records type.

use records::drop::DropBody;
use records::figures::PerPacket;
use records::replay::ReplayBody;
use records::single::SingleBody;
use records::step::Rates;

use crate::doc::{Block, Section, Table};
use crate::fmt::{gbps, mpps, opt, pct, verdict_cell};
use crate::record::Record;

/// One queue's row: the queue, its port (where the record names it), its
/// lcore, its rate and its cost.
struct QueueFigures<'a> {
    queue: u16,
    port: Option<u16>,
    lcore: u32,
    rates: &'a Rates,
    /// None on the kernel's sockets: their lanes' cost is their CPUs' time, not busy polls.
    busy: Option<&'a PerPacket>,
}

/// Per queue, from a typed record: where it ran, its rate and its cost.
fn queue_rows<'a>(side: &str, rows: impl Iterator<Item = QueueFigures<'a>>) -> Table {
    let mut t = Table::new(format!("Per queue ({side})"), &["queue", "port", "lcore", "Mpps", "Gb/s (frames)", "ns/pkt", "cycles/pkt"]);
    for q in rows {
        t.row(vec![
            q.queue.to_string().into(),
            q.port.map_or_else(String::new, |p| p.to_string()).into(),
            q.lcore.to_string().into(),
            mpps(q.rates.mpps).into(),
            gbps(q.rates.frame_gbps).into(),
            q.busy.map_or_else(|| "-".to_string(), |b| format!("{:.1}", b.ns_per_packet)).into(),
            opt(q.busy.and_then(|b| b.cycles_per_packet), |x| format!("{x:.1}")).into(),
        ]);
    }
    t
}

pub fn single(b: &SingleBody, s: &mut Section) {
    let m = &b.summary;
    s.push(Block::Para(format!(
        "Sender-side only (no receiver): {} Mpps, {} Gb/s of frames accepted by tx_burst over {:.2} s{}. This is what the device took, not what arrived.",
        mpps(m.sent.mpps),
        gbps(m.sent.frame_gbps),
        m.sent.seconds,
        m.offered_mpps.map_or(String::new(), |o| format!(", paced at {} Mpps", mpps(o)))
    )));
    let mut t = Table::new(
        "The run (sender-side)",
        &["sent Mpps", "ring-full retries", "alloc failures", "unsent", "port opackets", "port oerrors", "limit"],
    );
    t.row(vec![
        mpps(m.sent.mpps).into(),
        m.ring_full_retries.to_string().into(),
        m.alloc_failures.to_string().into(),
        m.unsent.to_string().into(),
        m.port.opackets.to_string().into(),
        m.port.oerrors.to_string().into(),
        verdict_cell(m.limit.clone(), Some(&m.verdict), None),
    ]);
    s.push(Block::Table(t));
    let rows =
        m.queues.iter().map(|q| QueueFigures { queue: q.queue, port: Some(q.port), lcore: q.lcore, rates: &q.sent, busy: Some(&q.busy) });
    s.push(Block::Table(queue_rows("sender-side", rows)));
}

pub fn replay(b: &ReplayBody, s: &mut Section) {
    let (c, m) = (&b.capture, &b.summary);
    s.push(Block::Para(format!(
        "Capture {} ({}): {} frames, {} flows, {:.3} s long, largest frame {} B; timing {}, held: {}.",
        c.file, c.format, c.frames, c.flows, c.span_seconds, c.largest, m.timing.timing, m.timing.held
    )));
    let mut t = Table::new("The replay", &["sent Mpps (blast)", "received Mpps (drop)", "loss", "late frames", "limit"]);
    t.row(vec![
        mpps(m.sent.mpps).into(),
        opt(m.received.map(|r| r.mpps), mpps).into(),
        opt(m.loss_pct, pct).into(),
        m.timing.late_frames.to_string().into(),
        verdict_cell(m.limit.clone(), Some(&m.verdict), None),
    ]);
    s.push(Block::Table(t));
    // A replay's queues do not name their port.
    let rows = m.queues.iter().map(|q| QueueFigures { queue: q.queue, port: None, lcore: q.lcore, rates: &q.sent, busy: Some(&q.busy) });
    s.push(Block::Table(queue_rows("sender-side", rows)));
}

pub fn drop(d: &DropBody, s: &mut Section) {
    let m = &d.summary;
    // A drop that served windows has the senders' counts in their records, not here.
    let why = if d.history.windows_served > 0 {
        "drop's own, over the whole run: each trial's exact loss is in the senders' runs"
    } else {
        "a standalone drop has no sender's counts"
    };
    s.push(Block::Para(format!(
        "Receiver-side: {} Mpps, {} Gb/s of frames arrived over {:.2} s (first to last arrival). Lost: an estimate of {} from gaps in the streams' sequence numbers ({why}).",
        mpps(m.received.mpps),
        gbps(m.received.frame_gbps),
        m.received.seconds,
        m.probe.lost
    )));
    let head = ["received frames", "no probe", "reordered", "duplicates"];
    let mut row = vec![
        m.received.packets.to_string().into(),
        m.no_probe.to_string().into(),
        m.probe.reordered.to_string().into(),
        m.probe.duplicates.to_string().into(),
    ];
    // A port's drop counters, or on the kernel's sockets the kernel's.
    let t = match (&m.port, &m.socket) {
        (_, Some(k)) => {
            row.extend([
                k.socket_drops.to_string().into(),
                k.udp.rcvbuf_errors.to_string().into(),
                k.interface_drops.to_string().into(),
                k.udp.softnet_dropped.to_string().into(),
            ]);
            let mut t = Table::new(
                "The run (receiver-side, on the kernel's UDP sockets)",
                &[&head[..], &["socket drops", "RcvbufErrors", "interface drops", "backlog drops", "limit"]].concat(),
            );
            row.push(verdict_cell(m.limit.clone(), Some(&m.verdict), None));
            t.row(row);
            t
        }
        (port, None) => {
            let cell = |f: fn(&records::figures::PortStats) -> u64| port.as_ref().map_or_else(|| "-".to_string(), |p| f(p).to_string());
            row.extend([cell(|p| p.imissed).into(), cell(|p| p.rx_nombuf).into(), cell(|p| p.ierrors).into()]);
            let mut t =
                Table::new("The run (receiver-side)", &[&head[..], &["port imissed", "port rx_nombuf", "port ierrors", "limit"]].concat());
            row.push(verdict_cell(m.limit.clone(), Some(&m.verdict), None));
            t.row(row);
            t
        }
    };
    s.push(Block::Table(t));
    let rows = m.queues.iter().map(|q| QueueFigures {
        queue: q.queue,
        port: Some(q.port),
        lcore: q.lcore,
        rates: &q.received,
        busy: q.busy.as_ref(),
    });
    s.push(Block::Table(queue_rows("receiver-side", rows)));
    if let Some(t) = windows(d) {
        s.push(Block::Table(t));
    }
}

/// The measured windows served to blast (drop --listen).
fn windows(d: &DropBody) -> Option<Table> {
    let w = &d.history.windows;
    if w.is_empty() {
        return None;
    }
    let mut t = Table::new(
        format!("Windows served to blast ({} in all; the last {} kept)", d.history.windows_served, w.len()),
        &["window", "seconds", "frames", "Mpps", "trial lost", "incomplete"],
    );
    for v in w {
        let (p, secs) = (v.packets as f64, v.seconds);
        t.row(vec![
            v.window.to_string().into(),
            format!("{secs:.3}").into(),
            v.packets.to_string().into(),
            (if secs > 0.0 { mpps(p / secs / 1e6) } else { "-".into() }).into(),
            v.trial.as_ref().map_or_else(|| "no account".to_string(), |a| a.lost.to_string()).into(),
            v.incomplete.clone().unwrap_or_default().into(),
        ]);
    }
    Some(t)
}

/// drop's sentence: what it received, on how many queues, and its limit.
pub fn drop_sentences(d: &DropBody) -> Vec<String> {
    let (m, port) = (&d.summary, &d.environment.port);
    vec![format!(
        "{} ({}) received {} Mpps on {} queue(s) (receiver-side, first to last arrival); limit: {}.",
        port.name,
        port.driver,
        mpps(m.received.mpps),
        m.queues.len(),
        m.limit
    )]
}

/// A single run's one sentence, and it says what it is not.
pub fn single_sentences(r: &Record, b: &SingleBody) -> Vec<String> {
    let (m, port) = (&b.summary, &b.environment.port);
    // The flags are read by path: the record keeps them as given (docs/json.md).
    let size = r.j().text("config/size");
    let frames = if size.is_empty() { String::new() } else { format!(" of {size} B frames") };
    let paced = m.offered_mpps.map_or(String::new(), |o| format!(", paced at {} Mpps", mpps(o)));
    vec![format!(
        "{} ({}) accepted {} Mpps{frames} from {} queue(s) ({} flows, {} arrivals{paced}) at tx_burst: sender-side, not what arrived.",
        port.name,
        port.driver,
        mpps(m.sent.mpps),
        m.queues.len(),
        b.flows,
        m.shape,
    )]
}

/// A replay's one sentence: both ends' rates, the loss and the timing;
/// without a receiver, the receiver's clauses are left out.
pub fn replay_sentences(b: &ReplayBody) -> Vec<String> {
    let (c, m, port) = (&b.capture, &b.summary, &b.environment.port);
    let received = match (m.received, m.loss_pct) {
        (Some(r), Some(l)) => format!(", {} Mpps received (receiver-side), loss {}", mpps(r.mpps), pct(l)),
        (Some(r), None) => format!(", {} Mpps received (receiver-side)", mpps(r.mpps)),
        _ => String::new(),
    };
    vec![format!(
        "{} ({}) replayed {} ({} frames, {} flows) from {} queue(s): {} Mpps sent (sender-side){received}; timing {} held: {}.",
        port.name,
        port.driver,
        c.file,
        c.frames,
        c.flows,
        m.queues.len(),
        mpps(m.sent.mpps),
        m.timing.timing,
        m.timing.held
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// drop's tables and sentence show its typed record's own fields: a real
    /// record of drop --listen that served a memif ladder (9 windows).
    #[test]
    fn a_real_drop_records_tables_show_its_typed_fields() {
        let json: serde_json::Value = serde_json::from_str(include_str!("../testdata/drop.json")).unwrap();
        let r = Record::from_json(Path::new("drop.json"), json, None).unwrap();
        let d = r.drop().unwrap();
        let mut s = Section::new(2, "drop");
        drop(&d, &mut s);
        let tables: Vec<&Table> = s.blocks.iter().filter_map(|b| if let Block::Table(t) = b { Some(t) } else { None }).collect();
        let run = tables[0];
        assert_eq!(run.rows[0][0].text, d.summary.received.packets.to_string());
        assert_eq!(run.rows[0][7].text, d.summary.limit);
        assert_eq!(run.rows[0][7].text, r.json["summary"]["limit"], "the label as written");
        let queues = tables[1];
        assert_eq!(queues.rows.len(), d.summary.queues.len());
        assert_eq!(queues.rows[0][3].text, mpps(d.summary.queues[0].received.mpps));
        let windows = tables[2];
        assert_eq!((windows.rows.len(), d.history.windows.len()), (9, 9));
        assert_eq!(windows.rows[8][2].text, d.history.windows[8].packets.to_string());
        let sentence = &drop_sentences(&d)[0];
        assert!(
            sentence.contains(&format!("received {} Mpps on {} queue(s)", mpps(d.summary.received.mpps), d.summary.queues.len())),
            "{sentence}"
        );
    }

    fn tables(s: &Section) -> Vec<&Table> {
        s.blocks.iter().filter_map(|b| if let Block::Table(t) = b { Some(t) } else { None }).collect()
    }

    fn real(name: &str, text: &str) -> Record {
        Record::from_json(Path::new(name), serde_json::from_str(text).unwrap(), None).unwrap()
    }

    /// A single run's tables and sentence show its typed record's fields: a
    /// real paced run on net_null.
    #[test]
    fn a_real_single_runs_tables_show_its_typed_fields() {
        let r = real("single.json", include_str!("../testdata/single.json"));
        let b = r.single().unwrap();
        let mut s = Section::new(2, "single");
        single(&b, &mut s);
        let t = tables(&s);
        assert_eq!(t[0].rows[0][0].text, mpps(b.summary.sent.mpps));
        assert_eq!(t[0].rows[0][4].text, b.summary.port.opackets.to_string());
        assert_eq!(t[0].rows[0][6].text, r.json["summary"]["limit"], "the label as written");
        assert_eq!(t[1].rows.len(), b.summary.queues.len());
        let Block::Para(p) = &s.blocks[0] else { panic!("the run's paragraph first") };
        assert!(p.contains(&format!("paced at {} Mpps", mpps(b.summary.offered_mpps.unwrap()))), "{p}");
        let sentence = &single_sentences(&r, &b)[0];
        assert!(sentence.contains(&format!("accepted {} Mpps", mpps(b.summary.sent.mpps))), "{sentence}");
    }

    /// A replay's tables and sentence show its typed record's fields: a real
    /// replay of a 300-frame capture, twice, on net_null.
    #[test]
    fn a_real_replays_tables_show_its_typed_fields() {
        let r = real("replay.json", include_str!("../testdata/replay.json"));
        let b = r.replay().unwrap();
        let mut s = Section::new(2, "replay");
        replay(&b, &mut s);
        let t = tables(&s);
        assert_eq!(t[0].rows[0][0].text, mpps(b.summary.sent.mpps));
        assert_eq!(t[0].rows[0][3].text, b.summary.timing.late_frames.to_string());
        assert_eq!(t[1].rows[0][1].text, "", "a replay's queues name no port");
        let Block::Para(p) = &s.blocks[0] else { panic!("the capture's paragraph first") };
        assert!(p.contains(&format!("{} frames, {} flows", b.capture.frames, b.capture.flows)) && b.capture.frames == 300, "{p}");
        let sentence = &replay_sentences(&b)[0];
        assert!(sentence.contains(&format!("timing {} held: {}", b.summary.timing.timing, b.summary.timing.held)), "{sentence}");
    }
}
