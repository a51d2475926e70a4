//! Why a step could not be measured, as a type from the control client
//! (or the sender's own checks) to the record, where it is written as its
//! sentence (`records::step::StepFailure`): the JSON stays readable, and
//! nothing in between turns it into a string to pass along.

use std::time::Duration;

use control::{ClientError, ConnectionEnd};

/// Why a step ended without figures (or a ladder, a knee search or a
/// replay stopped).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepFailure {
    /// The control channel to drop failed, or drop refused the request.
    #[error(transparent)]
    Peer(#[from] ClientError),
    /// drop answered something other than what was asked for.
    #[error("drop answered {answer} to {request}")]
    Unexpected { answer: String, request: &'static str },
    /// The window was to end, but none had been opened at drop.
    #[error("no window open at drop")]
    NoWindow,
    /// drop's end of the control connection went away while sending (how).
    #[error("the receiver is gone: {0}")]
    PeerGone(ConnectionEnd),
    /// A port whose link was up went down while sending.
    #[error(
        "the receiver is gone (drop exited or was killed?): the link of port {port} ({name}) went down {:.1} s into the phase{}; stopped sending",
        after.as_secs_f64(),
        if *memif { " (its memif peer left)" } else { "" }
    )]
    LinkDown { port: u16, name: String, after: Duration, memif: bool },
    /// A --count run whose device stopped taking frames.
    #[error(
        "no frame accepted for {waited:.0?}: the device stopped taking frames (peer gone, or link down); {sent} of the --count were sent"
    )]
    NothingAccepted { waited: Duration, sent: u64 },
    /// Queues of a memif port lost their ring under a burst: its peer left.
    #[error(
        "the receiver is gone (drop exited or was killed?): {queues} queue(s) of a memif port lost their ring under a burst (its peer left; the fault was caught, that burst is not counted)"
    )]
    RingsLost { queues: u64 },
    /// A signal ended the run before the window closed.
    #[error("interrupted before the window closed")]
    Interrupted,
    /// A group window's figures came back without the group's.
    #[error("drop answered a group window without the group's figures")]
    NoGroupFigures,
    /// The sender could not run the step (a port that would not start, a
    /// link that stayed down): the line the binary says for its
    /// [`crate::Error`], naming the flag to change. A sentence, not the
    /// error: the flag is the binary's to name, and the record keeps the
    /// line the user read (a `StepFailure` is cloned and compared; an
    /// `Error` holding an io or DPDK error is neither).
    #[error("{0}")]
    Sender(String),
}

/// The record keeps the sentence.
impl From<&StepFailure> for records::step::StepFailure {
    fn from(f: &StepFailure) -> Self {
        records::step::StepFailure(f.to_string())
    }
}

impl From<StepFailure> for records::step::StepFailure {
    fn from(f: StepFailure) -> Self {
        (&f).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_reads_as_its_sentence_and_round_trips_as_one() {
        let cases = [
            (StepFailure::Peer(ClientError::Remote("window 3 is not open".into())), "drop refused: window 3 is not open"),
            (StepFailure::Unexpected { answer: "Bye".into(), request: "start_window" }, "drop answered Bye to start_window"),
            (StepFailure::PeerGone(ConnectionEnd::Closed), "the receiver is gone: drop closed the control connection"),
            (
                StepFailure::LinkDown { port: 0, name: "net_memif0".into(), after: Duration::from_millis(1234), memif: true },
                "the receiver is gone (drop exited or was killed?): the link of port 0 (net_memif0) went down 1.2 s into the phase (its memif peer left); stopped sending",
            ),
            (
                StepFailure::NothingAccepted { waited: Duration::from_secs(5), sent: 700 },
                "no frame accepted for 5s: the device stopped taking frames (peer gone, or link down); 700 of the --count were sent",
            ),
            (StepFailure::RingsLost { queues: 2 }, "the receiver is gone (drop exited or was killed?): 2 queue(s) of a memif port lost their ring under a burst (its peer left; the fault was caught, that burst is not counted)"),
            (StepFailure::Interrupted, "interrupted before the window closed"),
        ];
        for (f, text) in cases {
            assert_eq!(f.to_string(), text);
            let json = serde_json::to_string(&records::step::StepFailure::from(&f)).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap(), "written as its sentence");
            let back: records::step::StepFailure = serde_json::from_str(&json).unwrap();
            assert_eq!(back.to_string(), text, "read back as the same sentence");
        }
    }
}
