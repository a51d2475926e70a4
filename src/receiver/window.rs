//! drop's measured windows: counter snapshots at their edges, the figures
//! between two (both ends compare these), and the exact account of the
//! trial's own frames per sender stream.

use std::collections::BTreeMap;

use dpdk::PortStats;

use seqtrack::NoExactAccount;

use super::Receiver;
use crate::counters::{ArrivalCounts, SizeCounts, Tally};
use crate::plane;
use crate::xstats::{Sample, WindowXstats};

/// Counters at one instant.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub generation: u64,
    pub tsc: u64,
    pub lanes: Vec<Tally>,
    /// Each lane's arrivals and losses per block of stream ids.
    pub blocks: Vec<[seqtrack::BlockCounts; seqtrack::STREAM_BLOCKS]>,
    /// The measured window open when it was taken, and each lane's arrival counts.
    pub window: u64,
    pub arrivals: Vec<ArrivalCounts>,
    /// Each lane's frames by size.
    pub sizes: Vec<SizeCounts>,
    /// By port, in --port order.
    pub ports: Vec<PortStats>,
    pub xs: Vec<Sample>,
    /// The host's CPU times (steal), where /proc/stat reads.
    pub cpu: Option<crate::host::CpuTimes>,
}

/// The exact account of a window: each sender's, and what of the trial
/// arrived on each port (frames, bytes).
pub struct TrialFigures {
    pub accounts: Vec<seqtrack::TrialAccount>,
    pub per_port: Vec<(u64, u64)>,
}

impl Receiver {
    /// A measured window opens: the lanes count their arrival maxima anew
    /// from here, and the trial frames of the senders' streams at `edges`
    /// (none: no exact account of this window). Its starting snapshot.
    pub fn open_window(&mut self, edges: &[seqtrack::StreamEdge]) -> Snapshot {
        self.windows_opened += 1;
        self.trial.open(edges);
        for l in self.lanes.running() {
            l.counters.open_window(self.windows_opened);
        }
        self.snapshot()
    }

    /// Why the trial frames of the senders' streams at `edges` cannot be
    /// counted exactly here, if they cannot.
    pub fn trial_refusal(&self, edges: &[seqtrack::StreamEdge]) -> Option<NoExactAccount> {
        if self.cfg.count_only {
            return Some(NoExactAccount::CountOnly);
        }
        self.trial.check(edges)
    }

    /// The exact account of each sender's trial frames, from the running
    /// lanes' counts (`starts` as the window opened with, `ends` where the
    /// senders' streams stand now), and each port's share of the trial's
    /// frames that arrived (frames, bytes; in --port order); Err says why there is none.
    pub fn trial_accounts(&self, starts: &[seqtrack::StreamEdge], ends: &[seqtrack::StreamEdge]) -> Result<TrialFigures, NoExactAccount> {
        if let Some(why) = self.trial_refusal(starts) {
            return Err(why);
        }
        let lanes: Vec<u16> = self.lanes.running().iter().map(|l| l.queue).collect();
        let counts = self.trial.collect(&lanes)?;
        let per_port = (0..self.sides.len() as u16)
            .map(|p| {
                let mine: Vec<u16> = self.lanes.running().iter().filter(|l| l.port == p).map(|l| l.queue).collect();
                counts.of_lanes(&mine).received(starts)
            })
            .collect();
        Ok(TrialFigures { accounts: counts.accounts(starts, ends)?, per_port })
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            generation: self.generation,
            tsc: dpdk::rdtsc(),
            lanes: self.lanes.running().iter().map(|l| l.counters.read()).collect(),
            blocks: self.lanes.running().iter().map(|l| l.counters.read_blocks()).collect(),
            window: self.windows_opened,
            arrivals: self.lanes.running().iter().map(|l| l.counters.read_arrivals()).collect(),
            sizes: self.lanes.running().iter().map(|l| l.counters.read_sizes()).collect(),
            ports: self.sides.iter().map(|s| s.port.stats().unwrap_or_default()).collect(),
            xs: self.sides.iter().map(|s| s.watch.sample()).collect(),
            cpu: crate::host::CpuTimes::now(),
        }
    }

    /// Figures between two snapshots of the same generation: the sums, and
    /// with several ports each port's own.
    pub fn window(&self, a: &Snapshot, b: &Snapshot) -> Result<control::WindowFigures, control::BackendError> {
        if a.generation != b.generation {
            return Err(control::BackendError::LanesStopped);
        }
        let seconds = b.tsc.saturating_sub(a.tsc) as f64 / self.hz as f64;
        let (mut per, port_xs) = self.port_figures(a, b, seconds);
        let mut t = if per.len() == 1 {
            let mut f = per.pop().expect("one port");
            f.port_name = None;
            f
        } else {
            summed(per, &port_xs, seconds)
        };
        t.stream_blocks = blocks_between(a, b);
        t.arrivals = self.arrivals_between(a, b);
        let (sizes, sizes_other) = sizes_between(a, b);
        (t.sizes, t.sizes_other) = (control::FrameSize::list(&sizes), sizes_other);
        let mut stalls = control::LaneStalls::default();
        for (lane, (x, y)) in self.lanes.running().iter().zip(b.lanes.iter().zip(&a.lanes)) {
            let d = x.since(y);
            stalls.add(lane.queue, d.stalls, d.stalled_ticks, lane.counters.longest_stall(a.window), self.hz);
        }
        (t.stalls, t.host_steal_pct) = (Some(stalls), crate::host::CpuTimes::steal_pct(a.cpu, b.cpu));
        Ok(t)
    }

    /// Each port's own figures between two snapshots (its lanes', its
    /// counters'), and its watched counters.
    fn port_figures(&self, a: &Snapshot, b: &Snapshot, seconds: f64) -> (Vec<control::WindowFigures>, Vec<WindowXstats>) {
        let mut per: Vec<control::WindowFigures> = self
            .sides
            .iter()
            .map(|s| control::WindowFigures { seconds, port_name: Some(s.info.name.clone()), ..Default::default() })
            .collect();
        for (lane, (x, y)) in self.lanes.running().iter().zip(b.lanes.iter().zip(&a.lanes)) {
            let f = &mut per[usize::from(lane.port)];
            let d = x.since(y);
            f.packets += d.packets;
            f.bytes += d.bytes;
            f.no_probe += d.no_probe;
            f.probe.lost += d.lost;
            f.probe.reordered += d.reordered;
            f.probe.duplicates += d.duplicates;
            f.probe.late += d.late;
            f.polls += d.bursts + d.empty_polls;
            f.empty_polls += d.empty_polls;
            let busy_seconds = d.busy_cycles as f64 / self.hz as f64;
            f.busy_seconds = f.busy_seconds.max(busy_seconds);
            f.queues.push(control::QueueFigures { queue: lane.queue, packets: d.packets, bytes: d.bytes, busy_seconds });
        }
        let mut port_xs = Vec::with_capacity(per.len());
        for (i, (f, side)) in per.iter_mut().zip(&self.sides).enumerate() {
            f.probe.received = f.packets - f.no_probe;
            let port = b.ports[i].since(&a.ports[i]);
            f.imissed = port.imissed;
            f.rx_nombuf = port.rx_nombuf;
            f.ierrors = port.ierrors;
            f.socket_drops = port.socket_drops;
            f.interface_drops = port.interface_drops;
            port_xs.push(side.watch.window(&a.xs[i], &b.xs[i]));
            put_xstats(f, &port_xs[i]);
        }
        (per, port_xs)
    }

    /// How the arrivals bunched up between two snapshots (None with
    /// --count-only, whose lanes do not measure it).
    fn arrivals_between(&self, a: &Snapshot, b: &Snapshot) -> Option<Box<control::WindowArrivals>> {
        if self.cfg.count_only {
            return None;
        }
        let lanes: Vec<control::LaneArrivals> = self
            .lanes
            .running()
            .iter()
            .zip(b.lanes.iter().zip(&a.lanes))
            .zip(b.arrivals.iter().zip(&a.arrivals))
            .map(|((lane, (x, y)), (ax, ay))| {
                let d = x.since(y);
                let w = ax.over_window(ay, a.window);
                control::LaneArrivals {
                    queue: lane.queue,
                    full_polls: w.full_polls,
                    max_backlog: w.max_backlog,
                    intervals: w.intervals,
                    frames_in_intervals: w.frames_in_intervals,
                    peak_per_interval: w.peak_per_interval,
                    packets: d.packets,
                    busy_seconds: d.busy_cycles as f64 / self.hz as f64,
                }
            })
            .collect();
        Some(Box::new(control::window_arrivals(&lanes, (self.cfg.interval_us > 0).then_some(self.cfg.interval_us))))
    }

    /// Every port's watched counters now, in --port order.
    pub fn watch_samples(&self) -> Vec<Sample> {
        self.sides.iter().map(|s| s.watch.sample()).collect()
    }

    /// Watched counters between two `watch_samples`, merged over ports.
    pub fn watch_between(&self, a: &[Sample], b: &[Sample]) -> WindowXstats {
        let mut xs = WindowXstats::default();
        for (side, (x, y)) in self.sides.iter().zip(a.iter().zip(b)) {
            xs.merge(&side.info.name, &side.watch.window(x, y));
        }
        xs
    }

    /// The allowance counters that moved lately on any port, for a live line.
    pub fn watch_text(&self) -> Option<String> {
        plane::watch_text(&self.sides)
    }
}

/// Several ports' figures summed, each port's kept under `ports`.
fn summed(per: Vec<control::WindowFigures>, port_xs: &[WindowXstats], seconds: f64) -> control::WindowFigures {
    let mut t = control::WindowFigures { seconds, ..Default::default() };
    let mut xs = WindowXstats::default();
    for (f, fx) in per.iter().zip(port_xs) {
        t.packets += f.packets;
        t.bytes += f.bytes;
        t.no_probe += f.no_probe;
        t.probe.add(&f.probe);
        t.polls += f.polls;
        t.empty_polls += f.empty_polls;
        t.busy_seconds = t.busy_seconds.max(f.busy_seconds);
        t.queues.extend(f.queues.iter().cloned());
        t.imissed += f.imissed;
        t.rx_nombuf += f.rx_nombuf;
        t.ierrors += f.ierrors;
        t.socket_drops += f.socket_drops;
        t.interface_drops += f.interface_drops;
        xs.merge(f.port_name.as_deref().unwrap_or("?"), fx);
    }
    put_xstats(&mut t, &xs);
    t.queues.sort_by_key(|q| q.queue);
    t.ports = per;
    t
}

/// drop's end of the control link, its one conversion: the watched
/// counters, grouped by kind, into the figures' flat wire form.
fn put_xstats(f: &mut control::WindowFigures, xs: &WindowXstats) {
    (f.xstats, f.levels) = xs.counters.to_wire();
    f.xstats_invalid = xs.invalid.clone();
}

/// Frames by size between two snapshots, over every lane, and those of
/// sizes beyond a lane's slots.
fn sizes_between(a: &Snapshot, b: &Snapshot) -> (BTreeMap<u32, u64>, u64) {
    let mut sizes = BTreeMap::new();
    let other = b.sizes.iter().zip(&a.sizes).map(|(x, y)| x.since_into(y, &mut sizes)).sum();
    (sizes, other)
}

/// Every lane's arrivals and losses per block of stream ids between two
/// snapshots, summed (losses as wrapping sums: exact over the window).
fn blocks_between(a: &Snapshot, b: &Snapshot) -> Vec<seqtrack::BlockCounts> {
    let mut sum = vec![seqtrack::BlockCounts::default(); seqtrack::STREAM_BLOCKS];
    for (x, y) in b.blocks.iter().zip(&a.blocks) {
        for (s, (bx, by)) in sum.iter_mut().zip(x.iter().zip(y)) {
            s.received += bx.received.wrapping_sub(by.received);
            s.lost = s.lost.wrapping_add(bx.lost.wrapping_sub(by.lost));
        }
    }
    sum
}
