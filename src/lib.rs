//! What `blast` and `drop` share: argument parsing helpers, EAL start-up
//! with useful errors, per-lcore counters, the send and receive loops, and
//! the live lines and the final records.

pub mod attribution;
pub mod clock;
pub mod counters;
pub mod eal_args;
pub mod ec2_metadata;
pub mod environment;
pub mod environment_record;
pub mod error;
pub mod events;
pub mod figures;
pub mod host;
pub mod live;
pub mod live_latency;
pub mod out;
pub mod plane;
pub mod receiver;
pub mod record_file;
pub mod rx;
pub mod sender;
pub mod session;
pub mod signals;
pub mod socket_rx;
pub mod socket_tx;
pub mod timeline;
pub mod trial;
pub mod tx;
pub mod unfinished;
pub mod units;
pub mod xdp;
pub mod xstats;

pub use error::Error;

/// Upper bound on `--burst`: the loops keep their mbuf arrays on the stack.
pub const MAX_BURST: usize = 512;
