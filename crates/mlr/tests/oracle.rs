//! crates/mlr against RFC 9971's reference implementation (PyPI
//! `MLRsearch`, the version reference/mod.rs pins, run by scripts/mlr-oracle):
//! trial sets made up at random (seeded: the same every run) over the loads
//! the package's own rounding gives, with several goals at once; every
//! load's class, both relevant bounds and the conditional throughput must
//! agree for every goal; and whole searches by crates/mlr's own strategy
//! over simulated paths, their trials replayed through the package.

mod reference;

use mlr::{goal_result, Class, Goal, Trial};
use reference::oracle;
use serde_json::{json, Value};

/// xorshift64*: the same numbers on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

#[test]
fn every_class_bound_and_conditional_throughput_agrees_with_the_reference() {
    let (min_load, max_load, widths) = (1e4, 1e7, [0.005]);
    let mut rng = Rng(0x9971);
    let grid: Vec<u64> = (0..40).map(|_| rng.below(1400)).collect();
    let mut cases = Vec::new();
    let mut kept = Vec::new();
    for case in 0..300 {
        let goals: Vec<Goal> = (0..1 + rng.below(3))
            .map(|i| {
                let final_s = rng.pick(&[1.0, 2.0, 5.0]);
                Goal {
                    name: format!("g{case}.{i}"),
                    loss_ratio: rng.pick(&[0.0, 0.0, 0.001, 0.005, 0.05]),
                    exceed_ratio: rng.pick(&[0.0, 0.1, 0.5, 0.5, 0.9]),
                    final_trial_duration: final_s,
                    duration_sum: final_s * rng.pick(&[1.0, 2.0, 3.0, 4.5]),
                    initial_trial_duration: 0.5,
                    width: widths[0],
                }
            })
            .collect();
        let loads: Vec<u64> = (0..1 + rng.below(5)).map(|_| rng.pick(&grid)).collect();
        let mut trials = Vec::new();
        let mut counts = Vec::new();
        for _ in 0..1 + rng.below(14) {
            let load = rng.pick(&loads);
            let d = rng.pick(&[0.5, 1.0, 1.0, 2.0, 5.0]);
            let dwo = d + rng.below(300) as f64 / 1000.0;
            let offered = 1000 + rng.below(1_000_000);
            let lost = match rng.below(4) {
                0 | 1 => 0,
                2 => rng.below(offered / 100 + 1),
                _ => rng.below(offered + 1),
            };
            // The load is filled in from the reference's rounding below.
            trials.push(Trial { load: 0.0, intended_duration: d, duration_with_overheads: dwo, loss_ratio: lost as f64 / offered as f64 });
            counts
                .push(json!({"load_int": load, "intended_duration": d, "duration_with_overheads": dwo, "offered": offered, "lost": lost}));
        }
        let g: Vec<Value> = goals
            .iter()
            .map(|g| json!({"loss_ratio": g.loss_ratio, "exceed_ratio": g.exceed_ratio, "final_trial_duration": g.final_trial_duration, "duration_sum": g.duration_sum}))
            .collect();
        cases.push(json!({"goals": g, "trials": counts}));
        kept.push((goals, trials));
    }
    let theirs = oracle(&json!({"min_load": min_load, "max_load": max_load, "widths": widths, "cases": cases}));
    let (mut compared, mut lower, mut upper) = (0, 0, 0);
    for (i, ((goals, mut trials), refs)) in kept.into_iter().zip(theirs.as_array().unwrap()).enumerate() {
        for (t, l) in trials.iter_mut().zip(refs["trial_loads"].as_array().unwrap()) {
            t.load = l.as_f64().unwrap();
        }
        let mine: Vec<_> = goals.iter().map(|g| goal_result(g, &trials)).collect();
        for (m, r) in mine.iter().zip(refs["goals"].as_array().unwrap()) {
            let what = format!("case {i}, goal {:?}: ours {m:?}, the reference's {r}", m.goal);
            let classes: Vec<(f64, &str)> =
                r["classes"].as_array().unwrap().iter().map(|c| (c[0].as_f64().unwrap(), c[1].as_str().unwrap())).collect();
            let mine_classes: Vec<(f64, &str)> = m
                .loads
                .iter()
                .map(|(s, c)| {
                    (
                        s.load,
                        match c {
                            Class::LowerBound => "lower_bound",
                            Class::UpperBound => "upper_bound",
                            Class::Undecided => "undecided",
                        },
                    )
                })
                .collect();
            assert_eq!(mine_classes, classes, "{what}");
            assert_eq!(m.relevant_lower_bound, r["relevant_lower_bound"].as_f64(), "{what}");
            assert_eq!(m.relevant_upper_bound, r["relevant_upper_bound"].as_f64(), "{what}");
            match (m.conditional_throughput, r["conditional_throughput"].as_f64()) {
                (Some(a), Some(b)) => assert!((a - b).abs() <= 1e-9 * b, "{what}"),
                (a, b) => assert_eq!(a, b, "{what}"),
            }
            compared += 1;
            lower += usize::from(m.relevant_lower_bound.is_some());
            upper += usize::from(m.relevant_upper_bound.is_some());
        }
    }
    // The made-up sets reach every kind of result, not only the easy ones.
    assert!(compared > 500 && lower > 100 && upper > 100, "{compared} goals, {lower} with a lower bound, {upper} with an upper bound");
}

/// Whole searches over simulated paths (a knee, noise around it, a sender
/// that sometimes falls short), each search's trials replayed through the
/// reference: every load's class, the relevant bounds and the conditional
/// throughput of every goal agree, and each regular result is within its
/// goal's width.
#[test]
fn searches_by_our_strategy_replay_through_the_reference_load_for_load() {
    use mlr::search::{Search, SearchConfig};
    let mut rng = Rng(0x2544);
    let mut cases = Vec::new();
    let mut kept = Vec::new();
    for _ in 0..40 {
        let knee = 1e5 + rng.below(9_000_000) as f64;
        let noisy = rng.below(3) == 0;
        let carries = if rng.below(4) == 0 { knee * (0.5 + rng.below(100) as f64 / 100.0) } else { 1e7 };
        let goals = vec![
            Goal {
                name: "NDR".into(),
                loss_ratio: 0.0,
                exceed_ratio: 0.5,
                final_trial_duration: 2.0,
                duration_sum: 4.0,
                initial_trial_duration: 0.5,
                width: 0.01,
            },
            Goal {
                name: "PDR".into(),
                loss_ratio: 0.005,
                exceed_ratio: 0.5,
                final_trial_duration: 2.0,
                duration_sum: 4.0,
                initial_trial_duration: 0.5,
                width: 0.01,
            },
        ];
        let mut search = Search::new(SearchConfig { goals: goals.clone(), max_load: 1e7, min_load: 1e4, preceding: 2, max_trials: 300 });
        let mut counts = Vec::new();
        while let Ok(next) = search.next() {
            let delivered = next.load.min(carries).round();
            let offered = (delivered * next.duration).round() as u64;
            // Loss grows past the knee; with noise, a trial near it may lose a little or not.
            let over = (delivered - knee) / knee;
            let share = if over <= 0.0 {
                if noisy && over > -0.02 && rng.below(3) == 0 {
                    0.001
                } else {
                    0.0
                }
            } else {
                (over * 0.5).min(0.9)
            };
            let lost = (offered as f64 * share).round() as u64;
            let dwo = next.duration + rng.below(50) as f64 / 1000.0;
            let load = search.record(&next, delivered, dwo, lost as f64 / offered as f64).load;
            counts.push(
                json!({"load": load, "intended_duration": next.duration, "duration_with_overheads": dwo, "offered": offered, "lost": lost}),
            );
        }
        let g: Vec<Value> = goals
            .iter()
            .map(|g| json!({"loss_ratio": g.loss_ratio, "exceed_ratio": g.exceed_ratio, "final_trial_duration": g.final_trial_duration, "duration_sum": g.duration_sum}))
            .collect();
        cases.push(json!({"goals": g, "trials": counts}));
        kept.push(search);
    }
    let theirs = oracle(&json!({"exact": true, "cases": cases}));
    let mut regular = 0;
    for (i, (search, refs)) in kept.iter().zip(theirs.as_array().unwrap()).enumerate() {
        for (m, r) in search.results().iter().zip(refs["goals"].as_array().unwrap()) {
            let what = format!(
                "search {i}, goal {}: ours {:?} {:?} {:?}, the reference's {r}",
                m.goal.name, m.relevant_lower_bound, m.relevant_upper_bound, m.conditional_throughput
            );
            let classes: Vec<(f64, String)> =
                r["classes"].as_array().unwrap().iter().map(|c| (c[0].as_f64().unwrap(), c[1].as_str().unwrap().to_string())).collect();
            let mine: Vec<(f64, String)> =
                m.loads.iter().map(|(s, c)| (s.load, serde_json::to_value(c).unwrap().as_str().unwrap().to_string())).collect();
            assert_eq!(mine, classes, "{what}");
            assert_eq!(m.relevant_lower_bound, r["relevant_lower_bound"].as_f64(), "{what}");
            assert_eq!(m.relevant_upper_bound, r["relevant_upper_bound"].as_f64(), "{what}");
            match (m.conditional_throughput, r["conditional_throughput"].as_f64()) {
                (Some(a), Some(b)) => assert!((a - b).abs() <= 1e-9 * b, "{what}"),
                (a, b) => assert_eq!(a, b, "{what}"),
            }
            if m.irregular.is_none() {
                assert!(m.within_width, "{what}");
                regular += 1;
            }
        }
    }
    assert!(regular >= 40, "only {regular} of 80 goals regular");
}
