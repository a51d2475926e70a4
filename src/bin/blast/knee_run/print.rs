//! What the knee search prints: the plan, a line per trial, and the
//! results with their qualifiers (and the sentence, with --sentence).

use control::PeerInfo;
use knee::{mpps_floor, Bound, Counted, Goal, Next, Qualifiers, Search, TrialKind, COMMIT_SHARE, DELIVERY_TOLERANCE};

use super::record::{KneeResult, LoadPoint, Trial};
use crate::mode::Knee;
use crate::settings::Settings;

/// The line that opens the search.
pub fn announce(settings: &Settings, m: &Knee, max_rate: f64, qualifiers: &Qualifiers, info: &PeerInfo) {
    blastdrop::say!(
        "blast: knee search from {:.3} Mpps down, {}: NDR loss <= {}%, PDR loss <= {}%{}; {:.1?} search trials, {:.1?} confirmations, {:.1?} warm-up each; receiver: drop on {} ({}); receiver-side figures; a trial the sender falls more than {}% short on counts at the rate it delivered",
        max_rate / 1e6,
        qualifiers.text(),
        settings.judging.loss_pct,
        settings.judging.pdr_loss_pct,
        settings.judging.sla.as_ref().map_or(String::new(), |s| format!(", {}", s.label())),
        settings.timing.search_duration,
        m.duration,
        settings.timing.warmup,
        info.hostname,
        info.driver,
        DELIVERY_TOLERANCE * 100.0
    );
}

/// The results: NDR and PDR, the ceiling (or why there is none), latency
/// under load, and the sentence when asked for.
pub fn print_result(
    settings: &Settings,
    search: &Search,
    result: &KneeResult,
    qualifiers: &Qualifiers,
    max_rate: f64,
    under_load: &[LoadPoint],
) {
    blastdrop::say!();
    blastdrop::say!(
        "NDR (loss <= {}%): {}; PDR (loss <= {}%): {}  [{}; receiver-side]",
        settings.judging.loss_pct,
        result.ndr,
        settings.judging.pdr_loss_pct,
        result.pdr,
        qualifiers.text()
    );
    print_ceiling(settings, search, result, qualifiers, max_rate);
    for l in under_load {
        if let Some(s) = &l.step.latency {
            blastdrop::say!(
                "latency at {}% of the knee ({:.3} Mpps offered, round trip): {}",
                l.share_pct,
                l.step.offered_mpps.unwrap_or(0.0),
                s.line()
            );
        }
    }
    if settings.outputs.sentence {
        if let Some(s) = &result.sentence {
            blastdrop::say!("{s}");
        }
    }
}

/// The ceiling for this traffic, or why no knee was confirmed.
fn print_ceiling(settings: &Settings, search: &Search, result: &KneeResult, qualifiers: &Qualifiers, max_rate: f64) {
    match search.result(Goal::Pdr) {
        Some(k) => {
            blastdrop::say!(
                "ceiling for this traffic: {}{} Mpps{}, committable at {:.0}% of it: {} Mpps  [{}{}]",
                if result.sender_limited { "at least " } else { "" },
                mpps_floor(k / 1e6),
                match search.bounded_by(Goal::Pdr) {
                    Some(Bound::Sender) => " (the sender delivered no more: the path's knee is at or above it)",
                    Some(Bound::Top) => " (the top of the search passed: the path's knee is at or above it)",
                    Some(Bound::HeldBack) =>
                        " (a trial above it fell short of a rate the sender had delivered before: held back, not the sender's limit)",
                    _ => "",
                },
                COMMIT_SHARE * 100.0,
                mpps_floor(k * COMMIT_SHARE / 1e6),
                qualifiers.text(),
                result.limit_above.as_ref().map_or(String::new(), |l| format!("; limit above it: {l}"))
            );
        }
        None if search.bounds(Goal::Pdr).short_confirms > 0 && search.bounds(Goal::Pdr).held_back_confirms > 0 => {
            let b = search.bounds(Goal::Pdr);
            blastdrop::say!(
                "no knee confirmed: {} of {} confirmations fell more than {}% short of the offered rate, {} of them below a rate the sender had delivered before (held back by the path, the receiver or the host: each trial's limit says which)",
                b.short_confirms,
                b.failed_confirms,
                DELIVERY_TOLERANCE * 100.0,
                b.held_back_confirms
            );
        }
        None if search.bounds(Goal::Pdr).short_confirms > 0 => {
            let b = search.bounds(Goal::Pdr);
            blastdrop::say!(
                "no knee confirmed: the sender fell more than {}% short of the offered rate in {} of {} confirmations, so they could not count; lower --rate or give the sender more CPU{}",
                DELIVERY_TOLERANCE * 100.0,
                b.short_confirms,
                b.failed_confirms,
                search.result(Goal::Ndr).map_or(String::new(), |r| format!(" (the NDR's confirmation carried {} Mpps within the PDR limit too)", mpps_floor(r / 1e6)))
            );
        }
        None if search.gave_up(Goal::Pdr) => {
            blastdrop::say!("no knee confirmed: {} full-length confirmations failed", search.bounds(Goal::Pdr).failed_confirms)
        }
        None => blastdrop::say!(
            "no rate down to {:.3} Mpps kept loss within {}%: no knee",
            max_rate / 1000.0 / 1e6,
            settings.judging.pdr_loss_pct
        ),
    }
}

/// One trial's line: what it offered, sent and received, its verdicts,
/// and how it counted when the sender fell short.
pub fn print_trial(t: &Trial, next: &Next, counted: &Counted, i: usize, settings: &Settings) {
    let r = &t.step;
    let lat = r.latency.as_ref().map_or(String::new(), |l| {
        let pct = settings.judging.sla.as_ref().map_or("p99.9", |s| s.percentile.as_str());
        match l.at(pct) {
            Some(v) => format!(", {} {v:.1} us", pct.to_uppercase()),
            None => format!(", {} no samples", pct.to_uppercase()),
        }
    });
    blastdrop::say!(
        "  trial {i} ({}{}): offered {:.3} Mpps, sent {:.3}, received {:.3}, loss {:.3}%{lat}; limit: {}{}{}",
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
        outcome(t, next, counted),
        match counted.confirmed {
            Some(false) if counted.sender_short => "; not confirmed (the sender fell short)",
            Some(false) => "; not confirmed",
            _ => "",
        },
    );
}

/// " -> NDR pass, PDR fail", or how a trial the sender fell short on counted.
fn outcome(t: &Trial, next: &Next, counted: &Counted) -> String {
    let verdicts = format!("NDR {}, PDR {}", if t.ndr_pass { "pass" } else { "fail" }, if t.pdr_pass { "pass" } else { "fail" });
    match (counted.sender_short, counted.at) {
        (false, _) => format!(" -> {verdicts}"),
        (true, at) if counted.held_back => format!(
            "; held back: delivered {:.1}% of offered, a rate the sender has carried before (the verdict says what held it): a fail at {:.3} Mpps{}",
            counted.delivered_share * 100.0,
            next.rate / 1e6,
            at.map_or(String::new(), |at| format!("; at {:.3} Mpps delivered: {verdicts}", at / 1e6))
        ),
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
    }
}
