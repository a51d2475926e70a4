//! Per-lcore counters, each lcore's in its own cache lines.
//!
//! The lcore is the only writer: it keeps plain totals in a local
//! [`Tally`] and publishes them with relaxed stores once per burst (no
//! locked instructions). The main thread reads them about once a second.

use seqtrack::{BlockCounts, STREAM_BLOCKS};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Plain totals an lcore keeps while it works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
    /// Times the lane's own loop stood still for longer than [`STALL_MS`]
    /// (descheduled by the host, most likely), and the ticks it stood.
    pub stalls: u64,
    pub stalled_ticks: u64,
    /// Paced sender: ticks spent inside tx_burst calls, summed. Most of the
    /// lane's time there: the driver or the path beneath it took its time
    /// rather than refusing frames. Unpaced lanes leave it at 0 (no reads).
    pub tx_cycles: u64,
}

const FIELDS: usize = 18;

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
            self.stalls,
            self.stalled_ticks,
            self.tx_cycles,
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
            stalls: a[15],
            stalled_ticks: a[16],
            tx_cycles: a[17],
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
    /// The measured window now open (the main thread's only write), and
    /// the lane's arrival counts as of its last busy-run end, in
    /// [`ArrivalCounts::to_array`] order.
    window: AtomicU64,
    arrivals: [AtomicU64; ARRIVAL_FIELDS],
    /// Frames received by size, as [`SizeCounts`] (size, count per slot;
    /// then the frames beyond the slots), published when a busy run ends.
    sizes: [AtomicU64; 2 * SIZE_SLOTS + 1],
    /// The longest stall of the lane's loop in a window: the window it was
    /// seen in, and its ticks (published when a stall ends).
    stall: [AtomicU64; 2],
    /// Timed probes (--one-way, --reflect) by coarse bucket, for the
    /// series' and /metrics' latency while the run goes.
    pub latency: crate::live_latency::LiveLatency,
}

/// A lane's loop that stood still for longer than this was stopped from
/// outside (the host descheduled it, or stole its CPU): no poll, burst or
/// pacing wait of a working lane takes a millisecond.
pub const STALL_MS: u64 = 1;

/// Watches a lane's loop for stalls, on the TSC reads the lane already
/// makes: consecutive reads further apart than [`STALL_MS`] are one.
#[derive(Debug, Clone, Copy)]
pub struct StallWatch {
    last: u64,
    threshold: u64,
    /// The longest stall seen, in ticks.
    pub longest: u64,
}

impl StallWatch {
    pub fn new(now: u64, hz: u64) -> StallWatch {
        StallWatch { last: now, threshold: (hz / 1000 * STALL_MS).max(1), longest: 0 }
    }

    /// The loop read the TSC: `now`. Returns the ticks it stood still
    /// since the last read when that was a stall, else 0.
    #[inline(always)]
    pub fn at(&mut self, now: u64, tally: &mut Tally) -> u64 {
        let gap = now.wrapping_sub(self.last);
        self.last = now;
        if gap > self.threshold && gap < u64::MAX / 2 {
            self.stalled(gap, tally);
            return gap;
        }
        0
    }

    /// Time the lane spent on purpose (--rx-cost's busy work) is no stall.
    #[inline(always)]
    pub fn resume(&mut self, now: u64) {
        self.last = now;
    }

    #[cold]
    fn stalled(&mut self, gap: u64, tally: &mut Tally) {
        tally.stalls += 1;
        tally.stalled_ticks += gap;
        self.longest = self.longest.max(gap);
    }
}

/// Distinct frame sizes a receive lane counts apart; frames of more sizes
/// than that are counted together, as `other`.
pub const SIZE_SLOTS: usize = 16;

/// Frames received by size (FCS included), in the slots each size took as
/// it was first seen (a slot keeps its size for the lane's life, so two
/// readings compare slot by slot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SizeCounts {
    pub sizes: [u32; SIZE_SLOTS],
    pub counts: [u64; SIZE_SLOTS],
    pub other: u64,
}

impl SizeCounts {
    /// `n` frames of `size` bytes. Out of line: the receive loop calls it
    /// when a run of one size ends (about once a burst), and inlined its
    /// slot search would crowd the loop's registers.
    #[inline(never)]
    pub fn add(&mut self, size: u32, n: u64) {
        for (s, c) in self.sizes.iter_mut().zip(self.counts.iter_mut()) {
            if *s == size || *s == 0 {
                (*s, *c) = (size, *c + n);
                return;
            }
        }
        self.other += n;
    }

    /// Frames by size from `earlier` (of the same lane) to these, added to `into`.
    pub fn since_into(&self, earlier: &SizeCounts, into: &mut std::collections::BTreeMap<u32, u64>) -> u64 {
        for (i, &size) in self.sizes.iter().enumerate().filter(|(_, &s)| s != 0) {
            let before = if earlier.sizes[i] == size { earlier.counts[i] } else { 0 };
            let n = self.counts[i].saturating_sub(before);
            if n > 0 {
                *into.entry(size).or_default() += n;
            }
        }
        self.other.saturating_sub(earlier.other)
    }
}

/// A receive lane's arrival counts: sums since it started, and maxima
/// since the window `window` opened (the lane takes the new window's
/// number at the first busy run it ends after it opened: drop opens
/// windows with the lanes idle, after the senders' drain).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArrivalCounts {
    pub window: u64,
    pub full_polls: u64,
    pub intervals: u64,
    pub frames_in_intervals: u64,
    pub peak_per_interval: u64,
    pub max_backlog: u64,
}

const ARRIVAL_FIELDS: usize = 6;

impl ArrivalCounts {
    fn to_array(self) -> [u64; ARRIVAL_FIELDS] {
        [self.window, self.full_polls, self.intervals, self.frames_in_intervals, self.peak_per_interval, self.max_backlog]
    }

    fn from_array(a: [u64; ARRIVAL_FIELDS]) -> ArrivalCounts {
        let [window, full_polls, intervals, frames_in_intervals, peak_per_interval, max_backlog] = a;
        ArrivalCounts { window, full_polls, intervals, frames_in_intervals, peak_per_interval, max_backlog }
    }

    /// The counts over window `window`, from `earlier` (read when it
    /// opened) to these: sums as differences; maxima only when the lane
    /// took that window's number (it had no busy run in it otherwise).
    pub fn over_window(&self, earlier: &ArrivalCounts, window: u64) -> ArrivalCounts {
        let in_window = self.window == window;
        ArrivalCounts {
            window,
            full_polls: self.full_polls.wrapping_sub(earlier.full_polls),
            intervals: self.intervals.wrapping_sub(earlier.intervals),
            frames_in_intervals: self.frames_in_intervals.wrapping_sub(earlier.frames_in_intervals),
            peak_per_interval: if in_window { self.peak_per_interval } else { 0 },
            max_backlog: if in_window { self.max_backlog } else { 0 },
        }
    }
}

impl Default for LaneCounters {
    fn default() -> LaneCounters {
        LaneCounters {
            values: std::array::from_fn(|_| AtomicU64::new(0)),
            done: AtomicBool::new(false),
            blocks: std::array::from_fn(|_| AtomicU64::new(0)),
            window: AtomicU64::new(0),
            arrivals: std::array::from_fn(|_| AtomicU64::new(0)),
            sizes: std::array::from_fn(|_| AtomicU64::new(0)),
            stall: std::array::from_fn(|_| AtomicU64::new(0)),
            latency: Default::default(),
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

    /// The frames and bytes slots, for a lane written in C (blast's C
    /// lanes) to publish into with relaxed stores.
    pub fn packets_and_bytes(&self) -> (&AtomicU64, &AtomicU64) {
        (&self.values[0], &self.values[1])
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

    /// Window `n` opens (main thread).
    pub fn open_window(&self, n: u64) {
        self.window.store(n, Relaxed);
    }

    /// The window open now, as the lane sees it.
    #[inline(always)]
    pub fn open_window_number(&self) -> u64 {
        self.window.load(Relaxed)
    }

    /// Publishes the arrival counts (single writer).
    pub fn publish_arrivals(&self, a: &ArrivalCounts) {
        for (slot, v) in self.arrivals.iter().zip(a.to_array()) {
            slot.store(v, Relaxed);
        }
    }

    pub fn read_arrivals(&self) -> ArrivalCounts {
        ArrivalCounts::from_array(std::array::from_fn(|i| self.arrivals[i].load(Relaxed)))
    }

    /// Publishes the frames by size (single writer).
    pub fn publish_sizes(&self, c: &SizeCounts) {
        for i in 0..SIZE_SLOTS {
            self.sizes[2 * i].store(u64::from(c.sizes[i]), Relaxed);
            self.sizes[2 * i + 1].store(c.counts[i], Relaxed);
        }
        self.sizes[2 * SIZE_SLOTS].store(c.other, Relaxed);
    }

    pub fn read_sizes(&self) -> SizeCounts {
        SizeCounts {
            sizes: std::array::from_fn(|i| self.sizes[2 * i].load(Relaxed) as u32),
            counts: std::array::from_fn(|i| self.sizes[2 * i + 1].load(Relaxed)),
            other: self.sizes[2 * SIZE_SLOTS].load(Relaxed),
        }
    }

    /// A stall of `ticks` ended while window `window` was open (single writer).
    pub fn publish_stall(&self, window: u64, ticks: u64) {
        if self.stall[0].load(Relaxed) != window {
            self.stall[1].store(0, Relaxed);
            self.stall[0].store(window, Relaxed);
        }
        if ticks > self.stall[1].load(Relaxed) {
            self.stall[1].store(ticks, Relaxed);
        }
    }

    /// The longest stall seen while window `window` was open (0: none).
    pub fn longest_stall(&self, window: u64) -> u64 {
        if self.stall[0].load(Relaxed) == window {
            self.stall[1].load(Relaxed)
        } else {
            0
        }
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
    fn a_loop_that_stood_still_is_a_stall_and_busy_work_is_not() {
        let hz = 1_000_000_000;
        let (mut w, mut t) = (StallWatch::new(0, hz), Tally::default());
        assert_eq!(w.at(500_000, &mut t), 0, "half a millisecond: a slow poll, not a stall");
        assert_eq!(w.at(1_700_000, &mut t), 1_200_000);
        assert_eq!(w.at(1_700_100, &mut t), 0);
        w.resume(9_000_000); // --rx-cost work
        assert_eq!(w.at(9_000_200, &mut t), 0);
        assert_eq!(w.at(1_509_000_200, &mut t), 1_500_000_000);
        assert_eq!((t.stalls, t.stalled_ticks, w.longest), (2, 1_501_200_000, 1_500_000_000));
        // A counter that went backwards (another core's TSC) is no stall.
        assert_eq!(w.at(5, &mut t), 0);
        let c = LaneCounters::default();
        c.publish_stall(3, 100);
        c.publish_stall(3, 50);
        assert_eq!((c.longest_stall(3), c.longest_stall(2)), (100, 0));
        c.publish_stall(4, 20);
        assert_eq!((c.longest_stall(3), c.longest_stall(4)), (0, 20), "a new window starts its own longest");
    }

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

    #[test]
    fn sizes_take_slots_as_seen_and_compare_slot_by_slot() {
        let mut c = SizeCounts::default();
        c.add(64, 7);
        c.add(594, 4);
        c.add(64, 7);
        c.add(1518, 1);
        let lane = LaneCounters::default();
        lane.publish_sizes(&c);
        let before = lane.read_sizes();
        assert_eq!(before, c);
        c.add(594, 4);
        for size in 0..SIZE_SLOTS as u32 {
            c.add(2000 + size, 1);
        }
        let mut by_size = std::collections::BTreeMap::new();
        let other = c.since_into(&before, &mut by_size);
        assert_eq!(by_size.get(&594), Some(&4));
        assert_eq!(by_size.get(&64), None, "no 64 B frame since");
        assert_eq!(by_size.len(), 1 + SIZE_SLOTS - 3, "the slots left took new sizes");
        assert_eq!(other, 3, "sizes beyond the slots count together");
    }

    #[test]
    fn arrival_maxima_count_only_in_the_window_the_lane_saw() {
        let c = LaneCounters::default();
        let before =
            ArrivalCounts { window: 1, full_polls: 5, intervals: 100, frames_in_intervals: 900, peak_per_interval: 40, max_backlog: 9 };
        c.publish_arrivals(&before);
        assert_eq!(c.read_arrivals(), before);
        let after =
            ArrivalCounts { window: 2, full_polls: 7, intervals: 150, frames_in_intervals: 1000, peak_per_interval: 12, max_backlog: 3 };
        let w = after.over_window(&before, 2);
        assert_eq!((w.full_polls, w.intervals, w.frames_in_intervals, w.peak_per_interval, w.max_backlog), (2, 50, 100, 12, 3));
        // A lane that ended no busy run in window 3 still shows window 2's maxima: not window 3's.
        let idle = after.over_window(&after, 3);
        assert_eq!((idle.peak_per_interval, idle.max_backlog, idle.intervals), (0, 0, 0));
    }
}
