//! What both binaries share that speaks in their flags' terms: the
//! command line (`cli`), and each library error turned into the one line a
//! user reads and an exit code (`fail`). The library (src/, outside
//! src/bin) knows neither flags nor exit codes. Each binary includes this
//! module (`#[path]`); each uses only part of it.

pub mod cli;
pub mod fail;
