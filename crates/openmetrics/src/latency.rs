//! Latency as a histogram the tool has already binned.
//!
//! `prometheus-client`'s `Histogram` only takes single observations; the
//! tools keep HdrHistograms and hand over cumulative counts at bounds, so
//! this collector keeps the last figures per kind and encodes them through
//! the library's own histogram encoder (which takes per-bucket counts and
//! writes them cumulative, with `_sum` and `_count`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    tool: String,
    kind: String,
}

const HELP: &str = "Probe latency since the run began, from the probes' timestamps as the tool read them: \
kind=\"one_way\" from the sender's stamp to drop's arrival clock (drop --one-way), kind=\"round_trip\" from blast's send to the probe's return (drop --reflect).";

/// One kind's figures: per-bucket (not cumulative) counts ending with +Inf.
#[derive(Debug, Clone, PartialEq)]
struct Figures {
    per_bucket: Vec<(f64, u64)>,
    sum: f64,
    count: u64,
}

/// The last figures given per kind.
#[derive(Debug, Default)]
pub(crate) struct Latency {
    kinds: BTreeMap<String, Figures>,
}

impl Latency {
    /// See `Metrics::set_latency` for the rules.
    pub(crate) fn set(&mut self, kind: &str, buckets: &[(f64, u64)], sum: f64, count: u64) {
        let figures = per_bucket(buckets, sum, count);
        match self.kinds.get_mut(kind) {
            Some(last) if figures.count < last.count => {}
            Some(last) => *last = figures,
            None => {
                self.kinds.insert(kind.to_string(), figures);
            }
        }
    }
}

/// Cumulative counts at ascending bounds into per-bucket counts ending with
/// +Inf, whose cumulative count is the histogram's count.
fn per_bucket(buckets: &[(f64, u64)], sum: f64, count: u64) -> Figures {
    let mut out: Vec<(f64, u64)> = Vec::with_capacity(buckets.len() + 1);
    let mut last_bound = f64::NEG_INFINITY;
    let mut last_cum = 0u64;
    for &(le, cum) in buckets {
        if le.is_nan() || le <= last_bound {
            continue;
        }
        let cum = cum.max(last_cum);
        out.push((le, cum - last_cum));
        last_bound = le;
        last_cum = cum;
    }
    let count = count.max(last_cum);
    match out.last_mut() {
        Some((le, n)) if *le == f64::INFINITY => *n += count - last_cum,
        _ => out.push((f64::INFINITY, count - last_cum)),
    }
    Figures { per_bucket: out, sum, count }
}

/// Encodes the latency family on each scrape.
#[derive(Debug)]
pub(crate) struct LatencyCollector {
    pub(crate) tool: String,
    pub(crate) latency: Arc<Mutex<Latency>>,
}

impl Collector for LatencyCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let latency = self.latency.lock().unwrap_or_else(PoisonError::into_inner);
        // Like the registry's own families: nothing until a series exists.
        if latency.kinds.is_empty() {
            return Ok(());
        }
        let mut family = encoder.encode_descriptor("latency", HELP, Some(&Unit::Seconds), MetricType::Histogram)?;
        for (kind, f) in &latency.kinds {
            let labels = LatencyLabels { tool: self.tool.clone(), kind: kind.clone() };
            family.encode_family(&labels)?.encode_histogram::<NoLabelSet>(f.sum, f.count, &f.per_bucket, None)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_bucket_counts_add_up_to_the_count() {
        let f = per_bucket(&[(1.0, 2), (2.0, 5), (4.0, 5)], 9.0, 7);
        assert_eq!(f.per_bucket, vec![(1.0, 2), (2.0, 3), (4.0, 0), (f64::INFINITY, 2)]);
        assert_eq!(f.count, 7);
        let f = per_bucket(&[(1.0, 2), (f64::INFINITY, 4)], 3.0, 4);
        assert_eq!(f.per_bucket, vec![(1.0, 2), (f64::INFINITY, 2)]);
        // A count below the buckets' is raised to it.
        let f = per_bucket(&[(1.0, 2), (2.0, 5)], 3.0, 1);
        assert_eq!((f.count, f.per_bucket.last().copied()), (5, Some((f64::INFINITY, 0))));
        // No buckets: +Inf alone.
        assert_eq!(per_bucket(&[], 0.0, 3).per_bucket, vec![(f64::INFINITY, 3)]);
    }
}
