//! A knee search's part: the result with what bounds it, every trial, the
//! latency under load, and the loss-against-rate plot.

use ladder::{KneePoint, LatencyPoint, StepRecord};
use records::knee::{KneeBody, KneeResult, LoadPoint};

use crate::doc::{Block, Cell, Section, Table};
use crate::fmt::{capacity, mpps, opt, pct, step_limit_cell, us, written};
use crate::record::Record;

pub fn blocks(r: &Record, k: &KneeBody, s: &mut Section) -> Result<(), String> {
    let (res, q) = (&k.result, &k.qualifiers);
    s.push(Block::Para(format!(
        "Qualifiers: {} queue(s), {} B frames, {} flows, MTU {}, {} arrivals; searched up to {} Mpps.",
        q.queues,
        q.size,
        q.flows,
        q.mtu,
        q.shape,
        mpps(k.max_rate_mpps)
    )));
    let mut t =
        Table::new("The knee (receiver-side: what drop counted of each trial's frames)", &["figure", "Mpps", "in words", "bounded by"]);
    let bound = |b: &Option<knee::Bound>| b.as_ref().map_or_else(String::new, written);
    t.row(vec!["NDR (no loss)".into(), opt(res.ndr_mpps, capacity).into(), res.ndr.clone().into(), bound(&res.ndr_bounded_by).into()]);
    t.row(vec![
        "PDR (loss within --pdr-loss)".into(),
        opt(res.pdr_mpps, capacity).into(),
        res.pdr.clone().into(),
        bound(&res.pdr_bounded_by).into(),
    ]);
    t.row(vec!["knee".into(), opt(res.knee_mpps, capacity).into(), "".into(), limit_above(res)]);
    t.row(vec!["committable (70% of the knee)".into(), opt(res.committable_mpps, capacity).into(), "".into(), "".into()]);
    s.push(Block::Table(t));
    s.push(Block::Table(trial_table(k)));
    if let Some(t) = under_load(&k.latency_under_load, "the knee") {
        s.push(Block::Table(t));
    }
    if let Some(b) = &k.back_to_back {
        back_to_back(b, s);
    }
    s.push(plot(r, k)?);
    Ok(())
}

/// The back-to-back test's summary (RFC 9004 section 6.5's figures) and
/// where it deviates from RFC 9004.
pub fn back_to_back(b: &records::b2b::BackToBack, s: &mut Section) {
    let m = &b.summary;
    let mut t = Table::new(
        format!("Back-to-back frames (RFC 2544 26.4, RFC 9004): {} repetition(s); throughput: {}", b.repetitions, b.throughput_from),
        &[
            "average frames",
            "min",
            "max",
            "sd",
            "burst rate Mpps",
            "throughput Mpps",
            "implied buffer, us",
            "corrected buffer, us",
            "in words",
        ],
    );
    t.row(vec![
        format!("{:.1}", m.average_frames).into(),
        m.min_frames.to_string().into(),
        m.max_frames.to_string().into(),
        format!("{:.1}", m.stddev_frames).into(),
        mpps(m.max_rate_fps / 1e6).into(),
        capacity(m.throughput_fps / 1e6).into(),
        us(m.implied_buffer_time_s * 1e6).into(),
        opt(m.corrected_buffer_time_s.map(|c| c * 1e6), us).into(),
        b.text.clone().into(),
    ]);
    s.push(Block::Table(t));
    let mut said = vec![("maximum rate".to_string(), b.max_rate_from.clone())];
    said.extend(b.deviations.iter().map(|d| ("deviates".to_string(), d.clone())));
    s.push(Block::Facts(said));
}

fn limit_above(res: &KneeResult) -> Cell {
    match &res.limit_above {
        Some(l) => Cell::noted(l.clone(), "the verdict of the first failing trial above the knee"),
        None if res.sender_limited => Cell::noted("sender", "the sender delivered no more, or the top passed: the knee is a lower bound"),
        None => Cell::new("-"),
    }
}

fn trial_table(k: &KneeBody) -> Table {
    let mut t = Table::new(
        "Every trial, in the order run",
        &["#", "kind", "offered Mpps", "delivered", "sent Mpps (blast)", "received Mpps (drop)", "loss", "NDR pass", "PDR pass", "limit"],
    );
    for (i, v) in k.trials.iter().enumerate() {
        let kind = match &v.goal {
            Some(g) => format!("{} ({})", written(&v.kind), written(g)),
            None => written(&v.kind),
        };
        t.row(vec![
            (i + 1).to_string().into(),
            kind.into(),
            opt(v.step.offered_mpps, mpps).into(),
            pct(v.delivered_pct).into(),
            mpps(v.step.sent.mpps).into(),
            opt(v.step.received.map(|r| r.mpps), mpps).into(),
            opt(v.step.loss_pct, pct).into(),
            v.ndr_pass.to_string().into(),
            v.pdr_pass.to_string().into(),
            step_limit_cell(&v.step),
        ]);
    }
    t
}

/// Latency at shares of `of` (the knee, a goal's conditional throughput).
pub fn under_load(points: &[LoadPoint], of: &str) -> Option<Table> {
    if points.is_empty() {
        return None;
    }
    let share = format!("share of {of}");
    let mut t = Table::new(
        format!("Latency under load: round trip at shares of {of}, microseconds"),
        &[share.as_str(), "offered Mpps", "P50", "P99", "P99.9", "max", "samples"],
    );
    for v in points {
        let (s, l) = (&v.step, v.step.latency.as_ref());
        t.row(vec![
            format!("{}%", v.share_pct).into(),
            opt(s.offered_mpps, mpps).into(),
            opt(l.map(|l| l.p50_us), us).into(),
            opt(l.map(|l| l.p99_us), us).into(),
            opt(l.map(|l| l.p99_9_us), us).into(),
            opt(l.map(|l| l.max_us), us).into(),
            l.map_or_else(String::new, |l| l.count.to_string()).into(),
        ]);
    }
    Some(t)
}

fn plot(r: &Record, k: &KneeBody) -> Result<Block, String> {
    let points: Vec<KneePoint> = k.trials.iter().filter_map(KneePoint::of).collect();
    let loaded: Vec<StepRecord> = k.latency_under_load.iter().map(|l| l.step.clone()).collect();
    let latency = LatencyPoint::from_records(&loaded);
    let title = format!("knee search: {}", r.file_name());
    let plot = ladder::render_knee_svg(&points, k.result.ndr_mpps, k.result.pdr_mpps, &latency, &title)
        .map_err(|e| format!("{}: cannot draw the knee: {e}", r.file_name()))?;
    Ok(match plot {
        ladder::Plot::Drawn(p) => Block::Plot { caption: p.caption, svg: p.svg },
        ladder::Plot::Nothing(why) => Block::Para(format!("No plot: {why}.")),
    })
}

pub fn sentences(k: &KneeBody) -> Vec<String> {
    k.result.sentence.iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ladder::drawn::{drawn_points, drawn_texts};
    use serde_json::json;
    use std::path::Path;

    /// Every figure of the result and trial tables is the typed record's own field.
    #[test]
    fn a_real_knees_tables_show_its_typed_fields() {
        let r = Record::from_json(Path::new("knee.json"), crate::tests::real_knee(), None).unwrap();
        let k = r.knee().unwrap();
        let mut s = Section { level: 2, heading: "k".into(), blocks: vec![] };
        blocks(&r, &k, &mut s).unwrap();
        let tables: Vec<&Table> = s.blocks.iter().filter_map(|b| if let Block::Table(t) = b { Some(t) } else { None }).collect();
        assert_eq!(tables[0].rows[1][1].text, opt(k.result.pdr_mpps, capacity));
        assert_eq!(tables[0].rows[1][2].text, k.result.pdr);
        assert_eq!(tables[0].rows[1][3].text, r.json["result"]["pdr_bounded_by"].as_str().unwrap_or(""), "the bound as written");
        let trials = tables[1];
        assert_eq!(trials.rows.len(), k.trials.len());
        for (row, t) in trials.rows.iter().zip(&k.trials) {
            assert_eq!(row[4].text, mpps(t.step.sent.mpps));
            assert_eq!(row[9].text, t.step.limit());
        }
        assert!(trials.rows.iter().any(|row| row[1].text.starts_with("confirm (")), "a confirmation names its goal");
        assert_eq!(tables[2].rows.len(), k.latency_under_load.len());
        assert_eq!(sentences(&k), k.result.sentence.iter().cloned().collect::<Vec<_>>());
    }

    /// The knee's picture as drawn, read back from its SVG: a point per
    /// trial in order, filled with its typed verdict's colour; the NDR and
    /// PDR labelled on the chart as the result table writes them.
    #[test]
    fn a_real_knees_plot_carries_each_trials_verdict_and_its_marks() {
        let r = Record::from_json(Path::new("knee.json"), crate::tests::real_knee(), None).unwrap();
        let k = r.knee().unwrap();
        let Block::Plot { svg, caption } = plot(&r, &k).unwrap() else { panic!("a plot") };
        let points = drawn_points(&svg).unwrap();
        let loss_panel: Vec<_> = points.iter().filter(|p| p.x < 700.0).collect();
        assert_eq!(loss_panel.len(), k.trials.len());
        // Drawn confirmations first (ladder::in_drawing_order), each in the order run.
        let order = k
            .trials
            .iter()
            .filter(|t| t.kind == knee::TrialKind::Confirm)
            .chain(k.trials.iter().filter(|t| t.kind != knee::TrialKind::Confirm));
        for (p, t) in loss_panel.iter().zip(order) {
            assert_eq!(p.fill, ladder::verdict_color(t.step.class()), "{}", t.step.limit());
        }
        let words: Vec<String> = drawn_texts(&svg).unwrap().into_iter().map(|t| t.text).collect();
        for (name, rate) in [("NDR", k.result.ndr_mpps), ("PDR", k.result.pdr_mpps)] {
            let label = format!("{name} {} Mpps", capacity(rate.unwrap()));
            assert_eq!(words.iter().filter(|w| **w == label).count(), 2, "{label} on the chart and in the legend: {words:?}");
        }
        assert!(!words.iter().any(|w| w.contains("n/a")), "{words:?}");
        assert!(caption.starts_with("Loss against offered rate, one point per trial (confirmations larger), each trial filled with its verdict's colour (legend); NDR and PDR marked, each labelled"), "{caption}");

        let mut v = crate::tests::real_knee();
        v["trials"] = json!([]);
        let r = Record::from_json(Path::new("knee.json"), v, None).unwrap();
        let Block::Para(said) = plot(&r, &r.knee().unwrap()).unwrap() else { panic!("an empty frame drawn") };
        assert_eq!(said, "No plot: no trial was measured (none ran, or every trial failed).");
    }

    /// An NDR of 0.0067 Mpps is written 0.00670, never 0.007: a capacity is
    /// never rounded up, and keeps three significant figures.
    #[test]
    fn results_are_never_rounded_up() {
        let mut v = crate::tests::real_knee();
        v["qualifiers"] = json!({"queues": 1, "size": 64, "flows": 1, "mtu": 1500, "shape": "even"});
        v["max_rate_mpps"] = json!(0.135);
        let changes = json!({"ndr_mpps": 0.0067, "pdr_mpps": 0.00679, "knee_mpps": 0.00679, "committable_mpps": 0.004753,
            "ndr": "0.00670 Mpps", "pdr": "0.00679 Mpps", "ndr_bounded_by": "path", "pdr_bounded_by": "path", "limit_above": "receiver"});
        for (k, x) in changes.as_object().unwrap() {
            v["result"][k] = x.clone();
        }
        v["trials"] = json!([]);
        v["latency_under_load"] = json!([]);
        let r = Record::from_json(Path::new("k.json"), v, None).unwrap();
        let mut s = Section { level: 2, heading: "k".into(), blocks: vec![] };
        let _ = blocks(&r, &r.knee().unwrap(), &mut s);
        let Some(Block::Table(t)) = s.blocks.iter().find(|b| matches!(b, Block::Table(_))) else { panic!("no table") };
        let col: Vec<&str> = t.rows.iter().map(|row| row[1].text.as_str()).collect();
        assert_eq!(col, ["0.00670", "0.00679", "0.00679", "0.00475"]);
        assert_eq!(t.rows[2][3].text, "receiver");
    }
}
