//! SVG charts of a ladder. Every point is filled with the colour of its
//! step's verdict class (the typed verdict's first limit, the tool's main
//! output), keyed in a legend beside each chart, never over the data; its
//! shape and outline colour say which series (frame size) it belongs to.
//!
//! - Received Mpps against queues on a log2 axis (ladders double), one
//!   line per frame size (and per rate and shape when those vary), each
//!   with its own marker shape and colour; where there are several, each
//!   series' points are set a few pixels apart sideways at each queue count
//!   (the legend says so), so a one-queue ladder of three sizes shows three
//!   points, not one. Min-to-max bars under --repeat, and the line rate of
//!   each size when the published bandwidth is known.
//! - Received Gb/s of frames against frame size (each size's best queue
//!   count) with the published bandwidth and the line-rate curve.
//! - When probes were timed, the round trip's P50, P99 and P99.9 against
//!   the offered load.
//!
//! A ladder with no measured step is not drawn: [`Plot::Nothing`] says why.
//! Each picture comes with the caption that says what it shows.

use plotters::prelude::*;

use limits::{LimitKind, VerdictClass};

use crate::{Aggregate, StepRecord};

pub use series::chart::PlotError;
use series::chart::{draw_marker, err, Area, Legend, Mark, Shape};

/// What a ladder's picture needs beside its aggregates.
pub struct LadderPlot<'a> {
    /// The figures are the receiver's (else the sender's, and the labels say so).
    pub receiver: bool,
    pub title: &'a str,
    /// The interface's published bandwidth (Gb/s on the wire), when given.
    pub published_gbps: Option<f64>,
}

/// A drawn chart and the caption that says what it shows.
#[derive(Debug, Clone)]
pub struct Picture {
    pub svg: String,
    pub caption: String,
}

/// A chart, or why there is none (it would be an empty frame).
#[derive(Debug, Clone)]
pub enum Plot {
    Drawn(Picture),
    Nothing(String),
}

impl Plot {
    /// The SVG to write to a file: the chart, or two lines that say why there is none.
    pub fn into_svg(self, title: &str) -> String {
        match self {
            Plot::Drawn(p) => p.svg,
            Plot::Nothing(why) => series::chart::note_svg(title, &format!("no plot: {why}")),
        }
    }
}

/// One timed load: the round trip's percentiles at an offered rate.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyPoint {
    pub offered_mpps: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    /// The series it belongs to (the arrival shape, with the size when sizes vary).
    pub series: String,
}

impl LatencyPoint {
    /// The paced steps whose probes were timed.
    pub fn from_records(records: &[StepRecord]) -> Vec<LatencyPoint> {
        let sized = records.iter().any(|r| r.size != records[0].size);
        records
            .iter()
            .filter(|r| r.error.is_none())
            .filter_map(|r| {
                let l = r.latency.filter(|l| l.count > 0)?;
                Some(LatencyPoint {
                    offered_mpps: r.offered_mpps?,
                    p50_us: l.p50_us,
                    p99_us: l.p99_us,
                    p99_9_us: l.p99_9_us,
                    series: if sized { format!("{}, {} B", r.shape, r.size) } else { r.shape.clone() },
                })
            })
            .collect()
    }
}

/// A verdict class's colour, the same in every chart (bold; the series'
/// colours are muted, so a point's fill reads as its verdict). The
/// classes without a limit are greys and black, told apart in the legend.
pub fn verdict_color(class: VerdictClass) -> RGBColor {
    match class {
        VerdictClass::Limit(kind) => limit_color(kind),
        VerdictClass::Unknown => RGBColor(64, 64, 64),
        VerdictClass::NotJudged => RGBColor(200, 200, 200),
        VerdictClass::Mixed => RGBColor(0, 0, 0),
    }
}

fn limit_color(kind: LimitKind) -> RGBColor {
    match kind {
        LimitKind::None => RGBColor(44, 160, 44),
        LimitKind::Sender => RGBColor(255, 127, 14),
        LimitKind::Receiver => RGBColor(214, 39, 40),
        LimitKind::Network => RGBColor(148, 103, 189),
        LimitKind::Path => RGBColor(140, 86, 75),
        LimitKind::PpsAllowance => RGBColor(31, 119, 180),
        LimitKind::BwOutAllowance => RGBColor(86, 180, 233),
        LimitKind::BwInAllowance => RGBColor(0, 0, 128),
        LimitKind::ConntrackAllowance => RGBColor(204, 121, 167),
        LimitKind::LinklocalAllowance => RGBColor(230, 159, 0),
        LimitKind::Other => RGBColor(127, 127, 127),
    }
}

/// A verdict class's words in a legend.
pub fn verdict_words(class: VerdictClass) -> String {
    match class {
        VerdictClass::NotJudged => "no verdict (n/a)".to_string(),
        VerdictClass::Mixed => "limit: mixed (runs differ)".to_string(),
        c => format!("limit: {c}"),
    }
}

pub use series::chart::series_color;

/// The `i`th series' marker: its shape and outline colour (five shapes,
/// six colours: thirty series before a pair repeats).
pub fn series_marker(i: usize) -> (Shape, RGBColor) {
    (Shape::nth(i), series_color(i))
}

/// Marked lines closer than this many pixels are drawn as one.
pub const JOIN_PX: i32 = 8;
/// A line that stands for several marks.
pub const JOINED_COLOR: RGBColor = RGBColor(0, 0, 0);

/// `marks` in order of their value, in groups: each mark within JOIN_PX
/// pixels (`px` maps a value to its pixel) of its group's first joins it.
pub(crate) fn join_within<T>(mut marks: Vec<T>, value: impl Fn(&T) -> f64, px: impl Fn(f64) -> i32) -> Vec<Vec<T>> {
    marks.sort_by(|a, b| value(a).total_cmp(&value(b)));
    let mut groups: Vec<Vec<T>> = Vec::new();
    for m in marks {
        match groups.last_mut() {
            Some(g) if (px(value(&m)) - px(value(&g[0]))).abs() < JOIN_PX => g.push(m),
            _ => groups.push(vec![m]),
        }
    }
    groups
}

/// The most characters a legend line holds in its 200 px (a longer one
/// would run past the panel, or off a one-panel picture).
const LEGEND_CHARS: usize = 26;

/// A legend entry for one marked line: `label` when it fits, else each of
/// `parts` on a line of its own under the same key, and a note that they
/// are one line (marks joined by [`join_within`]).
pub(crate) fn legend_line(legend: &mut Legend, color: RGBColor, label: String, parts: Vec<String>) {
    if parts.len() < 2 || label.chars().count() <= LEGEND_CHARS {
        legend.push(Mark::Dashed(color), label);
        return;
    }
    for p in parts {
        legend.push(Mark::Dashed(color), p);
    }
    legend.push(Mark::Note, format!("(one line: within {JOIN_PX} px)"));
}

/// A series' point's half-size in pixels.
const POINT_PX: i32 = 6;
/// How far apart sideways, in pixels, the series' points are set at one queue count.
const DODGE_PX: f64 = 14.0;

/// The verdicts' classes into `legend`, each once, in the order they first
/// appear, under a line that says what the fill means.
pub(crate) fn legend_verdicts(legend: &mut Legend, classes: impl IntoIterator<Item = VerdictClass>, what: &str) {
    let mut seen: Vec<VerdictClass> = Vec::new();
    for class in classes {
        if !seen.contains(&class) {
            if seen.is_empty() {
                legend.push(Mark::Note, format!("fill: {what}'s verdict"));
            }
            legend.push(Mark::Dot(verdict_color(class)), verdict_words(class));
            seen.push(class);
        }
    }
}

/// What the points' fill says, for a caption: every point's verdict, or
/// how many carry none.
pub(crate) fn verdict_phrase(classes: &[VerdictClass], point: &str) -> String {
    let unjudged = classes.iter().filter(|c| **c == VerdictClass::NotJudged).count();
    match unjudged {
        0 => format!("each {point} filled with its verdict's colour (legend)"),
        n if n == classes.len() => format!("no {point} carries a verdict: all are light grey"),
        n => format!("each {point} filled with its verdict's colour (legend; {n} of {} without a verdict, light grey)", classes.len()),
    }
}

/// A panel: the chart's area and its legend's, side by side.
pub(crate) fn panel<'a>(area: &Area<'a>) -> (Area<'a>, Area<'a>) {
    series::chart::panel(area, 200)
}

pub(crate) type Linear<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// A chart with linear axes on `area`, its mesh drawn and described.
pub(crate) fn linear_chart<'a, 'b>(
    area: &'a Area<'b>,
    caption: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    x_desc: &str,
    y_desc: &str,
) -> Result<Linear<'a, 'b>, PlotError> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw().map_err(err)?;
    Ok(chart)
}

/// Frames per second (millions) that fill `gbps` on the wire with `size` B
/// frames (FCS included; 20 B of preamble and gap each).
pub fn line_rate_mpps(gbps: f64, size: u32) -> f64 {
    gbps * 1e3 / (f64::from(size + 20) * 8.0)
}

/// The ladder's picture: two panels, three when probes were timed; nothing
/// when no step was measured.
pub fn render_svg(aggs: &[Aggregate], opts: &LadderPlot, latency: &[LatencyPoint]) -> Result<Plot, PlotError> {
    if aggs.is_empty() {
        return Ok(Plot::Nothing("no step was measured (none ran, or every step failed)".into()));
    }
    let mut svg = String::new();
    let panels = if latency.is_empty() { 2 } else { 3 };
    {
        let root = SVGBackend::with_string(&mut svg, (700 * panels, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(opts.title, ("sans-serif", 18)).map_err(err)?;
        let areas = root.split_evenly((1, panels as usize));
        mpps_against_queues(&areas[0], aggs, opts)?;
        gbps_against_size(&areas[1], aggs, opts)?;
        if let Some(a) = areas.get(2) {
            latency_against_load(a, latency)?;
        }
        root.present().map_err(err)?;
    }
    Ok(Plot::Drawn(Picture { svg, caption: ladder_caption(aggs, opts.receiver, !latency.is_empty()) }))
}

/// What the ladder's picture shows, in the words of its legend.
fn ladder_caption(aggs: &[Aggregate], receiver: bool, latency: bool) -> String {
    let side = if receiver { "received (drop)" } else { "sent (blast: no receiver)" };
    let all = series_of(aggs);
    let series = match all.len() {
        1 => "one series".to_string(),
        n => format!("{n} series ({}), each its own marker shape and colour, set side by side at each queue count", what_varies(&all)),
    };
    let classes: Vec<VerdictClass> = aggs.iter().map(|a| a.class).collect();
    let latency = if latency { "; and the round trip's P50, P99 and P99.9 against offered load" } else { "" };
    format!(
        "Mpps {side} against queues ({series}), and Gb/s against frame size at each size's best queue count; {}{latency}",
        verdict_phrase(&classes, "point")
    )
}

fn side(receiver: bool) -> &'static str {
    if receiver {
        "received"
    } else {
        "sent (sender-side)"
    }
}

/// The log2 of a queue count, the first panel's x.
fn log2(q: u16) -> f64 {
    f64::from(q.max(1)).log2()
}

fn mpps_against_queues(area: &Area, aggs: &[Aggregate], opts: &LadderPlot) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area);
    let side = side(opts.receiver);
    let series = series_of(aggs);
    let (lo, hi) = aggs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), a| (lo.min(log2(a.queues)), hi.max(log2(a.queues))));
    let (lo, hi) = (lo.floor() - 0.35, hi.ceil() + 0.35);
    let data_max = aggs.iter().map(|a| a.mpps.max).fold(0.0, f64::max).max(1e-3);
    let line_rates = line_rates_near(opts.published_gbps, &series, data_max);
    let y_max = line_rates.iter().map(|l| l.1).fold(data_max, f64::max) * 1.12;
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(format!("{side} Mpps against queues"), ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(lo..hi, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(((hi - lo) * 2.0).ceil() as usize + 1)
        .x_label_formatter(&|x| if (x - x.round()).abs() < 1e-6 { format!("{}", 2f64.powi(x.round() as i32)) } else { String::new() })
        .x_desc("queues (log2 scale)")
        .y_desc(format!("{side} Mpps (million frames/s)"))
        .draw()
        .map_err(err)?;
    let dodge = dodge(&chart, series.len(), hi - lo);
    let mut legend = Legend::new("series");
    for (i, key) in series.iter().enumerate() {
        let pts: Vec<&Aggregate> = points_of(aggs, key);
        draw_series_points(&mut chart, &pts, i, dodge(i))?;
        legend.push(Mark::Series(series_color(i), Shape::nth(i)), series_label(key, series.iter().any(|s| !s.same_traffic(series[0]))));
    }
    line_rate_lines(&mut chart, &mut legend, &line_rates, &series, lo..hi)?;
    if series.len() > 1 {
        legend.push(Mark::Note, "(series set side by side");
        legend.push(Mark::Note, "at each queue count)");
    }
    if aggs.iter().any(|a| a.runs > 1) {
        legend.push(Mark::Bar(BLACK), "min to max (--repeat)");
    }
    if let Some(g) = opts.published_gbps.filter(|_| line_rates.len() < series.len()) {
        legend.push(Mark::Note, format!("(line rate at {g} Gb/s off scale)"));
    }
    legend_verdicts(&mut legend, aggs.iter().map(|a| a.class), "the step");
    legend.draw(&legend_area)
}

/// Each series' sideways offset on the log2 axis: DODGE_PX apart, centred
/// on the queue count, at most 0.6 of a doubling in all.
fn dodge(chart: &Linear, n: usize, span: f64) -> impl Fn(usize) -> f64 {
    let width = f64::from(chart.plotting_area().dim_in_pixel().0.max(1));
    let step = if n > 1 { (span / width * DODGE_PX).min(0.6 / (n - 1) as f64) } else { 0.0 };
    move |i| (i as f64 - (n as f64 - 1.0) / 2.0) * step
}

/// A series' aggregates, by queue count.
fn points_of<'a>(aggs: &'a [Aggregate], key: &Aggregate) -> Vec<&'a Aggregate> {
    let mut pts: Vec<&Aggregate> = aggs.iter().filter(|a| a.size == key.size && a.same_traffic(key)).collect();
    pts.sort_by_key(|a| a.queues);
    pts
}

/// The `i`th series' line, min-to-max bars and points, `dx` to the side.
fn draw_series_points(chart: &mut Linear, pts: &[&Aggregate], i: usize, dx: f64) -> Result<(), PlotError> {
    let (shape, color) = series_marker(i);
    let x = |a: &Aggregate| log2(a.queues) + dx;
    chart.draw_series(LineSeries::new(pts.iter().map(|a| (x(a), a.mpps.median)), color.stroke_width(2))).map_err(err)?;
    for a in pts.iter().filter(|a| a.runs > 1) {
        let bar = PathElement::new(vec![(x(a), a.mpps.min), (x(a), a.mpps.max)], color.stroke_width(1));
        chart.draw_series(std::iter::once(bar)).map_err(err)?;
    }
    for a in pts {
        draw_marker(chart.plotting_area(), (x(a), a.mpps.median), shape, POINT_PX, (verdict_color(a.class), color))?;
    }
    Ok(())
}

/// One line per frame size, and per rate and shape when those vary: the
/// first aggregate of each, by size.
fn series_of(aggs: &[Aggregate]) -> Vec<&Aggregate> {
    let mut series: Vec<&Aggregate> = Vec::new();
    for a in aggs {
        if !series.iter().any(|s| s.size == a.size && s.same_traffic(a)) {
            series.push(a);
        }
    }
    series.sort_by_key(|s| s.size);
    series
}

/// What tells the series apart, in words.
fn what_varies(series: &[&Aggregate]) -> &'static str {
    let sizes = series.iter().any(|s| s.size != series[0].size);
    let traffic = series.iter().any(|s| !s.same_traffic(series[0]));
    match (sizes, traffic) {
        (true, false) => "frame sizes",
        (false, true) => "rates and arrival shapes",
        _ => "frame sizes, rates and arrival shapes",
    }
}

/// Which series `a` belongs to.
fn series_index(series: &[&Aggregate], a: &Aggregate) -> usize {
    series.iter().position(|s| s.size == a.size && s.same_traffic(a)).unwrap_or(0)
}

/// Each size's line rate at `published_gbps`, where it is within 3x of
/// the data (higher, it would flatten the data).
fn line_rates_near(published_gbps: Option<f64>, series: &[&Aggregate], data_max: f64) -> Vec<(u32, f64)> {
    let Some(g) = published_gbps else { return Vec::new() };
    let mut sizes: Vec<u32> = series.iter().map(|s| s.size).collect();
    sizes.dedup();
    sizes.into_iter().map(|s| (s, line_rate_mpps(g, s))).filter(|&(_, m)| m <= data_max * 3.0).collect()
}

/// The sizes' line rates as dashed lines in their series' colours; rates
/// within JOIN_PX of each other as one black line, its legend naming each.
fn line_rate_lines(
    chart: &mut Linear,
    legend: &mut Legend,
    rates: &[(u32, f64)],
    series: &[&Aggregate],
    x: std::ops::Range<f64>,
) -> Result<(), PlotError> {
    for g in join_within(rates.to_vec(), |r| r.1, |y| chart.backend_coord(&(x.start, y)).1) {
        let mut by_size = g.clone();
        by_size.sort_by_key(|r| r.0);
        let color = match g.as_slice() {
            [(size, _)] => series_color(series.iter().position(|s| s.size == *size).unwrap_or(0)),
            _ => JOINED_COLOR,
        };
        let each: Vec<String> = by_size.iter().map(|(size, m)| format!("{size} B: {m:.2}")).collect();
        let parts = by_size.iter().map(|(size, m)| format!("line rate {size} B: {m:.2} Mpps")).collect();
        let m = g[0].1;
        chart.draw_series(DashedLineSeries::new(vec![(x.start, m), (x.end, m)], 6, 4, color.stroke_width(1))).map_err(err)?;
        legend_line(legend, color, format!("line rate {} Mpps", each.join(", ")), parts);
    }
    Ok(())
}

/// A series' name in the legend: its size, with its rate and shape when those vary.
fn series_label(key: &Aggregate, traffic_varies: bool) -> String {
    match (traffic_varies, key.offered_mpps) {
        (true, Some(r)) => format!("{} B, {r:.3} Mpps {}", key.size, key.shape),
        (true, None) => format!("{} B, unpaced", key.size),
        (false, _) => format!("{} B frames", key.size),
    }
}

/// Each size's best queue count (by median Gb/s), by size.
fn best_per_size(aggs: &[Aggregate]) -> Vec<&Aggregate> {
    let mut sizes: Vec<u32> = aggs.iter().map(|a| a.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .iter()
        .filter_map(|&s| aggs.iter().filter(|a| a.size == s).max_by(|a, b| a.frame_gbps.median.total_cmp(&b.frame_gbps.median)))
        .collect()
}

/// The connecting line of the Gb/s panel: neutral, not a series' colour.
const ACROSS_SIZES: RGBColor = RGBColor(70, 70, 70);

fn gbps_against_size(area: &Area, aggs: &[Aggregate], opts: &LadderPlot) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area);
    let side = side(opts.receiver);
    let series = series_of(aggs);
    let best = best_per_size(aggs);
    let max_size = best.last().map_or(64, |a| a.size);
    let data_max = best.iter().map(|a| a.frame_gbps.max).fold(0.0, f64::max).max(1e-3);
    let y_max = opts.published_gbps.map_or(data_max, |g| g.max(data_max)) * 1.12;
    let x_max = f64::from(max_size) * 1.06 + 1.0;
    let x_desc = "frame size (bytes, FCS included)";
    let caption = format!("{side} Gb/s against frame size");
    let mut chart =
        linear_chart(&chart_area, &caption, 0.0..x_max, 0.0..y_max, x_desc, &format!("{side} Gb/s of frames (best queue count)"))?;
    let mut legend = Legend::new("series");
    let pts: Vec<(f64, f64)> = best.iter().map(|a| (f64::from(a.size), a.frame_gbps.median)).collect();
    chart.draw_series(LineSeries::new(pts, ACROSS_SIZES.stroke_width(1))).map_err(err)?;
    legend.push(Mark::Thin(ACROSS_SIZES), format!("{side} Gb/s"));
    for a in &best {
        let (shape, color) = series_marker(series_index(&series, a));
        let x = f64::from(a.size);
        if a.runs > 1 {
            let bar = PathElement::new(vec![(x, a.frame_gbps.min), (x, a.frame_gbps.max)], color.stroke_width(1));
            chart.draw_series(std::iter::once(bar)).map_err(err)?;
        }
        draw_marker(chart.plotting_area(), (x, a.frame_gbps.median), shape, POINT_PX, (verdict_color(a.class), color))?;
        legend.push(Mark::Series(color, shape), format!("{} B: {} queue(s)", a.size, a.queues));
    }
    if let Some(g) = opts.published_gbps {
        published_lines(&mut chart, &mut legend, g, max_size, x_max)?;
    }
    legend_verdicts(&mut legend, best.iter().map(|a| a.class), "the step");
    legend.draw(&legend_area)
}

/// The published bandwidth and the line-rate curve (Gb/s of frames at line rate).
fn published_lines(chart: &mut Linear, legend: &mut Legend, g: f64, max_size: u32, x_max: f64) -> Result<(), PlotError> {
    let gray = RGBColor(90, 90, 90);
    chart.draw_series(DashedLineSeries::new(vec![(0.0, g), (x_max, g)], 8, 4, gray.stroke_width(1))).map_err(err)?;
    legend.push(Mark::Dashed(gray), format!("published {g} Gb/s (wire)"));
    // At line rate, frames carry size / (size + 20) of the wire's bits.
    let curve: Vec<(f64, f64)> = (64..=max_size.max(64)).step_by(8).map(|s| (f64::from(s), g * f64::from(s) / f64::from(s + 20))).collect();
    let red = RGBColor(214, 39, 40);
    chart.draw_series(DashedLineSeries::new(curve, 4, 3, red.stroke_width(1))).map_err(err)?;
    legend.push(Mark::Dashed(red), "line rate, Gb/s of frames");
    Ok(())
}

/// Round-trip P50, P99 and P99.9 (log scale) against the offered load.
pub(crate) fn latency_against_load(area: &Area, points: &[LatencyPoint]) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area);
    let x_max = points.iter().map(|p| p.offered_mpps).fold(0.0, f64::max).max(1e-3) * 1.1;
    // Whole decades, so the axis is labelled at least at each power of ten.
    let lo = points.iter().map(|p| p.p50_us).fold(f64::MAX, f64::min).max(0.01);
    let hi = points.iter().map(|p| p.p99_9_us).fold(0.0, f64::max).max(lo * 2.0);
    let (y_lo, y_hi) = (10f64.powf(lo.log10().floor()), 10f64.powf((hi * 1.2).log10().ceil()));
    let mut chart = ChartBuilder::on(&chart_area)
        .caption("round trip against offered load", ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, (y_lo..y_hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .y_labels(12)
        .y_label_formatter(&|y| if *y >= 10.0 { format!("{y:.0}") } else { format!("{y:.1}") })
        .x_desc("offered Mpps")
        .y_desc("round trip, microseconds (log scale)")
        .draw()
        .map_err(err)?;
    let mut series: Vec<&str> = Vec::new();
    for p in points {
        if !series.contains(&p.series.as_str()) {
            series.push(&p.series);
        }
    }
    let mut legend = Legend::new("percentiles");
    for (i, s) in series.iter().enumerate() {
        let color = series_color(i);
        let mut pts: Vec<&LatencyPoint> = points.iter().filter(|p| p.series == *s).collect();
        pts.sort_by(|a, b| a.offered_mpps.total_cmp(&b.offered_mpps));
        let at = |f: fn(&LatencyPoint) -> f64| pts.iter().map(|p| (p.offered_mpps, f(p))).collect::<Vec<_>>();
        chart.draw_series(LineSeries::new(at(|p| p.p50_us), color.stroke_width(2))).map_err(err)?;
        chart.draw_series(DashedLineSeries::new(at(|p| p.p99_us), 6, 3, color.stroke_width(2))).map_err(err)?;
        chart.draw_series(LineSeries::new(at(|p| p.p99_9_us), color.stroke_width(1))).map_err(err)?;
        for f in [(|p: &LatencyPoint| p.p50_us) as fn(&LatencyPoint) -> f64, |p| p.p99_us, |p| p.p99_9_us] {
            chart.draw_series(at(f).into_iter().map(|xy| Circle::new(xy, 3, color.filled()))).map_err(err)?;
        }
        legend.push(Mark::Line(color), format!("P50, {s}"));
        legend.push(Mark::Dashed(color), format!("P99, {s}"));
        legend.push(Mark::Thin(color), format!("P99.9 (thin), {s}"));
    }
    legend.draw(&legend_area)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawn::{drawn_points, drawn_texts, DrawnPoint};
    use crate::Spread;
    use limits::LimitKind::{BwOutAllowance, PpsAllowance, Receiver, Sender};

    const NONE: VerdictClass = VerdictClass::Limit(LimitKind::None);

    fn class(kind: LimitKind) -> VerdictClass {
        VerdictClass::Limit(kind)
    }

    fn agg(q: u16, size: u32, mpps: f64, class: VerdictClass) -> Aggregate {
        let s = |v: f64| Spread { min: v, median: v, max: v };
        Aggregate {
            queues: q,
            size,
            offered_mpps: None,
            shape: "open".into(),
            runs: 1,
            mpps: s(mpps),
            frame_gbps: s(mpps * f64::from(size) * 8e-3),
            wire_gbps: s(0.0),
            sent_mpps: s(mpps),
            limit: class.as_str().into(),
            class,
        }
    }

    /// A real ladder's typed steps: blast on net_null, sender-side, one
    /// queue, 64 and 128 B frames (the report's test record).
    pub(crate) fn real_ladder_steps() -> Vec<StepRecord> {
        let v: serde_json::Value = serde_json::from_str(include_str!("../../report/testdata/ladder.json")).unwrap();
        serde_json::from_value(v["steps"].clone()).expect("the steps read back typed")
    }

    fn drawn(plot: Plot) -> Picture {
        match plot {
            Plot::Drawn(p) => p,
            Plot::Nothing(why) => panic!("no plot: {why}"),
        }
    }

    fn texts(svg: &str) -> Vec<String> {
        drawn_texts(svg).unwrap().into_iter().map(|t| t.text).collect()
    }

    /// The ladder drawn from `steps` as blast and the report draw it.
    fn ladder_of(steps: &[StepRecord]) -> (Vec<Aggregate>, Picture) {
        let mut aggs = Aggregate::from_records(steps);
        aggs.sort_by_key(|a| (a.size, a.queues));
        let opts = LadderPlot { receiver: false, title: "real ladder", published_gbps: None };
        let p = drawn(render_svg(&aggs, &opts, &[]).unwrap());
        (aggs, p)
    }

    /// The first panel's points (left of x = 700), by series marker, left to right.
    fn first_panel(svg: &str) -> Vec<DrawnPoint> {
        let mut pts: Vec<DrawnPoint> = drawn_points(svg).unwrap().into_iter().filter(|p| p.x < 700.0).collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        pts
    }

    /// Every step of the real ladder is drawn in its size's marker, filled
    /// with the colour of its typed verdict's class, as read from the SVG;
    /// the legend names each class present and never "n/a".
    #[test]
    fn a_real_ladders_points_are_filled_with_their_steps_verdicts() {
        let steps = real_ladder_steps();
        assert!(steps.iter().all(|s| s.verdict.is_some()), "the record's steps carry verdicts");
        let (aggs, p) = ladder_of(&steps);
        let pts = first_panel(&p.svg);
        assert_eq!(pts.len(), steps.len(), "a point per step: {pts:?}");
        let mut sizes: Vec<u32> = steps.iter().map(|s| s.size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for s in &steps {
            let (shape, outline) = series_marker(sizes.iter().position(|z| *z == s.size).unwrap());
            let at: Vec<&DrawnPoint> = pts.iter().filter(|p| p.shape == shape && p.outline == outline).collect();
            assert_eq!(at.len(), 1, "{} B: one point in its marker", s.size);
            assert_eq!(at[0].fill, verdict_color(s.class()), "{} B: filled with its verdict ({})", s.size, s.limit());
        }
        let t = texts(&p.svg);
        for s in &steps {
            assert!(t.contains(&format!("limit: {}", s.class())), "{t:?}");
        }
        assert!(!t.iter().any(|x| x.contains("n/a")), "{t:?}");
        assert!(p.caption.contains("each point filled with its verdict's colour"), "{}", p.caption);
        assert_eq!(aggs.len(), 2);
    }

    /// A one-queue ladder of several sizes shows a point per size, each in a
    /// marker of its own (shape and colour), set apart by more than a point's width.
    #[test]
    fn a_one_queue_ladders_sizes_are_told_apart() {
        let mut steps = real_ladder_steps();
        let mut third = steps[1].clone();
        (third.size, third.step) = (256, 2);
        steps.push(third);
        let (_, p) = ladder_of(&steps);
        let pts = first_panel(&p.svg);
        assert_eq!(pts.len(), 3, "{pts:?}");
        for (i, a) in pts.iter().enumerate() {
            for b in &pts[i + 1..] {
                assert!(a.shape != b.shape && a.outline != b.outline, "two sizes drawn alike: {a:?} {b:?}");
                assert!((a.x - b.x).abs() >= 2.0 * f64::from(POINT_PX), "two sizes on top of each other: {a:?} {b:?}");
            }
        }
        let t = texts(&p.svg);
        for want in ["64 B frames", "128 B frames", "256 B frames", "(series set side by side", "at each queue count)"] {
            assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
        }
        assert!(p.caption.contains("3 series (frame sizes), each its own marker shape and colour"), "{}", p.caption);
    }

    /// Two sizes' line rates a few pixels apart are one line, its legend naming both.
    #[test]
    fn close_line_rates_are_one_line_labelled_with_both() {
        let aggs = [agg(1, 1500, 1.9, NONE), agg(1, 1518, 1.9, NONE)];
        let opts = LadderPlot { receiver: true, title: "t", published_gbps: Some(25.0) };
        let p = drawn(render_svg(&aggs, &opts, &[]).unwrap());
        // One black line; in the legend (too narrow for one line of both) each under its key.
        let t = texts(&p.svg);
        for want in ["line rate 1500 B: 2.06 Mpps", "line rate 1518 B: 2.03 Mpps", "(one line: within 8 px)"] {
            assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
        }
        let doc = roxmltree::Document::parse(&p.svg).unwrap();
        let black_dashes = doc.descendants().filter(|n| n.attribute("stroke") == Some("#000000")).count();
        let colored_dashes = doc.descendants().filter(|n| n.attribute("stroke") == Some(&crate::drawn::hex(series_color(0)))).count();
        assert!(black_dashes > 20, "the joined line is black: {black_dashes}");
        // The series' own lines, outlines and keys are 7; a dashed line across the chart would be dozens.
        assert!(colored_dashes < 10, "no line rate in a series' colour: {colored_dashes}");
    }

    /// Series that differ by rate and shape, not size, are called so.
    #[test]
    fn series_are_named_by_what_tells_them_apart() {
        let mut paced = agg(1, 64, 0.02, NONE);
        (paced.offered_mpps, paced.shape) = (Some(0.02), "even".into());
        let mut poisson = paced.clone();
        poisson.shape = "poisson".into();
        let opts = LadderPlot { receiver: true, title: "t", published_gbps: None };
        let p = drawn(render_svg(&[paced.clone(), poisson.clone()], &opts, &[]).unwrap());
        assert!(p.caption.contains("(2 series (rates and arrival shapes), each its own marker"), "{}", p.caption);
        poisson.size = 128;
        let p = drawn(render_svg(&[paced, poisson], &opts, &[]).unwrap());
        assert!(p.caption.contains("(2 series (frame sizes, rates and arrival shapes), each"), "{}", p.caption);
    }

    /// Steps without a verdict are light grey, the legend says "no verdict",
    /// and the caption does not claim a colouring by verdict.
    #[test]
    fn steps_without_a_verdict_are_said_so() {
        let mut steps = real_ladder_steps();
        steps.iter_mut().for_each(|s| s.verdict = None);
        let (_, p) = ladder_of(&steps);
        assert!(first_panel(&p.svg).iter().all(|pt| pt.fill == verdict_color(VerdictClass::NotJudged)));
        assert!(texts(&p.svg).iter().any(|x| x == "no verdict (n/a)"));
        assert!(p.caption.contains("no point carries a verdict"), "{}", p.caption);
        assert!(!p.caption.contains("filled with its verdict"), "{}", p.caption);
    }

    #[test]
    fn nothing_measured_is_not_drawn() {
        let opts = LadderPlot { receiver: true, title: "t", published_gbps: None };
        let Plot::Nothing(why) = render_svg(&[], &opts, &[]).unwrap() else { panic!("an empty frame drawn") };
        assert_eq!(why, "no step was measured (none ran, or every step failed)");
        let note = Plot::Nothing(why).into_svg("t");
        assert!(texts(&note).contains(&"no plot: no step was measured (none ran, or every step failed)".to_string()));
    }

    #[test]
    fn the_ladder_has_its_series_axes_verdicts_and_reference_lines() {
        let mut repeated = agg(4, 64, 6.0, class(PpsAllowance));
        (repeated.runs, repeated.mpps.min, repeated.mpps.max) = (3, 5.5, 6.4);
        let aggs =
            [agg(1, 64, 2.0, class(Sender)), agg(2, 64, 4.0, class(Sender)), repeated, agg(1, 1500, 1.0, NONE), agg(2, 1500, 1.5, NONE)];
        let opts = LadderPlot { receiver: true, title: "test ladder", published_gbps: Some(25.0) };
        let p = drawn(render_svg(&aggs, &opts, &[]).unwrap());
        let t = texts(&p.svg);
        for want in [
            "64 B frames",
            "1500 B frames",
            "queues (log2 scale)",
            "frame size (bytes, FCS included)",
            "received Mpps (million frames/s)",
            "limit: sender",
            "limit: pps-allowance",
            "limit: none",
            "min to max (--repeat)",
            "published 25 Gb/s (wire)",
            "line rate, Gb/s of frames",
            "line rate 1500 B: 2.06 Mpps",
            "64 B: 4 queue(s)",
            "1500 B: 2 queue(s)",
            "1",
            "2",
            "4",
        ] {
            assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
        }
        // 64 B frames' line rate (37.2 Mpps) is more than 3x the data: left off, said so.
        assert!(t.iter().any(|x| x == "(line rate at 25 Gb/s off scale)"), "{t:?}");
        assert!(!t.iter().any(|x| x.starts_with("line rate 64 B")), "{t:?}");
        // Every point as drawn: its series' marker, its verdict's fill; the Gb/s
        // panel's points in the same markers as the sizes' in the first.
        let pts = drawn_points(&p.svg).unwrap();
        assert_eq!(pts.len(), aggs.len() + 2, "{pts:?}");
        for a in &aggs {
            let (shape, outline) = series_marker(usize::from(a.size == 1500));
            let fill = verdict_color(a.class);
            assert!(pts.iter().any(|p| p.x < 700.0 && (p.shape, p.outline, p.fill) == (shape, outline, fill)), "{a:?}");
        }
        let right: Vec<&DrawnPoint> = pts.iter().filter(|p| p.x >= 700.0).collect();
        assert_eq!((right[0].shape, right[0].fill), (Shape::nth(0), verdict_color(class(PpsAllowance))));
        assert_eq!((right[1].shape, right[1].fill), (Shape::nth(1), verdict_color(NONE)));
    }

    #[test]
    fn latency_gets_its_own_panel() {
        let aggs = [agg(1, 64, 0.1, NONE)];
        let lat = vec![
            LatencyPoint { offered_mpps: 0.1, p50_us: 2.0, p99_us: 9.0, p99_9_us: 20.0, series: "even".into() },
            LatencyPoint { offered_mpps: 0.3, p50_us: 3.0, p99_us: 15.0, p99_9_us: 40.0, series: "even".into() },
        ];
        let opts = LadderPlot { receiver: true, title: "t", published_gbps: None };
        let p = drawn(render_svg(&aggs, &opts, &lat).unwrap());
        let t = texts(&p.svg);
        for want in ["round trip against offered load", "P50, even", "P99, even", "offered Mpps"] {
            assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
        }
        assert!(p.caption.ends_with("and the round trip's P50, P99 and P99.9 against offered load"), "{}", p.caption);
        assert!(p.caption.contains("(one series)"), "{}", p.caption);
    }

    #[test]
    fn line_rate() {
        assert!((line_rate_mpps(10.0, 64) - 14.880952).abs() < 1e-5);
    }

    /// `BLASTDROP_PLOT_SAMPLES=DIR cargo test -p ladder samples` writes the
    /// sample pictures there, to look at them: the synthetic ladder, and the
    /// real one-queue ladder of the report's test record.
    #[test]
    fn samples() {
        let Ok(dir) = std::env::var("BLASTDROP_PLOT_SAMPLES") else { return };
        let mut aggs = Vec::new();
        for (q, m64, m1500, l64) in [
            (1, 2.1, 0.8, class(Sender)),
            (2, 4.0, 1.6, class(Sender)),
            (4, 7.6, 2.0, class(PpsAllowance)),
            (8, 8.1, 2.05, class(PpsAllowance)),
            (16, 8.2, 2.06, class(Receiver)),
        ] {
            let mut a = agg(q, 64, m64, l64);
            (a.runs, a.mpps.min, a.mpps.max) = (3, m64 * 0.95, m64 * 1.03);
            aggs.push(a);
            aggs.push(agg(q, 1500, m1500, if q < 4 { NONE } else { class(BwOutAllowance) }));
        }
        let opts = LadderPlot { receiver: true, title: "sample ladder: c8gn.4xlarge-like, 64 and 1500 B", published_gbps: Some(25.0) };
        let lat = vec![
            LatencyPoint { offered_mpps: 0.1, p50_us: 2.4, p99_us: 18.0, p99_9_us: 40.0, series: "even".into() },
            LatencyPoint { offered_mpps: 1.0, p50_us: 3.1, p99_us: 22.0, p99_9_us: 60.0, series: "even".into() },
            LatencyPoint { offered_mpps: 0.1, p50_us: 7.9, p99_us: 15.4, p99_9_us: 50.0, series: "burst:8".into() },
            LatencyPoint { offered_mpps: 1.0, p50_us: 9.0, p99_us: 30.0, p99_9_us: 90.0, series: "burst:8".into() },
        ];
        std::fs::write(format!("{dir}/ladder.svg"), render_svg(&aggs, &opts, &lat).unwrap().into_svg("")).unwrap();
        std::fs::write(format!("{dir}/real-ladder.svg"), ladder_of(&real_ladder_steps()).1.svg).unwrap();
    }
}
