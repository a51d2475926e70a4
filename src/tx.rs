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

use dpdk::{ffi, Mbuf, MbufLayout, Mempool, RxQueue, TxQueue};
use latency::LatencyHistogram;
use pace::{Schedule, Shape, ShapeStats};
use wire::{FrameSpec, Probe, Stream, PROBE_LEN, PROBE_OFFSET};

use crate::counters::{LaneCounters, Tally};
use crate::MAX_BURST;

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
}

/// What a lane needs to time reflected probes.
pub struct Reflect {
    pub queue: RxQueue,
    pub histogram: LatencyHistogram,
    /// After sending stops, how long to keep collecting late reflections.
    pub linger_cycles: u64,
}

/// What a send loop reports when it ends.
pub struct TxOutcome {
    pub tally: Tally,
    /// Frames built but never accepted by the device (freed at stop).
    pub unsent: u64,
    /// Frames accepted per stream, in the lane's stream order.
    pub per_stream: Vec<u64>,
    /// The sequence number each stream continues from next time: frames
    /// built but never accepted do not use one up.
    pub next_seqs: Vec<u32>,
    /// Cycle counter when the loop started and ended.
    pub start_tsc: u64,
    pub end_tsc: u64,
    /// The shape achieved: frames per send and the gaps between sends.
    pub shape: ShapeStats,
    /// Reflect mode: the RX queue back, the round trips, and how many
    /// frames came back with (and without) a probe.
    pub rx_queue: Option<RxQueue>,
    pub latency: Option<LatencyHistogram>,
    pub reflected: u64,
    pub reflected_unprobed: u64,
}

/// Writes the frame of `spec` into every mbuf of `pool`, at the place a
/// freshly allocated mbuf's data starts.
pub fn write_templates(pool: &Mempool, spec: &FrameSpec) -> Result<(), wire::FrameError> {
    let layout = MbufLayout::get();
    let mut template = vec![0u8; spec.len_without_fcs()];
    wire::write_frame(spec, &mut template)?;
    pool.for_each_mbuf(|m| {
        // SAFETY: at creation every mbuf's data starts after the headroom
        // with at least data_room - headroom bytes of room, checked by the caller.
        unsafe { std::ptr::copy_nonoverlapping(template.as_ptr(), layout.data(m), template.len()) };
    });
    Ok(())
}

/// Splits `accepted` frames over `streams` streams sent round robin from the first.
pub fn split_round_robin(accepted: u64, streams: usize) -> Vec<u64> {
    let k = streams as u64;
    (0..k).map(|i| accepted / k + u64::from(i < accepted % k)).collect()
}

impl TxLane {
    /// Runs until the quota is sent or `stop` is set; hands the queue back
    /// with the outcome.
    pub fn run(mut self, stop: &AtomicBool) -> (TxQueue, TxOutcome) {
        let start_tsc = dpdk::rdtsc();
        let layout = MbufLayout::get();
        let burst = self.burst.clamp(1, MAX_BURST);
        let pool = self.pool.as_ptr();
        let nstreams = self.streams.len();
        let multi_flow = self.streams.iter().any(|s| s.src_port != self.streams[0].src_port);
        let ids: Vec<u16> = self.streams.iter().map(|s| s.id).collect();
        let ports: Vec<[u8; 2]> = self.streams.iter().map(|s| s.src_port.to_be_bytes()).collect();
        assert_eq!(self.first_seqs.len(), nstreams, "one first sequence number per stream");
        let mut seqs = self.first_seqs.clone();
        let mut next_stream = 0usize;
        let frame_bytes = u64::from(self.frame_len) + wire::FCS_LEN as u64;

        let mut pkts: [*mut Mbuf; MAX_BURST] = [std::ptr::null_mut(); MAX_BURST];
        let (mut head, mut tail) = (0usize, 0usize);
        let mut tally = Tally::default();
        let mut remaining = self.quota.unwrap_or(u64::MAX);
        let mut last = dpdk::rdtsc();
        let mut schedule = self.rate.and_then(|r| Schedule::new(self.shape, self.tsc_hz, r, last, self.seed));
        let mut shape = ShapeStats::default();
        let mut reflect = self.reflect.take();
        let mut back: [*mut Mbuf; MAX_BURST] = [std::ptr::null_mut(); MAX_BURST];
        let (mut reflected, mut unprobed) = (0u64, 0u64);
        let mut clock = self.clock;
        // When the last burst was built, and its frames (paced runs' end).
        let mut last_send: Option<(u64, u32)> = None;

        while !stop.load(Relaxed) {
            if head == tail {
                if remaining == 0 {
                    break;
                }
                let mut due = burst;
                if let Some(p) = schedule.as_mut() {
                    let mut now = dpdk::rdtsc();
                    if now < p.deadline() {
                        tally.busy_cycles += now - last;
                        while now < p.deadline() && !stop.load(Relaxed) {
                            if let Some(r) = reflect.as_mut() {
                                (reflected, unprobed) = r.poll(&mut back, layout, &mut clock, (reflected, unprobed));
                            }
                            std::hint::spin_loop();
                            now = dpdk::rdtsc();
                        }
                        last = now;
                    }
                    due = p.take_due(now, burst as u32) as usize;
                }
                let n = due.min(remaining.min(MAX_BURST as u64) as usize);
                // SAFETY: pool is alive for the lane's life; pkts holds n slots.
                if unsafe { ffi::bd_pktmbuf_alloc_bulk(pool, pkts.as_mut_ptr(), n as u32) } != 0 {
                    tally.alloc_failures += 1;
                    self.counters.publish(&tally);
                    continue;
                }
                // One TSC read per burst: the probes' timestamp (as wall-clock
                // time), and the busy-time mark that covers the previous burst's sending.
                let tsc = dpdk::rdtsc();
                tally.busy_cycles += tsc - last;
                last = tsc;
                last_send = Some((tsc, n as u32));
                let stamp = clock.ns(tsc);
                if schedule.is_some() {
                    shape.record(tsc, n as u32);
                } else {
                    shape.count(n as u32);
                }
                self.counters.publish(&tally);
                if nstreams == 1 {
                    // One stream: its sequence number lives in a register, not
                    // in memory that each frame would read back after the last wrote it.
                    let mut seq = seqs[0];
                    for &m in &pkts[..n] {
                        // SAFETY: m is a fresh mbuf of our pool, holding the template.
                        unsafe {
                            layout.set_len(m, self.frame_len);
                            let probe = &mut *(layout.data(m).add(PROBE_OFFSET) as *mut [u8; PROBE_LEN]);
                            Probe { stream: ids[0], seq, tx_ns: stamp }.stamp(probe);
                        }
                        seq = seq.wrapping_add(1);
                    }
                    seqs[0] = seq;
                } else {
                    for &m in &pkts[..n] {
                        // SAFETY: as above.
                        unsafe {
                            layout.set_len(m, self.frame_len);
                            let data = layout.data(m);
                            if multi_flow {
                                std::ptr::copy_nonoverlapping(ports[next_stream].as_ptr(), data.add(UDP_SRC_PORT), 2);
                            }
                            let probe = &mut *(data.add(PROBE_OFFSET) as *mut [u8; PROBE_LEN]);
                            Probe { stream: ids[next_stream], seq: seqs[next_stream], tx_ns: stamp }.stamp(probe);
                        }
                        seqs[next_stream] = seqs[next_stream].wrapping_add(1);
                        next_stream += 1;
                        if next_stream == nstreams {
                            next_stream = 0;
                        }
                    }
                }
                head = 0;
                tail = n;
                remaining -= n as u64;
            }
            let sent = self.queue.tx_burst(&mut pkts[head..tail]);
            if self.queue.faulted() {
                // The ring vanished under the burst (a memif peer left). The
                // device may hold some of these frames: none counts as sent,
                // none is freed here, and this queue is done.
                tally.faults += 1;
                head = tail;
                break;
            }
            head += sent;
            tally.packets += sent as u64;
            tally.bytes += sent as u64 * frame_bytes;
            if head < tail {
                // Ring full: waiting on the device, so publishing costs nothing here.
                tally.ring_full_retries += 1;
                self.counters.publish(&tally);
            }
            if let Some(r) = reflect.as_mut() {
                (reflected, unprobed) = r.poll(&mut back, layout, &mut clock, (reflected, unprobed));
            }
        }
        // The phase's end: the linger below is not sending time.
        let now = dpdk::rdtsc();
        tally.busy_cycles += now - last;
        // Paced, a lane descheduled just before the stop sent nothing for
        // its last moments: that stall is not sending time (counted, it reads
        // as a sender short of its pace). The phase ends one send interval
        // after the last send. A lane too slow for its pace sends all the
        // time, so its shortfall still shows.
        let end_tsc = match (self.rate, last_send) {
            (Some(r), Some((at, n))) if r > 0.0 => now.min(at + (self.tsc_hz as f64 * f64::from(n) / r) as u64),
            _ => now,
        };
        if let Some(r) = reflect.as_mut() {
            // Reflections still on their way back.
            let until = dpdk::rdtsc() + r.linger_cycles;
            while dpdk::rdtsc() < until {
                (reflected, unprobed) = r.poll(&mut back, layout, &mut clock, (reflected, unprobed));
            }
        }

        let unsent = (tail - head) as u64;
        if unsent > 0 {
            // SAFETY: these mbufs were never accepted by the device; they are ours to free.
            unsafe { ffi::bd_pktmbuf_free_bulk(pkts[head..tail].as_mut_ptr(), unsent as u32) };
        }
        self.counters.publish(&tally);
        self.counters.mark_done();
        // Frames are accepted in the order they were built, so the accepted
        // ones are a prefix of the round robin.
        let per_stream = split_round_robin(tally.packets, nstreams);
        let next_seqs = self.first_seqs.iter().zip(&per_stream).map(|(&s, &n)| s.wrapping_add(n as u32)).collect();
        let (rx_queue, latency) = reflect.map(|r| (r.queue, r.histogram)).unzip();
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
            reflected_unprobed: unprobed,
        };
        (self.queue, outcome)
    }
}

impl Reflect {
    /// Takes what came back, times each probe against the time it carries
    /// (stamped by this host's clock, so the round trip needs no clock
    /// sync), and frees the frames. Returns the updated (probed, unprobed) counts.
    #[inline]
    fn poll(
        &mut self,
        bufs: &mut [*mut Mbuf; MAX_BURST],
        layout: MbufLayout,
        clock: &mut crate::clock::WallClock,
        counts: (u64, u64),
    ) -> (u64, u64) {
        let (mut probed, mut unprobed) = counts;
        if self.queue.faulted() {
            return counts;
        }
        let n = self.queue.rx_burst(&mut bufs[..32]);
        if n == 0 {
            return counts;
        }
        let now = clock.ns(dpdk::rdtsc());
        for &m in &bufs[..n] {
            // SAFETY: m was just handed over by rx_burst and is ours until freed.
            let frame = unsafe { std::slice::from_raw_parts(layout.data(m), usize::from(layout.data_len(m))) };
            match wire::parse_probe(frame) {
                Some(p) => {
                    probed += 1;
                    self.histogram.record_ns(now.saturating_sub(p.tx_ns));
                }
                None => unprobed += 1,
            }
        }
        // SAFETY: the n mbufs are ours and no longer referenced.
        unsafe { ffi::bd_pktmbuf_free_bulk(bufs.as_mut_ptr(), n as u32) };
        (probed, unprobed)
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
}
