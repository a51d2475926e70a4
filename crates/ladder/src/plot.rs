use plotters::prelude::*;

use crate::Aggregate;

/// Two charts in one SVG: received Mpps against queues (one line per frame
/// size), and received Gb/s of frames against frame size (best over queue
/// counts). Medians when steps were repeated. `receiver` says whether the
/// figures are the receiver's (else the sender's, and the labels say so).
/// The plotting backend's failure, in its words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlotError(String);

pub fn render_svg(aggs: &[Aggregate], receiver: bool, title: &str) -> Result<String, PlotError> {
    let mut svg = String::new();
    let side = if receiver { "received" } else { "sent (sender-side)" };
    {
        let root = SVGBackend::with_string(&mut svg, (1200, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| PlotError(e.to_string()))?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(|e| PlotError(e.to_string()))?;
        let (left, right) = root.split_horizontally(600);

        let mut sizes: Vec<u32> = aggs.iter().map(|a| a.size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let max_q = aggs.iter().map(|a| a.queues).max().unwrap_or(1);
        let max_mpps = aggs.iter().map(|a| a.mpps.median).fold(0.0, f64::max).max(1e-3) * 1.1;
        let mut chart = ChartBuilder::on(&left)
            .caption(format!("{side} Mpps against queues"), ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0u32..u32::from(max_q) + 1, 0.0..max_mpps)
            .map_err(|e| PlotError(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("queues")
            .y_desc(format!("{side} Mpps (million frames/s)"))
            .draw()
            .map_err(|e| PlotError(e.to_string()))?;
        // One line per frame size, and per rate and shape when those vary.
        let mut series: Vec<&Aggregate> = Vec::new();
        for a in aggs {
            if !series.iter().any(|s| s.size == a.size && s.same_traffic(a)) {
                series.push(a);
            }
        }
        series.sort_by_key(|s| s.size);
        let traffic_varies = series.iter().any(|s| !s.same_traffic(series[0]));
        for (i, key) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let mut pts: Vec<(u32, f64)> =
                aggs.iter().filter(|a| a.size == key.size && a.same_traffic(key)).map(|a| (u32::from(a.queues), a.mpps.median)).collect();
            pts.sort_by_key(|p| p.0);
            let label = match (traffic_varies, key.offered_mpps) {
                (true, Some(r)) => format!("{} B, {r:.3} Mpps {}", key.size, key.shape),
                (true, None) => format!("{} B, unpaced", key.size),
                (false, _) => format!("{} B frames", key.size),
            };
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| PlotError(e.to_string()))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| PlotError(e.to_string()))?;
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| PlotError(e.to_string()))?;

        let mut best: Vec<(u32, f64)> =
            sizes.iter().map(|&s| (s, aggs.iter().filter(|a| a.size == s).map(|a| a.frame_gbps.median).fold(0.0, f64::max))).collect();
        best.sort_by_key(|b| b.0);
        let max_size = sizes.last().copied().unwrap_or(64);
        let max_gbps = best.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-3) * 1.1;
        let mut chart = ChartBuilder::on(&right)
            .caption(format!("{side} Gb/s against frame size"), ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0u32..max_size + max_size / 20 + 1, 0.0..max_gbps)
            .map_err(|e| PlotError(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("frame size (bytes, FCS included)")
            .y_desc(format!("{side} Gb/s of frames (best over queue counts)"))
            .draw()
            .map_err(|e| PlotError(e.to_string()))?;
        let color = Palette99::pick(0).to_rgba();
        chart
            .draw_series(LineSeries::new(best.clone(), color.stroke_width(2)))
            .map_err(|e| PlotError(e.to_string()))?
            .label(format!("{side} Gb/s"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(best.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| PlotError(e.to_string()))?;
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| PlotError(e.to_string()))?;
        root.present().map_err(|e| PlotError(e.to_string()))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Spread;

    fn agg(q: u16, size: u32, mpps: f64) -> Aggregate {
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
        }
    }

    #[test]
    fn svg_is_xml_with_a_series_per_size_and_labelled_axes() {
        let aggs = [agg(1, 64, 2.0), agg(2, 64, 4.0), agg(1, 1500, 1.0), agg(2, 1500, 1.5)];
        let svg = render_svg(&aggs, true, "test ladder").unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("valid XML");
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).filter(|t| !t.is_empty()).collect();
        for want in ["64 B frames", "1500 B frames", "queues", "frame size (bytes, FCS included)", "received Mpps (million frames/s)"] {
            assert!(texts.contains(&want), "missing {want:?} in {texts:?}");
        }
        let lines = doc.descendants().filter(|n| n.has_tag_name("polyline")).count();
        assert!(lines >= 3, "two size lines and one Gb/s line, got {lines}");
    }
}
