//! RFC 9971 (MLRsearch): what a conformant search computes from its trials,
//! whatever strategy chose the loads. Per Search Goal, every load is
//! classified from all the trials at that load as an Upper Bound, a Lower
//! Bound or Undecided; the Relevant Upper Bound is the smallest upper
//! bound, the Relevant Lower Bound the largest lower bound under it, and
//! the Conditional Throughput is the Relevant Lower Bound times one minus
//! the loss ratio at the Goal Exceed Ratio's quantile of its long trials.
//!
//! The arithmetic follows the reference implementation the RFC cites
//! (PyPI `MLRsearch` 1.2.1: `TargetStat.estimates`,
//! `TargetStat.pessimistic_loss_ratio`,
//! `MeasurementDatabase.get_relevant_bounds`, `GoalResult`), and the tests
//! check it against that package. No EAL and no I/O here.

pub mod search;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A Search Goal's attributes (RFC 9971 section 4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Goal {
    /// A name for the goal in outputs ("NDR", "PDR").
    pub name: String,
    /// Goal Loss Ratio: a trial whose loss ratio is higher is a bad trial.
    pub loss_ratio: f64,
    /// Goal Exceed Ratio: the share of the duration sum bad trials may take
    /// while the load is still a lower bound.
    pub exceed_ratio: f64,
    /// Goal Final Trial Duration, seconds: trials at least this long are full-length.
    pub final_trial_duration: f64,
    /// Goal Duration Sum, seconds: the full-length duration that decides a load.
    pub duration_sum: f64,
    /// Goal Initial Trial Duration, seconds (a strategy's first trials).
    pub initial_trial_duration: f64,
    /// Goal Width: the search is done when the relevant bounds are at most
    /// this far apart, relative to the upper one.
    pub width: f64,
}

/// Why a goal's attributes cannot be searched with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalError(pub String);

impl std::fmt::Display for GoalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Goal {
    /// The attributes' own limits, as the RFC and the reference state them.
    pub fn check(&self) -> Result<(), GoalError> {
        let e = |m: String| Err(GoalError(format!("goal {}: {m}", self.name)));
        if !(0.0..1.0).contains(&self.loss_ratio) {
            return e(format!("its loss ratio {} must be at least 0 and under 1", self.loss_ratio));
        }
        if !(0.0..1.0).contains(&self.exceed_ratio) {
            return e(format!("its exceed ratio {} must be at least 0 and under 1", self.exceed_ratio));
        }
        if !(self.width > 0.0 && self.width < 1.0) {
            return e(format!("its width {} must be above 0 and under 1", self.width));
        }
        if self.initial_trial_duration <= 0.0 {
            return e("its initial trial duration must be above 0 s".into());
        }
        if self.final_trial_duration < self.initial_trial_duration {
            return e(format!(
                "its final trial duration {} s is shorter than its initial one {} s",
                self.final_trial_duration, self.initial_trial_duration
            ));
        }
        if self.duration_sum < self.final_trial_duration {
            return e(format!(
                "its duration sum {} s is shorter than its final trial duration {} s",
                self.duration_sum, self.final_trial_duration
            ));
        }
        Ok(())
    }
}

/// One trial as the classification reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Trial {
    /// The intended load (frames per second over all interfaces that count).
    pub load: f64,
    /// The Trial Duration asked for, seconds: it decides whether the trial is full-length.
    pub intended_duration: f64,
    /// The time the trial took with its overheads, seconds: what it adds to the duration sums.
    pub duration_with_overheads: f64,
    /// Trial Loss Ratio.
    pub loss_ratio: f64,
}

/// A load's class for one goal (RFC 9971 section 5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    LowerBound,
    UpperBound,
    /// More trials could still make it either.
    Undecided,
}

/// The trials at one load, summed for one goal (the reference's TargetStat).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadStat {
    pub load: f64,
    /// Full-length trials' durations (with overheads) that kept the goal's loss ratio, and that did not.
    pub good_long: f64,
    pub bad_long: f64,
    /// The same for shorter trials.
    pub good_short: f64,
    pub bad_short: f64,
    /// Full-length trials' loss ratios with the duration each took, rising.
    pub long_losses: Vec<(f64, f64)>,
}

impl LoadStat {
    fn of(goal: &Goal, load: f64, trials: &[&Trial]) -> LoadStat {
        let mut s = LoadStat { load, ..Default::default() };
        let mut losses: BTreeMap<u64, f64> = BTreeMap::new();
        for t in trials {
            let bad = t.loss_ratio > goal.loss_ratio;
            let dwo = t.duration_with_overheads;
            if t.intended_duration >= goal.final_trial_duration {
                // Loss ratios are in [0, 1]: their bits order as they do.
                *losses.entry(t.loss_ratio.to_bits()).or_default() += dwo;
                if bad {
                    s.bad_long += dwo;
                } else {
                    s.good_long += dwo;
                }
            } else if bad {
                s.bad_short += dwo;
            } else {
                s.good_short += dwo;
            }
        }
        s.long_losses = losses.into_iter().map(|(b, d)| (f64::from_bits(b), d)).collect();
        s
    }

    /// The optimistic and pessimistic estimates: whether the load would be
    /// a lower bound if every trial still to come were good, and if every
    /// one were bad. Equal: the load is decided.
    pub fn estimates(&self, goal: &Goal) -> (bool, bool) {
        let coeff = goal.exceed_ratio;
        // Short good trials cancel short bad ones, in the exceed ratio's proportion.
        let decrease = self.good_short * coeff / (1.0 - coeff);
        let short_excess = self.bad_short - decrease;
        let effective_excess = self.bad_long + short_excess.max(0.0);
        let effective_dursum = (self.good_long + effective_excess).max(goal.duration_sum);
        let limit_dursum = effective_dursum * goal.exceed_ratio;
        let optimistic = effective_excess <= limit_dursum;
        let pessimistic = (effective_dursum - self.good_long) <= limit_dursum;
        (optimistic, pessimistic)
    }

    pub fn class(&self, goal: &Goal) -> Class {
        match self.estimates(goal) {
            (true, true) => Class::LowerBound,
            (false, false) => Class::UpperBound,
            _ => Class::Undecided,
        }
    }

    /// The loss ratio the conditional throughput is computed with: the
    /// long trials' loss ratios at the exceed ratio's quantile, the
    /// duration missing to the duration sum counted as full loss; of a tie,
    /// the lower value.
    pub fn pessimistic_loss_ratio(&self, goal: &Goal) -> f64 {
        let all_long = goal.duration_sum.max(self.good_long + self.bad_long);
        let mut remaining = all_long * (1.0 - goal.exceed_ratio);
        let mut ret: Option<f64> = None;
        for &(ratio, dursum) in &self.long_losses {
            if ret.is_none() || remaining > 0.0 {
                ret = Some(ratio);
                remaining -= dursum;
            } else {
                return ratio_or_full(ret);
            }
        }
        if remaining > 0.0 {
            return 1.0;
        }
        ratio_or_full(ret)
    }
}

fn ratio_or_full(r: Option<f64>) -> f64 {
    r.unwrap_or(1.0)
}

/// What is irregular about a goal's result (RFC 9971 section 5.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Irregular {
    /// No load was a lower bound under the relevant upper bound: even the
    /// lowest load tried failed the goal.
    NoLowerBound,
    /// No load was an upper bound: even the highest load tried passed (the
    /// conditional throughput is at least the relevant lower bound).
    NoUpperBound,
    /// Neither: no load was decided.
    NoBound,
}

/// A goal's result: its relevant bounds, the conditional throughput, each
/// load's class, and what is irregular.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GoalResult {
    pub goal: Goal,
    pub relevant_lower_bound: Option<f64>,
    pub relevant_upper_bound: Option<f64>,
    /// The relevant lower bound times (1 - the pessimistic loss ratio there).
    pub conditional_throughput: Option<f64>,
    /// Every load tried, rising, with its sums and its class.
    pub loads: Vec<(LoadStat, Class)>,
    pub irregular: Option<Irregular>,
    /// The bounds are at most the goal's width apart (relative to the upper).
    pub within_width: bool,
}

/// The goal's result from every trial so far (loads compared exactly: a
/// strategy tries a load again at the same value).
pub fn goal_result(goal: &Goal, trials: &[Trial]) -> GoalResult {
    let mut loads: Vec<f64> = trials.iter().map(|t| t.load).collect();
    loads.sort_by(f64::total_cmp);
    loads.dedup();
    let stats: Vec<(LoadStat, Class)> = loads
        .iter()
        .map(|&l| {
            let here: Vec<&Trial> = trials.iter().filter(|t| t.load == l).collect();
            let s = LoadStat::of(goal, l, &here);
            let c = s.class(goal);
            (s, c)
        })
        .collect();
    // From the lowest load: each lower bound is the relevant one until the
    // first upper bound, which is the relevant upper bound (higher loads
    // that passed do not count: the conservative definition).
    let (mut lower, mut upper): (Option<&LoadStat>, Option<&LoadStat>) = (None, None);
    for (s, c) in &stats {
        match c {
            Class::Undecided => continue,
            Class::UpperBound => {
                upper = Some(s);
                break;
            }
            Class::LowerBound => lower = Some(s),
        }
    }
    let conditional_throughput = lower.map(|s| s.load * (1.0 - s.pessimistic_loss_ratio(goal)));
    let irregular = match (lower, upper) {
        (Some(_), Some(_)) => None,
        (None, Some(_)) => Some(Irregular::NoLowerBound),
        (Some(_), None) => Some(Irregular::NoUpperBound),
        (None, None) => Some(Irregular::NoBound),
    };
    let within_width = match (lower, upper) {
        (Some(l), Some(u)) => (u.load - l.load) / u.load <= goal.width,
        _ => false,
    };
    GoalResult {
        goal: goal.clone(),
        relevant_lower_bound: lower.map(|s| s.load),
        relevant_upper_bound: upper.map(|s| s.load),
        conditional_throughput,
        loads: stats,
        irregular,
        within_width,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(loss: f64, exceed: f64, final_s: f64, sum: f64) -> Goal {
        Goal {
            name: "g".into(),
            loss_ratio: loss,
            exceed_ratio: exceed,
            final_trial_duration: final_s,
            duration_sum: sum,
            initial_trial_duration: 1.0,
            width: 0.005,
        }
    }

    fn t(load: f64, d: f64, loss: f64) -> Trial {
        Trial { load, intended_duration: d, duration_with_overheads: d, loss_ratio: loss }
    }

    #[test]
    fn a_load_is_decided_once_its_duration_sum_cannot_change_its_class() {
        let g = goal(0.0, 0.5, 10.0, 30.0);
        // One good full-length trial: a third of the sum; the rest could go either way.
        assert_eq!(goal_result(&g, &[t(1e6, 10.0, 0.0)]).loads[0].1, Class::Undecided);
        // Two good ones fill the sum: a lower bound.
        assert_eq!(goal_result(&g, &[t(1e6, 10.0, 0.0), t(1e6, 10.0, 0.0)]).loads[0].1, Class::LowerBound);
        // Bad trials over more than half the sum: an upper bound, however the rest goes.
        let r = goal_result(&g, &[t(1e6, 10.0, 0.01), t(1e6, 10.0, 0.02), t(1e6, 10.0, 0.0)]);
        assert_eq!(r.loads[0].1, Class::UpperBound);
        // One bad and one good of equal length: undecided over 30 s; over a
        // sum of 20 s, exactly the exceed ratio, which is allowed.
        assert_eq!(goal_result(&g, &[t(1e6, 10.0, 0.01), t(1e6, 10.0, 0.0)]).loads[0].1, Class::Undecided);
        let g20 = goal(0.0, 0.5, 10.0, 20.0);
        assert_eq!(goal_result(&g20, &[t(1e6, 10.0, 0.01), t(1e6, 10.0, 0.0)]).loads[0].1, Class::LowerBound);
        assert_eq!(
            goal_result(&g20, &[t(1e6, 10.0, 0.0)]).loads[0].1,
            Class::LowerBound,
            "half the sum good: bad rest would only reach the ratio"
        );
    }

    #[test]
    fn short_trials_count_for_less_and_good_ones_cancel_bad_ones() {
        let g = goal(0.0, 0.5, 10.0, 20.0);
        // Short trials alone never fill the sum of full-length ones.
        let r = goal_result(&g, &[t(1e6, 1.0, 0.0), t(1e6, 1.0, 0.0), t(1e6, 1.0, 0.0)]);
        assert_eq!(r.loads[0].1, Class::Undecided);
        // Short bad trials past what short good ones cancel: an upper bound once they exceed.
        let bad: Vec<Trial> = (0..11).map(|_| t(1e6, 1.0, 0.5)).collect();
        assert_eq!(goal_result(&g, &bad).loads[0].1, Class::UpperBound);
    }

    #[test]
    fn relevant_bounds_are_conservative_and_the_conditional_throughput_uses_the_quantile() {
        let g = goal(0.005, 0.5, 10.0, 20.0);
        let trials = [
            t(1e6, 10.0, 0.001),
            t(1e6, 10.0, 0.004),
            t(2e6, 10.0, 0.1),
            t(2e6, 10.0, 0.2),
            // A higher load that passed (loss inversion) does not count past the first upper bound.
            t(3e6, 10.0, 0.0),
            t(3e6, 10.0, 0.0),
        ];
        let r = goal_result(&g, &trials);
        assert_eq!((r.relevant_lower_bound, r.relevant_upper_bound), (Some(1e6), Some(2e6)));
        assert_eq!(r.irregular, None);
        // Loss ratios 0.001 and 0.004 over 20 s; the quantile at 1 - 0.5 of 20 s: 0.001.
        assert_eq!(r.conditional_throughput, Some(1e6 * (1.0 - 0.001)));
        assert!(!r.within_width);
    }

    #[test]
    fn irregular_results_are_named() {
        let g = goal(0.0, 0.5, 1.0, 1.0);
        assert_eq!(goal_result(&g, &[t(1e6, 1.0, 0.5)]).irregular, Some(Irregular::NoLowerBound));
        let r = goal_result(&g, &[t(1e6, 1.0, 0.0)]);
        assert_eq!((r.irregular, r.conditional_throughput), (Some(Irregular::NoUpperBound), Some(1e6)));
        assert_eq!(goal_result(&goal(0.0, 0.5, 10.0, 30.0), &[t(1e6, 10.0, 0.0)]).irregular, Some(Irregular::NoBound));
    }

    #[test]
    fn missing_duration_counts_as_full_loss_in_the_pessimistic_ratio() {
        let g = goal(0.0, 0.5, 10.0, 30.0);
        let s = LoadStat::of(&g, 1e6, &[&t(1e6, 10.0, 0.0)]);
        // 30 s asked, 10 s measured: 15 s of the quantile's 15 s are past the one trial: 1.0.
        assert_eq!(s.pessimistic_loss_ratio(&g), 1.0);
    }

    #[test]
    fn goals_outside_the_attributes_limits_are_refused() {
        let mut g = goal(0.0, 0.5, 10.0, 5.0);
        assert!(g.check().unwrap_err().0.contains("duration sum 5 s is shorter than its final trial duration 10 s"));
        g.duration_sum = 20.0;
        g.exceed_ratio = 1.0;
        assert!(g.check().is_err());
        g.exceed_ratio = 0.5;
        assert_eq!(g.check(), Ok(()));
    }
}
