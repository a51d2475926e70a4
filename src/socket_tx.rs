//! blast's send lanes on the kernel's UDP sockets (blast --socket), no EAL:
//! one thread per queue, pinned to a CPU as an lcore is, each with its own
//! connected socket (its flow: the queue's source port) and crates/udpsock's
//! `SendLane` (sendmmsg, UDP GSO). Paced as a DPDK lane is, by the same
//! schedule; counted in the same `LaneCounters`, so blast's steps, windows,
//! live lines and records take them as they take a port's lanes.
//!
//! What such a lane counts as sent is what the kernel took from it: a
//! datagram that a full qdisc or the NIC drops later is sent here and lost
//! at the receiver, where the kernel's counters (`SndbufErrors`, the
//! interface's TX drops) say why.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use latency::LatencyHistogram;
use pace::Shape;
use udpsock::SendLane;

use crate::counters::{LaneCounters, Tally};
use crate::error::Error;
use crate::socket_rx::pin;
use crate::tx::{Pace, TxOutcome};

/// How blast sends on sockets: the frames' addresses (`--src-ip`,
/// `--dst-ip`, `--dst-port`, each queue's `--src-port` + i) become the
/// sockets' own.
#[derive(Debug, Clone)]
pub struct SocketTxConfig {
    pub src_ip: Ipv4Addr,
    pub dest: SocketAddrV4,
    /// Each socket's send buffer, in bytes as asked (None: the kernel's default).
    pub sndbuf: Option<usize>,
    /// Datagrams per GSO buffer (1: no GSO).
    pub segments: usize,
    /// The CPUs the lanes run on, lane i on `cpus[i % len]`.
    pub cpus: Vec<usize>,
}

impl SocketTxConfig {
    /// The CPU queue `queue`'s lane runs on.
    pub fn cpu_of(&self, queue: u16) -> usize {
        if self.cpus.is_empty() {
            0
        } else {
            self.cpus[usize::from(queue) % self.cpus.len()]
        }
    }

    /// What names this path where a port's name goes: the sending address,
    /// "udp:198.18.0.1" (where it sends to is in the step's `sender_udp`).
    pub fn name(&self) -> String {
        format!("udp:{}", self.src_ip)
    }
}

/// Opens queue `queue`'s socket, bound to its flow's source port and
/// connected to the destination: what the kernel granted as its send buffer, and the lane.
pub fn open_lane(cfg: &SocketTxConfig, src_port: u16, stream: u16, frame: usize, burst: usize) -> Result<(SendLane, usize), Error> {
    let local = SocketAddr::V4(SocketAddrV4::new(cfg.src_ip, src_port));
    let (fd, buffer) = udpsock::sender_socket(Some(local), SocketAddr::V4(cfg.dest), cfg.sndbuf)?;
    // A call carries about a burst: whole GSO buffers of `segments`.
    let batch = burst.div_ceil(cfg.segments).max(1);
    Ok((SendLane::new(fd, stream, frame, cfg.segments, batch)?, buffer.granted))
}

/// One queue's send loop on its socket.
pub struct SocketTxLane {
    pub lane: SendLane,
    pub first_seq: u32,
    /// Frames this queue sends before it stops; None: until told to stop.
    pub quota: Option<u64>,
    /// Frames per second for this queue; None: as fast as the kernel takes them.
    pub rate: Option<f64>,
    pub shape: Shape,
    pub seed: u64,
    pub tsc_hz: u64,
    pub clock: crate::clock::WallClock,
    pub counters: Arc<LaneCounters>,
    pub cpu: usize,
    /// --reflect: the round trips of what drop sends back to this lane's socket.
    pub echoes: Option<Echoes>,
}

/// What a lane needs to time the probes drop --reflect sends back to its
/// socket (blast --socket --reflect): as a port's `tx::Reflect`, read with
/// `recvmmsg` on the lane's own connected socket.
pub struct Echoes {
    histogram: LatencyHistogram,
    /// After sending stops, how long to keep collecting late ones.
    linger_cycles: u64,
    /// Probes sent before this phase began come back stale, and are not timed.
    since_ns: u64,
    probed: u64,
    unprobed: u64,
    stale: u64,
    live: Arc<LaneCounters>,
}

impl Echoes {
    pub fn new(linger_cycles: u64, live: Arc<LaneCounters>) -> Echoes {
        Echoes { histogram: LatencyHistogram::new(), linger_cycles, since_ns: 0, probed: 0, unprobed: 0, stale: 0, live }
    }

    /// Takes what came back and times each probe against the send time it
    /// carries (this host's clock at both ends: no clock sync needed).
    #[inline]
    fn poll(&mut self, lane: &mut SendLane, clock: &mut crate::clock::WallClock) -> Result<(), String> {
        let mut now = None;
        let taken = lane.take_echoes(|p| {
            let at = *now.get_or_insert_with(|| clock.ns(dpdk::rdtsc()));
            match p {
                Some(p) if p.tx_ns >= self.since_ns => {
                    self.probed += 1;
                    let ns = at.saturating_sub(p.tx_ns);
                    self.histogram.record_ns(ns);
                    self.live.latency.record(ns);
                }
                Some(_) => self.stale += 1,
                None => self.unprobed += 1,
            }
        });
        taken.map(|_| ()).map_err(|e| format!("recvmmsg of the reflections failed: {e}"))
    }
}

impl SocketTxLane {
    /// Sends until the quota is sent, `stop` is set or the socket fails
    /// (a refused call, ENOBUFS or a full buffer past its wait, is no
    /// failure: its frames are offered again, with the same numbers).
    pub fn run(mut self, stop: &AtomicBool) -> Result<TxOutcome, String> {
        let pinned = pin(self.cpu).map_err(|e| format!("pinning it to CPU {} failed: {e}", self.cpu));
        let result = pinned.and_then(|()| self.send_loop(stop));
        self.counters.mark_done();
        result
    }

    fn send_loop(&mut self, stop: &AtomicBool) -> Result<TxOutcome, String> {
        self.lane.set_next_seq(self.first_seq);
        let mut echoes = self.echoes.take();
        if let Some(e) = echoes.as_mut() {
            self.lane.expect_echoes();
            e.since_ns = self.clock.ns(dpdk::rdtsc());
        }
        let mut clock = self.clock;
        let per_call = self.lane.per_call();
        let frame_bytes = self.lane.frame_bytes();
        let start_tsc = dpdk::rdtsc();
        let (mut tally, mut remaining, mut last) = (Tally::default(), self.quota.unwrap_or(u64::MAX), start_tsc);
        let mut pace = Pace::new(self.rate, self.shape, self.tsc_hz, self.seed, last);
        let timed = pace.schedule.is_some();
        // Frames due but not yet taken by the kernel: offered again before any new ones.
        let mut owed = 0usize;
        while !stop.load(Relaxed) && remaining > 0 {
            if owed == 0 {
                let (lane, mut failed) = (&mut self.lane, None);
                let due = pace.wait_due(per_call, &mut tally, &mut last, stop, || {
                    if let Some(e) = echoes.as_mut() {
                        failed = failed.take().or(e.poll(lane, &mut clock).err());
                    }
                });
                if let Some(why) = failed {
                    return Err(why);
                }
                owed = due.min(per_call).min(remaining.min(per_call as u64) as usize);
                if owed == 0 {
                    continue;
                }
                let tsc = dpdk::rdtsc();
                pace.stall.at(tsc, &mut tally);
                (tally.busy_cycles, last) = (tally.busy_cycles + (tsc - last), tsc);
                pace.sent(tsc, owed);
            }
            let before = dpdk::rdtsc();
            let taken = self.lane.send_datagrams(owed, clock.ns(before)).map_err(|e| format!("sendmmsg failed: {e}"))?;
            if timed {
                tally.tx_cycles += dpdk::rdtsc() - before;
            }
            owed -= taken;
            remaining -= taken as u64;
            tally.packets += taken as u64;
            tally.bytes += taken as u64 * frame_bytes;
            if owed > 0 {
                // The kernel took less than offered (a full buffer, ENOBUFS): it, not the lane, waits.
                tally.ring_full_retries += 1;
                pace.stall.at(dpdk::rdtsc(), &mut tally);
            }
            self.counters.publish(&tally);
            if let Some(e) = echoes.as_mut() {
                e.poll(&mut self.lane, &mut clock)?;
            }
        }
        let now = dpdk::rdtsc();
        tally.busy_cycles += now - last;
        self.counters.publish(&tally);
        if let Some(e) = echoes.as_mut() {
            // Reflections still on their way back.
            let until = dpdk::rdtsc() + e.linger_cycles;
            while dpdk::rdtsc() < until {
                e.poll(&mut self.lane, &mut clock)?;
            }
        }
        let (reflected, reflected_unprobed, reflected_stale) = echoes.as_ref().map_or((0, 0, 0), |e| (e.probed, e.unprobed, e.stale));
        Ok(TxOutcome {
            tally,
            per_stream: vec![tally.packets],
            next_seqs: vec![self.lane.next_seq()],
            start_tsc,
            end_tsc: pace.end(now, self.rate, self.tsc_hz),
            shape: pace.shape.clone(),
            longest_stall: pace.stall.longest,
            latency: echoes.map(|e| e.histogram),
            reflected,
            reflected_unprobed,
            reflected_stale,
            ..TxOutcome::default()
        })
    }
}
