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
    /// A paced step's rate in Mpps, where the C loop (unpaced) carried more:
    /// its figure is counted up to that pace, as blast was asked no more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_counted_up_to_mpps: Option<f64>,
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
            c_counted_up_to_mpps: None,
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
        // A paced step was asked for its pace alone: the unpaced C loop's
        // figure counts up to it.
        let (b, c_figure) = (figure(blast), figure(&c));
        let cap = blast.offered_mpps.filter(|&o| c_figure > o);
        let k = cap.unwrap_or(c_figure);
        let what = if basis == Basis::Receiver { "carried" } else { "sent" };
        if k <= 0.0 || b <= 0.0 {
            let whose = if k <= 0.0 { "the C lanes" } else { "blast's lanes" };
            return unknown(format!("{whose} {what} nothing in their window"), c);
        }
        // Lanes the host stood still carried less than they could have: the
        // ratio could have been anywhere between C's loss and blast's. A
        // finding stands only where that whole span falls on its side of the
        // lines it is drawn at.
        let ((sb, ms_b), (sc, ms_c)) = (stall_share(blast), stall_share(&c));
        let raw = b / k;
        let (lo, hi) = (round2(raw * (1.0 - sc)), round2(raw / (1.0 - sb).max(f64::MIN_POSITIVE)));
        let stood_still =
            format!("lanes stood still for {} in blast's window and {} in the C lanes'", super::ms_text(ms_b), super::ms_text(ms_c));
        if sb >= MOST || sc >= MOST || band(lo) != band(hi) {
            return unknown(
                format!(
                    "{stood_still} (the host took their CPU): enough to move blast/C anywhere from {lo:.2} to {hi:.2}, across a line the finding is drawn at: the host, not a loop, set the figures"
                ),
                c,
            );
        }
        let ratio = round2(raw);
        let mut side = match cap {
            Some(o) => format!("{}; the C loop counted up to the step's pace of {o:.3} Mpps", basis.as_str()),
            None => basis.as_str().to_string(),
        };
        if sb > 0.0 || sc > 0.0 {
            side = format!("{side}; {stood_still}, not enough to change the finding");
        }
        let finding = band(ratio);
        let sentence = match finding {
            Finding::NotBlast => {
                format!("blast's loop {what} {ratio:.2} of what the C loop did on the same queues ({side}): the ceiling is not blast's")
            }
            Finding::Blast => format!("the C loop {what} {:.2}x more ({side}): blast's loop is the limit at this step", k / b),
            _ => format!(
                "blast's loop {what} {ratio:.2} of what the C loop did on the same queues ({side}): within {:.0}%, too close to name either loop the limit",
                (1.0 - BLAST_BELOW) * 100.0
            ),
        };
        CrossCheck { c_lanes: Box::new(c), basis, ratio: Some(ratio), c_counted_up_to_mpps: cap, finding, sentence }
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
    None
}

/// A window's lanes stood still for most of it: no figure of it is a loop's.
const MOST: f64 = 0.5;

/// `x` rounded to two places, as the ratio is printed.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The side of the lines a ratio (as printed) falls on.
fn band(ratio: f64) -> Finding {
    if ratio >= NOT_BLAST_FROM {
        Finding::NotBlast
    } else if ratio < BLAST_BELOW {
        Finding::Blast
    } else {
        Finding::Close
    }
}

/// The share of a window its lanes stood still (the worse end's: the
/// stalls of all its lanes over as many windows), and those stalls in ms.
fn stall_share(r: &StepRecord) -> (f64, f64) {
    let Some(stalls) = r.stalls.as_ref() else { return (0.0, 0.0) };
    let worst = [Some(&stalls.sender), stalls.receiver.as_ref()].into_iter().flatten().map(|s| s.total_ms).fold(0.0, f64::max);
    let lanes_ms = r.sent.seconds * 1e3 * f64::from(r.queues.max(1));
    if lanes_ms <= 0.0 {
        return (0.0, worst);
    }
    ((worst / lanes_ms).min(1.0), worst)
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
    fn a_paced_step_is_judged_against_its_pace_not_the_unpaced_c_loop() {
        // Asked for 1 Mpps, blast sent 0.8; the unpaced C loop 2.0: it
        // counts as 1.0, so blast carried 0.80 of it.
        let paced = StepRecord { offered_mpps: Some(1.0), ..step(800_000, None) };
        let x = CrossCheck::judge(&paced, step(2_000_000, None));
        assert_eq!((x.ratio, x.c_counted_up_to_mpps, x.finding), (Some(0.8), Some(1.0), Finding::Blast));
        assert_eq!(
            x.sentence,
            "the C loop sent 1.25x more (sender-side; the C loop counted up to the step's pace of 1.000 Mpps): blast's loop is the limit at this step"
        );
        // The C loop no faster than blast: the cores' limit, not blast's loop.
        let x = CrossCheck::judge(&paced, step(810_000, None));
        assert_eq!((x.ratio, x.c_counted_up_to_mpps, x.finding), (Some(0.99), None, Finding::NotBlast));
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
        // 30 ms standing still in blast's 1 s window, blast at 0.93 of the
        // C loop: unstalled it could have been 0.96, across the line at 0.95.
        let stalled = |n: u64, ms: f64| StepRecord {
            stalls: Some(StepStalls {
                sender: LaneStalls { count: 1, total_ms: ms, longest_ms: ms, ..Default::default() },
                ..Default::default()
            }),
            ..step(n, Some(n))
        };
        let x = CrossCheck::judge(&stalled(930, 30.0), step(1_000, Some(1_000)));
        assert_eq!((x.ratio, x.finding), (None, Finding::Unknown));
        assert_eq!(
            x.sentence,
            "unknown: lanes stood still for 30.0 ms in blast's window and 0.0 ms in the C lanes' (the host took their CPU): \
             enough to move blast/C anywhere from 0.93 to 0.96, across a line the finding is drawn at: the host, not a loop, set the figures"
        );
        // The same stall where it cannot move the finding: it stands, and says so.
        let x = CrossCheck::judge(&stalled(500, 30.0), step(1_000, Some(1_000)));
        assert_eq!((x.ratio, x.finding), (Some(0.5), Finding::Blast));
        assert!(
            x.sentence.contains(
                "; lanes stood still for 30.0 ms in blast's window and 0.0 ms in the C lanes', not enough to change the finding)"
            ),
            "{}",
            x.sentence
        );
        // Standing still for most of a window: nothing of it is a loop's.
        assert_eq!(CrossCheck::judge(&step(500, Some(500)), stalled(1_000, 600.0)).finding, Finding::Unknown);
    }
}
