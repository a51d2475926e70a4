//! The receive loop: one per RX queue, on its own lcore. Per packet it
//! reads the length and, unless counting only, the probe header's stream and
//! sequence number; mbufs go back to the pool in bulk.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use dpdk::{Burst, RxQueue, TxQueue};
use latency::LatencyHistogram;
use seqtrack::{BlockCounts, StreamTable, STREAM_BLOCKS};

use crate::counters::{LaneCounters, SizeCounts, Tally};
use crate::trial::TrialBoard;
use crate::MAX_BURST;

mod meter;
mod probes;

pub use meter::{Burstiness, POLL_BUCKETS};
use meter::{BusyRuns, Meter};
pub use probes::OneWayClock;
use probes::{count_probes, OneWay};

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
        counters: &'a Arc<LaneCounters>,
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
            one_way: one_way.map(|clock| OneWay { clock, hist: LatencyHistogram::new(), negative: 0, untimed: 0, live: counters.clone() }),
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

/// Busy work an application would spend on the frames, in TSC ticks (0:
/// none); drop's socket lanes (src/socket_rx.rs) spend it too.
#[inline(always)]
pub(crate) fn spend(cycles: u64) {
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
