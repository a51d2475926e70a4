use std::fmt::Write;

use crate::StepRecord;

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
        let _ = writeln!(
            s,
            "{:>4} {:>3} {:>6} {:>6} {:>5} {:>10} {:>9.3} {:>9} {:>9} {:>9} {:>7} {:>8.3} {:>8} {:>8.1}  {}",
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
            r.sender_cycles_per_packet,
            r.limit()
        );
        // Several ports: each port's share under its step, labelled p0, p1 ...
        for p in &r.ports {
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
    }
    // Latency, when the steps timed reflected probes: its own lines, with
    // the qualifiers a percentile needs (shape, rate, sample count).
    if records.iter().any(|r| r.latency.is_some()) {
        s += &render_latency(records);
    }
    s
}

/// The round-trip table (one row per step that timed probes: offered rate,
/// shape, percentiles, samples, loss, limit), then for each step whose
/// rate ran in several shapes, the even one as the floor and the burstiest
/// as the ceiling, side by side.
pub fn render_latency(records: &[StepRecord]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\nround trip (drop --reflect), microseconds:");
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
            r.limit()
        );
    }
    for line in floor_and_ceiling(records) {
        let _ = writeln!(s, "{line}");
    }
    s
}

/// How bursty a shape is, for ordering: even < poisson < burst:N by N.
fn burstiness_rank(shape: &str) -> u32 {
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
            format!("P50 {:.1} / P99 {:.1} / P99.9 {:.1} us", l.p50_us, l.p99_us, l.p99_9_us)
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

pub const CSV_HEADER: &str = "step,run,queues,size_bytes,size_mix,flows,mtu,shape,offered_mpps,sent_mpps,sent_packets,received_mpps,received_packets,\
received_wire_gbps,received_frame_gbps,loss_pct,mpps_per_queue,gain_mpps,sender_cycles_per_packet,ring_full_retries,imissed,rx_nombuf,limit,\
achieved_mpps,frames_per_send,gap_spread,latency_samples,p50_us,p90_us,p99_us,p99_9_us,p99_99_us,max_us,port,error";

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| format!("{x:.6}"))
}

fn int(v: Option<u64>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

fn quoted(t: &str) -> String {
    format!("\"{}\"", t.replace('"', "\"\""))
}

/// The ladder as CSV, one row per step (port "all"), and with several
/// ports one more row per port under it (port 0, 1 ...), with a header.
pub fn render_csv(records: &[StepRecord]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in records {
        let row: Vec<String> = vec![
            (r.step + 1).to_string(),
            r.run.to_string(),
            r.queues.to_string(),
            r.size.to_string(),
            r.size_mix.clone().unwrap_or_default(),
            r.flows.to_string(),
            r.mtu.to_string(),
            r.shape.clone(),
            num(r.offered_mpps),
            format!("{:.6}", r.sent.mpps),
            r.sent.packets.to_string(),
            num(r.received.map(|x| x.mpps)),
            int(r.received.map(|x| x.packets)),
            num(r.received.map(|x| x.wire_gbps)),
            num(r.received.map(|x| x.frame_gbps)),
            num(r.loss_pct),
            format!("{:.6}", r.mpps_per_queue()),
            num(gain(records, r)),
            format!("{:.2}", r.sender_cycles_per_packet),
            r.ring_full_retries.to_string(),
            int(r.receiver.as_ref().map(|f| f.imissed)),
            int(r.receiver.as_ref().map(|f| f.rx_nombuf)),
            quoted(&r.limit()),
            num(r.achieved_shape.map(|a| a.achieved_mpps)),
            num(r.achieved_shape.map(|a| a.frames_per_send)),
            num(r.achieved_shape.map(|a| a.gap_spread)),
            int(r.latency.map(|l| l.count)),
            num(r.latency.filter(|l| l.count > 0).map(|l| l.p50_us)),
            num(r.latency.filter(|l| l.count > 0).map(|l| l.p90_us)),
            num(r.latency.filter(|l| l.count > 0).map(|l| l.p99_us)),
            num(r.latency.filter(|l| l.count > 0).map(|l| l.p99_9_us)),
            num(r.latency.filter(|l| l.count > 0).map(|l| l.p99_99_us)),
            num(r.latency.filter(|l| l.count > 0).map(|l| l.max_us)),
            "all".into(),
            r.error.as_deref().map(quoted).unwrap_or_default(),
        ];
        s.push_str(&row.join(","));
        s.push('\n');
        for p in &r.ports {
            let per_queue = p.received.map_or(p.sent.mpps, |x| x.mpps) / f64::from(p.queues.max(1));
            let mut row: Vec<String> = vec![
                (r.step + 1).to_string(),
                r.run.to_string(),
                p.queues.to_string(),
                r.size.to_string(),
                r.size_mix.clone().unwrap_or_default(),
                String::new(),
                r.mtu.to_string(),
                r.shape.clone(),
                String::new(),
                format!("{:.6}", p.sent.mpps),
                p.sent.packets.to_string(),
                num(p.received.map(|x| x.mpps)),
                int(p.received.map(|x| x.packets)),
                num(p.received.map(|x| x.wire_gbps)),
                num(p.received.map(|x| x.frame_gbps)),
                num(p.loss_pct),
                format!("{per_queue:.6}"),
                String::new(),
                String::new(),
                String::new(),
                int(p.receiver_imissed),
                String::new(),
                quoted(&p.limit()),
            ];
            row.extend(std::iter::repeat_n(String::new(), 10));
            row.push(p.port.to_string());
            row.push(String::new());
            s.push_str(&row.join(","));
            s.push('\n');
        }
    }
    s
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
        assert!(t.contains("round trip (drop --reflect), microseconds:"), "{t}");
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
    fn csv_has_a_row_per_step_and_fixed_columns() {
        let mut failed = rec(2, 4, 0.0);
        failed.error = Some("peer vanished, \"x\"".into());
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
