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
use knee::{Bound, Counted, Goal, Next, Qualifiers, Search, SearchConfig, TrialKind, COMMIT_SHARE, DELIVERY_TOLERANCE};
use ladder::StepRecord;

use crate::args::Args;
use crate::peer;

#[derive(Serialize)]
struct Trial {
    kind: TrialKind,
    /// For a confirmation, the goal it confirms.
    goal: Option<Goal>,
    /// Whether the trial kept the NDR and PDR limits (loss, and the SLA when
    /// given), at the rate it counted at (`counted_at_mpps`).
    ndr_pass: bool,
    pdr_pass: bool,
    /// The sender delivered less than the offered rate beyond the tolerance
    /// (`result.delivery_tolerance_pct`): no pass at the offered rate.
    sender_short: bool,
    /// What the sender delivered, percent of the offered rate.
    delivered_pct: f64,
    /// The rate the trial's result counted at: the offered one, or what the
    /// sender delivered when it fell short; null when it delivered less than
    /// the search's floor (then it only capped the search).
    counted_at_mpps: Option<f64>,
    /// For a confirmation: whether it confirmed its goal.
    confirmed: Option<bool>,
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
    /// Confirmed results: each the rate its confirming trial delivered.
    ndr_mpps: Option<f64>,
    pdr_mpps: Option<f64>,
    /// The knee: the PDR, which with --sla also kept the latency limit.
    knee_mpps: Option<f64>,
    committable_mpps: Option<f64>,
    /// What bounds each result: "path" (a trial above it failed: the knee),
    /// "sender" (the sender delivered no more) or "top" (the top of the
    /// search passed); the last two make the result "at least".
    ndr_bounded_by: Option<Bound>,
    pdr_bounded_by: Option<Bound>,
    ndr_sender_limited: bool,
    pdr_sender_limited: bool,
    /// The knee (PDR) is a lower bound: the sender delivered no more, or its
    /// maximum passed. The path's knee is at least knee_mpps.
    sender_limited: bool,
    /// Each result as printed: "6.550 Mpps", "at least 6.550 Mpps: the
    /// sender delivered no more", "none found", "none confirmed: ...".
    ndr: String,
    pdr: String,
    /// The trial (1-based, in `trials`) that confirmed each result.
    ndr_confirmed_by: Option<usize>,
    pdr_confirmed_by: Option<usize>,
    /// The lowest offered rate the sender fell short of, if any.
    sender_cap_mpps: Option<f64>,
    /// How far short of the offered rate a trial may fall and still count at it, percent.
    delivery_tolerance_pct: f64,
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
    peer::check_receiver(info, rx, size, args.reflect, "the knee search")?;
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
            println!("  unpaced: sent {:.3} Mpps, received {:.3} Mpps; limit: {}", rec.sent.mpps, rec.headline_mpps(), rec.limit());
            rec.sent.mpps * 1e6
        }
    };
    let qualifiers = Qualifiers { queues, size, flows, mtu: sender.mtu(), shape: shape.to_string() };
    println!(
        "blast: knee search from {:.3} Mpps down, {}: NDR loss <= {}%, PDR loss <= {}%{}; {:.1?} search trials, {:.1?} confirmations, {:.1?} warm-up each; receiver: drop on {} ({}); receiver-side figures; a trial the sender falls more than {}% short on counts at the rate it delivered",
        max_rate / 1e6,
        qualifiers.text(),
        args.loss,
        args.pdr_loss,
        args.sla.as_ref().map_or(String::new(), |s| format!(", {}", s.label())),
        args.search_duration,
        duration,
        args.warmup,
        info.hostname,
        info.driver,
        DELIVERY_TOLERANCE * 100.0
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
        // The trial counts at the load it carried: what the sender delivered.
        let delivered = rec.sent.mpps * 1e6;
        let counted = search.record(&next, next.rate, delivered, loss, latency_ok);
        let trial = Trial {
            kind: next.kind,
            goal: next.goal,
            ndr_pass: loss <= args.loss && latency_ok,
            pdr_pass: loss <= args.pdr_loss && latency_ok,
            sender_short: counted.sender_short,
            delivered_pct: counted.delivered_share * 100.0,
            counted_at_mpps: counted.at.map(|r| r / 1e6),
            confirmed: counted.confirmed,
            step: rec,
        };
        print_trial(&trial, &next, &counted, trials.len() + 1, args);
        trials.push(trial);
    }

    let ndr = search.result(Goal::Ndr);
    let pdr = search.result(Goal::Pdr);
    let knee = pdr;
    // The trial that confirmed each result (the last of its goal's to confirm).
    let confirmed_by =
        |g: Goal| search.result(g).and_then(|_| trials.iter().rposition(|t| t.goal == Some(g) && t.confirmed == Some(true))).map(|i| i + 1);
    let (ndr_by, pdr_by) = (confirmed_by(Goal::Ndr), confirmed_by(Goal::Pdr));
    let limit_above = match (knee, search.bounded_by(Goal::Pdr)) {
        // The sender delivered no more: it is the limit above the figure.
        (Some(_), Some(Bound::Sender)) => Some("sender".to_string()),
        (Some(_), Some(Bound::Top)) | (None, _) => None,
        // The first trial counted above the knee that failed: what stops the path there.
        (Some(k), _) => trials
            .iter()
            .filter(|t| !t.pdr_pass && t.counted_at_mpps.is_some_and(|r| r * 1e6 > k))
            .min_by(|a, b| a.counted_at_mpps.partial_cmp(&b.counted_at_mpps).unwrap_or(std::cmp::Ordering::Equal))
            .map(|t| t.step.limit()),
    };

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
    let (ndr_text, pdr_text) = (result_text(&search, Goal::Ndr), result_text(&search, Goal::Pdr));
    println!(
        "NDR (loss <= {}%): {}; PDR (loss <= {}%): {}  [{}; receiver-side]",
        args.loss,
        ndr_text,
        args.pdr_loss,
        pdr_text,
        qualifiers.text()
    );
    let sender_limited = search.sender_limited(Goal::Pdr);
    let sentence = knee.map(|k| {
        // The latency the confirming trial measured; none quoted without samples.
        let at_knee = pdr_by.map(|i| &trials[i - 1]);
        let pct = args.sla.as_ref().map_or("p99.9", |s| s.percentile.as_str());
        let lat = at_knee.and_then(|t| t.step.latency.as_ref()).and_then(|l| l.at(pct)).map(|v| (pct, v));
        if sender_limited {
            knee::sentence_at_least(&qualifiers, k / 1e6, args.pdr_loss, lat)
        } else {
            knee::sentence(&qualifiers, k / 1e6, args.pdr_loss, lat)
        }
    });
    match knee {
        Some(k) => {
            println!(
                "ceiling for this traffic: {}{:.3} Mpps{}, committable at {:.0}% of it: {:.3} Mpps  [{}{}]",
                if sender_limited { "at least " } else { "" },
                k / 1e6,
                match search.bounded_by(Goal::Pdr) {
                    Some(Bound::Sender) => " (the sender delivered no more: the path's knee is at or above it)",
                    Some(Bound::Top) => " (the top of the search passed: the path's knee is at or above it)",
                    _ => "",
                },
                COMMIT_SHARE * 100.0,
                k * COMMIT_SHARE / 1e6,
                qualifiers.text(),
                limit_above.as_ref().map_or(String::new(), |l| format!("; limit above it: {l}"))
            );
        }
        None if search.bounds(Goal::Pdr).short_confirms > 0 => {
            let b = search.bounds(Goal::Pdr);
            println!(
                "no knee confirmed: the sender fell more than {}% short of the offered rate in {} of {} confirmations, so they could not count; lower --rate or give the sender more CPU{}",
                DELIVERY_TOLERANCE * 100.0,
                b.short_confirms,
                b.failed_confirms,
                ndr.map_or(String::new(), |r| format!(" (the NDR's confirmation carried {:.3} Mpps within the PDR limit too)", r / 1e6))
            );
        }
        None if search.gave_up(Goal::Pdr) => {
            println!("no knee confirmed: {} full-length confirmations failed", search.bounds(Goal::Pdr).failed_confirms)
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
                ndr_bounded_by: search.bounded_by(Goal::Ndr),
                pdr_bounded_by: search.bounded_by(Goal::Pdr),
                ndr_sender_limited: search.sender_limited(Goal::Ndr),
                pdr_sender_limited: search.sender_limited(Goal::Pdr),
                sender_limited,
                ndr: ndr_text,
                pdr: pdr_text,
                ndr_confirmed_by: ndr_by,
                pdr_confirmed_by: pdr_by,
                sender_cap_mpps: search.sender_cap().map(|r| r / 1e6),
                delivery_tolerance_pct: DELIVERY_TOLERANCE * 100.0,
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

/// One goal's result as printed: "6.550 Mpps", "at least 6.550 Mpps: the
/// sender delivered no more", or why there is none.
fn result_text(search: &Search, g: Goal) -> String {
    let b = search.bounds(g);
    match (search.result(g), search.bounded_by(g)) {
        (Some(r), Some(Bound::Sender)) => format!("at least {:.3} Mpps: the sender delivered no more", r / 1e6),
        (Some(r), Some(Bound::Top)) => format!("at least {:.3} Mpps: the top of the search passed", r / 1e6),
        (Some(r), _) => format!("{:.3} Mpps", r / 1e6),
        (None, _) if b.short_confirms > 0 => format!(
            "none confirmed: the sender fell short of the offered rate in {} of {} confirmations",
            b.short_confirms, b.failed_confirms
        ),
        (None, _) if search.gave_up(g) => format!("none confirmed: {} confirmations failed", b.failed_confirms),
        (None, _) => "none found".to_string(),
    }
}

fn print_trial(t: &Trial, next: &Next, counted: &Counted, i: usize, args: &Args) {
    let r = &t.step;
    let lat = r.latency.as_ref().map_or(String::new(), |l| {
        let pct = args.sla.as_ref().map_or("p99.9", |s| s.percentile.as_str());
        match l.at(pct) {
            Some(v) => format!(", {} {v:.1} us", pct.to_uppercase()),
            None => format!(", {} no samples", pct.to_uppercase()),
        }
    });
    let verdicts = format!("NDR {}, PDR {}", if t.ndr_pass { "pass" } else { "fail" }, if t.pdr_pass { "pass" } else { "fail" });
    let outcome = match (counted.sender_short, counted.at) {
        (false, _) => format!(" -> {verdicts}"),
        (true, Some(at)) => format!(
            "; sender short: delivered {:.1}% of offered: not a pass at {:.3} Mpps -> at {:.3} Mpps delivered: {verdicts}",
            counted.delivered_share * 100.0,
            next.rate / 1e6,
            at / 1e6
        ),
        (true, None) => format!(
            "; sender short: delivered {:.1}% of offered: not a pass at {:.3} Mpps, and too little to count",
            counted.delivered_share * 100.0,
            next.rate / 1e6
        ),
    };
    let confirmation = match counted.confirmed {
        Some(false) if counted.sender_short => "; not confirmed (the sender fell short)",
        Some(false) => "; not confirmed",
        _ => "",
    };
    println!(
        "  trial {i} ({}{}): offered {:.3} Mpps, sent {:.3}, received {:.3}, loss {:.3}%{lat}; limit: {}{outcome}{confirmation}",
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
        r.limit(),
    );
}
