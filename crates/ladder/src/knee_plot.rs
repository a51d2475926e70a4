//! The knee's SVG chart: loss against offered rate, one point per trial
//! filled with its verdict's colour (confirmations larger), the NDR and PDR
//! marked by vertical lines labelled on the chart as well as in the legend;
//! lines closer than [`JOIN_PX`] are drawn as one line with one label that
//! names both ("NDR = PDR = 0.197 Mpps"), so neither hides the other. And
//! latency under load when it was measured. A search without a measured
//! trial is not drawn: [`Plot::Nothing`] says why.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use limits::VerdictClass;
use series::chart::{draw_marker, err, Area, Legend, Mark, PlotError, Shape};

use crate::plot::{join_within, latency_against_load, legend_line, legend_verdicts, linear_chart, panel, verdict_color, verdict_phrase};
use crate::plot::{LatencyPoint, Linear, Picture, Plot};
use crate::plot::{JOINED_COLOR, JOIN_PX};

/// One knee trial: where it was offered (or counted), its loss and verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct KneePoint {
    pub offered_mpps: f64,
    pub loss_pct: f64,
    pub class: VerdictClass,
    /// A confirmation (full-length) trial, drawn larger than a search trial.
    pub confirmation: bool,
}

impl KneePoint {
    /// A trial's point: at the rate it was counted at (what the sender
    /// delivered, when it fell short), else offered, else sent; None for a
    /// failed trial.
    pub fn of(t: &records::knee::Trial) -> Option<KneePoint> {
        t.step.error.is_none().then(|| KneePoint {
            offered_mpps: t.counted_at_mpps.or(t.step.offered_mpps).unwrap_or(t.step.sent.mpps),
            loss_pct: t.step.loss_pct.unwrap_or(0.0),
            class: t.step.class(),
            confirmation: t.kind == knee::TrialKind::Confirm,
        })
    }
}

/// The NDR's and PDR's own colours: apart from every verdict's.
pub const NDR_COLOR: RGBColor = RGBColor(0, 128, 128);
pub const PDR_COLOR: RGBColor = RGBColor(160, 82, 45);
/// The half-sizes of a search trial's point and of a confirmation's.
const SEARCH_PX: i32 = 5;
const CONFIRM_PX: i32 = 8;
/// The ring round each trial's point, so points that overlap stay apart.
const POINT_EDGE: RGBColor = WHITE;
const LEGEND_GREY: RGBColor = RGBColor(90, 90, 90);

/// The knee's picture: loss against offered rate, and latency under load
/// when it was measured; nothing when no trial was measured.
pub fn render_knee_svg(
    trials: &[KneePoint],
    ndr: Option<f64>,
    pdr: Option<f64>,
    latency: &[LatencyPoint],
    title: &str,
) -> Result<Plot, PlotError> {
    if trials.is_empty() {
        return Ok(Plot::Nothing("no trial was measured (none ran, or every trial failed)".into()));
    }
    let mut svg = String::new();
    let panels = if latency.is_empty() { 1 } else { 2 };
    let marks;
    {
        let root = SVGBackend::with_string(&mut svg, (700 * panels, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(err)?;
        let areas = root.split_evenly((1, panels as usize));
        marks = loss_against_rate(&areas[0], trials, ndr, pdr)?;
        if let Some(a) = areas.get(1) {
            latency_against_load(a, latency)?;
        }
        root.present().map_err(err)?;
    }
    let classes: Vec<VerdictClass> = trials.iter().map(|t| t.class).collect();
    let latency = if latency.is_empty() { "" } else { "; and the round trip's P50, P99 and P99.9 under load" };
    let caption = format!(
        "Loss against offered rate, one point per trial (confirmations larger), {}; {marks}{latency}",
        verdict_phrase(&classes, "trial")
    );
    Ok(Plot::Drawn(Picture { svg, caption }))
}

/// Draws the trials and the marks; says, for the caption, how the marks were drawn.
fn loss_against_rate(area: &Area, trials: &[KneePoint], ndr: Option<f64>, pdr: Option<f64>) -> Result<String, PlotError> {
    let (chart_area, legend_area) = panel(area);
    let x_max = trials.iter().map(|t| t.offered_mpps).chain(ndr).chain(pdr).fold(0.0, f64::max).max(1e-3) * 1.1;
    // The top ninth stays clear of points: the marks' labels go there.
    let y_max = trials.iter().map(|t| t.loss_pct).fold(0.0, f64::max).max(1.0) * 1.12;
    let x_desc = "offered Mpps (or delivered, when the sender fell short)";
    let mut chart =
        linear_chart(&chart_area, "loss against offered rate (each trial)", 0.0..x_max, 0.0..y_max, x_desc, "loss, % of frames sent")?;
    let mut legend = Legend::new("trials");
    for t in in_drawing_order(trials) {
        let r = if t.confirmation { CONFIRM_PX } else { SEARCH_PX };
        draw_marker(chart.plotting_area(), (t.offered_mpps, t.loss_pct), Shape::Circle, r, (verdict_color(t.class), POINT_EDGE))?;
    }
    legend.push(Mark::Ring(LEGEND_GREY, SEARCH_PX), "search trial");
    legend.push(Mark::Ring(LEGEND_GREY, CONFIRM_PX), "confirmation trial");
    let marks = [("NDR", ndr, NDR_COLOR), ("PDR", pdr, PDR_COLOR)];
    let lines: Vec<RefLine> = marks.iter().filter_map(|&(name, at, color)| Some(RefLine { name, at: at?, color })).collect();
    let missing: Vec<&str> = marks.iter().filter(|m| m.1.is_none()).map(|m| m.0).collect();
    let groups = join_close(&chart, lines);
    draw_marks(&mut chart, &mut legend, &groups, y_max)?;
    for name in &missing {
        legend.push(Mark::Note, format!("(no {name} was found)"));
    }
    legend_verdicts(&mut legend, trials.iter().map(|t| t.class), "the trial");
    legend.draw(&legend_area)?;
    Ok(marks_phrase(&groups, &missing))
}

/// The trials as drawn: the (larger) confirmations first, so a search
/// trial at the same place stays in sight on top of one.
pub fn in_drawing_order(trials: &[KneePoint]) -> impl Iterator<Item = &KneePoint> {
    trials.iter().filter(|t| t.confirmation).chain(trials.iter().filter(|t| !t.confirmation))
}

/// A vertical line that marks a rate.
#[derive(Debug, Clone, PartialEq)]
struct RefLine {
    name: &'static str,
    at: f64,
    color: RGBColor,
}

/// The lines in order of rate, those within JOIN_PX of the first of a
/// group joined to it.
fn join_close(chart: &Linear, lines: Vec<RefLine>) -> Vec<Vec<RefLine>> {
    join_within(lines, |l| l.at, |x| chart.backend_coord(&(x, 0.0)).0)
}

/// A group's label: "NDR 0.188 Mpps"; "NDR = PDR = 0.197 Mpps" when they
/// are written alike; "NDR 0.00670, PDR 0.00679 Mpps" when they differ.
/// Rates are written as results are (never rounded up: knee::mpps_floor).
fn group_label(group: &[RefLine]) -> String {
    let written: Vec<String> = group.iter().map(|l| knee::mpps_floor(l.at)).collect();
    if group.len() == 1 {
        format!("{} {} Mpps", group[0].name, written[0])
    } else if written.iter().all(|w| *w == written[0]) {
        let names: Vec<&str> = group.iter().map(|l| l.name).collect();
        format!("{} = {} Mpps", names.join(" = "), written[0])
    } else {
        let each: Vec<String> = group.iter().zip(&written).map(|(l, w)| format!("{} {w}", l.name)).collect();
        format!("{} Mpps", each.join(", "))
    }
}

/// Each group as one dashed line, labelled at the top of the chart (a row
/// per group, beside its line), and in the legend.
fn draw_marks(chart: &mut Linear, legend: &mut Legend, groups: &[Vec<RefLine>], y_max: f64) -> Result<(), PlotError> {
    let edges = chart.plotting_area().get_pixel_range().0;
    for (row, g) in groups.iter().enumerate() {
        let x = g[0].at;
        let color = if g.len() == 1 { g[0].color } else { JOINED_COLOR };
        chart.draw_series(DashedLineSeries::new(vec![(x, 0.0), (x, y_max)], 6, 4, color.stroke_width(2))).map_err(err)?;
        let label = group_label(g);
        let next = groups.get(row + 1).map(|n| chart.backend_coord(&(n[0].at, 0.0)).0);
        let h = label_side(chart.backend_coord(&(x, 0.0)).0, label_px(&label), next, edges.clone());
        let dx = if matches!(h, HPos::Left) { LABEL_GAP_PX } else { -LABEL_GAP_PX };
        let style = ("sans-serif", LABEL_FONT).into_font().color(&color).pos(Pos::new(h, VPos::Top));
        let y = y_max * (0.99 - 0.045 * row as f64);
        chart.draw_series(std::iter::once(EmptyElement::at((x, y)) + Text::new(label.clone(), (dx, 0), style))).map_err(err)?;
        let parts = g.iter().map(|l| format!("{} {} Mpps", l.name, knee::mpps_floor(l.at))).collect();
        legend_line(legend, color, label, parts);
    }
    Ok(())
}

const LABEL_FONT: f64 = 13.0;
const LABEL_GAP_PX: i32 = 5;

/// A label's width in pixels, generously (the SVG's font is not measured here).
fn label_px(label: &str) -> i32 {
    (label.chars().count() as f64 * LABEL_FONT * 0.55) as i32 + LABEL_GAP_PX
}

/// Which side of its line (at pixel `x`) a label `width` wide goes: to the
/// right (its text starts at the line) when it fits there and crosses no
/// next line, else to the left when it fits there, else to the right.
fn label_side(x: i32, width: i32, next_line: Option<i32>, edges: std::ops::Range<i32>) -> HPos {
    let right_free = x + width <= edges.end && next_line.is_none_or(|n| n > x + width);
    if right_free || x - width < edges.start {
        HPos::Left
    } else {
        HPos::Right
    }
}

/// How the marks were drawn, for the caption.
fn marks_phrase(groups: &[Vec<RefLine>], missing: &[&str]) -> String {
    let names: Vec<&str> = groups.iter().flatten().map(|l| l.name).collect();
    let drawn = match (names.len(), groups.len()) {
        (0, _) => String::new(),
        (1, _) => format!("the {} marked and labelled", names[0]),
        (n, g) if g < n => format!("{} within {JOIN_PX} pixels of each other: one line, labelled with both", names.join(" and ")),
        _ => format!("{} marked, each labelled", names.join(" and ")),
    };
    match (drawn.is_empty(), missing) {
        (_, []) => drawn,
        (true, m) => format!("no {} was found to mark", m.join(" or ")),
        (false, m) => format!("{drawn}; no {} was found", m.join(" or ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawn::{drawn_points, drawn_texts, hex, DrawnText};
    use limits::LimitKind;

    /// A real knee search over memif (the report's test record): its trials'
    /// points, its NDR and PDR.
    fn real_knee() -> (Vec<KneePoint>, Option<f64>, Option<f64>) {
        let v: serde_json::Value = serde_json::from_str(include_str!("../../report/testdata/knee.json")).unwrap();
        let trials: Vec<records::knee::Trial> = serde_json::from_value(v["trials"].clone()).expect("typed trials");
        let (ndr, pdr) = (v["result"]["ndr_mpps"].as_f64(), v["result"]["pdr_mpps"].as_f64());
        (trials.iter().filter_map(KneePoint::of).collect(), ndr, pdr)
    }

    fn drawn(plot: Plot) -> Picture {
        match plot {
            Plot::Drawn(p) => p,
            Plot::Nothing(why) => panic!("no plot: {why}"),
        }
    }

    /// The texts in `color`.
    fn in_color(svg: &str, color: RGBColor) -> Vec<DrawnText> {
        drawn_texts(svg).unwrap().into_iter().filter(|t| t.fill == Some(color)).collect()
    }

    /// The texts that read `words`, in the order drawn (the chart's first, then the legend's).
    fn labelled(svg: &str, words: &str) -> Vec<DrawnText> {
        drawn_texts(svg).unwrap().into_iter().filter(|t| t.text == words).collect()
    }

    /// The pieces of lines drawn in `color` (the chart's and the legend's keys).
    fn dashes(svg: &str, color: RGBColor) -> usize {
        let doc = roxmltree::Document::parse(svg).unwrap();
        doc.descendants().filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(&hex(color))).count()
    }

    /// Each trial of the real search is drawn once, in order, filled with
    /// its typed verdict's colour; the legend names each class, never "n/a".
    #[test]
    fn a_real_knees_trials_are_filled_with_their_verdicts() {
        let (points, ndr, pdr) = real_knee();
        let p = drawn(render_knee_svg(&points, ndr, pdr, &[], "knee").unwrap());
        let drawn = drawn_points(&p.svg).unwrap();
        assert_eq!(drawn.len(), points.len());
        for (d, t) in drawn.iter().zip(in_drawing_order(&points)) {
            assert_eq!(d.fill, verdict_color(t.class), "{t:?}");
            assert_eq!(d.size, f64::from(if t.confirmation { CONFIRM_PX } else { SEARCH_PX }), "{t:?}");
        }
        let words: Vec<String> = drawn_texts(&p.svg).unwrap().into_iter().map(|t| t.text).collect();
        for t in &points {
            assert!(words.contains(&crate::verdict_words(t.class)), "{words:?}");
        }
        assert!(!words.iter().any(|w| w.contains("n/a")), "{words:?}");
        assert!(p.caption.contains("each trial filled with its verdict's colour"), "{}", p.caption);
    }

    /// The real NDR (0.188) and PDR (0.197) are 16 px apart: two lines, each
    /// labelled on its own row, on the side with room.
    #[test]
    fn apart_the_ndr_and_pdr_are_labelled_each() {
        let (points, ndr, pdr) = real_knee();
        let p = drawn(render_knee_svg(&points, ndr, pdr, &[], "knee").unwrap());
        // On the chart in the line's colour; in the legend too.
        let (n, d) = (in_color(&p.svg, NDR_COLOR), in_color(&p.svg, PDR_COLOR));
        assert_eq!(n.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["NDR 0.188 Mpps"]);
        assert_eq!(d.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["PDR 0.197 Mpps"]);
        assert_eq!(labelled(&p.svg, "NDR 0.188 Mpps").len(), 2);
        assert_eq!(labelled(&p.svg, "PDR 0.197 Mpps").len(), 2);
        // On the chart: rows apart; near the right edge, so both to the left of their lines.
        assert!((n[0].y - d[0].y).abs() >= 13.0, "{n:?} {d:?}");
        assert_eq!((n[0].anchor.as_str(), d[0].anchor.as_str()), ("end", "end"));
        assert!(dashes(&p.svg, NDR_COLOR) > 2 && dashes(&p.svg, PDR_COLOR) > 2);
        assert!(p.caption.contains("NDR and PDR marked, each labelled"), "{}", p.caption);
    }

    /// Equal, one line and one label: "NDR = PDR = ..."; a pixel apart (an
    /// af_packet knee's 0.0067 and 0.00679 on a 0.2 Mpps axis), one line
    /// labelled with both rates, never rounded up.
    #[test]
    fn close_ndr_and_pdr_are_one_line_labelled_with_both() {
        let (points, _, pdr) = real_knee();
        let p = drawn(render_knee_svg(&points, pdr, pdr, &[], "knee").unwrap());
        let joined = labelled(&p.svg, "NDR = PDR = 0.197 Mpps");
        assert_eq!(joined.len(), 2, "on the chart and in the legend");
        assert_eq!(joined[0].fill, Some(JOINED_COLOR));
        assert_eq!(dashes(&p.svg, NDR_COLOR) + dashes(&p.svg, PDR_COLOR), 0, "no line of their own colours");
        assert!(p.caption.contains("NDR and PDR within 8 pixels of each other: one line, labelled with both"), "{}", p.caption);

        let p = drawn(render_knee_svg(&points, Some(0.0067), Some(0.00679), &[], "knee").unwrap());
        let joined = labelled(&p.svg, "NDR 0.00670, PDR 0.00679 Mpps");
        assert_eq!(joined.len(), 1, "on the chart; the legend has a line for each");
        assert_eq!(joined[0].anchor, "start", "near the left edge, the label goes right of its line");
        for each in ["NDR 0.00670 Mpps", "PDR 0.00679 Mpps", "(one line: within 8 px)"] {
            assert_eq!(labelled(&p.svg, each).len(), 1, "{each} in the legend");
        }
        assert_eq!(dashes(&p.svg, NDR_COLOR) + dashes(&p.svg, PDR_COLOR), 0, "no line of their own colours");
    }

    #[test]
    fn a_search_without_a_measured_trial_is_not_drawn() {
        let Plot::Nothing(why) = render_knee_svg(&[], None, None, &[], "k").unwrap() else { panic!("an empty frame drawn") };
        assert_eq!(why, "no trial was measured (none ran, or every trial failed)");
        let one = [KneePoint { offered_mpps: 1.0, loss_pct: 3.0, class: VerdictClass::Limit(LimitKind::Receiver), confirmation: false }];
        let p = drawn(render_knee_svg(&one, None, None, &[], "k").unwrap());
        assert!(p.caption.contains("no NDR or PDR was found to mark"), "{}", p.caption);
        let p = drawn(render_knee_svg(&one, Some(0.5), None, &[], "k").unwrap());
        assert!(p.caption.contains("the NDR marked and labelled; no PDR was found"), "{}", p.caption);
        let words: Vec<String> = drawn_texts(&p.svg).unwrap().into_iter().map(|t| t.text).collect();
        assert!(words.contains(&"(no PDR was found)".to_string()), "{words:?}");
    }

    #[test]
    fn latency_under_load_gets_its_panel() {
        let (points, ndr, pdr) = real_knee();
        let lat = vec![
            LatencyPoint { offered_mpps: 0.1, p50_us: 2.0, p99_us: 9.0, p99_9_us: 20.0, series: "even".into() },
            LatencyPoint { offered_mpps: 0.15, p50_us: 3.0, p99_us: 15.0, p99_9_us: 40.0, series: "even".into() },
        ];
        let p = drawn(render_knee_svg(&points, ndr, pdr, &lat, "knee").unwrap());
        let words: Vec<String> = drawn_texts(&p.svg).unwrap().into_iter().map(|t| t.text).collect();
        for want in ["loss, % of frames sent", "round trip against offered load", "confirmation trial", "search trial"] {
            assert!(words.iter().any(|x| x == want), "missing {want:?} in {words:?}");
        }
        assert!(p.caption.ends_with("; and the round trip's P50, P99 and P99.9 under load"), "{}", p.caption);
    }

    /// `BLASTDROP_PLOT_SAMPLES=DIR cargo test -p ladder samples` writes the
    /// synthetic knee and the report's real one there, to look at them.
    #[test]
    fn samples() {
        let Ok(dir) = std::env::var("BLASTDROP_PLOT_SAMPLES") else { return };
        let (none, receiver) = (VerdictClass::Limit(LimitKind::None), VerdictClass::Limit(LimitKind::Receiver));
        let trial = |offered_mpps, loss_pct, class, confirmation| KneePoint { offered_mpps, loss_pct, class, confirmation };
        let trials = vec![
            trial(8.0, 35.0, receiver, false),
            trial(4.0, 0.0, none, false),
            trial(6.0, 4.0, receiver, false),
            trial(5.0, 0.2, receiver, false),
            trial(4.5, 0.0, none, false),
            trial(4.5, 0.0, none, true),
            trial(5.0, 0.3, receiver, true),
        ];
        let lat = vec![
            LatencyPoint { offered_mpps: 0.1, p50_us: 2.4, p99_us: 18.0, p99_9_us: 40.0, series: "even".into() },
            LatencyPoint { offered_mpps: 1.0, p50_us: 3.1, p99_us: 22.0, p99_9_us: 60.0, series: "even".into() },
        ];
        let svg = render_knee_svg(&trials, Some(4.5), Some(5.0), &lat, "sample knee").unwrap().into_svg("");
        std::fs::write(format!("{dir}/knee.svg"), svg).unwrap();
        let (points, ndr, pdr) = real_knee();
        std::fs::write(format!("{dir}/real-knee.svg"), render_knee_svg(&points, ndr, pdr, &[], "real knee").unwrap().into_svg("")).unwrap();
    }
}
