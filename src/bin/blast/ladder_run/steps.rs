//! The ladder's steps: each prepared at drop (when there is a --peer) and
//! measured, in order, --repeat times, until one cannot run or a signal
//! arrives.

use std::time::Instant;

use blastdrop::sender::{Sender, StepFailure, StepParams};
use blastdrop::signals;
use ladder::{StepRecord, StepSpec};

use super::print;
use super::record::StepSeries;
use crate::mode::LadderRun;
use crate::peer::{self, Measured, Peer};
use crate::settings::Settings;

/// Runs every step. Returns the records of the steps run (a step that
/// could not run is recorded with its error), each step's series, and why
/// the ladder stopped early, if it did.
pub fn run(
    settings: &Settings,
    m: &LadderRun,
    sender: &mut Sender,
    mut peer: Option<&mut Peer>,
) -> (Vec<StepRecord>, Vec<StepSeries>, Option<StepFailure>) {
    let mut series = Vec::new();
    let total_steps = m.ladder.steps.len() * settings.timing.repeat as usize;
    let per_step = settings.timing.warmup + m.duration + settings.sender.drain;
    // The first estimate: every step's window, and with --cross-check the C
    // lanes' window of each unpaced one (a paced one only if its sender falls short).
    let cross_checked = if settings.traffic.cross_check { m.ladder.steps.iter().filter(|s| s.rate.is_none()).count() } else { 0 };
    let windows = ((m.ladder.steps.len() + cross_checked) * settings.timing.repeat as usize) as u32;
    let began = Instant::now();
    let mut records: Vec<StepRecord> = Vec::new();
    let mut failure: Option<StepFailure> = None;
    'runs: for run in 1..=settings.timing.repeat {
        for (i, step) in m.ladder.steps.iter().enumerate() {
            if signals::stopping() {
                break 'runs;
            }
            let done = records.len();
            let left = if done == 0 { per_step * windows } else { began.elapsed() / done as u32 * (total_steps - done) as u32 };
            print::progress(done + 1, total_steps, step, run, settings.timing.repeat, left);
            let params = step_params(settings, m, step);
            if let Some(p) = peer.as_deref_mut() {
                if let Err(e) = prepare(p, sender, settings, step) {
                    records.push(failed(i, run, step, params.flows, e.clone()));
                    failure = Some(e);
                    break 'runs;
                }
            }
            let (mut rec, step_failure, mut interrupted) = measure_step(settings, sender, peer.as_deref_mut(), &params, (i, run), step);
            if step_failure.is_some() {
                failure = step_failure;
            }
            if let Some(t) = sender.timeline_mut() {
                t.step_done(&rec);
            }
            if let Some(s) = step_series(sender, i, run) {
                series.push(s);
            }
            if settings.traffic.cross_check && failure.is_none() && !interrupted && crate::cross_check::wanted(&rec) {
                (failure, interrupted) = crate::cross_check::run(sender, peer.as_deref_mut(), &params, &mut rec);
            }
            print::print_row(&rec);
            records.push(rec);
            if failure.is_some() || interrupted {
                break 'runs;
            }
        }
    }
    (records, series, failure)
}

/// The step's figures over time, cut from the run's timeline; a change
/// found in them is said.
fn step_series(sender: &mut Sender, step: usize, run: u32) -> Option<StepSeries> {
    let (series, analysis) = sender.timeline_mut()?.cut();
    if !analysis.changes.is_empty() {
        blastdrop::say!("blast: step {}: over time: {}", step + 1, analysis.sentence);
    }
    Some(StepSeries { step, run, series, analysis })
}

/// What the sender runs for one step of the ladder.
fn step_params(settings: &Settings, m: &LadderRun, step: &StepSpec) -> StepParams {
    StepParams {
        queues: step.queues,
        size: step.size,
        mix: m.mix.clone(),
        flows: settings.traffic.flows.unwrap_or(u32::from(step.queues)),
        rate: step.rate,
        count: None,
        duration: Some(m.duration),
        warmup: settings.timing.warmup,
        window: true,
        live: settings.outputs.live,
        shape: step.shape,
        reflect: settings.traffic.reflect,
        replay: None,
        c_lanes: false,
    }
}

/// Asks drop for the step's RX queues and frame size.
fn prepare(p: &mut Peer, sender: &mut Sender, settings: &Settings, step: &StepSpec) -> Result<(), StepFailure> {
    peer::prepare_step(p, sender, settings.traffic.rx_queues.unwrap_or(step.queues), step.size)
}

/// Measures one step (the `i`th of run `run`), and once more when the path broke.
fn measure_step(
    settings: &Settings,
    sender: &mut Sender,
    mut peer: Option<&mut Peer>,
    params: &StepParams,
    (i, run): (usize, u32),
    step: &StepSpec,
) -> Measured {
    let failed_with = |e: StepFailure| (failed(i, run, step, params.flows, e.clone()), Some(e), signals::interrupted());
    // A step that cannot run (a port that will not start, a link that
    // stays down when the receiver is gone) ends the ladder, and the
    // steps before it are still written.
    let mut measured = match peer::measure(sender, peer.as_deref_mut(), params, i, run) {
        Ok(measured) => measured,
        Err(f) => failed_with(StepFailure::Sender(f.message)),
    };
    // A broken path (the two ends not joined through: memif rings
    // left apart by a reconnect) measured nothing of either end: the
    // port starts again and the step runs once more, the first
    // attempt's evidence kept in the record.
    if let Some(evidence) = broken_path(&measured.0).filter(|_| measured.1.is_none() && !measured.2) {
        blastdrop::say!("blast: step {}: the path broke ({evidence}): starting the port again and measuring the step once more", i + 1);
        sender.reconnect_next_step();
        let again = match peer.as_deref_mut() {
            Some(p) => prepare(p, sender, settings, step),
            None => Ok(()),
        }
        .and_then(|()| peer::measure(sender, peer, params, i, run).map_err(|f| StepFailure::Sender(f.message)));
        match again {
            Ok(mut m) => {
                m.0.broken_attempt = Some(evidence);
                measured = m;
            }
            Err(e) => measured = failed_with(e),
        }
    }
    measured
}

/// The evidence of a broken path, when that is the step's verdict.
fn broken_path(rec: &StepRecord) -> Option<String> {
    let v = rec.verdict.as_ref()?;
    v.primary().filter(|l| l.kind == limits::LimitKind::Path).map(|l| l.evidence.clone())
}

/// The record of a step that could not run.
fn failed(step: usize, run: u32, spec: &StepSpec, flows: u32, error: StepFailure) -> StepRecord {
    StepRecord {
        step,
        run,
        queues: spec.queues,
        size: spec.size,
        flows,
        shape: spec.shape.to_string(),
        offered_mpps: spec.rate.map(|r| r / 1e6),
        error: Some(error.into()),
        ..Default::default()
    }
}
