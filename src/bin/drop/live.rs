//! The line an interval (a second unless --interval says otherwise) while
//! drop receives, the series row it makes, and what ends the run.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use blastdrop::counters::Tally;
use blastdrop::figures::{self, Rates};
use blastdrop::live::{Tick, Ticker};
use blastdrop::live_latency::LatencyCounts;
use blastdrop::receiver::Receiver;
use blastdrop::signals;
use blastdrop::timeline::{counter_deltas, Timeline};
use blastdrop::xstats::Sample;
use dpdk::PortStats;

use crate::backend::lock;
use crate::settings::Settings;
use crate::summary::receiver_counters;

/// A line an interval until the duration, count or idle timeout ends the
/// run, or a signal arrives; each interval's row goes into `timeline`.
/// Returns the last port counters read.
pub(crate) fn live_loop(
    rx: &Mutex<Receiver>,
    baseline: PortStats,
    began: Instant,
    settings: &Settings,
    timeline: &mut Timeline,
) -> PortStats {
    let stop = settings.stop;
    let mut live = Live::new(baseline, Ticker::every(began, settings.outputs.timeline.interval));
    loop {
        std::thread::sleep(Duration::from_millis(10));
        match lock(rx).supervise() {
            Ok(Some(what)) => blastdrop::say!("drop: {what}"),
            Ok(None) => {}
            Err(e) => tracing::error!("{}", crate::fail::explain(e).message),
        }
        let now = Instant::now();
        if signals::stopping() || stop.duration.is_some_and(|d| now.duration_since(began) >= d) {
            return live.prev_port;
        }
        let (cur, lane_now) = live.read_lanes(rx, timeline);
        live.mark_trial(cur, now.duration_since(began), timeline);
        if stop.count.is_some_and(|c| cur.packets >= c) {
            return lock(rx).port_stats().unwrap_or(live.prev_port);
        }
        if live.idle_for(now, cur.packets, stop.idle_timeout) {
            return live.prev_port;
        }
        if let Some(tick) = live.ticker.due(now) {
            live.line(rx, settings, &tick, cur, &lane_now, timeline);
        }
    }
}

/// What the live loop carries from one poll and one second to the next.
struct Live {
    ticker: Ticker,
    generation: u64,
    /// The totals and each lane's counters at the last line.
    prev: Tally,
    prev_q: Vec<Tally>,
    prev_port: PortStats,
    prev_xs: Option<Vec<Sample>>,
    /// When the count last moved, and to what.
    last_arrival: Option<(Instant, u64)>,
    /// Totals of lanes that ended in restarts, so counts stay monotonic.
    carried: Tally,
    last_total: Tally,
    /// Each lane's counters at the last read, carried into the endpoint's
    /// per-queue figures when the lanes restart.
    last_q: Vec<Tally>,
    /// The lanes' timed probes at the last line (--one-way).
    prev_lat: LatencyCounts,
    /// Probed frames (the trial's own, not a stray kernel frame) counted so far.
    probed: u64,
}

impl Live {
    fn new(baseline: PortStats, ticker: Ticker) -> Live {
        Live {
            ticker,
            generation: 0,
            prev: Tally::default(),
            prev_q: Vec::new(),
            prev_port: baseline,
            prev_xs: None,
            last_arrival: None,
            carried: Tally::default(),
            last_total: Tally::default(),
            last_q: Vec::new(),
            prev_lat: LatencyCounts::default(),
            probed: 0,
        }
    }

    /// Marks on the series' clock when the trial's own frames (those with a
    /// probe) moved, so its analysis runs from the trial's first frame to
    /// its last, not from a stray kernel frame of an idle lead-in.
    fn mark_trial(&mut self, cur: Tally, at: Duration, timeline: &mut Timeline) {
        let probed = cur.packets.saturating_sub(cur.no_probe);
        if probed > self.probed {
            self.probed = probed;
            timeline.trial_frames_at(at.as_secs_f64());
        }
    }

    /// The running totals (carried over lane restarts) and each lane's counters.
    fn read_lanes(&mut self, rx: &Mutex<Receiver>, timeline: &mut Timeline) -> (Tally, Vec<Tally>) {
        let (gen, lanes) = {
            let r = lock(rx);
            (r.generation(), r.lane_counters())
        };
        if gen != self.generation {
            self.carried.add(&self.last_total.since(&self.carried));
            timeline.phase_done(self.last_q.iter().enumerate().map(|(q, t)| (q as u16, *t)));
            self.generation = gen;
            self.prev_q = vec![Tally::default(); lanes.len()];
        }
        let mut cur = self.carried;
        let mut lane_now = Vec::with_capacity(lanes.len());
        for l in &lanes {
            let t = l.read();
            cur.add(&t);
            lane_now.push(t);
        }
        self.last_total = cur;
        self.last_q.clone_from(&lane_now);
        (cur, lane_now)
    }

    /// Whether nothing has arrived for `idle` since the first frame.
    fn idle_for(&mut self, now: Instant, packets: u64, idle: Option<Duration>) -> bool {
        match self.last_arrival {
            Some((_, n)) if n == packets => {}
            _ if packets > 0 => self.last_arrival = Some((now, packets)),
            _ => {}
        }
        match (idle, self.last_arrival) {
            (Some(idle), Some((t, _))) => now.duration_since(t) >= idle,
            _ => false,
        }
    }

    /// A read of the watched counters is an admin command on ENA: at most
    /// one per --xstats-interval, whatever --interval (what moved meanwhile
    /// lands in the row of the next read).
    fn xstats_due(&self, settings: &Settings) -> bool {
        self.prev_xs
            .as_ref()
            .and_then(|s| s.first())
            .is_none_or(|s| blastdrop::timeline::xstats_due(s.at, settings.receiver.xstats_interval, settings.outputs.timeline.interval))
    }

    /// The largest share of the second that `ticks` of a lane's tally grew
    /// by, over every lane, in percent: the busiest lane's busy share, or
    /// the most stood-still lane's (a stand-still is counted when the lane
    /// runs again, so one that spans a second's end counts in the next).
    fn largest_lane_share(&self, lane_now: &[Tally], tick: &Tick, hz: u64, ticks: impl Fn(&Tally) -> u64) -> Option<f64> {
        lane_now
            .iter()
            .zip(self.prev_q.iter())
            .map(|(c, p)| ticks(c).saturating_sub(ticks(p)) as f64 / (tick.secs * hz as f64) * 100.0)
            .reduce(f64::max)
            .map(|b| b.min(100.0))
    }

    /// Prints the interval's line, with its verdict, and keeps its row.
    fn line(&mut self, rx: &Mutex<Receiver>, settings: &Settings, tick: &Tick, cur: Tally, lane_now: &[Tally], timeline: &mut Timeline) {
        let d = cur.since(&self.prev);
        let r = Rates::over(d.packets, d.bytes, tick.secs);
        let xs_due = self.xstats_due(settings);
        let (stats, watch, xs_now, hz, lat_now) = {
            let r = lock(rx);
            let lat = LatencyCounts::read(r.lane_counters().iter().map(|l| &l.latency));
            (r.port_stats().unwrap_or(self.prev_port), r.watch_text(), xs_due.then(|| r.watch_samples()), r.tsc_hz(), lat)
        };
        let latency_ns = timeline.latency(&lat_now.since(&self.prev_lat));
        self.prev_lat = lat_now;
        let ds = stats.since(&self.prev_port);
        let busy = self.largest_lane_share(lane_now, tick, hz, |t| t.busy_cycles);
        let stalled = self.largest_lane_share(lane_now, tick, hz, |t| t.stalled_ticks);
        let xs = match (&self.prev_xs, &xs_now) {
            (Some(a), Some(b)) => lock(rx).watch_between(a, b),
            _ => Default::default(),
        };
        let second = if d.packets == 0 {
            "idle".to_string()
        } else {
            // A second in which the host held a lane back is not "none" (as for the run).
            limits::receiver_verdict(&receiver_counters(d.packets, &ds, &xs, d.lost, !settings.receiver.count_only, (busy, stalled)))
                .label()
        };
        if xs_now.is_some() {
            self.prev_xs = xs_now;
        }
        let row = series::Row {
            t_s: tick.elapsed.as_secs_f64(),
            secs: tick.secs,
            received_frames: Some(d.packets),
            received_bytes: Some(d.bytes),
            lost: (!settings.receiver.count_only).then_some(d.lost),
            counters: counter_deltas(&xs, timeline.counters()),
            latency_ns,
            verdict: Some(second.clone()),
            ..Default::default()
        };
        timeline.push(row, lane_now, false);
        let queues = tick.queue_mpps(lane_now, &self.prev_q);
        blastdrop::events::emit("tick", &blastdrop::events::TickEvent::new(tick, "received", &r, queues, Some(second.clone())));
        let per_q = tick.per_queue(lane_now, &mut self.prev_q);
        blastdrop::say!(
            "{} received {} Mpps  {:7.3} Gb/s wire (+20 B/frame)  | {} | imissed {}{}{} rx_nombuf {} | lost {} reordered {} dup {} no-probe {}{} | limit: {second}",
            tick.stamp(),
            figures::mpps(r.mpps),
            r.wire_gbps,
            per_q,
            ds.imissed,
            // af_packet's kernel ring drops, where the PMD leaves them out of imissed.
            if ds.socket_drops > 0 { format!(" socket_drops {}", ds.socket_drops) } else { String::new() },
            // The kernel interface's own receive drops (af_packet, AF_XDP).
            if ds.interface_drops > 0 { format!(" interface_drops {}", ds.interface_drops) } else { String::new() },
            ds.rx_nombuf,
            d.lost,
            d.reordered,
            d.duplicates,
            d.no_probe,
            watch.map(|w| format!(" | {w}")).unwrap_or_default()
        );
        self.prev = cur;
        self.prev_port = stats;
    }
}
