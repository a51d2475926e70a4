//! Pacing on a cycle counter: when each burst of a paced queue is due.
//!
//! Deadlines are kept on an absolute schedule (start + k x period), carried
//! in whole cycles plus a remainder, so the achieved rate does not drift by
//! rounding however long the run: over any whole number of bursts the error
//! is below one cycle.

/// The schedule of one paced queue.
#[derive(Debug, Clone)]
pub struct Pacer {
    next: u64,
    whole: u64,
    /// period = whole + num/den cycles
    num: u64,
    den: u64,
    acc: u64,
}

impl Pacer {
    /// A schedule of `burst` frames at `rate` frames per second on a counter
    /// running at `hz`, first burst due at `start`.
    pub fn new(hz: u64, rate: f64, burst: u32, start: u64) -> Pacer {
        assert!(rate > 0.0 && burst > 0 && hz > 0);
        // Work in milli-frames per second so fractional rates still pace exactly enough.
        let den = (rate * 1000.0).round().max(1.0) as u128;
        let cycles = u128::from(hz) * u128::from(burst) * 1000;
        Pacer { next: start, whole: (cycles / den) as u64, num: (cycles % den) as u64, den: den as u64, acc: 0 }
    }

    /// When the next burst is due.
    #[inline(always)]
    pub fn deadline(&self) -> u64 {
        self.next
    }

    /// Moves the schedule on by one burst.
    #[inline(always)]
    pub fn advance(&mut self) {
        self.next += self.whole;
        self.acc += self.num;
        if self.acc >= self.den {
            self.acc -= self.den;
            self.next += 1;
        }
    }

    /// Period of one burst in cycles, rounded down.
    pub fn period_cycles(&self) -> u64 {
        self.whole
    }
}

/// Splits a total rate evenly over `queues`.
pub fn per_queue_rate(total: f64, queues: u16) -> f64 {
    total / f64::from(queues)
}

/// Splits a total frame count over `queues`, the remainder going to the first queues.
pub fn per_queue_count(total: u64, queues: u16, queue: u16) -> u64 {
    let q = u64::from(queues);
    total / q + u64::from(u64::from(queue) < total % q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_rate_over_many_bursts() {
        // 2.5 GHz, 3 Mpps, bursts of 32: period 26666.67 cycles.
        let mut p = Pacer::new(2_500_000_000, 3_000_000.0, 32, 1000);
        assert_eq!(p.period_cycles(), 26_666);
        let bursts = 3_000_000 / 32 * 10;
        for _ in 0..bursts {
            p.advance();
        }
        let elapsed = p.deadline() - 1000;
        let expected = 2_500_000_000u64 * 32 * bursts / 3_000_000;
        assert!(elapsed.abs_diff(expected) <= 1, "{elapsed} vs {expected}");
    }

    #[test]
    fn slow_fractional_rate() {
        let mut p = Pacer::new(1_000_000, 0.5, 1, 0);
        p.advance();
        assert_eq!(p.deadline(), 2_000_000);
    }

    #[test]
    fn counts_split_with_remainder_first() {
        let split: Vec<u64> = (0..3).map(|q| per_queue_count(10, 3, q)).collect();
        assert_eq!(split, [4, 3, 3]);
        assert_eq!(split.iter().sum::<u64>(), 10);
        assert_eq!(per_queue_count(1, 4, 3), 0);
        assert_eq!(per_queue_rate(10.0, 4), 2.5);
    }
}
