//! The measured window's own frames, between drop's control thread and its
//! receive lanes: which frames of each stream belong to the trial (written
//! when the window opens), and what each lane counted of them (asked for
//! when it closes). The lanes read two words of it per poll, written only
//! at a window's edges, so the line stays shared and clean.
//!
//! Opening: the control thread writes every stream's bound (sender run and
//! first sequence number, `seqtrack::trial_bound`), then bumps `epoch`; a
//! lane that sees a new epoch takes the bounds into its stream table (its
//! counts start at zero) before it counts the burst in hand. Frames of the
//! trial leave the sender only after drop answered the window's opening, so
//! none is counted before its lane took the bounds.
//!
//! Closing: the control thread bumps `ask`; each lane, at its next poll,
//! writes its counts of every trial stream into its own slate and then
//! stores the ask it answered. The control thread waits for every running
//! lane's answer (a bounded wait: a lane stopped by the host for longer
//! leaves the window without exact figures, said so).

use std::sync::atomic::{AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use std::time::{Duration, Instant};

use seqtrack::{NoExactAccount, StreamEdge, StreamTable, TrialAccount, TrialCounts};

/// The longest a closing window waits for a lane's counts.
pub const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// One lane's counts of the trial's streams, by stream id.
#[repr(align(64))]
struct Slate {
    answered: AtomicU64,
    /// Four words per stream id: received, bytes, duplicates, late.
    counts: Box<[AtomicU64]>,
}

#[repr(align(64))]
pub struct TrialBoard {
    epoch: AtomicU64,
    ask: AtomicU64,
    /// Each stream id's bound (0: not in the trial).
    bounds: Box<[AtomicU64]>,
    slates: Box<[Slate]>,
}

const WORDS: usize = 4;

impl TrialBoard {
    /// For stream ids below `streams`, and lanes (queues) below `lanes`.
    pub fn new(streams: usize, lanes: usize) -> TrialBoard {
        let zeros = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect::<Box<[_]>>();
        TrialBoard {
            epoch: AtomicU64::new(0),
            ask: AtomicU64::new(0),
            bounds: zeros(streams),
            slates: (0..lanes).map(|_| Slate { answered: AtomicU64::new(0), counts: zeros(streams * WORDS) }).collect(),
        }
    }

    pub fn streams(&self) -> usize {
        self.bounds.len()
    }

    /// Why these edges cannot be counted here, if they cannot.
    pub fn check(&self, edges: &[StreamEdge]) -> Option<NoExactAccount> {
        let tracked = self.bounds.len();
        edges
            .iter()
            .find(|e| usize::from(e.first) + e.seqs.len() > tracked)
            .map(|e| NoExactAccount::StreamsBeyond { highest: usize::from(e.first) + e.seqs.len() - 1, tracked })
    }

    /// A window opens with these senders' streams at these numbers (none:
    /// no exact accounting for it; every bound is cleared).
    pub fn open(&self, edges: &[StreamEdge]) {
        for b in self.bounds.iter() {
            b.store(0, Relaxed);
        }
        for e in edges {
            for (id, &seq) in e.ids().zip(&e.seqs) {
                if let Some(b) = self.bounds.get(usize::from(id)) {
                    b.store(seqtrack::trial_bound(e.run, seq), Relaxed);
                }
            }
        }
        self.epoch.fetch_add(1, Release);
    }

    /// The lane's side, once per poll that brought frames: takes a new
    /// window's bounds into `table`.
    #[inline(always)]
    pub fn follow(&self, table: &mut StreamTable, epoch: &mut u64) {
        let now = self.epoch.load(Acquire);
        if now != *epoch {
            self.enter(table, epoch, now);
        }
    }

    #[cold]
    fn enter(&self, table: &mut StreamTable, epoch: &mut u64, now: u64) {
        table.enter_trial(|id| self.bounds.get(id).map_or(0, |b| b.load(Relaxed)));
        *epoch = now;
    }

    /// The lane's side, once per poll: whether its counts are asked for.
    #[inline(always)]
    pub fn asked(&self, answered: u64) -> Option<u64> {
        let ask = self.ask.load(Relaxed);
        (ask != answered).then_some(ask)
    }

    /// The lane's answer to `ask`: its counts of every trial stream (after
    /// taking the window's bounds, if it had not: then they are zero).
    #[cold]
    pub fn answer(&self, lane: usize, table: &mut StreamTable, epoch: &mut u64, ask: u64) {
        self.follow(table, epoch);
        let Some(slate) = self.slates.get(lane) else { return };
        for (id, b) in self.bounds.iter().enumerate() {
            if b.load(Relaxed) == 0 {
                continue;
            }
            let c = table.trial_counts(id as u16);
            let w = &slate.counts[id * WORDS..id * WORDS + WORDS];
            for (slot, v) in w.iter().zip([c.received, c.bytes, c.duplicates, c.late]) {
                slot.store(v, Relaxed);
            }
        }
        slate.answered.store(ask, Release);
    }

    /// The control thread's side at a window's close: every lane in
    /// `lanes` (queue ids) answers with its counts, summed per stream.
    /// Err when a lane did not answer within [`ANSWER_WAIT`].
    pub fn collect(&self, lanes: &[u16]) -> Result<Counts<'_>, NoExactAccount> {
        let ask = self.ask.fetch_add(1, Release) + 1;
        let until = Instant::now() + ANSWER_WAIT;
        for &q in lanes {
            let slate = self.slates.get(usize::from(q)).ok_or(NoExactAccount::NoSlate { queue: q })?;
            while slate.answered.load(Acquire) != ask {
                if Instant::now() >= until {
                    return Err(NoExactAccount::LaneSilent { queue: q, waited: ANSWER_WAIT });
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        Ok(Counts { board: self, lanes: lanes.to_vec() })
    }
}

/// The lanes' answers to one ask.
pub struct Counts<'a> {
    board: &'a TrialBoard,
    lanes: Vec<u16>,
}

impl Counts<'_> {
    /// Stream `id`'s counts, summed over the lanes (a stream RSS split
    /// over several queues is counted on each).
    pub fn of(&self, id: u16) -> TrialCounts {
        let mut sum = TrialCounts::default();
        let at = usize::from(id) * WORDS;
        for &q in &self.lanes {
            let w = &self.board.slates[usize::from(q)].counts[at..at + WORDS];
            let v: Vec<u64> = w.iter().map(|x| x.load(Relaxed)).collect();
            sum.add(&TrialCounts { received: v[0], bytes: v[1], duplicates: v[2], late: v[3] });
        }
        sum
    }

    /// The same answers, of the lanes in `lanes` only (one port's).
    pub fn of_lanes(&self, lanes: &[u16]) -> Counts<'_> {
        Counts { board: self.board, lanes: self.lanes.iter().copied().filter(|q| lanes.contains(q)).collect() }
    }

    /// The trial frames of every sender's streams that these lanes took, and their bytes.
    pub fn received(&self, edges: &[StreamEdge]) -> (u64, u64) {
        edges.iter().flat_map(|e| e.ids()).map(|id| self.of(id)).fold((0, 0), |(n, b), c| (n + c.received, b + c.bytes))
    }

    /// The account of each sender's streams between their edges.
    pub fn accounts(&self, starts: &[StreamEdge], ends: &[StreamEdge]) -> Result<Vec<TrialAccount>, NoExactAccount> {
        if starts.len() != ends.len() {
            return Err(NoExactAccount::SendersDiffer { opened: starts.len(), closed: ends.len() });
        }
        starts.iter().zip(ends).map(|(a, b)| TrialAccount::of(a, b, |id| self.of(id))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_counts_from_the_window_it_was_told_of() {
        let board = TrialBoard::new(8, 2);
        let mut table = StreamTable::with_capacity(8);
        let mut epoch = 0;
        // Warm-up frames, before any window.
        for s in 0..10 {
            table.record_frame(3, s, 5, 64);
        }
        let start = StreamEdge { run: 5, first: 2, seqs: vec![0, 10] };
        board.open(std::slice::from_ref(&start));
        board.follow(&mut table, &mut epoch);
        for s in 10..30 {
            table.record_frame(3, s, 5, 64);
        }
        // Lane 0 answers at its next poll; lane 1 never saw a frame.
        let end = StreamEdge { run: 5, first: 2, seqs: vec![0, 32] };
        let accounts = std::thread::scope(|sc| {
            let h = sc.spawn(|| board.collect(&[0, 1]).and_then(|c| c.accounts(std::slice::from_ref(&start), std::slice::from_ref(&end))));
            let (mut t1, mut e1) = (StreamTable::with_capacity(8), 0);
            let a = loop {
                if let Some(a) = board.asked(0) {
                    break a;
                }
                std::thread::yield_now();
            };
            board.answer(0, &mut table, &mut epoch, a);
            board.answer(1, &mut t1, &mut e1, a);
            h.join().unwrap().unwrap()
        });
        // Stream 3 sent 22 (10..32) and 20 arrived; stream 2 sent none.
        let a = &accounts[0];
        assert_eq!((a.sent, a.received, a.lost, a.received_bytes), (22, 20, 2, 20 * 64));
    }

    #[test]
    fn a_lane_that_does_not_answer_leaves_no_figures() {
        let board = TrialBoard::new(4, 1);
        let t0 = Instant::now();
        let e = board.collect(&[0]).err().expect("no answer");
        assert!(e.to_string().contains("RX queue 0") && t0.elapsed() >= ANSWER_WAIT, "{e}");
    }

    #[test]
    fn streams_beyond_the_table_are_refused_with_the_fix() {
        let board = TrialBoard::new(16, 1);
        let e = board.check(&[StreamEdge { run: 1, first: 10, seqs: vec![0; 8] }]).unwrap();
        assert!(e.to_string().contains("--streams 18"), "{e}");
        assert!(board.check(&[StreamEdge { run: 1, first: 8, seqs: vec![0; 8] }]).is_none());
    }
}
