//! One mempool per queue, on its port's NUMA node: each TX queue's pool
//! holds that queue's frame template, MBUF_FAST_FREE wants a pool per
//! queue, and an RX queue whose pool runs dry starves no other.

use dpdk::{Mempool, PoolSizing, Port};
use layout::Spread;

use crate::environment_record::{mempool_record, MempoolRecord};
use crate::error::Error;

/// A pool per queue of `spread` (by global queue id), named
/// `bd_{tag}_{port id}_{local queue}`; `port(p)` is the port at index `p`,
/// `sizing(port)` the pools' sizing on it (a port's driver may have rules
/// of its own: dpdk::af_xdp).
pub fn queue_pools<'a>(
    tag: &str,
    spread: Spread,
    sizing: impl Fn(&Port) -> PoolSizing,
    port: impl Fn(u16) -> &'a Port,
) -> Result<Vec<(Mempool, PoolSizing)>, Error> {
    (0..spread.queues)
        .map(|q| {
            let (p, local) = spread.port_of(q);
            let port = port(p);
            let sizing = sizing(port);
            Ok((Mempool::create(&format!("bd_{tag}_{}_{local}", port.id()), &sizing, port.socket())?, sizing))
        })
        .collect()
}

/// The records of `pools` as made, one per shape in the order first met
/// (ports whose drivers size pools alike share one).
pub fn pool_records<'a>(pools: impl IntoIterator<Item = (&'a Mempool, &'a PoolSizing)>) -> Vec<MempoolRecord> {
    let mut out: Vec<(PoolSizing, MempoolRecord)> = Vec::new();
    for (pool, sizing) in pools {
        // The data room a chunked pool's objects leave is known once made.
        let made = PoolSizing { data_room: pool.data_room(), ..*sizing };
        match out.iter_mut().find(|(s, _)| *s == made) {
            Some((_, r)) => {
                r.bytes_total += r.bytes_total / u64::from(r.pools);
                r.pools += 1;
            }
            None => out.push((made, mempool_record(1, &made))),
        }
    }
    out.into_iter().map(|(_, r)| r).collect()
}
