use serde::Serialize;
use std::fmt::Write;

use crate::{PortStep, StepRecord};

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.prec$}"))
}

/// Extra receiver Mpps this record bought over the step with the next
/// lower queue count at the same size and run.
fn gain(records: &[StepRecord], r: &StepRecord) -> Option<f64> {
    records
        .iter()
        .filter(|o| o.size == r.size && o.run == r.run && o.queues < r.queues && o.error.is_none() && o.same_traffic(r))
        .max_by_key(|o| o.queues)
        .map(|o| r.headline_mpps() - o.headline_mpps())
}

/// The ladder as a text table, one row per step. Receiver columns read
/// "-" when there is no receiver.
pub fn render_table(records: &[StepRecord]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>4} {:>3} {:>6} {:>6} {:>5} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8}  limit",
        "step", "run", "queues", "size", "flows", "offered", "sent", "recv", "recv", "recv", "loss", "recv/q", "gain", "snd cyc"
    );
    let _ = writeln!(
        s,
        "{:>4} {:>3} {:>6} {:>6} {:>5} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8}",
        "", "", "", "B", "", "Mpps", "Mpps", "Mpps", "Gb/s wire", "Gb/s frm", "%", "Mpps", "Mpps", "/pkt"
    );
    for r in records {
        if let Some(e) = &r.error {
            let _ = writeln!(s, "{:>4} {:>3} {:>6} {:>6} {:>5}  step failed: {e}", r.step + 1, r.run, r.queues, r.size, r.flows);
            continue;
        }
        table_step_row(&mut s, records, r);
        // Several ports: each port's share under its step, labelled p0, p1 ...
        for p in &r.ports {
            table_port_row(&mut s, p);
        }
    }
    // Latency, when the steps timed reflected probes: its own lines, with
    // the qualifiers a percentile needs (shape, rate, sample count).
    if records.iter().any(|r| r.latency.is_some()) {
        s += &render_latency(records);
    }
    if records.iter().any(|r| r.cross_check.is_some()) {
        s += &render_cross_check(records);
    }
    s
}

/// The cross-checked steps (--cross-check): blast's window and the C
/// lanes' window of each, both ends' figures, blast's over the C loop's on
/// the basis named, and the finding; its sentence under the table.
pub fn render_cross_check(records: &[StepRecord]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\ncross-check (each step again at once with blast-ref's C loop on the same queues, unpaced; blast/C on the basis named):"
    );
    let _ = writeln!(
        s,
        "{:>4} {:>3} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>8} {:>7}  finding",
        "step", "run", "queues", "size", "blast sent", "blast recv", "C sent", "C recv", "basis", "blast/C"
    );
    let _ = writeln!(s, "{:>4} {:>3} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10}", "", "", "", "B", "Mpps", "Mpps", "Mpps", "Mpps");
    for r in records.iter().filter(|r| r.error.is_none()) {
        let Some(x) = &r.cross_check else { continue };
        let _ = writeln!(
            s,
            "{:>4} {:>3} {:>6} {:>6} {:>10.3} {:>10} {:>10.3} {:>10} {:>8} {:>7}  {}",
            r.step + 1,
            r.run,
            r.queues,
            r.size,
            r.sent.mpps,
            opt(r.received.map(|x| x.mpps), 3),
            x.c_lanes.sent.mpps,
            opt(x.c_lanes.received.map(|x| x.mpps), 3),
            if x.basis == records::step::Basis::Receiver { "receiver" } else { "sender" },
            x.ratio_text(),
            x.finding.as_str()
        );
    }
    for r in records.iter().filter(|r| r.error.is_none()) {
        if let Some(x) = &r.cross_check {
            let _ = writeln!(s, "  step {} run {}: {}", r.step + 1, r.run, x.sentence);
        }
    }
    s
}

/// A measured step's table row (its gain over the step with fewer queues from `records`).
fn table_step_row(s: &mut String, records: &[StepRecord], r: &StepRecord) {
    let _ = writeln!(
        s,
        "{:>4} {:>3} {:>6} {:>6} {:>5} {:>10} {:>9.3} {:>9} {:>9} {:>9} {:>7} {:>8.3} {:>8} {:>8}  {}",
        r.step + 1,
        r.run,
        r.queues,
        r.size,
        r.flows,
        opt(r.offered_mpps, 3),
        r.sent.mpps,
        opt(r.received.map(|x| x.mpps), 3),
        opt(r.received.map(|x| x.wire_gbps), 3),
        opt(r.received.map(|x| x.frame_gbps), 3),
        opt(r.loss_pct, 3),
        r.mpps_per_queue(),
        opt(gain(records, r), 3),
        opt(r.sender_cycles_per_packet, 1),
        r.limit()
    );
}

/// One port's share of a step, a table row in the step's columns.
fn table_port_row(s: &mut String, p: &PortStep) {
    let per_queue = p.received.map_or(p.sent.mpps, |x| x.mpps) / f64::from(p.queues.max(1));
    let label = format!("p{}", p.port);
    let pairing = format!("{} ({}{})", p.limit(), p.name, p.receiver_port.as_ref().map_or(String::new(), |r| format!(" -> {r}")));
    let _ = writeln!(
        s,
        "{:>4} {:>3} {:>6} {:>6} {:>5} {:>10} {:>9.3} {:>9} {:>9} {:>9} {:>7} {:>8.3} {:>8} {:>8}  {}",
        "",
        label,
        p.queues,
        "",
        "",
        "",
        p.sent.mpps,
        opt(p.received.map(|x| x.mpps), 3),
        opt(p.received.map(|x| x.wire_gbps), 3),
        opt(p.received.map(|x| x.frame_gbps), 3),
        opt(p.loss_pct, 3),
        per_queue,
        "",
        "",
        pairing
    );
}

/// The round-trip table (one row per step that timed probes: offered rate,
/// shape, percentiles, samples, loss, limit), then for each step whose
/// rate ran in several shapes, the even one as the floor and the burstiest
/// as the ceiling, side by side.
pub fn render_latency(records: &[StepRecord]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\nround trip (drop --reflect; both stamps on blast's own clock), microseconds:");
    let _ = writeln!(
        s,
        "{:>4} {:>3} {:>6} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>7}  limit",
        "step", "run", "queues", "size", "offered", "shape", "P50", "P90", "P99", "P99.9", "P99.99", "Max", "samples", "loss %"
    );
    for r in records.iter().filter(|r| r.error.is_none()) {
        let Some(l) = &r.latency else { continue };
        // No probe came back: no percentile to print.
        let us = |v: f64| if l.count == 0 { "-".to_string() } else { format!("{v:.1}") };
        let _ = writeln!(
            s,
            "{:>4} {:>3} {:>6} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>7}  {}",
            r.step + 1,
            r.run,
            r.queues,
            r.size,
            opt(r.offered_mpps, 3),
            r.shape,
            us(l.p50_us),
            us(l.p90_us),
            us(l.p99_us),
            us(l.p99_9_us),
            us(l.p99_99_us),
            us(l.max_us),
            if l.count == 0 { "no samples".to_string() } else { l.count.to_string() },
            opt(r.loss_pct, 3),
            match r.tail_cause.as_deref() {
                Some(c) if crate::StepStalls::explains(c) => format!("{} (*: host stall)", r.limit()),
                _ => r.limit(),
            }
        );
    }
    for r in records.iter().filter(|r| r.error.is_none() && r.latency.is_some()) {
        if let Some(c) = &r.tail_cause {
            let mark = if crate::StepStalls::explains(c) { "*" } else { " " };
            let _ = writeln!(s, "{mark} step {} run {}: {c}", r.step + 1, r.run);
        }
    }
    for line in floor_and_ceiling(records) {
        let _ = writeln!(s, "{line}");
    }
    s
}

/// How bursty a shape is, for ordering: even < poisson < burst:N by N.
pub fn burstiness_rank(shape: &str) -> u32 {
    match shape {
        "even" => 0,
        "poisson" => 1,
        _ => shape.strip_prefix("burst:").and_then(|n| n.parse::<u32>().ok()).map_or(u32::MAX, |n| n.saturating_add(1)),
    }
}

/// One line per (run, queues, size, rate) measured in several shapes: the
/// evenest shape's P50/P99/P99.9 as the floor, the burstiest's as the ceiling.
fn floor_and_ceiling(records: &[StepRecord]) -> Vec<String> {
    let timed: Vec<&StepRecord> = records.iter().filter(|r| r.error.is_none() && r.latency.is_some_and(|l| l.count > 0)).collect();
    let mut lines = Vec::new();
    let mut seen: Vec<&StepRecord> = Vec::new();
    for r in &timed {
        let same_point = |o: &&StepRecord| o.run == r.run && o.queues == r.queues && o.size == r.size && o.offered_mpps == r.offered_mpps;
        if seen.iter().any(same_point) {
            continue;
        }
        seen.push(r);
        let mut at: Vec<&StepRecord> = timed.iter().copied().filter(same_point).collect();
        if at.len() < 2 {
            continue;
        }
        at.sort_by_key(|o| burstiness_rank(&o.shape));
        let (floor, ceiling) = (at[0], at[at.len() - 1]);
        let pct = |o: &StepRecord| {
            let l = o.latency.expect("timed");
            let stalled = o.tail_cause.as_deref().is_some_and(crate::StepStalls::explains);
            format!(
                "P50 {:.1} / P99 {:.1} / P99.9 {:.1} us{}",
                l.p50_us,
                l.p99_us,
                l.p99_9_us,
                if stalled { " (*: host stall)" } else { "" }
            )
        };
        lines.push(format!(
            "at {} Mpps, {} queue(s), {} B, run {}: {} (floor) {} | {} (ceiling) {}",
            opt(r.offered_mpps, 3),
            r.queues,
            r.size,
            r.run,
            floor.shape,
            pct(floor),
            ceiling.shape,
            pct(ceiling)
        ));
    }
    lines
}

/// One CSV row: a step (port "all"), or with several ports one port's
/// share of it. The columns are the fields, in this order; empty where a
/// figure does not apply (no receiver, no latency, a port row).
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
struct CsvRow {
    step: usize,
    run: u32,
    queues: u16,
    size_bytes: u32,
    size_mix: Option<String>,
    flows: Option<u32>,
    mtu: u32,
    shape: String,
    #[serde(serialize_with = "six_opt")]
    offered_mpps: Option<f64>,
    #[serde(serialize_with = "six")]
    sent_mpps: f64,
    sent_packets: u64,
    #[serde(serialize_with = "six_opt")]
    received_mpps: Option<f64>,
    received_packets: Option<u64>,
    #[serde(serialize_with = "six_opt")]
    received_wire_gbps: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    received_frame_gbps: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    loss_pct: Option<f64>,
    #[serde(serialize_with = "six")]
    mpps_per_queue: f64,
    #[serde(serialize_with = "six_opt")]
    gain_mpps: Option<f64>,
    #[serde(serialize_with = "two_opt")]
    sender_cycles_per_packet: Option<f64>,
    #[serde(serialize_with = "two_opt")]
    sender_ns_per_packet: Option<f64>,
    ring_full_retries: Option<u64>,
    imissed: Option<u64>,
    rx_nombuf: Option<u64>,
    limit: String,
    #[serde(serialize_with = "six_opt")]
    achieved_mpps: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    frames_per_send: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    gap_spread: Option<f64>,
    latency_samples: Option<u64>,
    #[serde(serialize_with = "six_opt")]
    p50_us: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    p90_us: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    p99_us: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    p99_9_us: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    p99_99_us: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    max_us: Option<f64>,
    /// --cross-check: the C lanes' window, its sent and received Mpps,
    /// blast's figure over the C loop's (as printed) and the finding.
    #[serde(serialize_with = "six_opt")]
    c_loop_sent_mpps: Option<f64>,
    #[serde(serialize_with = "six_opt")]
    c_loop_received_mpps: Option<f64>,
    #[serde(serialize_with = "two_opt")]
    blast_over_c_loop: Option<f64>,
    cross_check: Option<records::step::Finding>,
    port: String,
    error: Option<records::step::StepFailure>,
}

/// Rates with six decimals, as the CSV has always written them.
fn six<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:.6}"))
}

fn six_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => six(x, s),
        None => s.serialize_none(),
    }
}

fn two_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_str(&format!("{x:.2}")),
        None => s.serialize_none(),
    }
}

/// The CSV's header line (the row type's fields).
pub const CSV_HEADER: &str = "step,run,queues,size_bytes,size_mix,flows,mtu,shape,offered_mpps,sent_mpps,sent_packets,received_mpps,received_packets,\
received_wire_gbps,received_frame_gbps,loss_pct,mpps_per_queue,gain_mpps,sender_cycles_per_packet,sender_ns_per_packet,ring_full_retries,imissed,rx_nombuf,limit,\
achieved_mpps,frames_per_send,gap_spread,latency_samples,p50_us,p90_us,p99_us,p99_9_us,p99_99_us,max_us,\
c_loop_sent_mpps,c_loop_received_mpps,blast_over_c_loop,cross_check,port,error";

fn step_row(records: &[StepRecord], r: &StepRecord) -> CsvRow {
    let lat = r.latency.filter(|l| l.count > 0);
    CsvRow {
        step: r.step + 1,
        run: r.run,
        queues: r.queues,
        size_bytes: r.size,
        size_mix: r.size_mix.clone(),
        flows: Some(r.flows),
        mtu: r.mtu,
        shape: r.shape.clone(),
        offered_mpps: r.offered_mpps,
        sent_mpps: r.sent.mpps,
        sent_packets: r.sent.packets,
        received_mpps: r.received.map(|x| x.mpps),
        received_packets: r.received.map(|x| x.packets),
        received_wire_gbps: r.received.map(|x| x.wire_gbps),
        received_frame_gbps: r.received.map(|x| x.frame_gbps),
        loss_pct: r.loss_pct,
        mpps_per_queue: r.mpps_per_queue(),
        gain_mpps: gain(records, r),
        sender_cycles_per_packet: r.sender_cycles_per_packet,
        sender_ns_per_packet: Some(r.sender_ns_per_packet),
        ring_full_retries: Some(r.ring_full_retries),
        imissed: r.receiver.as_ref().map(|f| f.imissed),
        rx_nombuf: r.receiver.as_ref().map(|f| f.rx_nombuf),
        limit: r.limit(),
        achieved_mpps: r.achieved_shape.map(|a| a.achieved_mpps),
        frames_per_send: r.achieved_shape.map(|a| a.frames_per_send),
        gap_spread: r.achieved_shape.map(|a| a.gap_spread),
        latency_samples: r.latency.map(|l| l.count),
        p50_us: lat.map(|l| l.p50_us),
        p90_us: lat.map(|l| l.p90_us),
        p99_us: lat.map(|l| l.p99_us),
        p99_9_us: lat.map(|l| l.p99_9_us),
        p99_99_us: lat.map(|l| l.p99_99_us),
        max_us: lat.map(|l| l.max_us),
        c_loop_sent_mpps: r.cross_check.as_ref().map(|x| x.c_lanes.sent.mpps),
        c_loop_received_mpps: r.cross_check.as_ref().and_then(|x| x.c_lanes.received.map(|rx| rx.mpps)),
        blast_over_c_loop: r.cross_check.as_ref().and_then(|x| x.ratio),
        cross_check: r.cross_check.as_ref().map(|x| x.finding),
        port: "all".into(),
        error: r.error.clone(),
    }
}

fn port_row(r: &StepRecord, p: &crate::PortStep) -> CsvRow {
    CsvRow {
        step: r.step + 1,
        run: r.run,
        queues: p.queues,
        size_bytes: r.size,
        size_mix: r.size_mix.clone(),
        mtu: r.mtu,
        shape: r.shape.clone(),
        sent_mpps: p.sent.mpps,
        sent_packets: p.sent.packets,
        received_mpps: p.received.map(|x| x.mpps),
        received_packets: p.received.map(|x| x.packets),
        received_wire_gbps: p.received.map(|x| x.wire_gbps),
        received_frame_gbps: p.received.map(|x| x.frame_gbps),
        loss_pct: p.loss_pct,
        mpps_per_queue: p.received.map_or(p.sent.mpps, |x| x.mpps) / f64::from(p.queues.max(1)),
        imissed: p.receiver_imissed,
        limit: p.limit(),
        port: p.port.to_string(),
        ..Default::default()
    }
}

/// The ladder as CSV, one row per step (port "all"), and with several
/// ports one more row per port under it (port 0, 1 ...), with a header.
pub fn render_csv(records: &[StepRecord]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut rows = Vec::new();
    for r in records {
        rows.push(step_row(records, r));
        rows.extend(r.ports.iter().map(|p| port_row(r, p)));
    }
    if rows.is_empty() {
        return format!("{CSV_HEADER}\n");
    }
    for row in &rows {
        w.serialize(row).expect("a CSV row of plain fields serializes");
    }
    String::from_utf8(w.into_inner().expect("writing to memory cannot fail")).expect("CSV of UTF-8 fields")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rates;

    fn rec(step: usize, q: u16, mpps: f64) -> StepRecord {
        let n = (mpps * 1e6) as u64;
        StepRecord {
            step,
            run: 1,
            queues: q,
            size: 64,
            flows: 4,
            shape: "open".into(),
            sent: Rates::over(n, n * 64, 1.0),
            received: Some(Rates::over(n, n * 64, 1.0)),
            loss_pct: Some(0.0),
            ..Default::default()
        }
    }

    #[test]
    fn table_rows_carry_gain_per_queue_and_limit() {
        let t = render_table(&[rec(0, 1, 2.0), rec(1, 2, 3.5)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[3].contains("1.500"), "gain of 1.5 Mpps: {}", lines[3]);
        assert!(lines[3].contains("1.750"), "per queue: {}", lines[3]);
        assert!(lines[3].trim_end().ends_with("n/a"));
        assert!(lines[1].contains("Gb/s wire"));
    }

    #[test]
    fn latency_gets_its_own_lines_with_shape_and_samples() {
        let mut r = rec(0, 1, 1.0);
        r.shape = "even".into();
        r.offered_mpps = Some(1.0);
        r.latency = Some(latency::LatencySummary { count: 1000, p50_us: 10.0, p99_9_us: 42.0, max_us: 50.0, ..Default::default() });
        let t = render_table(&[r]);
        assert!(t.contains("round trip (drop --reflect; both stamps on blast's own clock), microseconds:"), "{t}");
        let last = t.lines().last().unwrap();
        assert!(last.contains("even") && last.contains("42.0") && last.contains(" 1000 ") && last.trim_end().ends_with("n/a"), "{last}");
        assert!(!render_table(&[rec(0, 1, 1.0)]).contains("round trip"));
    }

    #[test]
    fn shapes_of_one_rate_sit_side_by_side_as_floor_and_ceiling() {
        let timed = |step: usize, rate: f64, shape: &str, p99: f64| {
            let mut r = rec(step, 1, rate);
            (r.shape, r.offered_mpps) = (shape.into(), Some(rate));
            r.latency =
                Some(latency::LatencySummary { count: 500, p50_us: p99 / 2.0, p99_us: p99, p99_9_us: p99 * 2.0, ..Default::default() });
            r
        };
        let recs =
            [timed(0, 0.1, "burst:8", 40.0), timed(1, 0.1, "even", 12.0), timed(2, 0.3, "even", 15.0), timed(3, 0.3, "poisson", 20.0)];
        let t = render_latency(&recs);
        let pairs: Vec<&str> = t.lines().filter(|l| l.starts_with("at ")).collect();
        assert_eq!(pairs.len(), 2, "{t}");
        assert!(
            pairs[0].contains("at 0.100 Mpps")
                && pairs[0].contains("even (floor) P50 6.0 / P99 12.0")
                && pairs[0].contains("burst:8 (ceiling) P50 20.0 / P99 40.0"),
            "{t}"
        );
        assert!(pairs[1].contains("even (floor)") && pairs[1].contains("poisson (ceiling)"), "{t}");
        // One shape per rate: no pair.
        assert!(!render_latency(&recs[2..3]).contains("(floor)"));
    }

    #[test]
    fn the_header_is_the_row_types_fields() {
        let c = render_csv(&[rec(0, 1, 2.0)]);
        assert_eq!(c.lines().next().unwrap(), CSV_HEADER);
        assert_eq!(render_csv(&[]), format!("{CSV_HEADER}\n"));
    }

    #[test]
    fn csv_has_a_row_per_step_and_fixed_columns() {
        let mut failed = rec(2, 4, 0.0);
        failed.error = Some(records::step::StepFailure("peer vanished, \"x\"".into()));
        let c = render_csv(&[rec(0, 1, 2.0), rec(1, 2, 3.5), failed]);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 4);
        let cols = CSV_HEADER.split(',').count();
        for l in &lines[..3] {
            assert_eq!(l.split(',').count(), cols, "{l}");
        }
        assert!(lines[2].contains(",1.500000,"), "{}", lines[2]);
        assert!(lines[1].ends_with(",all,"), "{}", lines[1]);
        assert!(lines[3].ends_with("\"peer vanished, \"\"x\"\"\""), "{}", lines[3]);
    }

    /// A step cross-checked against the C loop, on the receiver's counts.
    fn cross_checked(blast_mpps: f64, c_mpps: f64) -> StepRecord {
        let mut r = rec(0, 1, blast_mpps);
        r.lost = Some(0);
        let mut c = rec(0, 1, c_mpps);
        c.lost = Some(0);
        r.cross_check = Some(records::step::CrossCheck::judge(&r, c));
        r
    }

    #[test]
    fn cross_checked_steps_get_their_own_table_and_csv_columns() {
        let slow = cross_checked(1.0, 1.31);
        let t = render_table(std::slice::from_ref(&slow));
        let row = t.lines().find(|l| l.starts_with("   1   1      1     64      1.000")).unwrap_or_else(|| panic!("{t}"));
        assert!(row.contains("     1.310 ") && row.contains("receiver    0.76  blast's loop"), "{row}");
        assert!(t.contains("  step 1 run 1: the C loop carried 1.31x more (receiver-side): blast's loop is the limit at this step"), "{t}");
        assert!(!render_table(&[rec(0, 1, 1.0)]).contains("cross-check"));
        let c = render_csv(&[slow, rec(1, 2, 2.0)]);
        let lines: Vec<&str> = c.lines().collect();
        let header: Vec<&str> = lines[0].split(',').collect();
        let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let f: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(
            (f[at("c_loop_sent_mpps")], f[at("c_loop_received_mpps")], f[at("blast_over_c_loop")], f[at("cross_check")]),
            ("1.310000", "1.310000", "0.76", "blast")
        );
        let g: Vec<&str> = lines[2].split(',').collect();
        assert_eq!((g[at("blast_over_c_loop")], g[at("cross_check")]), ("", ""), "no --cross-check: empty");
        assert_eq!(g.len(), header.len());
    }

    fn two_port_step() -> StepRecord {
        let mut r = rec(0, 2, 4.0);
        for i in 0..2u16 {
            let n = 2_000_000u64;
            r.ports.push(crate::PortStep {
                port: i,
                name: format!("net_memif{i}"),
                queues: 1,
                sent: Rates::over(n, n * 64, 1.0),
                received: Some(Rates::over(n, n * 64, 1.0)),
                receiver_port: Some(format!("net_memif{i}")),
                loss_pct: Some(0.0),
                verdict: Some(limits::verdict(&limits::WindowCounters {
                    offered: Some(n),
                    accepted: n,
                    sender_opackets: n,
                    received: Some(n),
                    ..Default::default()
                })),
                ..Default::default()
            });
        }
        r
    }

    #[test]
    fn several_ports_get_a_row_each_under_their_step() {
        let t = render_table(&[two_port_step()]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 5, "{t}");
        assert!(lines[3].contains("p0") && lines[3].contains("none (net_memif0 -> net_memif0)"), "{}", lines[3]);
        assert!(lines[4].contains("p1") && lines[4].contains("2.000"), "{}", lines[4]);
        let c = render_csv(&[two_port_step()]);
        let rows: Vec<&str> = c.lines().collect();
        assert_eq!(rows.len(), 4);
        let cols = CSV_HEADER.split(',').count();
        for l in &rows {
            assert_eq!(l.split(',').count(), cols, "{l}");
        }
        assert!(rows[2].ends_with(",0,") && rows[3].ends_with(",1,"), "{c}");
    }
}
