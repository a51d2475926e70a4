//! --cross-check: a step measured again at once with the C lanes (the
//! plain C send loop of blast-ref, linked in), and the finding written
//! into the step's record and, where the step's limit is the sender, into
//! its verdict.

use blastdrop::sender::{Sender, StepFailure, StepParams};
use ladder::{CrossCheck, StepRecord};
use limits::LimitKind;

use crate::peer::{self, Peer};

/// Whether `rec` is a step to cross-check: measured, and unpaced or held
/// back by the sender.
pub fn wanted(rec: &StepRecord) -> bool {
    rec.error.is_none() && (rec.offered_mpps.is_none() || sender_limited(rec))
}

fn sender_limited(rec: &StepRecord) -> bool {
    rec.verdict.as_ref().and_then(|v| v.primary()).is_some_and(|l| l.kind == LimitKind::Sender)
}

/// Measures `params`' step again with the C lanes, unpaced, and judges
/// `rec` (blast's window of it) against that. Returns why the run must
/// stop, if the C lanes' window failed so (its record keeps the failure
/// too), and whether it was interrupted.
pub fn run(sender: &mut Sender, peer: Option<&mut Peer>, params: &StepParams, rec: &mut StepRecord) -> (Option<StepFailure>, bool) {
    let c_params = StepParams { rate: None, shape: pace::Shape::Open, c_lanes: true, ..params.clone() };
    blastdrop::say!("blast: step {}: cross-check: the same step again with the C lanes (blast-ref's loop), unpaced", rec.step + 1);
    let (c_rec, failure, interrupted) = match peer::measure(sender, peer, &c_params, rec.step, rec.run) {
        Ok(m) => m,
        Err(f) => {
            let e = StepFailure::Sender(f.message);
            (StepRecord { error: Some(e.clone().into()), ..Default::default() }, Some(e), blastdrop::signals::interrupted())
        }
    };
    // The C window's frames are not the step's: its rows leave the series.
    if let Some(t) = sender.timeline_mut() {
        let _ = t.cut();
    }
    let check = CrossCheck::judge(rec, c_rec);
    if sender_limited(rec) {
        if let Some(l) = rec.verdict.as_mut().and_then(|v| v.limits.first_mut()) {
            l.evidence = format!("{}; cross-check: {}", l.evidence, check.sentence);
        }
    }
    blastdrop::say!("blast: step {}: cross-check: {}", rec.step + 1, check.sentence);
    rec.cross_check = Some(check);
    (failure, interrupted)
}
