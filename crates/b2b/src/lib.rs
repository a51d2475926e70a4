//! The back-to-back frame test (RFC 2544 section 26.4, updated by RFC
//! 9004): the longest burst sent at the maximum frame rate that crosses
//! the path with no loss, searched again and again (each repetition a
//! whole search), averaged, and turned into the time the path's buffer
//! holds, corrected for the frames the path forwarded while the burst was
//! still arriving:
//!
//! - implied buffer time = average burst (frames) / maximum frame rate;
//! - corrected buffer time = implied x (1 - throughput / maximum frame rate),
//!   the throughput being the zero-loss throughput at the same frame size.
//!
//! Where the throughput reaches the maximum rate no buffer ever fills and
//! the test does not apply. No EAL and no I/O: the caller runs the bursts.

use serde::{Deserialize, Serialize};

/// One repetition's search: bursts double until one loses, then the
/// interval between the longest that passed and the shortest that lost is
/// halved until it is within `resolution` of the former (and one frame).
#[derive(Debug, Clone)]
pub struct BurstSearch {
    /// The first burst, and the longest the search tries (RFC 9004's limit).
    start: u64,
    max: u64,
    resolution: f64,
    passed: u64,
    lost: Option<u64>,
}

impl BurstSearch {
    pub fn new(start: u64, max: u64, resolution: f64) -> BurstSearch {
        BurstSearch { start: start.clamp(1, max.max(1)), max: max.max(1), resolution, passed: 0, lost: None }
    }

    /// The next burst length, or None when the search is done.
    pub fn next(&self) -> Option<u64> {
        match self.lost {
            None if self.passed == 0 => Some(self.start),
            None if self.passed >= self.max => None,
            None => Some((self.passed * 2).min(self.max)),
            Some(1) if self.passed == 0 => None,
            Some(l) => {
                let step = ((self.passed as f64 * self.resolution).ceil() as u64).max(1);
                (l - self.passed > step).then(|| self.passed + (l - self.passed) / 2)
            }
        }
    }

    /// A burst of `frames` that lost `lost` of them.
    pub fn record(&mut self, frames: u64, lost: u64) {
        if lost == 0 {
            self.passed = self.passed.max(frames);
        } else {
            self.lost = Some(self.lost.map_or(frames, |l| l.min(frames)));
        }
    }

    /// The longest burst that passed (0: even the first lost frames).
    pub fn longest(&self) -> u64 {
        self.passed
    }

    /// The longest burst passed at the search's own limit: the path may
    /// hold more, and the result is not a measurement of it.
    pub fn at_limit(&self) -> bool {
        self.passed >= self.max
    }
}

/// What the repetitions come to (RFC 9004 section 6.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// Each repetition's longest burst with no loss, frames.
    pub bursts: Vec<u64>,
    pub average_frames: f64,
    pub min_frames: u64,
    pub max_frames: u64,
    /// Sample standard deviation (0 for one repetition).
    pub stddev_frames: f64,
    /// The maximum frame rate the bursts were sent at, and the zero-loss
    /// throughput at this size, frames per second.
    pub max_rate_fps: f64,
    pub throughput_fps: f64,
    /// average / max rate, seconds.
    pub implied_buffer_time_s: f64,
    /// implied x (1 - throughput / max rate), seconds; None where it does not apply.
    pub corrected_buffer_time_s: Option<f64>,
    /// Why the result does not stand, if it does not.
    pub not_applicable: Option<String>,
}

/// The summary of `bursts` (one per repetition) at `max_rate_fps`, against
/// the zero-loss `throughput_fps`.
pub fn summarize(bursts: &[u64], max_rate_fps: f64, throughput_fps: f64, at_limit: bool) -> Summary {
    let n = bursts.len().max(1) as f64;
    let average = bursts.iter().sum::<u64>() as f64 / n;
    let var = if bursts.len() > 1 { bursts.iter().map(|&b| (b as f64 - average).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    let implied = average / max_rate_fps;
    let not_applicable = if throughput_fps >= max_rate_fps {
        Some(format!(
            "the throughput ({throughput_fps:.0} frames/s) reaches the bursts' rate ({max_rate_fps:.0}): no buffer fills, the test does not apply (RFC 9004 section 3)"
        ))
    } else if at_limit {
        Some("a burst at the search's longest passed: the path holds at least that, the figure is a lower bound, not its buffer".into())
    } else if bursts.is_empty() || bursts.contains(&0) {
        Some("a repetition lost frames of its first, shortest burst: no burst passed".into())
    } else {
        None
    };
    let corrected = (throughput_fps < max_rate_fps).then(|| implied * (1.0 - throughput_fps / max_rate_fps));
    Summary {
        bursts: bursts.to_vec(),
        average_frames: average,
        min_frames: bursts.iter().copied().min().unwrap_or(0),
        max_frames: bursts.iter().copied().max().unwrap_or(0),
        stddev_frames: var.sqrt(),
        max_rate_fps,
        throughput_fps,
        implied_buffer_time_s: implied,
        corrected_buffer_time_s: corrected,
        not_applicable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path that holds `buffer` frames of a burst.
    fn search(buffer: u64, start: u64, max: u64) -> (BurstSearch, usize) {
        let mut s = BurstSearch::new(start, max, 0.01);
        let mut n = 0;
        while let Some(b) = s.next() {
            s.record(b, b.saturating_sub(buffer));
            n += 1;
            assert!(n < 60, "{s:?}");
        }
        (s, n)
    }

    #[test]
    fn the_longest_burst_is_found_within_the_resolution() {
        for buffer in [1, 7, 130, 488, 5000, 123_456] {
            let (s, _) = search(buffer, 64, 10_000_000);
            let got = s.longest();
            assert!(got <= buffer && (buffer - got) as f64 <= (buffer as f64 * 0.01).ceil().max(1.0), "{buffer}: {got}");
        }
        // Nothing passes: 0; everything passes: the limit, flagged.
        assert_eq!(search(0, 64, 1000).0.longest(), 0);
        let (s, _) = search(5000, 64, 1000);
        assert!(s.at_limit() && s.longest() == 1000);
    }

    #[test]
    fn the_buffer_time_is_corrected_for_what_the_path_forwarded() {
        // RFC 9004's arithmetic: 8 frames at 1000 frames/s, throughput 750.
        let s = summarize(&[8, 8], 1000.0, 750.0, false);
        assert_eq!((s.implied_buffer_time_s, s.corrected_buffer_time_s), (0.008, Some(0.002)));
        assert_eq!(s.not_applicable, None);
        let s = summarize(&[6, 10], 1000.0, 0.0, false);
        assert_eq!((s.average_frames, s.min_frames, s.max_frames), (8.0, 6, 10));
        assert!((s.stddev_frames - 8f64.sqrt()).abs() < 1e-12);
        assert!(summarize(&[8], 1000.0, 1000.0, false).not_applicable.unwrap().contains("does not apply"));
        assert!(summarize(&[8], 1000.0, 10.0, true).not_applicable.unwrap().contains("lower bound"));
        assert!(summarize(&[0, 8], 1000.0, 10.0, false).not_applicable.is_some());
    }
}
