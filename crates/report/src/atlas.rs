//! The atlas: one row per instance type (or label) from several ladder
//! runs, the table field reports end with and clouds do not publish.
//! Every cell is a figure from a record with the verdict behind it; runs
//! that do not compare are refused (inside one label) or split into their
//! own table (across labels), and the reason is said.

use crate::doc::{Cell, Table};
use crate::fmt::{gbps, limit_cell, mpps, pct};
use crate::record::{Kind, Record, J};

/// Frame sizes (FCS included) read as "1500 B" and as jumbo frames: a
/// ladder names the frame, a cloud the MTU (1500 or 9001, +18 B of header).
const MTU_1500: std::ops::RangeInclusive<u64> = 1500..=1522;
const JUMBO: std::ops::RangeInclusive<u64> = 8000..=9022;

/// What every figure of a row holds for: rows compare only on the same basis.
#[derive(Debug, Clone, PartialEq)]
pub struct Basis {
    /// The smallest frame size unpaced (the packet-rate columns' size).
    pub size: u64,
    /// `--flows`, or "= queues" (its default: one flow per queue).
    pub flows: String,
}

/// A figure, where it came from and what held it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig {
    pub value: f64,
    /// Queues (the wall) or frame size (Gb/s) it was measured at.
    pub at: u64,
    pub limit: Cell,
    pub file: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    /// How the frames went: a DPDK port's driver, AF_XDP or the kernel's
    /// sockets. A label's runs over different paths are rows of their own.
    pub path: String,
    pub files: Vec<String>,
    pub basis: Basis,
    pub published_gbps: Option<f64>,
    pub one_queue: Option<Fig>,
    pub wall: Option<Fig>,
    /// --cross-check at the wall's step: blast's figure over the C loop's,
    /// and the finding (None: that step was not cross-checked).
    pub wall_cross_check: Option<Cell>,
    /// The first size within 3% of the published figure, and per size what held it.
    pub crossover: Option<Cell>,
    pub at_1500: Option<Fig>,
    pub jumbo: Option<Fig>,
    /// The knee (PDR) of a knee search with the same label and path.
    pub knee: Option<Cell>,
}

impl Row {
    pub fn kpps_per_gbps(&self) -> Option<f64> {
        Some(self.wall.as_ref()?.value * 1000.0 / self.published_gbps?)
    }
}

/// Unpaced steps of one record as (queues, size, the step's JSON).
fn open_steps(r: &Record) -> Vec<(u64, u64, J<'_>)> {
    r.j()
        .arr("steps")
        .iter()
        .map(J)
        .filter(|s| s.str("shape") == Some("open") && s.at("offered_mpps").is_null() && s.at("error").is_null())
        .map(|s| (s.u64("queues").unwrap_or(0), s.u64("size").unwrap_or(0), s))
        .collect()
}

/// Whether a ladder record is a group trial member's (its figures the group's).
pub fn is_group_trial(r: &Record) -> bool {
    r.j().arr("steps").iter().any(|s| !J(s).at("group").is_null())
}

/// The ladder records the atlas can use, and a note for each it cannot.
pub fn usable(records: &[Record]) -> (Vec<&Record>, Vec<String>) {
    let mut notes = Vec::new();
    let mut use_ = Vec::new();
    for r in records.iter().filter(|r| r.kind == Kind::Ladder) {
        if r.j().bool("analysis/receiver_side") != Some(true) {
            notes.push(format!("{}: sender-side only (no --peer): left out of the atlas, whose figures are what arrived", r.file_name()));
        } else if is_group_trial(r) {
            notes.push(format!(
                "{}: a group trial: its figures are the whole group's, not one instance's: left out of the atlas",
                r.file_name()
            ));
        } else if open_steps(r).is_empty() {
            notes.push(format!("{}: no unpaced step: left out of the atlas (its figures are paced rates)", r.file_name()));
        } else {
            use_.push(r);
        }
    }
    (use_, notes)
}

/// One row per label and path, in the order they first appear; each
/// with the knee of a knee search (`knees`) of the same label and path.
pub fn rows(records: &[&Record], knees: &[&Record]) -> Result<Vec<Row>, String> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in records {
        let k = (label(r), path_of(r));
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.iter()
        .map(|(l, p)| {
            let runs: Vec<&Record> = records.iter().copied().filter(|r| &label(r) == l && &path_of(r) == p).collect();
            let mut row = row(l, &runs)?;
            row.path = p.clone();
            row.knee = knees.iter().find(|k| &label(k) == l && &path_of(k) == p).and_then(|k| knee_cell(k));
            Ok(row)
        })
        .collect()
}

/// The path a run's frames took, from its sending port's driver.
pub fn path_of(r: &Record) -> String {
    match r.j().str("environment/sender/port/driver") {
        Some("udp-socket") => "kernel UDP sockets".into(),
        Some(d) if d.starts_with("net_af_xdp") => "AF_XDP (net_af_xdp)".into(),
        Some(d) => format!("DPDK {d}"),
        None => "DPDK (driver not recorded)".into(),
    }
}

/// A knee search's knee, with its frame size and shape, and what bounds it.
fn knee_cell(k: &Record) -> Option<Cell> {
    let j = k.j();
    let knee = j.f64("result/knee_mpps")?;
    let first = J(j.arr("trials").first()?);
    let at_least = j.bool("result/sender_limited") == Some(true);
    Some(Cell::noted(
        format!("{}{} at {} B, {}", if at_least { "at least " } else { "" }, mpps(knee), first.text("size"), first.text("shape")),
        format!("{}: PDR {}", k.file_name(), j.text("result/pdr")),
    ))
}

fn label(r: &Record) -> String {
    r.label.clone().unwrap_or_else(|| r.file_name())
}

fn row(label: &str, runs: &[&Record]) -> Result<Row, String> {
    let basis = basis(label, runs)?;
    let published = published(label, runs)?;
    let files = runs.iter().map(|r| r.file_name()).collect();
    let one_queue = first(runs, |r| step_fig(r, |q, s| q == 1 && s == basis.size, Measure::Mpps));
    let wall = first(runs, |r| wall(r, basis.size));
    let wall_cross_check = wall.as_ref().and_then(|w| {
        let r = runs.iter().find(|r| r.file_name() == w.file)?;
        cross_check_at(r, w.at, basis.size)
    });
    let crossover = first(runs, |r| {
        let x = r.j().at("analysis/crossover");
        (!x.is_null()).then(|| {
            let first = match x.u64("first_size") {
                _ if x.bool("published_exceeded") == Some(true) => "unknown: above published".to_string(),
                Some(s) => format!("{s} B"),
                None => "none of its sizes".to_string(),
            };
            let held: Vec<String> =
                x.arr("sizes").iter().map(J).map(|s| format!("{} B held by {}", s.text("size"), s.text("held_by"))).collect();
            Cell::noted(first, format!("{}: {}", r.file_name(), held.join(", ")))
        })
    });
    let at_1500 = first(runs, |r| step_fig(r, |_, s| MTU_1500.contains(&s), Measure::Gbps));
    let jumbo = first(runs, |r| step_fig(r, |_, s| JUMBO.contains(&s), Measure::Gbps));
    Ok(Row {
        label: label.to_string(),
        path: String::new(),
        files,
        basis,
        published_gbps: published,
        one_queue,
        wall,
        wall_cross_check,
        crossover,
        at_1500,
        jumbo,
        knee: None,
    })
}

/// The first run (in the order given) that has the figure.
fn first<T>(runs: &[&Record], f: impl Fn(&Record) -> Option<T>) -> Option<T> {
    runs.iter().find_map(|r| f(r))
}

/// A label's runs must agree on flows (--flows, or its default of one per
/// queue): a packet rate depends on them.
fn basis(label: &str, runs: &[&Record]) -> Result<Basis, String> {
    let mut flows: Vec<(String, String)> = Vec::new();
    for r in runs {
        let f = crate::env::flows(r.j().at("config"));
        if !flows.iter().any(|(g, _)| *g == f) {
            flows.push((f, r.file_name()));
        }
    }
    if flows.len() > 1 {
        let said: Vec<String> = flows.iter().map(|(f, file)| format!("{f} in {file}")).collect();
        return Err(format!(
            "atlas row {label:?}: its runs differ in flows ({}): they do not compare; give them different --label",
            said.join(", ")
        ));
    }
    let size = runs.iter().flat_map(|r| open_steps(r)).map(|(_, s, _)| s).min().unwrap_or(0);
    Ok(Basis { size, flows: flows.into_iter().next().map_or_else(String::new, |f| f.0) })
}

fn published(label: &str, runs: &[&Record]) -> Result<Option<f64>, String> {
    let mut seen: Option<(f64, String)> = None;
    for r in runs {
        let Some(p) = r.j().f64("config/published_gbps") else { continue };
        match &seen {
            Some((q, file)) if (q - p).abs() > 1e-9 => {
                return Err(format!(
                    "atlas row {label:?}: {file} says the published bandwidth is {q} Gb/s and {} says {p}: give the same --published-gbps, or different --label",
                    r.file_name()
                ))
            }
            Some(_) => {}
            None => seen = Some((p, r.file_name())),
        }
    }
    Ok(seen.map(|s| s.0))
}

#[derive(Clone, Copy)]
enum Measure {
    Mpps,
    Gbps,
}

/// The best received figure (median over repeats) of the unpaced steps
/// that match, with that step's verdict.
fn step_fig(r: &Record, want: impl Fn(u64, u64) -> bool, m: Measure) -> Option<Fig> {
    let mut best: Option<(f64, u64, J)> = None;
    for a in r.j().arr("aggregates").iter().map(J) {
        let (q, s) = (a.u64("queues").unwrap_or(0), a.u64("size").unwrap_or(0));
        if a.str("shape") != Some("open") || !a.at("offered_mpps").is_null() || !want(q, s) {
            continue;
        }
        let v = match m {
            Measure::Mpps => a.f64("mpps/median"),
            Measure::Gbps => a.f64("frame_gbps/median"),
        }?;
        if best.as_ref().is_none_or(|b| v > b.0) {
            best = Some((v, s, a));
        }
    }
    let (value, size, agg) = best?;
    let q = agg.u64("queues").unwrap_or(0);
    let at = match m {
        Measure::Mpps => q,
        Measure::Gbps => size,
    };
    Some(Fig { value, at, limit: evidence(r, q, size, agg.text("limit")), file: r.file_name() })
}

/// The step's limit cell (the first run of it), labelled as the aggregate.
fn evidence(r: &Record, queues: u64, size: u64, label: String) -> Cell {
    let step = open_steps(r).into_iter().find(|(q, s, _)| *q == queues && *s == size);
    let mut c = step.map(|(_, _, j)| limit_cell(j)).unwrap_or_default();
    c.text = label;
    c
}

/// The cross-check of the (first run of the) unpaced step at `queues` and
/// `size`: the ratio as the record rounded it, its finding in the note.
fn cross_check_at(r: &Record, queues: u64, size: u64) -> Option<Cell> {
    let (_, _, step) = open_steps(r).into_iter().find(|(q, s, _)| *q == queues && *s == size)?;
    let x = step.at("cross_check");
    if x.is_null() {
        return None;
    }
    let ratio = x.f64("ratio").map_or_else(|| "unknown".to_string(), |v| format!("{v:.2}"));
    Some(Cell::noted(ratio, format!("{}: {}", r.file_name(), x.text("sentence"))))
}

fn wall(r: &Record, size: u64) -> Option<Fig> {
    let c = r
        .j()
        .arr("analysis/ceilings")
        .iter()
        .map(J)
        .find(|c| c.u64("size") == Some(size) && c.str("shape") == Some("open") && c.at("offered_mpps").is_null())?;
    let queues = c.u64("ceiling/queues")?;
    let mut limit = evidence(r, queues, size, c.text("limit"));
    if c.bool("ceiling/reached") != Some(true) {
        limit.text = format!("not reached by {queues} queues ({})", limit.text);
    }
    Some(Fig { value: c.f64("ceiling/mpps")?, at: queues, limit, file: r.file_name() })
}

/// The rows as tables: one per basis, the first holding the first row's.
pub fn tables(rows: &[Row]) -> Vec<Table> {
    let mut bases: Vec<&Basis> = Vec::new();
    for r in rows {
        if !bases.contains(&&r.basis) {
            bases.push(&r.basis);
        }
    }
    bases.iter().enumerate().map(|(i, b)| table(b, rows.iter().filter(|r| &r.basis == *b), i > 0)).collect()
}

fn table<'a>(b: &Basis, rows: impl Iterator<Item = &'a Row>, split: bool) -> Table {
    let mut caption = format!(
        "Atlas: receiver-side figures of unpaced steps; packet-rate columns at {} B frames, {}; each cell's verdict below it",
        b.size,
        match b.flows.as_str() {
            "= queues" => "one flow per queue".to_string(),
            f => format!("{f} flows"),
        }
    );
    if split {
        caption.push_str(
            " (a table of its own: these rows differ from the first table's in frame size or flows, so they are not compared with it)",
        );
    }
    let mut t = Table::new(
        caption,
        &[
            "label",
            "path",
            "published Gb/s",
            "Mpps, 1 queue",
            "wall Mpps",
            "wall at queues",
            "blast/C loop at the wall",
            "kpps per published Gb/s",
            "crossover size",
            "Gb/s at 1500 B",
            "Gb/s jumbo",
            "knee (PDR) Mpps",
            "runs",
        ],
    );
    for r in rows {
        t.row(cells(r));
    }
    t
}

fn fig_cell(f: &Option<Fig>, text: impl Fn(&Fig) -> String) -> Cell {
    match f {
        Some(f) => {
            Cell { text: text(f), note: Some(format!("{}: {}", f.file, f.limit.note.clone().unwrap_or_else(|| f.limit.text.clone()))) }
        }
        None => Cell::new("not measured"),
    }
}

fn cells(r: &Row) -> Vec<Cell> {
    let of_published = |f: &Fig| match r.published_gbps {
        Some(p) if f.value > p * ladder::ABOVE_PUBLISHED => format!(
            "{} at {} B ({} of published: above it, so that figure does not bound this port)",
            gbps(f.value),
            f.at,
            pct(100.0 * f.value / p)
        ),
        Some(p) => format!("{} at {} B ({} of published)", gbps(f.value), f.at, pct(100.0 * f.value / p)),
        None => format!("{} at {} B", gbps(f.value), f.at),
    };
    vec![
        Cell::new(r.label.clone()),
        Cell::new(r.path.clone()),
        Cell::new(r.published_gbps.map_or("not given".to_string(), |p| format!("{p}"))),
        fig_cell(&r.one_queue, |f| mpps(f.value)),
        fig_cell(&r.wall, |f| mpps(f.value)),
        Cell::new(r.wall.as_ref().map_or("-".to_string(), |w| w.at.to_string())),
        r.wall_cross_check.clone().unwrap_or_else(|| Cell::new("no --cross-check")),
        Cell::new(r.kpps_per_gbps().map_or("-".to_string(), |k| format!("{k:.0}"))),
        r.crossover.clone().unwrap_or_else(|| Cell::new("no --published-gbps")),
        fig_cell(&r.at_1500, of_published),
        fig_cell(&r.jumbo, of_published),
        r.knee.clone().unwrap_or_else(|| Cell::new("no knee search")),
        Cell::new(r.files.join(", ")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::path::Path;

    /// A ladder record with unpaced steps (queues, size, Mpps, Gb/s, limit),
    /// its wall at 64 B and its crossover, as blast writes them.
    fn ladder(file: &str, label: Option<&str>, flows: Value, published: Option<f64>, steps: &[(u64, u64, f64, f64, &str)]) -> Record {
        let st: Vec<Value> = steps
            .iter()
            .enumerate()
            .map(|(i, (q, s, _, _, l))| {
                json!({"step": i, "run": 1, "queues": q, "size": s, "flows": 1, "shape": "open", "offered_mpps": null, "error": null,
                       "limit": l, "verdict": {"limits": [{"kind": l, "side": "sender", "evidence": format!("{l} evidence at {q}x{s}")}], "invalid": null}})
            })
            .collect();
        let ag: Vec<Value> = steps
            .iter()
            .map(|(q, s, m, g, l)| json!({"queues": q, "size": s, "offered_mpps": null, "shape": "open", "mpps": {"median": m}, "frame_gbps": {"median": g}, "limit": l}))
            .collect();
        let (wq, wm) = steps.iter().filter(|s| s.1 == 64).map(|s| (s.0, s.2)).fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        let v = json!({"tool": "blast", "mode": "ladder", "schema_version": 1, "config": {"flows": flows, "published_gbps": published},
            "steps": st, "aggregates": ag,
            "analysis": {"receiver_side": true, "ceilings": [{"size": 64, "offered_mpps": null, "shape": "open",
                "ceiling": {"reached": true, "queues": wq, "mpps": wm, "mpps_per_queue_first": steps[0].2}, "limit": "pps-allowance"}],
                "crossover": published.map(|p| json!({"published_gbps": p, "first_size": 1518}))}});
        Record::from_json(Path::new(file), v, label.map(str::to_string)).unwrap()
    }

    fn big() -> Record {
        ladder(
            "big.json",
            Some("c8gn.48xlarge"),
            json!(64),
            Some(300.0),
            &[
                (1, 64, 2.5, 1.3, "receiver"),
                (8, 64, 36.6, 18.7, "pps-allowance"),
                (16, 64, 36.5, 18.7, "pps-allowance"),
                (16, 1518, 23.2, 282.0, "bw-out-allowance"),
                (16, 9018, 4.2, 304.0, "none"),
            ],
        )
    }

    #[test]
    fn a_row_is_its_records_figures_with_their_verdicts() {
        let r = big();
        let rows = rows(&[&r], &[]).unwrap();
        let row = &rows[0];
        assert_eq!(row.label, "c8gn.48xlarge");
        assert_eq!(row.basis, Basis { size: 64, flows: "64".into() });
        assert_eq!(row.one_queue.as_ref().map(|f| (f.value, f.at)), Some((2.5, 1)));
        assert_eq!(row.wall.as_ref().map(|f| (f.value, f.at)), Some((36.6, 8)));
        assert_eq!(row.wall.as_ref().unwrap().limit.text, "pps-allowance");
        assert!(row.wall.as_ref().unwrap().limit.note.as_deref().unwrap().contains("evidence at 8x64"));
        assert_eq!(row.kpps_per_gbps().map(|k| k.round()), Some(122.0));
        assert_eq!(row.crossover.as_ref().map(|c| c.text.as_str()), Some("1518 B"));
        assert_eq!(row.at_1500.as_ref().map(|f| (f.value, f.at)), Some((282.0, 1518)));
        assert_eq!(row.jumbo.as_ref().map(|f| (f.value, f.at)), Some((304.0, 9018)));
        let t = &tables(&rows)[0];
        assert_eq!(t.rows[0][9].text, "282.00 at 1518 B (94.00% of published)");
        assert_eq!(t.rows[0][10].text, "304.00 at 9018 B (101.33% of published)");
        // A port that carried more than the published figure (memif against
        // a published 100 Gb/s): the cell says the figure does not bound it.
        let memif =
            ladder("memif.json", Some("memif"), json!(1), Some(100.0), &[(1, 64, 2.0, 1.0, "sender"), (1, 1518, 25.6, 310.72, "sender")]);
        let tm = &tables(&super::rows(&[&memif], &[]).unwrap())[0];
        assert_eq!(tm.rows[0][9].text, "310.72 at 1518 B (310.72% of published: above it, so that figure does not bound this port)");
        assert_eq!(t.rows[0][9].note.as_deref(), Some("big.json: bw-out-allowance (sender): bw-out-allowance evidence at 16x1518"));
        assert_eq!(t.rows[0][6].text, "no --cross-check");
    }

    /// The wall's step cross-checked: the ratio as the record has it, the sentence in the note.
    #[test]
    fn the_walls_cross_check_is_its_ratio_and_sentence() {
        let mut r = big();
        let sentence = "the C loop carried 1.31x more (receiver-side): blast's loop is the limit at this step";
        for s in r.json.pointer_mut("/steps").unwrap().as_array_mut().unwrap() {
            if s["queues"] == 8 && s["size"] == 64 {
                s["cross_check"] = json!({ "ratio": 0.76, "finding": "blast", "basis": "receiver", "sentence": sentence });
            }
        }
        let rows = rows(&[&r], &[]).unwrap();
        let t = &tables(&rows)[0];
        assert_eq!(t.rows[0][6].text, "0.76");
        assert_eq!(t.rows[0][6].note.as_deref(), Some(format!("big.json: {sentence}").as_str()));
    }

    #[test]
    fn runs_of_one_label_combine_but_must_agree() {
        let small = ladder(
            "s64.json",
            Some("c8gn.large"),
            json!(64),
            Some(75.0),
            &[(1, 64, 2.4, 1.2, "receiver"), (2, 64, 4.8, 2.4, "pps-allowance")],
        );
        let jumbo = ladder("s9k.json", Some("c8gn.large"), json!(64), None, &[(2, 9018, 1.0, 73.0, "bw-out-allowance")]);
        let rows = rows(&[&small, &jumbo], &[]).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].files, vec!["s64.json", "s9k.json"]);
        assert_eq!(rows[0].jumbo.as_ref().map(|f| (f.value, f.file.as_str())), Some((73.0, "s9k.json")));
        assert_eq!(rows[0].published_gbps, Some(75.0));

        let other_flows = ladder("f1.json", Some("c8gn.large"), Value::Null, None, &[(1, 64, 2.0, 1.0, "receiver")]);
        let e = super::rows(&[&small, &other_flows], &[]).unwrap_err();
        assert!(e.contains("differ in flows (64 in s64.json, = queues in f1.json)") && e.contains("different --label"), "{e}");
        let other_pub = ladder("p.json", Some("c8gn.large"), json!(64), Some(100.0), &[(1, 64, 2.0, 1.0, "receiver")]);
        let e = super::rows(&[&small, &other_pub], &[]).unwrap_err();
        assert!(e.contains("75 Gb/s") && e.contains("says 100"), "{e}");
    }

    #[test]
    fn rows_that_do_not_compare_get_a_table_of_their_own() {
        let a = big();
        let b = ladder("b.json", Some("other"), json!(1), Some(50.0), &[(1, 64, 1.0, 0.5, "receiver")]);
        let c = ladder("c.json", Some("third"), json!(64), Some(50.0), &[(1, 64, 1.1, 0.6, "receiver")]);
        let t = tables(&rows(&[&a, &b, &c], &[]).unwrap());
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].rows.iter().map(|r| r[0].text.as_str()).collect::<Vec<_>>(), ["c8gn.48xlarge", "third"]);
        assert!(t[1].caption.contains("not compared"), "{}", t[1].caption);
        assert_eq!(t[1].rows[0][0].text, "other");
    }

    #[test]
    fn a_label_over_two_paths_is_two_rows_each_with_its_own_knee() {
        let dpdk = big();
        let mut socket = big();
        socket.json["environment"] = json!({"sender": {"port": {"driver": "udp-socket"}}});
        socket.json["steps"][0]["limit"] = json!("receiver");
        let knee = Record::from_json(
            Path::new("sk.json"),
            json!({"tool": "blast", "mode": "knee", "schema_version": 1, "environment": {"sender": {"port": {"driver": "udp-socket"}}},
                   "result": {"knee_mpps": 0.0123, "pdr": "0.0123 Mpps", "sender_limited": false}, "trials": [{"size": 64, "shape": "even"}]}),
            Some("c8gn.48xlarge".into()),
        )
        .unwrap();
        let rows = rows(&[&dpdk, &socket], &[&knee]).unwrap();
        assert_eq!(rows.len(), 2, "one row per path, never one row mixing them");
        assert_eq!((rows[0].path.as_str(), rows[1].path.as_str()), ("DPDK (driver not recorded)", "kernel UDP sockets"));
        assert_eq!(rows[0].knee, None, "the knee search ran on sockets, not on the DPDK port");
        let k = rows[1].knee.clone().unwrap();
        assert_eq!((k.text.as_str(), k.note.as_deref()), ("0.0123 at 64 B, even", Some("sk.json: PDR 0.0123 Mpps")));
        let t = &tables(&rows)[0];
        assert_eq!((t.rows[1][1].text.as_str(), t.rows[1][11].text.as_str()), ("kernel UDP sockets", "0.0123 at 64 B, even"));
        assert_eq!(t.rows[0][11].text, "no knee search");
    }

    #[test]
    fn sender_side_ladders_are_left_out_and_said_to_be() {
        let mut r = big();
        r.json["analysis"]["receiver_side"] = json!(false);
        let (used, notes) = usable(std::slice::from_ref(&r));
        assert!(used.is_empty());
        assert!(notes[0].contains("sender-side only"), "{notes:?}");
    }
}
