//! The sender's side of a measured window: its figures put together,
//! the hooks that tell the receiver where the window starts and ends, and
//! the port counters read around it.

use super::StepFailure;
use dpdk::PortStats;
use layout::Spread;

use super::outcome::{merged_latency, merged_shape, tx_wall_pct, LaneResult, Phase, SenderWindow};
use super::Sender;
use crate::xstats::WindowXstats;

/// Called at the window's edges; an error ends the step.
pub trait WindowHooks {
    /// The window opens; `streams`: where this sender's streams stand.
    fn start(&mut self, streams: Option<&seqtrack::StreamEdge>) -> Result<(), StepFailure>;
    /// The window ends; `sent` is what this sender's lanes sent in it.
    fn end(&mut self, sent: &SenderWindow) -> Result<(), StepFailure>;
    /// Whether the receiver is still there (asked about once a second
    /// while sending): an error names how it went, and ends the step.
    fn peer_alive(&mut self) -> Result<(), StepFailure> {
        Ok(())
    }
}

/// No receiver to tell.
pub struct NoPeer;

impl WindowHooks for NoPeer {
    fn start(&mut self, _streams: Option<&seqtrack::StreamEdge>) -> Result<(), StepFailure> {
        Ok(())
    }
    fn end(&mut self, _sent: &SenderWindow) -> Result<(), StepFailure> {
        Ok(())
    }
}

/// Port counters (None where the read failed) and watched counters of
/// every port at one instant.
pub type Reading = Vec<(Option<PortStats>, crate::xstats::Sample)>;

impl Sender {
    /// The trial's window from its lanes and the counters read around it
    /// (`before` as it opened, `after` once drained).
    pub(super) fn trial_window(&self, trial: &Phase, before: &Reading, after: &Reading) -> SenderWindow {
        let (port, xstats, per_port) = self.counters_between(before, after);
        let latency = merged_latency(&trial.lanes);
        let ports = self.port_windows(per_port, &trial.lanes, trial.seconds);
        let mut window = SenderWindow {
            seconds: trial.seconds,
            port,
            xstats,
            ports,
            shape: merged_shape(&trial.lanes),
            reflected: latency.as_ref().map_or(0, |l| l.1),
            latency: latency.map(|l| l.0),
            tx_wall_pct: tx_wall_pct(&trial.lanes),
            tx_undrained: trial.tx_undrained.clone(),
            on_sockets: self.sockets.is_some(),
            ..Default::default()
        };
        for l in &trial.lanes {
            let t = &l.outcome.tally;
            window.total.add(t);
            window.per_queue.push(*t);
            window.stalls.add(l.queue, t.stalls, t.stalled_ticks, l.outcome.longest_stall, self.hz);
            window.reflected_stale += l.outcome.reflected_stale;
        }
        if self.sockets.is_some() {
            // No port counts what left: what the sockets took is what left blast.
            (window.port.opackets, window.port.obytes) = (window.total.packets, window.total.bytes);
        }
        window
    }

    /// Every port's counters now (on sockets, the interface's watched
    /// counters: there is no port to count what left).
    pub fn read_counters(&self) -> Reading {
        if let Some(s) = &self.sockets {
            return s.watch.iter().map(|w| (None, w.sample())).collect();
        }
        self.sides.iter().map(|s| (s.port.stats().ok(), s.watch.sample())).collect()
    }

    /// Each port's counters between two readings, and their sum. A device
    /// whose peer just left (memif) may refuse a read: its port figures
    /// are then zero, and the lanes' own counts stand.
    pub fn counters_between(&self, a: &Reading, b: &Reading) -> (PortStats, WindowXstats, Vec<(PortStats, WindowXstats)>) {
        let mut per = Vec::new();
        let (mut port, mut xs) = (PortStats::default(), WindowXstats::default());
        if let Some(s) = &self.sockets {
            // The lanes' own counts stand for the port's (`trial_window`).
            if let (Some(w), Some((_, xa)), Some((_, xb))) = (&s.watch, a.first(), b.first()) {
                xs.merge(&s.info.name, &w.window(xa, xb));
            }
            return (port, xs, per);
        }
        for (side, ((pa, xa), (pb, xb))) in self.sides.iter().zip(a.iter().zip(b)) {
            let d = match (pa, pb) {
                (Some(pa), Some(pb)) => pb.since(pa),
                _ => {
                    tracing::warn!("reading the counters of port {} failed: its port figures are zero", side.info.name);
                    PortStats::default()
                }
            };
            let w = side.watch.window(xa, xb);
            port.add(&d);
            xs.merge(&side.info.name, &w);
            per.push((d, w));
        }
        (port, xs, per)
    }

    /// With several ports, each port's own window: its counters
    /// (`counters_between`) and its lanes' tallies; empty with one port.
    pub fn port_windows(&self, per_port: Vec<(PortStats, WindowXstats)>, lanes: &[LaneResult], seconds: f64) -> Vec<SenderWindow> {
        let nports = self.sides.len() as u16;
        let spread = Spread::new(lanes.len() as u16, nports);
        if nports < 2 {
            return Vec::new();
        }
        per_port
            .into_iter()
            .enumerate()
            .map(|(i, (port, xstats))| {
                let mut w = SenderWindow { seconds, port, xstats, ..Default::default() };
                for l in lanes.iter().filter(|l| spread.port_of(l.queue).0 == i as u16) {
                    w.total.add(&l.outcome.tally);
                    w.per_queue.push(l.outcome.tally);
                }
                w
            })
            .collect()
    }
}
