//! --find-knee --search mlr: RFC 9971's search. crates/mlr chooses each
//! trial's load and duration and classifies every load per Search Goal;
//! this runs the trials against drop (search.rs's `Trials`), prints them,
//! measures latency at fixed shares of the result, and writes the record
//! in the RFC's terms (docs/methodology.md).

use std::time::{Duration, Instant};

use crate::fail::Failure;
use blastdrop::sender::Sender;
use blastdrop::session::Started;
use blastdrop::signals;
use knee::{mpps_floor, Qualifiers, DELIVERY_TOLERANCE};
use mlr::search::{Ended, Search, SearchConfig};
use mlr::{GoalResult, Irregular};
use records::knee::LoadPoint;
use records::mlr::{LoadClass, MlrBody, MlrGoalResult, MlrRecord, MlrTrial, Statements};
use records::window::PeerInfo;

use super::search::Trials;
use crate::mode::Knee;
use crate::peer::{self, Peer};
use crate::settings::{AsGiven, Settings};

/// Coarser targets before each goal's own (the reference implementation's default).
const PRECEDING_TARGETS: u32 = 2;
/// A bound on one search's trials, whatever its goals.
const MAX_TRIALS: usize = 400;
/// Latency is measured at these shares of the result (0: a trickle of probes at the search's minimum load).
const LATENCY_SHARES: [u32; 4] = [0, 10, 50, 90];

pub fn run(
    settings: &Settings,
    m: &Knee,
    goals: &[mlr::Goal],
    started: &Started,
    sender: &mut Sender,
    p: &mut Peer,
    peer_info: &Option<PeerInfo>,
) -> Result<(), Failure> {
    let info = peer_info.as_ref().expect("--find-knee is checked to have --peer");
    let began = Instant::now();
    let mut trials = Trials::new(settings, m, sender, p);
    let max_load = trials.top()?.round();
    let min_load = (max_load / 1000.0).round().max(1.0);
    let qualifiers = Qualifiers { queues: m.queues, size: m.size, flows: m.flows, mtu: trials.sender.mtu(), shape: m.shape.to_string() };
    blastdrop::say!(
        "blast: RFC 9971 search from {} Mpps down, {}: {}; receiver: drop on {} ({}); receiver-side figures; a trial the sender falls more than {}% short on counts at the load it carried",
        mpps_floor(max_load / 1e6),
        qualifiers.text(),
        goals.iter().map(goal_text).collect::<Vec<_>>().join("; "),
        info.hostname,
        info.driver,
        DELIVERY_TOLERANCE * 100.0
    );
    let mut search =
        Search::new(SearchConfig { goals: goals.to_vec(), max_load, min_load, preceding: PRECEDING_TARGETS, max_trials: MAX_TRIALS });
    let (mut kept, mut ended, mut failure, mut interrupted) = (Vec::new(), None, None, false);
    loop {
        let next = match search.next() {
            Ok(n) => n,
            Err(e) => {
                ended = Some(e);
                break;
            }
        };
        if signals::stopping() {
            interrupted = true;
            break;
        }
        let (rec, f, intr) = trials.measure(Some(next.load), Duration::from_secs_f64(next.duration), m.shape)?;
        if let Some(e) = f.map(|e| e.to_string()).or_else(|| rec.error.as_ref().map(|e| e.to_string())) {
            failure = Some(e);
            interrupted |= intr;
            break;
        }
        // The classification needs every trial's exact loss: without it, no result.
        let lost = match super::search::exact_lost(&rec) {
            Ok(_) if rec.sent.packets == 0 => Err("the sender sent no frames".to_string()),
            other => other,
        };
        let lost = match lost {
            Ok(l) => l,
            Err(why) => {
                failure = Some(format!(
                    "trial {} cannot be classified: {why}; RFC 9971 classifies every load from exact loss counts",
                    kept.len() + 1
                ));
                break;
            }
        };
        let offered = rec.sent.packets;
        let loss_ratio = lost as f64 / offered as f64;
        let counted = search.record(&next, rec.sent.mpps * 1e6, rec.sent.seconds, loss_ratio);
        let trial = MlrTrial {
            intended_load: next.load,
            load: counted.load,
            held_back: counted.held_back,
            intended_duration: next.duration,
            effective_duration: rec.sent.seconds,
            offered,
            lost,
            loss_ratio,
            for_goal: goals[next.goal].name.clone(),
            target_level: next.level,
            reason: next.reason,
            step: rec,
        };
        print_trial(&trial, kept.len() + 1);
        kept.push(trial);
    }
    let results = search.results();
    let goal_results: Vec<MlrGoalResult> = results.iter().map(|r| goal_record(r, search.cap(), max_load)).collect();
    blastdrop::say!();
    for g in &goal_results {
        blastdrop::say!("goal {} ({}): {}", g.goal.name, goal_text(&g.goal), g.text);
    }
    // Latency at shares of the last goal's conditional throughput (PDR by default).
    let mut under_load: Vec<LoadPoint> = Vec::new();
    let mut latency_failure = None;
    let base = results.last().and_then(|r| r.conditional_throughput);
    if let (true, false, None, Some(ct)) = (settings.traffic.reflect, interrupted, &failure, base) {
        under_load = trials.under_load(ct, &LATENCY_SHARES, min_load, &mut latency_failure)?;
        for l in &under_load {
            if let Some(s) = &l.step.latency {
                blastdrop::say!(
                    "latency at {}% of {}'s conditional throughput ({} Mpps offered, round trip): {}",
                    l.share_pct,
                    goals[goals.len() - 1].name,
                    mpps_floor(l.step.offered_mpps.unwrap_or(0.0)),
                    s.line()
                );
            }
        }
    }
    let mut failure = failure.or(latency_failure.map(|e| format!("latency under load stopped: {e}")));
    let mut back_to_back = None;
    if let (Some((reps, limit)), false, None) = (m.back_to_back, interrupted, &failure) {
        // The throughput that corrects the buffer time: the first zero-loss goal's.
        let t = results.iter().find(|r| r.goal.loss_ratio == 0.0).and_then(|r| {
            r.conditional_throughput.map(|ct| (ct, format!("the conditional throughput of goal {} (loss ratio 0)", r.goal.name)))
        });
        back_to_back = super::b2b::run(&mut trials, reps, limit, t, &mut failure)?;
    }
    let sentence = results.last().and_then(|r| sentence(r, &qualifiers));
    if settings.outputs.sentence {
        if let Some(s) = &sentence {
            blastdrop::say!("{s}");
        }
    }
    match ended {
        Some(Ended::TrialLimit) => eprintln!("blast: the search reached its bound of {MAX_TRIALS} trials before every goal was decided"),
        None if interrupted => eprintln!("blast: the search was interrupted: the results are from the trials that ran"),
        _ => {}
    }
    eprintln!("blast: RFC 9971 search took {:.0?}, {} trials", began.elapsed(), trials.n);

    let title = format!("blastdrop RFC 9971 search: {} ({})", trials.sender.info().name, trials.sender.info().driver);
    let (series, series_analysis) = crate::over_time::finish(&settings.outputs, trials.sender, &title)?;
    if let Some(path) = &settings.outputs.csv {
        let steps: Vec<_> = kept.iter().map(|t| t.step.clone()).collect();
        std::fs::write(path, ladder::render_csv(&steps))
            .map_err(|e| Failure::runtime(format!("cannot write --csv {}: {e}", path.display())))?;
    }
    if let Some(path) = &settings.outputs.json {
        let statements = statements(settings, trials.sender, info);
        let body = MlrBody {
            environment: peer::Environments {
                sender: blastdrop::environment::of_sender(started, trials.sender, m.queues),
                receiver: peer_info.clone(),
            },
            qualifiers,
            max_load,
            min_load,
            top_load: search.cap(),
            preceding_targets: PRECEDING_TARGETS,
            delivery_tolerance_pct: DELIVERY_TOLERANCE * 100.0,
            goals: goal_results,
            trials: kept,
            ended,
            failure: failure.clone(),
            interrupted,
            statements,
            latency_under_load: under_load,
            sentence,
            back_to_back,
            series,
            series_analysis,
        };
        let record: MlrRecord<&AsGiven> = records::Record::blast("mlr", &settings.config, body);
        blastdrop::record_file::write_json(path, &record)?;
    }
    match failure {
        Some(e) => Err(Failure::runtime(format!("RFC 9971 search stopped: {e}"))),
        None => Ok(()),
    }
}

/// "loss ratio 0.005, exceed ratio 0.5, final trial 30 s, duration sum 60 s, initial 1 s, width 0.5%".
fn goal_text(g: &mlr::Goal) -> String {
    format!(
        "{}: loss ratio {}, exceed ratio {}, final trial {} s, duration sum {} s, initial trial {} s, width {}%",
        g.name,
        g.loss_ratio,
        g.exceed_ratio,
        g.final_trial_duration,
        g.duration_sum,
        g.initial_trial_duration,
        g.width * 100.0
    )
}

fn print_trial(t: &MlrTrial, n: usize) {
    let counted = match (t.load == t.intended_load, t.held_back) {
        (true, _) => String::new(),
        (false, false) => format!("; the sender carried {} Mpps: counts there, and no higher load is tried", mpps_floor(t.load / 1e6)),
        (false, true) => format!("; held back to {} Mpps (a load carried before): counts there", mpps_floor(t.load / 1e6)),
    };
    blastdrop::say!(
        "  trial {n:>3} ({} target {}, {:?}): {} Mpps for {} s: lost {} of {} (loss ratio {:.3e}){counted}",
        t.for_goal,
        t.target_level,
        t.reason,
        mpps_floor(t.intended_load / 1e6),
        t.intended_duration,
        t.lost,
        t.offered,
        t.loss_ratio
    );
}

/// A goal's result as the record keeps it, with its text.
fn goal_record(r: &GoalResult, top: f64, max_load: f64) -> MlrGoalResult {
    let mpps = |v: f64| mpps_floor(v / 1e6);
    let mut text = match (&r.irregular, r.conditional_throughput, r.relevant_lower_bound, r.relevant_upper_bound) {
        (None, Some(ct), Some(lo), Some(hi)) => {
            format!("conditional throughput {} Mpps (relevant lower bound {} Mpps, relevant upper bound {} Mpps)", mpps(ct), mpps(lo), mpps(hi))
        }
        (Some(Irregular::NoUpperBound), Some(ct), Some(lo), _) if top < max_load => format!(
            "irregular, no upper bound: at least {} Mpps (conditional throughput at the relevant lower bound {} Mpps): the sender carried no more",
            mpps(ct),
            mpps(lo)
        ),
        (Some(Irregular::NoUpperBound), Some(ct), Some(lo), _) => format!(
            "irregular, no upper bound: at least {} Mpps (conditional throughput at the relevant lower bound {} Mpps): the top of the search passed",
            mpps(ct),
            mpps(lo)
        ),
        (Some(Irregular::NoLowerBound), _, _, Some(hi)) => {
            format!("irregular, no lower bound: none; even the lowest load decided ({} Mpps) failed", mpps(hi))
        }
        _ => "unknown: no load was decided for this goal".to_string(),
    };
    if r.irregular.is_none() && !r.within_width {
        text.push_str(&format!(
            "; the bounds are wider than the goal's width ({}%): the search ended before they closed in",
            r.goal.width * 100.0
        ));
    }
    MlrGoalResult {
        goal: r.goal.clone(),
        relevant_lower_bound: r.relevant_lower_bound,
        relevant_upper_bound: r.relevant_upper_bound,
        conditional_throughput: r.conditional_throughput,
        irregular: r.irregular.clone(),
        within_width: r.within_width,
        loads: r
            .loads
            .iter()
            .map(|(s, c)| LoadClass {
                load: s.load,
                class: *c,
                good_long: s.good_long,
                bad_long: s.bad_long,
                good_short: s.good_short,
                bad_short: s.bad_short,
            })
            .collect(),
        text,
    }
}

/// The committable sentence: the conditional throughput with its goal, or
/// none where the goal has no lower bound.
fn sentence(r: &GoalResult, q: &Qualifiers) -> Option<String> {
    let ct = r.conditional_throughput?;
    let at_least = if r.irregular.is_some() { "at least " } else { "" };
    Some(format!(
        "RFC 9971 conditional throughput for goal {}: {at_least}{} Mpps [{}; receiver-side; one direction]",
        goal_text(&r.goal),
        mpps_floor(ct / 1e6),
        q.text()
    ))
}

/// The statements RFC 9971 asks a report to make.
fn statements(settings: &Settings, sender: &Sender, info: &PeerInfo) -> Statements {
    Statements {
        units: "loads in frames per second (whole), over all the sender's TX queues, one direction; durations in seconds; loss ratios as a fraction of the offered frames; printed Mpps are millions of frames per second, rounded down".into(),
        frames_counted: format!(
            "offered: the frames blast's TX lanes handed to {} ({}) in each trial's measured window; lost: of those, the frames drop's RX lanes on {} ({}, host {}) did not count, per stream from the probes' sequence numbers (exact)",
            sender.info().name,
            sender.info().driver,
            info.port_name,
            info.driver,
            info.hostname
        ),
        deviations: vec![
            format!(
                "A trial counts at the load it carried: one the sender fell more than {}% short on is classified at the load it delivered, which caps the search while no earlier trial carried the intended load (a trial short of a load carried before was held back, and does not cap it). RFC 9971 has no such rule; its reference implementation counts the unsent frames as lost at the intended load.",
                DELIVERY_TOLERANCE * 100.0
            ),
            format!(
                "Each trial's Trial Effective Duration is its measured window; a {:.1?} warm-up at the trial's load comes first and is not counted.",
                settings.timing.warmup
            ),
            "The frames carry blast's probe header (stream, sequence, timestamp) in their UDP payload; RFC 2544's test frames carry none.".into(),
        ],
    }
}

/// The JSON schema of an RFC 9971 search's record.
pub fn schema() -> schemars::Schema {
    records::schema_of::<MlrRecord<&'static AsGiven<'static>>>()
}
