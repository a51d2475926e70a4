//! Latency against rate, a line per path, each path's knee a dashed
//! vertical line in its colour: where a path's latency climbs, and whether
//! that is past its knee.

use plotters::prelude::*;
use series::chart::{panel, series_color as path_color, Legend, Mark};

use crate::{mpps, Comparison, Standing};

/// One line of the plot: a path's P99 at each rate of `shape` (points
/// whose run failed or that have no latency are left out).
pub fn p99_line(c: &Comparison, shape: &str, path: &str) -> Vec<(f64, f64)> {
    c.rows
        .iter()
        .filter(|r| r.shape == shape)
        .filter_map(|r| {
            let cell = r.cells.iter().find(|x| x.path == path)?;
            let p = cell.point.as_ref().filter(|p| p.error.is_none())?;
            let l = p.latency.as_ref().filter(|l| l.samples > 0)?;
            Some((r.rate_mpps, l.p99_us))
        })
        .collect()
}

/// A path's line: its index (its colour), name and points.
type Line<'a> = (usize, &'a String, Vec<(f64, f64)>);

/// The SVG of P99 latency against offered rate at `shape` (log-log), or
/// None when no path has a latency there.
pub fn render_latency_svg(c: &Comparison, shape: &str) -> Result<Option<String>, String> {
    let paths: Vec<String> = c.rows.first().map(|r| r.cells.iter().map(|x| x.path.clone()).collect()).unwrap_or_default();
    let lines: Vec<Line> = paths.iter().enumerate().map(|(i, p)| (i, p, p99_line(c, shape, p))).collect();
    let all: Vec<(f64, f64)> = lines.iter().flat_map(|l| l.2.iter().copied()).collect();
    if all.is_empty() {
        return Ok(None);
    }
    let knees: Vec<(usize, &String, f64, String)> = lines
        .iter()
        .filter_map(|(i, p, _)| {
            let cell = c.rows.iter().filter(|r| r.shape == shape).flat_map(|r| r.cells.iter()).find(|x| &x.path == *p)?;
            Some((*i, *p, cell.knee_mpps?, crate::knee_text(cell)))
        })
        .collect();
    let xs = all.iter().map(|p| p.0).chain(knees.iter().map(|k| k.2)).filter(|v| *v > 0.0);
    let (x_lo, x_hi) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (y_lo, y_hi) = all.iter().map(|p| p.1).filter(|v| *v > 0.0).fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if x_lo > x_hi || y_lo > y_hi {
        return Ok(None);
    }
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        // The legend beside the chart, never over its points or knees.
        let (plot_area, legend_area) = panel(&root, 280);
        let mut legend = Legend::new("paths");
        let (y_from, y_to) = (10f64.powf(y_lo.log10().floor()), 10f64.powf(y_hi.log10().ceil()));
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(
                format!("P99 latency against offered rate, shape {shape}: each dashed line is a path's knee, a hollow point is past it"),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((x_lo / 1.5..x_hi * 1.5).log_scale(), (y_from..y_to).log_scale())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("offered rate, Mpps (log)")
            .y_desc("P99 latency, us (log)")
            .y_labels(12)
            .x_label_formatter(&|v| mpps(*v))
            .y_label_formatter(&|v| if *v >= 10.0 { format!("{v:.0}") } else { format!("{v:.1}") })
            .draw()
            .map_err(|e| err(&e))?;
        for (i, name, line) in &lines {
            let color = path_color(*i);
            let past = |x: f64| {
                c.rows
                    .iter()
                    .find(|r| r.shape == shape && r.rate_mpps == x)
                    .and_then(|r| r.cells.iter().find(|cell| &cell.path == *name))
                    .is_some_and(|cell| cell.standing == Standing::Past)
            };
            chart.draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2))).map_err(|e| err(&e))?;
            legend.push(Mark::Line(color), name.to_string());
            // A point past the path's knee is hollow: its latency is the path's saturation.
            chart
                .draw_series(line.iter().map(|&(x, y)| {
                    let style = if past(x) { color.stroke_width(2) } else { color.filled() };
                    Circle::new((x, y), 5, style)
                }))
                .map_err(|e| err(&e))?;
        }
        for (i, name, k, said) in &knees {
            let color = path_color(*i);
            let (lo, hi) = (y_from, y_to);
            let steps = 24;
            let dashes = (0..steps).step_by(2).map(|s| {
                let at = |s: usize| lo * (hi / lo).powf(s as f64 / steps as f64);
                PathElement::new(vec![(*k, at(s)), (*k, at(s + 1))], color.stroke_width(1))
            });
            chart.draw_series(dashes).map_err(|e| err(&e))?;
            legend.push(Mark::Dashed(color), format!("{name} knee: {said} Mpps"));
        }
        legend.push(Mark::Note, "filled point: below the knee".to_string());
        legend.push(Mark::Note, "hollow point: past the knee".to_string());
        legend.draw(&legend_area).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(Some(svg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_has_its_line_and_its_knee_and_points_past_the_knee_are_hollow() {
        let c = crate::compare(&crate::tests::two());
        assert_eq!(p99_line(&c, "even", "socket"), vec![(0.1, 26.0), (0.8, 30.0), (1.2, 1000.0)]);
        let svg = render_latency_svg(&c, "even").unwrap().unwrap();
        assert!(svg.contains("socket knee: 0.900 Mpps") && svg.contains("dpdk knee: 2.00 Mpps"), "{svg}");
        let mut lower_bound = crate::tests::two();
        lower_bound[0].knees[0].at_least = true;
        let svg = render_latency_svg(&crate::compare(&lower_bound), "even").unwrap().unwrap();
        assert!(svg.contains("dpdk knee: at least 2.00 Mpps"), "a lower bound is said to be one");
        let teal = "#008080";
        let brown = "#A0522D";
        assert!(svg.contains(teal) && svg.contains(brown), "a colour per path");
        // The socket path's point at 1.2 Mpps is past its knee: one hollow circle (stroke, no fill) in its colour.
        let circles: Vec<&str> = svg.split("<circle").skip(1).map(|c| c.split("/>").next().unwrap_or("")).collect();
        let hollow: Vec<&&str> = circles.iter().filter(|c| c.contains("fill=\"none\"")).collect();
        assert_eq!(hollow.len(), 1, "{circles:?}");
        assert!(hollow[0].contains(brown), "{hollow:?}");
        assert_eq!(render_latency_svg(&c, "burst:8").unwrap(), None, "no line at a shape not measured");
    }
}
