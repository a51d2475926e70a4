//! The parts every SVG chart of blastdrop shares (the ladder's and knee's
//! in crates/ladder, the series' here): the drawing area, the backend's
//! failure, and a legend drawn beside each chart.

use plotters::coord::Shift;
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

/// One legend line's mark.
pub enum Mark {
    Line(RGBColor),
    Dashed(RGBColor),
    Dot(RGBColor),
    Bar(RGBColor),
    Thin(RGBColor),
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
