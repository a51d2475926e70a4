//! Ladders: the plan of steps (queue counts x frame sizes) and the analysis
//! users come for: where adding queues stops helping, and at which frame
//! size bandwidth takes over from the packet rate. Rendered as a table, CSV
//! and SVG. The record of each step with both ends' figures is the records
//! crate's (`records::step`), re-exported here. No EAL here: everything is
//! unit-tested on numbers.

mod analysis;
mod plan;
mod plot;
mod stalls;
mod table;

pub use analysis::{crossover, find_ceiling, Ceiling, Crossover, SizeVerdict, ABOVE_PUBLISHED};
pub use plan::{parse_list, DroppedQueues, Fit, Ladder, Order, PlanError, StepSpec};
pub use plot::{line_rate_mpps, render_knee_svg, render_svg, KneePoint, LadderPlot, LatencyPoint, PlotError};
pub use records::step::{spread, AchievedShape, Aggregate, GroupStep, PortStep, Rates, Spread, StepRecord, StepStalls};
pub use stalls::{bunched, BUNCHED_SHARE_NOTED};
pub use table::{burstiness_rank, render_csv, render_table, CSV_HEADER};
