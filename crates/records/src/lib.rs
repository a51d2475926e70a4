//! The --json records blast and drop write, as types: the header every
//! record begins with and its schema version (`header`), the parts a record
//! embeds that come from the control channel (`window`) and the step's
//! (`step`), and the record of a run that never got its figures (`not_started`). No EAL and no protocol here, so that what reads a record
//! (`blast report`, the ladder tables) depends on neither.

mod header;
pub mod not_started;
pub mod step;
pub mod window;

pub use header::{
    check_schema_version, schema_of, AsGiven, Config, ConfigBelow, Mode, NoMode, Record, VersionError, KNOWN_SCHEMA_VERSIONS,
    SCHEMA_VERSION, VERSION,
};
