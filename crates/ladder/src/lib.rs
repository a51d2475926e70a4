//! Ladders: the plan of steps (queue counts x frame sizes) and the analysis
//! users come for: where adding queues stops helping, and at which frame
//! size bandwidth takes over from the packet rate. Rendered as a table, CSV
//! and SVG. The record of each step with both ends' figures is the records
//! crate's (`records::step`), re-exported here. No EAL here: everything is
//! unit-tested on numbers.

mod analysis;
pub mod drawn;
mod knee_plot;
mod plot;
mod stalls;
mod table;

pub use analysis::{crossover, find_ceiling};
pub use knee_plot::{in_drawing_order, render_knee_svg, KneePoint, NDR_COLOR, PDR_COLOR};
pub use plot::{
    line_rate_mpps, render_svg, series_marker, verdict_color, verdict_words, LadderPlot, LatencyPoint, Picture, Plot, PlotError,
    JOINED_COLOR, JOIN_PX,
};
pub use records::ladder::{Ceiling, Crossover, SizeVerdict, ABOVE_PUBLISHED};
pub use records::plan::{parse_list, DroppedQueues, Fit, Ladder, Order, PlanError, StepSpec};
pub use records::step::{spread, AchievedShape, Aggregate, CrossCheck, GroupStep, PortStep, Rates, Spread, StepRecord, StepStalls};
pub use stalls::{bunched, BUNCHED_SHARE_NOTED};
pub use table::{burstiness_rank, render_csv, render_table, CSV_HEADER};
