//! A ladder's part of the report: every step with both ends' figures and
//! its verdict, the ceilings, the bandwidth crossover, the fixed-rate
//! latency table with its floor and ceiling, a group's members, the plot.

use ladder::{Aggregate, StepRecord};

use crate::doc::{Block, Cell, Section, Table};
use crate::fmt::{gbps, limit_cell, mpps, opt, pct, us};
use crate::record::{Record, J};

/// The ladder's steps as the ladder crate reads them, for its plot.
pub fn steps(r: &Record) -> Result<Vec<StepRecord>, String> {
    serde_json::from_value(r.j().at("steps").0.clone()).map_err(|e| format!("{}: cannot read its steps: {e}", r.file_name()))
}

/// Whether the figures are the receiver's (a ladder run with --peer).
pub fn receiver_side(r: &Record) -> bool {
    r.j().bool("analysis/receiver_side").unwrap_or(false)
}

pub fn blocks(r: &Record, s: &mut Section) -> Result<(), String> {
    if let Some(p) = not_run(r) {
        s.push(Block::Para(format!("Not run: {p}. The ceilings below are over the queue counts that ran.")));
    }
    s.push(Block::Table(step_table(r)));
    if let Some(t) = ceiling_table(r) {
        s.push(Block::Table(t));
    }
    if let Some(t) = crossover_table(r) {
        s.push(Block::Table(t));
    }
    let steps = steps(r)?;
    if let Some(t) = latency_table(&steps) {
        s.push(Block::Table(t));
    }
    if let Some(t) = group_table(r) {
        s.push(Block::Table(t));
    }
    s.push(plot(r, &steps)?);
    Ok(())
}

fn step_table(r: &Record) -> Table {
    let side = if receiver_side(r) { "received Mpps (drop)" } else { "received Mpps (none: no --peer)" };
    let mut t = Table::new(
        "Every step: sender-side figures are what tx_burst accepted, receiver-side what drop counted of the trial's own frames",
        &[
            "step",
            "queues",
            "size B",
            "flows",
            "MTU",
            "shape",
            "offered Mpps",
            "sent Mpps (blast)",
            side,
            "received Gb/s (frames)",
            "loss",
            "lost",
            "limit",
        ],
    );
    for v in r.j().arr("steps") {
        let v = J(v);
        let step = v.u64("step").map_or(0, |s| s + 1);
        let run = v.u64("run").unwrap_or(1);
        let size = match v.str("size_mix") {
            Some(mix) => format!("{} (mix {mix}: mean)", v.text("size")),
            None => v.text("size"),
        };
        t.row(vec![
            Cell::new(if run > 1 { format!("{step}.{run}") } else { step.to_string() }),
            v.text("queues").into(),
            size.into(),
            v.text("flows").into(),
            v.text("mtu").into(),
            v.text("shape").into(),
            opt(v.f64("offered_mpps"), mpps).into(),
            opt(v.f64("sent/mpps"), mpps).into(),
            opt(v.f64("received/mpps"), mpps).into(),
            opt(v.f64("received/frame_gbps"), gbps).into(),
            opt(v.f64("loss_pct"), pct).into(),
            v.u64("lost").map_or_else(|| "unknown".to_string(), |l| l.to_string()).into(),
            limit_cell(v),
        ]);
    }
    t
}

fn ceiling_table(r: &Record) -> Option<Table> {
    let c = r.j().arr("analysis/ceilings");
    if c.is_empty() {
        return None;
    }
    let side = if receiver_side(r) { "receiver-side" } else { "sender-side" };
    let mut t = Table::new(
        format!("Ceilings ({side}): where adding queues stopped helping (within {}%)", r.j().text("analysis/ceiling_threshold_pct")),
        &["size B", "offered Mpps", "shape", "1 queue Mpps", "wall Mpps", "at queues", "scaled linearly before", "limit"],
    );
    for v in c {
        let v = J(v);
        let reached = v.bool("ceiling/reached") == Some(true);
        t.row(vec![
            v.text("size").into(),
            opt(v.f64("offered_mpps"), mpps).into(),
            v.text("shape").into(),
            opt(v.f64("ceiling/mpps_per_queue_first"), mpps).into(),
            opt(v.f64("ceiling/mpps"), mpps).into(),
            Cell::new(if reached { v.text("ceiling/queues") } else { format!("not reached by {}", v.text("ceiling/queues")) }),
            v.text("ceiling/linear_before").into(),
            v.text("limit").into(),
        ]);
    }
    Some(t)
}

fn crossover_table(r: &Record) -> Option<Table> {
    let c = r.j().at("analysis/crossover");
    if c.is_null() {
        return None;
    }
    let published = c.f64("published_gbps")?;
    let exceeded = c.arr("sizes").iter().any(|v| J(v).f64("gbps").is_some_and(|g| g > published * ladder::ABOVE_PUBLISHED));
    let first = match c.u64("first_size") {
        _ if exceeded => "none: a size carried more than 3% above the published figure, which does not bound this port (a software port, or the wrong --published-gbps)".to_string(),
        Some(s) => format!("{s} B"),
        None => "none of the sizes run".to_string(),
    };
    let mut t = Table::new(
        format!("Bandwidth crossover against the published {published} Gb/s: first size within 3% of it: {first}"),
        &["size B", "best received Gb/s (frames)", "of published", "held by"],
    );
    for v in c.arr("sizes") {
        let v = J(v);
        let g = v.f64("gbps");
        t.row(vec![
            v.text("size").into(),
            opt(g, gbps).into(),
            opt(g.map(|g| 100.0 * g / published), pct).into(),
            v.text("held_by").into(),
        ]);
    }
    Some(t)
}

/// Paced steps whose probes were timed (--reflect), with each rate's
/// evenest shape marked as the floor and its burstiest as the ceiling.
fn latency_table(steps: &[StepRecord]) -> Option<Table> {
    let timed: Vec<&StepRecord> = steps.iter().filter(|s| s.error.is_none() && s.latency.is_some_and(|l| l.count > 0)).collect();
    if timed.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Fixed-rate latency: round trip (drop --reflect, both stamps on blast's clock), microseconds",
        &["step", "queues", "size B", "offered Mpps", "shape", "P50", "P99", "P99.9", "max", "samples", "loss", "role", "limit"],
    );
    for s in &timed {
        let l = s.latency.expect("timed");
        let same: Vec<&&StepRecord> = timed
            .iter()
            .filter(|o| o.run == s.run && o.queues == s.queues && o.size == s.size && o.offered_mpps == s.offered_mpps)
            .collect();
        let rank = |o: &StepRecord| ladder::burstiness_rank(&o.shape);
        let role = if same.len() < 2 {
            ""
        } else if same.iter().all(|o| rank(o) >= rank(s)) {
            "floor"
        } else if same.iter().all(|o| rank(o) <= rank(s)) {
            "ceiling"
        } else {
            "between"
        };
        t.row(vec![
            (s.step + 1).to_string().into(),
            s.queues.to_string().into(),
            s.size.to_string().into(),
            opt(s.offered_mpps, mpps).into(),
            s.shape.clone().into(),
            us(l.p50_us).into(),
            us(l.p99_us).into(),
            us(l.p99_9_us).into(),
            us(l.max_us).into(),
            l.count.to_string().into(),
            opt(s.loss_pct, pct).into(),
            role.into(),
            match &s.tail_cause {
                Some(c) => Cell::noted(s.limit(), c.clone()),
                None => Cell::new(s.limit()),
            },
        ]);
    }
    Some(t)
}

/// A group trial's members (--group): each sender's share and its own verdict.
fn group_table(r: &Record) -> Option<Table> {
    let grouped: Vec<J> = r.j().arr("steps").iter().map(J).filter(|s| !s.at("group").is_null()).collect();
    if grouped.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Group trials: every member's frames, counted by drop per member (exact where drop kept each stream's account)",
        &["step", "group", "member", "client", "sent frames", "received", "lost", "member's sender limit"],
    );
    for s in grouped {
        for m in s.arr("group/members") {
            let m = J(m);
            t.row(vec![
                s.u64("step").map_or(0, |x| x + 1).to_string().into(),
                s.text("group/name").into(),
                m.text("member").into(),
                m.text("client").into(),
                m.text("sent_packets").into(),
                m.text("received").into(),
                m.text("lost").into(),
                m.text("sender_limit").into(),
            ]);
        }
    }
    Some(t)
}

fn plot(r: &Record, steps: &[StepRecord]) -> Result<Block, String> {
    // Made again from the steps, as blast's own --plot makes them: the
    // record's `aggregates` do not carry each point's verdict class (it is
    // not serialised), and read back every point would be "limit: n/a".
    let mut aggs = Aggregate::from_records(steps);
    aggs.sort_by_key(|a| (a.size, a.queues));
    let receiver = receiver_side(r);
    let port = r.env().at("port");
    let title = format!("{} ({}): {}", port.text("name"), port.text("driver"), r.file_name());
    let opts = ladder::LadderPlot { receiver, title: &title, published_gbps: r.j().f64("config/published_gbps") };
    let latency = ladder::LatencyPoint::from_records(steps);
    let svg = ladder::render_svg(&aggs, &opts, &latency).map_err(|e| format!("{}: cannot draw the ladder: {e}", r.file_name()))?;
    let side = if receiver { "received (drop)" } else { "sent (blast: no receiver)" };
    Ok(Block::Plot { caption: format!("Mpps {side} against queues, and Gb/s against frame size; points coloured by verdict"), svg })
}

/// The queue counts the ladder left out before its first step, and why
/// (`ladder.dropped`); None when every count asked for ran.
fn not_run(r: &Record) -> Option<String> {
    let parts: Vec<String> = r
        .j()
        .arr("ladder/dropped")
        .iter()
        .map(|d| {
            let d = J(d);
            let counts: Vec<String> = d.arr("queues").iter().map(|q| q.to_string()).collect();
            format!("queue count(s) {} ({} has at most {} {})", counts.join(", "), d.text("port"), d.text("limit"), d.text("what"))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The sentences to paste: each ceiling with every qualifier, and the crossover.
pub fn sentences(r: &Record) -> Vec<String> {
    let receiver = receiver_side(r);
    let side = if receiver { "received (receiver-side)" } else { "accepted by tx_burst (sender-side only: not what arrived)" };
    let port = r.env().at("port");
    let flows = crate::env::flows_phrase(r.j().at("config"));
    let mtu = r.j().arr("steps").first().map(|s| J(s).text("mtu")).unwrap_or_default();
    let mut out = Vec::new();
    for c in r.j().arr("analysis/ceilings") {
        let c = J(c);
        let (Some(wall), Some(first)) = (c.f64("ceiling/mpps"), c.f64("ceiling/mpps_per_queue_first")) else { continue };
        let rate = c.f64("offered_mpps").map_or(String::new(), |o| format!(" paced at {} Mpps,", mpps(o)));
        out.push(format!(
            "{} ({}): {} Mpps {side} on 1 queue and a wall of {} Mpps at {} queue(s),{rate} {} B frames, MTU {mtu}, {} arrivals, {flows}; held by: {}.",
            port.text("name"),
            port.text("driver"),
            mpps(first),
            mpps(wall),
            c.text("ceiling/queues"),
            c.text("size"),
            c.text("shape"),
            c.text("limit")
        ));
    }
    if let Some(p) = not_run(r) {
        for s in &mut out {
            // A wall "at N queues" read from a ladder cut short is the wall of the counts that ran.
            s.push_str(&format!(" Not run: {p}."));
        }
    }
    let x = r.j().at("analysis/crossover");
    if let (Some(p), Some(size)) = (x.f64("published_gbps"), x.u64("first_size")) {
        out.push(format!("Frames of {size} B and larger reach the published {p} Gb/s within 3% ({side}, {flows}, MTU {mtu})."));
    }
    out
}
