//! A session's measured windows, for a client's own run and a group's
//! alike: which one is open, the next one's number, and the backend calls
//! that prepare the port, open a window and close it. No sockets: tested
//! on a stand-in backend.

use crate::backend::{Backend, ClientLink};
use crate::message::{error, Response, WindowFigures};

/// Windows are numbered from 1 per session (or group); at most one is open.
#[derive(Debug)]
pub(crate) struct Windows {
    open: Option<u64>,
    next: u64,
}

impl Default for Windows {
    fn default() -> Self {
        Windows { open: None, next: 1 }
    }
}

impl Windows {
    pub(crate) fn open(&self) -> Option<u64> {
        self.open
    }

    /// Prepares the port for the next step; a window still open is
    /// abandoned (`who` prepared with it open: its figures are incomplete).
    pub(crate) fn prepare(&mut self, b: &mut dyn Backend, rx_queues: u16, max_size: u32, who: &str) -> Response {
        self.abandon(b, &format!("{who} prepared the next step with this window open"));
        match b.prepare(rx_queues, max_size) {
            Ok(p) => Response::Prepared(p),
            Err(e) => error(e.to_string()),
        }
    }

    /// Opens the next window, its trial frames those of the streams from
    /// these edges on.
    pub(crate) fn start(&mut self, b: &mut dyn Backend, edges: &[seqtrack::StreamEdge], client: ClientLink<'_>) -> Response {
        if self.open.is_some() {
            return error("a window is already open: end it first");
        }
        match b.start_window(edges, client) {
            Ok(()) => {
                let w = self.next;
                (self.open, self.next) = (Some(w), w + 1);
                Response::WindowStarted { window: w }
            }
            Err(e) => error(e.to_string()),
        }
    }

    /// Closes window `w`, the streams at these edges: its figures, or the
    /// error to answer (another window, or none, is open; the backend failed).
    pub(crate) fn end(&mut self, b: &mut dyn Backend, w: u64, edges: &[seqtrack::StreamEdge]) -> Response {
        match self.open {
            Some(open) if open == w => {}
            Some(open) => return error(format!("window {w} is not open (window {open} is)")),
            None => return error(format!("window {w} is not open (none is)")),
        }
        self.open = None;
        match b.end_window(w, edges) {
            Ok(f) => Response::WindowFigures(Box::new(WindowFigures { window: w, ..f })),
            Err(e) => error(e.to_string()),
        }
    }

    /// The open window, if any, ends without its client (`why`): the
    /// backend records it as incomplete. Returns which it was.
    pub(crate) fn abandon(&mut self, b: &mut dyn Backend, why: &str) -> Option<u64> {
        let w = self.open.take()?;
        b.abandon_window(w, why);
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendError;
    use crate::message::{PeerInfo, Prepared};

    /// Records what the windows asked of it.
    #[derive(Default)]
    struct Recorder {
        calls: Vec<String>,
        fail_start: bool,
    }

    impl Backend for Recorder {
        fn info(&mut self) -> PeerInfo {
            PeerInfo::default()
        }
        fn prepare(&mut self, rx_queues: u16, max_size: u32) -> Result<Prepared, BackendError> {
            self.calls.push(format!("prepare {rx_queues} {max_size}"));
            Ok(Prepared::default())
        }
        fn start_window(&mut self, streams: &[seqtrack::StreamEdge], _client: ClientLink<'_>) -> Result<(), BackendError> {
            self.calls.push(format!("start {}", streams.len()));
            if self.fail_start {
                return Err(BackendError::Failed("the port stopped".into()));
            }
            Ok(())
        }
        fn end_window(&mut self, window: u64, _: &[seqtrack::StreamEdge]) -> Result<WindowFigures, BackendError> {
            self.calls.push(format!("end {window}"));
            Ok(WindowFigures { packets: 7, ..Default::default() })
        }
        fn abandon_window(&mut self, window: u64, why: &str) {
            self.calls.push(format!("abandon {window}: {why}"));
        }
    }

    fn error_text(r: Response) -> String {
        match r {
            Response::Error { error } => error,
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn windows_are_numbered_one_open_at_a_time_and_closed_by_their_number() {
        let (mut w, mut b) = (Windows::default(), Recorder::default());
        assert_eq!(w.start(&mut b, &[], ClientLink::unwatched()), Response::WindowStarted { window: 1 });
        assert_eq!(error_text(w.start(&mut b, &[], ClientLink::unwatched())), "a window is already open: end it first");
        assert_eq!(error_text(w.end(&mut b, 3, &[])), "window 3 is not open (window 1 is)");
        let Response::WindowFigures(f) = w.end(&mut b, 1, &[]) else { panic!("no figures") };
        assert_eq!((f.window, f.packets), (1, 7), "the figures carry their window's number");
        assert_eq!(error_text(w.end(&mut b, 1, &[])), "window 1 is not open (none is)");
        assert_eq!(w.start(&mut b, &[], ClientLink::unwatched()), Response::WindowStarted { window: 2 });
        assert_eq!(b.calls, ["start 0", "end 1", "start 0"], "a refused request reaches no backend");
    }

    #[test]
    fn a_prepare_or_a_departure_abandons_the_open_window_and_a_failed_start_opens_none() {
        let (mut w, mut b) = (Windows::default(), Recorder::default());
        assert_eq!(w.prepare(&mut b, 1, 64, "the client"), Response::Prepared(Prepared::default()));
        assert_eq!(w.start(&mut b, &[], ClientLink::unwatched()), Response::WindowStarted { window: 1 });
        assert!(matches!(w.prepare(&mut b, 2, 1518, "the group"), Response::Prepared(_)));
        assert_eq!(w.open(), None);
        assert_eq!(b.calls[2..], ["abandon 1: the group prepared the next step with this window open", "prepare 2 1518"]);
        assert_eq!(w.start(&mut b, &[], ClientLink::unwatched()), Response::WindowStarted { window: 2 });
        assert_eq!(w.abandon(&mut b, "client closed the connection"), Some(2));
        assert_eq!(w.abandon(&mut b, "again"), None, "nothing open: nothing abandoned");
        b.fail_start = true;
        assert_eq!(error_text(w.start(&mut b, &[], ClientLink::unwatched())), "the port stopped");
        assert_eq!(w.open(), None, "a window the backend could not start is not open");
        b.fail_start = false;
        assert_eq!(w.start(&mut b, &[], ClientLink::unwatched()), Response::WindowStarted { window: 3 }, "its number is not reused");
    }
}
