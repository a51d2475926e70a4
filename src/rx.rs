//! The receive loop: one per RX queue, on its own lcore. Per packet it
//! reads the length and, unless counting only, the probe header's stream and
//! sequence number; mbufs go back to the pool in bulk.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use dpdk::{ffi, Mbuf, MbufLayout, RxQueue};
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
}

pub struct RxOutcome {
    pub tally: Tally,
    pub streams: StreamTable,
    /// Cycle counter at the first and the last poll that brought frames.
    pub first_tsc: Option<u64>,
    pub last_tsc: Option<u64>,
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

        while !stop.load(Relaxed) {
            let n = queue.rx_burst(&mut bufs[..burst]);
            if n == 0 {
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
            } else {
                for &m in &bufs[..n] {
                    // SAFETY: as above.
                    let frame = unsafe {
                        tally.bytes += u64::from(layout.pkt_len(m));
                        std::slice::from_raw_parts(layout.data(m), usize::from(layout.data_len(m)))
                    };
                    match wire::parse_probe(frame) {
                        Some(p) => table.record(p.stream, p.seq),
                        None => tally.no_probe += 1,
                    }
                }
                let t = &table.totals;
                (tally.lost, tally.reordered, tally.duplicates, tally.late) = (t.lost, t.reordered, t.duplicates, t.late);
                tally.untracked = table.untracked;
            }
            // The FCS each frame carried on the wire, once per burst.
            tally.bytes += (wire::FCS_LEN * n) as u64;
            if self.cost_per_frame > 0 {
                let until = dpdk::rdtsc() + self.cost_per_frame * n as u64;
                while dpdk::rdtsc() < until {
                    std::hint::spin_loop();
                }
            }
            // SAFETY: the n mbufs are ours and no longer referenced.
            unsafe { ffi::rte_pktmbuf_free_bulk(bufs.as_mut_ptr(), n as u32) };
            tally.packets += n as u64;
            tally.bursts += 1;
        }
        if let Some(start) = run_start {
            last_tsc = dpdk::rdtsc();
            tally.busy_cycles += last_tsc - start;
        }
        self.counters.publish(&tally);
        self.counters.mark_done();
        RxOutcome { tally, streams: table, first_tsc, last_tsc: first_tsc.map(|_| last_tsc) }
    }
}
