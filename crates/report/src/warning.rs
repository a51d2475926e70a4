//! Warnings as data: what kind each is, the run and the step it belongs
//! to, and its own words. The top of the report groups them by kind, most
//! serious first, with the runs and steps each kind covers; a run's
//! section lists its own the same way. Grouping reads the kind, never the
//! words.

use std::collections::BTreeMap;

/// What a warning is about. The order of the variants is the order of
/// severity, most serious first (`Ord` is derived from it):
///
/// 1. A figure that cannot be true or is not there: counts that do not add
///    up, a verdict that is unknown, a step not measured, windows drop
///    could not finish, a run cut short, device counters that went
///    backwards. The reader must know before reading any figure.
/// 2. A figure that is the sender's, not the path's: a sender that fell
///    short, a knee that is a lower bound, a capture whose timing did not
///    hold. True figures, but of the wrong end.
/// 3. A figure of other traffic than asked: an arrival shape that did not
///    hold.
/// 4. A set-up slower than a tuned one (LLQ, write-combining, lcore
///    placement, hugepages): the figures are true for this set-up, lower
///    than the instance can do.
/// 5. Informational: lanes the host stood still (the verdicts already
///    weigh them), faults caught when a peer left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    CountsDoNotAddUp,
    VerdictUnknown,
    NotMeasured,
    IncompleteWindows,
    Interrupted,
    CountersWentBackwards,
    SenderShort,
    BlastLoopLimit,
    KneeLowerBound,
    TimingNotHeld,
    ShapeNotHeld,
    LlqOff,
    LlqUnknown,
    WriteCombiningOff,
    LcorePlacement,
    NoHugepages,
    LanesStalled,
    FaultsCaught,
}

impl Kind {
    /// The kind in a few words, as the grouped line opens.
    pub fn title(self) -> &'static str {
        match self {
            Kind::CountsDoNotAddUp => "counts that do not add up",
            Kind::VerdictUnknown => "verdict unknown",
            Kind::NotMeasured => "not measured",
            Kind::IncompleteWindows => "incomplete windows",
            Kind::Interrupted => "interrupted (Ctrl-C or SIGTERM)",
            Kind::CountersWentBackwards => "the device's counters went backwards",
            Kind::SenderShort => "the sender held back",
            Kind::BlastLoopLimit => "blast's own send loop was the limit",
            Kind::KneeLowerBound => "the knee is a lower bound",
            Kind::TimingNotHeld => "the capture's timing did not hold",
            Kind::ShapeNotHeld => "arrival shape not held",
            Kind::LlqOff => "LLQ is off",
            Kind::LlqUnknown => "whether LLQ is on is unknown",
            Kind::WriteCombiningOff => "write-combining is not on",
            Kind::LcorePlacement => "lcore placement",
            Kind::NoHugepages => "the EAL ran without hugepages",
            Kind::LanesStalled => "lanes stood still (the host descheduled them)",
            Kind::FaultsCaught => "faults caught when the peer left under a burst",
        }
    }

    /// What the kind means for the figures, said once after the places.
    pub fn consequence(self) -> &'static str {
        match self {
            Kind::CountsDoNotAddUp => "the verdict is unknown",
            Kind::IncompleteWindows => "their client went away: not measurements",
            Kind::Interrupted => "what it had not reached is missing",
            Kind::CountersWentBackwards => "memif resets them when its peer leaves: the port counters are the last read before that",
            Kind::SenderShort => "the figures are the sender's limit, not the path's",
            Kind::BlastLoopLimit => {
                "--cross-check: the plain C loop on the same queues carried more, so those figures are blast's, not the path's"
            }
            Kind::LlqOff => "ENA's fast TX path is not in use",
            Kind::LlqUnknown => "the PMD's log did not say",
            Kind::WriteCombiningOff => "TX is slow on the LLQ BAR without it",
            Kind::NoHugepages => "slower than a tuned set-up",
            _ => "",
        }
    }

    /// The kind's name in the HTML (`data-kind`), for a reader or a test to find it.
    pub fn id(self) -> &'static str {
        match self {
            Kind::CountsDoNotAddUp => "counts-do-not-add-up",
            Kind::VerdictUnknown => "verdict-unknown",
            Kind::NotMeasured => "not-measured",
            Kind::IncompleteWindows => "incomplete-windows",
            Kind::Interrupted => "interrupted",
            Kind::CountersWentBackwards => "counters-went-backwards",
            Kind::SenderShort => "sender-short",
            Kind::BlastLoopLimit => "blast-loop-limit",
            Kind::KneeLowerBound => "knee-lower-bound",
            Kind::TimingNotHeld => "timing-not-held",
            Kind::ShapeNotHeld => "shape-not-held",
            Kind::LlqOff => "llq-off",
            Kind::LlqUnknown => "llq-unknown",
            Kind::WriteCombiningOff => "write-combining-off",
            Kind::LcorePlacement => "lcore-placement",
            Kind::NoHugepages => "no-hugepages",
            Kind::LanesStalled => "lanes-stalled",
            Kind::FaultsCaught => "faults-caught",
        }
    }
}

/// Where in a run a warning stands: the whole run, one ladder step (its
/// index from 0 and its repetition from 1), or one knee trial (from 1, as
/// the trial table numbers them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    Run,
    Step { step: usize, repeat: u32 },
    Trial(usize),
}

/// One warning of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub kind: Kind,
    pub place: Place,
    /// Its own words: the record's evidence, a port's name, a count.
    pub detail: String,
    /// Lanes that stood still: the longest, in milliseconds (the group says the longest of all).
    pub longest_ms: Option<f64>,
}

impl Warning {
    pub fn new(kind: Kind, place: Place, detail: impl Into<String>) -> Warning {
        Warning { kind, place, detail: detail.into(), longest_ms: None }
    }

    /// The warning alone, in words: where, what, and its detail.
    pub fn text(&self) -> String {
        let at = place_name(self.place);
        let detail = if self.detail.is_empty() { String::new() } else { format!(": {}", self.detail) };
        match at {
            Some(at) => format!("{at}: {}{}{detail}", self.kind.title(), consequence(self.kind)),
            None => format!("{}{}{detail}", self.kind.title(), consequence(self.kind)),
        }
    }
}

/// ": the kind's consequence", or nothing.
fn consequence(k: Kind) -> String {
    match k.consequence() {
        "" => String::new(),
        c => format!(" ({c})"),
    }
}

fn place_name(p: Place) -> Option<String> {
    match p {
        Place::Run => None,
        // As the step table names a repetition: "3.2", step 3's second run.
        Place::Step { step, repeat } if repeat > 1 => Some(format!("step {}.{repeat}", step + 1)),
        Place::Step { step, .. } => Some(format!("step {}", step + 1)),
        Place::Trial(n) => Some(format!("trial {n}")),
    }
}

/// One run's warnings, with what the grouped line needs to say "n of N".
#[derive(Debug, Clone)]
pub struct RunWarnings {
    /// The run's number in the report (from 1) and its name.
    pub number: usize,
    pub name: String,
    /// "step" or "trial": what the run's places count, and how many it has.
    pub unit: &'static str,
    pub total: usize,
    pub warnings: Vec<Warning>,
}

/// One line of the grouped warnings: a kind, the runs and steps it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Grouped {
    pub kind: Kind,
    pub text: String,
}

/// Every run's warnings grouped by kind, most serious first; within a
/// kind, the runs in the report's order.
pub fn group(all: &[RunWarnings]) -> Vec<Grouped> {
    let runs = all;
    let mut by_kind: BTreeMap<Kind, Vec<(&RunWarnings, Vec<&Warning>)>> = BTreeMap::new();
    for r in runs {
        let mut mine: BTreeMap<Kind, Vec<&Warning>> = BTreeMap::new();
        for w in &r.warnings {
            mine.entry(w.kind).or_default().push(w);
        }
        for (k, ws) in mine {
            by_kind.entry(k).or_default().push((r, ws));
        }
    }
    by_kind.into_iter().map(|(kind, runs)| Grouped { kind, text: grouped_text(kind, &runs, all.len()) }).collect()
}

/// "arrival shape not held in 9 of 9 trials (run 2 knee.json: trials 1-9); first: ..."
fn grouped_text(kind: Kind, runs: &[(&RunWarnings, Vec<&Warning>)], of: usize) -> String {
    let placed: Vec<&Warning> = runs.iter().flat_map(|(_, ws)| ws.iter().copied()).filter(|w| w.place != Place::Run).collect();
    let mut s = kind.title().to_string();
    if !placed.is_empty() {
        let stepped = runs.iter().filter(|(_, ws)| ws.iter().any(|w| w.place != Place::Run));
        let (n, total) = stepped.fold((0, 0), |(n, t), (r, ws)| (n + ws.iter().filter(|w| w.place != Place::Run).count(), t + r.total));
        let unit = units(runs);
        s.push_str(&format!(" in {n} of {total} {unit}"));
    }
    let covers: Vec<String> = runs.iter().map(|(r, ws)| covered(r, ws)).collect();
    if placed.is_empty() && runs.len() == of && of > 2 {
        s.push_str(&format!(" (every run: all {of})"));
    } else {
        s.push_str(&format!(" ({})", covers.join("; ")));
    }
    let all = runs.iter().flat_map(|(_, ws)| ws.iter());
    if let Some(ms) = all.filter_map(|w| w.longest_ms).reduce(f64::max) {
        s.push_str(&format!(", the longest for {ms:.1} ms"));
    }
    let said: Vec<String> = [kind.consequence().to_string(), details(runs)].into_iter().filter(|p| !p.is_empty()).collect();
    if !said.is_empty() {
        s.push_str(&format!(": {}", said.join("; ")));
    }
    s
}

/// "steps", "trials", or "steps and trials": what the runs with a step's or a trial's warning count.
fn units(runs: &[(&RunWarnings, Vec<&Warning>)]) -> String {
    let mut u: Vec<&str> = Vec::new();
    for (r, _) in runs.iter().filter(|(_, ws)| ws.iter().any(|w| w.place != Place::Run)) {
        if !u.contains(&r.unit) {
            u.push(r.unit);
        }
    }
    let plural: Vec<String> = u.iter().map(|x| format!("{x}s")).collect();
    plural.join(" and ")
}

/// "run 2 knee.json: trials 1-9", or "run 1 a.json" for a whole run.
fn covered(r: &RunWarnings, ws: &[&Warning]) -> String {
    let steps: Vec<Place> = ws.iter().map(|w| w.place).filter(|p| *p != Place::Run).collect();
    if steps.is_empty() {
        return format!("run {} {}", r.number, r.name);
    }
    format!("run {} {}: {}", r.number, r.name, places(&steps))
}

/// Places as ranges: "trials 1-9", "steps 1-3, 5", "steps 2 (run 2), 4 (run 2)".
fn places(ps: &[Place]) -> String {
    let mut nums: Vec<(u32, usize)> = Vec::new();
    let mut unit = "step";
    for p in ps {
        match *p {
            Place::Step { step, repeat } => nums.push((repeat, step + 1)),
            Place::Trial(n) => {
                unit = "trial";
                nums.push((1, n))
            }
            Place::Run => {}
        }
    }
    nums.sort();
    nums.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < nums.len() {
        let (repeat, first) = nums[i];
        let mut j = i;
        while j + 1 < nums.len() && nums[j + 1] == (repeat, nums[j].1 + 1) {
            j += 1;
        }
        let name = |n: usize| if repeat > 1 { format!("{n}.{repeat}") } else { n.to_string() };
        parts.push(if j > i { format!("{}-{}", name(first), name(nums[j].1)) } else { name(first) });
        i = j + 1;
    }
    let plural = if nums.len() > 1 { "s" } else { "" };
    format!("{unit}{plural} {}", parts.join(", "))
}

/// The details: said once when every warning of the kind says the same,
/// else the first one's ("first: ..."), since the places are listed.
fn details(runs: &[(&RunWarnings, Vec<&Warning>)]) -> String {
    let all: Vec<&Warning> = runs.iter().flat_map(|(_, ws)| ws.iter().copied()).collect();
    let Some(first) = all.iter().find(|w| !w.detail.is_empty()) else { return String::new() };
    if all.iter().all(|w| w.detail == first.detail) {
        return first.detail.clone();
    }
    let run = runs.iter().find(|(_, ws)| ws.iter().any(|w| std::ptr::eq(*w, *first))).map(|(r, _)| r);
    let who: Vec<String> =
        [run.filter(|_| runs.len() > 1).map(|r| format!("run {}", r.number)), place_name(first.place)].into_iter().flatten().collect();
    let at = if who.is_empty() { String::new() } else { format!("{}: ", who.join(" ")) };
    format!("first: {at}{}", first.detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(number: usize, unit: &'static str, total: usize, warnings: Vec<Warning>) -> RunWarnings {
        RunWarnings { number, name: format!("r{number}.json"), unit, total, warnings }
    }

    #[test]
    fn a_kind_is_one_line_with_its_runs_and_places_most_serious_first() {
        let shape = |n| Warning::new(Kind::ShapeNotHeld, Place::Trial(n), "the lanes fell behind: host stalls");
        let knee = run(2, "trial", 9, (1..=9).map(shape).collect());
        let mut ladder = run(1, "step", 4, vec![Warning::new(Kind::NoHugepages, Place::Run, "")]);
        ladder.warnings.push(Warning::new(Kind::CountsDoNotAddUp, Place::Step { step: 2, repeat: 1 }, "received 5 + lost 1 != sent 7"));
        let g = group(&[ladder, knee]);
        let kinds: Vec<Kind> = g.iter().map(|x| x.kind).collect();
        assert_eq!(kinds, [Kind::CountsDoNotAddUp, Kind::ShapeNotHeld, Kind::NoHugepages]);
        assert_eq!(g[1].text, "arrival shape not held in 9 of 9 trials (run 2 r2.json: trials 1-9): the lanes fell behind: host stalls");
        assert_eq!(
            g[0].text,
            "counts that do not add up in 1 of 4 steps (run 1 r1.json: step 3): the verdict is unknown; received 5 + lost 1 != sent 7"
        );
        assert_eq!(g[2].text, "the EAL ran without hugepages (run 1 r1.json): slower than a tuned set-up");
    }

    #[test]
    fn places_become_ranges_and_different_details_name_the_first() {
        let at = |step, repeat| Place::Step { step, repeat };
        let ws = vec![
            Warning::new(Kind::SenderShort, at(0, 1), "sender (sender): short by 3%"),
            Warning::new(Kind::SenderShort, at(1, 1), "sender (sender): short by 9%"),
            Warning::new(Kind::SenderShort, at(2, 1), "x"),
            Warning::new(Kind::SenderShort, at(4, 1), "x"),
            Warning::new(Kind::SenderShort, at(0, 2), "x"),
        ];
        let g = group(&[run(1, "step", 10, ws)]);
        assert_eq!(
            g[0].text,
            "the sender held back in 5 of 10 steps (run 1 r1.json: steps 1-3, 5, 1.2): the figures are the sender's limit, not the path's; first: step 1: sender (sender): short by 3%"
        );
        let mut stalled = Warning::new(Kind::LanesStalled, at(0, 1), "");
        stalled.longest_ms = Some(2.25);
        let mut longer = stalled.clone();
        (longer.place, longer.longest_ms) = (at(1, 1), Some(7.5));
        let g = group(&[run(1, "step", 2, vec![stalled, longer])]);
        assert_eq!(
            g[0].text,
            "lanes stood still (the host descheduled them) in 2 of 2 steps (run 1 r1.json: steps 1-2), the longest for 7.5 ms"
        );
    }
}
