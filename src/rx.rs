//! The receive loop: one per RX queue, on its own lcore. Per packet it
//! reads the length and, unless counting only, the probe header's stream and
//! sequence number; mbufs go back to the pool in bulk.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use dpdk::{ffi, Mbuf, MbufLayout, RxQueue, TxQueue};
use seqtrack::StreamTable;

use crate::counters::{LaneCounters, Tally};
use crate::MAX_BURST;

pub struct RxLane {
    pub queue: RxQueue,
    pub burst: usize,
    /// Streams tracked per lcore (stream ids at or beyond are counted apart).
    pub stream_capacity: usize,
    /// Extra cycles of busy work per frame, as an application would spend
    /// (0: none). Spent once per burst, so it costs no branch per frame.
    pub cost_per_frame: u64,
    /// Count frames and bytes only: no probe parsing (no loss or reorder figures).
    pub count_only: bool,
    pub counters: Arc<LaneCounters>,
    /// Reflect mode: frames go back, turned round, on this TX queue.
    pub reflect: Option<TxQueue>,
    /// Count arrivals per interval of this many cycles (0: off; it costs a
    /// TSC read per poll).
    pub interval_cycles: u64,
    /// --one-way: this host's wall clock, to time each probe against the
    /// sender's stamp (meaningful only when both clocks are synchronised).
    pub one_way: Option<crate::clock::WallClock>,
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
}

impl RxLane {
    pub fn run(self, stop: &AtomicBool) -> RxOutcome {
        let mut queue = self.queue;
        let layout = MbufLayout::get();
        let burst = self.burst.clamp(1, MAX_BURST);
        let mut table = StreamTable::with_capacity(if self.count_only { 0 } else { self.stream_capacity });
        let mut bufs: [*mut Mbuf; MAX_BURST] = [std::ptr::null_mut(); MAX_BURST];
        let mut tally = Tally::default();
        let mut first_tsc = None;
        let mut last_tsc = 0;
        // Busy time is the span of each run of polls that brought frames. The
        // TSC is read where a run starts and ends, and every 8 polls within
        // one (for the live view), not on every poll: at full load a read
        // per poll is a few percent of the loop.
        let mut run_start: Option<u64> = None;
        let mut reflect = self.reflect;
        let mut one_way = self.one_way.map(|c| (c, latency::LatencyHistogram::new()));
        let mut one_way_negative = 0u64;
        let mut b = Burstiness { interval_cycles: self.interval_cycles, ..Default::default() };
        let (mut after_full, mut backlog) = (false, 0u64);
        let (mut interval, mut in_interval, mut any_interval) = (0u64, 0u64, false);
        let interval_cycles = std::num::NonZeroU64::new(self.interval_cycles);

        while !stop.load(Relaxed) {
            let n = queue.rx_burst(&mut bufs[..burst]);
            // Burstiness figures cost a few instructions per poll that
            // brings frames; --count-only, the cheapest loop, goes without.
            if n > 0 && !self.count_only {
                b.polls_by_size[poll_bucket(n)] += 1;
                if after_full {
                    backlog += n as u64;
                    b.max_backlog = b.max_backlog.max(backlog);
                } else {
                    backlog = 0;
                }
                after_full = n == burst;
                b.full_polls += u64::from(after_full);
                if let Some(every) = interval_cycles {
                    let i = dpdk::rdtsc() / every.get();
                    any_interval = true;
                    if i != interval {
                        b.max_per_interval = b.max_per_interval.max(in_interval);
                        // The empty intervals in between count (the mean is
                        // over time), unless the gap was a pause between
                        // runs or trials, which would only dilute it.
                        let empty = i.saturating_sub(interval + 1);
                        b.intervals += u64::from(in_interval > 0) + if empty <= IDLE_INTERVALS { empty } else { 0 };
                        (interval, in_interval) = (i, 0);
                    }
                    in_interval += n as u64;
                    b.frames_in_intervals += n as u64;
                }
            }
            if n == 0 {
                if queue.faulted() {
                    // The ring vanished under the burst (a memif peer left):
                    // this queue is not to be polled again until restarted.
                    tally.faults += 1;
                    break;
                }
                after_full = false;
                if let Some(start) = run_start.take() {
                    last_tsc = dpdk::rdtsc();
                    tally.busy_cycles += last_tsc - start;
                    self.counters.publish(&tally);
                }
                tally.empty_polls += 1;
                // Publish now and then so the live view sees idle polls too.
                if tally.empty_polls & 0xffff == 0 {
                    self.counters.publish(&tally);
                }
                continue;
            }
            match run_start {
                None => {
                    let now = dpdk::rdtsc();
                    first_tsc.get_or_insert(now);
                    run_start = Some(now);
                }
                Some(start) if tally.bursts & 7 == 0 => {
                    last_tsc = dpdk::rdtsc();
                    tally.busy_cycles += last_tsc - start;
                    run_start = Some(last_tsc);
                    self.counters.publish(&tally);
                }
                Some(_) => {}
            }
            if self.count_only {
                for &m in &bufs[..n] {
                    // SAFETY: m was just handed over by rx_burst and is ours until freed.
                    tally.bytes += u64::from(unsafe { layout.pkt_len(m) });
                }
                tally.no_probe += n as u64;
            } else if let Some((clock, hist)) = one_way.as_mut() {
                let now = clock.ns(dpdk::rdtsc());
                parse_probes(&bufs[..n], layout, &mut table, &mut tally, |p| match now.checked_sub(p.tx_ns) {
                    Some(d) => hist.record_ns(d),
                    None => one_way_negative += 1,
                });
            } else {
                parse_probes(&bufs[..n], layout, &mut table, &mut tally, |_| {});
            }
            // The FCS each frame carried on the wire, once per burst.
            tally.bytes += (wire::FCS_LEN * n) as u64;
            if self.cost_per_frame > 0 {
                let until = dpdk::rdtsc() + self.cost_per_frame * n as u64;
                while dpdk::rdtsc() < until {
                    std::hint::spin_loop();
                }
            }
            match reflect.as_mut() {
                None => {
                    // SAFETY: the n mbufs are ours and no longer referenced.
                    unsafe { ffi::bd_pktmbuf_free_bulk(bufs.as_mut_ptr(), n as u32) };
                }
                Some(txq) => {
                    for &m in &bufs[..n] {
                        // SAFETY: as above; the frame is ours to rewrite.
                        unsafe { wire::reflect_in_place(std::slice::from_raw_parts_mut(layout.data(m), usize::from(layout.data_len(m)))) };
                    }
                    let sent = txq.tx_burst(&mut bufs[..n]);
                    if txq.faulted() {
                        // The device may hold some of them: none is freed here.
                        tally.faults += 1;
                        tally.packets += n as u64;
                        break;
                    }
                    if sent < n {
                        tally.reflect_drops += (n - sent) as u64;
                        // SAFETY: the device did not take these; they are still ours.
                        unsafe { ffi::bd_pktmbuf_free_bulk(bufs[sent..n].as_mut_ptr(), (n - sent) as u32) };
                    }
                }
            }
            tally.packets += n as u64;
            tally.bursts += 1;
        }
        if let Some(start) = run_start {
            last_tsc = dpdk::rdtsc();
            tally.busy_cycles += last_tsc - start;
        }
        self.counters.publish(&tally);
        self.counters.mark_done();
        if any_interval {
            b.max_per_interval = b.max_per_interval.max(in_interval);
            b.intervals += u64::from(in_interval > 0);
        }
        b.polls_by_size[0] = tally.empty_polls;
        RxOutcome {
            queue,
            tally,
            streams: table,
            first_tsc,
            last_tsc: first_tsc.map(|_| last_tsc),
            burstiness: b,
            reflect,
            one_way: one_way.map(|(_, h)| h),
            one_way_negative,
        }
    }
}

/// Counts the burst's bytes and records each frame's probe in the stream
/// table, then hands the probe to `also` (one-way timing, or nothing: the
/// closure is inlined, so no branch per frame decides which).
#[inline(always)]
fn parse_probes(bufs: &[*mut Mbuf], layout: MbufLayout, table: &mut StreamTable, tally: &mut Tally, mut also: impl FnMut(wire::Probe)) {
    for &m in bufs {
        // SAFETY: m was just handed over by rx_burst and is ours until freed.
        let frame = unsafe {
            tally.bytes += u64::from(layout.pkt_len(m));
            std::slice::from_raw_parts(layout.data(m), usize::from(layout.data_len(m)))
        };
        match wire::parse_probe(frame) {
            Some(p) => {
                table.record(p.stream, p.seq, wire::run_id(frame));
                also(p);
            }
            None => tally.no_probe += 1,
        }
    }
    let t = &table.totals;
    (tally.lost, tally.reordered, tally.duplicates, tally.late) = (t.lost, t.reordered, t.duplicates, t.late);
    tally.untracked = table.untracked;
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
}
