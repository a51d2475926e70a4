//! --find-knee: the highest rate this traffic (queues, size, flows, shape)
//! crosses the path with loss, and optionally a latency percentile, within
//! the user's limits. The search logic is in crates/knee; this runs its trials.

use std::time::{Duration, Instant};

use serde::Serialize;

use blastdrop::fail::Failure;
use blastdrop::report;
use blastdrop::sender::{Sender, StepParams};
use blastdrop::session::Started;
use blastdrop::signals;
use knee::{Goal, Next, Qualifiers, Search, SearchConfig, TrialKind, COMMIT_SHARE};
use ladder::StepRecord;

use crate::args::Args;
use crate::peer;

#[derive(Serialize)]
struct Trial {
    kind: TrialKind,
    /// For a confirmation, the goal it confirms.
    goal: Option<Goal>,
    /// Whether the trial kept the NDR and PDR limits (loss, and the SLA when given).
    ndr_pass: bool,
    pdr_pass: bool,
    #[serde(flatten)]
    step: StepRecord,
}

#[derive(Serialize)]
struct LoadPoint {
    /// Share of the knee, percent.
    share_pct: u32,
    step: StepRecord,
}

#[derive(Serialize)]
struct KneeResult {
    ndr_mpps: Option<f64>,
    pdr_mpps: Option<f64>,
    /// The knee: the PDR, which with --sla also kept the latency limit.
    knee_mpps: Option<f64>,
    committable_mpps: Option<f64>,
    /// The sender's maximum passed: the knee is beyond what this sender offers.
    sender_limited: bool,
    /// The verdict of the first trial above the knee that failed: what stops the path there.
    limit_above: Option<String>,
    sentence: Option<String>,
}

#[derive(Serialize)]
struct KneeRecord<'a> {
    tool: &'static str,
    mode: &'static str,
    version: &'static str,
    config: &'a Args,
    environment: peer::Environments,
    qualifiers: Qualifiers,
    max_rate_mpps: f64,
    result: KneeResult,
    trials: Vec<Trial>,
    latency_under_load: Vec<LoadPoint>,
    interrupted: bool,
}

pub fn run(args: &Args, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    let queues = args.queues.0[0];
    let size = args.size.0[0];
    let flows = args.flows.unwrap_or(u32::from(queues));
    let shape = args.shape.unwrap_or(pace::Shape::Burst(args.burst as u32));
    let duration = args.duration.unwrap_or(Duration::from_secs(10));
    let (mut peer, peer_info) = peer::connect(args)?;
    let info = peer_info.as_ref().expect("--find-knee is checked to have --peer");
    let rx = args.rx_queues.unwrap_or(queues);
    peer::check_receiver(info, rx, size, "the knee search")?;
    peer::check_port_pairing(info, sender.sides().len());
    let p = peer.as_mut().expect("connected");
    p.prepare(rx, size).map_err(Failure::runtime)?;
    // Configured now, so the qualifiers carry the MTU in force.
    sender.set_queues(queues)?;

    let params = |rate: Option<f64>, d: Duration, shape: pace::Shape| StepParams {
        queues,
        size,
        flows,
        rate,
        count: None,
        duration: Some(d),
        warmup: args.warmup,
        window: true,
        live: args.live,
        shape,
        reflect: args.reflect,
    };
    let began = Instant::now();
    let mut trials: Vec<Trial> = Vec::new();
    let mut n = 0;

    // The top of the search: --rate, or what the sender sends unpaced.
    let max_rate = match args.rate {
        Some(r) => r,
        None => {
            eprintln!("blast: knee: measuring the sender's unpaced rate for the top of the search");
            let (rec, failure, _) = peer::measure(sender, Some(&mut *p), &params(None, args.search_duration, pace::Shape::Open), n, 1)?;
            n += 1;
            if let Some(e) = failure {
                return Err(Failure::runtime(format!("knee search stopped: {e}")));
            }
            println!("  unpaced: sent {:.3} Mpps, received {:.3} Mpps; limit: {}", rec.sent.mpps, rec.headline_mpps(), rec.limit);
            rec.sent.mpps * 1e6
        }
    };
    let qualifiers = Qualifiers { queues, size, flows, mtu: sender.mtu(), shape: shape.to_string() };
    println!(
        "blast: knee search from {:.3} Mpps down, {}: NDR loss <= {}%, PDR loss <= {}%{}; {:.1?} search trials, {:.1?} confirmations, {:.1?} warm-up each; receiver: drop on {} ({}); receiver-side figures",
        max_rate / 1e6,
        qualifiers.text(),
        args.loss,
        args.pdr_loss,
        args.sla.as_ref().map_or(String::new(), |s| format!(", {}", s.label())),
        args.search_duration,
        duration,
        args.warmup,
        info.hostname,
        info.driver
    );
    let mut search = Search::new(SearchConfig {
        max_rate,
        min_rate: (max_rate / 1000.0).max(1.0),
        precision: args.knee_precision / 100.0,
        ndr_loss_pct: args.loss,
        pdr_loss_pct: args.pdr_loss,
        max_confirm_failures: 2,
    });
    let mut interrupted = false;
    let mut failure = None;
    while let Some(next) = search.next() {
        if signals::stopping() {
            interrupted = true;
            break;
        }
        let d = if next.full_length { duration } else { args.search_duration };
        let (rec, f, intr) = peer::measure(sender, Some(&mut *p), &params(Some(next.rate), d, shape), n, 1)?;
        n += 1;
        if let Some(e) = f.or_else(|| rec.error.clone()) {
            failure = Some(e);
            interrupted |= intr;
            break;
        }
        let loss = rec.loss_pct.unwrap_or(100.0);
        let latency_ok = match (&args.sla, &rec.latency) {
            (None, _) => true,
            (Some(sla), Some(l)) => sla.holds(l),
            (Some(_), None) => false,
        };
        search.record(&next, next.rate, loss, latency_ok);
        let trial = Trial {
            kind: next.kind,
            goal: next.goal,
            ndr_pass: loss <= args.loss && latency_ok,
            pdr_pass: loss <= args.pdr_loss && latency_ok,
            step: rec,
        };
        print_trial(&trial, &next, trials.len() + 1, args);
        trials.push(trial);
    }

    let ndr = search.result(Goal::Ndr);
    let pdr = search.result(Goal::Pdr);
    let knee = pdr;
    let limit_above = knee.and_then(|k| {
        trials
            .iter()
            .filter(|t| !t.pdr_pass && t.step.offered_mpps.is_some_and(|r| r * 1e6 > k))
            .min_by(|a, b| a.step.offered_mpps.partial_cmp(&b.step.offered_mpps).unwrap_or(std::cmp::Ordering::Equal))
    });
    let limit_above = limit_above.map(|t| t.step.limit.clone());

    // Latency under load, below the knee.
    let mut under_load = Vec::new();
    if args.reflect && !interrupted && failure.is_none() {
        if let Some(k) = knee {
            for share in [10u32, 50, 90] {
                if signals::stopping() {
                    break;
                }
                let rate = k * f64::from(share) / 100.0;
                let (rec, f, _) = peer::measure(sender, Some(&mut *p), &params(Some(rate), duration, shape), n, 1)?;
                n += 1;
                if let Some(e) = f {
                    failure = Some(e);
                    break;
                }
                under_load.push(LoadPoint { share_pct: share, step: rec });
            }
        }
    }

    println!();
    let fmt = |r: Option<f64>| r.map_or("none found".to_string(), |r| format!("{:.3} Mpps", r / 1e6));
    println!(
        "NDR (loss <= {}%): {}; PDR (loss <= {}%): {}  [{}; receiver-side]",
        args.loss,
        fmt(ndr),
        args.pdr_loss,
        fmt(pdr),
        qualifiers.text()
    );
    let sender_limited = search.passed_at_max(Goal::Pdr);
    let sentence = knee.map(|k| {
        let at_knee = trials.iter().rev().find(|t| t.kind == TrialKind::Confirm && t.goal == Some(Goal::Pdr) && t.pdr_pass);
        let pct = args.sla.as_ref().map_or("p99.9", |s| s.percentile.as_str());
        let lat = at_knee.and_then(|t| t.step.latency.as_ref()).and_then(|l| l.at(pct)).map(|v| (pct, v));
        knee::sentence(&qualifiers, k / 1e6, args.pdr_loss, lat)
    });
    match knee {
        Some(k) => {
            println!(
                "ceiling for this traffic: {:.3} Mpps{}, committable at {:.0}% of it: {:.3} Mpps  [{}{}]",
                k / 1e6,
                if sender_limited { " (the sender's maximum passed: the path's knee is higher)" } else { "" },
                COMMIT_SHARE * 100.0,
                k * COMMIT_SHARE / 1e6,
                qualifiers.text(),
                limit_above.as_ref().map_or(String::new(), |l| format!("; limit above it: {l}"))
            );
        }
        None => println!("no rate down to {:.3} Mpps kept loss within {}%: no knee", max_rate / 1000.0 / 1e6, args.pdr_loss),
    }
    for l in &under_load {
        if let Some(s) = &l.step.latency {
            println!(
                "latency at {}% of the knee ({:.3} Mpps offered, round trip): {}",
                l.share_pct,
                l.step.offered_mpps.unwrap_or(0.0),
                s.line()
            );
        }
    }
    if args.sentence {
        if let Some(s) = &sentence {
            println!("{s}");
        }
    }
    eprintln!("blast: knee search took {:.0?}, {} trials", began.elapsed(), n);

    if let Some(path) = &args.json {
        let record = KneeRecord {
            tool: "blast",
            mode: "knee",
            version: env!("CARGO_PKG_VERSION"),
            config: args,
            environment: peer::Environments { sender: crate::environment(started, sender, queues), receiver: peer_info.clone() },
            qualifiers,
            max_rate_mpps: max_rate / 1e6,
            result: KneeResult {
                ndr_mpps: ndr.map(|r| r / 1e6),
                pdr_mpps: pdr.map(|r| r / 1e6),
                knee_mpps: knee.map(|r| r / 1e6),
                committable_mpps: knee.map(|r| r * COMMIT_SHARE / 1e6),
                sender_limited,
                limit_above,
                sentence,
            },
            trials,
            latency_under_load: under_load,
            interrupted,
        };
        report::write_json(path, &record).map_err(Failure::runtime)?;
    }
    if let Some(e) = failure {
        return Err(Failure::runtime(format!("knee search stopped: {e}")));
    }
    Ok(())
}

fn print_trial(t: &Trial, next: &Next, i: usize, args: &Args) {
    let r = &t.step;
    let lat = r.latency.as_ref().map_or(String::new(), |l| {
        let pct = args.sla.as_ref().map_or("p99.9", |s| s.percentile.as_str());
        format!(", {} {:.1} us", pct.to_uppercase(), l.at(pct).unwrap_or(0.0))
    });
    println!(
        "  trial {i} ({}{}): offered {:.3} Mpps, sent {:.3}, received {:.3}, loss {:.3}%{lat}; limit: {} -> NDR {}, PDR {}",
        match (next.kind, next.full_length) {
            (TrialKind::Confirm, _) => "confirm",
            (_, true) => "search, full length",
            _ => "search",
        },
        next.goal.map_or(String::new(), |g| format!(" {}", if g == Goal::Ndr { "NDR" } else { "PDR" })),
        next.rate / 1e6,
        r.sent.mpps,
        r.headline_mpps(),
        r.loss_pct.unwrap_or(100.0),
        r.limit,
        if t.ndr_pass { "pass" } else { "fail" },
        if t.pdr_pass { "pass" } else { "fail" },
    );
}
