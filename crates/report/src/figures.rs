//! Warnings a run's figures carry (a short sender, an account that does not
//! add up, lanes the host stood still, a shape that did not hold, a step
//! not measured): gathered so they stand at the top of the report.

use crate::record::{Kind, Record, J};

pub fn warnings(r: &Record) -> Vec<String> {
    match r.kind {
        Kind::Ladder => steps(r.j().arr("steps").iter().map(J).collect()),
        Kind::Knee => {
            let mut w = steps(r.j().arr("trials").iter().map(J).collect());
            if r.j().bool("result/sender_limited") == Some(true) {
                w.insert(0, format!("the knee is a lower bound: {}", r.j().text("result/pdr")));
            }
            w
        }
        Kind::Single | Kind::Replay => summary(r),
        Kind::Drop => drop(r),
    }
}

fn step_name(s: J) -> String {
    let n = s.u64("step").map_or(0, |x| x + 1);
    match s.u64("run") {
        Some(run) if run > 1 => format!("step {n} (run {run})"),
        _ => format!("step {n}"),
    }
}

/// Step by step, then the short senders and stalls summed up.
fn steps(steps: Vec<J>) -> Vec<String> {
    let mut w = Vec::new();
    let mut short: Vec<String> = Vec::new();
    let (mut stalled, mut longest) = (0, 0.0f64);
    for s in &steps {
        let name = step_name(*s);
        if let Some(e) = s.str("error") {
            w.push(format!("{name} was not measured: {e}"));
            continue;
        }
        if let Some(e) = s.str("accounting_error") {
            w.push(format!("{name}: the counts do not add up ({e}); its verdict is unknown"));
        } else if let Some(e) = s.str("verdict/invalid") {
            w.push(format!("{name}: verdict unknown: {e}"));
        }
        if let Some(b) = s.str("shape_bunched") {
            w.push(format!("{name}: the arrival shape did not hold: {b}"));
        }
        if s.str("limit") == Some("sender") {
            short.push(name.clone());
        }
        let (a, b) = (s.f64("stalls/sender/longest_ms").unwrap_or(0.0), s.f64("stalls/receiver/longest_ms").unwrap_or(0.0));
        if s.u64("stalls/sender/count").unwrap_or(0) + s.u64("stalls/receiver/count").unwrap_or(0) > 0 {
            stalled += 1;
            longest = longest.max(a).max(b);
        }
    }
    if !short.is_empty() {
        let first = steps.iter().find(|s| s.str("limit") == Some("sender")).map(|s| crate::fmt::limit_cell(*s).note.unwrap_or_default());
        w.push(format!(
            "the sender held back {} of {} steps ({}): their figures are the sender's limit, not the path's. First: {}",
            short.len(),
            steps.len(),
            short.join(", "),
            first.unwrap_or_default()
        ));
    }
    if stalled > 0 {
        w.push(format!("lanes stood still (the host descheduled them) in {stalled} step(s), the longest for {longest:.1} ms"));
    }
    w
}

fn summary(r: &Record) -> Vec<String> {
    let m = r.j().at("summary");
    let mut w = Vec::new();
    if m.str("limit") == Some("sender") && !m.at("offered_mpps").is_null() {
        w.push(format!("the sender fell short of its pace: {}", crate::fmt::limit_cell(m).note.unwrap_or_default()));
    }
    if m.bool("timing/held") == Some(false) {
        w.push(format!("the capture's timing did not hold: {} frames left more than 50 us late", m.text("timing/late_frames")));
    }
    if let Some(b) = m.str("shape_bunched") {
        w.push(format!("the arrival shape did not hold: {b}"));
    }
    if m.u64("stalls/count").unwrap_or(0) > 0 {
        w.push(format!(
            "lanes stood still {} time(s), the longest for {:.1} ms",
            m.text("stalls/count"),
            m.f64("stalls/longest_ms").unwrap_or(0.0)
        ));
    }
    w
}

fn drop(r: &Record) -> Vec<String> {
    let m = r.j().at("summary");
    let mut w = Vec::new();
    if m.bool("port_counters_reset") == Some(true) {
        w.push(
            "the device's counters went backwards (memif, when its peer leaves): the port counters are the last read before that"
                .to_string(),
        );
    }
    if !m.arr("faults").is_empty() {
        w.push(format!("{} fault(s) caught when the peer left under a burst", m.arr("faults").len()));
    }
    let incomplete = r.j().arr("windows").iter().filter(|v| !J(v).at("incomplete").is_null()).count();
    if incomplete > 0 {
        w.push(format!("{incomplete} window(s) are incomplete (their client went away): not measurements"));
    }
    w
}
