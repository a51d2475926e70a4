//! The report: one HTML file a person reads and shares, and the same in
//! Markdown, from any mix of blastdrop's records (ladder, knee, fixed-rate,
//! replay, group, single and drop's own). Several ladder runs also make the
//! atlas: one row per instance type or label. No EAL, no network: it reads
//! JSON and writes text.
//!
//! - [`record`]: reading a record, refusing a schema version not known.
//! - [`env`], [`figures`]: where a run ran, and the warnings said first.
//! - `ladder_part`, `knee_part`, `other_part`, `overtime`: each kind's tables and plots.
//! - [`atlas`]: the per-instance table.
//! - [`doc`]: the document both [`html`] and [`markdown`] write.

pub mod atlas;
pub mod doc;
pub mod env;
pub mod figures;
mod fmt;
pub mod html;
mod knee_part;
mod ladder_part;
pub mod markdown;
mod other_part;
mod overtime;
pub mod record;

pub use doc::{Block, Cell, Doc, Section, Table};
pub use record::{Kind, ReadError, Record, KNOWN_SCHEMA_VERSIONS};

/// The report of these records, in the order given.
pub fn build(records: &[Record]) -> Result<Doc, String> {
    let mut doc = Doc { title: title(records), warnings: warnings(records), ..Doc::default() };
    if let Some(s) = atlas_section(records)? {
        doc.sections.push(s);
    }
    for (i, r) in records.iter().enumerate() {
        doc.sections.push(run_section(i + 1, r, records.len() > 1)?);
    }
    Ok(doc)
}

/// Every run's warnings, a warning several runs share said once with their names.
fn warnings(records: &[Record]) -> Vec<String> {
    let mut said: Vec<(String, Vec<String>)> = Vec::new();
    for r in records {
        for w in env::warnings(r).into_iter().chain(figures::warnings(r)) {
            match said.iter_mut().find(|(text, _)| *text == w) {
                Some((_, files)) => files.push(r.file_name()),
                None => said.push((w, vec![r.file_name()])),
            }
        }
    }
    said.into_iter().map(|(w, files)| format!("{}: {w}", files.join(", "))).collect()
}

fn title(records: &[Record]) -> String {
    let mut labels: Vec<&str> = records.iter().filter_map(|r| r.label.as_deref()).collect();
    labels.dedup();
    match (records.len(), labels.is_empty()) {
        (1, _) => format!("blastdrop report: {} ({})", records[0].file_name(), records[0].kind.name()),
        (n, true) => format!("blastdrop report: {n} runs"),
        (n, false) => format!("blastdrop report: {n} runs ({})", labels.join(", ")),
    }
}

/// The atlas, when there is more than one ladder run or a labelled one.
fn atlas_section(records: &[Record]) -> Result<Option<Section>, String> {
    let (usable, notes) = atlas::usable(records);
    if usable.len() < 2 && !usable.iter().any(|r| r.label.is_some()) {
        // Ladders were given for an atlas but could not make one: say why.
        let ladders = records.iter().filter(|r| r.kind == Kind::Ladder).count();
        if notes.is_empty() || (ladders < 2 && !records.iter().any(|r| r.kind == Kind::Ladder && r.label.is_some())) {
            return Ok(None);
        }
        let mut s = Section::new(2, "Atlas: not made");
        s.push(Block::Warnings(notes));
        return Ok(Some(s));
    }
    let rows = atlas::rows(&usable)?;
    let mut s = Section::new(2, "Atlas: one row per instance type or label");
    s.push(Block::Para(
        "Mpps on one queue and the wall are at the smallest unpaced frame size; the wall is where adding queues stopped helping, kpps per published Gb/s is the wall over the published bandwidth; the crossover is the first frame size whose Gb/s of frames came within 3% of the published figure; Gb/s columns are the best received Gb/s of frames at that size, against the published figure.".into(),
    ));
    for t in atlas::tables(&rows) {
        s.push(Block::Table(t));
    }
    if !notes.is_empty() {
        s.push(Block::Warnings(notes));
    }
    Ok(Some(s))
}

/// A run's section; with several runs it repeats the run's own warnings
/// (the top of the report lists every run's).
fn run_section(n: usize, r: &Record, repeat_warnings: bool) -> Result<Section, String> {
    let label = r.label.as_deref().map_or(String::new(), |l| format!(" [{l}]"));
    let mut s = Section::new(2, format!("Run {n}: {} — {}{label}", r.kind.name(), r.file_name()));
    let mut w = env::warnings(r);
    w.extend(figures::warnings(r));
    if repeat_warnings && !w.is_empty() {
        s.push(Block::Warnings(w));
    }
    s.push(Block::Facts(env::facts(r)));
    let sentences = match r.kind {
        Kind::Ladder => {
            ladder_part::blocks(r, &mut s)?;
            ladder_part::sentences(r)
        }
        Kind::Knee => {
            knee_part::blocks(r, &mut s)?;
            knee_part::sentences(r)
        }
        Kind::Single => {
            other_part::single(r, &mut s);
            other_part::sentences(r)
        }
        Kind::Replay => {
            other_part::replay(r, &mut s);
            other_part::sentences(r)
        }
        Kind::Drop => {
            other_part::drop(r, &mut s);
            other_part::sentences(r)
        }
    };
    over_time(r, &mut s);
    let mut all = sentences;
    all.extend(over_time_sentences(r));
    if !all.is_empty() {
        s.push(Block::Para("Sentences to paste (every qualifier included):".into()));
        s.push(Block::Sentences(all));
    }
    Ok(s)
}

/// The run's series plot; for a ladder, each step whose rate moved.
fn over_time(r: &Record, s: &mut Section) {
    let j = r.j();
    if !j.at("series").is_null() {
        let title = format!("{} over time", r.file_name());
        if let Some(p) = overtime::plot(j.at("series"), j.at("series_analysis"), &title) {
            s.push(p);
        }
    }
    for st in j.arr("step_series").iter().map(record::J) {
        let moved = !st.arr("analysis/changes").is_empty() || !st.at("analysis/bucket").is_null();
        if moved {
            let title = format!("step {} (run {}) over time", st.u64("step").map_or(0, |x| x + 1), st.text("run"));
            if let Some(p) = overtime::plot(st.at("series"), st.at("analysis"), &title) {
                s.push(p);
            }
        }
    }
}

fn over_time_sentences(r: &Record) -> Vec<String> {
    let j = r.j();
    let mut out: Vec<String> = j.str("series_analysis/sentence").map(|x| format!("Over time: {x}")).into_iter().collect();
    // A step whose rate held says so in one line for all such steps.
    let (mut steady, mut rule) = (Vec::new(), String::new());
    for st in j.arr("step_series").iter().map(record::J) {
        let name = match st.u64("run") {
            Some(run) if run > 1 => format!("{}.{run}", st.u64("step").map_or(0, |x| x + 1)),
            _ => st.u64("step").map_or(0, |x| x + 1).to_string(),
        };
        let found = !st.arr("analysis/changes").is_empty() || !st.at("analysis/bucket").is_null() || !st.arr("analysis/onsets").is_empty();
        match st.str("analysis/sentence") {
            Some(x) if found => out.push(format!("Step {name} over time: {x}")),
            Some(_) => {
                rule = format!(
                    "a change is {}% or more, held {} s or more",
                    st.text("analysis/thresholds/min_change_pct"),
                    st.text("analysis/thresholds/min_hold_s")
                );
                steady.push(name)
            }
            None => {}
        }
    }
    if !steady.is_empty() {
        out.push(format!("Steps {} over time: no change ({rule}, beyond the noise)", steady.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::path::Path;

    /// A ladder that left queue counts out says so above its tables and in
    /// every sentence, so its wall is not read as that of the counts asked for.
    #[test]
    fn a_ladder_with_counts_left_out_says_which_and_why() {
        let dropped = json!([{"queues": [2, 4], "port": "drop's port m0 (net_memif)", "limit": 1, "what": "RX queues"}]);
        let v = json!({"tool": "blast", "mode": "ladder", "schema_version": 1, "steps": [], "aggregates": [],
            "ladder": {"queues": [1], "dropped": dropped},
            "analysis": {"receiver_side": true, "ceilings": [{"size": 64, "shape": "even", "limit": "none",
                "ceiling": {"mpps": 1.0, "mpps_per_queue_first": 1.0, "queues": 1}}]}});
        let r = Record::from_json(Path::new("d.json"), v, None).unwrap();
        let said = "queue count(s) 2, 4 (drop's port m0 (net_memif) has at most 1 RX queues)";
        assert!(ladder_part::sentences(&r).iter().all(|s| s.contains(&format!("Not run: {said}."))), "{:?}", ladder_part::sentences(&r));
        assert!(!ladder_part::sentences(&r).is_empty());
        let d = build(std::slice::from_ref(&r)).unwrap();
        assert!(markdown::render(&d, |n| n.to_string()).text.contains(&format!("Not run: {said}.")));
        // A whole ladder says nothing of it.
        let v = json!({"tool": "blast", "mode": "ladder", "schema_version": 1, "steps": [], "aggregates": [], "ladder": {"dropped": []}});
        let r = Record::from_json(Path::new("w.json"), v, None).unwrap();
        assert!(!markdown::render(&build(std::slice::from_ref(&r)).unwrap(), |n| n.to_string()).text.contains("Not run"));
    }

    /// Records of a known version whose fields are missing or of the wrong
    /// type: the report says what it cannot read or shows less; it never panics.
    #[test]
    fn mangled_records_give_an_error_or_less_never_a_panic() {
        let wrong: [Value; 6] = [json!(null), json!(7), json!("x"), json!([1, "a"]), json!({"a": 1}), json!(-1.5)];
        let fields = [
            "steps",
            "aggregates",
            "analysis",
            "environment",
            "config",
            "summary",
            "trials",
            "result",
            "series",
            "windows",
            "step_series",
            "capture",
        ];
        for (tool, mode) in [("blast", "ladder"), ("blast", "knee"), ("blast", "single"), ("blast", "replay"), ("drop", "")] {
            for f in fields {
                for w in &wrong {
                    let v = json!({"tool": tool, "mode": mode, "schema_version": 1, f: w});
                    let r = Record::from_json(Path::new("m.json"), v, Some("l".into())).unwrap();
                    let _ = build(std::slice::from_ref(&r)).map(|d| (html::render(&d), markdown::render(&d, |n| n.to_string())));
                }
            }
        }
        // Interrupted before its first step: nothing to show, and it says so by showing nothing.
        for v in [
            json!({"tool": "blast", "mode": "ladder", "schema_version": 1, "steps": [], "aggregates": [], "interrupted": true}),
            json!({"tool": "blast", "mode": "knee", "schema_version": 1, "trials": [], "latency_under_load": []}),
        ] {
            let r = Record::from_json(Path::new("e.json"), v, None).unwrap();
            let d = build(std::slice::from_ref(&r)).unwrap();
            assert!(html::render(&d).contains("e.json"));
        }
    }
}
