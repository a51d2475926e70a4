//! Where the rate moved and stayed moved, where a counter started to tick,
//! and whether it reads as a credit bucket; each finding with its evidence.
//!
//! # The rules
//!
//! - **The rate** analysed is received frames per second (frames / secs of
//!   each interval) where the series has received frames, else sent.
//! - **The active span** runs, for a received rate whose series has the
//!   trial's marks ([`Series::trial_frames_at`]: drop's first and last
//!   probed frames), from the interval holding the first mark to the one
//!   holding the last, and starts and ends at the marks (an idle lead-in's
//!   stray kernel frames are not the trial); else from the first to the
//!   last interval with frames, where the sender started (stopped) inside
//!   its edge interval being estimated from the edge's frames at the first
//!   (last) level's rate. The two edge intervals are partial, so they are
//!   left out of every level's estimate (an interval whose end did not
//!   report frames counts as 0 frames); `active_s` runs between start and
//!   end. A level is the plain mean of its intervals' rates.
//! - **A change** splits the active span into two levels where all of:
//!   1. the mean rate moves by at least `min_change_pct` (default 20%) of
//!      the earlier level;
//!   2. the new level holds at least `min_hold_s` (default 3 s), to the
//!      next change or the end of the active span;
//!   3. the move is more than [`NOISE_SE`] (4) standard errors of the two
//!      levels' difference, sqrt(s1²/n1 + s2²/n2) over their n1 and n2
//!      intervals, where a level's spread s is the largest of: its
//!      interval-to-interval spread (sqrt of half the mean squared
//!      difference of successive intervals, which a slow drift does not
//!      inflate); its standard deviation around its own mean (so a "level"
//!      that still holds a step too short to be a change is not one); and
//!      the active span's typical relative spread (the median relative
//!      difference of successive intervals x [`MEDIAN_DIFF_TO_SIGMA`])
//!      times the higher of the two levels (so a level of one or two
//!      intervals cannot look noiseless).
//!
//!   The interval in which the rate moved is usually part one level, part
//!   the other, and a split may leave that one interval out of both
//!   levels. The change's time is placed inside that interval (or, with
//!   none left out, inside the interval beside the split that lies more
//!   than 2 spreads from its level, if one does) where the two levels
//!   would give its frames; else at the split.
//!
//!   Changes are found by binary segmentation: in a segment (at first the
//!   whole active span less its edges), of the splits whose new level
//!   holds (and whose earlier level holds, when it follows a change), the
//!   one that leaves the least squared deviation of the intervals around
//!   their levels' means, each relative to its level's mean; it is kept
//!   when its move is beyond 4 standard errors at the span's typical
//!   spread, and the same is done on each side. Each change found is then
//!   moved to where it fits best between its neighbours, and all are
//!   checked against rules 1-3 with their final neighbouring levels:
//!   while any fails, the failing change with the smallest move is dropped
//!   (its two levels become one; of two failing neighbours only the
//!   weaker goes), the rest are fitted again and checked again. A burst
//!   must fill at least one whole interval to be measured as a level.
//! - **An onset**: for each named counter (allowance or watched), the
//!   `t_s` (interval end) of the first interval of the active span with a
//!   delta above 0, after at least the span's first interval at 0; a
//!   counter that ticks in the span's first interval already gets that
//!   interval's *start* (it was moving when the traffic began).
//! - **A bucket**: exactly one change, a fall (the rate fell once from a
//!   higher level to a lower one and held the lower one to the end of the
//!   active span). `baseline_pps` is the lower level's rate: its whole
//!   intervals' frames over their seconds, or where the trial's last frame
//!   was marked and it is more, with the partial last interval's frames
//!   and its part of the active span added (a host that held the receiver
//!   back near the end moves frames across the last whole interval's edge;
//!   a poll held back marks the last frame late; each errs only low);
//!   `burst_pps` the higher, `burst_s` runs from the active span's start to the change;
//!   `frames_above` is the sum, over the active span's intervals that start
//!   before the change (the partial first interval included), of
//!   (frames - baseline_pps x the interval's seconds inside the active
//!   span) floored at 0 per interval: the first interval is charged the
//!   baseline only from where the trial began in it; `bytes_above` the
//!   same from the byte column of the same end, where there is one, with
//!   the lower level's mean bytes per second as the baseline. Its `onset`
//!   is the earliest allowance onset within [`ONSET_NEAR_INTERVALS`] (2)
//!   intervals of the change.
//! - **A burst too short to resolve** (received rate, no change found): the
//!   span's first two intervals against the level of the rest, by
//!   `Rates::head_burst` (beyond the noise over both intervals or over the
//!   first alone), sized against the baseline above; reported as a bucket
//!   with `resolved: false`
//!   (`at_least: true` without the trial's marks).
//! - **A sent rate's fall** is a bucket only where the sender's rows say
//!   its queue pushed back ([`SENDER_PUSHED_BACK`]) in most of the lower
//!   level's whole intervals; else it stays a change, with a
//!   [`SenderFall`] that names the host where the lanes stood still
//!   ([`SENDER_HOST_STALL`]) in most of them: what the sender itself sent
//!   is no evidence of the network's bucket unless the network pushed it
//!   back.
//!
//! # Measured on synthetic series (1000 seeds each, 1 s intervals)
//!
//! - Steady 60 s runs: no change found with uniform ±5% or ±10% noise per
//!   interval, nor Gaussian sigma 5% or 10%; 1 run in 1000 at sigma 20%.
//! - The tbf bucket (40 000 frames/s for 2.3 s, then 4 921 frames/s
//!   for 7.7 s, partial first and last intervals): found, baseline within
//!   5% and bytes above baseline within 10%, in every run at ±3% and ±5%
//!   noise; at ±10% the size is outside 10% in 7% of runs (`frames_above`
//!   sums the measured intervals, so it carries their noise).
//! - At ±5% noise, a 50% rise, two changes (2x up, 4x down), a 5 s excursion to 2x and
//!   back: always found as such; a 2 s excursion and a 15% fall: never
//!   reported (held too short, moved too little).

use serde::{Deserialize, Serialize};

use crate::store::{Count, CounterKind, Series};

/// A move must exceed this many standard errors of the levels' difference.
pub const NOISE_SE: f64 = 4.0;
/// An allowance onset this many intervals or fewer from a bucket's change
/// is read as the bucket running out.
pub const ONSET_NEAR_INTERVALS: f64 = 2.0;
/// The trial's first frame is marked by a poll of the lanes' counters
/// (drop's, every 10 ms): up to this late, seconds. A burst read from the
/// first intervals must carry more than the level would in this time.
pub const TRIAL_MARK_SLACK_S: f64 = 0.02;
/// An interval beside a split further than this many spreads from its
/// level is where the rate moved.
const MOVED_IN_SIGMAS: f64 = 2.0;
/// A Gaussian noise's sigma from the median absolute difference of
/// successive values: 1 / (0.6745 x sqrt 2).
pub const MEDIAN_DIFF_TO_SIGMA: f64 = 1.0483;

/// What counts as a change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Thresholds {
    /// The smallest move, % of the earlier level.
    pub min_change_pct: f64,
    /// The least time the new level must hold, seconds.
    pub min_hold_s: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { min_change_pct: 20.0, min_hold_s: 3.0 }
    }
}

/// The rate moved from one level to another and held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Change {
    /// When, seconds since the run began.
    pub at_s: f64,
    pub before_pps: f64,
    pub after_pps: f64,
    /// How long the earlier level lasted (from the active span's start or
    /// the change before), seconds.
    pub before_s: f64,
    /// How long the new level held (to the next change or the active
    /// span's end), seconds.
    pub held_s: f64,
}

/// A counter's first tick in the active span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Onset {
    pub counter: String,
    pub at_s: f64,
}

/// A burst, then a lower baseline to the end: a credit bucket, sized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bucket {
    pub burst_pps: f64,
    pub burst_s: f64,
    /// The lower level's frames over its seconds: its whole intervals', or
    /// with the partial last interval's added over its active part where
    /// the trial's last frame was marked and that is more.
    pub baseline_pps: f64,
    /// Frames carried above the baseline until the change.
    pub frames_above: u64,
    /// Bytes carried above the baseline until the change, where bytes were counted.
    pub bytes_above: Option<u64>,
    /// The allowance counter that began to tick at the change.
    pub onset: Option<Onset>,
    /// false: the burst was shorter than the rows could resolve as a level
    /// (it lay within the active span's first two intervals): `frames_above`
    /// is counted all the same, but `burst_pps` is only those intervals'
    /// mean rate and `burst_s` their active time, the most the burst lasted.
    pub resolved: bool,
    /// `frames_above` and `bytes_above` are the least the bucket held: the
    /// trial's start inside its first interval was not known (the series
    /// has no `trial_first_frame_s`), so that interval was charged a whole
    /// interval of baseline.
    pub at_least: bool,
}

/// The verdict labels a sender's rows carry: what held its rate in the
/// interval. Its queue pushed back (tx_burst refused frames, or its lanes
/// spent most of their time inside it): the path beneath pushed back.
pub const SENDER_PUSHED_BACK: &str = "pushed-back";
/// Its lanes stood still (descheduled by the host, or steal) for a share of
/// the interval without the queue pushing back.
pub const SENDER_HOST_STALL: &str = "host-stall";
/// Neither.
pub const SENDER_UNHINDERED: &str = "none";

/// A fall in the sender's own rate that is not read as a credit bucket:
/// the sender's queue did not push back in most of the lower level's
/// intervals, so the sender, not the network, sent less.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SenderFall {
    /// The lower level's whole intervals.
    pub intervals: u32,
    /// Of those, the ones labelled: pushed back by the path; with the
    /// sending lanes stood still (the host).
    pub pushed_back: u32,
    pub host_stalled: u32,
    /// How many carried a label at all (a series without them says nothing).
    pub labelled: u32,
}

impl SenderFall {
    /// A fall that is the path's: pushed back in most of the lower level.
    fn is_push_back(&self) -> bool {
        self.pushed_back * 2 > self.intervals
    }

    /// The host's: its lanes stood still in most of the lower level.
    fn is_host(&self) -> bool {
        self.host_stalled * 2 > self.intervals
    }
}

/// A rate's one fall that came with a change in the frames' mean size (a
/// ladder's next size, a mix whose phase changed): the traffic changed, so
/// the fall is not read as a credit bucket (a bandwidth-bound path carries
/// fewer, larger frames at the same bytes per second).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SizeChange {
    /// The frames' mean size before and after the change, bytes.
    pub before_bytes: f64,
    pub after_bytes: f64,
}

/// Frames whose mean size moved by more than this fraction across a fall
/// changed the traffic.
const SIZE_CHANGE: f64 = 0.10;

/// What the series shows, with its evidence and its sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Analysis {
    /// "received" or "sent": whose rate was analysed.
    pub rate: String,
    /// The active span's length, seconds.
    pub active_s: f64,
    pub thresholds: Thresholds,
    pub changes: Vec<Change>,
    pub bucket: Option<Bucket>,
    /// A sent rate's single fall without the push-back that would make it a
    /// bucket: why not.
    pub sender_fall: Option<SenderFall>,
    /// A fall that came with a change of frame size: why it is no bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_change: Option<SizeChange>,
    pub onsets: Vec<Onset>,
    pub sentence: String,
}

const EPS: f64 = 1e-9;

/// A run of intervals, as one level.
#[derive(Debug, Clone, Copy)]
struct Level {
    n: f64,
    mean: f64,
    /// The interval-to-interval spread (0 for one interval).
    own: f64,
    /// The spread around the level's own mean (0 for one interval).
    sd: f64,
}

impl Level {
    /// What the level leaves unexplained: the squared deviations of its
    /// intervals around its mean, relative to the mean (noise on a rate
    /// grows with the rate, so a fast level's noise does not outweigh a
    /// slow level's misfit).
    fn cost(&self) -> f64 {
        let sse = self.sd * self.sd * (self.n - 1.0).max(0.0);
        if self.mean.abs() > 1e-12 {
            sse / (self.mean * self.mean)
        } else {
            sse
        }
    }
}

/// Where a change splits the rows: the next level starts at row `k + gap`;
/// with `gap` 1, row `k` is the interval the rate moved in.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Split {
    k: usize,
    gap: usize,
}

/// A change with its figures, as the checks see it.
#[derive(Debug, Clone, Copy)]
struct Checked {
    at_s: f64,
    before: Level,
    after: Level,
    before_s: f64,
    held_s: f64,
    pct: f64,
    se: f64,
}

struct Rates {
    t: Vec<f64>,
    secs: Vec<f64>,
    frames: Vec<f64>,
    /// frames / secs of each row.
    x: Vec<f64>,
    /// Prefix sums of x.
    px: Vec<f64>,
    /// Prefix sums of x², around the interior's mean (so they keep their precision).
    px2: Vec<f64>,
    c: f64,
    /// Prefix sums of (x[i+1] - x[i])²: pd[j] sums i < j.
    pd: Vec<f64>,
    /// The active span's first and last rows.
    a: usize,
    b: usize,
    rel_noise: f64,
    /// When the trial's own first and last frames were seen, where the tool said.
    trial: Option<(f64, f64)>,
}

impl Rates {
    fn new(t: Vec<f64>, secs: Vec<f64>, frames: Vec<f64>, (a, b): (usize, usize), trial: Option<(f64, f64)>) -> Rates {
        let x: Vec<f64> = frames.iter().zip(&secs).map(|(f, s)| if *s > 0.0 { f / s } else { 0.0 }).collect();
        let mut px = vec![0.0; x.len() + 1];
        for (i, v) in x.iter().enumerate() {
            px[i + 1] = px[i] + v;
        }
        let c = if b > a + 1 { (px[b] - px[a + 1]) / (b - a - 1) as f64 } else { 0.0 };
        let mut px2 = vec![0.0; x.len() + 1];
        for (i, v) in x.iter().enumerate() {
            px2[i + 1] = px2[i] + (v - c).powi(2);
        }
        let mut pd = vec![0.0; x.len().max(1)];
        for i in 0..x.len().saturating_sub(1) {
            pd[i + 1] = pd[i] + (x[i + 1] - x[i]).powi(2);
        }
        // The typical relative interval-to-interval difference of the interior.
        let mut rel: Vec<f64> = (a + 1..b.saturating_sub(1))
            .filter_map(|i| {
                let m = (x[i] + x[i + 1]) / 2.0;
                (m > 0.0).then(|| (x[i + 1] - x[i]).abs() / m)
            })
            .collect();
        rel.sort_by(f64::total_cmp);
        let rel_noise = if rel.is_empty() { 0.0 } else { rel[(rel.len() - 1) / 2] * MEDIAN_DIFF_TO_SIGMA };
        Rates { t, secs, frames, x, px, px2, c, pd, a, b, rel_noise, trial }
    }

    /// Rows `p..q` as a level.
    fn level(&self, p: usize, q: usize) -> Level {
        let n = (q - p) as f64;
        let mean = (self.px[q] - self.px[p]) / n;
        let own = if q - p >= 2 { ((self.pd[q - 1] - self.pd[p]) / (2.0 * (n - 1.0))).max(0.0).sqrt() } else { 0.0 };
        let sd = if q - p >= 2 { ((self.px2[q] - self.px2[p] - n * (mean - self.c).powi(2)) / (n - 1.0)).max(0.0).sqrt() } else { 0.0 };
        Level { n, mean, own, sd }
    }

    /// The least spread a level beside another is given: the typical
    /// relative spread at the higher of the two.
    fn floor(&self, l: Level, r: Level) -> f64 {
        self.rel_noise * l.mean.abs().max(r.mean.abs())
    }

    /// A level's spread beside another; confirming, at least its spread
    /// around its own mean too.
    fn spread(&self, v: Level, floor: f64, confirming: bool) -> f64 {
        let s = v.own.max(floor);
        if confirming {
            s.max(v.sd)
        } else {
            s
        }
    }

    fn start_of(&self, i: usize) -> f64 {
        self.t[i] - self.secs[i]
    }

    /// Where the change between `l` and `r` at `s` lies: inside the
    /// interval the rate moved in, where the two levels would give its
    /// frames. With no interval left out of the levels, the interval on
    /// either side of the split that is further (beyond 2 spreads) from its
    /// level is taken as that interval; else the change is at the split.
    fn at_s(&self, s: Split, l: Level, r: Level) -> f64 {
        let inside = |k: usize| {
            let f = if (l.mean - r.mean).abs() > 0.0 { ((self.x[k] - r.mean) / (l.mean - r.mean)).clamp(0.0, 1.0) } else { 0.5 };
            self.start_of(k) + f * self.secs[k]
        };
        if s.gap == 1 {
            return inside(s.k);
        }
        let floor = self.floor(l, r);
        let off = |k: usize, lv: Level| {
            let d = (self.x[k] - lv.mean).abs();
            let sigma = self.spread(lv, floor, false);
            if sigma > 0.0 {
                d / sigma
            } else if d > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        };
        let (before, after) = (off(s.k - 1, l), off(s.k, r));
        match (before.max(after) > MOVED_IN_SIGMAS, before >= after) {
            (true, true) => inside(s.k - 1),
            (true, false) => inside(s.k),
            (false, _) => self.start_of(s.k),
        }
    }

    /// Where the sender started: where its first frame was seen, where the
    /// tool said; else from the first edge's frames at the first level's rate.
    fn active_start(&self, first: Option<f64>) -> f64 {
        let a = self.a;
        if let Some((f, _)) = self.trial {
            return f.clamp(self.start_of(a), self.t[a]);
        }
        match first {
            Some(m) if m > 0.0 && self.b > a => self.t[a] - (self.frames[a] / m).min(self.secs[a]),
            _ => self.start_of(a),
        }
    }

    /// Where the sender stopped: where its last frame was seen, where the
    /// tool said; else from the last edge's frames at the last level's rate.
    fn active_end(&self, last: Option<f64>) -> f64 {
        let b = self.b;
        if let Some((_, l)) = self.trial {
            return l.clamp(self.start_of(b), self.t[b]);
        }
        match last {
            Some(m) if m > 0.0 && b > self.a => self.start_of(b) + (self.frames[b] / m).min(self.secs[b]),
            _ => self.t[b],
        }
    }

    /// The part of row `i` inside the active span `start..end`, seconds.
    fn active_secs(&self, i: usize, start: f64, end: f64) -> f64 {
        (self.t[i].min(end) - self.start_of(i).max(start)).max(0.0)
    }

    /// A burst too short for the rows to resolve as a level: the frames the
    /// active span's first two rows (the partial first, and the first whole
    /// one it may spill into) carried above the level of the rows after
    /// them, when either row's rate over its active time is `min_change_pct`
    /// or more above that level and the frames above are beyond
    /// [`NOISE_SE`] spreads: the level's spread over those rows' time, and
    /// [`TRIAL_MARK_SLACK_S`] of the level for where the trial began.
    /// Returns (frames above, the level, the rows' mean rate, their active
    /// seconds).
    fn head_burst(&self, start: f64, end: f64, th: &Thresholds) -> Option<(f64, Level, f64, f64)> {
        let (lo, hi) = self.interior();
        if hi < lo + 3 {
            return None;
        }
        let level = self.level(lo + 1, hi);
        let head = [self.a, lo].map(|i| (self.frames[i], self.active_secs(i, start, end)));
        let (frames, secs) = (head[0].0 + head[1].0, head[0].1 + head[1].1);
        if secs <= 0.0 || level.mean <= 0.0 {
            return None;
        }
        let (rate, above) = (frames / secs, frames - level.mean * secs);
        let moved = head.iter().any(|&(f, t)| t > 0.0 && (f / t - level.mean) / level.mean * 100.0 >= th.min_change_pct - EPS);
        let spread = self.spread(level, self.floor(level, level), true);
        // Beyond the noise over both rows, or over the first alone: a host
        // that held a later row back and let it catch up in the next (frames
        // moved across a row's edge, none lost) widens the spread, and the
        // second row, at the level, would only add its noise to a burst
        // that ended in the first.
        let beyond = |above: f64, secs: f64| above > NOISE_SE * (spread * secs).hypot(level.mean * TRIAL_MARK_SLACK_S);
        let first_above = head[0].0 - level.mean * head[0].1;
        let seen = beyond(above, (head[0].1.powi(2) + head[1].1.powi(2)).sqrt()) || beyond(first_above, head[0].1);
        (moved && above > 0.0 && seen).then_some((above, level, rate, secs))
    }

    /// The rate of the lower level that a bucket is sized against: its
    /// whole rows' frames over their seconds, or, where the trial's last
    /// frame was marked and it is more, with the partial last row's frames
    /// and its part of the active span added. Each errs only low: a host
    /// that held drop back near the end moves frames across the last whole
    /// row's edge into the partial row (the whole rows fall short, and a
    /// bucket sized on them is credited with the shortfall over its whole
    /// burst: CI measured 12 246 frames/s against tbf's 12 550 and 5890
    /// frames above against 5264); a poll of drop's counters held back
    /// marks the last frame late (by 94 ms here once), and the partial row
    /// is then charged time it carried nothing in.
    fn lower_rate(&self, rows: &[usize], end: f64) -> f64 {
        let rate = |(f, s): (f64, f64)| if s > 0.0 { f / s } else { 0.0 };
        let whole = rows.iter().fold((0.0, 0.0), |(f, s), &i| (f + self.frames[i], s + self.secs[i]));
        let b = self.b;
        let partial = (self.trial.is_some() && b > self.a + 1 && rows.last() == Some(&(b - 1)))
            .then(|| (whole.0 + self.frames[b], whole.1 + (end.min(self.t[b]) - self.start_of(b)).max(0.0)));
        rate(whole).max(partial.map_or(0.0, rate))
    }

    /// The interior: rows whose rates make levels.
    fn interior(&self) -> (usize, usize) {
        (self.a + 1, self.b.max(self.a + 1))
    }

    /// The move between two levels: (% of the earlier, standard error),
    /// each level's spread at least its spread around its own mean too, so
    /// a "level" that still holds a step is not one.
    fn moved(&self, l: Level, r: Level) -> (f64, f64) {
        let diff = (r.mean - l.mean).abs();
        let floor = self.floor(l, r);
        let se = (self.spread(l, floor, true).powi(2) / l.n + self.spread(r, floor, true).powi(2) / r.n).sqrt();
        let pct = if l.mean > 0.0 {
            diff / l.mean * 100.0
        } else if diff > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        (pct, se)
    }

    /// The move in standard errors.
    fn t_stat(l: Level, r: Level, se: f64) -> f64 {
        let diff = (r.mean - l.mean).abs();
        if se > 0.0 {
            diff / se
        } else if diff > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }

    /// Binary segmentation over the interior: in each segment, of the
    /// splits whose levels hold, the one that leaves the least relative
    /// squared deviation around the two levels' means; kept when its move
    /// is beyond the noise, and then the same on each side.
    fn segment(&self, th: &Thresholds) -> Vec<Split> {
        let mut found = Vec::new();
        let (lo, hi) = self.interior();
        // (lo, hi, start of the segment's first level when it follows a change, end when a change follows).
        let mut work = vec![(lo, hi, None::<f64>, None::<f64>)];
        while let Some((lo, hi, start_s, end_s)) = work.pop() {
            let mut best: Option<(f64, Split, f64, Level, Level)> = None;
            for k in lo + 1..hi {
                let l = self.level(lo, k);
                for gap in 0..=1 {
                    if k + gap >= hi {
                        continue;
                    }
                    let r = self.level(k + gap, hi);
                    let sse = l.cost() + r.cost();
                    if best.is_some_and(|b| sse >= b.0) {
                        continue;
                    }
                    let s = Split { k, gap };
                    let at = self.at_s(s, l, r);
                    let end = end_s.unwrap_or_else(|| self.active_end(Some(r.mean)));
                    let holds = end - at >= th.min_hold_s - EPS && start_s.is_none_or(|s0| at - s0 >= th.min_hold_s - EPS);
                    if holds {
                        best = Some((sse, s, at, l, r));
                    }
                }
            }
            // Searching, the spread is the span's typical one: a level's own
            // would count the steps of the segment's other changes as noise.
            let beyond_noise = |l: Level, r: Level| {
                let floor = self.floor(l, r);
                Self::t_stat(l, r, floor * (1.0 / l.n + 1.0 / r.n).sqrt()) > NOISE_SE
            };
            if let Some((_, s, at, _, _)) = best.filter(|b| beyond_noise(b.3, b.4)) {
                found.push(s);
                work.push((lo, s.k, start_s, Some(at)));
                work.push((s.k + s.gap, hi, Some(at), end_s));
            }
        }
        found.sort_by_key(|s| s.k);
        found
    }

    /// The levels between the splits.
    fn levels(&self, splits: &[Split]) -> Vec<Level> {
        let (lo, hi) = self.interior();
        let mut edges = vec![lo];
        for s in splits {
            edges.push(s.k);
            edges.push(s.k + s.gap);
        }
        edges.push(hi);
        edges.chunks(2).map(|e| self.level(e[0], e[1])).collect()
    }

    /// Each split's figures against its neighbouring levels.
    fn check(&self, splits: &[Split]) -> Vec<Checked> {
        let levels = self.levels(splits);
        let at: Vec<f64> = splits.iter().enumerate().map(|(i, s)| self.at_s(*s, levels[i], levels[i + 1])).collect();
        let start = self.active_start(levels.first().map(|l| l.mean));
        let end = self.active_end(levels.last().map(|l| l.mean));
        (0..splits.len())
            .map(|i| {
                let (before, after) = (levels[i], levels[i + 1]);
                let (pct, se) = self.moved(before, after);
                Checked {
                    at_s: at[i],
                    before,
                    after,
                    before_s: at[i] - if i == 0 { start } else { at[i - 1] },
                    held_s: at.get(i + 1).copied().unwrap_or(end) - at[i],
                    pct,
                    se,
                }
            })
            .collect()
    }

    /// Each split moved, in turn, to where it fits its final neighbours
    /// best (a split found in a wide segment sits where that segment's
    /// other steps pulled it).
    fn refine(&self, splits: &mut [Split]) {
        let (lo, hi) = self.interior();
        for i in 0..splits.len() {
            let from = if i == 0 { lo } else { splits[i - 1].k + splits[i - 1].gap };
            let to = splits.get(i + 1).map_or(hi, |s| s.k);
            let mut best = (f64::INFINITY, splits[i]);
            for k in from + 1..to {
                let l = self.level(from, k);
                for gap in 0..=1 {
                    if k + gap < to {
                        let cost = l.cost() + self.level(k + gap, to).cost();
                        if cost < best.0 {
                            best = (cost, Split { k, gap });
                        }
                    }
                }
            }
            splits[i] = best.1;
        }
    }

    /// The splits that obey every rule against their final neighbours.
    fn confirm(&self, mut splits: Vec<Split>, th: &Thresholds) -> Vec<Checked> {
        self.refine(&mut splits);
        loop {
            let checked = self.check(&splits);
            let fails: Vec<bool> = checked
                .iter()
                .map(|c| {
                    c.pct < th.min_change_pct - EPS || Self::t_stat(c.before, c.after, c.se) <= NOISE_SE || c.held_s < th.min_hold_s - EPS
                })
                .collect();
            if !fails.contains(&true) {
                return checked;
            }
            // Drop each failing change that moved less than its failing neighbours
            // (the weakest failing one always goes); never two neighbours at once.
            let weaker = |i: usize, j: usize| checked[i].pct < checked[j].pct || (checked[i].pct == checked[j].pct && i < j);
            let drop: Vec<bool> = (0..splits.len())
                .map(|i| {
                    fails[i]
                        && (i == 0 || !fails[i - 1] || weaker(i, i - 1))
                        && (i + 1 == splits.len() || !fails[i + 1] || weaker(i, i + 1))
                })
                .collect();
            let mut i = 0;
            splits.retain(|_| {
                i += 1;
                !drop[i - 1]
            });
            self.refine(&mut splits);
        }
    }
}

/// The series analysed by the rules in the module doc.
pub fn analyse(series: &Series, th: &Thresholds) -> Analysis {
    let received = series.has(Count::ReceivedFrames);
    let (rate, frames_col, bytes_col) =
        if received { ("received", Count::ReceivedFrames, Count::ReceivedBytes) } else { ("sent", Count::SentFrames, Count::SentBytes) };
    let (t, secs): (Vec<f64>, Vec<f64>) = series.times().unzip();
    let frames: Vec<f64> = series.count(frames_col).map(|f| f.unwrap_or(0) as f64).collect();
    let Some(span) = active_rows(&t, &frames, series.trial_span()) else {
        return Analysis {
            rate: rate.to_owned(),
            active_s: 0.0,
            thresholds: *th,
            changes: Vec::new(),
            bucket: None,
            sender_fall: None,
            size_change: None,
            onsets: Vec::new(),
            sentence: format!("no frames {rate} in the series ({} intervals): nothing to analyse", series.len()),
        };
    };
    let (a, b) = span;
    let r = Rates::new(t, secs, frames, span, series.trial_span().filter(|_| received));
    let checked = r.confirm(r.segment(th), th);
    let (lo, hi) = r.interior();
    let (first_mean, last_mean) = if hi > lo {
        (
            Some(checked.first().map_or_else(|| r.level(lo, hi).mean, |c| c.before.mean)),
            Some(checked.last().map_or_else(|| r.level(lo, hi).mean, |c| c.after.mean)),
        )
    } else {
        (None, None)
    };
    let (start, end) = (r.active_start(first_mean), r.active_end(last_mean));
    let changes: Vec<Change> = checked
        .iter()
        .map(|c| Change { at_s: c.at_s, before_pps: c.before.mean, after_pps: c.after.mean, before_s: c.before_s, held_s: c.held_s })
        .collect();
    let onsets = onsets(series, a, b);
    let span = (start, end);
    let size_change = match changes.as_slice() {
        [c] if c.after_pps < c.before_pps => size_change(series, &r, c, bytes_col),
        _ => None,
    };
    let (bucket, sender_fall) = match changes.as_slice() {
        _ if size_change.is_some() => (None, None),
        [c] if c.after_pps < c.before_pps => match sender_fall(series, &r, c, received) {
            Some(fall) if !fall.is_push_back() => (None, Some(fall)),
            _ => (Some(bucket(series, &r, c, span, bytes_col, &onsets)), None),
        },
        [] if received => (r.head_burst(start, end, th).map(|h| head_bucket(series, &r, h, span, bytes_col, &onsets)), None),
        _ => (None, None),
    };
    let mut analysis = Analysis {
        rate: rate.to_owned(),
        active_s: end - start,
        thresholds: *th,
        changes,
        bucket,
        sender_fall,
        size_change,
        onsets,
        sentence: String::new(),
    };
    analysis.sentence = sentence(&analysis, series.interval_s());
    analysis
}

/// Each counter's first tick in rows `a..=b`.
fn onsets(series: &Series, a: usize, b: usize) -> Vec<Onset> {
    let times: Vec<(f64, f64)> = series.times().collect();
    let mut out: Vec<Onset> = series
        .counters()
        .iter()
        .enumerate()
        .filter_map(|(i, (name, _))| {
            let first = series.deltas(i).enumerate().skip(a).take(b + 1 - a).find(|&(_, d)| d > 0)?.0;
            let (t, secs) = times[first];
            Some(Onset { counter: name.clone(), at_s: if first == a { t - secs } else { t } })
        })
        .collect();
    out.sort_by(|x, y| x.at_s.total_cmp(&y.at_s));
    out
}

/// The active span's first and last rows: those holding the trial's first
/// and last frames where the tool said when it saw them (an idle lead-in's
/// or tail's rows, stray kernel frames and all, are left out), else the
/// first and last rows with frames.
fn active_rows(t: &[f64], frames: &[f64], trial: Option<(f64, f64)>) -> Option<(usize, usize)> {
    let first = frames.iter().position(|&f| f > 0.0)?;
    let last = frames.iter().rposition(|&f| f > 0.0)?;
    let Some((f, l)) = trial else { return Some((first, last)) };
    let row_of = |x: f64| t.iter().position(|&end| end >= x - EPS).unwrap_or(t.len() - 1).clamp(first, last);
    // Rows with frames at or after the first mark, at or before the last.
    let a = (row_of(f)..=last).find(|&i| frames[i] > 0.0).unwrap_or(first);
    let b = (a..=row_of(l)).rev().find(|&i| frames[i] > 0.0).unwrap_or(a);
    Some((a, b))
}

/// A sent rate's fall, judged by the sender's own row labels over the
/// lower level's whole intervals (None for a received rate: the receiver
/// sees what the network carried).
fn sender_fall(series: &Series, r: &Rates, c: &Change, received: bool) -> Option<SenderFall> {
    if received {
        return None;
    }
    let labels: Vec<Option<&str>> = series.verdicts().collect();
    let lower: Vec<Option<&str>> = (r.a + 1..r.b).filter(|&i| r.start_of(i) >= c.at_s - EPS).map(|i| labels[i]).collect();
    let count = |want: &str| lower.iter().filter(|l| **l == Some(want)).count() as u32;
    Some(SenderFall {
        intervals: lower.len() as u32,
        pushed_back: count(SENDER_PUSHED_BACK),
        host_stalled: count(SENDER_HOST_STALL),
        labelled: lower.iter().filter(|l| l.is_some()).count() as u32,
    })
}

/// The frames' mean size on each side of `c` over the active span's rows,
/// where bytes were counted and it moved by more than [`SIZE_CHANGE`].
fn size_change(series: &Series, r: &Rates, c: &Change, bytes_col: Count) -> Option<SizeChange> {
    if !series.has(bytes_col) {
        return None;
    }
    let bytes: Vec<f64> = series.count(bytes_col).map(|b| b.unwrap_or(0) as f64).collect();
    let mean_size = |rows: &mut dyn Iterator<Item = usize>| {
        let (b, f) = rows.fold((0.0, 0.0), |(b, f), i| (b + bytes[i], f + r.frames[i]));
        (f > 0.0).then(|| b / f)
    };
    // Whole rows on each side (the one the change falls in is neither's).
    let before = mean_size(&mut (r.a..=r.b).filter(|&i| r.t[i] <= c.at_s + EPS))?;
    let after = mean_size(&mut (r.a..=r.b).filter(|&i| r.start_of(i) >= c.at_s - EPS))?;
    ((after / before - 1.0).abs() > SIZE_CHANGE).then_some(SizeChange { before_bytes: before, after_bytes: after })
}

/// Bytes above the lower level's mean bytes per second over `charged`
/// rows (each charged for its part of `span`), where bytes were counted.
fn bytes_above(series: &Series, r: &Rates, bytes_col: Count, charged: &[usize], lower: &[usize], span: (f64, f64)) -> Option<u64> {
    if !series.has(bytes_col) {
        return None;
    }
    let bytes: Vec<Option<u64>> = series.count(bytes_col).collect();
    let rates: Vec<f64> = lower.iter().filter(|&&i| r.secs[i] > 0.0).filter_map(|&i| bytes[i].map(|v| v as f64 / r.secs[i])).collect();
    let base_bps = if rates.is_empty() { 0.0 } else { rates.iter().sum::<f64>() / rates.len() as f64 };
    let above = charged.iter().map(|&i| (bytes[i].unwrap_or(0) as f64 - base_bps * r.active_secs(i, span.0, span.1)).max(0.0));
    Some(above.sum::<f64>().round() as u64)
}

/// The earliest allowance onset within [`ONSET_NEAR_INTERVALS`] of `at_s`.
fn onset_near(series: &Series, onsets: &[Onset], at_s: f64) -> Option<Onset> {
    let near = ONSET_NEAR_INTERVALS * series.interval_s() + EPS;
    let allowance = |o: &&Onset| series.counters().iter().any(|(n, k)| *n == o.counter && *k == CounterKind::Allowance);
    onsets.iter().filter(allowance).find(|o| (o.at_s - at_s).abs() <= near).cloned()
}

/// The bucket before a fall: each row that starts before the change is
/// charged the baseline only for its part of the active span (the first
/// row from where the trial began in it).
fn bucket(series: &Series, r: &Rates, c: &Change, span: (f64, f64), bytes_col: Count, onsets: &[Onset]) -> Bucket {
    // The lower level's whole rows: after the change, the partial last row left out.
    let lower: Vec<usize> = (r.a + 1..r.b).filter(|&i| r.start_of(i) >= c.at_s - EPS).collect();
    let baseline = match r.lower_rate(&lower, span.1) {
        b if b > 0.0 => b,
        _ => c.after_pps,
    };
    let before: Vec<usize> = (r.a..=r.b).filter(|&i| r.start_of(i) < c.at_s - EPS).collect();
    let frames_above: f64 = before.iter().map(|&i| (r.frames[i] - baseline * r.active_secs(i, span.0, span.1)).max(0.0)).sum();
    Bucket {
        burst_pps: c.before_pps,
        burst_s: c.at_s - span.0,
        baseline_pps: baseline,
        frames_above: frames_above.round() as u64,
        bytes_above: bytes_above(series, r, bytes_col, &before, &lower, span),
        onset: onset_near(series, onsets, c.at_s),
        resolved: true,
        at_least: false,
    }
}

/// A burst within the active span's first two rows ([`Rates::head_burst`]).
fn head_bucket(series: &Series, r: &Rates, head: (f64, Level, f64, f64), span: (f64, f64), bytes_col: Count, onsets: &[Onset]) -> Bucket {
    let (above, level, rate, secs) = head;
    let (lo, hi) = r.interior();
    let lower: Vec<usize> = (lo + 1..hi).collect();
    let (baseline, above) = match r.lower_rate(&lower, span.1) {
        b if b > 0.0 => (b, (rate - b) * secs),
        _ => (level.mean, above),
    };
    Bucket {
        burst_pps: rate,
        burst_s: secs,
        baseline_pps: baseline,
        frames_above: above.max(0.0).round() as u64,
        bytes_above: bytes_above(series, r, bytes_col, &[r.a, lo], &lower, span),
        onset: onset_near(series, onsets, r.t[lo]),
        resolved: false,
        at_least: r.trial.is_none(),
    }
}

/// Seconds, minutes or hours, as fits.
pub fn fmt_duration(s: f64) -> String {
    if s.abs() < 600.0 {
        format!("{s:.1} s")
    } else if s.abs() < 10_800.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.2} h", s / 3600.0)
    }
}

fn mpps(pps: f64) -> String {
    format!("{:.3}", pps / 1e6)
}

fn scaled(v: f64, units: &[(f64, &str)], base: &str) -> String {
    for &(div, unit) in units.iter().rev() {
        if v >= div {
            let x = v / div;
            return if x >= 10.0 { format!("{x:.0} {unit}") } else { format!("{x:.1} {unit}") };
        }
    }
    format!("{v:.0} {base}")
}

/// "86 k frames", "450 M frames".
pub fn fmt_frames(n: u64) -> String {
    scaled(n as f64, &[(1e3, "k frames"), (1e6, "M frames"), (1e9, "G frames")], "frames")
}

/// "44.0 MB" (decimal units).
pub fn fmt_bytes(n: u64) -> String {
    let v = n as f64;
    for (div, unit) in [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")] {
        if v >= div {
            return format!("{:.1} {unit}", v / div);
        }
    }
    format!("{n} B")
}

/// "received rate moved from 0.020 to 0.030 Mpps at 20.4 s and held 39.6 s".
fn moved(rate: &str, c: &Change) -> String {
    format!(
        "{rate} rate moved from {} to {} Mpps at {} and held {}",
        mpps(c.before_pps),
        mpps(c.after_pps),
        fmt_duration(c.at_s),
        fmt_duration(c.held_s)
    )
}

/// A burst shorter than the rows resolve: sized, and said to be unresolved.
fn head_sentence(a: &Analysis, b: &Bucket, interval_s: f64) -> String {
    let bytes = b.bytes_above.map(|v| format!(" ({})", fmt_bytes(v))).unwrap_or_default();
    let (size, start) = if b.at_least {
        ("at least", "; where in its first interval the trial began is not known, so that interval was charged a whole one")
    } else {
        ("about", "")
    };
    format!(
        "{rate} {} Mpps over the trial's first {} (its first two intervals), then {} Mpps (baseline) to the end ({}): \
         those intervals carried {size} {}{bytes} above baseline, a credit bucket whose burst was too short for {interval_s} s \
         intervals to resolve (its rate and length are not measured: give a shorter --interval to see them){start}",
        mpps(b.burst_pps),
        fmt_duration(b.burst_s),
        mpps(b.baseline_pps),
        fmt_duration(a.active_s - b.burst_s),
        fmt_frames(b.frames_above),
        rate = &a.rate,
    )
}

/// Why a fall in the sender's own rate is not a credit bucket, naming the
/// host where its lanes stood still.
fn fall_cause(f: &SenderFall) -> String {
    let n = f.intervals;
    if f.labelled == 0 {
        return "not read as a credit bucket: the sender's series does not say whether its queue pushed back, and a fall in what \
                the sender itself sent is no evidence of the network's (read the receiver's series)"
            .to_string();
    }
    if f.is_host() {
        return format!(
            "the host, not a credit bucket: the sending lanes stood still (descheduled by their host, or its hypervisor's steal) \
             in {} of the {n} intervals after the fall, and the queue pushed back in {}",
            f.host_stalled, f.pushed_back
        );
    }
    format!(
        "not a credit bucket: the sender's queue pushed back in only {} of the {n} intervals after the fall (its lanes stood \
         still in {}), so the sender itself sent less, not the network",
        f.pushed_back, f.host_stalled
    )
}

/// The most changes a sentence lists one by one.
const LISTED: usize = 8;

fn sentence(a: &Analysis, interval_s: f64) -> String {
    let rate = a.rate.as_str();
    let mut s = match (&a.bucket, &a.sender_fall, a.changes.first()) {
        (Some(b), _, Some(c)) if b.resolved => {
            let bytes = b.bytes_above.map(|v| format!(" ({})", fmt_bytes(v))).unwrap_or_default();
            format!(
                "{rate} {} Mpps for {}, then {} Mpps (baseline) to the end ({}); the bucket held about {}{bytes} above baseline",
                mpps(b.burst_pps),
                fmt_duration(b.burst_s),
                mpps(b.baseline_pps),
                fmt_duration(c.held_s),
                fmt_frames(b.frames_above),
            )
        }
        (Some(b), _, _) => head_sentence(a, b, interval_s),
        (None, Some(f), Some(c)) => format!("{}: {}", moved(rate, c), fall_cause(f)),
        (None, None, Some(c)) if a.size_change.is_some() => {
            let z = a.size_change.as_ref().expect("matched");
            format!(
                "{}, as the frames' mean size went from {:.0} B to {:.0} B: the traffic changed there, so this is not read as a credit bucket",
                moved(rate, c),
                z.before_bytes,
                z.after_bytes
            )
        }
        _ if !a.changes.is_empty() => {
            let mut parts: Vec<String> = a.changes.iter().take(LISTED).map(|c| moved(rate, c)).collect();
            if a.changes.len() > LISTED {
                parts.push(format!("and {} more changes", a.changes.len() - LISTED));
            }
            parts.join("; ")
        }
        _ => format!(
            "no change in the {rate} rate over {} (intervals of {interval_s} s; a change is {}% or more, held {} s or more, beyond the noise)",
            fmt_duration(a.active_s),
            a.thresholds.min_change_pct,
            a.thresholds.min_hold_s,
        ),
    };
    // The bucket's own onset first, then the others by time.
    let own = a.bucket.as_ref().and_then(|b| b.onset.as_ref());
    let onsets: Vec<&Onset> = own.into_iter().chain(a.onsets.iter().filter(|o| Some(*o) != own)).collect();
    for o in onsets.iter().take(LISTED) {
        s.push_str(&format!("; {} began at {}", o.counter, fmt_duration(o.at_s)));
    }
    if onsets.len() > LISTED {
        s.push_str(&format!("; {} more counters began to tick", onsets.len() - LISTED));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Row;
    use crate::synth::{Noise, Shape};

    fn near(got: f64, want: f64, frac: f64) -> bool {
        (got - want).abs() <= want.abs() * frac
    }

    /// The tbf-shaped run of the issue: 40 000 frames/s of 512 B for 2.3 s,
    /// then 4 921 frames/s for 7.7 s.
    fn tbf(seed: u64, offset_s: f64) -> Shape {
        let mut s = Shape::new(&[(40_000.0, 2.3), (4921.0, 7.7)]);
        (s.seed, s.offset_s, s.allowance_from) = (seed, offset_s, Some(offset_s + 2.3));
        s
    }

    #[test]
    fn a_token_bucket_is_found_and_sized() {
        for offset_s in [0.05, 0.4, 0.9] {
            for seed in 1..=10 {
                let shape = tbf(seed, offset_s);
                let a = analyse(&shape.series(Series::DEFAULT_MAX_ROWS), &Thresholds::default());
                let ctx = format!("offset {offset_s}, seed {seed}: {a:?}");
                assert_eq!(a.rate, "received");
                let b = a.bucket.as_ref().unwrap_or_else(|| panic!("no bucket: {ctx}"));
                assert!(near(b.baseline_pps, 4921.0, 0.05), "{ctx}");
                assert!(near(b.burst_pps, 40_000.0, 0.05), "{ctx}");
                assert!((b.burst_s - 2.3).abs() < 0.25, "{ctx}");
                assert!((a.changes[0].at_s - (offset_s + 2.3)).abs() < 0.25, "{ctx}");
                assert!((a.active_s - 10.0).abs() < 0.3, "{ctx}");
                // 40 MB sent in the burst, less what the baseline carried in that time.
                let true_above = (40_000.0 - 4921.0) * 2.3;
                assert!(near(b.frames_above as f64, true_above, 0.10), "{ctx}");
                assert!(near(b.bytes_above.unwrap() as f64, true_above * 512.0, 0.10), "{ctx}");
                let onset = b.onset.as_ref().unwrap_or_else(|| panic!("no onset: {ctx}"));
                assert_eq!(onset.counter, "pps_allowance_exceeded");
                assert!(a.sentence.starts_with("received 0.0") && a.sentence.contains(" Mpps for 2."), "{ctx}");
                assert!(a.sentence.contains(", then 0.005 Mpps (baseline) to the end (7."), "{ctx}");
                assert!(a.sentence.contains(" k frames (") && a.sentence.contains(" MB) above baseline"), "{ctx}");
                assert!(a.sentence.contains("; pps_allowance_exceeded began at "), "{ctx}");
            }
        }
    }

    #[test]
    fn a_fall_that_came_with_larger_frames_is_no_bucket() {
        // 64 B frames, then 512 B frames at an eighth of the rate: the same
        // bytes per second (a bandwidth-bound path), so "k frames (0 B)
        // above baseline" was once reported as a bucket.
        let mut shape = tbf(3, 0.4);
        shape.levels = vec![(40_000.0, 2.3), (5_000.0, 7.7)];
        let mut series = Series::new(shape.iv, crate::synth::counters(), Series::DEFAULT_MAX_ROWS);
        let fall_at = shape.offset_s + 2.3;
        for mut row in shape.rows() {
            // Rows wholly after the fall carry 512 B frames; before, 64 B;
            // the one it falls in, each level's share.
            let (t0, t1) = (row.t_s - row.secs, row.t_s);
            let big = shape.frames_between(t0.max(fall_at), t1.max(fall_at));
            let frames = row.received_frames.unwrap() as f64;
            let small = (frames - big).max(0.0);
            row.received_bytes = Some((small * 64.0 + big.min(frames) * 512.0).round() as u64);
            row.sent_bytes = row.received_bytes;
            series.push(row);
        }
        let a = analyse(&series, &Thresholds::default());
        assert_eq!(a.changes.len(), 1, "{a:?}");
        assert!(a.bucket.is_none(), "a change of traffic read as a bucket: {a:?}");
        let z = a.size_change.as_ref().expect("the size change named");
        assert!(near(z.before_bytes, 64.0, 0.02) && near(z.after_bytes, 512.0, 0.02), "{z:?}");
        assert!(
            a.sentence.contains("as the frames' mean size went from 64 B to 51") && a.sentence.contains("not read as a credit bucket"),
            "{}",
            a.sentence
        );
        // The same fall at one frame size stays a bucket.
        assert!(analyse(&tbf(3, 0.4).series(Series::DEFAULT_MAX_ROWS), &Thresholds::default()).bucket.is_some());
    }

    #[test]
    fn the_example_sentence() {
        let mut shape = tbf(3, 0.4);
        shape.noise = Noise::Uniform(0.0);
        let a = analyse(&shape.series(1000), &Thresholds::default());
        // 0.6 s of burst in the first interval, a whole one, 0.7 s in the third:
        // 24 000 + 40 000 + 29 476 frames, less 4 921 a second of baseline for
        // each second of traffic (0.6 s in the first): (40 000 - 4 921) x 2.3 s.
        assert_eq!(a.bucket.as_ref().unwrap().frames_above, 80_681);
        assert_eq!(
            a.sentence,
            "received 0.040 Mpps for 2.3 s, then 0.005 Mpps (baseline) to the end (7.7 s); the bucket held about 81 k frames \
             (41.3 MB) above baseline; pps_allowance_exceeded began at 3.0 s"
        );
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["bucket"]["frames_above"], 80_681);
        assert_eq!(json["thresholds"]["min_change_pct"], 20.0);
        assert_eq!(json["rate"], "received");
        let schema = serde_json::to_value(schemars::schema_for!(Analysis)).unwrap();
        assert!(schema["properties"]["changes"].is_object(), "{schema}");
        assert_eq!(fmt_frames(86_123), "86 k frames");
        assert_eq!(fmt_frames(450_000_000), "450 M frames");
        assert_eq!(fmt_frames(1_500_000), "1.5 M frames");
        assert_eq!(fmt_frames(12), "12 frames");
        assert_eq!(fmt_bytes(44_040_000), "44.0 MB");
        assert_eq!(fmt_bytes(2_500_000_000), "2.5 GB");
        assert_eq!(fmt_duration(312.0), "312.0 s");
        assert_eq!(fmt_duration(3600.0), "60.0 min");
        assert_eq!(fmt_duration(86_400.0), "24.00 h");
    }

    /// The tbf runs: 1000 B frames at 20 kpps into tbf 50mbit with a
    /// 20 MiB bucket (6 275 frames/s of 996 B; 21 053 frames above baseline),
    /// and 100mbit with 5 MiB (12 550 frames/s; 5 264 frames above: 0.71 s
    /// of burst, shorter than an interval). Bursts end when the bucket does.
    const TBF50: (f64, f64) = (6275.0, 21_053.0);
    const TBF100: (f64, f64) = (12_550.0, 5264.0);

    fn tbf_run((baseline, above): (f64, f64), offset_s: f64, seed: u64) -> Shape {
        let burst_s = above / (20_000.0 - baseline);
        let mut s = Shape::new(&[(20_000.0, burst_s), (baseline, 12.0 - burst_s)]);
        (s.offset_s, s.seed, s.noise, s.frame_bytes) = (offset_s, seed, Noise::Uniform(0.005), 1000);
        s
    }

    #[test]
    fn the_partial_first_interval_is_charged_baseline_only_for_its_traffic() {
        for marks in [false, true] {
            for offset_s in [0.05, 0.3, 0.6, 0.9, 0.97] {
                let mut shape = tbf_run(TBF50, offset_s, 3);
                shape.marks = marks;
                let a = analyse(&shape.series(100), &Thresholds::default());
                let ctx = format!("marks {marks}, offset {offset_s}: {a:?}");
                let b = a.bucket.as_ref().unwrap_or_else(|| panic!("no bucket: {ctx}"));
                assert!(b.resolved && !b.at_least, "{ctx}");
                assert!(near(b.baseline_pps, TBF50.0, 0.02), "{ctx}");
                assert!(near(b.frames_above as f64, TBF50.1, 0.05), "{} vs {}: {ctx}", b.frames_above, TBF50.1);
            }
        }
    }

    #[test]
    fn a_burst_shorter_than_an_interval_is_sized_not_called_no_change() {
        for offset_s in [0.02, 0.2, 0.5, 0.8, 0.95] {
            let mut shape = tbf_run(TBF100, offset_s, 5);
            shape.marks = true;
            let a = analyse(&shape.series(100), &Thresholds::default());
            let ctx = format!("offset {offset_s}: {a:?}");
            let b = a.bucket.as_ref().unwrap_or_else(|| panic!("no bucket: {ctx}"));
            assert!(near(b.frames_above as f64, TBF100.1, 0.05), "{} vs {}: {ctx}", b.frames_above, TBF100.1);
            assert!(near(b.baseline_pps, TBF100.0, 0.02), "{ctx}");
            assert!(!a.sentence.starts_with("no change"), "{ctx}");
            if !b.resolved {
                assert!(!b.at_least && a.changes.is_empty(), "{ctx}");
                assert!(a.sentence.contains(" k frames (5.") && a.sentence.contains("give a shorter --interval"), "{}", a.sentence);
            }
        }
        // Not told where the trial began: the least it held, said so.
        let a = analyse(&tbf_run(TBF100, 0.1, 5).series(100), &Thresholds::default());
        let b = a.bucket.as_ref().unwrap_or_else(|| panic!("{a:?}"));
        assert!(b.at_least && !b.resolved && (b.frames_above as f64) < TBF100.1 * 1.05, "{a:?}");
        assert!(a.sentence.contains("carried at least ") && a.sentence.contains("not known"), "{}", a.sentence);
        // A steady run with its marks: no burst read into its first intervals.
        for seed in 1..=20 {
            let mut s = Shape::new(&[(20_000.0, 12.0)]);
            (s.seed, s.offset_s, s.marks) = (seed, 0.05 * seed as f64 - 0.04, true);
            let a = analyse(&s.series(100), &Thresholds::default());
            assert!(a.bucket.is_none() && a.sentence.starts_with("no change"), "seed {seed}: {a:?}");
        }
    }

    /// A real tbf 100mbit / 5 MiB run of tests/long_run.rs (drop's rows on
    /// this 2-core machine, 2026-12-04): 3 s idle, the trial from 3.214 s
    /// to 9.262 s.
    const TBF100_RUN: [(f64, f64, u64); 12] = [
        (1.005883, 1.005883, 0),
        (2.002301, 0.996418, 0),
        (3.002339, 1.000038, 0),
        (4.009728, 1.007389, 15300),
        (5.000471, 0.990743, 12434),
        (6.007703, 1.007232, 11411),
        (7.008038, 1.000334, 13785),
        (8.009173, 1.001135, 12564),
        (9.006219, 0.997046, 12513),
        (10.000603, 0.994385, 3113),
        (11.007075, 1.006471, 0),
        (12.003360, 0.996285, 0),
    ];

    fn real_run(rows: &[(f64, f64, u64)], trial: (f64, f64)) -> Series {
        let mut s = Series::new(1.0, Vec::new(), 100);
        for &(t_s, secs, frames) in rows {
            s.push(Row { t_s, secs, received_frames: Some(frames), ..Row::default() });
        }
        s.trial_frames_at(trial.0);
        s.trial_frames_at(trial.1);
        s
    }

    #[test]
    fn a_host_that_moves_frames_across_row_edges_neither_hides_nor_grows_a_bucket() {
        // drop held back in one row and catching up in the next (11 411,
        // then 13 785): the level's spread grew past the two head rows' test;
        // the first row alone carried the burst beyond the noise.
        let trial = (3.214271, 3.214271 + 6.047986);
        let a = analyse(&real_run(&TBF100_RUN, trial), &Thresholds::default());
        let b = a.bucket.as_ref().unwrap_or_else(|| panic!("no bucket: {a:?}"));
        assert!(near(b.frames_above as f64, TBF100.1, 0.05) && near(b.baseline_pps, TBF100.0, 0.02), "{a:?}");
        // The same run with 1200 frames of the last whole row moved into the
        // partial last one (drop held back at the end): the baseline counts
        // them, and the bucket is not credited with 1.8 s of a low baseline.
        let mut moved = TBF100_RUN;
        (moved[8].2, moved[9].2) = (moved[8].2 - 1200, moved[9].2 + 1200);
        let a = analyse(&real_run(&moved, trial), &Thresholds::default());
        let b = a.bucket.as_ref().unwrap_or_else(|| panic!("no bucket: {a:?}"));
        assert!(near(b.frames_above as f64, TBF100.1, 0.05) && near(b.baseline_pps, TBF100.0, 0.02), "{a:?}");
        // Another run whose last frame was marked 94 ms late (3305 frames in
        // the partial row's 0.357 s): the whole rows stand.
        let late = [
            (1.005766, 1.005766, 0),
            (2.002609, 0.996843, 0),
            (3.003275, 1.000666, 0),
            (4.001119, 0.997844, 15053),
            (5.004798, 1.003680, 12597),
            (6.005953, 1.001154, 12564),
            (7.003839, 0.997887, 12524),
            (8.009097, 1.005257, 12616),
            (9.007076, 0.997979, 12525),
            (10.008628, 1.001552, 3305),
            (11.000372, 0.991744, 0),
        ];
        let a = analyse(&real_run(&late, (3.225361, 9.363986)), &Thresholds::default());
        let b = a.bucket.as_ref().unwrap_or_else(|| panic!("no bucket: {a:?}"));
        assert!(near(b.frames_above as f64, TBF100.1, 0.05) && near(b.baseline_pps, TBF100.0, 0.02), "{a:?}");
        // Nothing moved and no burst: the same rows at the level, no bucket.
        let mut steady = TBF100_RUN;
        steady[3].2 = 12_550 * 795 / 1000;
        let a = analyse(&real_run(&steady, trial), &Thresholds::default());
        assert!(a.bucket.is_none() && a.sentence.starts_with("no change"), "{a:?}");
    }

    #[test]
    fn an_idle_lead_in_with_stray_frames_is_not_the_trial() {
        // drop started 3 s before blast: a few stray kernel frames a second
        // before the trial and after it.
        for offset_s in [0.1, 0.5, 0.9] {
            let mut shape = tbf_run(TBF50, 3.0 + offset_s, 7);
            shape.marks = true;
            let mut s = Series::new(1.0, crate::synth::counters(), 100);
            for mut row in shape.rows() {
                if row.t_s <= 3.0 {
                    row.received_frames = Some(2 + row.t_s as u64 % 3);
                }
                s.push(row);
            }
            for t in 17..=19 {
                s.push(Row { t_s: t as f64, secs: 1.0, received_frames: Some(3), counters: vec![0, 0], ..Row::default() });
            }
            s.trial_frames_at(shape.offset_s);
            s.trial_frames_at(shape.end_s());
            let a = analyse(&s, &Thresholds::default());
            let ctx = format!("offset {offset_s}: {a:?}");
            let b = a.bucket.as_ref().unwrap_or_else(|| panic!("no bucket: {ctx}"));
            assert!(near(b.frames_above as f64, TBF50.1, 0.05), "{} vs {}: {ctx}", b.frames_above, TBF50.1);
            assert!(near(b.burst_pps, 20_000.0, 0.35) && near(b.baseline_pps, TBF50.0, 0.02), "{ctx}");
            assert!((a.active_s - 12.0).abs() < 0.05, "{ctx}");
            assert!(a.sentence.starts_with("received 0.0") && !a.sentence.contains("0.000"), "{}", a.sentence);
        }
    }

    #[test]
    fn a_sender_slowed_by_its_host_is_not_a_bucket() {
        // blast's own series on a loaded host: 1.813 Mpps, then 0.940 with its
        // lanes descheduled in every interval after the fall.
        let mut shape = Shape::new(&[(1.813e6, 8.0), (0.940e6, 12.0)]);
        (shape.received, shape.label_from, shape.seed) = (false, Some((8.4, SENDER_HOST_STALL)), 9);
        let a = analyse(&shape.series(100), &Thresholds::default());
        assert_eq!(a.rate, "sent");
        assert!(a.bucket.is_none(), "{a:?}");
        assert_eq!(a.changes.len(), 1, "the fall is still a change: {a:?}");
        let f = a.sender_fall.as_ref().unwrap_or_else(|| panic!("{a:?}"));
        assert_eq!((f.host_stalled, f.pushed_back), (f.intervals, 0), "{a:?}");
        assert!(
            a.sentence.starts_with("sent rate moved from 1.813 to 0.940 Mpps at 8.")
                && a.sentence.contains(": the host, not a credit bucket: the sending lanes stood still"),
            "{}",
            a.sentence
        );
        assert!(!a.sentence.contains("(baseline)"), "{}", a.sentence);
        // No labels (an older record): no bucket either, and it says why.
        shape.label_from = None;
        let a = analyse(&shape.series(100), &Thresholds::default());
        assert!(a.bucket.is_none() && a.sentence.contains("does not say whether its queue pushed back"), "{}", a.sentence);
        // Pushed back by the path after the fall: a bucket.
        shape.label_from = Some((8.4, SENDER_PUSHED_BACK));
        let a = analyse(&shape.series(100), &Thresholds::default());
        assert!(a.bucket.is_some() && a.sender_fall.is_none(), "{a:?}");
    }

    #[test]
    fn steady_noisy_runs_give_no_change() {
        let mut runs = 0;
        for noise in [Noise::Uniform(0.02), Noise::Uniform(0.05), Noise::Uniform(0.10), Noise::Gauss(0.03), Noise::Gauss(0.05)] {
            for seed in 1..=25 {
                let mut s = Shape::new(&[(100_000.0, 60.0)]);
                (s.noise, s.seed, s.offset_s) = (noise, seed, 0.1 + 0.03 * seed as f64);
                let a = analyse(&s.series(Series::DEFAULT_MAX_ROWS), &Thresholds::default());
                assert!(a.changes.is_empty() && a.bucket.is_none(), "seed {seed}: {a:?}");
                assert!(a.sentence.starts_with("no change in the received rate over "), "{}", a.sentence);
                assert!(
                    a.sentence.ends_with(" s (intervals of 1 s; a change is 20% or more, held 3 s or more, beyond the noise)"),
                    "{}",
                    a.sentence
                );
                assert!((a.active_s - 60.0).abs() < 0.3, "{a:?}");
                runs += 1;
            }
        }
        assert_eq!(runs, 125);
    }

    #[test]
    fn a_rise_is_a_change_not_a_bucket() {
        let mut s = Shape::new(&[(20_000.0, 20.0), (30_000.0, 40.0)]);
        s.seed = 7;
        let a = analyse(&s.series(100), &Thresholds::default());
        assert!(a.bucket.is_none(), "{a:?}");
        let [c] = a.changes.as_slice() else { panic!("{a:?}") };
        assert!(near(c.before_pps, 20_000.0, 0.02) && near(c.after_pps, 30_000.0, 0.02), "{a:?}");
        assert!((c.at_s - 20.4).abs() < 0.3 && (c.held_s - 40.0).abs() < 0.3 && (c.before_s - 20.0).abs() < 0.3, "{a:?}");
        assert!(a.sentence.starts_with("received rate moved from 0.020 to 0.030 Mpps at 20."), "{}", a.sentence);
        assert!(a.sentence.contains(" s and held 39.") || a.sentence.contains(" s and held 40."), "{}", a.sentence);
    }

    #[test]
    fn two_changes_and_a_short_excursion() {
        let mut s = Shape::new(&[(30_000.0, 20.0), (60_000.0, 20.0), (15_000.0, 20.0)]);
        s.seed = 11;
        let a = analyse(&s.series(100), &Thresholds::default());
        assert!(a.bucket.is_none(), "{a:?}");
        let [c1, c2] = a.changes.as_slice() else { panic!("{a:?}") };
        assert!((c1.at_s - 20.4).abs() < 0.3 && (c2.at_s - 40.4).abs() < 0.3, "{a:?}");
        assert!(near(c2.after_pps, 15_000.0, 0.02), "{a:?}");
        assert_eq!(a.sentence.matches("received rate moved from").count(), 2, "{}", a.sentence);

        // Up for 5 s, then back: two changes, though neither half alone moved 20%.
        let mut s = Shape::new(&[(30_000.0, 25.0), (60_000.0, 5.0), (30_000.0, 30.0)]);
        s.seed = 5;
        let a = analyse(&s.series(100), &Thresholds::default());
        assert_eq!(a.changes.len(), 2, "{a:?}");
        assert!((a.changes[0].held_s - 5.0).abs() < 0.3, "{a:?}");

        // Up for 2 s only: held less than 3 s, no change.
        let mut s = Shape::new(&[(30_000.0, 25.0), (60_000.0, 2.0), (30_000.0, 30.0)]);
        s.seed = 5;
        let a = analyse(&s.series(100), &Thresholds::default());
        assert!(a.changes.is_empty(), "{a:?}");
    }

    #[test]
    fn thresholds_are_obeyed() {
        // A 15% fall, well beyond the noise: a change at 10%, none at 20%.
        let mut s = Shape::new(&[(100_000.0, 30.0), (85_000.0, 30.0)]);
        s.noise = Noise::Uniform(0.01);
        let series = s.series(100);
        assert!(analyse(&series, &Thresholds::default()).changes.is_empty());
        let a = analyse(&series, &Thresholds { min_change_pct: 10.0, min_hold_s: 3.0 });
        assert_eq!(a.changes.len(), 1, "{a:?}");
        assert!(a.bucket.is_some());
        // A fall held 5 s: a change with the default hold, none with 10 s.
        let s = Shape::new(&[(100_000.0, 30.0), (50_000.0, 5.0)]);
        let series = s.series(100);
        assert_eq!(analyse(&series, &Thresholds::default()).changes.len(), 1);
        assert!(analyse(&series, &Thresholds { min_change_pct: 20.0, min_hold_s: 10.0 }).changes.is_empty());
    }

    #[test]
    fn only_sent_figures() {
        let mut s = tbf(2, 0.4);
        (s.received, s.label_from) = (false, Some((2.7, SENDER_PUSHED_BACK)));
        let a = analyse(&s.series(100), &Thresholds::default());
        assert_eq!(a.rate, "sent");
        let b = a.bucket.as_ref().expect("a bucket in the sent figures");
        assert!(near(b.baseline_pps, 4921.0, 0.05), "{a:?}");
        assert!(a.sentence.starts_with("sent 0.040 Mpps for 2.3 s"), "{}", a.sentence);
    }

    #[test]
    fn empty_and_idle_series() {
        let a = analyse(&Series::new(1.0, vec![], 10), &Thresholds::default());
        assert_eq!((a.active_s, a.changes.len(), a.bucket.is_none()), (0.0, 0, true));
        assert_eq!(a.sentence, "no frames sent in the series (0 intervals): nothing to analyse");
        let mut s = Series::new(1.0, vec![], 10);
        for t in 1..=5 {
            s.push(Row { t_s: t as f64, secs: 1.0, received_frames: Some(0), ..Row::default() });
        }
        assert_eq!(analyse(&s, &Thresholds::default()).sentence, "no frames received in the series (5 intervals): nothing to analyse");
        // One or two intervals with frames: both partial, no level, no change.
        let mut s = Series::new(1.0, vec![], 10);
        s.push(Row { t_s: 1.0, secs: 1.0, received_frames: Some(10), ..Row::default() });
        s.push(Row { t_s: 2.0, secs: 1.0, received_frames: Some(4), ..Row::default() });
        let a = analyse(&s, &Thresholds::default());
        assert!(a.changes.is_empty());
        assert_eq!(a.active_s, 2.0);
    }

    #[test]
    fn onsets_of_each_counter() {
        let counters = vec![
            ("pps_allowance_exceeded".to_string(), CounterKind::Allowance),
            ("bw_out_allowance_exceeded".to_string(), CounterKind::Allowance),
            ("rx_missed_errors".to_string(), CounterKind::Watched),
            ("never".to_string(), CounterKind::Watched),
        ];
        let mut s = Series::new(1.0, counters, 100);
        // Idle for 2 s (a counter ticking there does not count), then 10 s of traffic.
        for t in 1..=12u64 {
            let active = t > 2;
            let c = vec![u64::from(t >= 6), u64::from(active || t == 1), u64::from(t == 1 || t >= 9), 0];
            s.push(Row { t_s: t as f64, secs: 1.0, received_frames: Some(if active { 1000 } else { 0 }), counters: c, ..Row::default() });
        }
        let a = analyse(&s, &Thresholds::default());
        let got: Vec<(&str, f64)> = a.onsets.iter().map(|o| (o.counter.as_str(), o.at_s)).collect();
        // Ticking from the span's first interval: that interval's start (2 s).
        assert_eq!(got, [("bw_out_allowance_exceeded", 2.0), ("pps_allowance_exceeded", 6.0), ("rx_missed_errors", 9.0)]);
        assert!(
            a.sentence.ends_with(
                "; bw_out_allowance_exceeded began at 2.0 s; pps_allowance_exceeded began at 6.0 s; rx_missed_errors began at 9.0 s"
            ),
            "{}",
            a.sentence
        );
    }

    /// 2 Mpps for 6 h, then 1 Mpps for the rest of a day, pushed a row at a
    /// time into a day's rows and into 1000.
    #[test]
    fn a_day_in_bounded_memory() {
        let mut shape = Shape::new(&[(2.0e6, 6.0 * 3600.0), (1.0e6, 18.0 * 3600.0 - 1.0)]);
        (shape.noise, shape.allowance_from) = (Noise::Uniform(0.02), Some(6.0 * 3600.0 + 0.4));
        for (max_rows, merges) in [(Series::DEFAULT_MAX_ROWS, 0), (1000, 7)] {
            let series = shape.series(max_rows);
            assert_eq!(series.merges(), merges);
            assert!(series.len() <= max_rows);
            assert_eq!(series.interval_s(), f64::from(1u32 << merges));
            let bound = max_rows * Series::bytes_per_row(2) + 1024;
            assert!(series.heap_bytes() <= bound, "{} > {bound}", series.heap_bytes());
            let total: u64 = series.count(Count::ReceivedFrames).flatten().sum();
            let want = shape.rows().map(|r| r.received_frames.unwrap()).sum::<u64>();
            assert_eq!(total, want, "merging keeps every frame");
            let a = analyse(&series, &Thresholds::default());
            let ctx = format!("max_rows {max_rows}: {a:?}");
            let b = a.bucket.as_ref().unwrap_or_else(|| panic!("{ctx}"));
            assert!(near(b.baseline_pps, 1.0e6, 0.01) && near(b.burst_pps, 2.0e6, 0.01), "{ctx}");
            assert!((a.changes[0].at_s - 21_600.4).abs() <= series.interval_s(), "{ctx}");
            assert!(near(b.frames_above as f64, 1.0e6 * 21_600.0, 0.02), "{ctx}");
            assert_eq!(b.onset.as_ref().map(|o| o.counter.as_str()), Some("pps_allowance_exceeded"), "{ctx}");
            assert!(a.sentence.starts_with("received 2.000 Mpps for 6.00 h, then 1.000 Mpps (baseline) to the end (18.00 h)"), "{ctx}");
        }
    }

    #[test]
    fn a_steady_day_gives_no_change() {
        let mut shape = Shape::new(&[(1.0e6, 86_000.0)]);
        shape.noise = Noise::Uniform(0.05);
        for max_rows in [Series::DEFAULT_MAX_ROWS, 1000] {
            let a = analyse(&shape.series(max_rows), &Thresholds::default());
            assert!(a.changes.is_empty(), "{a:?}");
            assert!(a.sentence.starts_with("no change in the received rate over 23.89 h"), "{}", a.sentence);
        }
    }
}
