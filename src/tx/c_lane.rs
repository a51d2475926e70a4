//! The C lanes: the plain C send loop of blast-ref (examples/ref_lane.c),
//! linked in and run on blast's own lcores, ports, queues, pools and
//! frames, so that `--cross-check` can measure a step a second time with
//! it and tell whether a ceiling is the path's or blast's own loop.
//!
//! The C loop is unpaced, sends no size mix and times no reflections: it is
//! the yardstick, DPDK's skeleton with the probe, and nothing more.

use std::os::raw::{c_int, c_void};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dpdk::{Mempool, TxQueue};
use layout::Stream;
use pace::ShapeStats;

use super::{split_round_robin, TxOutcome};
use crate::counters::{LaneCounters, Tally, STALL_MS};

type GuardedTx = unsafe extern "C" fn(u16, u16, *mut *mut dpdk_ffi::rte_mbuf, u16, *mut c_int) -> u16;

/// `struct ref_lane` of examples/ref_lane.h, field for field.
#[repr(C)]
struct RefLane {
    pool: *mut c_void,
    stop: *const u8,
    ids: *const u16,
    ports: *const u16,
    seqs: *mut u32,
    live_packets: *mut u64,
    live_bytes: *mut u64,
    guarded_tx: Option<GuardedTx>,
    quota: u64,
    anchor_tsc: u64,
    anchor_ns: u64,
    ns_per_cycle: f64,
    stall_cycles: u64,
    nstreams: u32,
    port: u16,
    queue: u16,
    burst: u16,
    len: u16,
    multi_flow: u8,
    bare: u8,
    pad: [u8; 2],
    sent: u64,
    built: u64,
    sends: u64,
    retries: u64,
    alloc_failures: u64,
    stalls: u64,
    stalled_cycles: u64,
    longest_stall: u64,
    t0: u64,
    t1: u64,
    max_burst: u32,
    faulted: i32,
}

/// Fields of `struct ref_lane` (REF_LANE_FIELDS in ref_lane.h).
#[cfg(test)]
const FIELDS: usize = 33;

extern "C" {
    fn ref_lane_run(lane: *mut c_void) -> c_int;
    #[cfg(test)]
    static ref_lane_size: u64;
    #[cfg(test)]
    static ref_lane_offsets: [u64; FIELDS];
}

/// Everything one C lane needs: a [`super::TxLane`]'s parts that the C loop uses.
pub struct CLane {
    pub queue: TxQueue,
    pub pool: Arc<Mempool>,
    pub streams: Vec<Stream>,
    pub first_seqs: Vec<u32>,
    /// Frame length in the mbuf (FCS excluded).
    pub frame_len: u16,
    pub burst: usize,
    pub quota: Option<u64>,
    pub tsc_hz: u64,
    pub clock: crate::clock::WallClock,
    pub counters: Arc<LaneCounters>,
}

impl CLane {
    /// Runs the C loop until the quota is sent or `stop` is set; hands the
    /// queue back with the outcome, as [`super::TxLane::run`] does.
    pub fn run(mut self, stop: &AtomicBool) -> (TxQueue, TxOutcome) {
        let ids: Vec<u16> = self.streams.iter().map(|s| s.id).collect();
        let ports: Vec<u16> = self.streams.iter().map(|s| s.src_port).collect();
        let mut seqs = self.first_seqs.clone();
        let (packets, bytes) = self.counters.packets_and_bytes();
        let guarded = self.queue.guarded();
        let now = dpdk::rdtsc();
        let (anchor_tsc, anchor_ns, ns_per_cycle) = self.clock.anchor(now);
        let mut lane = RefLane {
            pool: self.pool.as_ptr().cast(),
            stop: (stop as *const AtomicBool).cast(),
            ids: ids.as_ptr(),
            ports: ports.as_ptr(),
            seqs: seqs.as_mut_ptr(),
            live_packets: packets.as_ptr(),
            live_bytes: bytes.as_ptr(),
            guarded_tx: guarded.then_some(dpdk_ffi::bd_tx_burst_guarded as GuardedTx),
            quota: self.quota.unwrap_or(u64::MAX),
            anchor_tsc,
            anchor_ns,
            ns_per_cycle,
            stall_cycles: (self.tsc_hz / 1000 * STALL_MS).max(1),
            nstreams: ids.len() as u32,
            port: self.queue.port(),
            queue: self.queue.id(),
            burst: self.burst.clamp(1, crate::MAX_BURST) as u16,
            len: self.frame_len,
            multi_flow: u8::from(ports.iter().any(|&p| p != ports[0])),
            bare: 0,
            pad: [0; 2],
            sent: 0,
            built: 0,
            sends: 0,
            retries: 0,
            alloc_failures: 0,
            stalls: 0,
            stalled_cycles: 0,
            longest_stall: 0,
            t0: 0,
            t1: 0,
            max_burst: 0,
            faulted: 0,
        };
        // SAFETY: every pointer in `lane` points into this frame's values
        // (ids, ports, seqs), the lane's counters or the pool, all alive
        // until the call returns; `stop` is an AtomicBool (one byte, read
        // volatile by the loop); the queue is this lane's alone (it holds
        // the handle), set up and started; the pool's mbufs hold the frame.
        unsafe { ref_lane_run((&mut lane as *mut RefLane).cast()) };
        if lane.faulted != 0 {
            self.queue.mark_faulted();
        }
        let tally = Tally {
            packets: lane.sent,
            bytes: lane.sent * (u64::from(self.frame_len) + wire::FCS_LEN as u64),
            busy_cycles: lane.t1.wrapping_sub(lane.t0),
            ring_full_retries: lane.retries,
            alloc_failures: lane.alloc_failures,
            faults: u64::from(lane.faulted != 0),
            stalls: lane.stalls,
            stalled_ticks: lane.stalled_cycles,
            ..Tally::default()
        };
        self.counters.publish(&tally);
        self.counters.mark_done();
        let per_stream = split_round_robin(tally.packets, ids.len());
        let next_seqs = self.first_seqs.iter().zip(&per_stream).map(|(&s, &n)| s.wrapping_add(n as u32)).collect();
        let outcome = TxOutcome {
            tally,
            // The loop freed what it had built and not sent.
            unsent: 0,
            per_stream,
            next_seqs,
            start_tsc: lane.t0,
            end_tsc: lane.t1,
            shape: ShapeStats::counted(lane.sends, lane.built, lane.max_burst),
            longest_stall: lane.longest_stall,
            ..TxOutcome::default()
        };
        (self.queue, outcome)
    }
}

/// The mirror's size and field offsets, in the C struct's field order
/// (a unit test checks them against the C compiler's on every architecture CI builds).
#[cfg(test)]
fn mirror_layout() -> (u64, [u64; FIELDS]) {
    use std::mem::offset_of;
    let o = [
        offset_of!(RefLane, pool),
        offset_of!(RefLane, stop),
        offset_of!(RefLane, ids),
        offset_of!(RefLane, ports),
        offset_of!(RefLane, seqs),
        offset_of!(RefLane, live_packets),
        offset_of!(RefLane, live_bytes),
        offset_of!(RefLane, guarded_tx),
        offset_of!(RefLane, quota),
        offset_of!(RefLane, anchor_tsc),
        offset_of!(RefLane, anchor_ns),
        offset_of!(RefLane, ns_per_cycle),
        offset_of!(RefLane, stall_cycles),
        offset_of!(RefLane, nstreams),
        offset_of!(RefLane, port),
        offset_of!(RefLane, queue),
        offset_of!(RefLane, burst),
        offset_of!(RefLane, len),
        offset_of!(RefLane, multi_flow),
        offset_of!(RefLane, bare),
        offset_of!(RefLane, pad),
        offset_of!(RefLane, sent),
        offset_of!(RefLane, built),
        offset_of!(RefLane, sends),
        offset_of!(RefLane, retries),
        offset_of!(RefLane, alloc_failures),
        offset_of!(RefLane, stalls),
        offset_of!(RefLane, stalled_cycles),
        offset_of!(RefLane, longest_stall),
        offset_of!(RefLane, t0),
        offset_of!(RefLane, t1),
        offset_of!(RefLane, max_burst),
        offset_of!(RefLane, faulted),
    ];
    (std::mem::size_of::<RefLane>() as u64, o.map(|x| x as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mirror_has_the_c_structs_layout() {
        // SAFETY: constants the C library defines.
        let c = unsafe { (super::ref_lane_size, super::ref_lane_offsets) };
        assert_eq!(c, super::mirror_layout(), "src/tx/c_lane.rs's RefLane differs from examples/ref_lane.h's struct ref_lane");
    }
}
