//! drop's window opened and closed as blast's opens and closes, over the
//! control connection (a group member ends it with its own figures).

use blastdrop::attribution;
use blastdrop::figures::per_packet;
use blastdrop::sender::{SenderWindow, StepFailure, WindowHooks};
use control::{Request, Response, WindowFigures};

use super::Peer;

/// Opens and closes drop's window as blast's window opens and closes.
pub struct PeerHooks<'a> {
    peer: Option<&'a mut Peer>,
    /// The step's paced rate (a member's own verdict reads it).
    rate: Option<f64>,
    window: Option<u64>,
    figures: Option<WindowFigures>,
}

impl<'a> PeerHooks<'a> {
    /// `rate`: the step's paced rate (a group member's own verdict reads it).
    pub fn new(peer: Option<&'a mut Peer>, rate: Option<f64>) -> PeerHooks<'a> {
        PeerHooks { peer, rate, window: None, figures: None }
    }

    /// drop's figures for the window, once it closed.
    pub fn take_figures(&mut self) -> Option<WindowFigures> {
        self.figures.take()
    }
}

impl WindowHooks for PeerHooks<'_> {
    fn start(&mut self, streams: Option<&seqtrack::StreamEdge>) -> Result<(), StepFailure> {
        let Some(p) = self.peer.as_deref_mut() else { return Ok(()) };
        match p.call(Request::StartWindow { streams: streams.cloned() })? {
            Response::WindowStarted { window } => {
                self.window = Some(window);
                Ok(())
            }
            other => Err(StepFailure::Unexpected { answer: format!("{other:?}"), request: "start_window" }),
        }
    }

    fn end(&mut self, w: &SenderWindow) -> Result<(), StepFailure> {
        let Some(p) = self.peer.as_deref_mut() else { return Ok(()) };
        let window = self.window.ok_or(StepFailure::NoWindow)?;
        let req = match p.member {
            // A member's own sending, judged on its own counters alone: the
            // group's row for it says whether it held back the group.
            Some(_) => Request::GroupEnd {
                window,
                sent_packets: w.total.packets,
                sent_bytes: w.total.bytes,
                cycles_per_packet: per_packet(w.total.busy_cycles, w.total.packets).cycles_per_packet,
                sender_limit: Some(attribution::verdict(w, None, self.rate).label()),
                streams: w.streams_at_end.clone(),
            },
            None => Request::EndWindow { window, streams: w.streams_at_end.clone() },
        };
        match p.call(req)? {
            Response::WindowFigures(f) => {
                self.figures = Some(*f);
                Ok(())
            }
            other => Err(StepFailure::Unexpected { answer: format!("{other:?}"), request: "end_window" }),
        }
    }

    fn peer_alive(&mut self) -> Result<(), StepFailure> {
        match self.peer.as_deref().and_then(Peer::gone) {
            Some(why) => Err(StepFailure::PeerGone(why)),
            None => Ok(()),
        }
    }
}
