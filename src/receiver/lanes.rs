//! drop's lanes through a run: launched on every queue of the configured
//! ports, parked (their figures joined to the totals, their queues home)
//! when a memif peer leaves or says it will, and launched again when the
//! link comes back.

use std::sync::Arc;

use super::{timescale_of, Receiver, NIC_CALIBRATION_WINDOW_NS};
use crate::counters::LaneCounters;
use crate::error::Error;
use crate::rx::{OneWayClock, RxLane};

/// What [`Receiver::supervise`] did when a memif peer came or went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerChange {
    /// The peer left: the lanes are parked until one connects.
    /// `inside_a_burst`: a lane faulted in a burst (caught; that burst is lost).
    Left { inside_a_burst: bool },
    /// A peer connected: lanes receive on every queue.
    Connected { queues: u16 },
}

impl std::fmt::Display for PeerChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerChange::Left { inside_a_burst: true } => f.write_str(
                "the memif peer left while a lane was inside a burst (the fault was caught; that burst is lost): lanes parked until a peer connects",
            ),
            PeerChange::Left { inside_a_burst: false } => f.write_str("the memif peer left: lanes parked until a peer connects"),
            PeerChange::Connected { queues } => write!(f, "a memif peer connected: receiving on {queues} queue(s)"),
        }
    }
}

impl Receiver {
    /// A lane on every queue at home (all of the configured ports').
    pub(super) fn launch(&mut self) -> Result<(), Error> {
        let spread = layout::Spread::new(self.queues, self.sides.len() as u16);
        self.generation += 1;
        let mut txqs = if self.cfg.reflect { self.home.take_tx() } else { Vec::new() }.into_iter();
        for (q, mut rxq) in self.home.take_rx().into_iter().enumerate() {
            let q = q as u16;
            rxq.rearm();
            let (p, _) = spread.port_of(q);
            let lcore = self.lcores[usize::from(q)];
            let counters = Arc::new(LaneCounters::default());
            let lane = RxLane {
                queue: rxq,
                burst: self.cfg.burst,
                stream_capacity: self.cfg.stream_capacity,
                cost_per_frame: self.cost_ticks,
                count_only: self.cfg.count_only,
                counters: counters.clone(),
                reflect: txqs.next().map(|mut t| {
                    t.rearm();
                    t
                }),
                interval_cycles: self.cfg.interval_us * self.hz / 1_000_000,
                one_way: self.cfg.one_way.then(|| self.one_way_clock(p)),
                trial: self.trial.clone(),
                slate: usize::from(q),
                tsc_hz: self.hz,
            };
            self.lanes.launch((q, p, lcore), counters, move |stop| lane.run(stop))?;
        }
        Ok(())
    }

    /// What a lane on port `p` (index in --port order) times probes with.
    fn one_way_clock(&self, p: u16) -> OneWayClock {
        let nic = self.rx_stamp.filter(|_| self.nic_clock()).map(|field| {
            let scale = timescale_of(&self.sides[usize::from(p)].info.driver);
            (field, latency::NicTimeMap::for_timescale(scale, NIC_CALIBRATION_WINDOW_NS))
        });
        OneWayClock { wall: self.clock, nic }
    }

    /// Stops every lane; what they counted joins the totals, and their
    /// queues go home (valid while the ports stay configured).
    pub(super) fn park(&mut self) -> Result<(), Error> {
        // Lanes gone is a new generation too: readers carry what they saw.
        if !self.lanes.is_empty() {
            self.generation += 1;
        }
        let (joined, panicked) = self.lanes.join();
        for j in joined {
            let mut o = j.outcome;
            self.totals.absorb(j.queue, j.port, j.lcore, &o);
            let txq = o.reflect.take();
            self.home.give_back(Some(o.queue), txq);
        }
        panicked
    }

    /// Keeps lanes off a memif port whose peer is gone: DPDK's memif unmaps
    /// the rings on its interrupt thread when the peer leaves, under any
    /// lane still polling (a fault the guarded burst catches, or, with a new
    /// peer mapped at the same place, frames that are not frames). Parks the
    /// lanes when a link goes down or a lane faulted, and starts them again
    /// once every link is up. Call it often (every few ms). Returns what it
    /// did, for the log.
    pub fn supervise(&mut self) -> Result<Option<PeerChange>, Error> {
        if !self.peer_managed || self.queues == 0 {
            return Ok(None);
        }
        let up = self.links_up();
        if self.held {
            if up {
                return Ok(None);
            }
            self.held = false;
        }
        if !self.lanes.is_empty() {
            let faulted = self.lanes.running().iter().any(|l| l.counters.read().faults > 0);
            if up && !faulted {
                return Ok(None);
            }
            self.park()?;
            return Ok(Some(PeerChange::Left { inside_a_burst: faulted }));
        }
        if up && self.home.rx_count() == usize::from(self.queues) {
            self.launch()?;
            return Ok(Some(PeerChange::Connected { queues: self.queues }));
        }
        Ok(None)
    }

    /// Parks the lanes of memif ports before their peer leaves (it said
    /// so): they stay parked until the link has gone down and come back.
    /// Other devices keep receiving.
    pub fn hold_for_departure(&mut self) -> Result<bool, Error> {
        if !self.peer_managed || self.lanes.is_empty() {
            return Ok(false);
        }
        self.park()?;
        self.held = true;
        Ok(true)
    }

    /// Whether lanes are polling now (not parked, not waiting for a peer).
    pub fn receiving(&self) -> bool {
        !self.lanes.is_empty()
    }
}
