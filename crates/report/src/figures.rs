//! Warnings a run's figures carry (a short sender, an account that does not
//! add up, lanes the host stood still, a shape that did not hold, a step
//! not measured), each with its kind and the step or trial it belongs to,
//! so that the top of the report can group them.

use ladder::StepRecord;
use records::drop::DropBody;

use crate::fmt::{step_limit_cell, verdict_cell};
use crate::record::{Body, Record};
use crate::warning::{Kind, Place, Warning};

pub fn warnings(r: &Record) -> Vec<Warning> {
    // A record that does not read as its type has none: its section says why.
    let Ok(body) = r.body() else { return Vec::new() };
    match body {
        Body::Ladder(l) => l.steps.iter().flat_map(|s| step(s, step_place(s))).collect(),
        Body::Knee(k) => {
            let mut w: Vec<Warning> = k.trials.iter().enumerate().flat_map(|(i, t)| step(&t.step, Place::Trial(i + 1))).collect();
            if k.result.sender_limited {
                w.push(Warning::new(Kind::KneeLowerBound, Place::Run, k.result.pdr.clone()));
            }
            w
        }
        Body::Mlr(k) => k.trials.iter().enumerate().flat_map(|(i, t)| step(&t.step, Place::Trial(i + 1))).collect(),
        Body::Single(b) => {
            let m = &b.summary;
            let short = (m.limit == "sender" && m.offered_mpps.is_some()).then(|| verdict_cell(m.limit.clone(), Some(&m.verdict), None));
            summary(short, None, m.shape_bunched.as_deref(), Some(&m.stalls))
        }
        // A replay's summary has no pace, shape or stalls of its own.
        Body::Replay(b) => summary(None, Some(&b.summary.timing), None, None),
        Body::Drop(d) => drop(&d),
    }
}

/// How many places a run's warnings count: its steps or its trials.
pub fn places(r: &Record) -> (&'static str, usize) {
    match r.body() {
        Ok(Body::Ladder(l)) => ("step", l.steps.len()),
        Ok(Body::Knee(k)) => ("trial", k.trials.len()),
        Ok(Body::Mlr(k)) => ("trial", k.trials.len()),
        _ => ("step", 0),
    }
}

fn step_place(s: &StepRecord) -> Place {
    Place::Step { step: s.step, repeat: s.run }
}

/// One step's: not measured (and nothing else), counts or verdict unknown,
/// a shape not held, a sender that held back, lanes that stood still.
fn step(s: &StepRecord, at: Place) -> Vec<Warning> {
    if let Some(e) = &s.error {
        return vec![Warning::new(Kind::NotMeasured, at, e.to_string())];
    }
    let mut w = Vec::new();
    if let Some(e) = &s.accounting_error {
        w.push(Warning::new(Kind::CountsDoNotAddUp, at, e.clone()));
    } else if let Some(e) = s.verdict.as_ref().and_then(|v| v.invalid.as_ref()) {
        w.push(Warning::new(Kind::VerdictUnknown, at, e.clone()));
    }
    if s.limit() == "sender" {
        w.push(Warning::new(Kind::SenderShort, at, step_limit_cell(s).note.unwrap_or_default()));
    }
    if let Some(x) = s.cross_check.as_ref().filter(|x| x.finding == records::step::Finding::Blast) {
        w.push(Warning::new(Kind::BlastLoopLimit, at, x.sentence.clone()));
    }
    if let Some(b) = &s.shape_bunched {
        w.push(Warning::new(Kind::ShapeNotHeld, at, b.clone()));
    }
    if let Some(st) = &s.stalls {
        let receiver = st.receiver.as_ref();
        if st.sender.count + receiver.map_or(0, |r| r.count) > 0 {
            let mut x = Warning::new(Kind::LanesStalled, at, "");
            x.longest_ms = Some(st.sender.longest_ms.max(receiver.map_or(0.0, |r| r.longest_ms)));
            w.push(x);
        }
    }
    w
}

/// A single run's or a replay's: a paced sender that fell short (its limit
/// cell), a capture's timing not held, a shape that did not hold, stalls.
fn summary(
    short: Option<crate::doc::Cell>,
    timing: Option<&records::replay::TimingRecord>,
    shape_bunched: Option<&str>,
    stalls: Option<&records::window::LaneStalls>,
) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(c) = short {
        w.push(Warning::new(Kind::SenderShort, Place::Run, format!("it fell short of its pace: {}", c.note.unwrap_or_default())));
    }
    if let Some(t) = timing.filter(|t| !t.held) {
        w.push(Warning::new(Kind::TimingNotHeld, Place::Run, format!("{} frames left more than 50 us late", t.late_frames)));
    }
    if let Some(b) = shape_bunched {
        w.push(Warning::new(Kind::ShapeNotHeld, Place::Run, b));
    }
    if let Some(s) = stalls.filter(|s| s.count > 0) {
        // The count stays in the run's own table; the grouped line says the longest.
        let mut x = Warning::new(Kind::LanesStalled, Place::Run, "");
        x.longest_ms = Some(s.longest_ms);
        w.push(x);
    }
    w
}

fn drop(d: &DropBody) -> Vec<Warning> {
    let m = &d.summary;
    let mut w = Vec::new();
    if m.port_counters_reset {
        w.push(Warning::new(Kind::CountersWentBackwards, Place::Run, ""));
    }
    if m.faults > 0 {
        w.push(Warning::new(Kind::FaultsCaught, Place::Run, format!("{} fault(s)", m.faults)));
    }
    let incomplete = d.history.windows.iter().filter(|v| v.incomplete.is_some()).count();
    if incomplete > 0 {
        w.push(Warning::new(Kind::IncompleteWindows, Place::Run, format!("{incomplete} window(s)")));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn drop_record(changes: impl FnOnce(&mut serde_json::Value)) -> Record {
        let mut v: serde_json::Value = serde_json::from_str(include_str!("../testdata/drop.json")).unwrap();
        changes(&mut v);
        Record::from_json(Path::new("drop.json"), v, None).unwrap()
    }

    /// drop's faults are a count: read as a list by path they never warned.
    /// The real record (drop --listen, its memif peer gone at the end) had
    /// its counters reset and one burst fault.
    #[test]
    fn drops_faults_and_incomplete_windows_are_warned_of() {
        let reset = "the device's counters went backwards (memif resets them when its peer leaves: the port counters are the last read before that)";
        let text = |w: Vec<Warning>| w.iter().map(Warning::text).collect::<Vec<_>>();
        assert_eq!(text(warnings(&drop_record(|_| ()))), [reset, "faults caught when the peer left under a burst: 1 fault(s)"]);
        let w = warnings(&drop_record(|v| {
            v["summary"]["faults"] = serde_json::json!(0);
            v["windows"][3]["incomplete"] = serde_json::json!("the client went away");
        }));
        assert_eq!(text(w), [reset, "incomplete windows (their client went away: not measurements): 1 window(s)"]);
    }

    /// A knee bounded by its sender says so, in the result's own words (its
    /// place among the warnings is its kind's severity).
    #[test]
    fn a_sender_limited_knee_is_a_lower_bound_first() {
        let mut v = crate::tests::real_knee();
        v["result"]["sender_limited"] = serde_json::json!(true);
        let r = Record::from_json(Path::new("knee.json"), v, None).unwrap();
        let pdr = r.json["result"]["pdr"].as_str().unwrap().to_string();
        let w = warnings(&r);
        let bound: Vec<&Warning> = w.iter().filter(|w| w.kind == Kind::KneeLowerBound).collect();
        assert_eq!(bound.len(), 1);
        assert_eq!(bound[0].text(), format!("the knee is a lower bound: {pdr}"));
    }

    /// A cross-check that found blast's own loop the limit is a warning of its
    /// own, with the finding's sentence; one that did not is none.
    #[test]
    fn blasts_loop_found_the_limit_is_warned_of() {
        let step = |blast: u64, c: u64| {
            let at = |n: u64| StepRecord {
                queues: 1,
                size: 64,
                sent: ladder::Rates::over(n, n * 64, 1.0),
                received: Some(ladder::Rates::over(n, n * 64, 1.0)),
                lost: Some(0),
                ..Default::default()
            };
            let mut s = at(blast);
            s.cross_check = Some(ladder::CrossCheck::judge(&s, at(c)));
            s
        };
        let w = super::step(&step(1_000_000, 1_310_000), Place::Step { step: 0, repeat: 1 });
        let x = w.iter().find(|w| w.kind == Kind::BlastLoopLimit).expect("a blast-loop-limit warning");
        assert_eq!(
            x.text(),
            "step 1: blast's own send loop was the limit (--cross-check: the plain C loop on the same queues carried more, so those figures are blast's, not the path's): \
             the C loop carried 1.31x more (receiver-side): blast's loop is the limit at this step"
        );
        assert!(super::step(&step(1_000_000, 1_010_000), Place::Step { step: 0, repeat: 1 })
            .iter()
            .all(|w| w.kind != Kind::BlastLoopLimit));
    }
}
