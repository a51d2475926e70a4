//! One phase of a step: a lane per queue on its lcore, and the main
//! thread's watch over them (live lines, links, the receiver) until the
//! duration, the count, a failure or a signal ends it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::StepFailure;
use dpdk::TxQueue;
use layout::StepLayout;

use super::outcome::{LaneResult, Phase};
use super::window::WindowHooks;
use super::{Sender, StepParams};
use crate::counters::{self, LaneCounters, Tally};
use crate::error::Error;
use crate::figures::{self, per_packet, Rates};
use crate::live::{Tick, Ticker};
use crate::live_latency::LatencyCounts;
use crate::plane::Lanes;
use crate::signals;
use crate::timeline::counter_deltas;
use crate::tx::replay::ReplayLane;
use crate::tx::{self, TxLane, TxOutcome};
use crate::xstats::{Sample, WindowXstats};

/// How long the sender waits at most for a port's TX to drain after its
/// lanes stop (a slow qdisc: 512 frames at 1 Mbit/s take about 2 s).
const TX_DRAIN_LIMIT: Duration = Duration::from_secs(3);

impl Sender {
    /// Sends on every queue of `plan` until `duration`, `count`, a stall or a signal.
    pub(super) fn run_phase(
        &mut self,
        plan: &StepLayout,
        p: &StepParams,
        duration: Option<Duration>,
        count: Option<u64>,
        hooks: &mut dyn WindowHooks,
    ) -> Result<Phase, Error> {
        if self.sockets.is_some() {
            return self.run_socket_phase(plan, p, duration, count, hooks);
        }
        let frame_len = (p.size - wire::FCS_LEN as u32) as u16;
        crate::unfinished::began_measuring();
        let plan = plan.clone().with_count(count);
        self.home.check(p.queues, p.reflect)?;
        let mut txqs = self.home.take_tx().into_iter();
        let mut rxqs = if p.reflect { self.home.take_rx() } else { Vec::new() }.into_iter();
        let mut lanes: Lanes<(TxQueue, TxOutcome)> = Lanes::default();
        // A replay's lanes share one start, a moment ahead, so the queues
        // keep the capture's timing between them too.
        let replay_start = dpdk::rdtsc() + self.hz / 100;
        for (slot, txq) in plan.slots().zip(txqs.by_ref()) {
            let (q, lcore) = (slot.queue, self.lcores[usize::from(slot.queue)]);
            let counters = Arc::new(LaneCounters::default());
            let at = (q, slot.port, lcore);
            match &p.replay {
                Some(r) => {
                    let lane = self.replay_lane(q, txq, slot.streams[0].id, r, replay_start, counters.clone());
                    lanes.launch(at, counters, move |stop| lane.run(stop))?
                }
                None if p.c_lanes => {
                    let lane = self.c_lane(slot, txq, frame_len, counters.clone());
                    lanes.launch(at, counters, move |stop| lane.run(stop))?
                }
                None => {
                    let lane = self.tx_lane(p, slot, txq, rxqs.next(), frame_len, counters.clone());
                    lanes.launch(at, counters, move |stop| lane.run(stop))?
                }
            }
        }
        // Queues no lane took (none: the ports were configured for this step) stay at home.
        for txq in txqs {
            self.home.give_back(None, Some(txq));
        }
        let failure = self.drive(p, duration, count, &lanes.counters(), Instant::now(), hooks);
        let (results, failure) = self.join_phase(&mut lanes, &plan, failure)?;
        let tx_undrained = self.drain_tx();
        Ok(self.phase_of(results, failure, tx_undrained))
    }

    /// The phase the joined lanes ran: their final counts into the
    /// timeline, after their last row (the endpoint's queues run on from
    /// them into the next phase), and its span from the first lane's start
    /// to the last lane's end.
    pub(super) fn phase_of(&mut self, results: Vec<LaneResult>, failure: Option<StepFailure>, tx_undrained: Vec<String>) -> Phase {
        if let Some(timeline) = self.timeline.as_mut() {
            timeline.phase_done(results.iter().map(|l| (l.queue, l.outcome.tally)));
        }
        let start = results.iter().map(|l| l.outcome.start_tsc).min().unwrap_or(0);
        let end = results.iter().map(|l| l.outcome.end_tsc).max().unwrap_or(0);
        Phase {
            lanes: results,
            failure,
            interrupted: signals::interrupted(),
            seconds: end.saturating_sub(start) as f64 / self.hz as f64,
            tx_undrained,
        }
    }

    /// Where each of the lanes' streams got to: the next phase numbers on from there.
    pub(super) fn advance_streams(&mut self, plan: &StepLayout, results: &[LaneResult]) {
        for l in results {
            for (s, next) in plan.streams(l.queue).iter().zip(&l.outcome.next_seqs) {
                self.seqs[usize::from(s.id)] = *next;
            }
        }
    }

    /// Lets the frames the ports accepted leave before anything reads a
    /// counter or stops a port (`Port::drain_tx`: af_packet keeps frames a
    /// qdisc refused in its TX ring, counted as sent, until kicked). A ring
    /// that will not empty within `TX_DRAIN_LIMIT` is said, and its port
    /// named in what this returns: frames counted as sent there may never leave.
    fn drain_tx(&self) -> Vec<String> {
        let mut undrained = Vec::new();
        for side in &self.sides {
            if let dpdk::TxDrain::TimedOut { waited } = side.port.drain_tx(TX_DRAIN_LIMIT) {
                tracing::warn!(
                    "port {}: its kernel TX ring still held frames after {:.1} s: frames counted as sent may not have left",
                    side.info.name,
                    waited.as_secs_f64()
                );
                undrained.push(side.info.name.clone());
            }
        }
        undrained
    }

    /// Stops the lanes and takes back their queues and where their streams
    /// got to; a lost ring (a memif peer left) fails the step, and either
    /// that or a panicked lane has the ports configured afresh next time.
    fn join_phase(
        &mut self,
        lanes: &mut Lanes<(TxQueue, TxOutcome)>,
        plan: &StepLayout,
        mut failure: Option<StepFailure>,
    ) -> Result<(Vec<LaneResult>, Option<StepFailure>), Error> {
        let (joined, panicked) = lanes.join();
        let mut results = Vec::with_capacity(joined.len());
        for j in joined {
            let (txq, mut outcome) = j.outcome;
            // Home again for the next phase.
            self.home.give_back(outcome.rx_queue.take(), Some(txq));
            results.push(LaneResult { queue: j.queue, lcore: j.lcore, outcome });
        }
        if let Err(e) = panicked {
            // The panicked lane kept its queues.
            self.configured_queues = None;
            return Err(e);
        }
        let faults: u64 = results.iter().map(|l| l.outcome.tally.faults).sum();
        if faults > 0 && failure.is_none() {
            failure = Some(StepFailure::RingsLost { queues: faults });
        }
        if faults > 0 {
            // The ring is gone: the next step needs the port started again.
            self.configured_queues = None;
        }
        self.advance_streams(plan, &results);
        Ok((results, failure))
    }

    /// A send lane on `queue` (and, reflecting, `reflect_rx`) for its slot of this step.
    fn tx_lane(
        &self,
        p: &StepParams,
        slot: layout::QueueSlot,
        queue: TxQueue,
        reflect_rx: Option<dpdk::RxQueue>,
        frame_len: u16,
        counters: Arc<LaneCounters>,
    ) -> TxLane {
        let (q, streams) = (slot.queue, slot.streams);
        let first_seqs = streams.iter().map(|s| self.seqs[usize::from(s.id)]).collect();
        let reflect = reflect_rx.map(|rxq| tx::Reflect::new(rxq, self.hz / 10, self.clock, counters.clone()));
        TxLane {
            queue,
            pool: self.pools[usize::from(q)].clone(),
            streams,
            first_seqs,
            frame_len,
            mix: self.mixes.get(usize::from(q)).cloned().flatten(),
            burst: self.cfg.burst,
            quota: slot.quota,
            rate: slot.rate,
            shape: p.shape,
            seed: tx::lane_seed(q),
            tsc_hz: self.hz,
            clock: self.clock,
            counters,
            reflect,
            slowdown_cycles: tx::test_slowdown(self.hz),
        }
    }

    /// A C lane (blast-ref's loop) on `queue` for its slot of this step:
    /// the same pool, frames, streams and counters a [`TxLane`] would have.
    fn c_lane(&self, slot: layout::QueueSlot, queue: TxQueue, frame_len: u16, counters: Arc<LaneCounters>) -> tx::c_lane::CLane {
        let (q, streams) = (slot.queue, slot.streams);
        let first_seqs = streams.iter().map(|s| self.seqs[usize::from(s.id)]).collect();
        tx::c_lane::CLane {
            queue,
            pool: self.pools[usize::from(q)].clone(),
            streams,
            first_seqs,
            frame_len,
            burst: self.cfg.burst,
            quota: slot.quota,
            tsc_hz: self.hz,
            clock: self.clock,
            counters,
        }
    }

    /// A replay lane for queue `q` on `queue`: its share of the capture, stamped as `stream`.
    fn replay_lane(
        &self,
        q: u16,
        queue: TxQueue,
        stream: u16,
        r: &Arc<crate::tx::replay::Replay>,
        start_tsc: u64,
        counters: Arc<LaneCounters>,
    ) -> ReplayLane {
        ReplayLane {
            queue,
            pool: self.pools[usize::from(q)].clone(),
            replay: r.clone(),
            plan: usize::from(q),
            stream,
            first_seq: self.seqs[usize::from(stream)],
            burst: self.cfg.burst,
            start_tsc,
            tsc_hz: self.hz,
            clock: self.clock,
            counters,
        }
    }

    /// The main thread's part of a phase: live lines, and the reasons to end.
    pub(super) fn drive(
        &mut self,
        p: &StepParams,
        duration: Option<Duration>,
        count: Option<u64>,
        lanes: &[Arc<LaneCounters>],
        began: Instant,
        hooks: &mut dyn WindowHooks,
    ) -> Option<StepFailure> {
        let mut prev = Tally::default();
        let mut next_link_check = began;
        let mut prev_q: Vec<Tally> = vec![Tally::default(); lanes.len()];
        let mut last_progress = began;
        let mut ticker = Ticker::every(began, self.cfg.interval);
        let mut xs_prev: Vec<Sample> = self.watched().iter().map(|(_, w)| w.sample()).collect();
        let mut lat_prev = LatencyCounts::default();
        loop {
            std::thread::sleep(Duration::from_millis(5));
            let now = Instant::now();
            if signals::stopping() || duration.is_some_and(|d| now.duration_since(began) >= d) {
                return None;
            }
            if lanes.iter().all(|l| l.is_done()) {
                // Lanes that stopped on a fault are reported by the caller.
                return None;
            }
            if now >= next_link_check {
                next_link_check = now + LINK_CHECK;
                if let Some(gone) = self.link_gone(now.duration_since(began)) {
                    return Some(gone);
                }
            }
            let Some(tick) = ticker.due(now) else { continue };
            if let Err(e) = hooks.peer_alive() {
                return Some(e);
            }
            let cur = counters::total(lanes);
            let d = cur.since(&prev);
            if p.live || crate::events::enabled() {
                self.print_live(&tick, &d, lanes, &mut prev_q, p.live);
            }
            self.keep_row(&tick, &d, lanes, &mut xs_prev, &mut lat_prev);
            if d.packets > 0 {
                last_progress = now;
            } else if count.is_some() && now.duration_since(last_progress) >= self.cfg.link_timeout {
                return Some(StepFailure::NothingAccepted { waited: self.cfg.link_timeout, sent: cur.packets });
            }
            prev = cur;
        }
    }

    /// The interval's row, into the run's timeline (if the tool keeps one):
    /// what the lanes sent, and what the watched counters did.
    fn keep_row(&mut self, tick: &Tick, d: &Tally, lanes: &[Arc<LaneCounters>], xs_prev: &mut [Sample], lat_prev: &mut LatencyCounts) {
        if self.timeline.is_none() {
            return;
        }
        let mut xs = WindowXstats::default();
        for ((name, watch), prev) in self.watched().into_iter().zip(xs_prev.iter_mut()) {
            // A read is an admin command on ENA: at most one per --xstats-interval,
            // whatever the series' interval (what moved meanwhile lands in a later row).
            if !crate::timeline::xstats_due(prev.at, self.cfg.xstats_interval, self.cfg.interval) {
                continue;
            }
            let now = watch.sample();
            xs.merge(name, &watch.window(prev, &now));
            if now.invalid.is_none() {
                *prev = now;
            }
        }
        let Some(timeline) = self.timeline.as_mut() else { return };
        let lat_now = LatencyCounts::read(lanes.iter().map(|l| &l.latency));
        let latency_ns = timeline.latency(&lat_now.since(lat_prev));
        *lat_prev = lat_now;
        let row = series::Row {
            t_s: timeline.elapsed_s(),
            secs: tick.secs,
            sent_frames: Some(d.packets),
            sent_bytes: Some(d.bytes),
            counters: counter_deltas(&xs, timeline.counters()),
            latency_ns,
            verdict: Some(crate::timeline::sender_row_label(d, tick.secs, lanes.len(), self.hz).to_string()),
            ..Default::default()
        };
        let queues: Vec<Tally> = lanes.iter().map(|l| l.read()).collect();
        timeline.push(row, &queues, false);
    }

    /// The once-a-second line: the second's sending, and each queue's.
    /// `print`: the line too (else only the tick event, with --events).
    fn print_live(&self, tick: &Tick, d: &Tally, lanes: &[Arc<LaneCounters>], prev_q: &mut [Tally], print: bool) {
        let r = Rates::over(d.packets, d.bytes, tick.secs);
        let now_q: Vec<Tally> = lanes.iter().map(|l| l.read()).collect();
        crate::events::emit("tick", &crate::events::TickEvent::new(tick, "sent", &r, tick.queue_mpps(&now_q, prev_q), None));
        if !print {
            prev_q.copy_from_slice(&now_q);
            return;
        }
        crate::say!(
            "{} sent {} Mpps  {:7.3} Gb/s wire (+20 B/frame preamble+gap)  {}  ring-full retries {}  | {}{}",
            tick.stamp(),
            figures::mpps(r.mpps),
            r.wire_gbps,
            per_packet(d.busy_cycles, d.packets),
            d.ring_full_retries,
            tick.per_queue(&now_q, prev_q),
            self.live_watch_text().map(|w| format!(" | {w}")).unwrap_or_default()
        );
    }

    /// A port whose link was up went down: the receiver (a memif peer, or
    /// the far end of a cable) is gone.
    fn link_gone(&self, at: Duration) -> Option<StepFailure> {
        let side = self.sides.iter().find(|s| s.link.up && !s.port.link().up)?;
        Some(StepFailure::LinkDown { port: side.port.id(), name: side.info.name.clone(), after: at, memif: side.port.peer_managed() })
    }
}

/// How often a phase checks that every link is still up.
const LINK_CHECK: Duration = Duration::from_millis(100);
