//! Ladders: the plan of steps (queue counts x frame sizes), the record of
//! each step with both ends' figures, and the analysis users come for:
//! where adding queues stops helping, and at which frame size bandwidth
//! takes over from the packet rate. Rendered as a table, CSV and SVG.
//! No EAL here: everything is unit-tested on numbers.

mod analysis;
mod plan;
mod plot;
mod rates;
mod record;
mod stalls;
mod table;

pub use analysis::{crossover, find_ceiling, spread, Ceiling, Crossover, SizeVerdict, Spread, ABOVE_PUBLISHED};
pub use plan::{parse_list, DroppedQueues, Fit, Ladder, Order, PlanError, StepSpec};
pub use plot::{line_rate_mpps, render_knee_svg, render_svg, KneePoint, LadderPlot, LatencyPoint, PlotError};
pub use rates::Rates;
pub use record::{AchievedShape, Aggregate, GroupStep, PortStep, StepRecord};
pub use stalls::{bunched, StepStalls, BUNCHED_SHARE_NOTED};
pub use table::{burstiness_rank, render_csv, render_table, CSV_HEADER};
