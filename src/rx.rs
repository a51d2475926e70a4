//! The receive loop: one per RX queue, on its own lcore. Per packet it
//! reads the length and, unless counting only, the probe header's stream and
//! sequence number; mbufs go back to the pool in bulk.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use dpdk::{Burst, RxQueue, TxQueue};
use latency::LatencyHistogram;
use seqtrack::StreamTable;

use seqtrack::{block_of, BlockCounts, STREAM_BLOCKS};

use crate::clock::WallClock;
use crate::counters::{ArrivalCounts, LaneCounters, SizeCounts, StallWatch, Tally};
use crate::trial::TrialBoard;
use crate::MAX_BURST;

pub struct RxLane {
    pub queue: RxQueue,
    pub burst: usize,
    /// Streams tracked per lcore (stream ids at or beyond are counted apart).
    pub stream_capacity: usize,
    /// Extra busy work per frame, as an application would spend, in ticks of
    /// the lanes' counter (--rx-cost's core cycles converted; 0: none).
    /// Spent once per burst, so it costs no branch per frame.
    pub cost_per_frame: u64,
    /// Count frames and bytes only: no probe parsing (no loss or reorder figures).
    pub count_only: bool,
    pub counters: Arc<LaneCounters>,
    /// Reflect mode: frames go back, turned round, on this TX queue.
    pub reflect: Option<TxQueue>,
    /// Count arrivals per interval of this many cycles (0: off), on the
    /// busy-run clock (no TSC read of its own).
    pub interval_cycles: u64,
    /// --one-way: the clock each probe's arrival is read on, to time it
    /// against the sender's stamp (meaningful only when both hosts' wall
    /// clocks are synchronised).
    pub one_way: Option<OneWayClock>,
    /// The measured window's streams, and this lane's slate on it (its queue id).
    pub trial: Arc<TrialBoard>,
    pub slate: usize,
    /// Ticks per second of the lanes' counter (stalls are told by it).
    pub tsc_hz: u64,
}

/// Where a lane reads arrivals for --one-way: this host's wall clock at
/// the poll, or each frame's NIC timestamp (the mbuf field, and the map
/// from the device's clock onto the wall clock, which the wall clock at
/// drained polls calibrates).
#[derive(Debug, Clone)]
pub struct OneWayClock {
    pub wall: WallClock,
    pub nic: Option<(dpdk::RxTimestamp, latency::NicTimeMap)>,
}

/// A lane's one-way timing as it runs.
struct OneWay {
    clock: OneWayClock,
    hist: LatencyHistogram,
    /// Probes stamped later than they arrived (the clocks disagree).
    negative: u64,
    /// Probes with no usable NIC timestamp.
    untimed: u64,
}

/// Polls by frames returned: bucket 0 holds empty polls, bucket k (k >= 1)
/// polls that returned 2^(k-1) to 2^k - 1 frames; the last, 512.
pub const POLL_BUCKETS: usize = 11;

/// How bursty the arrivals were, as the receiver saw them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Burstiness {
    /// Empty polls always; the others not with --count-only.
    pub polls_by_size: [u64; POLL_BUCKETS],
    /// Polls that came back full (as many frames as asked): more were waiting.
    pub full_polls: u64,
    /// The most frames taken in one unbroken run of polls that each followed
    /// a full one: frames that had waited beyond one poll.
    pub max_backlog: u64,
    /// With intervals on: their length, how many passed while frames were
    /// arriving (a gap of more than IDLE_INTERVALS, such as the pause
    /// between a ladder's trials, is not counted), and the most frames in one.
    pub interval_cycles: u64,
    pub intervals: u64,
    pub max_per_interval: u64,
    pub frames_in_intervals: u64,
}

impl Burstiness {
    pub fn merge(&mut self, o: &Burstiness) {
        for (a, b) in self.polls_by_size.iter_mut().zip(&o.polls_by_size) {
            *a += b;
        }
        self.full_polls += o.full_polls;
        self.max_backlog = self.max_backlog.max(o.max_backlog);
        self.interval_cycles = self.interval_cycles.max(o.interval_cycles);
        self.intervals += o.intervals;
        self.max_per_interval = self.max_per_interval.max(o.max_per_interval);
        self.frames_in_intervals += o.frames_in_intervals;
    }

    /// The busiest interval over the mean one (1.0: perfectly even).
    pub fn peak_to_mean(&self) -> Option<f64> {
        (self.intervals > 0 && self.frames_in_intervals > 0)
            .then(|| self.max_per_interval as f64 / (self.frames_in_intervals as f64 / self.intervals as f64))
    }
}

/// A gap of more than this many empty intervals is a pause, not traffic.
const IDLE_INTERVALS: u64 = 10_000;

#[inline(always)]
fn poll_bucket(n: usize) -> usize {
    ((usize::BITS - n.leading_zeros()) as usize).min(POLL_BUCKETS - 1)
}

pub struct RxOutcome {
    /// The queue back, for the next run of a lane on it.
    pub queue: RxQueue,
    pub tally: Tally,
    pub streams: StreamTable,
    /// Cycle counter at the first and the last poll that brought frames.
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
    pub burstiness: Burstiness,
    /// Reflect mode: the TX queue back.
    pub reflect: Option<TxQueue>,
    /// --one-way: latencies, and probes stamped later than they arrived
    /// (the clocks disagree by more than the path takes).
    pub one_way: Option<latency::LatencyHistogram>,
    pub one_way_negative: u64,
    pub one_way_untimed: u64,
    /// Probe frames by size (not counted with --count-only).
    pub sizes: SizeCounts,
}

/// How bursty the arrivals are, counted per poll that brought frames.
struct Meter {
    b: Burstiness,
    after_full: bool,
    backlog: u64,
    /// The interval being counted (TSC / interval length), its frames, and
    /// whether any interval was seen.
    interval: u64,
    in_interval: u64,
    any_interval: bool,
    /// The most frames in a closed interval and the largest backlog since
    /// the last publish (folded into `b` and `window` then).
    recent_peak: u64,
    recent_backlog: u64,
    /// The measured window as of the last publish: its number and maxima.
    window: ArrivalCounts,
}

impl Meter {
    fn new(interval_cycles: u64) -> Meter {
        let b = Burstiness { interval_cycles, ..Default::default() };
        Meter {
            b,
            after_full: false,
            backlog: 0,
            interval: 0,
            in_interval: 0,
            any_interval: false,
            recent_peak: 0,
            recent_backlog: 0,
            window: ArrivalCounts::default(),
        }
    }

    /// A poll that brought `n` frames of the `burst` asked for; `tsc` is read
    /// only when intervals are on, `open_window` (the measured window open
    /// now) only after a gap.
    #[inline(always)]
    fn frames(&mut self, n: usize, burst: usize, tsc: impl FnOnce() -> u64, open_window: impl FnOnce() -> u64) {
        let b = &mut self.b;
        b.polls_by_size[poll_bucket(n)] += 1;
        self.backlog = if self.after_full { self.backlog + n as u64 } else { 0 };
        self.recent_backlog = self.recent_backlog.max(self.backlog);
        self.after_full = n == burst;
        b.full_polls += u64::from(self.after_full);
        if b.interval_cycles == 0 {
            return;
        }
        let i = tsc() / b.interval_cycles;
        self.any_interval = true;
        if i != self.interval {
            self.recent_peak = self.recent_peak.max(self.in_interval);
            // The empty intervals in between count (the mean is over time),
            // unless the gap was a pause between runs or trials, or the one
            // before a window's first frame (the senders' drain): those
            // would only dilute it. A window is counted from its first
            // frame to its last.
            let empty = i.saturating_sub(self.interval + 1);
            let pause = empty > IDLE_INTERVALS || (empty > 0 && open_window() != self.window.window);
            b.intervals += u64::from(self.in_interval > 0) + if pause { 0 } else { empty };
            (self.interval, self.in_interval) = (i, 0);
        }
        self.in_interval += n as u64;
        b.frames_in_intervals += n as u64;
    }

    #[inline(always)]
    fn empty(&mut self) {
        self.after_full = false;
    }

    /// Folds what was seen since the last publish into the run's and the
    /// window's maxima; a window opened since then starts its maxima anew
    /// (the lanes were idle when it opened: what was seen since is its).
    fn fold(&mut self, open_window: u64) {
        if open_window != self.window.window {
            self.window = ArrivalCounts { window: open_window, ..Default::default() };
        }
        let (b, w) = (&mut self.b, &mut self.window);
        b.max_per_interval = b.max_per_interval.max(self.recent_peak);
        b.max_backlog = b.max_backlog.max(self.recent_backlog);
        w.peak_per_interval = w.peak_per_interval.max(self.recent_peak);
        w.max_backlog = w.max_backlog.max(self.recent_backlog);
        (self.recent_peak, self.recent_backlog) = (0, 0);
    }

    /// Publishes the arrival counts, at the end of a busy run.
    fn publish(&mut self, counters: &LaneCounters) {
        self.fold(counters.open_window_number());
        let (b, w) = (&self.b, &self.window);
        counters.publish_arrivals(&ArrivalCounts {
            full_polls: b.full_polls,
            intervals: b.intervals,
            frames_in_intervals: b.frames_in_intervals,
            // The interval still open counts as far as it got.
            peak_per_interval: w.peak_per_interval.max(self.in_interval),
            ..*w
        });
    }

    fn finish(mut self, empty_polls: u64) -> Burstiness {
        self.fold(self.window.window);
        if self.any_interval {
            self.b.max_per_interval = self.b.max_per_interval.max(self.in_interval);
            self.b.intervals += u64::from(self.in_interval > 0);
        }
        self.b.polls_by_size[0] = empty_polls;
        self.b
    }
}

/// Busy time: the span of each run of polls that brought frames. The TSC is
/// read where a run starts and ends, and every 8 polls within one (for the
/// live view), not on every poll: at full load a read per poll is a few
/// percent of the loop.
struct BusyRuns {
    run_start: Option<u64>,
    first_tsc: Option<u64>,
    last_tsc: u64,
    /// The TSC as last read (at most 7 polls ago within a run): the
    /// arrival meter's clock, so it costs no read of its own per poll.
    now: u64,
    /// Every TSC read also tells whether the loop stood still since the
    /// last (a read every 256 idle polls keeps them close when idle); the
    /// longest stall not yet published.
    stall: StallWatch,
    unpublished_stall: u64,
}

impl BusyRuns {
    fn new(hz: u64) -> BusyRuns {
        let now = dpdk::rdtsc();
        BusyRuns { run_start: None, first_tsc: None, last_tsc: 0, now, stall: StallWatch::new(now, hz), unpublished_stall: 0 }
    }

    #[inline(always)]
    fn read(&mut self, tally: &mut Tally) -> u64 {
        let now = dpdk::rdtsc();
        let gap = self.stall.at(now, tally);
        self.unpublished_stall = self.unpublished_stall.max(gap);
        now
    }

    /// A poll brought frames; true when the counters are due for publishing.
    #[inline(always)]
    fn frames(&mut self, tally: &mut Tally) -> bool {
        match self.run_start {
            None => {
                let now = self.read(tally);
                self.first_tsc.get_or_insert(now);
                (self.run_start, self.now) = (Some(now), now);
                false
            }
            Some(start) if tally.bursts & 7 == 0 => {
                self.last_tsc = self.read(tally);
                tally.busy_cycles += self.last_tsc - start;
                (self.run_start, self.now) = (Some(self.last_tsc), self.last_tsc);
                true
            }
            Some(_) => false,
        }
    }

    /// A poll came back empty: a run ends (true: publish). Idle, every
    /// 256th empty poll reads the TSC for the stall watch (true: publish
    /// when it saw one).
    #[inline(always)]
    fn empty(&mut self, tally: &mut Tally) -> bool {
        let Some(start) = self.run_start.take() else {
            if tally.empty_polls & 0xff == 0 {
                self.read(tally);
                return self.unpublished_stall > 0;
            }
            return false;
        };
        self.last_tsc = self.read(tally);
        tally.busy_cycles += self.last_tsc - start;
        true
    }
}

impl RxLane {
    pub fn run(self, stop: &AtomicBool) -> RxOutcome {
        let (mut queue, mut reflect, mut bufs) = (self.queue, self.reflect, Burst::new());
        let burst = self.burst.clamp(1, MAX_BURST);
        let mut t = Figures::new(&self.counters, self.count_only, self.stream_capacity, self.interval_cycles, self.one_way, self.tsc_hz);
        let (board, mut epoch, mut answered) = (&*self.trial, 0u64, 0u64);
        while !stop.load(Relaxed) {
            if let Some(ask) = board.asked(answered) {
                board.answer(self.slate, &mut t.table, &mut epoch, ask);
                answered = ask;
            }
            let n = bufs.rx(&mut queue, burst);
            if n == 0 {
                if queue.faulted() {
                    // The ring vanished under the burst (a memif peer left):
                    // not to be polled again until restarted.
                    t.tally.faults += 1;
                    break;
                }
                t.empty_poll();
                continue;
            }
            if t.busy.frames(&mut t.tally) {
                t.publish();
            }
            // Burstiness costs a few instructions per poll; --count-only, the cheapest loop, goes without.
            if self.count_only {
                (t.tally.bytes, t.tally.no_probe) = (t.tally.bytes + bufs.bytes(), t.tally.no_probe + n as u64);
            } else {
                // The busy-run clock: read at a run's start and every 8
                // polls in it (2 us apart at full load, against 100 us intervals).
                t.meter.frames(n, burst, || t.busy.now, || t.counters.open_window_number());
                board.follow(&mut t.table, &mut epoch);
                count_probes(&bufs, n == burst, &mut t.table, &mut t.tally, &mut t.blocks, &mut t.sizes, &mut t.one_way);
            }
            // The FCS each frame carried on the wire, once per burst.
            t.tally.bytes += (wire::FCS_LEN * n) as u64;
            if self.cost_per_frame > 0 {
                spend(self.cost_per_frame * n as u64);
                t.busy.stall.resume(dpdk::rdtsc());
            }
            if let Some(txq) = reflect.as_mut() {
                if !send_back(&mut bufs, txq, &mut t.tally) {
                    break;
                }
            }
            bufs.free();
            (t.tally.packets, t.tally.bursts) = (t.tally.packets + n as u64, t.tally.bursts + 1);
        }
        t.finish(queue, reflect)
    }
}

/// What a receive lane counts while it runs.
struct Figures<'a> {
    counters: &'a LaneCounters,
    tally: Tally,
    table: StreamTable,
    busy: BusyRuns,
    meter: Meter,
    one_way: Option<OneWay>,
    /// Arrivals and losses per block of stream ids (a group's members).
    blocks: [BlockCounts; STREAM_BLOCKS],
    sizes: SizeCounts,
}

impl<'a> Figures<'a> {
    fn new(
        counters: &'a LaneCounters,
        count_only: bool,
        streams: usize,
        interval_cycles: u64,
        one_way: Option<OneWayClock>,
        hz: u64,
    ) -> Figures<'a> {
        Figures {
            counters,
            tally: Tally::default(),
            table: StreamTable::with_capacity(if count_only { 0 } else { streams }),
            busy: BusyRuns::new(hz),
            meter: Meter::new(interval_cycles),
            one_way: one_way.map(|clock| OneWay { clock, hist: LatencyHistogram::new(), negative: 0, untimed: 0 }),
            blocks: [BlockCounts::default(); STREAM_BLOCKS],
            sizes: SizeCounts::default(),
        }
    }

    /// A poll came back empty. Publishes when a run of busy polls ends, and
    /// now and then so the live view sees idle polls.
    #[inline(always)]
    fn empty_poll(&mut self) {
        self.meter.empty();
        self.tally.empty_polls += 1;
        let run_ended = self.busy.empty(&mut self.tally);
        if run_ended || self.tally.empty_polls & 0xffff == 0 {
            self.publish();
        }
        if run_ended {
            self.counters.publish_blocks(&self.blocks);
            self.counters.publish_sizes(&self.sizes);
            self.meter.publish(self.counters);
        }
    }

    /// Publishes the totals, and a stall seen since the last publish.
    #[inline(always)]
    fn publish(&mut self) {
        self.counters.publish(&self.tally);
        if self.busy.unpublished_stall > 0 {
            self.publish_stall();
        }
    }

    #[cold]
    fn publish_stall(&mut self) {
        self.counters.publish_stall(self.counters.open_window_number(), self.busy.unpublished_stall);
        self.busy.unpublished_stall = 0;
    }

    fn finish(mut self, queue: RxQueue, reflect: Option<TxQueue>) -> RxOutcome {
        if let Some(start) = self.busy.run_start {
            self.busy.last_tsc = dpdk::rdtsc();
            self.tally.busy_cycles += self.busy.last_tsc - start;
        }
        self.publish();
        self.counters.publish_blocks(&self.blocks);
        self.counters.publish_sizes(&self.sizes);
        self.meter.publish(self.counters);
        self.counters.mark_done();
        let (one_way_negative, one_way_untimed) = self.one_way.as_ref().map_or((0, 0), |o| (o.negative, o.untimed));
        let one_way = self.one_way.map(|o| o.hist);
        RxOutcome {
            queue,
            tally: self.tally,
            streams: self.table,
            first_tsc: self.busy.first_tsc,
            last_tsc: self.busy.first_tsc.map(|_| self.busy.last_tsc),
            burstiness: self.meter.finish(self.tally.empty_polls),
            reflect,
            one_way,
            one_way_negative,
            one_way_untimed,
            sizes: self.sizes,
        }
    }
}

/// Busy work an application would spend on the frames (0: none).
#[inline(always)]
fn spend(cycles: u64) {
    if cycles > 0 {
        let until = dpdk::rdtsc() + cycles;
        while dpdk::rdtsc() < until {
            std::hint::spin_loop();
        }
    }
}

/// Reflect mode: turns every frame round and offers them back; the ones
/// the device does not take are counted and stay for freeing. False when
/// the queue faulted (the device may hold some: none is freed, the lane ends).
#[inline(always)]
fn send_back(bufs: &mut Burst, txq: &mut TxQueue, tally: &mut Tally) -> bool {
    let n = bufs.len() as u64;
    for frame in bufs.frames_mut() {
        wire::reflect_in_place(frame);
    }
    bufs.tx(txq);
    if txq.faulted() {
        (tally.faults, tally.packets) = (tally.faults + 1, tally.packets + n);
        return false;
    }
    tally.reflect_drops += bufs.len() as u64;
    true
}

/// Counts the burst's bytes and records each frame's probe in the stream
/// table; --one-way also times each probe, against this host's clock at
/// the poll or against the frame's NIC timestamp. `full`: the poll took as
/// many frames as it asked for (more may wait: it did not drain the ring).
#[inline(always)]
fn count_probes(
    bufs: &Burst,
    full: bool,
    table: &mut StreamTable,
    tally: &mut Tally,
    blocks: &mut [BlockCounts; STREAM_BLOCKS],
    sizes: &mut SizeCounts,
    one_way: &mut Option<OneWay>,
) {
    let Some(o) = one_way.as_mut() else {
        return parse_probes(bufs, table, tally, blocks, sizes, |_, _| {});
    };
    let now = o.clock.wall.ns(dpdk::rdtsc());
    let (hist, negative) = (&mut o.hist, &mut o.negative);
    let mut time = |arrived: u64, sent: u64| match arrived.checked_sub(sent) {
        Some(d) => hist.record_ns(d),
        None => *negative += 1,
    };
    match &mut o.clock.nic {
        None => parse_probes(bufs, table, tally, blocks, sizes, |p, _| time(now, p.tx_ns)),
        Some((field, map)) => {
            // A short poll drained the ring: its newest frame was stamped
            // at most one poll before `now` (the device clock's calibration).
            if !full {
                if let Some(newest) = bufs.rx_timestamp(bufs.len() - 1, field) {
                    map.drained_poll(newest, now);
                }
            }
            let untimed = &mut o.untimed;
            parse_probes(bufs, table, tally, blocks, sizes, |p, i| match bufs.rx_timestamp(i, field).and_then(|ts| map.host_ns(ts)) {
                Some(arrived) => time(arrived, p.tx_ns),
                None => *untimed += 1,
            });
        }
    }
}

/// Records each frame's probe in the stream table, then hands the probe
/// and the frame's place in the burst to `also` (one-way timing, or nothing: the closure is inlined, so no
/// branch per frame decides which).
#[inline(always)]
fn parse_probes(
    bufs: &Burst,
    table: &mut StreamTable,
    tally: &mut Tally,
    blocks: &mut [BlockCounts; STREAM_BLOCKS],
    sizes: &mut SizeCounts,
    mut also: impl FnMut(wire::Probe, usize),
) {
    // Sums in locals, added once per burst: the compiler keeps them in
    // registers, where fields of `tally` would be loaded and stored per frame.
    // Probe frames' bytes and longest length give their sizes (count_sizes).
    let (mut bytes, mut no_probe, mut probe_bytes, mut longest) = (0u64, 0u64, 0u64, 0u32);
    let mut i = 0usize;
    bufs.read_frames(|len, frame| {
        bytes += u64::from(len);
        i += 1;
        match wire::parse_probe(frame) {
            Some(p) => {
                (probe_bytes, longest) = (probe_bytes + u64::from(len), longest.max(len));
                // The block's loss is the stream's change in the table's
                // (a wrapping sum: a late frame takes one back).
                let lost = table.totals.lost;
                table.record_frame(p.stream, p.seq, wire::run_id(frame), len + wire::FCS_LEN as u32);
                let b = &mut blocks[block_of(p.stream)];
                (b.received, b.lost) = (b.received + 1, b.lost.wrapping_add(table.totals.lost.wrapping_sub(lost)));
                also(p, i - 1);
            }
            None => no_probe += 1,
        }
    });
    let probes = bufs.len() as u64 - no_probe;
    if probes > 0 {
        count_sizes(bufs, sizes, probes, probe_bytes, longest);
    }
    (tally.bytes, tally.no_probe) = (tally.bytes + bytes, tally.no_probe + no_probe);
    let t = &table.totals;
    (tally.lost, tally.reordered, tally.duplicates, tally.late) = (t.lost, t.reordered, t.duplicates, t.late);
    tally.untracked = table.untracked;
}

/// Counts a burst's `probes` probe frames by size. None is longer than
/// `longest` and their lengths add up to `bytes`: when that is `probes`
/// times `longest`, every one is that long (the usual case: one multiply);
/// otherwise a second pass counts runs of one length.
#[inline(always)]
fn count_sizes(bufs: &Burst, sizes: &mut SizeCounts, probes: u64, bytes: u64, longest: u32) {
    if u64::from(longest) * probes == bytes {
        sizes.add(longest + wire::FCS_LEN as u32, probes);
        return;
    }
    let (mut run_len, mut run) = (0u32, 0u64);
    bufs.read_frames(|len, frame| {
        if wire::parse_probe(frame).is_none() {
            return;
        }
        if len != run_len && run > 0 {
            sizes.add(run_len + wire::FCS_LEN as u32, run);
            run = 0;
        }
        (run_len, run) = (len, run + 1);
    });
    if run > 0 {
        sizes.add(run_len + wire::FCS_LEN as u32, run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_buckets_are_powers_of_two() {
        let got: Vec<usize> = [0, 1, 2, 3, 4, 7, 8, 32, 511, 512].iter().map(|&n| poll_bucket(n)).collect();
        assert_eq!(got, [0, 1, 2, 2, 3, 3, 4, 6, 9, 10]);
    }

    #[test]
    fn peak_to_mean() {
        let b = Burstiness { intervals: 10, frames_in_intervals: 1000, max_per_interval: 400, ..Default::default() };
        assert_eq!(b.peak_to_mean(), Some(4.0));
        assert_eq!(Burstiness::default().peak_to_mean(), None);
    }

    #[test]
    fn backlog_counts_frames_after_full_polls() {
        let mut m = Meter::new(0);
        for n in [32, 32, 5, 32, 1] {
            m.frames(n, 32, || unreachable!("intervals off: no TSC read"), || 0);
        }
        m.empty();
        m.frames(32, 32, || 0, || 0);
        let b = m.finish(7);
        assert_eq!(b.full_polls, 4);
        // After the first full poll: 32 + 5 frames waited; after the third, 1.
        assert_eq!(b.max_backlog, 37);
        assert_eq!(b.polls_by_size[0], 7);
        assert_eq!(b.polls_by_size[poll_bucket(32)], 4);
    }

    #[test]
    fn intervals_count_empty_ones_between_but_not_pauses() {
        let mut m = Meter::new(100);
        m.frames(10, 32, || 0, || 0);
        m.frames(10, 32, || 50, || 0);
        m.frames(4, 32, || 350, || 0); // intervals 1 and 2 passed empty
        m.frames(6, 32, || 100 * (3 + IDLE_INTERVALS + 2), || 0); // a pause: not counted
        let b = m.finish(0);
        assert_eq!(b.max_per_interval, 20);
        assert_eq!(b.frames_in_intervals, 30);
        // 0 (20 frames), 1 and 2 (empty), 3 (4 frames), the last (6 frames).
        assert_eq!(b.intervals, 5);
    }

    #[test]
    fn a_window_keeps_its_own_maxima() {
        let c = LaneCounters::default();
        let mut m = Meter::new(100);
        // Before window 1: a burst of 30 in interval 0, a backlog of 64.
        for n in [32, 32, 30] {
            m.frames(n, 32, || 10, || 0);
        }
        m.frames(1, 32, || 150, || 0);
        m.empty();
        m.publish(&c);
        let before = c.read_arrivals();
        assert_eq!((before.window, before.peak_per_interval, before.max_backlog), (0, 94, 62));
        // Window 1 opens; the lane's next busy run is gentler.
        c.open_window(1);
        // The gap before the window's first frame (the drain) is not counted.
        m.frames(5, 32, || 1000, || c.open_window_number());
        m.frames(4, 32, || 1100, || c.open_window_number());
        m.empty();
        m.publish(&c);
        let after = c.read_arrivals();
        let w = after.over_window(&before, 1);
        assert_eq!((w.peak_per_interval, w.max_backlog), (5, 0), "window 1's own maxima, not the run's");
        assert_eq!(w.frames_in_intervals, 9);
        // Interval 1 (closed in the window) and 10: not the 8 empty ones before 10.
        assert_eq!(w.intervals, 2);
        // The run's maxima keep the earlier burst.
        let b = m.finish(0);
        assert_eq!((b.max_per_interval, b.max_backlog), (94, 62));
    }
}
