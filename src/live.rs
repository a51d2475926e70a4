//! The skeleton of the once-a-second live line: when a line is due, the
//! seconds since the last one, the time stamp that opens it, and the
//! per-queue rates. What the line says between is each tool's own.

use std::time::{Duration, Instant};

use crate::counters::Tally;

/// Ticks once a period (a second unless --interval says otherwise) from
/// `began`, on the period (a late tick does not move the ones after it).
#[derive(Debug, Clone, Copy)]
pub struct Ticker {
    began: Instant,
    next: Instant,
    prev: Instant,
    period: Duration,
}

/// One due tick.
#[derive(Debug, Clone, Copy)]
pub struct Tick {
    /// Since the ticker began.
    pub elapsed: Duration,
    /// Since the previous tick (or the start): what a second's deltas are over.
    pub secs: f64,
}

impl Ticker {
    pub fn new(began: Instant) -> Ticker {
        Ticker::every(began, Duration::from_secs(1))
    }

    pub fn every(began: Instant, period: Duration) -> Ticker {
        Ticker { began, next: began + period, prev: began, period }
    }

    /// The tick at `now`, if one is due; the next falls a second later.
    pub fn due(&mut self, now: Instant) -> Option<Tick> {
        if now < self.next {
            return None;
        }
        self.next += self.period;
        if self.next <= now {
            // Behind by more than a period (the host held this thread): the
            // next row covers the time since this one, not a burst of catch-ups.
            self.next = now + self.period;
        }
        let tick = Tick { elapsed: now.duration_since(self.began), secs: now.duration_since(self.prev).as_secs_f64() };
        self.prev = now;
        Some(tick)
    }
}

impl Tick {
    /// "[   3.0s]": what every live line starts with.
    pub fn stamp(&self) -> String {
        format!("[{:6.1}s]", self.elapsed.as_secs_f64())
    }

    /// "q0 1.234 q1 1.230": each queue's Mpps over the tick, from its
    /// counters now and at the last tick (`prev`, updated to `now`).
    pub fn per_queue(&self, now: &[Tally], prev: &mut [Tally]) -> String {
        let text = self.queue_mpps(now, prev).iter().enumerate().map(|(q, m)| format!("q{q} {m:.3}")).collect::<Vec<_>>().join(" ");
        prev.copy_from_slice(now);
        text
    }

    /// Each queue's Mpps over the tick, from its counters now and at the last tick.
    pub fn queue_mpps(&self, now: &[Tally], prev: &[Tally]) -> Vec<f64> {
        now.iter().zip(prev).map(|(c, p)| c.packets.saturating_sub(p.packets) as f64 / self.secs / 1e6).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_once_a_second_on_the_second() {
        let t0 = Instant::now();
        let mut t = Ticker::new(t0);
        assert!(t.due(t0 + Duration::from_millis(999)).is_none());
        let a = t.due(t0 + Duration::from_millis(1200)).expect("due");
        assert_eq!(a.stamp(), "[   1.2s]");
        assert!((a.secs - 1.2).abs() < 1e-9);
        // The next is due at 2 s, not 2.2 s; its deltas are over 0.8 s.
        let b = t.due(t0 + Duration::from_millis(2000)).expect("due");
        assert!((b.secs - 0.8).abs() < 1e-9);
    }

    #[test]
    fn per_queue_rates_move_the_previous_counts() {
        let t0 = Instant::now();
        let tick = Ticker::new(t0).due(t0 + Duration::from_secs(1)).expect("due");
        let now = [Tally { packets: 2_000_000, ..Default::default() }, Tally { packets: 500_000, ..Default::default() }];
        let mut prev = [Tally { packets: 1_000_000, ..Default::default() }, Tally::default()];
        assert_eq!(tick.per_queue(&now, &mut prev), "q0 1.000 q1 0.500");
        assert_eq!(prev[0].packets, 2_000_000);
    }
}
