//! A ladder's part of the report: every step with both ends' figures and
//! its verdict, the ceilings, the bandwidth crossover, the fixed-rate
//! latency table with its floor and ceiling, the plot (a group trial's
//! records are shown together: group_part).

use ladder::{Aggregate, StepRecord};
use records::ladder::LadderBody;

use crate::doc::{Block, Cell, Section, Table};
use crate::fmt::{as_written, gbps, mpps, opt, pct, step_limit_cell, us};
use crate::record::Record;

pub fn blocks(r: &Record, l: &LadderBody, s: &mut Section) -> Result<(), String> {
    if let Some(p) = not_run(l) {
        s.push(Block::Para(format!("Not run: {p}. The ceilings below are over the queue counts that ran.")));
    }
    s.push(Block::Table(step_table(l)));
    if let Some(t) = ceiling_table(l) {
        s.push(Block::Table(t));
    }
    if let Some(t) = crossover_table(l) {
        s.push(Block::Table(t));
    }
    if let Some(t) = latency_table(&l.steps) {
        s.push(Block::Table(t));
    }
    if let Some(t) = cross_check_table(&l.steps) {
        s.push(Block::Table(t));
    }
    s.push(plot(r, l)?);
    Ok(())
}

/// The ladder plot, for a group trial's section (the group's figures: any
/// member's record draws the same counts), titled `title`: the group's, not
/// the one member's whose record drew it.
pub fn plot_block(r: &Record, l: &LadderBody, title: &str) -> Result<Block, String> {
    plot_titled(r, l, title)
}

fn step_table(l: &LadderBody) -> Table {
    let side = if l.analysis.receiver_side { "received Mpps (drop)" } else { "received Mpps (none: no --peer)" };
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
    for v in &l.steps {
        let step = v.step + 1;
        let size = match &v.size_mix {
            Some(mix) => format!("{} (mix {mix}: mean)", v.size),
            None => v.size.to_string(),
        };
        t.row(vec![
            Cell::new(if v.run > 1 { format!("{step}.{}", v.run) } else { step.to_string() }),
            v.queues.to_string().into(),
            size.into(),
            v.flows.to_string().into(),
            v.mtu.to_string().into(),
            v.shape.clone().into(),
            opt(v.offered_mpps, mpps).into(),
            mpps(v.sent.mpps).into(),
            opt(v.received.map(|r| r.mpps), mpps).into(),
            opt(v.received.map(|r| r.frame_gbps), gbps).into(),
            opt(v.loss_pct, pct).into(),
            v.lost.map_or_else(|| "unknown".to_string(), |l| l.to_string()).into(),
            step_limit_cell(v),
        ]);
    }
    t
}

fn ceiling_table(l: &LadderBody) -> Option<Table> {
    let a = &l.analysis;
    if a.ceilings.is_empty() {
        return None;
    }
    let side = if a.receiver_side { "receiver-side" } else { "sender-side" };
    let mut t = Table::new(
        format!("Ceilings ({side}): where adding queues stopped helping (within {}%)", as_written(a.ceiling_threshold_pct)),
        &["size B", "offered Mpps", "shape", "1 queue Mpps", "wall Mpps", "at queues", "scaled linearly before", "limit"],
    );
    for v in &a.ceilings {
        let c = &v.ceiling;
        t.row(vec![
            v.size.to_string().into(),
            opt(v.offered_mpps, mpps).into(),
            v.shape.clone().into(),
            mpps(c.mpps_per_queue_first).into(),
            mpps(c.mpps).into(),
            Cell::new(if c.reached { c.queues.to_string() } else { format!("not reached by {}", c.queues) }),
            c.linear_before.to_string().into(),
            v.limit.clone().into(),
        ]);
    }
    Some(t)
}

fn crossover_table(l: &LadderBody) -> Option<Table> {
    let c = l.analysis.crossover.as_ref()?;
    let published = c.published_gbps;
    let exceeded = c.sizes.iter().any(|v| v.gbps > published * ladder::ABOVE_PUBLISHED);
    let first = match c.first_size {
        _ if exceeded => "none: a size carried more than 3% above the published figure, which does not bound this port (a software port, or the wrong --published-gbps)".to_string(),
        Some(s) => format!("{s} B"),
        None => "none of the sizes run".to_string(),
    };
    let mut t = Table::new(
        format!("Bandwidth crossover against the published {published} Gb/s: first size within 3% of it: {first}"),
        &["size B", "best received Gb/s (frames)", "of published", "held by"],
    );
    for v in &c.sizes {
        t.row(vec![v.size.to_string().into(), gbps(v.gbps).into(), pct(100.0 * v.gbps / published).into(), v.held_by.clone().into()]);
    }
    Some(t)
}

/// The cross-checked steps (--cross-check): both windows' figures, blast's
/// over the C loop's as the record rounded it, and the finding in words.
fn cross_check_table(steps: &[StepRecord]) -> Option<Table> {
    let checked: Vec<(&StepRecord, &ladder::CrossCheck)> =
        steps.iter().filter(|s| s.error.is_none()).filter_map(|s| s.cross_check.as_ref().map(|x| (s, x))).collect();
    if checked.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Cross-check: each step again at once with blast-ref's plain C send loop on the same queues (unpaced); blast/C on the basis named",
        &[
            "step",
            "queues",
            "size B",
            "blast sent Mpps",
            "blast received Mpps",
            "C sent Mpps",
            "C received Mpps",
            "basis",
            "blast/C",
            "finding",
        ],
    );
    for (s, x) in checked {
        let c = &x.c_lanes;
        t.row(vec![
            Cell::new(if s.run > 1 { format!("{}.{}", s.step + 1, s.run) } else { (s.step + 1).to_string() }),
            s.queues.to_string().into(),
            s.size.to_string().into(),
            mpps(s.sent.mpps).into(),
            opt(s.received.map(|r| r.mpps), mpps).into(),
            mpps(c.sent.mpps).into(),
            opt(c.received.map(|r| r.mpps), mpps).into(),
            x.basis.as_str().into(),
            x.ratio_text().into(),
            Cell::noted(x.finding.as_str(), x.sentence.clone()),
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

/// The ladder's picture with the caption it comes with, or a line that says
/// why there is none.
fn plot(r: &Record, l: &LadderBody) -> Result<Block, String> {
    let port = &l.environment.sender.port;
    plot_titled(r, l, &format!("{} ({}): {}", port.name, port.driver, r.file_name()))
}

fn plot_titled(r: &Record, l: &LadderBody, title: &str) -> Result<Block, String> {
    // Made again from the typed steps, as blast's own --plot makes them:
    // the record's `aggregates` do not carry each point's verdict class (it
    // is not serialised), and read back every point would be "n/a".
    let mut aggs = Aggregate::from_records(&l.steps);
    aggs.sort_by_key(|a| (a.size, a.queues));
    // The flags are read by path: the record keeps them as given (docs/json.md).
    let opts = ladder::LadderPlot { receiver: l.analysis.receiver_side, title, published_gbps: r.j().f64("config/published_gbps") };
    let latency = ladder::LatencyPoint::from_records(&l.steps);
    match ladder::render_svg(&aggs, &opts, &latency).map_err(|e| format!("{}: cannot draw the ladder: {e}", r.file_name()))? {
        ladder::Plot::Drawn(p) => Ok(Block::Plot { caption: p.caption, svg: p.svg }),
        ladder::Plot::Nothing(why) => Ok(Block::Para(format!("No plot: {why}."))),
    }
}

/// The queue counts the ladder left out before its first step, and why
/// (`ladder.dropped`); None when every count asked for ran.
fn not_run(l: &LadderBody) -> Option<String> {
    let parts: Vec<String> = l
        .ladder
        .dropped
        .iter()
        .map(|d| {
            let counts: Vec<String> = d.queues.iter().map(|q| q.to_string()).collect();
            format!("queue count(s) {} ({} has at most {} {})", counts.join(", "), d.port, d.limit, d.what)
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The sentences to paste: each ceiling with every qualifier, and the crossover.
pub fn sentences(r: &Record, l: &LadderBody) -> Vec<String> {
    let side =
        if l.analysis.receiver_side { "received (receiver-side)" } else { "accepted by tx_burst (sender-side only: not what arrived)" };
    let flows = crate::env::flows_phrase(r.j().at("config"));
    let mut out: Vec<String> = l.analysis.ceilings.iter().map(|c| ceiling_sentence(l, c, side, &flows)).collect();
    if let Some(p) = not_run(l) {
        for s in &mut out {
            // A wall "at N queues" read from a ladder cut short is the wall of the counts that ran.
            s.push_str(&format!(" Not run: {p}."));
        }
    }
    if let Some((p, size)) = l.analysis.crossover.as_ref().and_then(|x| Some((x.published_gbps, x.first_size?))) {
        let mtu = mtu_clause(l.steps.iter().filter(|s| s.size >= size));
        out.push(format!("Frames of {size} B and larger reach the published {p} Gb/s within 3% ({side}, {flows}{mtu})."));
    }
    out
}

/// ", MTU 1500" when the steps agree on one, else nothing (no MTU to state).
fn mtu_clause<'a>(mut steps: impl Iterator<Item = &'a StepRecord>) -> String {
    let Some(first) = steps.next().map(|s| s.mtu) else { return String::new() };
    if steps.all(|s| s.mtu == first) {
        format!(", MTU {first}")
    } else {
        String::new()
    }
}

/// One ceiling with every qualifier; a clause with nothing to say is left
/// out: no wall when adding queues still helped, no second figure when one
/// queue count ran, "per queue at N queues" when the first count was not 1.
fn ceiling_sentence(l: &LadderBody, c: &records::ladder::SizeCeiling, side: &str, flows: &str) -> String {
    let port = &l.environment.sender.port;
    let steps: Vec<&StepRecord> = l
        .steps
        .iter()
        .filter(|s| s.size == c.size && s.shape == c.shape && s.offered_mpps == c.offered_mpps && s.error.is_none())
        .collect();
    let counts: std::collections::BTreeSet<u16> = steps.iter().map(|s| s.queues).collect();
    let first = counts.first().copied().unwrap_or(1);
    let x = &c.ceiling;
    let start = if first == 1 {
        format!("{} Mpps {side} on 1 queue", mpps(x.mpps_per_queue_first))
    } else {
        format!("{} Mpps per queue {side} at {first} queues", mpps(x.mpps_per_queue_first))
    };
    let wall = match (x.reached, counts.len()) {
        (true, _) => format!(" and a wall of {} Mpps at {} queue(s)", mpps(x.mpps), x.queues),
        (false, n) if n > 1 => format!(" and {} Mpps at {} queue(s), still rising (no wall reached)", mpps(x.mpps), x.queues),
        _ => String::new(),
    };
    let rate = c.offered_mpps.map_or(String::new(), |o| format!(" paced at {} Mpps,", mpps(o)));
    let mtu = mtu_clause(steps.iter().copied());
    format!(
        "{} ({}): {start}{wall},{rate} {} B frames{mtu}, {} arrivals, {flows}; held by: {}.",
        port.name, port.driver, c.size, c.shape, c.limit
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ladder::drawn::{drawn_points, drawn_texts, DrawnPoint};
    use std::path::Path;

    /// Every figure of the step table and the sentences is the typed
    /// record's own field, as blast wrote it.
    #[test]
    fn a_real_ladders_tables_show_its_typed_fields() {
        let r = Record::from_json(Path::new("ladder.json"), crate::tests::real_ladder(), None).unwrap();
        let l = r.ladder().unwrap();
        let t = step_table(&l);
        assert_eq!(t.rows.len(), l.steps.len());
        assert!(!t.rows.is_empty());
        for (row, s) in t.rows.iter().zip(&l.steps) {
            let col = |name: &str| &row[t.header.iter().position(|h| h == name).unwrap()].text;
            assert_eq!(*col("size B"), s.size.to_string());
            assert_eq!(*col("sent Mpps (blast)"), mpps(s.sent.mpps));
            assert_eq!(*col("limit"), s.limit());
            assert_eq!(*col("limit"), r.json["steps"][s.step]["limit"], "the label as written");
        }
        // Sender-side: no receiver column figures, and the port named in the plot's title.
        assert!(!l.analysis.receiver_side);
        let Block::Plot { svg, .. } = plot(&r, &l).unwrap() else { panic!("a plot") };
        assert!(svg.contains(&l.environment.sender.port.name), "the port's name in the title");
    }

    /// A real cross-checked ladder (blast to drop over memif, release
    /// builds, 2026-12-05): the cross-check table's every cell is the
    /// typed record's, the ratio as the record rounded it, the finding's
    /// sentence in its note.
    #[test]
    fn a_real_cross_checked_ladders_table_is_its_records() {
        let json: serde_json::Value = serde_json::from_str(include_str!("../testdata/ladder-cross-check.json")).unwrap();
        let r = Record::from_json(Path::new("cc.json"), json, None).unwrap();
        let l = r.ladder().unwrap();
        let t = cross_check_table(&l.steps).expect("a cross-check table");
        assert_eq!(t.rows.len(), l.steps.len());
        for (row, s) in t.rows.iter().zip(&l.steps) {
            let x = s.cross_check.as_ref().expect("every unpaced step cross-checked");
            let col = |name: &str| &row[t.header.iter().position(|h| h == name).unwrap()];
            assert_eq!(col("blast received Mpps").text, mpps(s.received.unwrap().mpps));
            assert_eq!(col("C received Mpps").text, mpps(x.c_lanes.received.unwrap().mpps));
            assert_eq!(col("C sent Mpps").text, mpps(x.c_lanes.sent.mpps));
            assert_eq!(col("basis").text, "receiver-side");
            assert_eq!(col("blast/C").text, x.ratio.map_or("-".to_string(), |v| format!("{v:.2}")));
            assert_eq!(col("finding").text, x.finding.as_str());
            assert_eq!(col("finding").note.as_deref(), Some(x.sentence.as_str()));
        }
        assert!(cross_check_table(&crate::tests::real_ladder_steps()).is_none(), "no --cross-check, no table");
    }

    /// The ladder's picture as drawn, read back from its SVG: each step's
    /// point in its size's marker (one queue, two sizes: two markers apart),
    /// filled with the colour of its typed verdict's class; the legend
    /// names the classes, never "n/a"; the caption says what is drawn.
    #[test]
    fn a_real_ladders_plot_carries_each_steps_verdict() {
        let r = Record::from_json(Path::new("ladder.json"), crate::tests::real_ladder(), None).unwrap();
        let l = r.ladder().unwrap();
        let Block::Plot { svg, caption } = plot(&r, &l).unwrap() else { panic!("a plot") };
        let points: Vec<DrawnPoint> = drawn_points(&svg).unwrap().into_iter().filter(|p| p.x < 700.0).collect();
        let mut sizes: Vec<u32> = l.steps.iter().map(|s| s.size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        assert!(sizes.len() > 1 && l.steps.iter().all(|s| s.queues == 1), "the record: one queue, several sizes");
        assert_eq!(points.len(), l.steps.len());
        for s in &l.steps {
            let (shape, outline) = ladder::series_marker(sizes.iter().position(|z| *z == s.size).unwrap());
            let p = points.iter().find(|p| p.shape == shape && p.outline == outline).expect("the size's marker");
            assert_eq!(p.fill, ladder::verdict_color(s.class()), "step {}: {}", s.step + 1, s.limit());
        }
        let words: Vec<String> = drawn_texts(&svg).unwrap().into_iter().map(|t| t.text).collect();
        assert!(words.contains(&ladder::verdict_words(l.steps[0].class())) && l.steps[0].limit() == "sender", "{words:?}");
        assert!(!words.iter().any(|w| w.contains("n/a")), "{words:?}");
        assert_eq!(
            caption,
            "Mpps sent (blast: no receiver) against queues (2 series (frame sizes), each its own marker shape and colour, \
             set side by side at each queue count), and Gb/s against frame size at each size's best queue count; \
             each point filled with its verdict's colour (legend)"
        );
    }

    /// Steps whose verdicts are gone are drawn light grey and the caption
    /// says no point carries a verdict; a ladder with no measured step is
    /// not drawn, and the report says why.
    #[test]
    fn a_plot_says_what_it_has() {
        let mut v = crate::tests::real_ladder();
        for s in v["steps"].as_array_mut().unwrap() {
            s["verdict"] = serde_json::Value::Null;
        }
        let r = Record::from_json(Path::new("ladder.json"), v.clone(), None).unwrap();
        let Block::Plot { svg, caption } = plot(&r, &r.ladder().unwrap()).unwrap() else { panic!("a plot") };
        assert!(caption.ends_with("no point carries a verdict: all are light grey"), "{caption}");
        assert!(drawn_points(&svg).unwrap().iter().all(|p| p.fill == ladder::verdict_color(limits::VerdictClass::NotJudged)));
        for s in v["steps"].as_array_mut().unwrap() {
            s["error"] = "the port stopped".into();
        }
        let r = Record::from_json(Path::new("ladder.json"), v, None).unwrap();
        let Block::Para(said) = plot(&r, &r.ladder().unwrap()).unwrap() else { panic!("an empty frame drawn") };
        assert_eq!(said, "No plot: no step was measured (none ran, or every step failed).");
    }
}
