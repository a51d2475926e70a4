//! SVG charts of a ladder and of a knee search. Every point is coloured by
//! the verdict of its step (the tool's main output), keyed in a legend
//! beside each chart, never over the data.
//!
//! - The ladder: received Mpps against queues on a log2 axis (ladders
//!   double), one line per frame size (and per rate and shape when those
//!   vary), min-to-max bars under --repeat, and the line rate of each size
//!   when the published bandwidth is known; received Gb/s of frames
//!   against frame size (the best queue count) with the published
//!   bandwidth and the line-rate curve; and, when probes were timed, the
//!   round trip's P50, P99 and P99.9 against the offered load.
//! - The knee: loss against offered rate, one point per trial, the NDR and
//!   PDR marked; and latency under load when it was measured.

use plotters::prelude::*;

use limits::{LimitKind, VerdictClass};

use crate::{Aggregate, StepRecord};

pub use series::chart::PlotError;
use series::chart::{err, Area, Legend, Mark};

/// What a ladder's picture needs beside its aggregates.
pub struct LadderPlot<'a> {
    /// The figures are the receiver's (else the sender's, and the labels say so).
    pub receiver: bool,
    pub title: &'a str,
    /// The interface's published bandwidth (Gb/s on the wire), when given.
    pub published_gbps: Option<f64>,
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

/// One knee trial: where it was offered (or counted), its loss and verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct KneePoint {
    pub offered_mpps: f64,
    pub loss_pct: f64,
    pub class: VerdictClass,
    /// A confirmation (full-length) trial, drawn larger than a search trial.
    pub confirmation: bool,
}

/// A verdict class's colour, the same in every chart (bold; the series
/// lines are muted, so a point's colour reads as its verdict).
fn verdict_color(class: VerdictClass) -> RGBColor {
    let VerdictClass::Limit(kind) = class else { return RGBColor(0, 0, 0) };
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

/// Series colours: muted, apart from the verdicts'.
fn series_color(i: usize) -> RGBColor {
    const C: [RGBColor; 6] = [
        RGBColor(0, 128, 128),
        RGBColor(160, 82, 45),
        RGBColor(105, 105, 105),
        RGBColor(107, 142, 35),
        RGBColor(75, 0, 130),
        RGBColor(188, 143, 143),
    ];
    C[i % C.len()]
}

/// The verdicts' classes into `legend`, each once, in the order they first appear.
fn legend_verdicts(legend: &mut Legend, classes: impl IntoIterator<Item = VerdictClass>) {
    let mut seen: Vec<VerdictClass> = Vec::new();
    for class in classes {
        if !seen.contains(&class) {
            legend.push(Mark::Dot(verdict_color(class)), format!("limit: {class}"));
            seen.push(class);
        }
    }
}

/// A panel: the chart's area and its legend's, side by side.
fn panel<'a>(area: &Area<'a>) -> (Area<'a>, Area<'a>) {
    series::chart::panel(area, 200)
}

type Linear<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// A chart with linear axes on `area`, its mesh drawn and described.
fn linear_chart<'a, 'b>(
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

/// The ladder's picture: two panels, three when probes were timed.
pub fn render_svg(aggs: &[Aggregate], opts: &LadderPlot, latency: &[LatencyPoint]) -> Result<String, PlotError> {
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
    Ok(svg)
}

fn side(receiver: bool) -> &'static str {
    if receiver {
        "received"
    } else {
        "sent (sender-side)"
    }
}

fn mpps_against_queues(area: &Area, aggs: &[Aggregate], opts: &LadderPlot) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area);
    let side = side(opts.receiver);
    let series = series_of(aggs);
    let traffic_varies = series.iter().any(|s| !s.same_traffic(series[0]));
    let log2 = |q: u16| f64::from(q.max(1)).log2();
    let (lo, hi) = aggs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), a| (lo.min(log2(a.queues)), hi.max(log2(a.queues))));
    let (lo, hi) = if lo > hi { (0.0, 1.0) } else { (lo.floor() - 0.3, hi.ceil() + 0.3) };
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
    let mut legend = Legend::new("series");
    let mut bars = false;
    for (i, key) in series.iter().enumerate() {
        let color = series_color(i);
        let mut pts: Vec<&Aggregate> = aggs.iter().filter(|a| a.size == key.size && a.same_traffic(key)).collect();
        pts.sort_by_key(|a| a.queues);
        chart.draw_series(LineSeries::new(pts.iter().map(|a| (log2(a.queues), a.mpps.median)), color.stroke_width(2))).map_err(err)?;
        for a in pts.iter().filter(|a| a.runs > 1) {
            bars = true;
            let x = log2(a.queues);
            chart
                .draw_series(std::iter::once(PathElement::new(vec![(x, a.mpps.min), (x, a.mpps.max)], color.stroke_width(1))))
                .map_err(err)?;
        }
        chart
            .draw_series(pts.iter().map(|a| Circle::new((log2(a.queues), a.mpps.median), 5, verdict_color(a.class).filled())))
            .map_err(err)?;
        legend.push(Mark::Line(color), series_label(key, traffic_varies));
        if let Some(&(size, m)) = line_rates.iter().find(|l| l.0 == key.size) {
            chart.draw_series(DashedLineSeries::new(vec![(lo, m), (hi, m)], 6, 4, color.stroke_width(1))).map_err(err)?;
            legend.push(Mark::Dashed(color), format!("line rate {size} B: {m:.2} Mpps"));
        }
    }
    if bars {
        legend.push(Mark::Bar(BLACK), "min to max (--repeat)");
    }
    legend_verdicts(&mut legend, aggs.iter().map(|a| a.class));
    if let Some(g) = opts.published_gbps.filter(|_| line_rates.len() < series.len()) {
        legend.push(Mark::Dashed(WHITE), format!("(line rate at {g} Gb/s off scale)"));
    }
    legend.draw(&legend_area)
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

/// Each series' line rate at `published_gbps`, where it is within 3x of
/// the data (higher, it would flatten the data).
fn line_rates_near(published_gbps: Option<f64>, series: &[&Aggregate], data_max: f64) -> Vec<(u32, f64)> {
    match published_gbps {
        Some(g) => series.iter().map(|s| (s.size, line_rate_mpps(g, s.size))).filter(|&(_, m)| m <= data_max * 3.0).collect(),
        None => Vec::new(),
    }
}

/// A series' name in the legend: its size, with its rate and shape when those vary.
fn series_label(key: &Aggregate, traffic_varies: bool) -> String {
    match (traffic_varies, key.offered_mpps) {
        (true, Some(r)) => format!("{} B, {r:.3} Mpps {}", key.size, key.shape),
        (true, None) => format!("{} B, unpaced", key.size),
        (false, _) => format!("{} B frames", key.size),
    }
}

fn gbps_against_size(area: &Area, aggs: &[Aggregate], opts: &LadderPlot) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area);
    let side = side(opts.receiver);
    let mut sizes: Vec<u32> = aggs.iter().map(|a| a.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    // Each size's best queue count.
    let best: Vec<&Aggregate> = sizes
        .iter()
        .filter_map(|&s| aggs.iter().filter(|a| a.size == s).max_by(|a, b| a.frame_gbps.median.total_cmp(&b.frame_gbps.median)))
        .collect();
    let max_size = sizes.last().copied().unwrap_or(64);
    let data_max = best.iter().map(|a| a.frame_gbps.max).fold(0.0, f64::max).max(1e-3);
    let y_max = opts.published_gbps.map_or(data_max, |g| g.max(data_max)) * 1.12;
    let x_max = f64::from(max_size) * 1.06 + 1.0;
    let x_desc = "frame size (bytes, FCS included)";
    let caption = format!("{side} Gb/s against frame size");
    let mut chart =
        linear_chart(&chart_area, &caption, 0.0..x_max, 0.0..y_max, x_desc, &format!("{side} Gb/s of frames (best queue count)"))?;
    let mut legend = Legend::new("series");
    let color = series_color(0);
    let pts: Vec<(f64, f64)> = best.iter().map(|a| (f64::from(a.size), a.frame_gbps.median)).collect();
    chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2))).map_err(err)?;
    for a in best.iter().filter(|a| a.runs > 1) {
        let x = f64::from(a.size);
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(x, a.frame_gbps.min), (x, a.frame_gbps.max)], color.stroke_width(1))))
            .map_err(err)?;
    }
    chart
        .draw_series(best.iter().map(|a| Circle::new((f64::from(a.size), a.frame_gbps.median), 5, verdict_color(a.class).filled())))
        .map_err(err)?;
    legend.push(Mark::Line(color), format!("{side} Gb/s"));
    if let Some(g) = opts.published_gbps {
        let gray = RGBColor(90, 90, 90);
        chart.draw_series(DashedLineSeries::new(vec![(0.0, g), (x_max, g)], 8, 4, gray.stroke_width(1))).map_err(err)?;
        legend.push(Mark::Dashed(gray), format!("published {g} Gb/s (wire)"));
        // At line rate, frames carry size / (size + 20) of the wire's bits.
        let curve: Vec<(f64, f64)> =
            (64..=max_size.max(64)).step_by(8).map(|s| (f64::from(s), g * f64::from(s) / f64::from(s + 20))).collect();
        let red = RGBColor(214, 39, 40);
        chart.draw_series(DashedLineSeries::new(curve, 4, 3, red.stroke_width(1))).map_err(err)?;
        legend.push(Mark::Dashed(red), "line rate, Gb/s of frames");
    }
    legend_verdicts(&mut legend, best.iter().map(|a| a.class));
    legend.draw(&legend_area)
}

/// Round-trip P50, P99 and P99.9 (log scale) against the offered load.
fn latency_against_load(area: &Area, points: &[LatencyPoint]) -> Result<(), PlotError> {
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

/// The knee's picture: loss against offered rate, and latency under load
/// when it was measured.
pub fn render_knee_svg(
    trials: &[KneePoint],
    ndr: Option<f64>,
    pdr: Option<f64>,
    latency: &[LatencyPoint],
    title: &str,
) -> Result<String, PlotError> {
    let mut svg = String::new();
    let panels = if latency.is_empty() { 1 } else { 2 };
    {
        let root = SVGBackend::with_string(&mut svg, (700 * panels, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(err)?;
        let areas = root.split_evenly((1, panels as usize));
        loss_against_rate(&areas[0], trials, ndr, pdr)?;
        if let Some(a) = areas.get(1) {
            latency_against_load(a, latency)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn loss_against_rate(area: &Area, trials: &[KneePoint], ndr: Option<f64>, pdr: Option<f64>) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area);
    let x_max = trials.iter().map(|t| t.offered_mpps).chain(ndr).chain(pdr).fold(0.0, f64::max).max(1e-3) * 1.1;
    let y_max = trials.iter().map(|t| t.loss_pct).fold(0.0, f64::max).max(1.0) * 1.12;
    let x_desc = "offered Mpps (or delivered, when the sender fell short)";
    let mut chart =
        linear_chart(&chart_area, "loss against offered rate (each trial)", 0.0..x_max, 0.0..y_max, x_desc, "loss, % of frames sent")?;
    let mut legend = Legend::new("trials");
    for t in trials {
        let r = if t.confirmation { 7 } else { 4 };
        let c = verdict_color(t.class);
        chart.draw_series(std::iter::once(Circle::new((t.offered_mpps, t.loss_pct), r, c.filled()))).map_err(err)?;
    }
    legend.push(Mark::Dot(BLACK), "large: confirmation trial");
    for (rate, name, color) in [(ndr, "NDR", RGBColor(44, 160, 44)), (pdr, "PDR", RGBColor(255, 127, 14))] {
        if let Some(x) = rate {
            chart.draw_series(DashedLineSeries::new(vec![(x, 0.0), (x, y_max)], 6, 4, color.stroke_width(2))).map_err(err)?;
            legend.push(Mark::Dashed(color), format!("{name} {x:.3} Mpps"));
        }
    }
    legend_verdicts(&mut legend, trials.iter().map(|t| t.class));
    legend.draw(&legend_area)
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("valid XML");
        doc.descendants().filter_map(|n| n.text()).map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect()
    }

    #[test]
    fn the_ladder_has_its_series_axes_verdicts_and_reference_lines() {
        let mut repeated = agg(4, 64, 6.0, class(PpsAllowance));
        (repeated.runs, repeated.mpps.min, repeated.mpps.max) = (3, 5.5, 6.4);
        let aggs =
            [agg(1, 64, 2.0, class(Sender)), agg(2, 64, 4.0, class(Sender)), repeated, agg(1, 1500, 1.0, NONE), agg(2, 1500, 1.5, NONE)];
        let opts = LadderPlot { receiver: true, title: "test ladder", published_gbps: Some(25.0) };
        let svg = render_svg(&aggs, &opts, &[]).unwrap();
        let t = texts(&svg);
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
            "1",
            "2",
            "4",
        ] {
            assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
        }
        // 64 B frames' line rate (37.2 Mpps) is more than 3x the data: left off, said so.
        assert!(t.iter().any(|x| x == "(line rate at 25 Gb/s off scale)"), "{t:?}");
        assert!(!t.iter().any(|x| x.starts_with("line rate 64 B")), "{t:?}");
    }

    #[test]
    fn latency_gets_its_own_panel_and_the_knee_its_picture() {
        let aggs = [agg(1, 64, 0.1, NONE)];
        let lat = vec![
            LatencyPoint { offered_mpps: 0.1, p50_us: 2.0, p99_us: 9.0, p99_9_us: 20.0, series: "even".into() },
            LatencyPoint { offered_mpps: 0.3, p50_us: 3.0, p99_us: 15.0, p99_9_us: 40.0, series: "even".into() },
        ];
        let opts = LadderPlot { receiver: true, title: "t", published_gbps: None };
        let t = texts(&render_svg(&aggs, &opts, &lat).unwrap());
        for want in ["round trip against offered load", "P50, even", "P99, even", "offered Mpps"] {
            assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
        }
        let trials = vec![
            KneePoint { offered_mpps: 1.0, loss_pct: 0.0, class: NONE, confirmation: false },
            KneePoint { offered_mpps: 2.0, loss_pct: 12.0, class: class(Receiver), confirmation: false },
            KneePoint { offered_mpps: 1.4, loss_pct: 0.0, class: NONE, confirmation: true },
        ];
        let t = texts(&render_knee_svg(&trials, Some(1.4), Some(1.5), &lat, "knee").unwrap());
        for want in ["NDR 1.400 Mpps", "PDR 1.500 Mpps", "limit: receiver", "loss, % of frames sent", "round trip against offered load"] {
            assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
        }
    }

    #[test]
    fn line_rate() {
        assert!((line_rate_mpps(10.0, 64) - 14.880952).abs() < 1e-5);
    }

    /// `BLASTDROP_PLOT_SAMPLES=DIR cargo test -p ladder samples` writes the
    /// sample pictures there, to look at them.
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
        std::fs::write(format!("{dir}/ladder.svg"), render_svg(&aggs, &opts, &lat).unwrap()).unwrap();
        let trials = vec![
            KneePoint { offered_mpps: 8.0, loss_pct: 35.0, class: class(Receiver), confirmation: false },
            KneePoint { offered_mpps: 4.0, loss_pct: 0.0, class: NONE, confirmation: false },
            KneePoint { offered_mpps: 6.0, loss_pct: 4.0, class: class(Receiver), confirmation: false },
            KneePoint { offered_mpps: 5.0, loss_pct: 0.2, class: class(Receiver), confirmation: false },
            KneePoint { offered_mpps: 4.5, loss_pct: 0.0, class: NONE, confirmation: false },
            KneePoint { offered_mpps: 4.5, loss_pct: 0.0, class: NONE, confirmation: true },
            KneePoint { offered_mpps: 5.0, loss_pct: 0.3, class: class(Receiver), confirmation: true },
        ];
        std::fs::write(format!("{dir}/knee.svg"), render_knee_svg(&trials, Some(4.5), Some(5.0), &lat[..2], "sample knee").unwrap())
            .unwrap();
    }
}
