//! The knee's trials: the top of the search, the search itself (each trial
//! a measured step against drop), and latency under load below the knee.

use std::time::Duration;

use crate::fail::Failure;
use blastdrop::sender::{Sender, StepParams};
use blastdrop::signals;
use knee::{Search, SearchConfig};

use super::print;
use super::record::{LoadPoint, Trial};
use crate::mode::Knee;
use crate::peer::{self, Peer};
use crate::settings::Settings;

/// Runs the trials, and counts them (`n`, each one's step index).
pub struct Trials<'a> {
    settings: &'a Settings<'a>,
    m: &'a Knee,
    pub sender: &'a mut Sender,
    peer: &'a mut Peer,
    pub n: usize,
}

/// A trial's exact loss, or why it has none: counts that do not add up, or
/// no per-stream account from drop (RFC 9971's classes and RFC 9004's
/// bursts are decided from exact counts only).
pub(super) fn exact_lost(rec: &ladder::StepRecord) -> Result<u64, String> {
    match (rec.lost, &rec.accounting_error) {
        (_, Some(e)) => Err(format!("its counts do not add up ({e})")),
        (None, None) => Err("drop gave no exact per-stream account of its frames".to_string()),
        (Some(l), None) => Ok(l),
    }
}

/// What the search found, and why it ended early, if it did.
pub struct Searched {
    pub search: Search,
    pub trials: Vec<Trial>,
    pub interrupted: bool,
    /// Its sentence, as the trial's record keeps it.
    pub failure: Option<records::step::StepFailure>,
}

impl<'a> Trials<'a> {
    pub fn new(settings: &'a Settings<'a>, m: &'a Knee, sender: &'a mut Sender, peer: &'a mut Peer) -> Trials<'a> {
        Trials { settings, m, sender, peer, n: 0 }
    }

    fn params(&self, rate: Option<f64>, d: Duration, shape: pace::Shape) -> StepParams {
        StepParams {
            queues: self.m.queues,
            size: self.m.size,
            mix: self.m.mix.clone(),
            flows: self.m.flows,
            rate,
            count: None,
            duration: Some(d),
            warmup: self.settings.timing.warmup,
            window: true,
            live: self.settings.outputs.live,
            shape,
            reflect: self.settings.traffic.reflect,
            replay: None,
            c_lanes: false,
        }
    }

    /// One measured trial: its record, why the search must stop, and whether it was interrupted.
    pub(super) fn measure(&mut self, rate: Option<f64>, d: Duration, shape: pace::Shape) -> Result<peer::Measured, Failure> {
        let params = self.params(rate, d, shape);
        self.run(&params)
    }

    /// Runs `params` as the next trial.
    fn run(&mut self, params: &StepParams) -> Result<peer::Measured, Failure> {
        let measured = peer::measure(self.sender, Some(&mut *self.peer), params, self.n, 1)?;
        self.n += 1;
        Ok(measured)
    }

    /// A trial at the sender's unpaced rate.
    pub(super) fn measure_unpaced(&mut self) -> Result<peer::Measured, Failure> {
        self.measure(None, self.settings.timing.search_duration, pace::Shape::Open)
    }

    /// One back-to-back burst of `frames`, unpaced, from an idle path (no warm-up).
    pub(super) fn measure_burst(&mut self, frames: u64) -> Result<peer::Measured, Failure> {
        let params = StepParams {
            count: Some(frames),
            duration: None,
            warmup: Duration::ZERO,
            ..self.params(None, Duration::ZERO, pace::Shape::Open)
        };
        self.run(&params)
    }

    /// The top of the search: --rate, or what the sender sends unpaced.
    pub fn top(&mut self) -> Result<f64, Failure> {
        if let Some(r) = self.settings.traffic.paced_rate {
            return Ok(r);
        }
        eprintln!("blast: knee: measuring the sender's unpaced rate for the top of the search");
        let (rec, failure, _) = self.measure(None, self.settings.timing.search_duration, pace::Shape::Open)?;
        if let Some(e) = failure {
            return Err(Failure::runtime(format!("knee search stopped: {e}")));
        }
        blastdrop::say!("  unpaced: sent {:.3} Mpps, received {:.3} Mpps; limit: {}", rec.sent.mpps, rec.headline_mpps(), rec.limit());
        Ok(rec.sent.mpps * 1e6)
    }

    /// Searches down from `max_rate` until the search is done, a trial
    /// fails to run, or a signal arrives.
    pub fn search(&mut self, max_rate: f64) -> Result<Searched, Failure> {
        let settings = self.settings;
        let mut search = Search::new(SearchConfig {
            max_rate,
            min_rate: (max_rate / 1000.0).max(1.0),
            precision: settings.judging.knee_precision_pct / 100.0,
            ndr_loss_pct: settings.judging.loss_pct,
            pdr_loss_pct: settings.judging.pdr_loss_pct,
            max_confirm_failures: 2,
        });
        let (mut trials, mut interrupted, mut failure) = (Vec::new(), false, None);
        while let Some(next) = search.next() {
            if signals::stopping() {
                interrupted = true;
                break;
            }
            let d = if next.full_length { self.m.duration } else { settings.timing.search_duration };
            let (rec, f, intr) = self.measure(Some(next.rate), d, self.m.shape)?;
            if let Some(e) = f.map(Into::into).or_else(|| rec.error.clone()) {
                failure = Some(e);
                interrupted |= intr;
                break;
            }
            let loss = rec.loss_pct.unwrap_or(100.0);
            let latency_ok = match (&settings.judging.sla, &rec.latency) {
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
                ndr_pass: loss <= settings.judging.loss_pct && latency_ok,
                pdr_pass: loss <= settings.judging.pdr_loss_pct && latency_ok,
                sender_short: counted.sender_short,
                delivered_pct: counted.delivered_share * 100.0,
                held_back: counted.held_back,
                counted_at_mpps: counted.at.map(|r| r / 1e6),
                confirmed: counted.confirmed,
                step: rec,
            };
            print::print_trial(&trial, &next, &counted, trials.len() + 1, settings);
            trials.push(trial);
        }
        Ok(Searched { search, trials, interrupted, failure })
    }

    /// Latency under load at `shares` percent of `knee` (0: `floor`, a
    /// trickle of probes); a trial that cannot run stops them, and says why
    /// in `failure`.
    pub fn under_load(
        &mut self,
        knee: f64,
        shares: &[u32],
        floor: f64,
        failure: &mut Option<records::step::StepFailure>,
    ) -> Result<Vec<LoadPoint>, Failure> {
        let mut points = Vec::new();
        for &share in shares {
            if signals::stopping() {
                break;
            }
            let rate = if share == 0 { floor } else { knee * f64::from(share) / 100.0 };
            let (rec, f, _) = self.measure(Some(rate), self.m.duration, self.m.shape)?;
            if let Some(e) = f {
                *failure = Some(e.into());
                break;
            }
            points.push(LoadPoint { share_pct: share, step: rec });
        }
        Ok(points)
    }
}
