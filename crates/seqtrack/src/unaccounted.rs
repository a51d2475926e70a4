//! Why a window has no exact account of its loss. Each reason is a type
//! until the record, where its sentence is the window's `trial_unavailable`
//! and its loss falls back to the gap estimate.

use std::fmt;
use std::time::Duration;

/// One end of a window as its edge names it: the run, the first stream id
/// and how many streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeNames {
    pub run: u16,
    pub first: u16,
    pub streams: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoExactAccount {
    /// The window's end names other streams than its start did.
    EdgesDiffer { start: EdgeNames, end: EdgeNames },
    /// Not as many senders closed the window as opened it.
    SendersDiffer { opened: usize, closed: usize },
    /// The senders' stream ids reach past those drop tracks one by one.
    StreamsBeyond { highest: usize, tracked: usize },
    /// drop reads no probe (--count-only).
    CountOnly,
    /// The sender gave no sequence numbers for the window.
    NoSequenceNumbers,
    /// A lane did not give its counts in time.
    LaneSilent { queue: u16, waited: Duration },
    /// A queue the lanes do not have.
    NoSlate { queue: u16 },
    /// The window was closed without being opened.
    NoWindow,
}

impl fmt::Display for NoExactAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoExactAccount::EdgesDiffer { start: s, end: e } => write!(
                f,
                "the window's end names {} stream(s) from {} of run {:#06x}, its start {} from {} of run {:#06x}",
                e.streams, e.first, e.run, s.streams, s.first, s.run
            ),
            NoExactAccount::SendersDiffer { opened, closed } => write!(f, "{opened} sender(s) opened the window, {closed} closed it"),
            NoExactAccount::StreamsBeyond { highest, tracked } => write!(
                f,
                "the sender's stream ids reach {highest}, drop tracks ids below {tracked} one by one: restart drop with --streams {}",
                highest + 1
            ),
            NoExactAccount::CountOnly => f.write_str("drop runs with --count-only (no probe is read): loss is not counted per stream"),
            NoExactAccount::NoSequenceNumbers => {
                f.write_str("the sender gave no sequence numbers for the window (loss is the gap estimate)")
            }
            NoExactAccount::LaneSilent { queue, waited } => {
                write!(f, "the lane of RX queue {queue} did not give its counts within {waited:?} (stopped by the host?)")
            }
            NoExactAccount::NoSlate { queue } => write!(f, "queue {queue} has no slate"),
            NoExactAccount::NoWindow => f.write_str("no window open"),
        }
    }
}

impl std::error::Error for NoExactAccount {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_name_the_fix() {
        let e = NoExactAccount::StreamsBeyond { highest: 4096, tracked: 4096 };
        assert_eq!(
            e.to_string(),
            "the sender's stream ids reach 4096, drop tracks ids below 4096 one by one: restart drop with --streams 4097"
        );
        let e = NoExactAccount::EdgesDiffer {
            start: EdgeNames { run: 7, first: 0, streams: 2 },
            end: EdgeNames { run: 8, first: 0, streams: 2 },
        };
        assert_eq!(e.to_string(), "the window's end names 2 stream(s) from 0 of run 0x0008, its start 2 from 0 of run 0x0007");
    }
}
