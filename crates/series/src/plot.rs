//! The series as an SVG picture, in the style of the ladder's charts: a
//! panel per figure, stacked on one time axis, each keyed in a legend beside
//! it, never over the data.
//!
//! - The rate: received and sent Mpps, two lines; each detected change a
//!   vertical dashed line labelled with its levels; each allowance
//!   counter's onset a vertical dashed line labelled with its name; a
//!   bucket's baseline a horizontal dashed line.
//! - Loss per interval (lost frames per second), when the series has it.
//! - Latency percentiles (P50, P99, P99.9, max; log scale), when probes
//!   were timed.
//!
//! The time axis is in s, min or h as the span needs (up to 15 min, up to
//! 12 h, beyond), with at most 10 labels, so it reads at an hour and at a
//! day. A line has at most [`MAX_POINTS`] points: longer series are drawn
//! from bins of adjacent rows, merged as the series merges them (rates from
//! summed counts over summed seconds, latency each percentile's max).

use plotters::prelude::*;

use crate::chart::{err, panel, Area, Legend, Mark, PlotError};
use crate::detect::Analysis;
use crate::store::{Count, CounterKind, Series};

/// The most points a line is drawn with (each bin is a step: two points).
pub const MAX_POINTS: usize = 2000;
/// The most changes labelled on the chart (all are drawn).
const LABELLED: usize = 10;
/// The legend beside each panel.
const LEGEND_PX: u32 = 240;

const RECEIVED: RGBColor = RGBColor(0, 128, 128);
const SENT: RGBColor = RGBColor(160, 82, 45);
const CHANGE: RGBColor = RGBColor(214, 39, 40);
const ONSET: RGBColor = RGBColor(31, 119, 180);
const BASELINE: RGBColor = RGBColor(105, 105, 105);
const LOSS: RGBColor = RGBColor(148, 103, 189);
const LATENCY: [RGBColor; 4] = [RGBColor(75, 0, 130), RGBColor(107, 142, 35), RGBColor(188, 143, 143), RGBColor(105, 105, 105)];

/// One point of the picture: adjacent rows merged.
#[derive(Debug, Clone, Default)]
struct Bin {
    start: f64,
    end: f64,
    secs: f64,
    sent: Option<f64>,
    received: Option<f64>,
    lost: Option<f64>,
    latency: Option<[u64; 4]>,
}

impl Bin {
    fn mid(&self) -> f64 {
        (self.start + self.end) / 2.0
    }

    /// A figure per second as a step across the bin.
    fn step(&self, v: Option<f64>, axis: &TimeAxis) -> Option<[(f64, f64); 2]> {
        self.per_s(v).map(|r| [(axis.x(self.start), r), (axis.x(self.end), r)])
    }

    fn per_s(&self, v: Option<f64>) -> Option<f64> {
        v.filter(|_| self.secs > 0.0).map(|v| v / self.secs)
    }
}

fn add(a: Option<f64>, b: Option<u64>) -> Option<f64> {
    match (a, b) {
        (a, None) => a,
        (a, Some(b)) => Some(a.unwrap_or(0.0) + b as f64),
    }
}

fn bins(series: &Series) -> Vec<Bin> {
    let n = series.len();
    let per = n.div_ceil(MAX_POINTS / 2).max(1);
    let mut out: Vec<Bin> = Vec::with_capacity(n.div_ceil(per));
    let cols = series
        .times()
        .zip(series.count(Count::SentFrames))
        .zip(series.count(Count::ReceivedFrames))
        .zip(series.count(Count::Lost))
        .zip(series.latency());
    for (i, (((((t, secs), sent), received), lost), latency)) in cols.enumerate() {
        if i % per == 0 {
            out.push(Bin { start: t - secs, ..Bin::default() });
        }
        let b = out.last_mut().expect("a bin was pushed");
        b.end = t;
        b.secs += secs;
        b.sent = add(b.sent, sent);
        b.received = add(b.received, received);
        b.lost = add(b.lost, lost);
        b.latency = match (b.latency, latency) {
            (Some(x), Some(y)) => Some(std::array::from_fn(|k| x[k].max(y[k]))),
            (x, y) => x.or(y),
        };
    }
    out
}

/// The time axis' unit for a span: (seconds per unit, its name).
pub fn time_unit(span_s: f64) -> (f64, &'static str) {
    if span_s <= 900.0 {
        (1.0, "s")
    } else if span_s <= 43_200.0 {
        (60.0, "min")
    } else {
        (3600.0, "h")
    }
}

/// The time axis: its range in its unit, the unit's seconds and name.
struct TimeAxis {
    lo: f64,
    hi: f64,
    div: f64,
    unit: &'static str,
}

impl TimeAxis {
    fn of(bins: &[Bin]) -> TimeAxis {
        let lo = bins.first().map_or(0.0, |b| b.start).min(0.0);
        let hi = bins.last().map_or(1.0, |b| b.end);
        let (div, unit) = time_unit(hi - lo);
        let (lo, hi) = (lo / div, hi / div);
        TimeAxis { lo, hi: if hi > lo { hi } else { lo + 1.0 }, div, unit }
    }

    fn x(&self, s: f64) -> f64 {
        s / self.div
    }

    fn desc(&self) -> String {
        format!("time since the run began ({})", self.unit)
    }
}

/// A tick's label: whole numbers without decimals.
fn tick(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').to_string()
    }
}

/// The picture: the rate, and loss and latency when the series has them.
/// A series with nothing to draw, or a plotting failure, comes back as a
/// small SVG that says so.
pub fn svg(series: &Series, analysis: &Analysis, title: &str) -> String {
    if let Some(why) = nothing_to_plot(series) {
        return crate::chart::note_svg(title, &format!("no plot: {why}"));
    }
    render(series, analysis, title).unwrap_or_else(|e| crate::chart::note_svg(title, &format!("the plot failed: {}", e.0)))
}

/// Why the series' picture would be an empty frame: no intervals, or no
/// interval with a count or a latency to draw; None when it has something.
pub fn nothing_to_plot(series: &Series) -> Option<&'static str> {
    if series.is_empty() {
        return Some("the series has no intervals");
    }
    let counted = [Count::SentFrames, Count::ReceivedFrames, Count::Lost].into_iter().any(|c| series.has(c));
    let timed = series.latency().any(|l| l.is_some());
    (!counted && !timed).then_some("no interval of the series counted a frame")
}

/// What the picture of `series` shows, panel by panel, in the words of its
/// legends: for a caption.
pub fn shows(series: &Series, analysis: &Analysis) -> String {
    let rate = match (series.has(Count::ReceivedFrames), series.has(Count::SentFrames)) {
        (true, true) => "received and sent Mpps",
        (true, false) => "received Mpps",
        _ => "sent Mpps",
    };
    let mut parts = vec![format!("{rate} over time")];
    match analysis.changes.len() {
        0 => {}
        1 => parts[0].push_str(", the change found marked"),
        n => parts[0].push_str(&format!(", the {n} changes found marked")),
    }
    let allowance = |name: &str| series.counters().iter().any(|(n, k)| n == name && *k == CounterKind::Allowance);
    if analysis.onsets.iter().any(|o| allowance(&o.counter)) {
        parts[0].push_str(", each allowance counter's onset marked");
    }
    if series.has(Count::Lost) {
        parts.push("lost frames per interval".into());
    }
    if series.latency().any(|l| l.is_some()) {
        parts.push("latency percentiles (P50, P99, P99.9, max) per interval".into());
    }
    parts.join("; ")
}

fn render(series: &Series, analysis: &Analysis, title: &str) -> Result<String, PlotError> {
    let bins = bins(series);
    let axis = TimeAxis::of(&bins);
    let has_loss = bins.iter().any(|b| b.lost.is_some());
    let has_latency = bins.iter().any(|b| b.latency.is_some());
    let panels = 1 + usize::from(has_loss) + usize::from(has_latency);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1200, 40 + 380 * panels as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(err)?;
        let areas = root.split_evenly((panels, 1));
        rate_panel(&areas[0], &bins, &axis, series, analysis)?;
        let mut next = 1;
        if has_loss {
            loss_panel(&areas[next], &bins, &axis)?;
            next += 1;
        }
        if has_latency {
            latency_panel(&areas[next], &bins, &axis)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

type TimeChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// A chart over the time axis with a linear y axis from 0 to `y_max`
/// (`y_labels` labels), its mesh drawn and described.
fn time_chart<'a, 'b>(
    area: &'a Area<'b>,
    caption: &str,
    axis: &TimeAxis,
    (y_max, y_labels): (f64, usize),
    y_desc: &str,
) -> Result<TimeChart<'a, 'b>, PlotError> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(axis.lo..axis.hi, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(10)
        .x_label_formatter(&tick)
        .y_labels(y_labels)
        .x_desc(axis.desc())
        .y_desc(y_desc)
        .draw()
        .map_err(err)?;
    Ok(chart)
}

fn rate_panel(area: &Area, bins: &[Bin], axis: &TimeAxis, series: &Series, analysis: &Analysis) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area, LEGEND_PX);
    let mpps = |b: &Bin, v: Option<f64>| b.step(v.map(|v| v / 1e6), axis);
    let received: Vec<(f64, f64)> = bins.iter().filter_map(|b| mpps(b, b.received)).flatten().collect();
    let sent: Vec<(f64, f64)> = bins.iter().filter_map(|b| mpps(b, b.sent)).flatten().collect();
    let y_max = received.iter().chain(&sent).map(|p| p.1).fold(0.0, f64::max).max(1e-6) * 1.18;
    let caption = format!("rate over time ({} rate analysed)", analysis.rate);
    let mut chart = time_chart(&chart_area, &caption, axis, (y_max, 8), "Mpps (million frames/s)")?;
    let mut legend = Legend::new("rate");
    if !received.is_empty() {
        chart.draw_series(LineSeries::new(received, RECEIVED.stroke_width(2))).map_err(err)?;
        legend.push(Mark::Line(RECEIVED), "received Mpps");
    }
    if !sent.is_empty() {
        chart.draw_series(LineSeries::new(sent, SENT.stroke_width(1))).map_err(err)?;
        legend.push(Mark::Thin(SENT), "sent Mpps");
    }
    let font = ("sans-serif", 12).into_font();
    let vertical = |x: f64, color: RGBColor| DashedLineSeries::new(vec![(x, 0.0), (x, y_max)], 6, 4, color.stroke_width(1));
    for (i, c) in analysis.changes.iter().enumerate() {
        let x = axis.x(c.at_s);
        chart.draw_series(vertical(x, CHANGE)).map_err(err)?;
        if i < LABELLED {
            let label = format!("change: {:.3} to {:.3} Mpps", c.before_pps / 1e6, c.after_pps / 1e6);
            let y = y_max * (0.985 - 0.055 * (i % 3) as f64);
            chart.draw_series(std::iter::once(Text::new(label, (x, y), font.color(&CHANGE)))).map_err(err)?;
        }
    }
    if !analysis.changes.is_empty() {
        let n = analysis.changes.len();
        legend.push(Mark::Dashed(CHANGE), if n == 1 { "detected change".to_string() } else { format!("detected changes ({n})") });
    }
    if let (Some(b), Some(c)) = (&analysis.bucket, analysis.changes.first()) {
        let y = b.baseline_pps / 1e6;
        chart.draw_series(DashedLineSeries::new(vec![(axis.x(c.at_s), y), (axis.hi, y)], 8, 4, BASELINE.stroke_width(1))).map_err(err)?;
        legend.push(Mark::Dashed(BASELINE), format!("baseline {:.3} Mpps", y));
    }
    let allowance = |name: &str| series.counters().iter().any(|(n, k)| n == name && *k == CounterKind::Allowance);
    for (i, o) in analysis.onsets.iter().filter(|o| allowance(&o.counter)).enumerate() {
        let x = axis.x(o.at_s);
        chart.draw_series(vertical(x, ONSET)).map_err(err)?;
        let y = y_max * (0.62 - 0.055 * (i % 4) as f64);
        chart.draw_series(std::iter::once(Text::new(format!("{} began", o.counter), (x, y), font.color(&ONSET)))).map_err(err)?;
        legend.push(Mark::Dashed(ONSET), format!("onset: {}", o.counter));
    }
    legend.draw(&legend_area)
}

fn loss_panel(area: &Area, bins: &[Bin], axis: &TimeAxis) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area, LEGEND_PX);
    let pts: Vec<(f64, f64)> = bins.iter().filter_map(|b| b.step(b.lost, axis)).flatten().collect();
    let y_max = pts.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.12;
    let mut chart = time_chart(&chart_area, "loss per interval", axis, (y_max, 6), "lost frames/s")?;
    chart.draw_series(LineSeries::new(pts, LOSS.stroke_width(1))).map_err(err)?;
    let mut legend = Legend::new("loss");
    legend.push(Mark::Thin(LOSS), "lost frames/s");
    legend.draw(&legend_area)
}

fn latency_panel(area: &Area, bins: &[Bin], axis: &TimeAxis) -> Result<(), PlotError> {
    let (chart_area, legend_area) = panel(area, LEGEND_PX);
    let us: Vec<(f64, [f64; 4])> =
        bins.iter().filter_map(|b| b.latency.map(|l| (axis.x(b.mid()), l.map(|v| (v as f64 / 1e3).max(0.001))))).collect();
    // Whole decades, so the axis is labelled at least at each power of ten.
    let lo = us.iter().map(|p| p.1[0]).fold(f64::MAX, f64::min).max(0.01);
    let hi = us.iter().map(|p| p.1[3]).fold(0.0, f64::max).max(lo * 2.0);
    let (y_lo, y_hi) = (10f64.powf(lo.log10().floor()), 10f64.powf((hi * 1.2).log10().ceil()));
    let mut chart = ChartBuilder::on(&chart_area)
        .caption("latency per interval", ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(axis.lo..axis.hi, (y_lo..y_hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(10)
        .x_label_formatter(&tick)
        .y_labels(12)
        .y_label_formatter(&|y| if *y >= 10.0 { format!("{y:.0}") } else { format!("{y:.1}") })
        .x_desc(axis.desc())
        .y_desc("microseconds (log scale)")
        .draw()
        .map_err(err)?;
    let mut legend = Legend::new("percentiles");
    for (k, name) in ["P50", "P99", "P99.9", "max"].into_iter().enumerate() {
        let pts: Vec<(f64, f64)> = us.iter().map(|p| (p.0, p.1[k].clamp(y_lo, y_hi))).collect();
        let color = LATENCY[k];
        if k == 1 {
            chart.draw_series(DashedLineSeries::new(pts, 6, 3, color.stroke_width(2))).map_err(err)?;
            legend.push(Mark::Dashed(color), name);
        } else {
            let width = if k == 0 { 2 } else { 1 };
            chart.draw_series(LineSeries::new(pts, color.stroke_width(width))).map_err(err)?;
            legend.push(if k == 0 { Mark::Line(color) } else { Mark::Thin(color) }, name);
        }
    }
    legend.draw(&legend_area)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{analyse, Thresholds};
    use crate::synth::{Noise, Shape};

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("valid XML");
        doc.descendants().filter_map(|n| n.text()).map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect()
    }

    fn polylines(svg: &str, color: RGBColor) -> usize {
        let doc = roxmltree::Document::parse(svg).expect("valid XML");
        let want = format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2);
        doc.descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke").is_some_and(|s| s.eq_ignore_ascii_case(&want)))
            .count()
    }

    fn has(t: &[String], want: &str) {
        assert!(t.iter().any(|x| x == want), "missing {want:?} in {t:?}");
    }

    /// A tbf-shaped run with an allowance onset and timed probes.
    fn bucket_sample() -> Series {
        let mut shape = Shape::new(&[(40_000.0, 2.3), (4921.0, 7.7)]);
        shape.allowance_from = Some(2.7);
        let mut series = Series::new(1.0, crate::synth::counters(), 1000);
        for (i, mut r) in shape.rows().enumerate() {
            r.latency_ns = Some([20_000 + i as u64 * 100, 90_000, 150_000, 400_000]);
            series.push(r);
        }
        series
    }

    #[test]
    fn a_short_bucket_run() {
        let series = bucket_sample();
        let a = analyse(&series, &Thresholds::default());
        assert!(a.bucket.is_some(), "{}", a.sentence);
        let svg = svg(&series, &a, "tbf 20mbit burst 40mb");
        let t = texts(&svg);
        for want in [
            "tbf 20mbit burst 40mb",
            "received Mpps",
            "sent Mpps",
            "detected change",
            "pps_allowance_exceeded began",
            "onset: pps_allowance_exceeded",
            "loss per interval",
            "latency per interval",
            "P99.9",
            "time since the run began (s)",
        ] {
            has(&t, want);
        }
        assert!(t.iter().any(|x| x.starts_with("change: 0.04") && x.ends_with("to 0.005 Mpps")), "{t:?}");
        assert!(t.iter().any(|x| x.starts_with("baseline 0.005")), "{t:?}");
        assert_eq!(
            shows(&series, &a),
            "received and sent Mpps over time, the change found marked, each allowance counter's onset marked; \
             lost frames per interval; latency percentiles (P50, P99, P99.9, max) per interval"
        );
        assert_eq!(polylines(&svg, RECEIVED), 1 + 1, "the received line and its legend mark");
        assert_eq!(polylines(&svg, SENT), 1 + 1, "the sent line and its legend mark");
    }

    #[test]
    fn a_day_reads_in_hours_and_stays_small() {
        let mut shape = Shape::new(&[(2.0e6, 6.0 * 3600.0), (1.0e6, 18.0 * 3600.0 - 1.0)]);
        (shape.noise, shape.allowance_from) = (Noise::Uniform(0.02), Some(6.0 * 3600.0 + 0.4));
        let series = shape.series(Series::DEFAULT_MAX_ROWS);
        assert_eq!(series.len(), 86_400);
        let a = analyse(&series, &Thresholds::default());
        let svg = svg(&series, &a, "a day");
        assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
        let t = texts(&svg);
        for want in
            ["a day", "received Mpps", "sent Mpps", "detected change", "onset: pps_allowance_exceeded", "time since the run began (h)"]
        {
            has(&t, want);
        }
        // The hour labels: a few, whole hours.
        let hours: Vec<f64> = t.iter().filter_map(|x| x.parse::<f64>().ok()).filter(|h| (0.0..=24.0).contains(h)).collect();
        assert!(hours.contains(&0.0) && hours.contains(&10.0), "{t:?}");
        assert_eq!(polylines(&svg, RECEIVED), 2);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let longest = doc.descendants().filter_map(|n| n.attribute("points")).map(|p| p.split(' ').count()).max().unwrap();
        assert!(longest <= MAX_POINTS, "{longest} points");
        // Whole hours, at most ~10 a panel (two panels).
        let labels: Vec<&str> = doc
            .descendants()
            .filter(|n| n.is_element())
            .filter_map(|n| n.text())
            .map(str::trim)
            .filter(|x| x.parse::<u32>().is_ok())
            .collect();
        assert!((2 * 3..=2 * 11).contains(&labels.len()), "{labels:?}");
    }

    #[test]
    fn an_hour_reads_in_minutes_and_a_steady_run_has_no_marks() {
        let mut shape = Shape::new(&[(1.0e6, 3600.0)]);
        (shape.received, shape.sent) = (false, true);
        let series = shape.series(Series::DEFAULT_MAX_ROWS);
        let a = analyse(&series, &Thresholds::default());
        assert!(a.changes.is_empty(), "{}", a.sentence);
        let t = texts(&svg(&series, &a, "an hour"));
        has(&t, "time since the run began (min)");
        has(&t, "sent Mpps");
        assert!(!t.iter().any(|x| x == "received Mpps" || x.starts_with("detected change")), "{t:?}");
        assert!(!t.iter().any(|x| x == "loss per interval"), "{t:?}");
        assert_eq!(shows(&series, &a), "sent Mpps over time");
    }

    /// A series with nothing to draw is two lines of words, not an empty frame.
    #[test]
    fn nothing_to_draw_is_said_so() {
        let mut series = Series::new(1.0, Vec::new(), 100);
        assert_eq!(nothing_to_plot(&series), Some("the series has no intervals"));
        series.push(crate::Row { t_s: 1.0, secs: 1.0, ..crate::Row::default() });
        assert_eq!(nothing_to_plot(&series), Some("no interval of the series counted a frame"));
        let a = analyse(&series, &Thresholds::default());
        let t = texts(&svg(&series, &a, "idle"));
        has(&t, "idle");
        has(&t, "no plot: no interval of the series counted a frame");
        assert_eq!(nothing_to_plot(&bucket_sample()), None);
    }

    #[test]
    fn units() {
        assert_eq!(time_unit(60.0).1, "s");
        assert_eq!(time_unit(3600.0).1, "min");
        assert_eq!(time_unit(86_400.0).1, "h");
    }

    /// `BLASTDROP_PLOT_SAMPLES=DIR cargo test -p series samples` writes the
    /// sample pictures there, to look at them.
    #[test]
    fn samples() {
        let Ok(dir) = std::env::var("BLASTDROP_PLOT_SAMPLES") else { return };
        let series = bucket_sample();
        let a = analyse(&series, &Thresholds::default());
        std::fs::write(format!("{dir}/series-bucket.svg"), svg(&series, &a, &a.sentence)).unwrap();
        let mut day = Shape::new(&[(2.0e6, 6.0 * 3600.0), (1.0e6, 18.0 * 3600.0 - 1.0)]);
        (day.noise, day.allowance_from) = (Noise::Uniform(0.02), Some(6.0 * 3600.0 + 0.4));
        let series = day.series(1000);
        let a = analyse(&series, &Thresholds::default());
        std::fs::write(format!("{dir}/series-day.svg"), svg(&series, &a, &a.sentence)).unwrap();
    }
}
