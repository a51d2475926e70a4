//! The report: one HTML file a person reads and shares, and the same in
//! Markdown, from any mix of blastdrop's records (ladder, knee, fixed-rate,
//! replay, group, single and drop's own). Several ladder runs also make the
//! atlas: one row per instance type or label. No EAL, no network: it reads
//! JSON and writes text.
//!
//! - [`record`]: reading a record, refusing a schema version not known;
//!   `names`: a name for each run that no other run shares.
//! - `headline`: the answer first, one line per run or group trial.
//! - [`env`], [`figures`]: where a run ran, and its warnings, typed
//!   ([`warning`]: their kinds, grouped, most serious first).
//! - `group`, `group_part`: a group trial's members' records as one section.
//! - `ladder_part`, `knee_part`, `other_part`, `overtime`: each kind's tables and plots.
//! - [`atlas`]: the per-instance table.
//! - [`doc`]: the document both [`html`] and [`markdown`] write.

pub mod atlas;
pub mod doc;
pub mod env;
pub mod figures;
mod fmt;
mod group;
mod group_part;
mod headline;
pub mod html;
mod knee_part;
mod ladder_part;
pub mod markdown;
mod mlr_part;
mod names;
mod other_part;
mod overtime;
mod paths_part;
pub mod record;
pub mod warning;

pub use doc::{Block, Cell, Doc, Headline, Section, Table, WarningLine};
pub use record::{Body, Kind, ReadError, Record, KNOWN_SCHEMA_VERSIONS};

use group::{GroupTrial, Part};
use warning::RunWarnings;

/// The report of these records, in the order given: first one line per
/// run (or group trial) with what was found, then the warnings grouped by
/// kind, the atlas, and each run's (or group trial's) section.
pub fn build(records: &[Record]) -> Result<Doc, String> {
    let named = names::name_runs(records);
    // A paths comparison answers first: its sentence heads the report and
    // its section comes before the runs'.
    let (compared, records): (Vec<Record>, Vec<Record>) = named.into_iter().partition(|r| r.kind == Kind::Paths);
    let comparisons = compared.iter().map(|r| r.paths().map(|b| (r, b))).collect::<Result<Vec<_>, String>>()?;
    let parts = group::parts(&records);
    let headlines = parts
        .iter()
        .map(|p| match p {
            Part::Run(i) => headline::of_run(i + 1, &records[*i]),
            Part::Group(g) => headline::of_group(&records, g),
        })
        .collect();
    let all: Vec<RunWarnings> = records.iter().enumerate().map(|(i, r)| run_warnings(i + 1, r)).collect();
    let warnings = warning::group(&all).into_iter().map(|g| WarningLine { kind: g.kind.id(), text: g.text }).collect();
    let mut doc = Doc { title: title(&records), headlines, warnings, ..Doc::default() };
    if records.is_empty() {
        if let Some((r, _)) = comparisons.first() {
            doc.title = format!("blastdrop report: {} (paths compared)", r.file_name());
        }
    }
    for (i, (r, b)) in comparisons.iter().enumerate() {
        let n = records.len() + i + 1;
        doc.headlines.insert(i, paths_part::headline(n, r, b));
        doc.sections.push(paths_part::section(n, r, b));
    }
    if let Some(s) = atlas_section(&records)? {
        doc.sections.push(s);
    }
    for p in &parts {
        doc.sections.push(match p {
            Part::Run(i) => run_section(i + 1, &records[*i], records.len() > 1)?,
            Part::Group(g) => group_section(&records, g)?,
        });
    }
    Ok(doc)
}

/// A run's warnings, environment's and figures', with what they count.
fn run_warnings(number: usize, r: &Record) -> RunWarnings {
    let (unit, total) = figures::places(r);
    let mut warnings = env::warnings(r);
    warnings.extend(figures::warnings(r));
    RunWarnings { number, name: r.file_name(), unit, total, warnings }
}

/// One run's warnings grouped by kind, as the top of the report groups every run's.
fn own_warnings(number: usize, r: &Record) -> Vec<String> {
    warning::group(&[run_warnings(number, r)]).into_iter().map(|g| g.text).collect()
}

fn title(records: &[Record]) -> String {
    let mut labels: Vec<&str> = records.iter().filter_map(|r| r.label.as_deref()).collect();
    labels.dedup();
    match (records.len(), labels.is_empty()) {
        (1, _) => format!("blastdrop report: {} ({})", records[0].file_name(), records[0].kind.name()),
        (n, true) => format!("blastdrop report: {n} runs"),
        (n, false) => format!("blastdrop report: {n} runs ({})", labels.join(", ")),
    }
}

/// The atlas, when there is more than one ladder run or a labelled one.
fn atlas_section(records: &[Record]) -> Result<Option<Section>, String> {
    let (usable, notes) = atlas::usable(records);
    if usable.len() < 2 && !usable.iter().any(|r| r.label.is_some()) {
        // Ladders were given for an atlas but could not make one: say why. A
        // group trial's members are never an atlas's rows, nor ask for one.
        let ladders: Vec<&Record> = records.iter().filter(|r| r.kind == Kind::Ladder && !atlas::is_group_trial(r)).collect();
        if notes.is_empty() || (ladders.len() < 2 && !ladders.iter().any(|r| r.label.is_some())) {
            return Ok(None);
        }
        let mut s = Section::new(2, "Atlas: not made");
        s.push(Block::Warnings(notes));
        return Ok(Some(s));
    }
    let knees: Vec<&Record> = records.iter().filter(|r| r.kind == Kind::Knee).collect();
    let rows = atlas::rows(&usable, &knees)?;
    let mut s = Section::new(2, "Atlas: one row per instance type or label");
    s.push(Block::Para(
        "Mpps on one queue and the wall are at the smallest unpaced frame size; the wall is where adding queues stopped helping, kpps per published Gb/s is the wall over the published bandwidth; the crossover is the first frame size whose Gb/s of frames came within 3% of the published figure; Gb/s columns are the best received Gb/s of frames at that size, against the published figure.".into(),
    ));
    for t in atlas::tables(&rows) {
        s.push(Block::Table(t));
    }
    if !notes.is_empty() {
        s.push(Block::Warnings(notes));
    }
    Ok(Some(s))
}

/// A run's section; with several runs it repeats the run's own warnings
/// (the top of the report lists every run's).
fn run_section(n: usize, r: &Record, repeat_warnings: bool) -> Result<Section, String> {
    let label = r.label.as_deref().map_or(String::new(), |l| format!(" [{l}]"));
    let mut s = Section::new(2, format!("Run {n}: {} — {}{label}", r.kind.name(), r.file_name()));
    let w = own_warnings(n, r);
    if repeat_warnings && !w.is_empty() {
        s.push(Block::Warnings(w));
    }
    s.push(Block::Facts(env::facts(r)));
    let (sentences, time) = match r.body()? {
        Body::Ladder(l) => {
            ladder_part::blocks(r, &l, &mut s)?;
            (ladder_part::sentences(r, &l), OverTime { series: None, analysis: None, steps: l.step_series })
        }
        Body::Mlr(k) => {
            mlr_part::blocks(&k, &mut s);
            (mlr_part::sentences(&k), OverTime { series: k.series, analysis: k.series_analysis, steps: Vec::new() })
        }
        Body::Knee(k) => {
            knee_part::blocks(r, &k, &mut s)?;
            (knee_part::sentences(&k), OverTime { series: k.series, analysis: k.series_analysis, steps: Vec::new() })
        }
        Body::Single(b) => {
            other_part::single(&b, &mut s);
            (other_part::single_sentences(r, &b), OverTime { series: b.series, analysis: b.series_analysis, steps: Vec::new() })
        }
        Body::Replay(b) => {
            other_part::replay(&b, &mut s);
            (other_part::replay_sentences(&b), OverTime { series: b.series, analysis: b.series_analysis, steps: Vec::new() })
        }
        Body::Drop(d) => {
            other_part::drop(&d, &mut s);
            (other_part::drop_sentences(&d), OverTime { series: Some(d.series), analysis: Some(d.series_analysis), steps: Vec::new() })
        }
    };
    over_time(r, &time, &mut s);
    let mut all = sentences;
    all.extend(over_time_sentences(&time));
    push_sentences(all, &mut s);
    Ok(s)
}

fn push_sentences(all: Vec<String>, s: &mut Section) {
    if !all.is_empty() {
        s.push(Block::Para("Sentences to paste (every qualifier included):".into()));
        s.push(Block::Sentences(all));
    }
}

/// A group trial's one section: each member's warnings and where it ran,
/// the group's tables, the ladder plot (the group's figures: any member's
/// record draws the same), each member's steps over time.
fn group_section(records: &[Record], g: &GroupTrial) -> Result<Section, String> {
    let runs = g.runs_named(records);
    let mut s = Section::new(2, format!("{}{}: group trial {} of {} senders", runs[..1].to_uppercase(), &runs[1..], g.name, g.senders));
    let mut sentences = group_part::sentences(g);
    let mut given: Vec<usize> = g.members.iter().map(|m| m.index).collect();
    given.sort();
    let members: Vec<RunWarnings> = given.iter().map(|&i| run_warnings(i + 1, &records[i])).collect();
    let w: Vec<String> = warning::group(&members).into_iter().map(|g| g.text).collect();
    if !w.is_empty() {
        s.push(Block::Warnings(w));
    }
    for m in &g.members {
        let r = &records[m.index];
        s.push(Block::Para(format!("Member {} (run {} {}) ran here:", m.member, m.index + 1, r.file_name())));
        s.push(Block::Facts(env::facts(r)));
    }
    group_part::blocks(records, g, &mut s);
    let first = &g.members[0];
    let drawn_from = &records[first.index];
    let port = &first.body.environment.sender.port;
    let title = format!(
        "{} ({}): group trial {} of {} senders (member {}'s record, {})",
        port.name,
        port.driver,
        g.name,
        g.senders,
        first.member,
        drawn_from.file_name()
    );
    s.push(ladder_part::plot_block(drawn_from, &first.body, &title)?);
    for m in &g.members {
        let time = OverTime { series: None, analysis: None, steps: m.body.step_series.clone() };
        over_time(&records[m.index], &time, &mut s);
        sentences.extend(over_time_sentences(&time).into_iter().map(|x| format!("Member {}: {x}", m.member)));
    }
    push_sentences(sentences, &mut s);
    Ok(s)
}

/// A run's figures over time, as its record's type holds them: the run's
/// series and what was found in it, or a ladder's per step.
struct OverTime {
    series: Option<series::Series>,
    analysis: Option<series::Analysis>,
    steps: Vec<records::ladder::StepSeries>,
}

/// Whether a step's rate moved: a change, or a credit bucket.
fn moved(a: &series::Analysis) -> bool {
    !a.changes.is_empty() || a.bucket.is_some()
}

/// The run's series plot; for a ladder, each step whose rate moved.
fn over_time(r: &Record, time: &OverTime, s: &mut Section) {
    if let Some(series) = &time.series {
        let title = format!("{} over time", r.file_name());
        if let Some(p) = overtime::plot(series, time.analysis.as_ref(), &title) {
            s.push(p);
        }
    }
    for st in time.steps.iter().filter(|st| moved(&st.analysis)) {
        let title = format!("{}: step {} (run {}) over time", r.file_name(), st.step + 1, st.run);
        if let Some(p) = overtime::plot(&st.series, Some(&st.analysis), &title) {
            s.push(p);
        }
    }
}

/// What the series say, leaving out a series with no intervals: it has
/// nothing to say ("no frames sent in the series (0 intervals)" is the
/// absence of a series, not a rate of zero).
fn over_time_sentences(time: &OverTime) -> Vec<String> {
    let recorded = time.series.as_ref().is_some_and(|s| !s.is_empty());
    let mut out: Vec<String> = time.analysis.iter().filter(|_| recorded).map(|a| format!("Over time: {}", a.sentence)).collect();
    // A step whose rate held says so in one line for all such steps.
    let (mut steady, mut rule) = (Vec::new(), String::new());
    for st in time.steps.iter().filter(|st| !st.series.is_empty()) {
        let name = if st.run > 1 { format!("{}.{}", st.step + 1, st.run) } else { (st.step + 1).to_string() };
        if moved(&st.analysis) || !st.analysis.onsets.is_empty() {
            out.push(format!("Step {name} over time: {}", st.analysis.sentence));
        } else {
            let th = &st.analysis.thresholds;
            rule =
                format!("a change is {}% or more, held {} s or more", fmt::as_written(th.min_change_pct), fmt::as_written(th.min_hold_s));
            steady.push(name)
        }
    }
    if !steady.is_empty() {
        out.push(format!("Steps {} over time: no change ({rule}, beyond the noise)", steady.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::path::Path;

    /// A real ladder record (blast on net_null: 1 queue, 64 and 128 B), for
    /// tests that change a part of it: a ladder is read whole.
    pub(crate) fn real_ladder() -> Value {
        serde_json::from_str(include_str!("../testdata/ladder.json")).expect("the test ladder is JSON")
    }

    /// The test ladder's steps, typed.
    pub(crate) fn real_ladder_steps() -> Vec<ladder::StepRecord> {
        serde_json::from_value(real_ladder()["steps"].clone()).expect("the test ladder's steps read as steps")
    }

    /// A real knee search over memif with --reflect (11 trials; each
    /// histogram emptied to keep the file small).
    pub(crate) fn real_knee() -> Value {
        serde_json::from_str(include_str!("../testdata/knee.json")).expect("the test knee is JSON")
    }

    /// The real ladder with no steps, and `changes` made to it.
    fn stepless_ladder(changes: impl FnOnce(&mut Value)) -> Value {
        let mut v = real_ladder();
        for f in ["steps", "aggregates", "step_series"] {
            v[f] = json!([]);
        }
        changes(&mut v);
        v
    }

    /// Every real record of testdata, as `blast report` would be given them.
    fn all_real() -> Vec<Record> {
        let texts = [
            ("ladder.json", include_str!("../testdata/ladder.json")),
            ("knee.json", include_str!("../testdata/knee.json")),
            ("single.json", include_str!("../testdata/single.json")),
            ("replay.json", include_str!("../testdata/replay.json")),
            ("drop.json", include_str!("../testdata/drop.json")),
        ];
        texts.iter().map(|(n, t)| Record::from_json(Path::new(n), serde_json::from_str(t).unwrap(), None).unwrap()).collect()
    }

    /// The report opens with one headline per run, then the warnings
    /// grouped by kind, most serious first, before any run's section; both
    /// files say the same.
    #[test]
    fn the_report_opens_with_the_answer_then_the_warnings_by_kind() {
        let records = all_real();
        let d = build(&records).unwrap();
        assert_eq!(d.headlines.len(), records.len());
        for (i, (h, r)) in d.headlines.iter().zip(&records).enumerate() {
            assert_eq!(h.runs, format!("run {} {}", i + 1, r.file_name()));
        }
        let all: Vec<RunWarnings> = records.iter().enumerate().map(|(i, r)| run_warnings(i + 1, r)).collect();
        let grouped = warning::group(&all);
        let kinds: Vec<warning::Kind> = grouped.iter().map(|g| g.kind).collect();
        assert!(kinds.windows(2).all(|w| w[0] < w[1]), "one line per kind, most serious first: {kinds:?}");
        assert_eq!(d.warnings.iter().map(|w| w.kind).collect::<Vec<_>>(), kinds.iter().map(|k| k.id()).collect::<Vec<_>>());
        // The knee's short trials, counted from its typed trials.
        let k = records[1].knee().unwrap();
        let short: Vec<usize> =
            k.trials.iter().enumerate().filter(|(_, t)| t.step.error.is_none() && t.step.limit() == "sender").map(|(i, _)| i + 1).collect();
        let line = &grouped.iter().find(|g| g.kind == warning::Kind::SenderShort).unwrap().text;
        assert!(
            line.contains(&format!(
                "run 2 knee.json: trials {}",
                [1, 3, 6, 7].map(|n: usize| n.to_string()).join(", ").replace("6, 7", "6-7")
            )),
            "{line}"
        );
        assert_eq!(short, [1, 3, 6, 7], "the record's own short trials");
        let md = markdown::render(&d, |n| n.to_string()).text;
        let html = html::render(&d);
        for text in [&md, &html] {
            let (answer, warnings, first_run) =
                (text.find("What was found").unwrap(), text.find("Read first").unwrap(), text.find("Run 1: ladder").unwrap());
            assert!(answer < warnings && warnings < first_run, "answer, then warnings, then the runs");
            for h in &d.headlines {
                assert!(text.contains(&html::esc(&h.text)) || text.contains(&h.text), "{}", h.text);
            }
        }
        assert_eq!(html.matches("<li class=\"headline\">").count(), records.len());
        assert_eq!(html.matches("<li class=\"warning\"").count(), d.warnings.len());
    }

    /// Three drop.json from different folders: each is named by its own
    /// path's end, in the headlines, the warnings, the headings and the plots.
    #[test]
    fn runs_that_share_a_file_name_are_told_apart_everywhere() {
        let v: Value = serde_json::from_str(include_str!("../testdata/drop.json")).unwrap();
        let records: Vec<Record> = ["/r/a/drop.json", "/r/b/drop.json", "/s/drop.json"]
            .iter()
            .map(|p| Record::from_json(Path::new(p), v.clone(), None).unwrap())
            .collect();
        let d = build(&records).unwrap();
        let names = ["a/drop.json", "b/drop.json", "s/drop.json"];
        let runs: Vec<&str> = d.headlines.iter().map(|h| h.runs.as_str()).collect();
        assert_eq!(runs, ["run 1 a/drop.json", "run 2 b/drop.json", "run 3 s/drop.json"]);
        let md = markdown::render(&d, |n| n.to_string());
        for (i, n) in names.iter().enumerate() {
            assert!(md.text.contains(&format!("## Run {}: drop (receiver) — {n}", i + 1)), "{}", md.text);
            assert!(md.plots.iter().any(|(_, svg)| svg.contains(&format!("{n} over time"))), "the plot's title names {n}");
        }
        // Every run has the warning: the top says so once; each run's section names it.
        let faults = d.warnings.iter().find(|w| w.kind == "faults-caught").unwrap();
        assert!(faults.text.contains("(every run: all 3)"), "{}", faults.text);
        for (i, n) in names.iter().enumerate() {
            assert!(
                md.text.contains(&format!("> **Warning:** faults caught when the peer left under a burst (run {} {n})", i + 1)),
                "{}",
                md.text
            );
        }
        assert!(!md.text.contains("— drop.json"), "no run named by the bare file name");
    }

    /// A group trial's three members' records are one section and one
    /// headline; drop's record its own.
    #[test]
    fn a_group_trial_is_one_section() {
        let records = group::tests::records(group::tests::trio_json());
        let d = build(&records).unwrap();
        let runs: Vec<&str> = d.headlines.iter().map(|h| h.runs.as_str()).collect();
        assert_eq!(runs, ["runs 1, 2, 3 blast0.json, blast1.json, blast2.json", "run 4 drop.json"]);
        let headings: Vec<&str> = d.sections.iter().map(|s| s.heading.as_str()).collect();
        assert!(headings.contains(&"Runs 1, 2, 3 blast0.json, blast1.json, blast2.json: group trial trio of 3 senders"), "{headings:?}");
        assert_eq!(headings.iter().filter(|h| h.contains("blast")).count(), 1, "one section for the three records: {headings:?}");
        let md = markdown::render(&d, |n| n.to_string()).text;
        assert_eq!(md.matches("each member's share, per step").count(), 1);
    }

    /// A sentence to paste leaves out what has nothing to say: a series of
    /// no intervals (real records written without --interval's rows), a
    /// replay's receiver when there was none.
    #[test]
    fn sentences_leave_out_clauses_with_nothing_to_say() {
        let records = all_real();
        let md = markdown::render(&build(&records).unwrap(), |n| n.to_string()).text;
        let sentences: Vec<&str> = md.lines().filter(|l| l.starts_with("> ") && !l.starts_with("> **") && !l.starts_with("> - ")).collect();
        assert!(!sentences.is_empty());
        for s in &sentences {
            assert!(!s.contains("0 intervals") && !s.contains("nothing to analyse"), "{s}");
            assert!(!s.contains(" -,") && !s.contains("loss -") && !s.contains(" - Mpps"), "{s}");
        }
        // The ladder's step series have no intervals: no "no change" is claimed of them.
        let l = records[0].ladder().unwrap();
        assert!(l.step_series.iter().all(|st| st.series.is_empty()) && !l.step_series.is_empty());
        assert!(!md.contains("Steps 1, 2 over time"), "{md}");
        // A series with rows keeps its sentence: the knee's and drop's.
        let k = records[1].knee().unwrap();
        assert!(md.contains(&format!("> Over time: {}", k.series_analysis.unwrap().sentence)));
        let d = records[4].drop().unwrap();
        assert!(md.contains(&format!("> Over time: {}", d.series_analysis.sentence)));
        let replay = records[3].replay().unwrap();
        let said = other_part::replay_sentences(&replay);
        assert!(replay.summary.received.is_none() && !said[0].contains("received") && !said[0].contains("loss"), "{said:?}");
    }

    /// A ladder that left queue counts out says so above its tables and in
    /// every sentence, so its wall is not read as that of the counts asked for.
    #[test]
    fn a_ladder_with_counts_left_out_says_which_and_why() {
        let dropped = json!([{"queues": [2, 4], "port": "drop's port m0 (net_memif)", "limit": 1, "what": "RX queues"}]);
        let v = stepless_ladder(|v| {
            v["ladder"]["dropped"] = dropped;
            v["analysis"]["receiver_side"] = json!(true);
            v["analysis"]["ceilings"] = json!([{"size": 64, "offered_mpps": null, "shape": "even", "limit": "none",
                "ceiling": {"reached": false, "mpps": 1.0, "mpps_per_queue_first": 1.0, "queues": 1, "linear_before": true}}]);
        });
        let r = Record::from_json(Path::new("d.json"), v, None).unwrap();
        let said = "queue count(s) 2, 4 (drop's port m0 (net_memif) has at most 1 RX queues)";
        let l = r.ladder().unwrap();
        assert!(
            ladder_part::sentences(&r, &l).iter().all(|s| s.contains(&format!("Not run: {said}."))),
            "{:?}",
            ladder_part::sentences(&r, &l)
        );
        assert!(!ladder_part::sentences(&r, &l).is_empty());
        let d = build(std::slice::from_ref(&r)).unwrap();
        assert!(markdown::render(&d, |n| n.to_string()).text.contains(&format!("Not run: {said}.")));
        // A whole ladder says nothing of it.
        let v = stepless_ladder(|v| v["ladder"]["dropped"] = json!([]));
        let r = Record::from_json(Path::new("w.json"), v, None).unwrap();
        assert!(!markdown::render(&build(std::slice::from_ref(&r)).unwrap(), |n| n.to_string()).text.contains("Not run"));
    }

    /// A ladder record that is not whole (a field missing, or of another
    /// type) is refused with the field named: read as its type, not guessed.
    #[test]
    fn a_ladder_that_is_not_whole_is_refused_naming_what_is_wrong() {
        let mut v = real_ladder();
        v.as_object_mut().unwrap().remove("analysis");
        let r = Record::from_json(Path::new("cut.json"), v, None).unwrap();
        let e = build(std::slice::from_ref(&r)).unwrap_err();
        assert!(e.starts_with("cut.json: cannot read it as a ladder record: ") && e.contains("missing field `analysis`"), "{e}");
    }

    /// Records of a known version whose fields are missing or of the wrong
    /// type: the report says what it cannot read or shows less; it never panics.
    #[test]
    fn mangled_records_give_an_error_or_less_never_a_panic() {
        let wrong: [Value; 6] = [json!(null), json!(7), json!("x"), json!([1, "a"]), json!({"a": 1}), json!(-1.5)];
        let fields = [
            "steps",
            "aggregates",
            "analysis",
            "environment",
            "config",
            "summary",
            "trials",
            "result",
            "series",
            "windows",
            "step_series",
            "capture",
        ];
        for (tool, mode) in [("blast", "ladder"), ("blast", "knee"), ("blast", "single"), ("blast", "replay"), ("drop", "")] {
            for f in fields {
                for w in &wrong {
                    let v = json!({"tool": tool, "mode": mode, "schema_version": 1, f: w});
                    let r = Record::from_json(Path::new("m.json"), v, Some("l".into())).unwrap();
                    let _ = build(std::slice::from_ref(&r)).map(|d| (html::render(&d), markdown::render(&d, |n| n.to_string())));
                }
            }
        }
        // Interrupted before its first step: nothing to show, and it says so by showing nothing.
        for v in [stepless_ladder(|v| v["interrupted"] = json!(true)), {
            let mut k = real_knee();
            k["trials"] = json!([]);
            k["latency_under_load"] = json!([]);
            k
        }] {
            let r = Record::from_json(Path::new("e.json"), v, None).unwrap();
            let d = build(std::slice::from_ref(&r)).unwrap();
            assert!(html::render(&d).contains("e.json"));
        }
    }
}
