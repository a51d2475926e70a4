//! What a rendered chart shows, read back from its SVG: its points and its
//! words. Tests check a picture on what it draws (each point's fill is its
//! step's verdict colour, the sizes' markers differ, a label is there),
//! not only on the figures it was drawn from.
//!
//! A point is what [`series::chart::marker`] draws: a filled shape followed
//! by its outline with the same centre or corners. Legend keys are drawn
//! hollow (filled white) and are left out.

use plotters::style::RGBColor;
use series::chart::Shape;

/// One point of a chart as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnPoint {
    pub shape: Shape,
    pub fill: RGBColor,
    pub outline: RGBColor,
    /// Its centre in the picture's pixels (a triangle's: its bounding box's).
    pub x: f64,
    pub y: f64,
    /// Its half-size in pixels (the circle's radius, half a side's length).
    pub size: f64,
}

/// One text of a chart, where it is and how it is anchored.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnText {
    pub text: String,
    pub x: f64,
    pub y: f64,
    /// "start", "middle" or "end" (SVG's text-anchor).
    pub anchor: String,
    pub fill: Option<RGBColor>,
}

/// "#FF7F0E" as a colour.
fn color(s: &str) -> Option<RGBColor> {
    let h = s.strip_prefix('#').filter(|h| h.len() == 6)?;
    let c = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).ok();
    Some(RGBColor(c(0)?, c(2)?, c(4)?))
}

fn num(n: roxmltree::Node, name: &str) -> f64 {
    n.attribute(name).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// A polygon's or polyline's corners.
fn corners(n: roxmltree::Node) -> Vec<(f64, f64)> {
    let pts = n.attribute("points").unwrap_or("");
    pts.split_whitespace()
        .filter_map(|p| {
            let (x, y) = p.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

/// A polygon's shape from its corners, with its centre and half-size.
fn polygon_shape(c: &[(f64, f64)]) -> Option<(Shape, f64, f64, f64)> {
    let (xs, ys): (Vec<f64>, Vec<f64>) = c.iter().copied().unzip();
    let (x0, x1) = (xs.iter().copied().fold(f64::MAX, f64::min), xs.iter().copied().fold(f64::MIN, f64::max));
    let (y0, y1) = (ys.iter().copied().fold(f64::MAX, f64::min), ys.iter().copied().fold(f64::MIN, f64::max));
    let at_top = ys.iter().filter(|y| **y == y0).count();
    let shape = match (c.len(), at_top) {
        (4, 2) => Shape::Square,
        (4, _) => Shape::Diamond,
        (3, 1) => Shape::TriangleUp,
        (3, _) => Shape::TriangleDown,
        _ => return None,
    };
    Some((shape, (x0 + x1) / 2.0, (y0 + y1) / 2.0, (x1 - x0) / 2.0))
}

/// The chart's points, in the order drawn; legend keys (filled white) left out.
pub fn drawn_points(svg: &str) -> Result<Vec<DrawnPoint>, String> {
    let doc = roxmltree::Document::parse(svg).map_err(|e| format!("not an SVG: {e}"))?;
    let shapes: Vec<roxmltree::Node> =
        doc.descendants().filter(|n| n.has_tag_name("circle") || n.has_tag_name("polygon") || n.has_tag_name("polyline")).collect();
    let mut out = Vec::new();
    for w in shapes.windows(2) {
        let (body, edge) = (w[0], w[1]);
        let (Some(fill), Some(outline)) = (body.attribute("fill").and_then(color), edge.attribute("stroke").and_then(color)) else {
            continue;
        };
        if edge.attribute("fill") != Some("none") || fill == RGBColor(255, 255, 255) {
            continue;
        }
        let point = match (body.tag_name().name(), edge.tag_name().name()) {
            ("circle", "circle") => {
                let same = ["cx", "cy", "r"].iter().all(|a| num(body, a) == num(edge, a));
                same.then(|| DrawnPoint {
                    shape: Shape::Circle,
                    fill,
                    outline,
                    x: num(body, "cx"),
                    y: num(body, "cy"),
                    size: num(body, "r"),
                })
            }
            ("polygon", "polyline") => {
                let (c, e) = (corners(body), corners(edge));
                let closed = e.len() == c.len() + 1 && e[..c.len()] == c[..] && e.last() == c.first();
                polygon_shape(&c).filter(|_| closed).map(|(shape, x, y, size)| DrawnPoint { shape, fill, outline, x, y, size })
            }
            _ => None,
        };
        out.extend(point);
    }
    Ok(out)
}

/// The chart's words, in the order drawn.
pub fn drawn_texts(svg: &str) -> Result<Vec<DrawnText>, String> {
    let doc = roxmltree::Document::parse(svg).map_err(|e| format!("not an SVG: {e}"))?;
    Ok(doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| DrawnText {
            text: n.text().unwrap_or("").trim().to_string(),
            x: num(n, "x"),
            y: num(n, "y"),
            anchor: n.attribute("text-anchor").unwrap_or("start").to_string(),
            fill: n.attribute("fill").and_then(color),
        })
        .filter(|t| !t.text.is_empty())
        .collect())
}

/// A colour as the SVG writes it ("#FF7F0E").
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}
