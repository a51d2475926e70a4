//! A `blast paths` comparison: its headline is its sentence; its section
//! holds the plan, each path's knees, the table with every cell's
//! standing against its path's knee and its ratio's reading, and the runs
//! that failed. Every figure is the comparison's own field (the same
//! figures `blast paths` read from each run's record and printed).

use paths::{knee_text, mpps, times, Standing};
use records::paths::PathsBody;

use crate::doc::{Block, Cell, Headline, Section, Table};
use crate::fmt::{opt, us};
use crate::record::Record;

pub fn headline(number: usize, r: &Record, b: &PathsBody) -> Headline {
    Headline { runs: format!("run {number} {}", r.file_name()), text: b.comparison.sentence.clone() }
}

pub fn section(number: usize, r: &Record, b: &PathsBody) -> Section {
    let mut s = Section::new(2, format!("Run {number}: paths compared — {}", r.file_name()));
    let c = &b.comparison;
    s.push(Block::Para(format!(
        "The same plan over {} paths, interleaved (each table cell ran every path before the next, the order turned from cell to cell): \
         rates {} Mpps, shapes {}, {} round(s), every run with `{}`. Ratios are against {} (the highest knee); a ratio where either \
         path is past its knee is that path's saturation, not a speed-up. The runs' own records are in {}.",
        b.paths.len(),
        b.rates_mpps.iter().map(|r| mpps(*r)).collect::<Vec<_>>().join(", "),
        b.shapes.join(", "),
        b.rounds,
        b.common_args.join(" "),
        c.reference,
        b.directory
    )));
    s.push(Block::Facts(
        b.paths
            .iter()
            .map(|p| {
                let drop =
                    p.drop_command.as_ref().map_or(format!("drop serving at {}", p.peer), |d| format!("drop started each run by `{d}`"));
                (p.name.clone(), format!("blast {}; {drop}", p.blast_args.join(" ")))
            })
            .collect(),
    ));
    let mut knees = Table::new("Each path's knee search (the knee is the PDR)", &["path", "shape", "NDR", "PDR", "knee Mpps"]);
    for f in &b.figures {
        for k in &f.knees {
            let knee = match (&k.error, k.knee_mpps) {
                (Some(e), _) => Cell::noted("unknown", format!("the search failed: {e}")),
                (None, Some(v)) if k.at_least => Cell::noted(format!("at least {}", mpps(v)), "the search found no upper bound"),
                (None, Some(v)) => Cell::new(mpps(v)),
                (None, None) => Cell::new("none found"),
            };
            knees.row(vec![
                Cell::new(f.name.clone()),
                Cell::new(k.shape.clone()),
                Cell::new(k.ndr.clone()),
                Cell::new(k.pdr.clone()),
                knee,
            ]);
        }
    }
    s.push(Block::Table(knees));
    let mut t = Table::new(
        "Every path at every rate: receiver-side Mpps, exact loss, latency percentiles, both ends' CPU seconds per million frames delivered",
        &[
            "rate Mpps", "shape", "path", "delivered Mpps", "loss %", "P50 us", "P99 us", "P99.9 us", "max us", "CPU s per M frames", "knee",
            "P99 ratio", "reading", "every ratio",
        ],
    );
    for row in &c.rows {
        for cell in &row.cells {
            let p = cell.point.as_ref().filter(|p| p.error.is_none());
            let lat = |f: fn(&paths::Latency) -> f64| Cell::new(opt(p.and_then(|p| p.latency.as_ref()).map(f), us));
            let standing = match &cell.standing {
                Standing::Below => Cell::new(format!("below ({})", knee_text(cell))),
                Standing::Past => Cell::new(format!("past ({})", knee_text(cell))),
                Standing::Unknown(why) => Cell::noted("unknown", why.clone()),
            };
            let reading = match cell.point.as_ref().and_then(|p| p.error.as_ref()) {
                Some(e) => Cell::noted("failed", e.clone()),
                None => Cell::new(cell.reading.text()),
            };
            let cpu = p.and_then(|p| p.cpu.as_ref());
            let cpu_cell = match cpu.and_then(|c| c.seconds_per_million) {
                Some(v) => Cell::noted(
                    format!("{v:.2}"),
                    format!("sender: {}; receiver: {}", cpu.unwrap().sender.counted, cpu.unwrap().receiver.counted),
                ),
                None => Cell::new("-"),
            };
            t.row(vec![
                Cell::new(mpps(row.rate_mpps)),
                Cell::new(row.shape.clone()),
                Cell::new(cell.path.clone()),
                match p {
                    Some(p) => {
                        Cell::noted(opt(p.delivered_mpps, mpps), format!("limit: {}", p.limit.clone().unwrap_or_else(|| "unknown".into())))
                    }
                    None => Cell::new("-"),
                },
                Cell::new(opt(p.and_then(|p| p.loss_pct), |v| format!("{v:.3}"))),
                lat(|l| l.p50_us),
                lat(|l| l.p99_us),
                lat(|l| l.p99_9_us),
                lat(|l| l.max_us),
                cpu_cell,
                standing,
                Cell::new(opt(cell.ratios.p99, times)),
                reading,
                Cell::new(if cell.path == c.reference { "-".to_string() } else { cell.ratios.text() }),
            ]);
        }
    }
    s.push(Block::Table(t));
    for shape in &b.shapes {
        match paths::plot::render_latency_svg(c, shape) {
            Ok(Some(svg)) => s.push(Block::Plot {
                caption: format!(
                    "P99 latency against offered rate per path at {shape} (log-log); a dashed line is a path's knee, a hollow point a rate past it"
                ),
                svg,
            }),
            Ok(None) => s.push(Block::Para(format!("No latency at {shape} to plot (run with --reflect)."))),
            Err(e) => s.push(Block::Warnings(vec![format!("the latency plot at {shape} could not be drawn: {e}")])),
        };
    }
    if let Some(clock) =
        c.rows.iter().flat_map(|r| r.cells.iter()).find_map(|c| c.point.as_ref()?.latency.as_ref().map(|l| l.clock.clone()))
    {
        s.push(Block::Para(format!("Latency: {clock}.")));
    }
    if !c.failures.is_empty() {
        s.push(Block::Warnings(c.failures.iter().map(|f| format!("{} failed: {}: {}", f.path, f.what, f.error)).collect()));
    }
    s.push(Block::Para("Sentences to paste (every qualifier included):".into()));
    s.push(Block::Sentences(vec![c.sentence.clone()]));
    s
}
