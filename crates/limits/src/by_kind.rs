//! Watched extended stats over one window, grouped by kind. The watch
//! resolves names once (`counter_set`, `resolve`) and knows each counter's
//! kind from its spec; from there on the figures travel grouped, so the
//! verdict and the live lines read allowances, watched counters and levels
//! without matching names again. Only the control link carries them as one
//! flat map of deltas (its wire form, kept for compatibility): `to_wire`
//! and `from_wire` are the one conversion on each end.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::counters::{CounterKind, ENA_ALLOWANCES, ENA_EXPRESS_COUNTERS, ENA_EXPRESS_LEVELS, ENA_LEVELS};

/// One window's watched counters by kind: deltas for counters, values at
/// the window's end for levels.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct XstatsByKind {
    /// Allowance counter deltas (ENA), by name.
    pub allowances: BTreeMap<String, u64>,
    /// Deltas of the counters named with --watch-xstat, by name.
    pub watched: BTreeMap<String, u64>,
    /// Levels as read at the window's end, never differenced.
    pub levels: BTreeMap<String, u64>,
    /// ENA Express (SRD) packet counter deltas, by name.
    #[serde(default)]
    pub express: BTreeMap<String, u64>,
}

/// The kind of a counter known only by its name (what crosses the control
/// link): ENA's allowances and levels by their names, anything else watched.
pub fn counter_kind(name: &str) -> CounterKind {
    if ENA_ALLOWANCES.contains(&name) {
        CounterKind::Allowance
    } else if ENA_LEVELS.contains(&name) || ENA_EXPRESS_LEVELS.contains(&name) {
        CounterKind::Level
    } else if ENA_EXPRESS_COUNTERS.contains(&name) {
        CounterKind::Express
    } else {
        CounterKind::Watched
    }
}

impl XstatsByKind {
    /// Files `value` under its kind: a counter's delta, or a level as read.
    pub fn insert(&mut self, kind: CounterKind, name: String, value: u64) {
        match kind {
            CounterKind::Allowance => self.allowances.insert(name, value),
            CounterKind::Watched => self.watched.insert(name, value),
            CounterKind::Level => self.levels.insert(name, value),
            CounterKind::Express => self.express.insert(name, value),
        };
    }

    /// Every counter's delta (allowances, watched and ENA Express, not
    /// levels) in one map by name: the form of the JSON records and of the
    /// control link.
    pub fn deltas(&self) -> BTreeMap<String, u64> {
        self.allowances.iter().chain(&self.watched).chain(&self.express).map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Whether no counter and no level is here.
    pub fn is_empty(&self) -> bool {
        self.allowances.is_empty() && self.watched.is_empty() && self.levels.is_empty() && self.express.is_empty()
    }

    /// Several ports' windows as one: counters add up, a level is the
    /// port's nearest its limit (the lowest allowance available, the
    /// highest resource use; the lowest ENA Express mode: its bits on
    /// every port).
    pub fn merge(&mut self, o: &XstatsByKind) {
        for (mine, theirs) in [(&mut self.allowances, &o.allowances), (&mut self.watched, &o.watched), (&mut self.express, &o.express)] {
            for (k, v) in theirs {
                *mine.entry(k.clone()).or_default() += v;
            }
        }
        for (k, v) in &o.levels {
            let e = self.levels.entry(k.clone()).or_insert(*v);
            // A use (ENA Express's resources) is nearest its limit at its highest.
            *e = if k == "ena_srd_resource_utilization" { (*e).max(*v) } else { (*e).min(*v) };
        }
    }

    /// The control link's form (`WindowFigures::xstats` and `levels`).
    pub fn to_wire(&self) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
        (self.deltas(), self.levels.clone())
    }

    /// Back from the control link's form: each delta's kind by its name
    /// (`counter_kind`); levels come in their own map.
    pub fn from_wire(deltas: &BTreeMap<String, u64>, levels: &BTreeMap<String, u64>) -> XstatsByKind {
        let mut x = XstatsByKind { levels: levels.clone(), ..Default::default() };
        for (name, &delta) in deltas {
            match counter_kind(name) {
                CounterKind::Allowance => x.allowances.insert(name.clone(), delta),
                CounterKind::Express => x.express.insert(name.clone(), delta),
                CounterKind::Watched | CounterKind::Level => x.watched.insert(name.clone(), delta),
            };
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name_follow_the_counter_set() {
        for spec in crate::counter_set("net_ena", &["rx_discards_phy".into()]) {
            assert_eq!(counter_kind(&spec.name), spec.kind, "{}", spec.name);
        }
    }

    #[test]
    fn the_wire_form_round_trips() {
        let mut x = XstatsByKind::default();
        x.insert(CounterKind::Allowance, "pps_allowance_exceeded".into(), 7);
        x.insert(CounterKind::Watched, "rx_discards_phy".into(), 3);
        x.insert(CounterKind::Level, "conntrack_allowance_available".into(), 512);
        x.insert(CounterKind::Express, "ena_srd_tx_pkts".into(), 90);
        x.insert(CounterKind::Level, "ena_srd_mode".into(), 3);
        let (deltas, levels) = x.to_wire();
        assert_eq!(deltas.keys().collect::<Vec<_>>(), ["ena_srd_tx_pkts", "pps_allowance_exceeded", "rx_discards_phy"]);
        assert_eq!(levels.len(), 2);
        assert_eq!(XstatsByKind::from_wire(&deltas, &levels), x);
    }

    #[test]
    fn merging_adds_counters_and_keeps_the_lowest_level() {
        let mut a = XstatsByKind::default();
        a.insert(CounterKind::Allowance, "bw_out_allowance_exceeded".into(), 5);
        a.insert(CounterKind::Level, "conntrack_allowance_available".into(), 900);
        let mut b = a.clone();
        b.insert(CounterKind::Level, "conntrack_allowance_available".into(), 100);
        b.insert(CounterKind::Watched, "x".into(), 1);
        a.merge(&b);
        assert_eq!(a.allowances["bw_out_allowance_exceeded"], 10);
        assert_eq!(a.levels["conntrack_allowance_available"], 100);
        assert_eq!(a.watched["x"], 1);
    }
}
