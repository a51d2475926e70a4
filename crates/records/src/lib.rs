//! The --json records blast and drop write, as types: the header every
//! record begins with and its schema version (`header`), each kind's whole
//! record (`single`, `ladder`, `knee`, `replay`, `drop`, `not_started`), and
//! the parts they share: the environment (`environment`), a step's record
//! (`step`), the figures from the control channel (`window`), the ladder's
//! plan (`plan`), a lane's cost and a port's counters (`figures`). blast and
//! drop write these types and `blast report` reads them back: one type per
//! kind, written and read by the same code. No EAL and no protocol here, so
//! that what reads a record depends on neither.

pub mod b2b;
pub mod drop;
pub mod environment;
pub mod figures;
mod header;
pub mod knee;
pub mod ladder;
pub mod mlr;
pub mod not_started;
pub mod paths;
pub mod plan;
pub mod replay;
pub mod single;
pub mod step;
pub mod window;

pub use header::{
    check_schema_version, schema_of, AsGiven, Config, ConfigBelow, Mode, NoMode, Record, VersionError, KNOWN_SCHEMA_VERSIONS,
    SCHEMA_VERSION, VERSION,
};
