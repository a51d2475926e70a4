//! The layout of one step, worked out once: which port each global queue
//! runs on, which streams (queue, UDP source port) each queue sends, and each
//! queue's share of the step's frame count and rate. The sender, the
//! receiver, the verdicts and the record all read the same [`StepLayout`],
//! so the split is never computed two ways. No EAL here.

mod flows;
pub mod ports;
mod step;

pub use flows::{FlowPlan, Stream};
pub use ports::Spread;
pub use step::{LayoutError, QueueSlot, StepLayout};
