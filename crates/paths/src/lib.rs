//! Several paths (DPDK's PMD, AF_XDP, the kernel's sockets) measured at the
//! same operating points, compared by the reading guide's rule: a ratio
//! between two paths means something only where both are below their
//! knee; past one path's knee the ratio measures where that knee is, not
//! how much faster the other path is.
//!
//! No EAL, no records: blast turns each path's records into [`PathFigures`]
//! and [`compare`] makes the table, its readings and the sentence.

use serde::{Deserialize, Serialize};

pub mod plot;

/// One path's figures at one operating point of the table (a rate and an
/// arrival shape), from the record of the run that measured it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Point {
    /// The offered rate, over all queues.
    pub rate_mpps: f64,
    pub shape: String,
    /// Which round of the table this was (1-based).
    pub round: u32,
    /// Sender-side: what left the sender.
    pub sent_mpps: f64,
    /// Receiver-side: what drop counted in its window (None: not measured).
    pub delivered_mpps: Option<f64>,
    pub loss_pct: Option<f64>,
    /// Frames lost, exactly (None: no exact account).
    pub lost: Option<u64>,
    /// The limit the receiver-side figure hit (the step's verdict).
    pub limit: Option<String>,
    pub latency: Option<Latency>,
    pub cpu: Option<CpuCost>,
    /// The record this point was read from.
    pub record: String,
    /// The run failed: why (its figures are absent).
    pub error: Option<String>,
}

/// Latency percentiles of one point, with the clock they were read on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    pub samples: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    #[serde(rename = "p99.9_us")]
    pub p99_9_us: f64,
    pub max_us: f64,
    /// Which clock stamped both ends, in words ("round trip on blast's clock").
    pub clock: String,
}

/// What one point cost in CPU time, both ends.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuCost {
    pub sender: SideCpu,
    pub receiver: SideCpu,
    /// Both ends' CPU seconds per million frames delivered (None: none
    /// delivered, or a side's time unknown).
    pub seconds_per_million: Option<f64>,
}

/// One end's CPU time over its window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SideCpu {
    pub user_seconds: f64,
    pub system_seconds: f64,
    pub softirq_seconds: f64,
    /// How it was counted: busy-polling lcores whole, or the lanes' CPUs'
    /// time from /proc/stat (the kernel's included).
    pub counted: String,
    /// False when this end's time is not known (then it is not in the sum).
    pub known: bool,
}

impl SideCpu {
    pub fn seconds(&self) -> f64 {
        self.user_seconds + self.system_seconds + self.softirq_seconds
    }
}

impl CpuCost {
    /// Both ends, per million frames delivered.
    pub fn new(sender: SideCpu, receiver: SideCpu, delivered_frames: u64) -> CpuCost {
        let seconds_per_million = (sender.known && receiver.known && delivered_frames > 0)
            .then(|| (sender.seconds() + receiver.seconds()) * 1e6 / delivered_frames as f64);
        CpuCost { sender, receiver, seconds_per_million }
    }
}

/// One path's knee at one shape, from its knee search's record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Knee {
    pub shape: String,
    pub ndr_mpps: Option<f64>,
    pub pdr_mpps: Option<f64>,
    /// The knee: the PDR (with --sla, the PDR that also kept the limit).
    pub knee_mpps: Option<f64>,
    /// The knee is a lower bound: the sender delivered no more, or the top
    /// of the search passed.
    pub at_least: bool,
    /// Each result as the search printed it.
    pub ndr: String,
    pub pdr: String,
    /// How far short of an offered rate a trial may fall and still count at it, percent.
    pub tolerance_pct: f64,
    /// When no trial passed: the lowest rate a trial failed at (the knee is
    /// under it, below the search's floor).
    pub fails_from_mpps: Option<f64>,
    pub record: String,
    pub error: Option<String>,
}

/// Everything measured on one path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathFigures {
    pub name: String,
    pub points: Vec<Point>,
    pub knees: Vec<Knee>,
}

/// Where a path stood at a rate, against its knee at that shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "standing", content = "why")]
pub enum Standing {
    /// The rate is at or below the path's knee.
    Below,
    /// The rate is above the path's knee: its figures there are its saturation.
    Past,
    /// Not known, and why (no knee found, a lower-bound knee under the rate, the run failed).
    Unknown(String),
}

/// How a ratio against the reference path reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "reading", content = "why")]
pub enum Reading {
    /// This is the reference path: its ratios are 1.
    Reference,
    /// Both paths are below their knees: the ratio compares the paths.
    BothBelowKnee,
    /// One path is past its knee: the ratio is that path's saturation, not a speed-up.
    PastKnee(String),
    /// Not readable, and why.
    Unknown(String),
}

impl Reading {
    /// The marking the table prints beside a ratio.
    pub fn text(&self) -> String {
        match self {
            Reading::Reference => "reference".into(),
            Reading::BothBelowKnee => "both below their knee".into(),
            Reading::PastKnee(p) => format!("past {p}'s knee: this ratio is {p}'s saturation, not a speed-up"),
            Reading::Unknown(why) => format!("unknown: {why}"),
        }
    }
}

/// Each figure of a path over the reference path's, at one point (None
/// where either has no such figure). Above 1: this path's figure is the
/// larger (for Mpps: it delivered more; for latency and CPU: it was slower
/// or cost more).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ratios {
    pub delivered: Option<f64>,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    #[serde(rename = "p99.9")]
    pub p99_9: Option<f64>,
    pub max: Option<f64>,
    pub cpu: Option<f64>,
}

impl Ratios {
    /// "Mpps 1.0x, P50 6.5x, P99 9.1x, P99.9 2.6x, max 1.9x, CPU 0.4x": each
    /// figure over the reference's, those both have.
    pub fn text(&self) -> String {
        let all =
            [("Mpps", self.delivered), ("P50", self.p50), ("P99", self.p99), ("P99.9", self.p99_9), ("max", self.max), ("CPU", self.cpu)];
        all.iter().filter_map(|(name, v)| v.map(|v| format!("{name} {}", times(v)))).collect::<Vec<_>>().join(", ")
    }
}

/// One path's cell in a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cell {
    pub path: String,
    /// The point (the median round by delivered Mpps); None when the path has none here.
    pub point: Option<Point>,
    pub rounds: u32,
    pub knee_mpps: Option<f64>,
    /// The knee is a lower bound (the search found no upper bound).
    pub knee_at_least: bool,
    pub standing: Standing,
    pub ratios: Ratios,
    pub reading: Reading,
}

/// One operating point: every path's cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Row {
    pub rate_mpps: f64,
    pub shape: String,
    pub cells: Vec<Cell>,
}

/// A path whose run failed somewhere: which run and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    pub path: String,
    pub what: String,
    pub error: String,
}

/// The comparison: the table, whose path the ratios are against, and the sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The path with the highest knee (the fastest): every ratio is against it.
    pub reference: String,
    pub rows: Vec<Row>,
    pub failures: Vec<Failure>,
    pub sentence: String,
}

/// Where `rate` stands against `knee` (None: no knee search at that shape).
pub fn standing(rate_mpps: f64, knee: Option<&Knee>) -> Standing {
    let Some(k) = knee else { return Standing::Unknown("no knee search at this shape".into()) };
    if let Some(e) = &k.error {
        return Standing::Unknown(format!("its knee search failed: {e}"));
    }
    let Some(at) = k.knee_mpps else {
        return match k.fails_from_mpps {
            // Every trial failed, the lowest at `f`: a rate from there up loses.
            Some(f) if rate_mpps >= f => Standing::Past,
            _ => Standing::Unknown(format!("no knee found ({})", k.pdr)),
        };
    };
    // An offered rate the search would have counted at its knee is below it.
    if rate_mpps <= at * (1.0 + k.tolerance_pct / 100.0) {
        Standing::Below
    } else if k.at_least {
        Standing::Unknown(format!("its knee is at least {} Mpps (the search found no upper bound), under this rate", mpps(at)))
    } else {
        Standing::Past
    }
}

/// The median round by delivered Mpps (the lower of the two middle ones),
/// failed rounds last.
fn median(points: &[&Point]) -> Option<Point> {
    let mut v: Vec<&Point> = points.to_vec();
    v.sort_by(|a, b| {
        let key = |p: &Point| if p.error.is_some() { f64::INFINITY } else { p.delivered_mpps.unwrap_or(f64::INFINITY) };
        key(a).total_cmp(&key(b))
    });
    let ok = v.iter().filter(|p| p.error.is_none()).count();
    let at = if ok == 0 { 0 } else { (ok - 1) / 2 };
    v.get(at).map(|p| (*p).clone())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => Some(a / b),
        _ => None,
    }
}

fn ratios(p: Option<&Point>, r: Option<&Point>) -> Ratios {
    let (Some(p), Some(r)) = (p.filter(|p| p.error.is_none()), r.filter(|r| r.error.is_none())) else { return Ratios::default() };
    let lat = |p: &Point, f: fn(&Latency) -> f64| p.latency.as_ref().filter(|l| l.samples > 0).map(f);
    Ratios {
        delivered: ratio(p.delivered_mpps, r.delivered_mpps),
        p50: ratio(lat(p, |l| l.p50_us), lat(r, |l| l.p50_us)),
        p99: ratio(lat(p, |l| l.p99_us), lat(r, |l| l.p99_us)),
        p99_9: ratio(lat(p, |l| l.p99_9_us), lat(r, |l| l.p99_9_us)),
        max: ratio(lat(p, |l| l.max_us), lat(r, |l| l.max_us)),
        cpu: ratio(p.cpu.as_ref().and_then(|c| c.seconds_per_million), r.cpu.as_ref().and_then(|c| c.seconds_per_million)),
    }
}

fn reading(path: &str, reference: &str, mine: &Standing, theirs: &Standing) -> Reading {
    if path == reference {
        return Reading::Reference;
    }
    match (mine, theirs) {
        (Standing::Below, Standing::Below) => Reading::BothBelowKnee,
        (Standing::Past, _) => Reading::PastKnee(path.to_string()),
        (_, Standing::Past) => Reading::PastKnee(reference.to_string()),
        (Standing::Unknown(why), _) => Reading::Unknown(format!("{path}: {why}")),
        (_, Standing::Unknown(why)) => Reading::Unknown(format!("{reference}: {why}")),
    }
}

/// The reference: the path with the highest knee at the first shape that
/// has one, the first path listed when none has.
fn reference(paths: &[PathFigures]) -> String {
    let knee = |p: &PathFigures| {
        p.knees
            .iter()
            .filter(|k| k.error.is_none())
            .filter_map(|k| k.knee_mpps)
            .fold(None, |m: Option<f64>, k| Some(m.map_or(k, |m| m.max(k))))
    };
    let mut best: Option<(&PathFigures, f64)> = None;
    for p in paths {
        if let Some(k) = knee(p) {
            if best.is_none_or(|(_, b)| k > b) {
                best = Some((p, k));
            }
        }
    }
    best.map(|(p, _)| p.name.clone()).or_else(|| paths.first().map(|p| p.name.clone())).unwrap_or_default()
}

/// The table, its readings and the sentence. Rows are every (shape, rate)
/// any path measured, shapes in the order first met, rates rising.
pub fn compare(paths: &[PathFigures]) -> Comparison {
    let reference = reference(paths);
    let mut keys: Vec<(String, f64)> = Vec::new();
    for p in paths {
        for pt in &p.points {
            if !keys.iter().any(|(s, r)| *s == pt.shape && *r == pt.rate_mpps) {
                keys.push((pt.shape.clone(), pt.rate_mpps));
            }
        }
    }
    let shapes: Vec<String> = keys.iter().fold(Vec::new(), |mut v, (s, _)| {
        if !v.contains(s) {
            v.push(s.clone());
        }
        v
    });
    keys.sort_by(|a, b| {
        let i = |s: &String| shapes.iter().position(|x| x == s);
        i(&a.0).cmp(&i(&b.0)).then(a.1.total_cmp(&b.1))
    });
    let rows = keys
        .iter()
        .map(|(shape, rate)| {
            let picked: Vec<(Option<Point>, u32, Option<&Knee>)> = paths
                .iter()
                .map(|p| {
                    let here: Vec<&Point> = p.points.iter().filter(|pt| pt.shape == *shape && pt.rate_mpps == *rate).collect();
                    (median(&here), here.len() as u32, p.knees.iter().find(|k| k.shape == *shape))
                })
                .collect();
            let stand = |pt: &Option<Point>, k: Option<&Knee>| match pt {
                Some(p) if p.error.is_some() => Standing::Unknown(format!("the run failed: {}", p.error.as_deref().unwrap_or(""))),
                None => Standing::Unknown("not measured".into()),
                Some(_) => standing(*rate, k),
            };
            let ri = paths.iter().position(|p| p.name == reference);
            let (ref_point, ref_standing) = match ri {
                Some(i) => (picked[i].0.clone(), stand(&picked[i].0, picked[i].2)),
                None => (None, Standing::Unknown("no reference".into())),
            };
            let cells = paths
                .iter()
                .zip(&picked)
                .map(|(p, (pt, rounds, knee))| {
                    let st = stand(pt, *knee);
                    Cell {
                        path: p.name.clone(),
                        ratios: ratios(pt.as_ref(), ref_point.as_ref()),
                        reading: reading(&p.name, &reference, &st, &ref_standing),
                        knee_mpps: knee.and_then(|k| k.knee_mpps),
                        knee_at_least: knee.is_some_and(|k| k.at_least),
                        point: pt.clone(),
                        rounds: *rounds,
                        standing: st,
                    }
                })
                .collect();
            Row { rate_mpps: *rate, shape: shape.clone(), cells }
        })
        .collect::<Vec<Row>>();
    let mut failures = Vec::new();
    for p in paths {
        for pt in p.points.iter().filter(|pt| pt.error.is_some()) {
            let what = format!("{} Mpps {} (round {})", mpps(pt.rate_mpps), pt.shape, pt.round);
            failures.push(Failure { path: p.name.clone(), what, error: pt.error.clone().unwrap_or_default() });
        }
        for k in p.knees.iter().filter(|k| k.error.is_some()) {
            failures.push(Failure {
                path: p.name.clone(),
                what: format!("knee search ({})", k.shape),
                error: k.error.clone().unwrap_or_default(),
            });
        }
    }
    let sentence = sentence(&reference, &rows, &failures);
    Comparison { reference, rows, failures, sentence }
}

/// "0.200", "1.25", "0.0005": Mpps as the table prints them (a few kpps keep their digits).
pub fn mpps(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.2}")
    } else if v >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// A cell's knee as said beside it: "0.900", "at least 0.678", "-".
pub fn knee_text(c: &Cell) -> String {
    match c.knee_mpps {
        Some(k) if c.knee_at_least => format!("at least {}", mpps(k)),
        Some(k) => mpps(k),
        None => "-".into(),
    }
}

/// "1.3x", "40x", "0.25x".
pub fn times(v: f64) -> String {
    // Where it rounds: 0.999 is "1.0x", as 1.001 is.
    if v >= 9.95 {
        format!("{v:.0}x")
    } else if v >= 0.995 {
        format!("{v:.1}x")
    } else {
        format!("{v:.2}x")
    }
}

/// The figure a sentence compares: P99 latency where both have it, else delivered Mpps.
fn compared(c: &Cell, r: &Cell) -> Option<(String, f64, f64, f64)> {
    let (p, q) = (c.point.as_ref()?, r.point.as_ref()?);
    if let (Some(x), Some(y)) = (c.ratios.p99, p.latency.as_ref().zip(q.latency.as_ref())) {
        return Some((format!("P99 ({})", y.1.clock), x, y.0.p99_us, y.1.p99_us));
    }
    Some(("delivered rate".into(), c.ratios.delivered?, p.delivered_mpps?, q.delivered_mpps?))
}

fn unit(what: &str, v: f64) -> String {
    if what.starts_with("P99") {
        format!("{v:.0} us")
    } else {
        format!("{} Mpps", mpps(v))
    }
}

/// The committable sentence: what the ratio is below every knee, and what
/// it is where a path is past its knee.
fn sentence(reference: &str, rows: &[Row], failures: &[Failure]) -> String {
    let mut parts = Vec::new();
    // A path that failed at a row is named apart (below), not compared there.
    let measured = |c: &&Cell| c.point.as_ref().is_some_and(|p| p.error.is_none());
    let others = |row: &Row| -> Vec<(Cell, Cell)> {
        let r = row.cells.iter().filter(measured).find(|c| c.path == reference).cloned();
        row.cells.iter().filter(measured).filter(|c| c.path != reference).filter_map(|c| Some((c.clone(), r.clone()?))).collect()
    };
    // Below every knee: the highest such rate of the first shape.
    let below = rows
        .iter()
        .filter(|r| !others(r).is_empty() && r.cells.iter().filter(measured).all(|c| c.standing == Standing::Below))
        .filter(|r| others(r).iter().all(|(c, rc)| compared(c, rc).is_some()))
        .max_by(|a, b| {
            let first = |r: &Row| rows.first().is_some_and(|f| f.shape == r.shape);
            first(a).cmp(&first(b)).then(a.rate_mpps.total_cmp(&b.rate_mpps))
        });
    match below {
        Some(row) => {
            let each: Vec<String> = others(row)
                .iter()
                .filter_map(|(c, rc)| {
                    let (what, x, mine, theirs) = compared(c, rc)?;
                    let lower_is_better = what.starts_with("P99");
                    let (better, by) = if (x >= 1.0) == lower_is_better { (true, x) } else { (false, 1.0 / x) };
                    let word = match (lower_is_better, better) {
                        (true, true) => "lower",
                        (true, false) => "higher",
                        (false, true) => "higher",
                        (false, false) => "lower",
                    };
                    // Within 5%, a multiplier would say more than the figures do.
                    let how = if by < 1.05 { "about the same as".to_string() } else { format!("{} {word} than", times(by)) };
                    Some(format!("{reference}'s {what} is {how} {}'s ({} against {})", c.path, unit(&what, theirs), unit(&what, mine)))
                })
                .collect();
            parts.push(format!("below every path's knee (at <= {} Mpps, {}) {}", mpps(row.rate_mpps), row.shape, each.join("; ")));
        }
        None => parts.push("no rate measured was below every path's knee, so no ratio here compares the paths".into()),
    }
    // Past a knee: the lowest rate where another path is past its knee and the reference is not.
    let past = rows.iter().find_map(|row| {
        let (c, rc) = others(row).into_iter().find(|(c, rc)| c.standing == Standing::Past && rc.standing != Standing::Past)?;
        Some((row, c, rc))
    });
    if let Some((row, c, rc)) = past {
        let knee = c.knee_mpps.map_or("unknown".into(), mpps);
        let ratio = compared(&c, &rc).map(|(what, x, _, _)| {
            let by = if what.starts_with("P99") { x } else { 1.0 / x };
            format!("the {} in {what}", times(by))
        });
        parts.push(format!(
            "at {} Mpps ({}) {} is past its knee ({knee} Mpps) and {} is its saturation, not a speed-up",
            mpps(row.rate_mpps),
            row.shape,
            c.path,
            ratio.unwrap_or_else(|| "any ratio".into())
        ));
    }
    let unknown: Vec<String> = rows
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter_map(|c| match &c.standing {
            Standing::Unknown(why) if c.point.as_ref().is_some_and(|p| p.error.is_none()) => Some(format!("{} ({why})", c.path)),
            _ => None,
        })
        .fold(Vec::new(), |mut v, s| {
            if !v.contains(&s) {
                v.push(s);
            }
            v
        });
    if !unknown.is_empty() {
        parts.push(format!("where a knee is unknown the ratio is not read: {}", unknown.join(", ")));
    }
    if !failures.is_empty() {
        let mut names: Vec<&str> = failures.iter().map(|f| f.path.as_str()).collect();
        names.dedup();
        parts.push(format!("{} failed in {} run(s) (their figures are absent, the others' stand)", names.join(", "), failures.len()));
    }
    let mut s = parts.join("; ");
    if let Some(first) = s.get(0..1) {
        s = first.to_uppercase() + &s[1..];
    }
    s + "."
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(rate: f64, delivered: f64, p99: f64, round: u32) -> Point {
        Point {
            rate_mpps: rate,
            shape: "even".into(),
            round,
            sent_mpps: rate,
            delivered_mpps: Some(delivered),
            loss_pct: Some((rate - delivered).max(0.0) / rate * 100.0),
            latency: Some(Latency {
                samples: 1000,
                p50_us: p99 / 2.0,
                p99_us: p99,
                p99_9_us: p99 * 1.5,
                max_us: p99 * 3.0,
                clock: "round trip on blast's clock".into(),
            }),
            record: format!("r{round}.json"),
            ..Default::default()
        }
    }

    fn knee(at: f64) -> Knee {
        Knee {
            shape: "even".into(),
            knee_mpps: Some(at),
            pdr_mpps: Some(at),
            pdr: format!("{at} Mpps"),
            tolerance_pct: 1.0,
            ..Default::default()
        }
    }

    pub(crate) fn two() -> Vec<PathFigures> {
        vec![
            PathFigures {
                name: "dpdk".into(),
                points: vec![point(0.1, 0.1, 20.0, 1), point(0.8, 0.8, 22.0, 1), point(1.2, 1.2, 25.0, 1)],
                knees: vec![knee(2.0)],
            },
            PathFigures {
                name: "socket".into(),
                points: vec![point(0.1, 0.1, 26.0, 1), point(0.8, 0.8, 30.0, 1), point(1.2, 0.9, 1000.0, 1)],
                knees: vec![knee(0.9)],
            },
        ]
    }

    #[test]
    fn the_ratio_past_a_knee_is_marked_saturation_and_below_both_is_a_comparison() {
        let c = compare(&two());
        assert_eq!(c.reference, "dpdk", "the highest knee is the reference");
        assert_eq!(c.rows.len(), 3);
        let sock = |i: usize| c.rows[i].cells[1].clone();
        assert_eq!(sock(1).standing, Standing::Below);
        assert_eq!(sock(1).reading, Reading::BothBelowKnee);
        assert_eq!(sock(1).ratios.p99.map(|x| (x * 100.0).round() / 100.0), Some(1.36), "30 us over 22 us");
        assert_eq!(sock(2).standing, Standing::Past, "1.2 Mpps is above the socket path's 0.9");
        assert_eq!(sock(2).reading, Reading::PastKnee("socket".into()));
        assert!(sock(2).reading.text().contains("saturation, not a speed-up"), "{}", sock(2).reading.text());
        assert_eq!(sock(1).ratios.text(), "Mpps 1.0x, P50 1.4x, P99 1.4x, P99.9 1.4x, max 1.4x", "no CPU figure: no CPU ratio");
        assert_eq!(c.rows[2].cells[0].reading, Reading::Reference);
        assert_eq!(
            c.sentence,
            "Below every path's knee (at <= 0.800 Mpps, even) dpdk's P99 (round trip on blast's clock) is 1.4x lower than socket's \
             (22 us against 30 us); at 1.20 Mpps (even) socket is past its knee (0.900 Mpps) and the 40x in P99 (round trip on \
             blast's clock) is its saturation, not a speed-up."
        );
    }

    #[test]
    fn figures_within_five_percent_are_said_to_be_about_the_same() {
        let mut p = two();
        p[1].points[1] = point(0.8, 0.8, 22.8, 1);
        let c = compare(&p);
        assert!(c.sentence.starts_with("Below every path's knee (at <= 0.800 Mpps, even) dpdk's P99 (round trip on blast's clock) is about the same as socket's (22 us against 23 us)"), "{}", c.sentence);
    }

    #[test]
    fn a_knee_that_is_only_a_lower_bound_or_missing_makes_the_reading_unknown() {
        let mut p = two();
        p[1].knees[0].at_least = true;
        let c = compare(&p);
        assert!(matches!(&c.rows[2].cells[1].standing, Standing::Unknown(w) if w.contains("at least 0.900")), "{:?}", c.rows[2].cells[1]);
        assert!(matches!(c.rows[2].cells[1].reading, Reading::Unknown(_)));
        assert_eq!(c.rows[1].cells[1].reading, Reading::BothBelowKnee, "a rate under a lower bound is below");
        assert!(c.sentence.contains("where a knee is unknown the ratio is not read: socket"), "{}", c.sentence);
        p[1].knees[0] = Knee { shape: "even".into(), pdr: "none found".into(), fails_from_mpps: Some(0.5), ..Default::default() };
        let c = compare(&p);
        assert_eq!(
            c.rows[0].cells[1].reading,
            Reading::Unknown("socket: no knee found (none found)".into()),
            "under every failed trial: unknown"
        );
        assert_eq!(c.rows[1].cells[1].standing, Standing::Past, "0.8 Mpps is above a rate that failed with nothing passing");
        p[1].knees.clear();
        let c = compare(&p);
        assert!(c.rows.iter().all(|r| matches!(r.cells[1].reading, Reading::Unknown(_))));
        assert!(c.sentence.starts_with("No rate measured was below every path's knee"), "{}", c.sentence);
    }

    #[test]
    fn a_failed_path_is_named_and_the_others_keep_their_figures() {
        let mut p = two();
        p.push(PathFigures {
            name: "af_xdp".into(),
            points: vec![Point {
                rate_mpps: 0.1,
                shape: "even".into(),
                round: 1,
                error: Some("drop refused: gone".into()),
                ..Default::default()
            }],
            knees: vec![Knee { shape: "even".into(), error: Some("no peer".into()), ..Default::default() }],
        });
        let c = compare(&p);
        assert_eq!(c.failures.len(), 2);
        assert_eq!(c.failures[0].path, "af_xdp");
        assert!(matches!(&c.rows[0].cells[2].standing, Standing::Unknown(w) if w.contains("the run failed: drop refused")));
        assert_eq!(c.rows[0].cells[2].ratios, Ratios::default(), "no ratio for a failed run");
        assert_eq!(c.rows[1].cells[1].reading, Reading::BothBelowKnee, "the others stand");
        assert!(c.sentence.ends_with("af_xdp failed in 2 run(s) (their figures are absent, the others' stand)."), "{}", c.sentence);
        assert!(
            c.sentence.starts_with("Below every path's knee (at <= 0.800 Mpps, even) dpdk's P99"),
            "a failed path is not compared: {}",
            c.sentence
        );
    }

    #[test]
    fn rounds_give_the_median_by_delivered_rate_and_failed_rounds_do_not_count() {
        let mut p = two();
        p[0].points = vec![point(0.1, 0.09, 20.0, 1), point(0.1, 0.1, 30.0, 2), point(0.1, 0.08, 40.0, 3)];
        p[0].points.push(Point { rate_mpps: 0.1, shape: "even".into(), round: 4, error: Some("x".into()), ..Default::default() });
        let c = compare(&p);
        let cell = &c.rows[0].cells[0];
        assert_eq!((cell.rounds, cell.point.as_ref().unwrap().round), (4, 1), "0.08, 0.09, 0.10: the middle is round 1");
    }

    #[test]
    fn ratios_read_the_same_either_side_of_a_rounding_edge() {
        assert_eq!(
            (times(0.9999), times(1.001), times(0.83), times(9.96), times(40.2)),
            ("1.0x".into(), "1.0x".into(), "0.83x".into(), "10x".into(), "40x".into())
        );
    }

    #[test]
    fn cpu_per_million_needs_both_ends() {
        let side = |s: f64, known: bool| SideCpu { user_seconds: s, known, counted: "x".into(), ..Default::default() };
        assert_eq!(CpuCost::new(side(1.0, true), side(0.5, true), 3_000_000).seconds_per_million, Some(0.5));
        assert_eq!(CpuCost::new(side(1.0, true), side(0.5, false), 3_000_000).seconds_per_million, None);
        assert_eq!(CpuCost::new(side(1.0, true), side(0.5, true), 0).seconds_per_million, None);
    }
}
