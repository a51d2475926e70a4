//! One phase of a step on the kernel's UDP sockets: a thread per queue,
//! each with its own socket, under the same watch as a port's lanes
//! (`Sender::drive`), handing back the same outcomes.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use layout::StepLayout;
use records::window::{KernelCpu, UdpSendWindow};

use super::outcome::{LaneResult, Phase};
use super::window::WindowHooks;
use super::{Sender, StepParams};
use crate::counters::LaneCounters;
use crate::error::Error;
use crate::socket_tx::{self, SocketTxLane};
use crate::tx::TxOutcome;

/// The kernel's counters a socket sender's window reads: the namespace's
/// UDP counters and the lanes' CPUs' time (None where unreadable).
pub struct KernelReading {
    cpus: Vec<usize>,
    udp: Option<udpsock::snmp::UdpCounters>,
    cpu: Option<(udpsock::host::CpuTime, udpsock::host::CpuTime)>,
}

impl super::SocketSide {
    /// The kernel's counters now, for a step of `queues` lanes.
    pub fn kernel_reading(&self, queues: u16) -> KernelReading {
        let mut cpus: Vec<usize> = (0..queues).map(|q| self.cfg.cpu_of(q)).collect();
        cpus.sort_unstable();
        cpus.dedup();
        KernelReading { udp: udpsock::snmp::udp_counters().ok(), cpu: udpsock::host::cpu_time(&cpus).ok(), cpus }
    }

    /// The window between two readings, `sent` frames sent in it.
    pub fn kernel_window(&self, a: &KernelReading, b: &KernelReading, sent: u64) -> UdpSendWindow {
        let udp = match (&a.udp, &b.udp) {
            (Some(a), Some(b)) => b.since(a),
            _ => Default::default(),
        };
        let cpu = match (&a.cpu, &b.cpu) {
            (Some((al, ah)), Some((bl, bh))) => {
                let (lanes, host, tick) = (bl.since(al), bh.since(ah), udpsock::host::seconds_per_tick());
                let mut cpu = KernelCpu {
                    cpus: b.cpus.clone(),
                    user_seconds: lanes.user as f64 * tick,
                    system_seconds: lanes.system as f64 * tick,
                    softirq_seconds: lanes.softirq as f64 * tick,
                    host_softirq_seconds: host.softirq as f64 * tick,
                    ns_per_frame: None,
                };
                cpu.ns_per_frame = cpu.ns_per(sent);
                Some(cpu)
            }
            _ => None,
        };
        UdpSendWindow {
            destination: self.cfg.dest.to_string(),
            gso_segments: self.cfg.segments as u64,
            sndbuf_bytes: self.sndbuf_granted as u64,
            out_datagrams: udp.out_datagrams,
            sndbuf_errors: udp.sndbuf_errors,
            cpu,
        }
    }
}

type Running = (u16, u32, Arc<LaneCounters>, JoinHandle<Result<TxOutcome, String>>);

impl Sender {
    /// As `run_phase`, on sockets: every lane's socket is opened first (one
    /// that cannot be fails the step before any frame leaves), then each
    /// lane runs on its thread until the duration, the count, a failure or a signal.
    pub(super) fn run_socket_phase(
        &mut self,
        plan: &StepLayout,
        p: &StepParams,
        duration: Option<Duration>,
        count: Option<u64>,
        hooks: &mut dyn WindowHooks,
    ) -> Result<Phase, Error> {
        let side = self.sockets.as_mut().expect("a socket phase runs on sockets");
        crate::unfinished::began_measuring();
        let plan = plan.clone().with_count(count);
        let mut lanes = Vec::new();
        for slot in plan.slots() {
            // One flow per queue: mode checks refuse --flows on sockets.
            let stream = slot.streams[0];
            let (lane, granted) = socket_tx::open_lane(&side.cfg, stream.src_port, stream.id, p.size as usize, self.cfg.burst)?;
            side.sndbuf_granted = granted;
            let counters = Arc::new(LaneCounters::default());
            let cpu = side.cfg.cpu_of(slot.queue);
            lanes.push(SocketTxLane {
                lane,
                first_seq: self.seqs[usize::from(stream.id)],
                quota: slot.quota,
                rate: slot.rate,
                shape: p.shape,
                seed: crate::tx::lane_seed(slot.queue),
                tsc_hz: self.hz,
                clock: self.clock,
                // As a port's lanes: reflections for 100 ms after the last send.
                echoes: p.reflect.then(|| socket_tx::Echoes::new(self.hz / 10, counters.clone())),
                counters,
                cpu,
            });
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut running: Vec<Running> = Vec::new();
        for (slot, lane) in plan.slots().zip(lanes) {
            let (queue, cpu, counters, lane_stop) = (slot.queue, lane.cpu as u32, lane.counters.clone(), stop.clone());
            match std::thread::Builder::new().name(format!("blast-socket-{queue}")).spawn(move || lane.run(&lane_stop)) {
                Ok(thread) => running.push((queue, cpu, counters, thread)),
                Err(e) => {
                    stop.store(true, SeqCst);
                    drop(join(running));
                    return Err(Error::SocketLane { queue, why: format!("its thread did not start: {e}") });
                }
            }
        }
        let counters: Vec<Arc<LaneCounters>> = running.iter().map(|r| r.2.clone()).collect();
        let failure = self.drive(p, duration, count, &counters, Instant::now(), hooks);
        stop.store(true, SeqCst);
        let results = join(running)?;
        self.advance_streams(&plan, &results);
        Ok(self.phase_of(results, failure, Vec::new()))
    }
}

/// Waits for every lane (the stop flag set); the first that failed fails
/// the phase, after all are joined.
fn join(running: Vec<Running>) -> Result<Vec<LaneResult>, Error> {
    let mut results = Vec::with_capacity(running.len());
    let mut failed = None;
    for (queue, lcore, _, thread) in running {
        match thread.join() {
            Ok(Ok(outcome)) => results.push(LaneResult { queue, lcore, outcome }),
            Ok(Err(why)) => failed = failed.or(Some(Error::SocketLane { queue, why })),
            Err(_) => failed = failed.or(Some(Error::SocketLane { queue, why: "its thread panicked".into() })),
        }
    }
    failed.map_or(Ok(results), Err)
}
