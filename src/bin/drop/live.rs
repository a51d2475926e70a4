//! The once-a-second line while drop receives, and what ends the run.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use blastdrop::counters::Tally;
use blastdrop::receiver::Receiver;
use blastdrop::report::{self, Rates};
use blastdrop::signals;
use dpdk::PortStats;

use crate::args::Args;
use crate::backend::lock;
use crate::summary::receiver_counters;

/// A line a second until the duration, count or idle timeout ends the run,
/// or a signal arrives. Returns the last port counters read.
pub(crate) fn live_loop(rx: &Mutex<Receiver>, baseline: PortStats, began: Instant, args: &Args) -> PortStats {
    let mut generation = 0;
    let mut prev = Tally::default();
    let mut prev_q: Vec<Tally> = Vec::new();
    let mut prev_port = baseline;
    let mut prev_t = began;
    let mut next_tick = began + Duration::from_secs(1);
    let mut last_arrival: Option<(Instant, u64)> = None;
    // Totals of lanes that ended in restarts, so counts stay monotonic.
    let mut carried = Tally::default();
    let mut last_total = Tally::default();
    let mut prev_xs: Option<Vec<blastdrop::xstats::Sample>> = None;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        match lock(rx).supervise() {
            Ok(Some(what)) => println!("drop: {what}"),
            Ok(None) => {}
            Err(f) => tracing::error!("{}", f.message),
        }
        let now = Instant::now();
        if signals::stopping() || args.duration.is_some_and(|d| now.duration_since(began) >= d) {
            return prev_port;
        }
        let (gen, lanes) = {
            let r = lock(rx);
            (r.generation(), r.lane_counters())
        };
        if gen != generation {
            carried.add(&last_total.since(&carried));
            generation = gen;
            prev_q = vec![Tally::default(); lanes.len()];
        }
        let mut cur = carried;
        let mut lane_now = Vec::with_capacity(lanes.len());
        for l in &lanes {
            let t = l.read();
            cur.add(&t);
            lane_now.push(t);
        }
        last_total = cur;
        if args.count.is_some_and(|c| cur.packets >= c) {
            return lock(rx).port_stats().unwrap_or(prev_port);
        }
        match last_arrival {
            Some((_, n)) if n == cur.packets => {}
            _ if cur.packets > 0 => last_arrival = Some((now, cur.packets)),
            _ => {}
        }
        if let (Some(idle), Some((t, _))) = (args.idle_timeout, last_arrival) {
            if now.duration_since(t) >= idle {
                return prev_port;
            }
        }
        if now < next_tick {
            continue;
        }
        next_tick += Duration::from_secs(1);
        let d = cur.since(&prev);
        let secs = now.duration_since(prev_t).as_secs_f64();
        let r = Rates::over(d.packets, d.bytes, secs);
        let (stats, watch, xs_now, hz) = {
            let r = lock(rx);
            (r.port_stats().unwrap_or(prev_port), r.watch_text(), r.watch_samples(), r.tsc_hz())
        };
        let ds = stats.since(&prev_port);
        // The second's verdict: the busiest lane's busy share of the second.
        let busy = lane_now
            .iter()
            .zip(prev_q.iter())
            .map(|(c, p)| c.busy_cycles.saturating_sub(p.busy_cycles) as f64 / (secs * hz as f64) * 100.0)
            .reduce(f64::max)
            .map(|b| b.min(100.0));
        let xs = prev_xs.as_ref().map(|a| lock(rx).watch_between(a, &xs_now)).unwrap_or_default();
        let second = if d.packets == 0 {
            "idle".to_string()
        } else {
            limits::receiver_verdict(&receiver_counters(d.packets, &ds, &xs, d.lost, !args.count_only, busy)).label()
        };
        prev_xs = Some(xs_now);
        let per_q: Vec<String> = lane_now
            .iter()
            .zip(prev_q.iter_mut())
            .enumerate()
            .map(|(q, (c, p))| {
                let s = format!("q{q} {:.3}", c.packets.saturating_sub(p.packets) as f64 / secs / 1e6);
                *p = *c;
                s
            })
            .collect();
        println!(
            "[{:6.1}s] received {} Mpps  {:7.3} Gb/s wire (+20 B/frame)  | {} | imissed {} rx_nombuf {} | lost {} reordered {} dup {} no-probe {}{} | limit: {second}",
            now.duration_since(began).as_secs_f64(),
            report::mpps(r.mpps),
            r.wire_gbps,
            per_q.join(" "),
            ds.imissed,
            ds.rx_nombuf,
            d.lost,
            d.reordered,
            d.duplicates,
            d.no_probe,
            watch.map(|w| format!(" | {w}")).unwrap_or_default()
        );
        prev = cur;
        prev_port = stats;
        prev_t = now;
    }
}
