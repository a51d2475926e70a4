//! One mempool per queue, on its port's NUMA node: each TX queue's pool
//! holds that queue's frame template, MBUF_FAST_FREE wants a pool per
//! queue, and an RX queue whose pool runs dry starves no other.

use dpdk::{Mempool, PoolSizing, Port};
use layout::Spread;

use crate::error::Error;

/// A pool per queue of `spread` (by global queue id), named
/// `bd_{tag}_{port id}_{local queue}`; `port(p)` is the port at index `p`.
pub fn queue_pools<'a>(tag: &str, spread: Spread, sizing: &PoolSizing, port: impl Fn(u16) -> &'a Port) -> Result<Vec<Mempool>, Error> {
    (0..spread.queues)
        .map(|q| {
            let (p, local) = spread.port_of(q);
            let port = port(p);
            Ok(Mempool::create(&format!("bd_{tag}_{}_{local}", port.id()), sizing, port.socket())?)
        })
        .collect()
}
