//! Per-lcore counters, each lcore's in its own cache lines.
//!
//! The lcore is the only writer: it keeps plain totals in a local
//! [`Tally`] and publishes them with relaxed stores once per burst (no
//! locked instructions). The main thread reads them about once a second.

use control::{BlockCounts, STREAM_BLOCKS};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Plain totals an lcore keeps while it works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Frames handed over: accepted by tx_burst (sender) or received (receiver).
    pub packets: u64,
    /// Their bytes, FCS included.
    pub bytes: u64,
    /// Cycles spent working (not waiting on the pacer, not on empty polls).
    pub busy_cycles: u64,
    /// Sender: tx_burst calls that took fewer frames than offered (ring full).
    pub ring_full_retries: u64,
    /// Sender: bulk allocations that failed (pool empty).
    pub alloc_failures: u64,
    /// Receiver: frames with no probe header.
    pub no_probe: u64,
    pub lost: u64,
    pub reordered: u64,
    pub duplicates: u64,
    pub late: u64,
    /// Receiver: probes whose stream id was beyond the stream table.
    pub untracked: u64,
    /// Receiver: polls that returned nothing.
    pub empty_polls: u64,
    /// Receiver: polls that returned frames.
    pub bursts: u64,
    /// Receiver in reflect mode: frames the TX queue would not take back.
    pub reflect_drops: u64,
    /// Bursts that faulted because the device unmapped the ring under them
    /// (a memif peer that left): the lane stopped there.
    pub faults: u64,
}

const FIELDS: usize = 15;

impl Tally {
    fn to_array(self) -> [u64; FIELDS] {
        [
            self.packets,
            self.bytes,
            self.busy_cycles,
            self.ring_full_retries,
            self.alloc_failures,
            self.no_probe,
            self.lost,
            self.reordered,
            self.duplicates,
            self.late,
            self.untracked,
            self.empty_polls,
            self.bursts,
            self.reflect_drops,
            self.faults,
        ]
    }

    fn from_array(a: [u64; FIELDS]) -> Tally {
        Tally {
            packets: a[0],
            bytes: a[1],
            busy_cycles: a[2],
            ring_full_retries: a[3],
            alloc_failures: a[4],
            no_probe: a[5],
            lost: a[6],
            reordered: a[7],
            duplicates: a[8],
            late: a[9],
            untracked: a[10],
            empty_polls: a[11],
            bursts: a[12],
            reflect_drops: a[13],
            faults: a[14],
        }
    }

    /// Field-by-field sum.
    pub fn add(&mut self, o: &Tally) {
        let (a, b) = (self.to_array(), o.to_array());
        *self = Tally::from_array(std::array::from_fn(|i| a[i] + b[i]));
    }

    /// Field-by-field difference since `earlier`.
    pub fn since(&self, earlier: &Tally) -> Tally {
        let (a, b) = (self.to_array(), earlier.to_array());
        Tally::from_array(std::array::from_fn(|i| a[i].wrapping_sub(b[i])))
    }
}

/// One lcore's published counters, alone in 128 bytes-aligned lines (two
/// 64-byte lines on x86 where the adjacent-line prefetcher pairs them; one
/// line on 128-byte-line arm64 parts).
#[repr(C, align(128))]
pub struct LaneCounters {
    values: [AtomicU64; FIELDS],
    done: AtomicBool,
    /// Arrivals and losses per block of stream ids (a group's members are
    /// told apart by them): published when a run of busy polls ends, not
    /// with every publish.
    blocks: [AtomicU64; 2 * STREAM_BLOCKS],
}

impl Default for LaneCounters {
    fn default() -> LaneCounters {
        LaneCounters {
            values: std::array::from_fn(|_| AtomicU64::new(0)),
            done: AtomicBool::new(false),
            blocks: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl LaneCounters {
    /// Publishes the lcore's totals (single writer: plain relaxed stores).
    #[inline(always)]
    pub fn publish(&self, t: &Tally) {
        for (slot, v) in self.values.iter().zip(t.to_array()) {
            slot.store(v, Relaxed);
        }
    }

    pub fn read(&self) -> Tally {
        Tally::from_array(std::array::from_fn(|i| self.values[i].load(Relaxed)))
    }

    /// Publishes the per-block counts (single writer).
    pub fn publish_blocks(&self, blocks: &[BlockCounts; STREAM_BLOCKS]) {
        for (i, b) in blocks.iter().enumerate() {
            self.blocks[2 * i].store(b.received, Relaxed);
            self.blocks[2 * i + 1].store(b.lost, Relaxed);
        }
    }

    pub fn read_blocks(&self) -> [BlockCounts; STREAM_BLOCKS] {
        std::array::from_fn(|i| BlockCounts { received: self.blocks[2 * i].load(Relaxed), lost: self.blocks[2 * i + 1].load(Relaxed) })
    }

    pub fn mark_done(&self) {
        self.done.store(true, std::sync::atomic::Ordering::Release);
    }

    pub fn is_done(&self) -> bool {
        self.done.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// Sum of every lane's totals.
pub fn total(lanes: &[std::sync::Arc<LaneCounters>]) -> Tally {
    let mut t = Tally::default();
    for l in lanes {
        t.add(&l.read());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_fill_their_own_lines() {
        assert_eq!(std::mem::align_of::<LaneCounters>(), 128);
        assert_eq!(std::mem::size_of::<LaneCounters>() % 128, 0);
        let v = [LaneCounters::default(), LaneCounters::default()];
        let gap = (&v[1] as *const _ as usize) - (&v[0] as *const _ as usize);
        assert!(gap >= 128);
    }

    #[test]
    fn publish_read_round_trip_and_arithmetic() {
        let c = LaneCounters::default();
        let t = Tally { packets: 5, bytes: 320, ring_full_retries: 1, lost: 2, empty_polls: 9, ..Default::default() };
        c.publish(&t);
        assert_eq!(c.read(), t);
        let mut sum = t;
        sum.add(&t);
        assert_eq!(sum.packets, 10);
        assert_eq!(sum.since(&t), t);
    }
}
