//! How a receive lane's arrivals bunch up and how long it is busy,
//! measured per poll without a TSC read on every one: polls by frames
//! returned, the backlog after full polls, the peak per interval
//! (`Meter`), and the busy runs of polls that brought frames (`BusyRuns`).

use crate::counters::{ArrivalCounts, LaneCounters, StallWatch, Tally};

/// Polls by frames returned: bucket 0 holds empty polls, bucket k (k >= 1)
/// polls that returned 2^(k-1) to 2^k - 1 frames; the last, 512.
pub const POLL_BUCKETS: usize = 11;

/// How bursty the arrivals were, as the receiver saw them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Burstiness {
    /// Empty polls always; the others not with --count-only.
    pub polls_by_size: [u64; POLL_BUCKETS],
    /// Polls that came back full (as many frames as asked): more were waiting.
    pub full_polls: u64,
    /// The most frames taken in one unbroken run of polls that each followed
    /// a full one: frames that had waited beyond one poll.
    pub max_backlog: u64,
    /// With intervals on: their length, how many passed while frames were
    /// arriving (a gap of more than IDLE_INTERVALS, such as the pause
    /// between a ladder's trials, is not counted), and the most frames in one.
    pub interval_cycles: u64,
    pub intervals: u64,
    pub max_per_interval: u64,
    pub frames_in_intervals: u64,
}

impl Burstiness {
    pub fn merge(&mut self, o: &Burstiness) {
        for (a, b) in self.polls_by_size.iter_mut().zip(&o.polls_by_size) {
            *a += b;
        }
        self.full_polls += o.full_polls;
        self.max_backlog = self.max_backlog.max(o.max_backlog);
        self.interval_cycles = self.interval_cycles.max(o.interval_cycles);
        self.intervals += o.intervals;
        self.max_per_interval = self.max_per_interval.max(o.max_per_interval);
        self.frames_in_intervals += o.frames_in_intervals;
    }

    /// The busiest interval over the mean one (1.0: perfectly even).
    pub fn peak_to_mean(&self) -> Option<f64> {
        (self.intervals > 0 && self.frames_in_intervals > 0)
            .then(|| self.max_per_interval as f64 / (self.frames_in_intervals as f64 / self.intervals as f64))
    }
}

/// A gap of more than this many empty intervals is a pause, not traffic.
const IDLE_INTERVALS: u64 = 10_000;

#[inline(always)]
fn poll_bucket(n: usize) -> usize {
    ((usize::BITS - n.leading_zeros()) as usize).min(POLL_BUCKETS - 1)
}

/// How bursty the arrivals are, counted per poll that brought frames.
pub(super) struct Meter {
    pub(super) b: Burstiness,
    pub(super) after_full: bool,
    pub(super) backlog: u64,
    /// The interval being counted (TSC / interval length), its frames, and
    /// whether any interval was seen.
    pub(super) interval: u64,
    pub(super) in_interval: u64,
    pub(super) any_interval: bool,
    /// The most frames in a closed interval and the largest backlog since
    /// the last publish (folded into `b` and `window` then).
    pub(super) recent_peak: u64,
    pub(super) recent_backlog: u64,
    /// The measured window as of the last publish: its number and maxima.
    pub(super) window: ArrivalCounts,
}

impl Meter {
    pub(super) fn new(interval_cycles: u64) -> Meter {
        let b = Burstiness { interval_cycles, ..Default::default() };
        Meter {
            b,
            after_full: false,
            backlog: 0,
            interval: 0,
            in_interval: 0,
            any_interval: false,
            recent_peak: 0,
            recent_backlog: 0,
            window: ArrivalCounts::default(),
        }
    }

    /// A poll that brought `n` frames of the `burst` asked for; `tsc` is read
    /// only when intervals are on, `open_window` (the measured window open
    /// now) only after a gap.
    #[inline(always)]
    pub(super) fn frames(&mut self, n: usize, burst: usize, tsc: impl FnOnce() -> u64, open_window: impl FnOnce() -> u64) {
        let b = &mut self.b;
        b.polls_by_size[poll_bucket(n)] += 1;
        self.backlog = if self.after_full { self.backlog + n as u64 } else { 0 };
        self.recent_backlog = self.recent_backlog.max(self.backlog);
        self.after_full = n == burst;
        b.full_polls += u64::from(self.after_full);
        if b.interval_cycles == 0 {
            return;
        }
        let i = tsc() / b.interval_cycles;
        self.any_interval = true;
        if i != self.interval {
            self.recent_peak = self.recent_peak.max(self.in_interval);
            // The empty intervals in between count (the mean is over time),
            // unless the gap was a pause between runs or trials, or the one
            // before a window's first frame (the senders' drain): those
            // would only dilute it. A window is counted from its first
            // frame to its last.
            let empty = i.saturating_sub(self.interval + 1);
            let pause = empty > IDLE_INTERVALS || (empty > 0 && open_window() != self.window.window);
            b.intervals += u64::from(self.in_interval > 0) + if pause { 0 } else { empty };
            (self.interval, self.in_interval) = (i, 0);
        }
        self.in_interval += n as u64;
        b.frames_in_intervals += n as u64;
    }

    #[inline(always)]
    pub(super) fn empty(&mut self) {
        self.after_full = false;
    }

    /// Folds what was seen since the last publish into the run's and the
    /// window's maxima; a window opened since then starts its maxima anew
    /// (the lanes were idle when it opened: what was seen since is its).
    pub(super) fn fold(&mut self, open_window: u64) {
        if open_window != self.window.window {
            self.window = ArrivalCounts { window: open_window, ..Default::default() };
        }
        let (b, w) = (&mut self.b, &mut self.window);
        b.max_per_interval = b.max_per_interval.max(self.recent_peak);
        b.max_backlog = b.max_backlog.max(self.recent_backlog);
        w.peak_per_interval = w.peak_per_interval.max(self.recent_peak);
        w.max_backlog = w.max_backlog.max(self.recent_backlog);
        (self.recent_peak, self.recent_backlog) = (0, 0);
    }

    /// Publishes the arrival counts, at the end of a busy run.
    pub(super) fn publish(&mut self, counters: &LaneCounters) {
        self.fold(counters.open_window_number());
        let (b, w) = (&self.b, &self.window);
        counters.publish_arrivals(&ArrivalCounts {
            full_polls: b.full_polls,
            intervals: b.intervals,
            frames_in_intervals: b.frames_in_intervals,
            // The interval still open counts as far as it got.
            peak_per_interval: w.peak_per_interval.max(self.in_interval),
            ..*w
        });
    }

    pub(super) fn finish(mut self, empty_polls: u64) -> Burstiness {
        self.fold(self.window.window);
        if self.any_interval {
            self.b.max_per_interval = self.b.max_per_interval.max(self.in_interval);
            self.b.intervals += u64::from(self.in_interval > 0);
        }
        self.b.polls_by_size[0] = empty_polls;
        self.b
    }
}

/// Busy time: the span of each run of polls that brought frames. The TSC is
/// read where a run starts and ends, and every 8 polls within one (for the
/// live view), not on every poll: at full load a read per poll is a few
/// percent of the loop.
pub(super) struct BusyRuns {
    pub(super) run_start: Option<u64>,
    pub(super) first_tsc: Option<u64>,
    pub(super) last_tsc: u64,
    /// The TSC as last read (at most 7 polls ago within a run): the
    /// arrival meter's clock, so it costs no read of its own per poll.
    pub(super) now: u64,
    /// Every TSC read also tells whether the loop stood still since the
    /// last (a read every 256 idle polls keeps them close when idle); the
    /// longest stall not yet published.
    pub(super) stall: StallWatch,
    pub(super) unpublished_stall: u64,
}

impl BusyRuns {
    pub(super) fn new(hz: u64) -> BusyRuns {
        let now = dpdk::rdtsc();
        BusyRuns { run_start: None, first_tsc: None, last_tsc: 0, now, stall: StallWatch::new(now, hz), unpublished_stall: 0 }
    }

    #[inline(always)]
    pub(super) fn read(&mut self, tally: &mut Tally) -> u64 {
        let now = dpdk::rdtsc();
        let gap = self.stall.at(now, tally);
        self.unpublished_stall = self.unpublished_stall.max(gap);
        now
    }

    /// A poll brought frames; true when the counters are due for publishing.
    #[inline(always)]
    pub(super) fn frames(&mut self, tally: &mut Tally) -> bool {
        match self.run_start {
            None => {
                let now = self.read(tally);
                self.first_tsc.get_or_insert(now);
                (self.run_start, self.now) = (Some(now), now);
                false
            }
            Some(start) if tally.bursts & 7 == 0 => {
                self.last_tsc = self.read(tally);
                tally.busy_cycles += self.last_tsc - start;
                (self.run_start, self.now) = (Some(self.last_tsc), self.last_tsc);
                true
            }
            Some(_) => false,
        }
    }

    /// A poll came back empty: a run ends (true: publish). Idle, every
    /// 256th empty poll reads the TSC for the stall watch (true: publish
    /// when it saw one).
    #[inline(always)]
    pub(super) fn empty(&mut self, tally: &mut Tally) -> bool {
        let Some(start) = self.run_start.take() else {
            if tally.empty_polls & 0xff == 0 {
                self.read(tally);
                return self.unpublished_stall > 0;
            }
            return false;
        };
        self.last_tsc = self.read(tally);
        tally.busy_cycles += self.last_tsc - start;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_buckets_are_powers_of_two() {
        let got: Vec<usize> = [0, 1, 2, 3, 4, 7, 8, 32, 511, 512].iter().map(|&n| poll_bucket(n)).collect();
        assert_eq!(got, [0, 1, 2, 2, 3, 3, 4, 6, 9, 10]);
    }

    #[test]
    fn peak_to_mean() {
        let b = Burstiness { intervals: 10, frames_in_intervals: 1000, max_per_interval: 400, ..Default::default() };
        assert_eq!(b.peak_to_mean(), Some(4.0));
        assert_eq!(Burstiness::default().peak_to_mean(), None);
    }

    #[test]
    fn backlog_counts_frames_after_full_polls() {
        let mut m = Meter::new(0);
        for n in [32, 32, 5, 32, 1] {
            m.frames(n, 32, || unreachable!("intervals off: no TSC read"), || 0);
        }
        m.empty();
        m.frames(32, 32, || 0, || 0);
        let b = m.finish(7);
        assert_eq!(b.full_polls, 4);
        // After the first full poll: 32 + 5 frames waited; after the third, 1.
        assert_eq!(b.max_backlog, 37);
        assert_eq!(b.polls_by_size[0], 7);
        assert_eq!(b.polls_by_size[poll_bucket(32)], 4);
    }

    #[test]
    fn intervals_count_empty_ones_between_but_not_pauses() {
        let mut m = Meter::new(100);
        m.frames(10, 32, || 0, || 0);
        m.frames(10, 32, || 50, || 0);
        m.frames(4, 32, || 350, || 0); // intervals 1 and 2 passed empty
        m.frames(6, 32, || 100 * (3 + IDLE_INTERVALS + 2), || 0); // a pause: not counted
        let b = m.finish(0);
        assert_eq!(b.max_per_interval, 20);
        assert_eq!(b.frames_in_intervals, 30);
        // 0 (20 frames), 1 and 2 (empty), 3 (4 frames), the last (6 frames).
        assert_eq!(b.intervals, 5);
    }

    #[test]
    fn a_window_keeps_its_own_maxima() {
        let c = LaneCounters::default();
        let mut m = Meter::new(100);
        // Before window 1: a burst of 30 in interval 0, a backlog of 64.
        for n in [32, 32, 30] {
            m.frames(n, 32, || 10, || 0);
        }
        m.frames(1, 32, || 150, || 0);
        m.empty();
        m.publish(&c);
        let before = c.read_arrivals();
        assert_eq!((before.window, before.peak_per_interval, before.max_backlog), (0, 94, 62));
        // Window 1 opens; the lane's next busy run is gentler.
        c.open_window(1);
        // The gap before the window's first frame (the drain) is not counted.
        m.frames(5, 32, || 1000, || c.open_window_number());
        m.frames(4, 32, || 1100, || c.open_window_number());
        m.empty();
        m.publish(&c);
        let after = c.read_arrivals();
        let w = after.over_window(&before, 1);
        assert_eq!((w.peak_per_interval, w.max_backlog), (5, 0), "window 1's own maxima, not the run's");
        assert_eq!(w.frames_in_intervals, 9);
        // Interval 1 (closed in the window) and 10: not the 8 empty ones before 10.
        assert_eq!(w.intervals, 2);
        // The run's maxima keep the earlier burst.
        let b = m.finish(0);
        assert_eq!((b.max_per_interval, b.max_backlog), (94, 62));
    }
}
