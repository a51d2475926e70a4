//! The replay loop: one per TX queue, sending that queue's share of a
//! capture (its flows, in order) at the times the schedule gives, pass
//! after pass. Each frame is copied whole from the capture into a fresh
//! mbuf; frames with room for a probe get one (the queue's stream and
//! the send time). The loop measures how closely it kept the capture's
//! gaps: per frame, the gap from the frame before it on this queue as
//! sent against the gap the schedule asked for.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use capture::{Capture, ProbeStats, Schedule};
use dpdk::{Burst, Mempool, TxQueue};
use wire::{Probe, PROBE_LEN, PROBE_OFFSET};

use super::outcome::ReplayTiming;
use super::outcome::{bytes_taken, TxOutcome};
use crate::counters::{LaneCounters, Tally};
use crate::MAX_BURST;

/// A capture ready to replay: rewritten, and its schedule.
#[derive(Debug)]
pub struct Replay {
    pub capture: Capture,
    pub schedule: Schedule,
    /// Stamp probes where a frame has room (off: the payload as captured).
    /// Set only by `new`, which readied those frames for it.
    stamp: bool,
}

impl Replay {
    /// The replay of `capture`; with `probes_for_run` (the run id), its
    /// frames with room for a probe readied for one (UDP checksum 0, the run
    /// id: capture::Capture::ready_for_probes), so the lane writes only the
    /// probe per send and every frame it sends has right checksums.
    pub fn new(mut capture: Capture, schedule: Schedule, probes_for_run: Option<u16>) -> (Replay, Option<ProbeStats>) {
        let probes = probes_for_run.map(|run_id| capture.ready_for_probes(run_id));
        (Replay { capture, schedule, stamp: probes.is_some() }, probes)
    }
}

/// Everything one replay loop needs.
pub struct ReplayLane {
    pub queue: TxQueue,
    pub pool: Arc<Mempool>,
    pub replay: Arc<Replay>,
    /// Which of the schedule's queue plans this lane sends.
    pub plan: usize,
    /// The probe stream this queue stamps, and its first sequence number.
    pub stream: u16,
    pub first_seq: u32,
    pub burst: usize,
    /// The cycle count every lane's first pass starts at (shared, so the
    /// queues keep the capture's timing between them too).
    pub start_tsc: u64,
    pub tsc_hz: u64,
    pub clock: crate::clock::WallClock,
    pub counters: Arc<LaneCounters>,
}

/// Where the lane is in its plan: frame `i` of pass `pass`.
#[derive(Clone, Copy)]
struct Cursor {
    i: usize,
    pass: u64,
}

impl Cursor {
    /// The frame after this one in a plan of `n` frames (the next pass's first after the last).
    #[inline(always)]
    fn next(self, n: usize) -> Cursor {
        if self.i + 1 == n {
            Cursor { i: 0, pass: self.pass + 1 }
        } else {
            Cursor { i: self.i + 1, pass: self.pass }
        }
    }
}

impl ReplayLane {
    /// Sends the queue's share of the capture on its schedule until every
    /// pass is out or `stop` is set. Kept whole (over 60 lines): the send
    /// loop and its per-frame closure share the cursor, the sequence and
    /// the timing figures, and read as one screen like `TxLane::run`.
    pub fn run(self, stop: &AtomicBool) -> (TxQueue, TxOutcome) {
        let r = self.replay.clone();
        let plan = &r.schedule.queues[self.plan];
        let hz = self.tsc_hz as f64;
        // The plan's times in cycles, worked out before the first frame.
        let offs: Vec<u64> = plan.offsets_ns.iter().map(|&ns| (ns as f64 * hz / 1e9) as u64).collect();
        let period = (r.schedule.period_ns as f64 * hz / 1e9) as u64;
        let (n, loops) = (offs.len(), r.schedule.loops);
        let due_at = |c: Cursor| self.start_tsc + c.pass * period + offs[c.i];
        let ns_per_cycle = 1e9 / hz;
        let mut timing = ReplayTiming::default();
        let (mut tally, mut pkts, mut clock) = (Tally::default(), Burst::new(), self.clock);
        let mut queue = self.queue;
        let mut cur = Cursor { i: 0, pass: 0 };
        let mut seq = self.first_seq;
        let (mut prev_due, mut prev_sent, mut pending_bytes) = (None::<u64>, 0u64, 0u64);
        let burst = self.burst.clamp(1, MAX_BURST);
        while n > 0 && !stop.load(Relaxed) {
            if pkts.is_empty() {
                if cur.pass == loops {
                    break;
                }
                let now = dpdk::rdtsc();
                if now < due_at(cur) {
                    std::hint::spin_loop();
                    continue;
                }
                // Every frame whose time has come, up to a burst.
                let mut m = 0;
                let mut c = cur;
                while m < burst && c.pass < loops && due_at(c) <= now {
                    m += 1;
                    c = c.next(n);
                }
                if !pkts.alloc(&self.pool, m) {
                    tally.alloc_failures += 1;
                    self.counters.publish(&tally);
                    continue;
                }
                let tx_ns = clock.ns(now);
                let cap = &r.capture;
                let built = pkts.write_frames(|room| {
                    let idx = plan.frames[cur.i] as usize;
                    let f = cap.frame(idx);
                    room[..f.len()].copy_from_slice(f);
                    if r.stamp && cap.info(idx).probe_room {
                        let p: &mut [u8; PROBE_LEN] = (&mut room[PROBE_OFFSET..PROBE_OFFSET + PROBE_LEN]).try_into().expect("probe room");
                        Probe { stream: self.stream, seq, tx_ns }.write(p);
                        seq = seq.wrapping_add(1);
                        timing.stamped += 1;
                    } else {
                        timing.unstamped += 1;
                    }
                    let due = due_at(cur);
                    if let Some(pd) = prev_due {
                        let asked = due - pd;
                        let got = now - prev_sent;
                        timing.gap_error.record_ns((got.abs_diff(asked) as f64 * ns_per_cycle) as u64);
                    }
                    timing.lateness.record_ns(((now - due) as f64 * ns_per_cycle) as u64);
                    (prev_due, prev_sent) = (Some(due), now);
                    cur = cur.next(n);
                    f.len()
                });
                pending_bytes = built + (m * wire::FCS_LEN) as u64;
                tally.busy_cycles += dpdk::rdtsc() - now;
            }
            let sent = pkts.tx(&mut queue);
            if queue.faulted() {
                tally.faults += 1;
                break;
            }
            tally.packets += sent as u64;
            tally.bytes += bytes_taken(&pkts, &mut pending_bytes);
            if !pkts.is_empty() {
                tally.ring_full_retries += 1;
            }
            self.counters.publish(&tally);
        }
        let stopped = Stopped { cur, prev_sent, seq, timing, tally, start_tsc: self.start_tsc, first_seq: self.first_seq };
        (queue, stopped.finish(&self.counters, &pkts, &offs, period, loops, r.stamp))
    }
}

impl Stopped {
    /// The lane's end: the schedule's end when every pass went out,
    /// otherwise now (stopped, or behind); frames built and never taken
    /// (`pkts`) hand back their sequence numbers.
    fn finish(self, counters: &LaneCounters, pkts: &Burst, offs: &[u64], period: u64, loops: u64, stamp: bool) -> TxOutcome {
        let Stopped { cur, prev_sent, seq, mut timing, tally, start_tsc, first_seq } = self;
        let now = dpdk::rdtsc();
        let end_tsc = if offs.is_empty() {
            start_tsc
        } else if cur.pass == loops {
            now.min(start_tsc + loops * period).max(prev_sent)
        } else {
            now
        };
        timing.due = due_by(offs, period, loops, end_tsc.saturating_sub(start_tsc));
        // Frames built and never taken used up sequence numbers the receiver will not see.
        let unsent_stamped = if stamp { pkts.frames().filter(|f| wire::parse_probe(f).is_some()).count() as u32 } else { 0 };
        let next_seq = seq.wrapping_sub(unsent_stamped);
        timing.stamped -= u64::from(unsent_stamped);
        let unsent = pkts.len() as u64;
        timing.unstamped -= unsent - u64::from(unsent_stamped);
        counters.publish(&tally);
        counters.mark_done();
        TxOutcome {
            tally,
            unsent,
            per_stream: vec![u64::from(next_seq.wrapping_sub(first_seq))],
            next_seqs: vec![next_seq],
            start_tsc,
            end_tsc,
            shape: pace::ShapeStats::default(),
            rx_queue: None,
            latency: None,
            reflected: 0,
            reflected_unprobed: 0,
            reflected_stale: 0,
            longest_stall: 0,
            replay: Some(timing),
        }
    }
}

/// Where a replay lane stood when it stopped sending.
struct Stopped {
    cur: Cursor,
    prev_sent: u64,
    seq: u32,
    timing: ReplayTiming,
    tally: Tally,
    start_tsc: u64,
    first_seq: u32,
}

/// Frames of all passes whose time is at most `t` cycles after the start.
/// A pass's frames all come before the next pass begins (its period is
/// longer than its span), so at most one pass is partly due.
fn due_by(offs: &[u64], period: u64, loops: u64, t: u64) -> u64 {
    let n = offs.len() as u64;
    let Some(&last) = offs.last() else { return 0 };
    if period == 0 {
        return if t >= last { loops * n } else { offs.partition_point(|&o| o <= t) as u64 };
    }
    let full = if t >= last { ((t - last) / period + 1).min(loops) } else { 0 };
    let partial = if full < loops && t >= full * period { offs.partition_point(|&o| o <= t - full * period) as u64 } else { 0 };
    full * n + partial
}

#[cfg(test)]
mod tests {
    use super::due_by;

    #[test]
    fn frames_due_by_a_time() {
        // A pass of 3 frames at 0, 10, 20 cycles, every 30 cycles, 4 passes.
        let offs = [0, 10, 20];
        assert_eq!(due_by(&offs, 30, 4, 0), 1);
        assert_eq!(due_by(&offs, 30, 4, 25), 3);
        assert_eq!(due_by(&offs, 30, 4, 30), 4);
        assert_eq!(due_by(&offs, 30, 4, 55), 6);
        assert_eq!(due_by(&offs, 30, 4, 1000), 12);
        // Fast: everything is due at once.
        assert_eq!(due_by(&[0, 0], 0, 5, 0), 10);
        assert_eq!(due_by(&[], 30, 4, 100), 0);
    }
}
