//! Exact loss over a measured window, from both ends' counts.
//!
//! The sender knows each of its streams' next sequence number at the
//! window's start and at its end, so it knows exactly which frames belong to
//! the trial: those numbered from the start's to the end's. The receiver
//! counts, per stream, only frames of that range from that sender run
//! (warm-up frames still in flight, the previous step's stragglers, another
//! run's frames and frames that are not probes at all are reported beside
//! them, never mixed in). Then `lost = sent - received` per stream is exact,
//! and `received + lost = sent` holds by construction unless a stream
//! received more of its own frames than were sent: an accounting error,
//! kept as counted and reported, never corrected.
//!
//! The gap-based figure of [`crate::SeqCounts`] stays what it is: an
//! estimate for a receiver that has no sender's counts to compare with.

use serde::{Deserialize, Serialize};

use crate::unaccounted::{EdgeNames, NoExactAccount};

/// The most streams one edge may list (the control line's length bounds it;
/// drop tracks 4096 stream ids one by one by default). A sender with more
/// streams gives no edge: its loss is then the gap estimate, labelled so.
pub const MAX_EDGE_STREAMS: usize = 4096;

/// A sender's streams at one edge of a window: its run id, and the next
/// sequence number of each of its streams, whose ids are `first`, `first + 1`, ...
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamEdge {
    pub run: u16,
    pub first: u16,
    pub seqs: Vec<u32>,
}

impl StreamEdge {
    /// The stream ids this edge covers.
    pub fn ids(&self) -> impl Iterator<Item = u16> + '_ {
        (0..self.seqs.len()).map(move |i| self.first.wrapping_add(i as u16))
    }

    /// Why `end` cannot close a window `self` opened, if it cannot.
    pub fn mismatch(&self, end: &StreamEdge) -> Option<NoExactAccount> {
        let (start, end) = (self.names(), end.names());
        (start != end).then_some(NoExactAccount::EdgesDiffer { start, end })
    }

    fn names(&self) -> EdgeNames {
        EdgeNames { run: self.run, first: self.first, streams: self.seqs.len() }
    }
}

/// What a receiver counted of one stream's trial frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrialCounts {
    /// Trial frames that arrived, each once (late ones included: they
    /// arrived, though whether as a duplicate could no longer be told).
    pub received: u64,
    pub bytes: u64,
    /// Trial frames that arrived again.
    pub duplicates: u64,
    /// Of `received`, those older than the reorder window when they came.
    pub late: u64,
}

impl TrialCounts {
    pub fn add(&mut self, o: &TrialCounts) {
        self.received += o.received;
        self.bytes += o.bytes;
        self.duplicates += o.duplicates;
        self.late += o.late;
    }
}

/// One stream's account over a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamAccount {
    pub stream: u16,
    pub sent: u64,
    pub received: u64,
    /// `sent - received` (0 where more arrived than was sent: an accounting error).
    pub lost: u64,
    pub duplicates: u64,
    pub late: u64,
}

/// Accounting errors listed one by one, at most (all are counted).
const LISTED_ERRORS: usize = 16;

/// The exact account of a window's trial frames, over a set of streams (a
/// sender's, a group member's, or several summed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrialAccount {
    pub streams: u32,
    /// Frames of the trial, from the sender's sequence numbers.
    pub sent: u64,
    /// Trial frames that arrived, each counted once.
    pub received: u64,
    /// Frame bytes of those (FCS included).
    pub received_bytes: u64,
    /// `sent - received`, summed per stream: exact.
    pub lost: u64,
    pub duplicates: u64,
    pub late: u64,
    pub streams_with_loss: u32,
    /// The stream that lost the most, when any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_stream: Option<StreamAccount>,
    /// Streams that received more of their trial frames than were sent
    /// (none unless the accounting is wrong), the first few listed.
    #[serde(default)]
    pub error_streams: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<StreamAccount>,
}

impl TrialAccount {
    /// The account of the streams between two edges, with the receiver's
    /// counts of stream `id` from `counts`.
    pub fn of(start: &StreamEdge, end: &StreamEdge, mut counts: impl FnMut(u16) -> TrialCounts) -> Result<TrialAccount, NoExactAccount> {
        if let Some(why) = start.mismatch(end) {
            return Err(why);
        }
        let mut a = TrialAccount::default();
        for ((id, &lo), &hi) in start.ids().zip(&start.seqs).zip(&end.seqs) {
            let sent = u64::from(hi.wrapping_sub(lo));
            let c = counts(id);
            a.add_stream(StreamAccount {
                stream: id,
                sent,
                received: c.received,
                lost: sent.saturating_sub(c.received),
                duplicates: c.duplicates,
                late: c.late,
            });
            a.received_bytes += c.bytes;
        }
        Ok(a)
    }

    fn add_stream(&mut self, s: StreamAccount) {
        self.streams += 1;
        self.sent += s.sent;
        self.received += s.received;
        self.lost += s.lost;
        self.duplicates += s.duplicates;
        self.late += s.late;
        if s.lost > 0 {
            self.streams_with_loss += 1;
            if self.worst_stream.is_none_or(|w| s.lost > w.lost) {
                self.worst_stream = Some(s);
            }
        }
        if s.received > s.sent {
            self.error_streams += 1;
            if self.errors.len() < LISTED_ERRORS {
                self.errors.push(s);
            }
        }
    }

    /// Several accounts as one (a group's members, a sender's ports).
    pub fn merge(&mut self, o: &TrialAccount) {
        self.streams += o.streams;
        self.sent += o.sent;
        self.received += o.received;
        self.received_bytes += o.received_bytes;
        self.lost += o.lost;
        self.duplicates += o.duplicates;
        self.late += o.late;
        self.streams_with_loss += o.streams_with_loss;
        if let Some(w) = o.worst_stream {
            if self.worst_stream.is_none_or(|x| w.lost > x.lost) {
                self.worst_stream = Some(w);
            }
        }
        self.error_streams += o.error_streams;
        for e in &o.errors {
            if self.errors.len() < LISTED_ERRORS {
                self.errors.push(*e);
            }
        }
    }

    /// The accounting error, if there is one: `received + lost = sent`
    /// fails for a stream, or the sender's own count of what it sent
    /// (`sender_sent`, when given) differs from its sequence numbers'.
    pub fn error(&self, sender_sent: Option<u64>) -> Option<AccountingError> {
        let e = AccountingError {
            over_received: self.errors.first().map(|e| (self.error_streams, *e)),
            sender_counted: sender_sent.filter(|&s| s != self.sent).map(|s| (s, self.sent)),
        };
        (e.over_received.is_some() || e.sender_counted.is_some()).then_some(e)
    }
}

/// An account that does not add up. Kept as counted and reported (its
/// sentence is the record's `accounting_error`), never corrected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountingError {
    /// How many streams received more trial frames than were sent, and the first.
    pub over_received: Option<(u32, StreamAccount)>,
    /// The sender's own count of frames sent, and its sequence numbers'.
    pub sender_counted: Option<(u64, u64)>,
}

impl std::fmt::Display for AccountingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("accounting error: ")?;
        if let Some((n, e)) = &self.over_received {
            write!(
                f,
                "{n} stream(s) received more trial frames than were sent (stream {}: sent {}, received {})",
                e.stream, e.sent, e.received
            )?;
            if self.sender_counted.is_some() {
                f.write_str("; ")?;
            }
        }
        if let Some((counted, numbered)) = self.sender_counted {
            write!(f, "the sender counted {counted} frames sent, its sequence numbers {numbered}")?;
        }
        Ok(())
    }
}

impl std::error::Error for AccountingError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(first: u16, seqs: &[u32]) -> StreamEdge {
        StreamEdge { run: 7, first, seqs: seqs.to_vec() }
    }

    #[test]
    fn loss_is_sent_less_received_per_stream() {
        let (a, b) = (edge(4, &[10, 0, u32::MAX - 1]), edge(4, &[110, 50, 3]));
        let got = TrialAccount::of(&a, &b, |id| match id {
            4 => TrialCounts { received: 100, bytes: 6400, ..Default::default() },
            5 => TrialCounts { received: 45, bytes: 2880, duplicates: 2, late: 1 },
            _ => TrialCounts { received: 5, bytes: 320, ..Default::default() },
        })
        .unwrap();
        // Stream 6 wrapped: u32::MAX - 1 .. 3 is 5 frames.
        assert_eq!((got.streams, got.sent, got.received, got.lost), (3, 155, 150, 5));
        assert_eq!(got.received + got.lost, got.sent);
        assert_eq!((got.duplicates, got.late, got.received_bytes), (2, 1, 9600));
        assert_eq!(got.streams_with_loss, 1);
        assert_eq!(got.worst_stream.map(|w| (w.stream, w.lost)), Some((5, 5)));
        assert_eq!(got.error(Some(155)), None);
    }

    #[test]
    fn more_received_than_sent_is_an_error_never_corrected() {
        let (a, b) = (edge(0, &[0, 0]), edge(0, &[10, 10]));
        let got = TrialAccount::of(&a, &b, |id| TrialCounts { received: if id == 0 { 12 } else { 10 }, ..Default::default() }).unwrap();
        assert_eq!((got.received, got.lost, got.error_streams), (22, 0, 1));
        let e = got.error(None).unwrap().to_string();
        assert!(e.contains("stream 0: sent 10, received 12"), "{e}");
        assert_eq!(
            got.error(Some(19)).unwrap().to_string(),
            "accounting error: 1 stream(s) received more trial frames than were sent (stream 0: sent 10, received 12); the sender counted 19 frames sent, its sequence numbers 20"
        );
    }

    #[test]
    fn edges_must_name_the_same_streams() {
        let e = TrialAccount::of(&edge(0, &[0, 0]), &edge(1, &[0, 0]), |_| TrialCounts::default()).unwrap_err();
        assert!(e.to_string().contains("from 1"), "{e}");
    }

    #[test]
    fn merged_accounts_add_up() {
        let one = TrialAccount::of(&edge(0, &[0]), &edge(0, &[10]), |_| TrialCounts { received: 8, ..Default::default() }).unwrap();
        let two = TrialAccount::of(&edge(64, &[5]), &edge(64, &[25]), |_| TrialCounts { received: 20, ..Default::default() }).unwrap();
        let mut m = one.clone();
        m.merge(&two);
        assert_eq!((m.streams, m.sent, m.received, m.lost, m.streams_with_loss), (2, 30, 28, 2, 1));
    }
}
