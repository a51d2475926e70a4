//! The control server's view of the receiver, and the bounded history of
//! what it served.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::fail::Failure;
use blastdrop::receiver::{Receiver, Snapshot, TrialFigures};
use blastdrop::socket_rx::{SocketReceiver, SocketSnapshot};
use control::{Backend, BackendError, ClientLink, PeerInfo, Prepared, WindowFigures};

/// How long a window waits for a memif peer's link before refusing to open.
pub(crate) const PEER_WAIT: Duration = Duration::from_secs(5);

pub(crate) fn lock<R>(rx: &Mutex<R>) -> MutexGuard<'_, R> {
    rx.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the control server drives: drop's receiver on DPDK ports, or on
/// the kernel's UDP sockets (drop --socket).
pub(crate) trait Lanes: Send + 'static {
    type Snapshot: Send;
    /// Receives on `queues` queues from now on; true when they changed.
    fn set_queues(&mut self, queues: u16) -> Result<bool, Failure>;
    fn links_up(&self) -> bool;
    /// Follows a peer's coming and going (memif): what changed, if anything.
    fn supervise(&mut self) -> Result<Option<String>, Failure>;
    fn receiving(&self) -> bool;
    fn trial_refusal(&self, edges: &[seqtrack::StreamEdge]) -> Option<seqtrack::NoExactAccount>;
    fn open_window(&mut self, edges: &[seqtrack::StreamEdge]) -> Self::Snapshot;
    fn snapshot(&self) -> Self::Snapshot;
    fn window(&self, a: &Self::Snapshot, b: &Self::Snapshot) -> Result<WindowFigures, BackendError>;
    fn trial_accounts(
        &self,
        starts: &[seqtrack::StreamEdge],
        ends: &[seqtrack::StreamEdge],
    ) -> Result<TrialFigures, seqtrack::NoExactAccount>;
    /// Parks lanes a leaving peer would pull rings from under (memif): whether it did.
    fn hold_for_departure(&mut self) -> Result<bool, Failure>;
}

impl Lanes for Receiver {
    type Snapshot = Snapshot;
    fn set_queues(&mut self, queues: u16) -> Result<bool, Failure> {
        Ok(Receiver::set_queues(self, queues)?)
    }
    fn links_up(&self) -> bool {
        Receiver::links_up(self)
    }
    fn supervise(&mut self) -> Result<Option<String>, Failure> {
        Ok(Receiver::supervise(self)?.map(|c| c.to_string()))
    }
    fn receiving(&self) -> bool {
        Receiver::receiving(self)
    }
    fn trial_refusal(&self, edges: &[seqtrack::StreamEdge]) -> Option<seqtrack::NoExactAccount> {
        Receiver::trial_refusal(self, edges)
    }
    fn open_window(&mut self, edges: &[seqtrack::StreamEdge]) -> Snapshot {
        Receiver::open_window(self, edges)
    }
    fn snapshot(&self) -> Snapshot {
        Receiver::snapshot(self)
    }
    fn window(&self, a: &Snapshot, b: &Snapshot) -> Result<WindowFigures, BackendError> {
        Receiver::window(self, a, b)
    }
    fn trial_accounts(
        &self,
        starts: &[seqtrack::StreamEdge],
        ends: &[seqtrack::StreamEdge],
    ) -> Result<TrialFigures, seqtrack::NoExactAccount> {
        Receiver::trial_accounts(self, starts, ends)
    }
    fn hold_for_departure(&mut self) -> Result<bool, Failure> {
        Ok(Receiver::hold_for_departure(self)?)
    }
}

impl Lanes for SocketReceiver {
    type Snapshot = SocketSnapshot;
    fn set_queues(&mut self, queues: u16) -> Result<bool, Failure> {
        Ok(SocketReceiver::set_queues(self, queues)?)
    }
    fn links_up(&self) -> bool {
        true
    }
    fn supervise(&mut self) -> Result<Option<String>, Failure> {
        Ok(None)
    }
    fn receiving(&self) -> bool {
        true
    }
    fn trial_refusal(&self, edges: &[seqtrack::StreamEdge]) -> Option<seqtrack::NoExactAccount> {
        SocketReceiver::trial_refusal(self, edges)
    }
    fn open_window(&mut self, edges: &[seqtrack::StreamEdge]) -> SocketSnapshot {
        SocketReceiver::open_window(self, edges)
    }
    fn snapshot(&self) -> SocketSnapshot {
        SocketReceiver::snapshot(self)
    }
    fn window(&self, a: &SocketSnapshot, b: &SocketSnapshot) -> Result<WindowFigures, BackendError> {
        SocketReceiver::window(self, a, b)
    }
    fn trial_accounts(
        &self,
        starts: &[seqtrack::StreamEdge],
        ends: &[seqtrack::StreamEdge],
    ) -> Result<TrialFigures, seqtrack::NoExactAccount> {
        // One "port": its share is the whole, which a single port's figures do not carry.
        Ok(TrialFigures { accounts: SocketReceiver::trial_accounts(self, starts, ends)?, per_port: Vec::new() })
    }
    fn hold_for_departure(&mut self) -> Result<bool, Failure> {
        Ok(false)
    }
}

/// The control server's view of the receiver.
pub(crate) struct DropBackend<R: Lanes> {
    pub(crate) rx: Arc<Mutex<R>>,
    pub(crate) info: PeerInfo,
    pub(crate) baseline: Option<R::Snapshot>,
    /// Where the senders' streams stood when the open window started (its
    /// trial frames are theirs from there), or why they are not counted.
    pub(crate) trial_starts: Result<Vec<seqtrack::StreamEdge>, seqtrack::NoExactAccount>,
    /// The sessions and windows served, for the JSON record.
    pub(crate) history: Arc<Mutex<History>>,
}

pub(crate) use records::drop::{History, SessionRecord};

pub(crate) const MAX_WINDOWS: usize = 1000;
pub(crate) const MAX_SESSIONS: usize = 100;

pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Keeps a window served, and counts it in its session; the oldest is let
/// go past MAX_WINDOWS.
fn remember(h: &mut History, f: WindowFigures) {
    blastdrop::events::emit("window", &f);
    if let Some(s) = h.sessions.back_mut() {
        s.windows += 1;
        s.incomplete_windows += u64::from(f.incomplete.is_some());
    }
    h.windows_served += 1;
    h.windows.push_back(f);
    if h.windows.len() > MAX_WINDOWS {
        h.windows.pop_front();
        h.windows_not_kept += 1;
    }
}

impl<R: Lanes> Backend for DropBackend<R> {
    fn info(&mut self) -> PeerInfo {
        self.info.clone()
    }

    fn prepare(&mut self, rx_queues: u16, max_size: u32) -> Result<Prepared, BackendError> {
        self.baseline = None;
        if max_size > self.info.max_size {
            return Err(BackendError::Refused(format!(
                "frames of {max_size} B asked, drop takes up to {} B: restart drop with --max-size {max_size}",
                self.info.max_size
            )));
        }
        let mut rx = lock(&self.rx);
        let restarted = rx.set_queues(rx_queues).map_err(failed)?;
        if restarted {
            tracing::info!("control: now receiving on {rx_queues} queue(s)");
        }
        Ok(Prepared { rx_queues, restarted, link_up: rx.links_up() })
    }

    fn start_window(&mut self, streams: &[seqtrack::StreamEdge], client: ClientLink<'_>) -> Result<(), BackendError> {
        // A memif port's lanes start once its peer is connected: a window
        // opened before then would count what no lane polled. A client
        // killed before its port connects ends the wait (drop stays free).
        let until = Instant::now() + PEER_WAIT;
        loop {
            {
                let mut rx = lock(&self.rx);
                if let Some(what) = rx.supervise().map_err(failed)? {
                    blastdrop::say!("drop: {what}");
                }
                if rx.receiving() {
                    self.trial_starts = match rx.trial_refusal(streams) {
                        _ if streams.is_empty() => Err(seqtrack::NoExactAccount::NoSequenceNumbers),
                        Some(why) => Err(why),
                        None => Ok(streams.to_vec()),
                    };
                    self.baseline = Some(rx.open_window(self.trial_starts.as_deref().unwrap_or(&[])));
                    return Ok(());
                }
            }
            if Instant::now() >= until {
                return Err(BackendError::NotReceiving(PEER_WAIT));
            }
            if client.gone() {
                return Err(BackendError::ClientGone);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn end_window(&mut self, window: u64, streams: &[seqtrack::StreamEdge]) -> Result<WindowFigures, BackendError> {
        let a = self.baseline.take().ok_or(BackendError::NoWindow)?;
        let rx = lock(&self.rx);
        let b = rx.snapshot();
        let mut f = rx.window(&a, &b)?;
        f.window = window;
        let starts = std::mem::replace(&mut self.trial_starts, Err(seqtrack::NoExactAccount::NoWindow));
        match starts.and_then(|s| rx.trial_accounts(&s, streams)) {
            Ok(TrialFigures { accounts: parts, per_port }) => {
                let mut sum = seqtrack::TrialAccount::default();
                parts.iter().for_each(|p| sum.merge(p));
                for (port, (n, bytes)) in f.ports.iter_mut().zip(per_port) {
                    (port.trial_received, port.trial_received_bytes) = (Some(n), Some(bytes));
                }
                f.other_frames = Some(f.packets.saturating_sub(sum.received));
                (f.trial, f.trial_parts) = (Some(sum), parts);
            }
            Err(why) => f.trial_unavailable = Some(why.to_string()),
        }
        let lost = match &f.trial {
            Some(t) => format!("lost {} of {} sent (exact), {} other frame(s)", t.lost, t.sent, f.other_frames.unwrap_or(0)),
            None => format!("lost about {} (gap estimate)", f.probe.lost),
        };
        let drops = match &f.udp {
            Some(u) => {
                format!("the sockets dropped {}, RcvbufErrors +{}, backlog drops +{}", f.socket_drops, u.rcvbuf_errors, u.softnet_dropped)
            }
            None => format!("imissed {} rx_nombuf {}", f.imissed, f.rx_nombuf),
        };
        blastdrop::say!(
            "drop: window {window}: received {} frames, {} bytes in {:.3} s on {} queue(s) ({:.3} Mpps); {drops}; {lost}",
            f.packets,
            f.bytes,
            f.seconds,
            f.queues.len(),
            f.packets as f64 / f.seconds.max(1e-9) / 1e6,
        );
        if let Some(e) = f.trial.as_ref().and_then(|t| t.error(None)) {
            blastdrop::say!("drop: window {window}: {e}");
        }
        if let Some(a) = &f.arrivals {
            blastdrop::say!("drop: arrivals in window {window}: {}", blastdrop::figures::arrivals_text(a));
        }
        remember(&mut self.history.lock().unwrap_or_else(|e| e.into_inner()), f.clone());
        Ok(f)
    }

    fn abandon_window(&mut self, window: u64, why: &str) {
        let Some(a) = self.baseline.take() else { return };
        let rx = lock(&self.rx);
        let b = rx.snapshot();
        let mut f = match rx.window(&a, &b) {
            Ok(f) => f,
            Err(e) => control::WindowFigures { incomplete: Some(e.to_string()), ..Default::default() },
        };
        f.window = window;
        f.incomplete = Some(format!("{why}{}", f.incomplete.as_ref().map_or(String::new(), |e| format!("; {e}"))));
        blastdrop::say!("drop: window {window} incomplete ({why}): {} frames until then; not a measurement", f.packets);
        remember(&mut self.history.lock().unwrap_or_else(|e| e.into_inner()), f);
    }

    fn window_group(&mut self, window: u64, group: &control::GroupFigures) {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = h.windows.iter_mut().rev().find(|f| f.window == window) {
            f.group = Some(Box::new(group.clone()));
        }
    }

    fn session_started(&mut self, client: &str) {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        h.sessions.push_back(SessionRecord {
            client: client.to_string(),
            started: unix_now(),
            ended: None,
            why_ended: None,
            windows: 0,
            incomplete_windows: 0,
        });
        if h.sessions.len() > MAX_SESSIONS {
            h.sessions.pop_front();
            h.sessions_not_kept += 1;
        }
        self.baseline = None;
    }

    fn session_ended(&mut self, _client: &str, why: &str) {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = h.sessions.back_mut() {
            s.ended = Some(unix_now());
            s.why_ended = Some(why.to_string());
        }
        self.baseline = None;
    }

    fn client_leaving(&mut self) {
        // memif unmaps its rings on the interrupt thread when the peer
        // leaves, under any lane still polling them: the lanes park before
        // blast may exit, and start again when a peer connects.
        match lock(&self.rx).hold_for_departure() {
            Ok(true) => tracing::info!("control: client leaving; memif lanes parked until a peer connects again"),
            Ok(false) => {}
            Err(e) => tracing::error!("control: parking the lanes failed: {}", e.message),
        }
    }
}

/// A failure of drop's receiver, as the control channel reports it.
fn failed(f: impl Into<Failure>) -> BackendError {
    let f = f.into();
    if f.code == crate::fail::USAGE {
        BackendError::Refused(f.message)
    } else {
        BackendError::Failed(f.message)
    }
}
