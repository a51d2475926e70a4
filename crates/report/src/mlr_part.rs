//! An RFC 9971 search's part: each Search Goal with its attributes and its
//! Goal Result in the RFC's terms, the statements the RFC asks a report to
//! make, every trial with the load it counted at, and latency at shares of
//! the last goal's conditional throughput. Every figure is the record's.

use records::mlr::MlrBody;

use crate::doc::{Block, Section, Table};
use crate::fmt::{capacity, mpps, opt, step_limit_cell, written};
use crate::knee_part::under_load;

pub fn blocks(k: &MlrBody, s: &mut Section) {
    let q = &k.qualifiers;
    s.push(Block::Para(format!(
        "Qualifiers: {} queue(s), {} B frames, {} flows, MTU {}, {} arrivals; Max Load {} Mpps, Min Load {} Mpps{}; {} trials{}.",
        q.queues,
        q.size,
        q.flows,
        q.mtu,
        q.shape,
        capacity(k.max_load / 1e6),
        mpps(k.min_load / 1e6),
        if k.top_load < k.max_load {
            format!(" (capped at {} Mpps: the sender carried no more)", capacity(k.top_load / 1e6))
        } else {
            String::new()
        },
        k.trials.len(),
        ended(k)
    )));
    s.push(Block::Table(goal_table(k)));
    let st = &k.statements;
    let mut said = vec![format!("Units: {}.", st.units), format!("Frames counted: {}.", st.frames_counted)];
    said.extend(st.deviations.iter().map(|d| format!("Deviation: {d}")));
    s.push(Block::Facts(said.into_iter().enumerate().map(|(i, t)| (if i < 2 { "stated" } else { "deviates" }.to_string(), t)).collect()));
    s.push(Block::Table(trial_table(k)));
    if let Some(b) = &k.back_to_back {
        crate::knee_part::back_to_back(b, s);
    }
    if let Some(t) = k.goals.last().and_then(|g| under_load(&k.latency_under_load, &format!("{}'s conditional throughput", g.goal.name))) {
        s.push(Block::Table(t));
    }
}

/// How the search ended, after the trial count.
fn ended(k: &MlrBody) -> String {
    match (&k.ended, &k.failure) {
        (_, Some(f)) => format!(", then stopped: {f}"),
        (Some(mlr::search::Ended::TrialLimit), None) => ", its bound on trials reached before every goal was decided".into(),
        (None, None) if k.interrupted => ", interrupted".into(),
        _ => String::new(),
    }
}

fn goal_table(k: &MlrBody) -> Table {
    let mut t = Table::new(
        "Search Goals and their results (receiver-side: what drop counted of each trial's frames; Mpps, never rounded up)",
        &[
            "goal",
            "loss ratio",
            "exceed ratio",
            "final trial, s",
            "duration sum, s",
            "width",
            "relevant lower bound",
            "relevant upper bound",
            "conditional throughput",
            "in words",
        ],
    );
    for g in &k.goals {
        let a = &g.goal;
        t.row(vec![
            a.name.clone().into(),
            a.loss_ratio.to_string().into(),
            a.exceed_ratio.to_string().into(),
            a.final_trial_duration.to_string().into(),
            a.duration_sum.to_string().into(),
            format!("{}%", a.width * 100.0).into(),
            opt(g.relevant_lower_bound.map(|v| v / 1e6), capacity).into(),
            opt(g.relevant_upper_bound.map(|v| v / 1e6), capacity).into(),
            opt(g.conditional_throughput.map(|v| v / 1e6), capacity).into(),
            g.text.clone().into(),
        ]);
    }
    t
}

fn trial_table(k: &MlrBody) -> Table {
    let mut t = Table::new(
        "Every trial, in the order run (loads in Mpps; offered: blast's TX lanes; lost: not counted by drop)",
        &["#", "for goal", "why", "intended load", "counted at", "duration, s", "offered", "lost", "loss ratio", "limit"],
    );
    for (i, v) in k.trials.iter().enumerate() {
        t.row(vec![
            (i + 1).to_string().into(),
            format!("{} (target {})", v.for_goal, v.target_level).into(),
            written(&v.reason).into(),
            mpps(v.intended_load / 1e6).into(),
            mpps(v.load / 1e6).into(),
            v.intended_duration.to_string().into(),
            v.offered.to_string().into(),
            v.lost.to_string().into(),
            format!("{:.3e}", v.loss_ratio).into(),
            step_limit_cell(&v.step),
        ]);
    }
    t
}

/// The headline: the last goal's result (PDR by default), with the others'.
pub fn headline(k: &MlrBody) -> String {
    let goals: Vec<String> = k.goals.iter().map(|g| format!("goal {}: {}", g.goal.name, g.text)).collect();
    let q = &k.qualifiers;
    format!(
        "RFC 9971 search, {}; {} queue(s), {} B, {} flows, MTU {}, {}; receiver-side{}",
        goals.join("; "),
        q.queues,
        q.size,
        q.flows,
        q.mtu,
        q.shape,
        ended(k)
    )
}

pub fn sentences(k: &MlrBody) -> Vec<String> {
    k.sentence.iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;
    use std::path::Path;

    /// A search's record, as blast writes it, cut to what the tables read.
    fn record() -> serde_json::Value {
        serde_json::from_str(include_str!("../testdata/mlr.json")).expect("the test search is JSON")
    }

    /// Every figure of the goal and trial tables is the typed record's own field.
    #[test]
    fn a_searchs_tables_show_its_typed_fields() {
        let r = Record::from_json(Path::new("mlr.json"), record(), None).unwrap();
        let k = r.mlr().unwrap();
        let mut s = Section::new(2, "m");
        blocks(&k, &mut s);
        let tables: Vec<&Table> = s.blocks.iter().filter_map(|b| if let Block::Table(t) = b { Some(t) } else { None }).collect();
        let goals = tables[0];
        assert_eq!(goals.rows.len(), k.goals.len());
        for (row, g) in goals.rows.iter().zip(&k.goals) {
            assert_eq!(row[0].text, g.goal.name);
            assert_eq!(row[6].text, opt(g.relevant_lower_bound.map(|v| v / 1e6), capacity));
            assert_eq!(row[8].text, opt(g.conditional_throughput.map(|v| v / 1e6), capacity));
            assert_eq!(row[9].text, g.text);
        }
        let trials = tables[1];
        assert_eq!(trials.rows.len(), k.trials.len());
        for (row, t) in trials.rows.iter().zip(&k.trials) {
            assert_eq!((row[6].text.clone(), row[7].text.clone()), (t.offered.to_string(), t.lost.to_string()));
            assert_eq!(row[4].text, mpps(t.load / 1e6));
        }
        let Some(Block::Facts(f)) = s.blocks.iter().find(|b| matches!(b, Block::Facts(_))) else { panic!("no statements") };
        assert!(f.iter().any(|(_, t)| t.starts_with("Frames counted: ")) && f.iter().any(|(k, _)| k == "deviates"), "{f:?}");
        let h = headline(&k);
        for g in &k.goals {
            assert!(h.contains(&format!("goal {}: {}", g.goal.name, g.text)), "{h}");
        }
        assert_eq!(sentences(&k), k.sentence.iter().cloned().collect::<Vec<_>>());
    }
}
