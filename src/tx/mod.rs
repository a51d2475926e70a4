//! The send loop: one per TX queue, on its own lcore.
//!
//! Every mbuf of the queue's pool already holds the whole frame, written
//! once when the pool was made ([`write_templates`]). Allocation resets only
//! the mbuf's metadata, so per packet the loop writes the lengths, the UDP
//! source port (when the queue sends several flows), the stream id and
//! sequence number, and the timestamp read once per burst. No allocation,
//! lock, syscall or configuration branch runs per packet.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use dpdk::{Burst, Mempool, RxQueue, TxQueue};
use latency::LatencyHistogram;
use layout::Stream;
use pace::{Schedule, Shape, ShapeStats};
use wire::{FrameSpec, Probe, PROBE_LEN, PROBE_OFFSET};

use crate::counters::{LaneCounters, StallWatch, Tally};
use crate::error::Error;
use crate::MAX_BURST;

pub mod c_lane;
pub mod outcome;
pub mod replay;

use outcome::bytes_taken;
pub use outcome::{ReplayTiming, TxOutcome};

/// Offset of the UDP source port in the frames blastdrop builds.
const UDP_SRC_PORT: usize = wire::ETHERNET_HEADER_LEN + wire::IPV4_HEADER_LEN;

/// Everything one send loop needs.
pub struct TxLane {
    pub queue: TxQueue,
    pub pool: Arc<Mempool>,
    /// The streams this queue sends, round robin.
    pub streams: Vec<Stream>,
    /// The sequence number each stream continues from (so a ladder's steps
    /// continue each stream's numbering and the receiver sees no gap).
    pub first_seqs: Vec<u32>,
    /// Frame length in the mbuf (FCS excluded).
    pub frame_len: u16,
    /// A size mix: each frame's length and headers from its cycle.
    pub mix: Option<Arc<MixFrames>>,
    pub burst: usize,
    /// Frames this queue sends before it stops; None: until told to stop.
    pub quota: Option<u64>,
    /// Frames per second for this queue; None: as fast as the queue takes them.
    pub rate: Option<f64>,
    /// How the frames are spread in time at that rate.
    pub shape: Shape,
    /// Seeds the Poisson gaps (each queue its own).
    pub seed: u64,
    pub tsc_hz: u64,
    /// Wall-clock time from the TSC, for the probes' timestamps.
    pub clock: crate::clock::WallClock,
    pub counters: Arc<LaneCounters>,
    /// Reflect mode: this queue's RX queue, where drop --reflect sends the
    /// probes back; each one's round trip goes into the histogram.
    pub reflect: Option<Reflect>,
    /// Cycles the lane spins per frame built, on purpose: the tests' knob
    /// ([`test_slowdown`]) that makes blast's own loop the limit. 0 always
    /// but in those tests.
    pub slowdown_cycles: u64,
}

/// The tests' knob that slows blast's own send loop on purpose (never a
/// flag): `BLASTDROP_TEST_SLOW_TX=<ns per frame>`, so that a cross-check
/// (`--cross-check`) can be shown naming blast's loop the limit. Read
/// once; said once on stderr when set, as its figures are not blast's.
pub fn test_slowdown(hz: u64) -> u64 {
    static NS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let ns = *NS.get_or_init(|| {
        let ns = std::env::var("BLASTDROP_TEST_SLOW_TX").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        if ns > 0 {
            tracing::warn!("BLASTDROP_TEST_SLOW_TX={ns}: blast's own send lanes spin {ns} ns a frame on purpose (a test knob): their figures are not blast's");
        }
        ns
    });
    (ns as f64 * hz as f64 / 1e9) as u64
}

/// What a lane needs to time reflected probes.
pub struct Reflect {
    pub queue: RxQueue,
    pub histogram: LatencyHistogram,
    /// The lane's counters: each round trip also goes into their live buckets.
    live: Arc<LaneCounters>,
    /// After sending stops, how long to keep collecting late reflections.
    pub linger_cycles: u64,
    /// Wall-clock time of the returns (the same conversion the stamps use).
    clock: crate::clock::WallClock,
    probed: u64,
    unprobed: u64,
    /// Probes sent before this lane started (a warm-up's, waiting in the
    /// ring through the drain while no lane polled it): not this phase's
    /// samples, counted apart. The lane's start, on the stamps' clock.
    stale: u64,
    since_ns: u64,
    back: Burst,
}

/// Writes the frame of `spec` into every mbuf of `pool`, at the place a
/// freshly allocated mbuf's data starts.
pub fn write_templates(pool: &Mempool, spec: &FrameSpec) -> Result<(), Error> {
    let mut template = vec![0u8; spec.len_without_fcs()];
    wire::write_frame(spec, &mut template)?;
    Ok(pool.write_template(&template)?)
}

/// A size mix as one queue sends it: for every size, the frame length and
/// the Ethernet, IPv4 and UDP headers (lengths and checksum for that size);
/// and the cycle, as indexes into them. The pool's template is the largest
/// frame, so a shorter one is its head with its own headers.
pub struct MixFrames {
    slots: Vec<u8>,
    lens: Vec<u16>,
    heads: Vec<[u8; wire::HEADERS_LEN]>,
}

impl MixFrames {
    /// `spec`: the queue's frame (its size is replaced by each of the mix's).
    pub fn new(mix: &wire::SizeMix, spec: &FrameSpec) -> Result<MixFrames, Error> {
        let (mut lens, mut heads) = (Vec::new(), Vec::new());
        for &(size, _) in mix.parts() {
            let spec = FrameSpec { frame_size: size as usize, ..spec.clone() };
            let mut frame = vec![0u8; spec.len_without_fcs()];
            wire::write_frame(&spec, &mut frame)?;
            lens.push(frame.len() as u16);
            heads.push(frame[..wire::HEADERS_LEN].try_into().expect("a frame holds its headers"));
        }
        let index = |size: u32| mix.parts().iter().position(|&(s, _)| s == size).expect("the cycle's sizes are the mix's") as u8;
        Ok(MixFrames { slots: mix.cycle().into_iter().map(index).collect(), lens, heads })
    }
}

/// Splits `accepted` frames over `streams` streams sent round robin from the first.
pub fn split_round_robin(accepted: u64, streams: usize) -> Vec<u64> {
    let k = streams as u64;
    (0..k).map(|i| accepted / k + u64::from(i < accepted % k)).collect()
}

/// Writes each frame's per-packet fields: the probe (stream, sequence
/// number, send time) and, when the queue sends several flows, the UDP
/// source port. Streams take turns, round robin.
struct Stamper {
    ids: Vec<u16>,
    ports: Vec<[u8; 2]>,
    seqs: Vec<u32>,
    next: usize,
    multi_flow: bool,
}

impl Stamper {
    fn new(streams: &[Stream], first_seqs: &[u32]) -> Stamper {
        assert_eq!(first_seqs.len(), streams.len(), "one first sequence number per stream");
        Stamper {
            ids: streams.iter().map(|s| s.id).collect(),
            ports: streams.iter().map(|s| s.src_port.to_be_bytes()).collect(),
            seqs: first_seqs.to_vec(),
            next: 0,
            multi_flow: streams.iter().any(|s| s.src_port != streams[0].src_port),
        }
    }

    /// Stamps a burst's frames in place, each `len` bytes long.
    #[inline(always)]
    fn stamp_burst(&mut self, burst: &mut Burst, len: u16, tx_ns: u64) {
        if self.ids.len() == 1 {
            // One stream: its sequence number lives in a register, not in
            // memory that each frame would read back after the last wrote it.
            let (stream, mut seq) = (self.ids[0], self.seqs[0]);
            burst.write_heads::<HEAD>(len, |f| {
                write_probe(f, Probe { stream, seq, tx_ns });
                seq = seq.wrapping_add(1);
            });
            self.seqs[0] = seq;
        } else {
            burst.write_heads::<HEAD>(len, |f| self.next_frame(f, tx_ns));
        }
    }

    /// Stamps a burst of a size mix's frames, continuing its cycle at
    /// `pos`: each frame gets its slot's length and headers, then its
    /// stream's fields. Returns the burst's bytes, FCS included.
    #[inline(always)]
    fn stamp_mixed(&mut self, burst: &mut Burst, mix: &MixFrames, pos: &mut usize, tx_ns: u64) -> u64 {
        let n = burst.len() as u64;
        let bytes = burst.write_heads_sized::<HEAD>(|f| {
            let k = usize::from(mix.slots[*pos]);
            *pos = if *pos + 1 == mix.slots.len() { 0 } else { *pos + 1 };
            f[..wire::HEADERS_LEN].copy_from_slice(&mix.heads[k]);
            self.next_frame(f, tx_ns);
            mix.lens[k]
        });
        bytes + n * wire::FCS_LEN as u64
    }

    /// The next stream's frame (round robin): its source port when the
    /// queue sends several flows, and its probe.
    #[inline(always)]
    fn next_frame(&mut self, f: &mut [u8; HEAD], tx_ns: u64) {
        let s = self.next;
        if self.multi_flow {
            f[UDP_SRC_PORT..UDP_SRC_PORT + 2].copy_from_slice(&self.ports[s]);
        }
        write_probe(f, Probe { stream: self.ids[s], seq: self.seqs[s], tx_ns });
        self.seqs[s] = self.seqs[s].wrapping_add(1);
        self.next = if s + 1 == self.ids.len() { 0 } else { s + 1 };
    }
}

/// The bytes of a frame the loop writes: up to the probe's end (60, the
/// smallest frame without its FCS).
const HEAD: usize = PROBE_OFFSET + PROBE_LEN;

#[inline(always)]
fn write_probe(frame: &mut [u8; HEAD], p: Probe) {
    let (_, probe) = frame.split_at_mut(PROBE_OFFSET);
    p.stamp(probe.try_into().expect("HEAD ends at the probe's end"));
}

/// Spins until the TSC reads `until` (the tests' slowdown); returns the last read.
#[cold]
fn spin_until(until: u64) -> u64 {
    loop {
        let now = dpdk::rdtsc();
        if now >= until {
            return now;
        }
        std::hint::spin_loop();
    }
}

/// A seed for queue `queue`'s Poisson gaps: each queue its own, each run its own.
pub fn lane_seed(queue: u16) -> u64 {
    0x9e37_79b9_7f4a_7c15 ^ (u64::from(queue) << 32) ^ dpdk::rdtsc()
}

/// The pace of a paced lane and the shape it achieved (a port's lanes and
/// the socket lanes alike).
pub(crate) struct Pace {
    pub(crate) schedule: Option<Schedule>,
    pub(crate) shape: ShapeStats,
    /// When the last burst was built, and its frames (a paced lane's end).
    last_send: Option<(u64, u32)>,
    /// Whether the loop stood still between its TSC reads.
    pub(crate) stall: StallWatch,
}

impl Pace {
    /// A lane's pace from `now`: `rate` frames a second in `shape` (None: unpaced).
    pub(crate) fn new(rate: Option<f64>, shape: Shape, hz: u64, seed: u64, now: u64) -> Pace {
        let schedule = rate.and_then(|r| Schedule::new(shape, hz, r, now, seed));
        Pace { schedule, shape: ShapeStats::default(), last_send: None, stall: StallWatch::new(now, hz) }
    }

    /// How many frames to build now: a burst, or, paced, what is due once
    /// the next send's time comes (the wait is not busy time; `poll` runs
    /// meanwhile: a reflecting lane collects its reflections).
    #[inline(always)]
    pub(crate) fn wait_due(&mut self, burst: usize, tally: &mut Tally, last: &mut u64, stop: &AtomicBool, mut poll: impl FnMut()) -> usize {
        let Pace { schedule, stall, .. } = self;
        let Some(p) = schedule.as_mut() else { return burst };
        let mut now = dpdk::rdtsc();
        stall.at(now, tally);
        if now < p.deadline() {
            tally.busy_cycles += now - *last;
            while now < p.deadline() && !stop.load(Relaxed) {
                poll();
                std::hint::spin_loop();
                now = dpdk::rdtsc();
                stall.at(now, tally);
            }
            *last = now;
        }
        p.take_due(now, burst as u32) as usize
    }

    /// Records a burst of `n` frames built at `tsc`.
    #[inline(always)]
    pub(crate) fn sent(&mut self, tsc: u64, n: usize) {
        self.last_send = Some((tsc, n as u32));
        if self.schedule.is_some() {
            self.shape.record(tsc, n as u32);
        } else {
            self.shape.count(n as u32);
        }
    }

    /// When a paced lane stopped: one send interval after its last send,
    /// not later (a lane descheduled just before the stop sent nothing for
    /// its last moments, and that stall would read as a sender short of
    /// its pace). A lane too slow for its pace sends all the time, so its
    /// shortfall still shows.
    pub(crate) fn end(&self, now: u64, rate: Option<f64>, hz: u64) -> u64 {
        match (rate, self.last_send) {
            (Some(r), Some((at, n))) if r > 0.0 => now.min(at + (hz as f64 * f64::from(n) / r) as u64),
            _ => now,
        }
    }
}

impl TxLane {
    /// Runs until the quota is sent or `stop` is set; hands the queue back
    /// with the outcome. Kept whole (over 60 lines): the hot loop, read in
    /// one screen like DPDK's skeleton; its waits and its end are apart.
    pub fn run(mut self, stop: &AtomicBool) -> (TxQueue, TxOutcome) {
        let start_tsc = dpdk::rdtsc();
        let burst = self.burst.clamp(1, MAX_BURST);
        let frame_bytes = u64::from(self.frame_len) + wire::FCS_LEN as u64;
        let mut stamper = Stamper::new(&self.streams, &self.first_seqs);
        let mut pkts = Burst::new();
        let (mut tally, mut remaining, mut last) = (Tally::default(), self.quota.unwrap_or(u64::MAX), dpdk::rdtsc());
        let mut pace = Pace::new(self.rate, self.shape, self.tsc_hz, self.seed, last);
        let mut reflect = self.reflect.take();
        let mut clock = self.clock;
        if let Some(r) = reflect.as_mut() {
            r.since_ns = clock.ns(start_tsc);
        }
        // A size mix: where its cycle is, and the bytes of the frames built and not yet taken.
        let (mix, mut mix_pos, mut pending_bytes) = (self.mix.take(), 0usize, 0u64);
        // Paced lanes time each tx_burst (a pace held back beneath the queues
        // shows there); unpaced ones skip the reads: their figure is the rate.
        let timed_tx = pace.schedule.is_some();

        while !stop.load(Relaxed) {
            if pkts.is_empty() {
                if remaining == 0 {
                    break;
                }
                let due = pace.wait_due(burst, &mut tally, &mut last, stop, || {
                    if let Some(r) = reflect.as_mut() {
                        r.poll();
                    }
                });
                if !pkts.alloc(&self.pool, due.min(remaining.min(MAX_BURST as u64) as usize)) {
                    tally.alloc_failures += 1;
                    self.counters.publish(&tally);
                    continue;
                }
                // One TSC read per burst: the probes' timestamp, and the
                // busy-time mark that covers the previous burst's sending.
                let tsc = dpdk::rdtsc();
                pace.stall.at(tsc, &mut tally);
                (tally.busy_cycles, last) = (tally.busy_cycles + (tsc - last), tsc);
                pace.sent(tsc, pkts.len());
                self.counters.publish(&tally);
                remaining -= pkts.len() as u64;
                match &mix {
                    None => stamper.stamp_burst(&mut pkts, self.frame_len, clock.ns(tsc)),
                    Some(m) => pending_bytes = stamper.stamp_mixed(&mut pkts, m, &mut mix_pos, clock.ns(tsc)),
                }
                if self.slowdown_cycles > 0 {
                    // Time spent on purpose is no stall.
                    pace.stall.resume(spin_until(tsc + self.slowdown_cycles * pkts.len() as u64));
                }
            }
            // Paced: a read either side of each tx_burst, how long the driver kept the lane.
            let before = if timed_tx { dpdk::rdtsc() } else { 0 };
            let sent = pkts.tx(&mut self.queue);
            let after = if timed_tx { dpdk::rdtsc() } else { 0 };
            tally.tx_cycles += after - before;
            if self.queue.faulted() {
                // The ring vanished under the burst (a memif peer left): the
                // device may hold some frames, none counts as sent, this queue is done.
                tally.faults += 1;
                break;
            }
            tally.packets += sent as u64;
            tally.bytes += match mix {
                None => sent as u64 * frame_bytes,
                // What left is what was built less what is still here.
                Some(_) => bytes_taken(&pkts, &mut pending_bytes),
            };
            if !pkts.is_empty() {
                // Ring full: waiting on the device, so publishing costs
                // nothing here (the wait is the device's, not a stall).
                tally.ring_full_retries += 1;
                pace.stall.at(if timed_tx { after } else { dpdk::rdtsc() }, &mut tally);
                self.counters.publish(&tally);
            }
            if let Some(r) = reflect.as_mut() {
                r.poll();
            }
        }
        self.finish(start_tsc, last, tally, pkts.len() as u64, &pace, stamper.seqs.len(), reflect)
    }

    /// The lane's end: busy time closed, late reflections collected, the
    /// outcome assembled. `unsent` frames were built but never taken (the
    /// burst frees them).
    #[allow(clippy::too_many_arguments)]
    fn finish(
        self,
        start_tsc: u64,
        last: u64,
        mut tally: Tally,
        unsent: u64,
        pace: &Pace,
        nstreams: usize,
        mut reflect: Option<Reflect>,
    ) -> (TxQueue, TxOutcome) {
        let now = dpdk::rdtsc();
        tally.busy_cycles += now - last;
        let end_tsc = pace.end(now, self.rate, self.tsc_hz);
        if let Some(r) = reflect.as_mut() {
            // Reflections still on their way back.
            let until = dpdk::rdtsc() + r.linger_cycles;
            while dpdk::rdtsc() < until {
                r.poll();
            }
        }
        self.counters.publish(&tally);
        self.counters.mark_done();
        // Frames are accepted in the order they were built, so the accepted
        // ones are a prefix of the round robin.
        let per_stream = split_round_robin(tally.packets, nstreams);
        let next_seqs = self.first_seqs.iter().zip(&per_stream).map(|(&s, &n)| s.wrapping_add(n as u32)).collect();
        let (reflected, reflected_unprobed, reflected_stale) = reflect.as_ref().map_or((0, 0, 0), |r| (r.probed, r.unprobed, r.stale));
        let (rx_queue, latency) = reflect.map(|r| (r.queue, r.histogram)).unzip();
        let shape = pace.shape.clone();
        let outcome = TxOutcome {
            tally,
            unsent,
            per_stream,
            next_seqs,
            start_tsc,
            end_tsc,
            shape,
            rx_queue,
            latency,
            reflected,
            reflected_unprobed,
            reflected_stale,
            replay: None,
            longest_stall: pace.stall.longest,
        };
        (self.queue, outcome)
    }
}

impl Reflect {
    pub fn new(queue: RxQueue, linger_cycles: u64, clock: crate::clock::WallClock, live: Arc<LaneCounters>) -> Reflect {
        Reflect {
            live,
            queue,
            histogram: LatencyHistogram::new(),
            linger_cycles,
            clock,
            probed: 0,
            unprobed: 0,
            stale: 0,
            since_ns: 0,
            back: Burst::new(),
        }
    }

    /// Takes what came back, times each probe against the time it carries
    /// (stamped by this host's clock, so the round trip needs no clock
    /// sync), and frees the frames.
    #[inline]
    fn poll(&mut self) {
        if self.queue.faulted() || self.back.rx(&mut self.queue, 32) == 0 {
            return;
        }
        let now = self.clock.ns(dpdk::rdtsc());
        for frame in self.back.frames() {
            match wire::parse_probe(frame) {
                Some(p) if p.tx_ns >= self.since_ns => {
                    self.probed += 1;
                    let ns = now.saturating_sub(p.tx_ns);
                    self.histogram.record_ns(ns);
                    self.live.latency.record(ns);
                }
                Some(_) => self.stale += 1,
                None => self.unprobed += 1,
            }
        }
        self.back.free();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_split() {
        assert_eq!(split_round_robin(10, 3), [4, 3, 3]);
        assert_eq!(split_round_robin(2, 3), [1, 1, 0]);
        assert_eq!(split_round_robin(0, 1), [0]);
    }

    #[test]
    fn udp_source_port_offset() {
        let mut frame = [0u8; 60];
        let spec = FrameSpec { src_port: 0xabcd, ..FrameSpec::default() };
        wire::write_frame(&spec, &mut frame).unwrap();
        assert_eq!(&frame[UDP_SRC_PORT..UDP_SRC_PORT + 2], &[0xab, 0xcd]);
    }

    fn frames(n: usize) -> Vec<[u8; HEAD]> {
        let mut f = [0u8; HEAD];
        wire::write_frame(&FrameSpec::default(), &mut f).unwrap();
        vec![f; n]
    }

    #[test]
    fn one_stream_numbers_in_order() {
        let mut s = Stamper::new(&[Stream { id: 7, queue: 0, src_port: 1000 }], &[41]);
        let mut f = frames(3);
        f.iter_mut().for_each(|f| s.next_frame(f, 99));
        let got: Vec<(u16, u32, u64)> = f.iter().map(|v| wire::parse_probe(v).map(|p| (p.stream, p.seq, p.tx_ns)).unwrap()).collect();
        assert_eq!(got, [(7, 41, 99), (7, 42, 99), (7, 43, 99)]);
        assert_eq!(s.seqs, [44]);
    }

    #[test]
    fn several_streams_take_turns_and_carry_their_ports() {
        let streams = [Stream { id: 0, queue: 0, src_port: 1000 }, Stream { id: 2, queue: 0, src_port: 1002 }];
        let mut s = Stamper::new(&streams, &[0, 10]);
        let mut f = frames(3);
        f.iter_mut().for_each(|f| s.next_frame(f, 5));
        let mut g = frames(1);
        g.iter_mut().for_each(|f| s.next_frame(f, 6));
        let all: Vec<(u16, u32, u16)> = f
            .iter()
            .chain(&g)
            .map(|v| {
                let p = wire::parse_probe(v).unwrap();
                (p.stream, p.seq, u16::from_be_bytes([v[UDP_SRC_PORT], v[UDP_SRC_PORT + 1]]))
            })
            .collect();
        assert_eq!(all, [(0, 0, 1000), (2, 10, 1002), (0, 1, 1000), (2, 11, 1002)]);
    }

    #[test]
    fn a_paced_lane_ends_one_interval_after_its_last_send() {
        let mut p = Pace { schedule: None, shape: ShapeStats::default(), last_send: None, stall: StallWatch::new(0, 1_000_000_000) };
        assert_eq!(p.end(500, Some(1e6), 1_000_000_000), 500);
        p.sent(100, 2);
        // 2 frames at 1 Mpps: 2 us = 2000 cycles at 1 GHz.
        assert_eq!(p.end(1_000_000, Some(1e6), 1_000_000_000), 2100);
        assert_eq!(p.end(1000, Some(1e6), 1_000_000_000), 1000);
        assert_eq!(p.end(1_000_000, None, 1_000_000_000), 1_000_000);
    }
}
