//! What the control server drives (drop's receiver, or a stand-in in
//! tests), and how it says no.

use std::net::TcpStream;
use std::time::Duration;

use crate::message::{GroupFigures, PeerInfo, Prepared, WindowFigures};

/// Why the receiver could not do what a request asked; its text goes back
/// to the client as the error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// It cannot be done as asked: the client's settings (or the
    /// receiver's start-up flags) must change; the text says which.
    #[error("{0}")]
    Refused(String),
    /// The receiver's port or lanes failed doing it.
    #[error("{0}")]
    Failed(String),
    /// end_window with no baseline taken.
    #[error("no window open")]
    NoWindow,
    /// The receiver's lanes stopped inside the window: it has no figures for it.
    #[error("drop's lanes stopped during the window (its port restarted, or the memif peer left): no figures for it")]
    LanesStopped,
    /// The receiver's link stayed down, so nothing would be counted.
    #[error("drop is not receiving: the link of its port stayed down for {0:?} (is blast's port connected?)")]
    NotReceiving(Duration),
    /// The client's connection closed while the receiver waited for it.
    #[error("the client went away while drop waited for its port")]
    ClientGone,
}

/// The connection of the client a backend call serves. A call that waits
/// (for a memif peer to connect, say) asks it whether the client is still
/// there: a client killed mid-request must not hold drop for the whole wait,
/// or the next client is told busy.
#[derive(Clone, Copy)]
pub struct ClientLink<'a>(Option<&'a TcpStream>);

impl<'a> ClientLink<'a> {
    pub fn of(stream: &'a TcpStream) -> ClientLink<'a> {
        ClientLink(Some(stream))
    }

    /// No connection to watch (a test's stand-in): never gone.
    pub fn unwatched() -> ClientLink<'static> {
        ClientLink(None)
    }

    /// The client closed its end (or it was reset). A request it sent
    /// ahead and that is not read yet counts as still there. Never blocks.
    pub fn gone(&self) -> bool {
        let Some(s) = self.0 else { return false };
        if s.set_nonblocking(true).is_err() {
            return false;
        }
        let peeked = s.peek(&mut [0u8; 1]);
        let _ = s.set_nonblocking(false);
        match peeked {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted),
        }
    }
}

/// What the server drives: drop's receiver, or a stand-in in tests.
pub trait Backend: Send {
    fn info(&mut self) -> PeerInfo;
    fn prepare(&mut self, rx_queues: u16, max_size: u32) -> Result<Prepared, BackendError>;
    /// Baselines every counter; the window starts now, its trial frames
    /// those of the senders' streams from these edges on (none given: no
    /// exact account of it).
    /// A wait for the port gives up when `client` has gone.
    fn start_window(&mut self, streams: &[seqtrack::StreamEdge], client: ClientLink<'_>) -> Result<(), BackendError>;
    /// Figures since the baseline; window `window` ends now, the senders'
    /// streams at these edges (one per edge given at the start, in its order).
    fn end_window(&mut self, window: u64, streams: &[seqtrack::StreamEdge]) -> Result<WindowFigures, BackendError>;
    /// The window `window` ends without its client (`why`): its figures,
    /// if any are kept, are incomplete.
    fn abandon_window(&mut self, window: u64, why: &str);
    /// The client said bye; called before the reply goes out, so whatever
    /// must be quiet before the client's process exits can be made so.
    fn client_leaving(&mut self) {}
    /// A session begins (the client authenticated) or ends.
    fn session_started(&mut self, _client: &str) {}
    fn session_ended(&mut self, _client: &str, _why: &str) {}
    /// Group window `window` closed: the group's figures, for the
    /// receiver's own record of that window.
    fn window_group(&mut self, _window: u64, _group: &GroupFigures) {}
}
