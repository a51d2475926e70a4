//! Per-stream sequence accounting at the receiver: how many frames were
//! lost, reordered or duplicated, from the 32-bit sequence numbers in the
//! probe headers.
//!
//! Each stream keeps the next sequence number it expects and a ring of the
//! last [`WINDOW`] sequence numbers, so a late frame can be told from a
//! duplicate. A frame older than the window is counted `late`: it arrived,
//! but whether it was a duplicate or a reordered frame can no longer be said,
//! and it does not reduce `lost`.
//!
//! `lost` counts gaps behind the newest frame seen, from the first frame
//! that arrived: a stream's first arrival is its baseline, because a sender
//! continues each stream's numbering across a ladder's steps while the
//! receiver may restart in between. Frames lost before the first arrival or
//! after the last are invisible to the receiver alone: comparing with the
//! sender's count per stream closes that gap.
//!
//! Every frame also names its sender's run (a random id per sender
//! process). A stream that arrives with another run id than before is a new
//! sender's stream that happens to have the same id: it starts afresh from
//! that frame (counted in `restarts`), so a receiver that serves run after
//! run counts no duplicates or late frames that are only the next run's
//! numbering starting over.
//!
//! Run [`NO_RUN`] (0) is a sender that could not write a run id: the
//! kernel's UDP stack builds the socket path's datagrams and writes its own
//! count into the field (wire's "BDPK" probes). Such a stream cannot tell
//! a new run by its id; it is told by its numbering starting over instead: a
//! frame numbered below [`WINDOW`] that arrives more than a window behind the
//! newest, or a frame numbered 0 that was already seen, starts the stream
//! afresh (a `restart`), where it would otherwise count the new run's
//! frames late or duplicated.

use serde::{Deserialize, Serialize};

pub mod blocks;
pub mod trial;
pub mod unaccounted;
pub use blocks::{block_of, BlockCounts, GROUP_STREAM_SPACE, STREAM_BLOCK, STREAM_BLOCKS};
pub use trial::{AccountingError, StreamAccount, StreamEdge, TrialAccount, TrialCounts, MAX_EDGE_STREAMS};
pub use unaccounted::{EdgeNames, NoExactAccount};

/// Sequence numbers remembered per stream.
pub const WINDOW: u64 = 1024;
/// The run of frames whose sender wrote no run id (see the crate's doc).
pub const NO_RUN: u16 = 0;
const WORDS: usize = (WINDOW / 64) as usize;

/// Counts for one stream, or summed over many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeqCounts {
    pub received: u64,
    /// Gaps in the sequence numbers behind the newest frame, less the late
    /// fills: an estimate (frames lost before a stream's first arrival or
    /// after its last are not seen; gaps the warm-up left count in the
    /// window where they were noticed). With a sender's counts, the exact
    /// figure is [`TrialAccount::lost`].
    #[serde(rename = "lost_estimate", alias = "lost")]
    pub lost: u64,
    pub reordered: u64,
    pub duplicates: u64,
    pub late: u64,
    /// Times a stream started afresh because a frame named another sender run.
    #[serde(default)]
    pub restarts: u64,
}

impl SeqCounts {
    pub fn add(&mut self, o: &SeqCounts) {
        self.received += o.received;
        self.lost += o.lost;
        self.reordered += o.reordered;
        self.duplicates += o.duplicates;
        self.late += o.late;
        self.restarts += o.restarts;
    }
}

/// The state of one stream.
#[derive(Clone)]
pub struct StreamTracker {
    /// The extended (64-bit) sequence number expected next.
    next: u64,
    /// The sender run this stream's frames belong to, once one arrived.
    run: Option<u16>,
    seen: [u64; WORDS],
    pub counts: SeqCounts,
    /// The measured window's frames of this stream: those of sender run
    /// `run` numbered from `lo` on, packed by [`trial_bound`] (0: none).
    trial: u64,
    /// What arrived of them.
    pub trial_counts: TrialCounts,
}

impl Default for StreamTracker {
    fn default() -> Self {
        StreamTracker { next: 0, run: None, seen: [0; WORDS], counts: SeqCounts::default(), trial: 0, trial_counts: TrialCounts::default() }
    }
}

const TRIAL_ON: u64 = 1 << 63;

/// A stream's trial frames, packed in one word (so a lane can read a
/// window's bounds from one atomic per stream): those of sender run `run`
/// numbered from `lo` on, up to 2^31 of them.
pub fn trial_bound(run: u16, lo: u32) -> u64 {
    TRIAL_ON | u64::from(run) << 32 | u64::from(lo)
}

/// What one arrival was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    InOrder,
    /// Ahead of the expected number by this many (the gap is now lost).
    Gap(u64),
    /// Behind the newest, not seen before: fills a gap.
    Reordered,
    Duplicate,
    /// Too old to tell.
    Late,
}

impl StreamTracker {
    #[inline(always)]
    fn bit(seq: u64) -> (usize, u64) {
        let slot = seq % WINDOW;
        ((slot / 64) as usize, 1u64 << (slot % 64))
    }

    /// Extends a 32-bit sequence number to the 64-bit number nearest to the
    /// one expected, so wrap-around is seamless.
    #[inline(always)]
    fn extend(&self, seq: u32) -> Option<u64> {
        // Relative to the number expected next: a frame one behind it is the newest seen.
        let delta = seq.wrapping_sub(self.next as u32) as i32 as i64;
        let ext = self.next as i64 + delta;
        (ext >= 0).then_some(ext as u64)
    }

    /// Accounts one arrival of `seq` from sender run `run`.
    #[inline]
    pub fn record(&mut self, seq: u32, run: u16) -> Arrival {
        self.record_frame(seq, run, 0)
    }

    /// Accounts one arrival of `seq` from sender run `run`, `len` bytes
    /// long, and counts it for the measured window when it is one of its frames.
    #[inline(always)]
    pub fn record_frame(&mut self, seq: u32, run: u16, len: u32) -> Arrival {
        let arrival = self.arrive(seq, run);
        let t = self.trial;
        if t & TRIAL_ON != 0 && (t >> 32) as u16 == run && seq.wrapping_sub(t as u32) as i32 >= 0 {
            let c = &mut self.trial_counts;
            match arrival {
                Arrival::Duplicate => c.duplicates += 1,
                a => {
                    (c.received, c.bytes) = (c.received + 1, c.bytes + u64::from(len));
                    c.late += u64::from(a == Arrival::Late);
                }
            }
        }
        arrival
    }

    /// The measured window's frames from now on are those `bound` names
    /// ([`trial_bound`]; 0: none); their counts start at zero.
    pub fn enter_trial(&mut self, bound: u64) {
        (self.trial, self.trial_counts) = (bound, TrialCounts::default());
    }

    #[inline(always)]
    fn arrive(&mut self, seq: u32, run: u16) -> Arrival {
        self.counts.received += 1;
        if self.run != Some(run) {
            self.restart(seq, run);
        }
        let Some(ext) = self.extend(seq) else {
            self.counts.late += 1;
            return Arrival::Late;
        };
        if ext >= self.next {
            let gap = ext - self.next;
            // Forget what the window held for the numbers now skipped over.
            for s in self.next..ext.min(self.next + WINDOW) {
                let (w, b) = Self::bit(s);
                self.seen[w] &= !b;
            }
            let (w, b) = Self::bit(ext);
            self.seen[w] |= b;
            self.next = ext + 1;
            self.counts.lost += gap;
            return if gap == 0 { Arrival::InOrder } else { Arrival::Gap(gap) };
        }
        if self.next - ext > WINDOW {
            if run == NO_RUN && u64::from(seq) < WINDOW {
                return self.unnumbered_run_again(seq, run);
            }
            self.counts.late += 1;
            return Arrival::Late;
        }
        let (w, b) = Self::bit(ext);
        if self.seen[w] & b != 0 {
            if run == NO_RUN && seq == 0 {
                return self.unnumbered_run_again(seq, run);
            }
            self.counts.duplicates += 1;
            Arrival::Duplicate
        } else {
            self.seen[w] |= b;
            self.counts.reordered += 1;
            self.counts.lost = self.counts.lost.saturating_sub(1);
            Arrival::Reordered
        }
    }

    /// A sender without a run id started its numbering again (the crate's
    /// doc says when that is told): the stream starts afresh from `seq`.
    #[cold]
    fn unnumbered_run_again(&mut self, seq: u32, run: u16) -> Arrival {
        self.restart(seq, run);
        let (w, b) = Self::bit(u64::from(seq));
        self.seen[w] |= b;
        self.next = u64::from(seq) + 1;
        Arrival::InOrder
    }

    /// The first arrival, or the first of a new sender run, is the baseline.
    #[cold]
    fn restart(&mut self, seq: u32, run: u16) {
        if self.run.is_some() {
            self.counts.restarts += 1;
        }
        self.run = Some(run);
        self.next = u64::from(seq);
        self.seen = [0; WORDS];
    }

    /// The highest sequence number seen plus one (extended), 0 if none.
    pub fn next_expected(&self) -> u64 {
        self.next
    }
}

/// Trackers for a bounded set of stream ids, allocated up front so the
/// receive path never allocates. Ids beyond the capacity are counted apart.
pub struct StreamTable {
    streams: Vec<StreamTracker>,
    /// Frames whose stream id was beyond the table.
    pub untracked: u64,
    /// Running totals over all streams, kept so a reader need not walk the table.
    pub totals: SeqCounts,
}

impl StreamTable {
    pub fn with_capacity(streams: usize) -> Self {
        StreamTable { streams: vec![StreamTracker::default(); streams], untracked: 0, totals: SeqCounts::default() }
    }

    pub fn capacity(&self) -> usize {
        self.streams.len()
    }

    #[inline]
    pub fn record(&mut self, stream: u16, seq: u32, run: u16) {
        self.record_frame(stream, seq, run, 0)
    }

    /// As [`StreamTable::record`], for a frame `len` bytes long (FCS included).
    #[inline]
    pub fn record_frame(&mut self, stream: u16, seq: u32, run: u16, len: u32) {
        let Some(t) = self.streams.get_mut(usize::from(stream)) else {
            self.untracked += 1;
            return;
        };
        let t_ = &mut self.totals;
        t_.received += 1;
        let restarts = t.counts.restarts;
        let arrival = t.record_frame(seq, run, len);
        t_.restarts += t.counts.restarts - restarts;
        match arrival {
            Arrival::InOrder => {}
            Arrival::Gap(g) => t_.lost += g,
            Arrival::Reordered => {
                t_.reordered += 1;
                t_.lost = t_.lost.saturating_sub(1);
            }
            Arrival::Duplicate => t_.duplicates += 1,
            Arrival::Late => t_.late += 1,
        }
    }

    /// A measured window opens: stream `id`'s frames in it are those
    /// `bound(id)` names ([`trial_bound`]; 0: none), counted from zero.
    pub fn enter_trial(&mut self, mut bound: impl FnMut(usize) -> u64) {
        for (id, t) in self.streams.iter_mut().enumerate() {
            t.enter_trial(bound(id));
        }
    }

    /// What arrived of stream `id`'s frames in the measured window.
    pub fn trial_counts(&self, id: u16) -> TrialCounts {
        self.streams.get(usize::from(id)).map_or_else(TrialCounts::default, |t| t.trial_counts)
    }

    /// (stream id, counts) for every stream that received anything.
    pub fn active(&self) -> impl Iterator<Item = (u16, &SeqCounts)> {
        self.streams.iter().enumerate().filter(|(_, t)| t.counts.received > 0).map(|(i, t)| (i as u16, &t.counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seqs: &[u32]) -> SeqCounts {
        let mut t = StreamTracker::default();
        for &s in seqs {
            t.record(s, 1);
        }
        t.counts
    }

    fn run_of(runs: &[(u16, std::ops::Range<u32>)]) -> SeqCounts {
        let mut t = StreamTracker::default();
        for (run, seqs) in runs {
            for s in seqs.clone() {
                t.record(s, *run);
            }
        }
        t.counts
    }

    #[test]
    fn a_sender_without_a_run_id_that_numbers_again_from_0_is_a_restart() {
        // A run longer than the window, then another: 10,240 late or duplicate before.
        let long = run_of(&[(NO_RUN, 0..10_240), (NO_RUN, 0..10_240)]);
        assert_eq!(long, SeqCounts { received: 20_480, restarts: 1, ..Default::default() });
        // A run shorter than the window, then another.
        let short = run_of(&[(NO_RUN, 0..500), (NO_RUN, 0..500)]);
        assert_eq!(short, SeqCounts { received: 1000, restarts: 1, ..Default::default() });
        // The new run's first frame lost: its second starts it.
        let headless = run_of(&[(NO_RUN, 0..5000), (NO_RUN, 1..5000)]);
        assert_eq!(headless, SeqCounts { received: 9999, restarts: 1, ..Default::default() });
        // A frame of a run id numbered again is late, as ever (such a sender's new run has a new id).
        let with_id = run_of(&[(7, 0..5000), (7, 0..1)]);
        assert_eq!((with_id.late, with_id.restarts), (1, 0));
    }

    #[test]
    fn without_a_run_id_a_duplicate_or_late_frame_past_the_start_is_still_one() {
        let mut t = StreamTracker::default();
        for s in 0..3000 {
            t.record(s, NO_RUN);
        }
        assert_eq!(t.record(2990, NO_RUN), Arrival::Duplicate);
        assert_eq!(t.record(1500, NO_RUN), Arrival::Late);
        assert_eq!(t.counts.restarts, 0);
    }

    #[test]
    fn in_order_is_clean() {
        let seqs: Vec<u32> = (0..5000).collect();
        assert_eq!(run(&seqs), SeqCounts { received: 5000, ..Default::default() });
    }

    #[test]
    fn gaps_are_lost() {
        assert_eq!(run(&[0, 1, 4, 5, 9]), SeqCounts { received: 5, lost: 5, ..Default::default() });
    }

    #[test]
    fn first_arrival_is_the_baseline() {
        assert_eq!(run(&[3, 4]), SeqCounts { received: 2, ..Default::default() });
        assert_eq!(run(&[1_000_000, 1_000_002]).lost, 1);
        // A frame from before the baseline, inside the window, is a reorder.
        let c = run(&[5, 6, 4]);
        assert_eq!((c.reordered, c.lost), (1, 0));
    }

    #[test]
    fn late_arrival_fills_its_gap() {
        let c = run(&[0, 2, 3, 1, 4]);
        assert_eq!(c, SeqCounts { received: 5, reordered: 1, ..Default::default() });
    }

    #[test]
    fn duplicates_are_told_from_reorders() {
        let c = run(&[0, 1, 1, 2, 0, 2]);
        assert_eq!(c, SeqCounts { received: 6, duplicates: 3, ..Default::default() });
    }

    #[test]
    fn swapped_pairs() {
        let c = run(&[1, 0, 3, 2, 5, 4]);
        assert_eq!(c, SeqCounts { received: 6, reordered: 3, ..Default::default() });
    }

    #[test]
    fn older_than_window_is_late() {
        let mut seqs: Vec<u32> = vec![0];
        seqs.extend(2..=3000);
        seqs.push(1);
        let c = run(&seqs);
        assert_eq!(c.late, 1);
        assert_eq!(c.lost, 1, "a late frame does not reduce lost");
        assert_eq!(c.reordered, 0);
    }

    #[test]
    fn big_gap_then_late_fill_in_window() {
        // Jump of 5000; seq 4990 arrives late but inside the window.
        let c = run(&[0, 5000, 4990]);
        assert_eq!(c.lost, 4998);
        assert_eq!(c.reordered, 1);
        // 10 is behind the window: late.
        let c = run(&[0, 5000, 10]);
        assert_eq!(c.late, 1);
    }

    #[test]
    fn wraps_around_32_bits() {
        let start = u32::MAX - 5;
        let mut t = StreamTracker::default();
        for i in 0..12u32 {
            t.record(start.wrapping_add(i), 1);
        }
        assert_eq!(t.counts, SeqCounts { received: 12, ..Default::default() });
        assert_eq!(t.next_expected(), u64::from(u32::MAX) + 7);
        t.record(2, 1); // already seen after the wrap
        assert_eq!(t.counts.duplicates, 1);
    }

    #[test]
    fn window_slots_are_cleared_when_skipped() {
        // 0..1024 seen, then a jump of exactly WINDOW: slot of seq 1024 reused by 2048.
        let mut seqs: Vec<u32> = (0..1024).collect();
        seqs.push(2048);
        seqs.push(1500); // in window, never seen: a reorder, not a duplicate
        let c = run(&seqs);
        assert_eq!(c.reordered, 1);
        assert_eq!(c.duplicates, 0);
        assert_eq!(c.lost, 1023);
    }

    #[test]
    fn the_window_counts_only_its_own_frames() {
        let mut table = StreamTable::with_capacity(2);
        // Warm-up: 0..100 sent, 0..60 arrived so far.
        for s in 0..60u32 {
            table.record_frame(0, s, 9, 64);
        }
        // The window opens at 100; warm-up stragglers (60..100, with gaps)
        // arrive inside it, then the trial's 100..200 less 3, a duplicate,
        // another run's frame and a frame from before the window's run.
        table.enter_trial(|id| if id == 0 { trial_bound(9, 100) } else { 0 });
        for s in (60..100u32).filter(|s| s % 2 == 0) {
            table.record_frame(0, s, 9, 64);
        }
        for s in (100..200u32).filter(|s| ![120, 150, 199].contains(s)) {
            table.record_frame(0, s, 9, 64);
        }
        table.record_frame(0, 130, 9, 64);
        table.record_frame(1, 150, 9, 64);
        let c = table.trial_counts(0);
        assert_eq!((c.received, c.duplicates, c.late, c.bytes), (97, 1, 0, 97 * 64));
        assert_eq!(table.trial_counts(1), TrialCounts::default(), "stream 1 is not in the trial");
        // The gap estimate counts the warm-up's holes too: more than the trial lost.
        assert!(table.totals.lost > 3);
        // Another sender run reusing the stream id is not the trial's.
        table.record_frame(0, 300, 10, 64);
        assert_eq!(table.trial_counts(0).received, 97);
        // A late trial frame (older than the reorder window) still arrived.
        for s in 300..1500u32 {
            table.record_frame(0, s, 10, 64);
        }
        table.enter_trial(|_| trial_bound(10, 300));
        table.record_frame(0, 301, 10, 64);
        let c = table.trial_counts(0);
        assert_eq!((c.received, c.late), (1, 1));
    }

    #[test]
    fn table_totals_match_per_stream_sums() {
        let mut table = StreamTable::with_capacity(4);
        for (stream, seq) in [(0, 0), (1, 0), (0, 2), (1, 1), (0, 1), (1, 1), (9, 0), (3, 5)] {
            table.record(stream, seq, 1);
        }
        let mut sum = SeqCounts::default();
        for (_, c) in table.active() {
            sum.add(c);
        }
        assert_eq!(sum, table.totals);
        assert_eq!(table.untracked, 1);
        assert_eq!(table.totals, SeqCounts { received: 7, lost: 0, reordered: 1, duplicates: 1, late: 0, restarts: 0 });
        assert_eq!(table.active().count(), 3);
    }

    #[test]
    fn a_new_sender_run_starts_its_streams_afresh() {
        // Run 1 sends 0..3000, run 2 starts over at 0: no duplicates, no late.
        let mut t = StreamTracker::default();
        for s in 0..3000u32 {
            t.record(s, 1);
        }
        for s in 0..2000u32 {
            t.record(s, 2);
        }
        assert_eq!(t.counts, SeqCounts { received: 5000, restarts: 1, ..Default::default() });
        // The same run id again (a sender that restarted its numbering
        // within a run) is still judged by sequence.
        t.record(5, 2);
        assert_eq!(t.counts.late + t.counts.duplicates, 1);
    }

    #[test]
    fn the_table_counts_restarts_and_a_run_losing_frames_still_shows_loss() {
        let mut table = StreamTable::with_capacity(2);
        for s in 0..100u32 {
            table.record(0, s, 10);
        }
        for s in (0..100u32).filter(|s| s % 10 != 3) {
            table.record(0, s, 11);
        }
        assert_eq!(table.totals.restarts, 1);
        assert_eq!(table.totals.lost, 10);
        assert_eq!((table.totals.duplicates, table.totals.late), (0, 0));
    }
}
