//! A run's figures over time: its series rebuilt from the record's columns,
//! plotted by the series crate, with the record's own sentence.

use serde_json::Value;
use series::{CounterKind, Row, Series, Thresholds};

use crate::doc::Block;
use crate::record::J;

/// The series a record stored as columns (docs/json.md, "A Series object").
pub fn rebuild(columns: J) -> Option<Series> {
    let t = columns.arr("t_s");
    if t.is_empty() {
        return None;
    }
    let counters: Vec<(String, CounterKind)> = columns
        .at("counters")
        .0
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (k.clone(), if J(v).str("kind") == Some("allowance") { CounterKind::Allowance } else { CounterKind::Watched })
                })
                .collect()
        })
        .unwrap_or_default();
    let interval = columns.f64("interval_s").unwrap_or(1.0);
    let mut s = Series::new(interval, counters.clone(), t.len().max(Series::DEFAULT_MAX_ROWS));
    if let (Some(first), Some(last)) = (columns.f64("trial_first_frame_s"), columns.f64("trial_last_frame_s")) {
        s.trial_frames_at(first);
        s.trial_frames_at(last);
    }
    let at = |col: &str, i: usize| -> Option<u64> { columns.arr(col).get(i).and_then(Value::as_u64) };
    for (i, t_s) in t.iter().enumerate() {
        let latency = ["p50", "p99", "p999", "max"].map(|p| at(&format!("latency_ns/{p}"), i));
        s.push(Row {
            t_s: t_s.as_f64().unwrap_or(0.0),
            secs: columns.arr("secs").get(i).and_then(Value::as_f64).unwrap_or(interval),
            sent_frames: at("sent_frames", i),
            sent_bytes: at("sent_bytes", i),
            received_frames: at("received_frames", i),
            received_bytes: at("received_bytes", i),
            lost: at("lost", i),
            counters: counters
                .iter()
                .map(|(n, _)| at(&format!("counters/{}/deltas", n.replace('~', "~0").replace('/', "~1")), i).unwrap_or(0))
                .collect(),
            latency_ns: if latency.iter().all(Option::is_some) { Some(latency.map(|l| l.unwrap_or(0))) } else { None },
            verdict: columns.arr("verdict").get(i).and_then(Value::as_str).map(str::to_string),
        });
    }
    Some(s)
}

/// The plot of a record's series, marked with the changes found in it (found
/// again from the same columns, by the thresholds the record names).
pub fn plot(series: J, analysis: J, title: &str) -> Option<Block> {
    let s = rebuild(series)?;
    let th = Thresholds {
        min_change_pct: analysis.f64("thresholds/min_change_pct").unwrap_or(Thresholds::default().min_change_pct),
        min_hold_s: analysis.f64("thresholds/min_hold_s").unwrap_or(Thresholds::default().min_hold_s),
    };
    let a = series::analyse(&s, &th);
    let said = analysis.text("sentence");
    let caption = if said.is_empty() || said == a.sentence {
        format!("Over time: {}", a.sentence)
    } else {
        // Not expected (the same columns, the same rules); shown rather than hidden.
        format!("Over time (the record says): {said}. Found again from its columns: {}", a.sentence)
    };
    Some(Block::Plot { caption, svg: series::svg(&s, &a, title) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_series_comes_back_from_its_columns() {
        let mut s = Series::new(1.0, vec![("pps_allowance_exceeded".into(), CounterKind::Allowance)], 100);
        for i in 1..=5u64 {
            s.push(Row {
                t_s: i as f64,
                secs: 1.0,
                received_frames: Some(1000 * i),
                received_bytes: Some(64_000 * i),
                counters: vec![i],
                latency_ns: Some([1, 2, 3, 4]),
                ..Row::default()
            });
        }
        s.trial_frames_at(0.4);
        s.trial_frames_at(4.6);
        let v = serde_json::to_value(&s).unwrap();
        let back = rebuild(J(&v)).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), v);
        assert!(rebuild(J(&json!({"interval_s": 1.0}))).is_none());
    }
}
