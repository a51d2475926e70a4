//! The parts every SVG chart of blastdrop shares (the ladder's and knee's
//! in crates/ladder, the series' here): the drawing area, the backend's
//! failure, and a legend drawn beside each chart.

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The plotting backend's failure, in its words.
#[derive(Debug)]
pub struct PlotError(pub String);

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

/// Any backend error as a `PlotError`.
pub fn err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError(e.to_string())
}

/// Series colours (a ladder's frame sizes, a comparison's paths): muted,
/// apart from the verdicts'.
pub fn series_color(i: usize) -> RGBColor {
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

/// One legend line's mark.
pub enum Mark {
    Line(RGBColor),
    Dashed(RGBColor),
    Dot(RGBColor),
    Bar(RGBColor),
    Thin(RGBColor),
    /// A series: its line with its marker, hollow (the points' fill is their verdict's).
    Series(RGBColor, Shape),
    /// A hollow circle of this radius (a point's size that means something).
    Ring(RGBColor, i32),
    /// Words only, indented like the other lines.
    Note,
}

/// A point's marker shape: with an outline colour, what tells one series
/// (a frame size) from another when the fill is the point's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Diamond,
    TriangleUp,
    TriangleDown,
}

impl Shape {
    pub const ALL: [Shape; 5] = [Shape::Circle, Shape::Square, Shape::Diamond, Shape::TriangleUp, Shape::TriangleDown];

    /// The `i`th series' shape.
    pub fn nth(i: usize) -> Shape {
        Shape::ALL[i % Shape::ALL.len()]
    }

    /// Its corners about its centre in pixels, `r` the half-size; None for the circle.
    pub fn corners(self, r: i32) -> Option<Vec<(i32, i32)>> {
        // The triangles are a little larger, so they look as large as the square.
        let t = r + r / 3;
        match self {
            Shape::Circle => None,
            Shape::Square => Some(vec![(-r, -r), (r, -r), (r, r), (-r, r)]),
            Shape::Diamond => Some(vec![(0, -t), (t, 0), (0, t), (-t, 0)]),
            Shape::TriangleUp => Some(vec![(0, -t), (t, r), (-t, r)]),
            Shape::TriangleDown => Some(vec![(0, t), (t, -r), (-t, -r)]),
        }
    }
}

/// Draws a point at `at` on `area` (a chart's plotting area, or a legend):
/// `shape` filled with `fill`, outlined in `outline` (two SVG elements, the
/// filled one first, with the same corners or centre).
pub fn draw_marker<CT: CoordTranslate>(
    area: &DrawingArea<SVGBackend<'_>, CT>,
    at: CT::From,
    shape: Shape,
    r: i32,
    (fill, outline): (RGBColor, RGBColor),
) -> Result<(), PlotError>
where
    CT::From: Clone,
{
    match shape.corners(r) {
        None => {
            area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), r, fill.filled()) + Circle::new((0, 0), r, outline.stroke_width(2))))
        }
        Some(c) => {
            let closed: Vec<(i32, i32)> = c.iter().chain(c.first()).copied().collect();
            area.draw(&(EmptyElement::at(at) + Polygon::new(c, fill.filled()) + PathElement::new(closed, outline.stroke_width(2))))
        }
    }
    .map_err(err)
}

/// A small picture of two lines of words, in place of a chart that has
/// nothing to show or could not be drawn.
pub fn note_svg(title: &str, words: &str) -> String {
    let esc = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"60\"><text x=\"8\" y=\"20\">{}</text>\
         <text x=\"8\" y=\"44\">{}</text></svg>",
        esc(title),
        esc(words)
    )
}

/// A chart's legend: a title and a mark with its words per line.
pub struct Legend {
    title: String,
    entries: Vec<(Mark, String)>,
}

impl Legend {
    pub fn new(title: impl Into<String>) -> Legend {
        Legend { title: title.into(), entries: Vec::new() }
    }

    pub fn push(&mut self, mark: Mark, label: impl Into<String>) {
        self.entries.push((mark, label.into()));
    }

    /// Drawn in its own area, beside the chart.
    pub fn draw(&self, area: &Area) -> Result<(), PlotError> {
        let font = ("sans-serif", 13).into_font();
        area.draw(&Text::new(self.title.clone(), (8, 40), font.clone().style(FontStyle::Bold))).map_err(err)?;
        for (i, (mark, label)) in self.entries.iter().enumerate() {
            let y = 64 + 20 * i as i32;
            match mark {
                Mark::Line(c) => area.draw(&PathElement::new(vec![(8, y), (30, y)], c.stroke_width(2))).map_err(err)?,
                Mark::Dashed(c) => {
                    for (a, b) in [(8, 14), (18, 24), (28, 30)] {
                        area.draw(&PathElement::new(vec![(a, y), (b, y)], c.stroke_width(2))).map_err(err)?;
                    }
                }
                Mark::Dot(c) => area.draw(&Circle::new((19, y), 5, c.filled())).map_err(err)?,
                Mark::Bar(c) => area.draw(&PathElement::new(vec![(19, y - 7), (19, y + 7)], c.stroke_width(1))).map_err(err)?,
                Mark::Thin(c) => area.draw(&PathElement::new(vec![(8, y), (30, y)], c.stroke_width(1))).map_err(err)?,
                Mark::Series(c, shape) => {
                    area.draw(&PathElement::new(vec![(4, y), (34, y)], c.stroke_width(2))).map_err(err)?;
                    draw_marker(area, (19, y), *shape, 5, (WHITE, *c))?;
                }
                Mark::Ring(c, r) => area.draw(&Circle::new((19, y), *r, c.stroke_width(1))).map_err(err)?,
                Mark::Note => {}
            }
            area.draw(&Text::new(label.clone(), (38, y - 7), font.clone())).map_err(err)?;
        }
        Ok(())
    }
}

/// A panel: the chart's area and its legend's (`legend_px` wide), side by side.
pub fn panel<'a>(area: &Area<'a>, legend_px: u32) -> (Area<'a>, Area<'a>) {
    let w = area.dim_in_pixel().0;
    area.split_horizontally(w.saturating_sub(legend_px))
}
