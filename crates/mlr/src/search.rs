//! A strategy: which load to try next, and for how long. RFC 9971 leaves
//! the strategy to the implementation; what it fixes is what the results
//! are computed from (every trial, classified per goal: lib.rs). This one
//! follows the reference implementation's outline:
//!
//! - Each goal has **targets**: its own attributes (the final target) and
//!   `preceding` coarser ones before it, with shorter trials, a shorter
//!   duration sum and twice the width each step back (from the final trial
//!   duration and duration sum down to the initial trial duration), so the
//!   first trials are short and only the last ones full-length.
//! - Targets are worked coarsest first (every goal's), then finer, each
//!   until its relevant bounds are within its width or its result is
//!   irregular (the top passed, the bottom failed). Every trial informs
//!   every target.
//! - Within a target: an undecided load between its relevant bounds is
//!   tried again (the one nearest their middle); else with both bounds the
//!   interval is halved (geometrically); with only an upper bound the search
//!   steps down by the width, doubled with each upper bound found (the
//!   first trial is at the top of the search).
//!
//! Loads are whole frames per second, so a load tried again is the same
//! load. A trial counts at the load it carried: one the sender fell short
//! on (beyond blast's [`knee::DELIVERY_TOLERANCE`]) counts at what it
//! delivered. While the sender has never carried that load, the shortfall
//! is the sender's own and what it delivered becomes the top of the search
//! (no load above it is tried); a shortfall at a load an earlier trial
//! carried was the path, the receiver or the host holding it back
//! (blast's knee search draws the same line), and leaves the top alone.

use serde::{Deserialize, Serialize};

use crate::{goal_result, Class, Goal, GoalResult, Trial};

#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    pub goals: Vec<Goal>,
    /// The top of the search (frames per second): the most the sender carries, or what was asked.
    pub max_load: f64,
    /// The bottom: a load that fails here makes the goal's result irregular (no lower bound).
    pub min_load: f64,
    /// Coarser targets before each goal's own (the reference's default: 2).
    pub preceding: u32,
    /// A bound on the trials, whatever the goals (a search that reaches it says so).
    pub max_trials: usize,
}

/// A goal's own attributes (`level` 0) or a coarser target before them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Target {
    /// Index of the goal in the search's goals.
    pub goal: usize,
    /// 0: the goal's own attributes; higher: coarser.
    pub level: u32,
    /// The attributes the target classifies with: the goal's loss and
    /// exceed ratios, this target's trial duration (as
    /// `final_trial_duration`), duration sum and width.
    pub spec: Goal,
}

/// The targets of `goal` (index `index`), coarsest first.
pub fn targets(index: usize, goal: &Goal, preceding: u32) -> Vec<Target> {
    let mut out = vec![Target { goal: index, level: 0, spec: goal.clone() }];
    if preceding > 0 && goal.initial_trial_duration < goal.duration_sum {
        let step = (goal.initial_trial_duration / goal.duration_sum).powf(1.0 / f64::from(preceding));
        let mut width = goal.width;
        for level in 1..=preceding {
            let sum = if level == preceding { goal.initial_trial_duration } else { goal.duration_sum * step.powi(level as i32) };
            width = (width * 2.0).min(0.5);
            let mut spec = goal.clone();
            spec.final_trial_duration = goal.final_trial_duration.min(sum);
            spec.duration_sum = sum;
            spec.width = width;
            out.push(Target { goal: index, level, spec });
        }
    }
    out.reverse();
    out
}

/// Why a load is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The first trial: the top of the search.
    Top,
    /// The load is undecided for the target: another trial there.
    Again,
    /// Only an upper bound so far: a step down.
    StepDown,
    /// Both bounds, wider than the target's width: their middle.
    Halve,
}

/// The next trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Next {
    /// Frames per second, whole.
    pub load: f64,
    /// Seconds.
    pub duration: f64,
    /// The target it serves: goal index and level (0: the goal's own).
    pub goal: usize,
    pub level: u32,
    pub reason: Reason,
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Every goal's final target is done: within its width, or irregular.
    Done,
    /// `max_trials` trials ran first.
    TrialLimit,
}

pub struct Search {
    cfg: SearchConfig,
    targets: Vec<Target>,
    trials: Vec<Trial>,
    /// The top of the search, lowered by a trial the sender fell short on.
    cap: f64,
    /// The most any trial delivered, frames per second.
    delivered_max: f64,
}

/// Where a trial counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counted {
    /// The load it counts at: the intended one, or what it carried.
    pub load: f64,
    /// It fell short of the intended load beyond the tolerance.
    pub short: bool,
    /// Short of a load an earlier trial carried: held back, not the sender's cap.
    pub held_back: bool,
}

/// A load as the search keeps it: whole frames per second.
fn whole(load: f64) -> f64 {
    load.round().max(1.0)
}

impl Search {
    pub fn new(cfg: SearchConfig) -> Search {
        let mut targets: Vec<Target> = cfg.goals.iter().enumerate().flat_map(|(i, g)| targets(i, g, cfg.preceding)).collect();
        // Coarsest first, every goal's; a goal's own order within a level.
        targets.sort_by_key(|t| (std::cmp::Reverse(t.level), t.goal));
        let cap = whole(cfg.max_load);
        Search { cfg, targets, trials: Vec::new(), cap, delivered_max: 0.0 }
    }

    pub fn trials(&self) -> &[Trial] {
        &self.trials
    }

    /// The top of the search now.
    pub fn cap(&self) -> f64 {
        self.cap
    }

    /// The next trial, or why there is none.
    pub fn next(&self) -> Result<Next, Ended> {
        if self.trials.len() >= self.cfg.max_trials {
            return Err(Ended::TrialLimit);
        }
        self.targets.iter().find_map(|t| self.next_for(t)).ok_or(Ended::Done)
    }

    fn next_for(&self, t: &Target) -> Option<Next> {
        let r = goal_result(&t.spec, &self.trials);
        let at = |load: f64, reason| Some(Next { load, duration: t.spec.final_trial_duration, goal: t.goal, level: t.level, reason });
        let (lo, hi) = (r.relevant_lower_bound, r.relevant_upper_bound);
        if r.within_width || lo.is_some_and(|l| hi.is_none() && l >= self.cap) || hi.is_some_and(|h| lo.is_none() && h <= self.cfg.min_load)
        {
            return None;
        }
        // An undecided load between the bounds (and not above the top): again.
        let undecided: Vec<f64> = r
            .loads
            .iter()
            .filter(|(s, c)| *c == Class::Undecided && s.load <= self.cap && lo.is_none_or(|l| s.load > l) && hi.is_none_or(|h| s.load < h))
            .map(|(s, _)| s.load)
            .collect();
        if let (Some(&first), Some(&last)) = (undecided.first(), undecided.last()) {
            // Where the answer is: between this target's bounds, else
            // between the coarser target's (done before this one).
            let coarser = self.coarser_bounds(t);
            let middle = match (lo.or(coarser.map(|c| c.0)), hi.or(coarser.map(|c| c.1))) {
                (Some(l), Some(h)) => (l * h).sqrt(),
                _ => (lo.unwrap_or(first) * hi.unwrap_or(last)).sqrt(),
            };
            let nearest = undecided.iter().copied().min_by(|a, b| (a / middle).ln().abs().total_cmp(&(b / middle).ln().abs()));
            return at(nearest.expect("not empty"), Reason::Again);
        }
        match (lo, hi) {
            (None, None) => at(self.cap, Reason::Top),
            (None, Some(h)) => {
                let found = r.loads.iter().filter(|(_, c)| *c == Class::UpperBound).count() as i32;
                let step = (t.spec.width * 2f64.powi(found - 1)).min(0.5);
                let load = whole(h * (1.0 - step)).max(whole(self.cfg.min_load));
                (load < h).then(|| at(load, Reason::StepDown)).flatten()
            }
            (Some(l), Some(h)) => {
                let load = whole((l * h).sqrt());
                (load > l && load < h).then(|| at(load, Reason::Halve)).flatten()
            }
            // An undecided load above the bound would have been tried again,
            // and the first trial is at the top: only the top can be above.
            (Some(_), None) => at(self.cap, Reason::Top),
        }
    }

    /// The relevant bounds of the target just coarser than `t` (the same
    /// goal's), when it has both.
    fn coarser_bounds(&self, t: &Target) -> Option<(f64, f64)> {
        let c = self.targets.iter().find(|c| c.goal == t.goal && c.level == t.level + 1)?;
        let r = goal_result(&c.spec, &self.trials);
        Some((r.relevant_lower_bound?, r.relevant_upper_bound?))
    }

    /// Counts a trial of `next`: `delivered` frames/s carried (its load, when
    /// within the tolerance of the intended one), and its measured figures.
    pub fn record(&mut self, next: &Next, delivered: f64, duration_with_overheads: f64, loss_ratio: f64) -> Counted {
        let delivered = if delivered.is_nan() { 0.0 } else { delivered };
        let short = knee::sender_short(next.load, delivered);
        let held_back = short && !knee::sender_short(next.load, self.delivered_max);
        let load = if short { whole(delivered) } else { next.load };
        if short && !held_back {
            self.cap = self.cap.min(load);
        }
        self.delivered_max = self.delivered_max.max(delivered);
        self.trials.push(Trial { load, intended_duration: next.duration, duration_with_overheads, loss_ratio });
        Counted { load, short, held_back }
    }

    /// Each goal's result from every trial so far.
    pub fn results(&self) -> Vec<GoalResult> {
        self.cfg.goals.iter().map(|g| goal_result(g, &self.trials)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(name: &str, loss: f64) -> Goal {
        Goal {
            name: name.into(),
            loss_ratio: loss,
            exceed_ratio: 0.5,
            final_trial_duration: 4.0,
            duration_sum: 8.0,
            initial_trial_duration: 1.0,
            width: 0.01,
        }
    }

    /// Runs a search against a path whose loss ratio at each load is `loss`.
    fn run(goals: Vec<Goal>, max: f64, carries: f64, loss: impl Fn(f64) -> f64) -> (Search, Ended) {
        let mut s = Search::new(SearchConfig { goals, max_load: max, min_load: max / 1000.0, preceding: 2, max_trials: 200 });
        loop {
            match s.next() {
                Ok(n) => {
                    assert!(n.load <= s.cap() && n.load >= 1.0, "{n:?}");
                    let delivered = n.load.min(carries);
                    s.record(&n, delivered, n.duration, loss(delivered));
                }
                Err(e) => return (s, e),
            }
        }
    }

    #[test]
    fn targets_shorten_and_widen_toward_the_initial_duration() {
        let t = targets(0, &Goal { final_trial_duration: 30.0, duration_sum: 60.0, ..goal("g", 0.0) }, 2);
        let got: Vec<(u32, f64, f64, f64)> =
            t.iter().map(|t| (t.level, t.spec.final_trial_duration, t.spec.duration_sum, t.spec.width)).collect();
        assert_eq!(got[0], (2, 1.0, 1.0, 0.04));
        assert_eq!(got[2], (0, 30.0, 60.0, 0.01));
        // Between them, geometrically: sqrt(60 x 1) s.
        assert!((got[1].2 - 60f64.sqrt()).abs() < 1e-9 && got[1].1 == got[1].2 && got[1].3 == 0.02, "{got:?}");
    }

    #[test]
    fn a_knee_is_found_within_the_width_for_every_goal() {
        // No loss up to 600k, then 0.3% up to 620k, then 10%.
        let loss = |l: f64| {
            if l <= 600_000.0 {
                0.0
            } else if l <= 620_000.0 {
                0.003
            } else {
                0.1
            }
        };
        let (s, ended) = run(vec![goal("NDR", 0.0), goal("PDR", 0.005)], 1e6, 1e6, loss);
        assert_eq!(ended, Ended::Done);
        let r = s.results();
        for g in &r {
            assert!(g.within_width && g.irregular.is_none(), "{g:?}");
        }
        let (ndr, pdr) = (r[0].relevant_lower_bound.unwrap(), r[1].relevant_lower_bound.unwrap());
        assert!((600_000.0 * 0.99..=600_000.0).contains(&ndr), "{ndr}");
        assert!((620_000.0 * 0.99..=620_000.0).contains(&pdr), "{pdr}");
        // Each goal's relevant lower bound was decided by full-length trials.
        for g in &r {
            let at = g.loads.iter().find(|(s, _)| Some(s.load) == g.relevant_lower_bound).unwrap();
            assert!(at.0.good_long >= g.goal.duration_sum * g.goal.exceed_ratio, "{at:?}");
        }
        assert!(s.trials().len() < 80, "{} trials", s.trials().len());
    }

    #[test]
    fn the_top_passing_and_the_bottom_failing_end_the_search_irregular() {
        let (s, ended) = run(vec![goal("NDR", 0.0)], 1e6, 1e6, |_| 0.0);
        assert_eq!(ended, Ended::Done);
        let r = &s.results()[0];
        assert_eq!((r.irregular.clone(), r.relevant_lower_bound), (Some(crate::Irregular::NoUpperBound), Some(1e6)));
        let (s, ended) = run(vec![goal("NDR", 0.0)], 1e6, 1e6, |_| 0.5);
        assert_eq!(ended, Ended::Done);
        let r = &s.results()[0];
        assert_eq!((r.irregular.clone(), r.relevant_upper_bound), (Some(crate::Irregular::NoLowerBound), Some(1000.0)));
    }

    #[test]
    fn a_sender_that_falls_short_counts_at_what_it_carried_and_caps_the_search() {
        // The sender carries 500k of the 1M asked; the path never loses.
        let (s, ended) = run(vec![goal("NDR", 0.0)], 1e6, 500_000.0, |_| 0.0);
        assert_eq!(ended, Ended::Done);
        assert_eq!(s.cap(), 500_000.0);
        assert!(s.trials().iter().all(|t| t.load <= 500_000.0), "{:?}", s.trials());
        let r = &s.results()[0];
        assert_eq!((r.irregular.clone(), r.relevant_lower_bound), (Some(crate::Irregular::NoUpperBound), Some(500_000.0)));
    }

    #[test]
    fn a_trial_held_back_below_a_load_carried_before_does_not_cap_the_search() {
        let mut s =
            Search::new(SearchConfig { goals: vec![goal("NDR", 0.0)], max_load: 1e6, min_load: 1e3, preceding: 2, max_trials: 100 });
        let top = s.next().unwrap();
        assert_eq!(s.record(&top, 1e6, 1.0, 0.5), Counted { load: 1e6, short: false, held_back: false });
        // A stall holds a later, lower trial back: it counts where it carried, the top stays.
        let n = s.next().unwrap();
        let c = s.record(&n, n.load * 0.9, 1.0, 0.0);
        assert!(c.short && c.held_back && c.load == (n.load * 0.9).round(), "{c:?}");
        assert_eq!(s.cap(), 1e6);
    }

    #[test]
    fn a_search_that_cannot_decide_stops_at_its_trial_limit() {
        // Loss that alternates at every load: never decided within 3 trials.
        let flip = std::cell::Cell::new(false);
        let mut s = Search::new(SearchConfig { goals: vec![goal("NDR", 0.0)], max_load: 1e6, min_load: 1e3, preceding: 2, max_trials: 3 });
        let mut ended = None;
        for _ in 0..10 {
            match s.next() {
                Ok(n) => {
                    flip.set(!flip.get());
                    s.record(&n, n.load, n.duration, if flip.get() { 0.1 } else { 0.0 });
                }
                Err(e) => {
                    ended = Some(e);
                    break;
                }
            }
        }
        assert_eq!(ended, Some(Ended::TrialLimit));
        assert_eq!(s.trials().len(), 3);
    }
}
