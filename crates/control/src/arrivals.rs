//! A window's arrival view from each receive queue's counts: how bunched
//! the superposed arrivals were, and the backlog their busiest burst
//! builds (Q_burst = (lambda_peak - mu) x T_b).

use crate::message::{QBurst, WindowArrivals};

/// What one receive queue counted over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LaneArrivals {
    pub queue: u16,
    pub full_polls: u64,
    pub max_backlog: u64,
    /// Intervals with traffic (and the short gaps between), their frames,
    /// and the most frames in one.
    pub intervals: u64,
    pub frames_in_intervals: u64,
    pub peak_per_interval: u64,
    /// Frames the queue took, and its seconds busy taking them.
    pub packets: u64,
    pub busy_seconds: f64,
}

/// The backlog a burst of superposed arrivals builds at a receiver that
/// serves `mu` frames/s: Q_burst = (lambda_peak - mu) x T_b frames, 0 when
/// the peak does not exceed the service rate.
pub fn q_burst(lambda_peak: f64, mu: f64, t_b: f64) -> f64 {
    ((lambda_peak - mu) * t_b).max(0.0)
}

/// The window's arrival view over its queues; `interval_us` None when
/// intervals were not counted.
pub fn window_arrivals(lanes: &[LaneArrivals], interval_us: Option<u64>) -> WindowArrivals {
    let mut w = WindowArrivals {
        full_polls: lanes.iter().map(|l| l.full_polls).sum(),
        max_backlog_frames: lanes.iter().map(|l| l.max_backlog).max().unwrap_or(0),
        interval_us,
        ..Default::default()
    };
    let Some(us) = interval_us.filter(|&us| us > 0) else { return w };
    w.intervals = lanes.iter().map(|l| l.intervals).sum();
    let frames: u64 = lanes.iter().map(|l| l.frames_in_intervals).sum();
    let peak = lanes.iter().map(|l| l.peak_per_interval).max().unwrap_or(0);
    if w.intervals == 0 || frames == 0 {
        return w;
    }
    let mean = frames as f64 / w.intervals as f64;
    (w.peak_per_interval, w.mean_per_interval, w.peak_to_mean) = (Some(peak), Some(mean), Some(peak as f64 / mean));
    let t_b = us as f64 * 1e-6;
    w.q_burst = lanes
        .iter()
        .filter(|l| l.busy_seconds > 0.0 && l.peak_per_interval > 0)
        .map(|l| {
            let (lambda, mu) = (l.peak_per_interval as f64 / t_b, l.packets as f64 / l.busy_seconds);
            QBurst {
                queue: l.queue,
                lambda_peak_mpps: lambda / 1e6,
                mu_mpps: mu / 1e6,
                t_b_us: us as f64,
                frames: q_burst(lambda, mu, t_b),
            }
        })
        // The largest excess, or where none has one the queue nearest to it.
        .max_by(|a, b| (a.lambda_peak_mpps - a.mu_mpps).total_cmp(&(b.lambda_peak_mpps - b.mu_mpps)).then(b.queue.cmp(&a.queue)));
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_burst_is_the_excess_over_the_burst() {
        // 30 Mpps arriving for 10 us at a queue serving 20 Mpps: 100 frames wait.
        assert!((q_burst(30e6, 20e6, 10e-6) - 100.0).abs() < 1e-9);
        assert_eq!(q_burst(10e6, 20e6, 1.0), 0.0);
    }

    fn lane(queue: u16, peak: u64, packets: u64, busy_seconds: f64) -> LaneArrivals {
        LaneArrivals {
            queue,
            full_polls: 3,
            max_backlog: peak / 2,
            intervals: 10_000,
            frames_in_intervals: packets,
            peak_per_interval: peak,
            packets,
            busy_seconds,
        }
    }

    #[test]
    fn the_view_sums_counts_and_takes_the_worst_queue() {
        // Queue 0: 1M frames in 1 s (100 per 100 us), peak 3000 in one
        // interval (30 Mpps), served at 1M / 0.05 s busy = 20 Mpps.
        // Queue 1: even, peak 120, never above its service rate.
        let w = window_arrivals(&[lane(0, 3000, 1_000_000, 0.05), lane(1, 120, 1_000_000, 0.1)], Some(100));
        assert_eq!(w.full_polls, 6);
        assert_eq!(w.max_backlog_frames, 1500);
        assert_eq!(w.intervals, 20_000);
        assert_eq!(w.peak_per_interval, Some(3000));
        assert_eq!(w.mean_per_interval, Some(100.0));
        assert_eq!(w.peak_to_mean, Some(30.0));
        let q = w.q_burst.expect("an estimate");
        assert_eq!(q.queue, 0);
        assert!((q.lambda_peak_mpps - 30.0).abs() < 1e-9 && (q.mu_mpps - 20.0).abs() < 1e-9);
        // (30 - 20) Mpps x 100 us = 1000 frames.
        assert!((q.frames - 1000.0).abs() < 1e-6, "{q:?}");
    }

    #[test]
    fn no_intervals_no_ratio_and_no_estimate() {
        let w = window_arrivals(&[lane(0, 3000, 1_000_000, 0.05)], None);
        assert_eq!((w.peak_to_mean, w.q_burst, w.intervals), (None, None, 0));
        assert_eq!(w.full_polls, 3);
        let idle = window_arrivals(&[LaneArrivals::default()], Some(100));
        assert_eq!((idle.peak_to_mean, idle.q_burst), (None, None));
    }
}
