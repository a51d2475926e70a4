//! --back-to-back: RFC 2544 section 26.4's back-to-back frame test as RFC
//! 9004 updates it, after a knee search (crates/b2b has the search and the
//! arithmetic). Each burst is one windowed trial with no warm-up: the
//! window opens on an idle path, the sender sends the burst unpaced, the
//! path drains for --drain, the window closes, and drop's exact count says
//! whether any frame was lost.

use std::time::Duration;

use crate::fail::Failure;
use b2b::{summarize, BurstSearch};
use blastdrop::signals;
use records::b2b::{BackToBack, Burst};

use super::search::Trials;

/// The first burst, and the search's resolution (a share of the longest that passed).
const FIRST_FRAMES: u64 = 64;
const RESOLUTION: f64 = 0.01;

/// Runs `repetitions` burst searches up to `limit` of sending at the
/// unpaced rate; `throughput` is the zero-loss rate (frames/s) that
/// corrects the buffer time, with where it comes from. None when
/// interrupted before any burst.
pub fn run(
    trials: &mut Trials,
    repetitions: u32,
    limit: Duration,
    throughput: Option<(f64, String)>,
    failure: &mut Option<String>,
) -> Result<Option<BackToBack>, Failure> {
    let Some((throughput_fps, throughput_from)) = throughput else {
        *failure = Some("the back-to-back test needs the search's zero-loss result, and there is none".into());
        return Ok(None);
    };
    eprintln!("blast: back-to-back: measuring the sender's unpaced rate for the bursts");
    let (rec, f, _) = trials.measure_unpaced()?;
    if let Some(e) = f {
        *failure = Some(format!("the back-to-back test stopped: {e}"));
        return Ok(None);
    }
    let max_rate = rec.sent.mpps * 1e6;
    let limit_frames = ((max_rate * limit.as_secs_f64()) as u64).max(FIRST_FRAMES);
    let (mut bursts, mut longest, mut at_limit) = (Vec::new(), Vec::new(), false);
    'reps: for repetition in 1..=repetitions {
        let mut search = BurstSearch::new(FIRST_FRAMES, limit_frames, RESOLUTION);
        while let Some(frames) = search.next() {
            if signals::stopping() {
                break 'reps;
            }
            let (rec, f, _) = trials.measure_burst(frames)?;
            let lost = match f.map_or_else(|| super::search::exact_lost(&rec), |e| Err(e.to_string())) {
                Ok(l) if rec.sent.packets != frames => {
                    Err(format!("the sender sent {} of its {frames} frames ({l} lost)", rec.sent.packets))
                }
                other => other,
            };
            let lost = match lost {
                Ok(l) => l,
                Err(e) => {
                    *failure = Some(format!("back-to-back burst of {frames} frames: {e}"));
                    break 'reps;
                }
            };
            search.record(frames, lost);
            blastdrop::say!("  burst {:>8} frames (repetition {repetition}): lost {lost}", frames);
            bursts.push(Burst { repetition, frames, lost, step: rec });
        }
        at_limit |= search.at_limit();
        longest.push(search.longest());
    }
    if longest.is_empty() {
        return Ok(None);
    }
    let summary = summarize(&longest, max_rate, throughput_fps, at_limit);
    let text = match (&summary.not_applicable, summary.corrected_buffer_time_s) {
        (Some(why), _) => format!("average {:.1} frames over {} repetition(s): {why}", summary.average_frames, longest.len()),
        (None, Some(c)) => format!(
            "average {:.1} frames (min {}, max {}, sd {:.1}) over {} repetition(s) at {:.3} Mpps: implied buffer time {:.1} us, corrected {:.1} us",
            summary.average_frames,
            summary.min_frames,
            summary.max_frames,
            summary.stddev_frames,
            longest.len(),
            max_rate / 1e6,
            summary.implied_buffer_time_s * 1e6,
            c * 1e6
        ),
        (None, None) => "unknown".into(),
    };
    blastdrop::say!("back-to-back: {text}");
    Ok(Some(BackToBack {
        repetitions: longest.len() as u32,
        first_frames: FIRST_FRAMES,
        limit_frames,
        resolution: RESOLUTION,
        max_rate_from: "the sender's unpaced rate, measured before the bursts (there is no stated line rate: it stands for RFC 9004's maximum theoretical frame rate)".into(),
        throughput_from,
        summary,
        bursts,
        deviations: vec![
            "Each burst's window closes --drain after its last frame, not RFC 9004's 2 s: a path whose buffer takes longer to empty loses its tail to the window (raise --drain)".into(),
            "The maximum rate is the sender's measured unpaced rate, not a line's theoretical one".into(),
        ],
        text,
    }))
}
