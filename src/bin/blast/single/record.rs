//! A single step's JSON record: the sender-side summary with each port,
//! queue and stream, the shape achieved, stalls and round trips.

use crate::settings::AsGiven;

pub use records::single::{PortCounters, QueueSummary, SingleBody, StreamSummary, Summary};

/// The record: the header every record begins with, then the step's own.
pub type Record<'a> = records::single::SingleRecord<&'a AsGiven<'a>>;

/// The JSON schema of a single step's record.
pub fn schema() -> schemars::Schema {
    records::schema_of::<Record<'static>>()
}
