//! A run's figures over time: its series as the record's type holds it,
//! plotted by the series crate, with the record's own sentence.

use series::{Analysis, Series, Thresholds};

use crate::doc::Block;

/// The plot of a record's series, marked with the changes found in it (found
/// again from the same columns, by the thresholds the record names); for a
/// series with nothing to draw (no rows, no counts), a line that says so.
pub fn plot(s: &Series, analysis: Option<&Analysis>, title: &str) -> Option<Block> {
    if let Some(why) = series::nothing_to_plot(s) {
        return Some(Block::Para(format!("No plot of {title}: {why}.")));
    }
    let th = analysis.map_or_else(Thresholds::default, |a| a.thresholds);
    let a = series::analyse(s, &th);
    let said = analysis.map_or("", |a| a.sentence.as_str());
    let shows = series::shows(s, &a);
    let caption = if said.is_empty() || said == a.sentence {
        format!("Over time: {shows}. {}", a.sentence)
    } else {
        // Not expected (the same columns, the same rules); shown rather than hidden.
        format!("Over time: {shows}. The record says: {said}. Found again from its columns: {}", a.sentence)
    };
    Some(Block::Plot { caption, svg: series::svg(s, &a, title) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use series::{CounterKind, Row};

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
        // The record's columns read back as its type (series' Deserialize).
        let back: Series = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), v);
        let none: Series = serde_json::from_value(json!({"interval_s": 1.0, "merges": 0, "t_s": [], "secs": []})).unwrap();
        let Some(Block::Para(said)) = plot(&none, None, "x.json over time") else { panic!("no rows: words, not a plot") };
        assert_eq!(said, "No plot of x.json over time: the series has no intervals.");
        let Some(Block::Plot { caption, .. }) = plot(&back, None, "rows") else { panic!("rows: a plot") };
        assert!(
            caption.starts_with(
                "Over time: received Mpps over time, each allowance counter's onset marked; \
                 latency percentiles (P50, P99, P99.9, max) per interval. no change"
            ),
            "{caption}"
        );
    }
}
