//! The data-plane wing both tools stand on: their ports (`ports`), one
//! mempool per queue (`pools`), and the lanes on their lcores with the queue
//! handles they borrow (`lanes`). The sender and the receiver keep only what
//! a step of theirs means; the loops themselves are in `tx/` and `rx/`.

pub mod lanes;
pub mod pools;
pub mod ports;

pub use lanes::{Joined, Lanes, QueueHome, Running};
pub use pools::{pool_records, queue_pools};
pub use ports::{configure, open_ports, watch_text, PlanePort};
