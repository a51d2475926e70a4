//! `--cross-check`: a step measured twice on the same queues, once with
//! blast's own send loop and at once again with the plain C loop of
//! blast-ref (its C lanes), and what the two figures say about whose
//! ceiling the step's is.

use serde::{Deserialize, Serialize};

use super::StepRecord;

/// The C lanes' window beside blast's, and the finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CrossCheck {
    /// The C lanes' window, measured as the step itself was (same queues,
    /// frame size, flows, warm-up and duration; unpaced), with its own counts
    /// and verdict.
    pub c_lanes: Box<StepRecord>,
    /// Which end's figure the two windows are compared on: `receiver`
    /// (drop's exact count of each window's own frames) or `sender` (frames
    /// tx_burst accepted: there is no receiver).
    pub basis: Basis,
    /// blast's figure over the C lanes' on `basis`, rounded to two places
    /// as it is printed (None: unknown, `sentence` says why).
    pub ratio: Option<f64>,
    pub finding: Finding,
    /// The finding in words, with the ratio as printed.
    pub sentence: String,
}

/// The end whose counts the ratio is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Receiver,
    Sender,
}

/// What the ratio says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// blast's loop carried at least [`NOT_BLAST_FROM`] of the C loop's figure.
    NotBlast,
    /// The C loop carried more than 1 / [`BLAST_BELOW`] of blast's: blast's loop is the step's limit.
    Blast,
    /// In between: too close to name either.
    Close,
    /// A window failed, its counts did not add up, or a host stall set a figure.
    Unknown,
}

/// At or above this ratio (as printed) the ceiling is not blast's loop.
pub const NOT_BLAST_FROM: f64 = 0.95;
/// Below this ratio (as printed) blast's loop is the limit.
pub const BLAST_BELOW: f64 = 0.90;
/// A window whose lanes stood still for more than this share of it
/// measured the host, not a loop.
const STALL_SHARE: f64 = 0.02;

impl Finding {
    pub fn as_str(&self) -> &'static str {
        match self {
            Finding::NotBlast => "not blast's",
            Finding::Blast => "blast's loop",
            Finding::Close => "too close",
            Finding::Unknown => "unknown",
        }
    }
}

impl Basis {
    pub fn as_str(&self) -> &'static str {
        match self {
            Basis::Receiver => "receiver-side",
            Basis::Sender => "sender-side",
        }
    }
}

impl CrossCheck {
    /// Judges `blast`'s window against the C lanes' window `c` of the same step.
    pub fn judge(blast: &StepRecord, c: StepRecord) -> CrossCheck {
        let basis = if blast.received.is_some() && c.received.is_some() { Basis::Receiver } else { Basis::Sender };
        let unknown = |why: String, c: StepRecord| CrossCheck {
            c_lanes: Box::new(c),
            basis,
            ratio: None,
            finding: Finding::Unknown,
            sentence: format!("unknown: {why}"),
        };
        if let Some(why) = unusable("blast's", blast, basis).or_else(|| unusable("the C lanes'", &c, basis)) {
            return unknown(why, c);
        }
        let figure = |r: &StepRecord| match basis {
            Basis::Receiver => r.received.map_or(0.0, |x| x.mpps),
            Basis::Sender => r.sent.mpps,
        };
        let (b, k) = (figure(blast), figure(&c));
        let what = if basis == Basis::Receiver { "carried" } else { "sent" };
        if k <= 0.0 || b <= 0.0 {
            let whose = if k <= 0.0 { "the C lanes" } else { "blast's lanes" };
            return unknown(format!("{whose} {what} nothing in their window"), c);
        }
        let ratio = (b / k * 100.0).round() / 100.0;
        let verb = what;
        let side = basis.as_str();
        let (finding, sentence) = if ratio >= NOT_BLAST_FROM {
            (
                Finding::NotBlast,
                format!("blast's loop {verb} {ratio:.2} of what the C loop did on the same queues ({side}): the ceiling is not blast's"),
            )
        } else if ratio < BLAST_BELOW {
            (Finding::Blast, format!("the C loop {verb} {:.2}x more ({side}): blast's loop is the limit at this step", k / b))
        } else {
            (
                Finding::Close,
                format!(
                    "blast's loop {verb} {ratio:.2} of what the C loop did on the same queues ({side}): within {:.0}%, too close to name either loop the limit",
                    (1.0 - BLAST_BELOW) * 100.0
                ),
            )
        };
        CrossCheck { c_lanes: Box::new(c), basis, ratio: Some(ratio), finding, sentence }
    }

    /// The ratio as the table prints it ("0.99", "-" when unknown).
    pub fn ratio_text(&self) -> String {
        self.ratio.map_or_else(|| "-".to_string(), |r| format!("{r:.2}"))
    }
}

/// Why a window cannot be compared, if it cannot.
fn unusable(whose: &str, r: &StepRecord, basis: Basis) -> Option<String> {
    if let Some(e) = &r.error {
        return Some(format!("{whose} window failed: {e}"));
    }
    if let Some(e) = &r.accounting_error {
        return Some(format!("{whose} window's counts do not add up: {e}"));
    }
    if basis == Basis::Receiver && r.lost.is_none() {
        return Some(format!("drop gave no exact per-stream account of {whose} window"));
    }
    let stalls = r.stalls.as_ref()?;
    let worst = [Some(&stalls.sender), stalls.receiver.as_ref()].into_iter().flatten().map(|s| s.total_ms).fold(0.0, f64::max);
    let window_ms = r.sent.seconds * 1e3;
    (window_ms > 0.0 && worst > window_ms * STALL_SHARE).then(|| {
        format!(
            "a lane stood still for {} in {whose} window (the host took its CPU): the host, not a loop, set that figure",
            super::ms_text(worst)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::{Rates, StepStalls};
    use crate::window::LaneStalls;

    fn step(sent: u64, received: Option<u64>) -> StepRecord {
        StepRecord {
            queues: 1,
            size: 64,
            sent: Rates::over(sent, sent * 64, 1.0),
            received: received.map(|r| Rates::over(r, r * 64, 1.0)),
            lost: received.map(|r| sent - r),
            ..Default::default()
        }
    }

    #[test]
    fn equal_loops_are_not_blasts_limit() {
        let x = CrossCheck::judge(&step(1_000_000, Some(990_000)), step(1_010_000, Some(1_000_000)));
        assert_eq!((x.basis, x.ratio, x.finding), (Basis::Receiver, Some(0.99), Finding::NotBlast));
        assert_eq!(
            x.sentence,
            "blast's loop carried 0.99 of what the C loop did on the same queues (receiver-side): the ceiling is not blast's"
        );
    }

    #[test]
    fn a_slower_blast_is_named_and_the_ratio_is_the_printed_one() {
        let x = CrossCheck::judge(&step(1_000_000, Some(1_000_000)), step(1_310_000, Some(1_310_000)));
        assert_eq!((x.ratio, x.finding), (Some(0.76), Finding::Blast));
        assert_eq!(x.sentence, "the C loop carried 1.31x more (receiver-side): blast's loop is the limit at this step");
        // 0.8949 prints 0.89 and is judged as printed; 0.9449 prints 0.94: close.
        assert_eq!(CrossCheck::judge(&step(894_900, None), step(1_000_000, None)).finding, Finding::Blast);
        let close = CrossCheck::judge(&step(944_900, None), step(1_000_000, None));
        assert_eq!((close.basis, close.ratio, close.finding), (Basis::Sender, Some(0.94), Finding::Close));
        assert!(close.sentence.starts_with("blast's loop sent 0.94 of"), "{}", close.sentence);
        assert_eq!(CrossCheck::judge(&step(949_500, None), step(1_000_000, None)).finding, Finding::NotBlast);
    }

    #[test]
    fn the_same_path_ceiling_is_not_blasts_even_when_c_sent_more() {
        // C offered more, the path dropped it: both carried the same.
        let x = CrossCheck::judge(&step(1_000_000, Some(800_000)), step(1_500_000, Some(805_000)));
        assert_eq!(x.finding, Finding::NotBlast);
    }

    #[test]
    fn unusable_windows_are_unknown() {
        let failed = StepRecord { error: Some(crate::step::StepFailure("link down".into())), ..step(0, None) };
        let x = CrossCheck::judge(&step(1_000, Some(1_000)), failed);
        assert_eq!((x.ratio, x.finding), (None, Finding::Unknown));
        assert!(x.sentence.starts_with("unknown: the C lanes' window failed: link down"), "{}", x.sentence);
        let bad = StepRecord { accounting_error: Some("stream 0: 5 + 1 != 7".into()), ..step(7, Some(5)) };
        assert_eq!(CrossCheck::judge(&bad, step(7, Some(7))).finding, Finding::Unknown);
        let no_account = StepRecord { lost: None, ..step(7, Some(7)) };
        assert!(CrossCheck::judge(&step(7, Some(7)), no_account).sentence.contains("no exact per-stream account"));
        let nothing = CrossCheck::judge(&step(7, Some(7)), step(0, Some(0)));
        assert_eq!(nothing.sentence, "unknown: the C lanes carried nothing in their window");
        // 30 ms standing still in a 1 s window: the host's figure.
        let stalled = StepRecord {
            stalls: Some(StepStalls {
                sender: LaneStalls { count: 1, total_ms: 30.0, longest_ms: 30.0, ..Default::default() },
                ..Default::default()
            }),
            ..step(500, Some(500))
        };
        let x = CrossCheck::judge(&stalled, step(1_000, Some(1_000)));
        assert_eq!(x.finding, Finding::Unknown);
        assert!(x.sentence.contains("in blast's window (the host took its CPU)"), "{}", x.sentence);
    }
}
