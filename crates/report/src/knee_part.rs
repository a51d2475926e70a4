//! A knee search's part: the result with what bounds it, every trial, the
//! latency under load, and the loss-against-rate plot.

use ladder::{KneePoint, LatencyPoint, StepRecord};

use crate::doc::{Block, Cell, Section, Table};
use crate::fmt::{capacity, limit_cell, mpps, opt, pct, us};
use crate::record::{Record, J};

pub fn blocks(r: &Record, s: &mut Section) -> Result<(), String> {
    let res = r.j().at("result");
    let q = r.j().at("qualifiers");
    s.push(Block::Para(format!(
        "Qualifiers: {} queue(s), {} B frames, {} flows, MTU {}, {} arrivals; searched up to {} Mpps.",
        q.text("queues"),
        q.text("size"),
        q.text("flows"),
        q.text("mtu"),
        q.text("shape"),
        opt(r.j().f64("max_rate_mpps"), mpps)
    )));
    let mut t =
        Table::new("The knee (receiver-side: what drop counted of each trial's frames)", &["figure", "Mpps", "in words", "bounded by"]);
    t.row(vec![
        "NDR (no loss)".into(),
        opt(res.f64("ndr_mpps"), capacity).into(),
        res.text("ndr").into(),
        res.text("ndr_bounded_by").into(),
    ]);
    t.row(vec![
        "PDR (loss within --pdr-loss)".into(),
        opt(res.f64("pdr_mpps"), capacity).into(),
        res.text("pdr").into(),
        res.text("pdr_bounded_by").into(),
    ]);
    t.row(vec!["knee".into(), opt(res.f64("knee_mpps"), capacity).into(), "".into(), limit_above(res)]);
    t.row(vec!["committable (70% of the knee)".into(), opt(res.f64("committable_mpps"), capacity).into(), "".into(), "".into()]);
    s.push(Block::Table(t));
    s.push(Block::Table(trial_table(r)));
    if let Some(t) = under_load(r) {
        s.push(Block::Table(t));
    }
    s.push(plot(r)?);
    Ok(())
}

fn limit_above(res: J) -> Cell {
    match res.str("limit_above") {
        Some(l) => Cell::noted(l, "the verdict of the first failing trial above the knee"),
        None if res.bool("sender_limited") == Some(true) => {
            Cell::noted("sender", "the sender delivered no more, or the top passed: the knee is a lower bound")
        }
        None => Cell::new("-"),
    }
}

fn trial_table(r: &Record) -> Table {
    let mut t = Table::new(
        "Every trial, in the order run",
        &["#", "kind", "offered Mpps", "delivered", "sent Mpps (blast)", "received Mpps (drop)", "loss", "NDR pass", "PDR pass", "limit"],
    );
    for (i, v) in r.j().arr("trials").iter().enumerate() {
        let v = J(v);
        let kind = match v.str("goal") {
            Some(g) => format!("{} ({g})", v.text("kind")),
            None => v.text("kind"),
        };
        t.row(vec![
            (i + 1).to_string().into(),
            kind.into(),
            opt(v.f64("offered_mpps"), mpps).into(),
            opt(v.f64("delivered_pct"), pct).into(),
            opt(v.f64("sent/mpps"), mpps).into(),
            opt(v.f64("received/mpps"), mpps).into(),
            opt(v.f64("loss_pct"), pct).into(),
            v.text("ndr_pass").into(),
            v.text("pdr_pass").into(),
            limit_cell(v),
        ]);
    }
    t
}

fn under_load(r: &Record) -> Option<Table> {
    let l = r.j().arr("latency_under_load");
    if l.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Latency under load: round trip at shares of the knee, microseconds",
        &["share of knee", "offered Mpps", "P50", "P99", "P99.9", "max", "samples"],
    );
    for v in l {
        let v = J(v);
        let s = v.at("step");
        t.row(vec![
            format!("{}%", v.text("share_pct")).into(),
            opt(s.f64("offered_mpps"), mpps).into(),
            opt(s.f64("latency/p50_us"), us).into(),
            opt(s.f64("latency/p99_us"), us).into(),
            opt(s.f64("latency/p99.9_us"), us).into(),
            opt(s.f64("latency/max_us"), us).into(),
            s.text("latency/count").into(),
        ]);
    }
    Some(t)
}

fn plot(r: &Record) -> Result<Block, String> {
    let mut points = Vec::new();
    for v in r.j().arr("trials") {
        let step: StepRecord = serde_json::from_value(v.clone()).map_err(|e| format!("{}: cannot read a trial: {e}", r.file_name()))?;
        if step.error.is_some() {
            continue;
        }
        let t = J(v);
        points.push(KneePoint {
            offered_mpps: t.f64("counted_at_mpps").or(step.offered_mpps).unwrap_or(step.sent.mpps),
            loss_pct: step.loss_pct.unwrap_or(0.0),
            class: step.class(),
            confirmation: t.str("kind") == Some("confirm"),
        });
    }
    let loaded: Vec<StepRecord> =
        r.j().arr("latency_under_load").iter().filter_map(|v| serde_json::from_value(J(v).at("step").0.clone()).ok()).collect();
    let latency = LatencyPoint::from_records(&loaded);
    let res = r.j().at("result");
    let title = format!("knee search: {}", r.file_name());
    let svg = ladder::render_knee_svg(&points, res.f64("ndr_mpps"), res.f64("pdr_mpps"), &latency, &title)
        .map_err(|e| format!("{}: cannot draw the knee: {e}", r.file_name()))?;
    Ok(Block::Plot { caption: "Loss against offered rate, one point per trial, NDR and PDR marked".into(), svg })
}

pub fn sentences(r: &Record) -> Vec<String> {
    r.j().str("result/sentence").map(|s| vec![s.to_string()]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    /// An NDR of 0.0067 Mpps is written 0.00670, never 0.007: a capacity is
    /// never rounded up, and keeps three significant figures.
    #[test]
    fn results_are_never_rounded_up() {
        let v = json!({"tool": "blast", "mode": "knee", "schema_version": 1,
            "qualifiers": {"queues": 1, "size": 64, "flows": 1, "mtu": 1500, "shape": "even"}, "max_rate_mpps": 0.135,
            "result": {"ndr_mpps": 0.0067, "pdr_mpps": 0.00679, "knee_mpps": 0.00679, "committable_mpps": 0.004753,
                "ndr": "0.00670 Mpps", "pdr": "0.00679 Mpps", "ndr_bounded_by": "path", "pdr_bounded_by": "path", "limit_above": "receiver"},
            "trials": [], "latency_under_load": []});
        let r = Record::from_json(Path::new("k.json"), v, None).unwrap();
        let mut s = Section { level: 2, heading: "k".into(), blocks: vec![] };
        let _ = blocks(&r, &mut s);
        let Some(Block::Table(t)) = s.blocks.iter().find(|b| matches!(b, Block::Table(_))) else { panic!("no table") };
        let col: Vec<&str> = t.rows.iter().map(|row| row[1].text.as_str()).collect();
        assert_eq!(col, ["0.00670", "0.00679", "0.00679", "0.00475"]);
        assert_eq!(t.rows[2][3].text, "receiver");
    }
}
