//! The knee's JSON record: every trial, the results with what bounds
//! them, and latency under load; and the texts it carries (a goal's
//! result, the sentence), which print.rs prints from it.

use crate::fail::Failure;
use blastdrop::record_file;
use knee::{mpps_floor, Bound, Goal, Qualifiers, Search, COMMIT_SHARE, DELIVERY_TOLERANCE};
use ladder::StepRecord;

use crate::settings::{AsGiven, Settings};

pub use records::knee::{KneeBody, KneeResult, LoadPoint, Trial};

/// The results of `search`, whose trials are `trials`.
pub fn knee_result(settings: &Settings, search: &Search, trials: &[Trial], qualifiers: &Qualifiers) -> KneeResult {
    let (ndr, pdr) = (search.result(Goal::Ndr), search.result(Goal::Pdr));
    let knee = pdr;
    let pdr_by = confirmed_by(search, trials, Goal::Pdr);
    let sender_limited = search.sender_limited(Goal::Pdr);
    KneeResult {
        ndr_mpps: ndr.map(|r| r / 1e6),
        pdr_mpps: pdr.map(|r| r / 1e6),
        knee_mpps: knee.map(|r| r / 1e6),
        committable_mpps: knee.map(|r| r * COMMIT_SHARE / 1e6),
        ndr_bounded_by: search.bounded_by(Goal::Ndr),
        pdr_bounded_by: search.bounded_by(Goal::Pdr),
        ndr_sender_limited: search.sender_limited(Goal::Ndr),
        pdr_sender_limited: search.sender_limited(Goal::Pdr),
        sender_limited,
        ndr: result_text(search, Goal::Ndr),
        pdr: result_text(search, Goal::Pdr),
        ndr_confirmed_by: confirmed_by(search, trials, Goal::Ndr),
        pdr_confirmed_by: pdr_by,
        sender_cap_mpps: search.sender_cap().map(|r| r / 1e6),
        delivery_tolerance_pct: DELIVERY_TOLERANCE * 100.0,
        limit_above: limit_above(search, trials),
        sentence: knee.map(|k| sentence(settings, qualifiers, k, sender_limited, pdr_by.map(|i| &trials[i - 1]))),
    }
}

/// One goal's result as printed: "6.550 Mpps", "at least 6.550 Mpps: the
/// sender delivered no more", or why there is none.
pub fn result_text(search: &Search, g: Goal) -> String {
    let b = search.bounds(g);
    match (search.result(g), search.bounded_by(g)) {
        (Some(r), Some(Bound::Sender)) => format!("at least {} Mpps: the sender delivered no more", mpps_floor(r / 1e6)),
        (Some(r), Some(Bound::Top)) => format!("at least {} Mpps: the top of the search passed", mpps_floor(r / 1e6)),
        (Some(r), Some(Bound::HeldBack)) => format!(
            "{} Mpps: a trial above it fell short of a rate the sender had delivered before (held back by the path, the receiver or the host: its limit says which)",
            mpps_floor(r / 1e6)
        ),
        (Some(r), _) => format!("{} Mpps", mpps_floor(r / 1e6)),
        (None, _) if b.short_confirms > 0 && b.held_back_confirms == b.short_confirms => format!(
            "none confirmed: {} of {} confirmations fell short of a rate the sender had delivered before (held back by the path, the receiver or the host)",
            b.short_confirms, b.failed_confirms
        ),
        (None, _) if b.short_confirms > 0 => format!(
            "none confirmed: the sender fell short of the offered rate in {} of {} confirmations",
            b.short_confirms, b.failed_confirms
        ),
        (None, _) if search.gave_up(g) => format!("none confirmed: {} confirmations failed", b.failed_confirms),
        (None, _) => "none found".to_string(),
    }
}

/// The committable sentence for knee `k` (frames per second), with the
/// latency the confirming trial measured (none quoted without samples).
pub fn sentence(settings: &Settings, qualifiers: &Qualifiers, k: f64, sender_limited: bool, at_knee: Option<&Trial>) -> String {
    let pct = settings.judging.sla.as_ref().map_or("p99.9", |s| s.percentile.as_str());
    let lat = at_knee.and_then(|t| t.step.latency.as_ref()).and_then(|l| l.at(pct)).map(|v| (pct, v));
    if sender_limited {
        knee::sentence_at_least(qualifiers, k / 1e6, settings.judging.pdr_loss_pct, lat)
    } else {
        knee::sentence(qualifiers, k / 1e6, settings.judging.pdr_loss_pct, lat)
    }
}

/// The trial that confirmed a goal's result (the last of its goal's to confirm), 1-based.
fn confirmed_by(search: &Search, trials: &[Trial], g: Goal) -> Option<usize> {
    search.result(g).and_then(|_| trials.iter().rposition(|t| t.goal == Some(g) && t.confirmed == Some(true))).map(|i| i + 1)
}

/// What stops the path above the knee.
fn limit_above(search: &Search, trials: &[Trial]) -> Option<String> {
    match (search.result(Goal::Pdr), search.bounded_by(Goal::Pdr)) {
        // The sender delivered no more: it is the limit above the figure.
        (Some(_), Some(Bound::Sender)) => Some("sender".to_string()),
        (Some(_), Some(Bound::Top)) | (None, _) => None,
        // The lowest failure above the knee of the kind that bounds it (a
        // loss for `path`, a load held back for `held-back`): its verdict is
        // what stops the path there. A trial the host held back between the
        // knee and a lossy bound measured the host's stall, not the path.
        (Some(k), bound) => {
            let held = bound == Some(Bound::HeldBack);
            trials
                .iter()
                .filter(|t| t.held_back == held)
                .filter_map(|t| failed_at(t).filter(|&r| r * 1e6 > k).map(|r| (r, t)))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, t)| t.step.limit())
        }
    }
}

/// The rate (Mpps) at which a trial failed, if it did: where its loss
/// counted, or the offered rate a held-back trial did not carry.
fn failed_at(t: &Trial) -> Option<f64> {
    if t.held_back {
        t.step.offered_mpps
    } else if !t.pdr_pass {
        t.counted_at_mpps
    } else {
        None
    }
}

/// The record: the header every record begins with, then the search's own.
pub type KneeRecord<'a> = records::knee::KneeRecord<&'a AsGiven<'a>>;

/// Writes the record to `path`.
pub fn write(record: &KneeRecord<'_>, path: &std::path::Path) -> Result<(), Failure> {
    Ok(record_file::write_json(path, record)?)
}

/// --plot (loss against offered rate, NDR and PDR marked, latency under
/// load) and --csv (a row per trial, as a ladder's steps), those asked for.
pub fn write_plot_and_csv(
    settings: &Settings,
    trials: &[Trial],
    result: &KneeResult,
    under_load: &[LoadPoint],
    title: &str,
) -> Result<(), Failure> {
    if let Some(path) = &settings.outputs.plot {
        let points: Vec<ladder::KneePoint> = trials.iter().filter_map(ladder::KneePoint::of).collect();
        let steps: Vec<StepRecord> = under_load.iter().map(|l| l.step.clone()).collect();
        let latency = ladder::LatencyPoint::from_records(&steps);
        let plot = ladder::render_knee_svg(&points, result.ndr_mpps, result.pdr_mpps, &latency, title)
            .map_err(|e| Failure::runtime(format!("cannot draw --plot: {e}")))?;
        std::fs::write(path, plot.into_svg(title)).map_err(|e| Failure::runtime(format!("cannot write --plot {}: {e}", path.display())))?;
    }
    if let Some(path) = &settings.outputs.csv {
        let steps: Vec<StepRecord> = trials.iter().map(|t| t.step.clone()).collect();
        std::fs::write(path, ladder::render_csv(&steps))
            .map_err(|e| Failure::runtime(format!("cannot write --csv {}: {e}", path.display())))?;
    }
    Ok(())
}

/// The JSON schema of the knee's record.
pub fn schema() -> schemars::Schema {
    records::schema_of::<KneeRecord<'static>>()
}
