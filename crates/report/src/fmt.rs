//! How figures are written in the report: fixed decimals, so columns line
//! up and a figure reads the same in every table.

use crate::doc::Cell;
use crate::record::J;

/// A measured rate: three decimals, or three significant figures below
/// 0.1 Mpps (0.0067 is "0.00670": three decimals would make it 0.007).
pub fn mpps(x: f64) -> String {
    if x.is_finite() && x > 0.0 && x < 0.1 {
        let decimals = (2 - x.log10().floor() as i32).clamp(3, 9) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.3}")
    }
}

/// A rate a result claims the path carries (NDR, PDR, knee, committable):
/// never rounded up, written as the knee's own sentences write it.
pub fn capacity(x: f64) -> String {
    knee::mpps_floor(x)
}

/// Rates that several records give of one figure: one when they write
/// the same, else lowest to highest ("0.0592-0.0596").
pub fn mpps_range((lo, hi): (f64, f64)) -> String {
    if mpps(lo) == mpps(hi) {
        mpps(lo)
    } else {
        format!("{}-{}", mpps(lo), mpps(hi))
    }
}

pub fn gbps(x: f64) -> String {
    format!("{x:.2}")
}

pub fn pct(x: f64) -> String {
    format!("{x:.2}%")
}

pub fn opt(x: Option<f64>, f: fn(f64) -> String) -> String {
    x.map(f).unwrap_or_else(|| "-".to_string())
}

pub fn us(x: f64) -> String {
    format!("{x:.1}")
}

/// A step's limit, with the verdict's evidence as its note: every limit
/// found (most frames first), or why the verdict is unknown.
pub fn step_limit_cell(s: &ladder::StepRecord) -> Cell {
    verdict_cell(s.limit(), s.verdict.as_ref(), s.error.as_ref().map(|e| e.0.as_str()))
}

/// A limit's label with its verdict's evidence as the note, or why the
/// verdict is unknown, or why nothing was measured (`error`).
pub fn verdict_cell(label: String, verdict: Option<&limits::Verdict>, error: Option<&str>) -> Cell {
    let label = if label.is_empty() { "n/a".to_string() } else { label };
    if let Some(why) = verdict.and_then(|v| v.invalid.as_deref()) {
        return Cell::noted(label, format!("unknown: {why}"));
    }
    if let Some(err) = error {
        return Cell::noted(label, format!("not measured: {err}"));
    }
    let limits = verdict.map_or(&[][..], |v| v.limits.as_slice());
    let evidence: Vec<String> = limits.iter().map(|l| format!("{} ({}): {}", l.kind.as_str(), l.side.as_str(), l.evidence)).collect();
    if evidence.is_empty() {
        Cell::new(label)
    } else {
        Cell::noted(label, evidence.join("; "))
    }
}

/// A value's name as the record writes it (an enum's serde name: "held-back").
pub fn written<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// A number as the record writes it ("5.0" for a whole float), where the
/// report quotes the record's own figure.
pub fn as_written(x: f64) -> String {
    serde_json::Value::from(x).to_string()
}

/// The same limit cell, read by path: for the trials and rows not read as types.
pub fn limit_cell(v: J) -> Cell {
    let label = v.text("limit");
    let label = if label.is_empty() { "n/a".to_string() } else { label };
    if let Some(why) = v.str("verdict/invalid") {
        return Cell::noted(label, format!("unknown: {why}"));
    }
    if let Some(err) = v.str("error") {
        return Cell::noted(label, format!("not measured: {err}"));
    }
    let evidence: Vec<String> = v
        .arr("verdict/limits")
        .iter()
        .map(|l| {
            let l = J(l);
            format!("{} ({}): {}", l.text("kind"), l.text("side"), l.text("evidence"))
        })
        .collect();
    if evidence.is_empty() {
        Cell::new(label)
    } else {
        Cell::noted(label, evidence.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_limit_carries_its_evidence_or_why_it_is_unknown() {
        let v = json!({"limit": "pps-allowance", "verdict": {"limits": [{"kind": "pps-allowance", "side": "sender",
            "evidence": "pps_allowance_exceeded rose by 1200"}], "invalid": null}, "error": null});
        let c = limit_cell(J(&v));
        assert_eq!(c.text, "pps-allowance");
        assert_eq!(c.note.as_deref(), Some("pps-allowance (sender): pps_allowance_exceeded rose by 1200"));
        let v = json!({"limit": "unknown", "verdict": {"limits": [], "invalid": "a counter went backwards"}});
        assert_eq!(limit_cell(J(&v)).note.as_deref(), Some("unknown: a counter went backwards"));
        let v = json!({"limit": "n/a", "error": "drop did not answer"});
        assert_eq!(limit_cell(J(&v)).note.as_deref(), Some("not measured: drop did not answer"));
        assert_eq!(limit_cell(J(&json!({"limit": "none"}))).note, None);
    }
}
