//! What drop received over a run, summed across restarts of its lanes: per
//! queue, per stream, and in all.

use std::collections::BTreeMap;

use seqtrack::SeqCounts;

use crate::counters::Tally;
use crate::rx::RxOutcome;

/// One queue's figures over a run, summed across restarts.
#[derive(Debug, Clone, Default)]
pub struct QueueTotals {
    pub lcore: u32,
    /// Index of the queue's port in --port order.
    pub port: u16,
    pub tally: Tally,
    pub probe: SeqCounts,
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
}

/// Everything received, across restarts.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub tally: Tally,
    pub probe: SeqCounts,
    pub untracked: u64,
    pub queues: BTreeMap<u16, QueueTotals>,
    /// Per (stream id, queue).
    pub streams: BTreeMap<(u16, u16), SeqCounts>,
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
    pub burstiness: crate::rx::Burstiness,
    pub one_way: Option<latency::LatencyHistogram>,
    pub one_way_negative: u64,
    /// --one-way: probes that arrived without a usable NIC timestamp (not
    /// stamped, or before the device clock's first calibration window closed).
    pub one_way_untimed: u64,
    /// --one-way: the clock arrivals were read on, and why not the NIC's when auto fell back.
    pub arrival: Option<latency::ArrivalClock>,
    /// Frames by size (FCS included), and those of sizes beyond a lane's slots.
    pub sizes: BTreeMap<u32, u64>,
    pub sizes_other: u64,
}

impl Totals {
    pub(super) fn absorb(&mut self, queue: u16, port: u16, lcore: u32, o: &RxOutcome) {
        self.tally.add(&o.tally);
        self.probe.add(&o.streams.totals);
        self.untracked += o.streams.untracked;
        let q = self.queues.entry(queue).or_default();
        q.lcore = lcore;
        q.port = port;
        q.tally.add(&o.tally);
        q.probe.add(&o.streams.totals);
        q.first_tsc = min_opt(q.first_tsc, o.first_tsc);
        q.last_tsc = max_opt(q.last_tsc, o.last_tsc);
        for (id, c) in o.streams.active() {
            self.streams.entry((id, queue)).or_default().add(c);
        }
        self.first_tsc = min_opt(self.first_tsc, o.first_tsc);
        self.last_tsc = max_opt(self.last_tsc, o.last_tsc);
        self.burstiness.merge(&o.burstiness);
        if let Some(h) = &o.one_way {
            latency::LatencyHistogram::merge_into(&mut self.one_way, h);
        }
        self.one_way_negative += o.one_way_negative;
        self.one_way_untimed += o.one_way_untimed;
        self.sizes_other += o.sizes.since_into(&crate::counters::SizeCounts::default(), &mut self.sizes);
    }

    /// One port's share: its queues' figures summed (no lcore of its own).
    pub fn port_share(&self, port: u16) -> QueueTotals {
        let mut t = QueueTotals { port, ..Default::default() };
        for q in self.queues.values().filter(|q| q.port == port) {
            t.tally.add(&q.tally);
            t.probe.add(&q.probe);
            t.first_tsc = min_opt(t.first_tsc, q.first_tsc);
            t.last_tsc = max_opt(t.last_tsc, q.last_tsc);
        }
        t
    }

    /// Streams seen on more than one queue.
    pub fn split_streams(&self) -> u32 {
        split_streams(&self.streams)
    }
}

/// Streams seen on more than one queue, of accounts kept per (stream, queue)
/// (their sequence accounting is split): the DPDK receiver's and the sockets'.
pub fn split_streams(streams: &BTreeMap<(u16, u16), SeqCounts>) -> u32 {
    let mut per: BTreeMap<u16, u32> = BTreeMap::new();
    for (id, _) in streams.keys() {
        *per.entry(*id).or_default() += 1;
    }
    per.values().filter(|&&n| n > 1).count() as u32
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}
