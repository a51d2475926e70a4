//! A run's figures over time, one row per interval, kept as columns in
//! bounded memory; the changes found in them, each with its evidence; and
//! their plot. No EAL: unit-tested on recorded and synthetic series.
//!
//! - [`store`]: [`Row`], [`Series`] (columns, bounded: see its memory note),
//!   serialized compactly as columns.
//! - [`csv`]: [`CsvSink`], a line per interval, flushed as it goes.
//! - [`detect`]: [`analyse`], the rate's changes, counter onsets and a
//!   credit bucket, by the rules in its module doc.
//! - [`plot`]: [`svg`], the picture; [`chart`]: the parts every chart of
//!   blastdrop shares (the ladder's too).

pub mod chart;
pub mod csv;
pub mod detect;
pub mod plot;
pub mod store;
#[cfg(test)]
mod synth;

pub use crate::csv::CsvSink;
pub use detect::{
    analyse, Analysis, Bucket, Change, Onset, SenderFall, SizeChange, Thresholds, SENDER_HOST_STALL, SENDER_PUSHED_BACK, SENDER_UNHINDERED,
};
pub use plot::{nothing_to_plot, shows, svg};
pub use store::{Count, CounterKind, Row, Series};
