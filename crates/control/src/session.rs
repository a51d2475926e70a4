//! An authenticated session: its requests read line by line until it
//! ends, each routed to the client's own run or, for a group member,
//! through the group's barriers.

use std::net::TcpStream;
use std::time::{Instant, SystemTime};

use crate::backend::ClientLink;
use crate::group_run::MemberSending;
use crate::group_session;
use crate::lines::{send, Line, LineReader};
use crate::message::{error, parse_request, PeerInfo, Request, Response, MAX_LINE, MIN_FRAME_SIZE};
use crate::shared::{Holder, HolderState, Shared};
use crate::window::Windows;

/// What a session is to the server besides its socket.
pub(crate) struct SessionState {
    /// The group trial it came for (said at auth); it must join it first.
    group: Option<String>,
    /// Its index in the group, once it joined.
    pub(crate) member: Option<u16>,
    /// Its own run's windows (a group member's are the group's).
    windows: Windows,
}

impl SessionState {
    pub(crate) fn new(group: Option<String>) -> SessionState {
        SessionState { group, member: None, windows: Windows::default() }
    }
}

/// How a session ended.
pub(crate) struct SessionEnd {
    pub(crate) why: String,
    /// The id of the client's bye, whose answer the server sends only once
    /// the session is released: a client told "bye" may start the next run
    /// at once and must not be told drop is busy with its own last one.
    pub(crate) bye: Option<u64>,
}

/// Serves an authenticated session until it ends.
pub(crate) fn session(reader: &mut LineReader, writer: &mut TcpStream, peer: &str, shared: &Shared, st: &mut SessionState) -> SessionEnd {
    let cfg = &shared.cfg;
    let mut bye = None;
    let info = shared.backend().info();
    let mut last_heard = Instant::now();
    let why = loop {
        let limit = if st.windows.open().is_some() { cfg.window_timeout } else { cfg.idle_timeout };
        let line = match reader.read_line(Some(last_heard + limit), shared.stop) {
            Ok(Line::Eof) => break "client closed the connection".to_string(),
            Ok(Line::Stopped) => break "server stopping".into(),
            Ok(Line::Timeout) => break format!("client silent for {limit:?}"),
            Ok(l) => {
                last_heard = Instant::now();
                l
            }
            Err(e) => break format!("read failed: {e}"),
        };
        let (id, reply) = match line {
            Line::Text(text) => match parse_request(&text) {
                Err((id, e)) => (id, error(e.to_string())),
                Ok(env) => (env.id, dispatch(env.body, &info, shared, peer, st, ClientLink::of(writer))),
            },
            _ => (0, error(format!("message longer than {MAX_LINE} bytes"))),
        };
        if matches!(reply, Response::Bye) {
            bye = Some(id);
            break "client said bye".into();
        }
        if let Err(e) = send(writer, id, &reply) {
            break format!("write failed: {e}");
        }
    };
    if let Some(w) = st.windows.abandon(&mut *shared.backend(), &why) {
        tracing::warn!("control: {peer} went away with measured window {w} open ({why}): it is recorded as incomplete");
    }
    SessionEnd { why, bye }
}

/// Routes a request: a group member's go through the group's barriers; a
/// guest may only join; the holder's first request settles what it does.
fn dispatch(req: Request, info: &PeerInfo, shared: &Shared, peer: &str, st: &mut SessionState, client: ClientLink<'_>) -> Response {
    if let Request::Join { group, senders, plan } = req {
        return join(shared, peer, st, &group, senders, plan);
    }
    if let Some(m) = st.member {
        return match req {
            Request::Prepare { rx_queues, max_size } => match check_prepare(info, rx_queues, max_size) {
                Some(e) => e,
                None => group_session::prepare(shared, m, rx_queues, max_size),
            },
            Request::StartWindow { streams } => group_session::start_window(shared, m, streams, client),
            Request::GroupEnd { window, sent_packets, sent_bytes, cycles_per_packet, sender_limit, streams } => {
                let sent = MemberSending { packets: sent_packets, bytes: sent_bytes, cycles_per_packet, sender_limit, streams };
                group_session::end_window(shared, m, window, sent)
            }
            Request::EndWindow { .. } => error("a group member ends its window with group_end (what it sent)"),
            other => request(other, info, &mut st.windows, shared, client),
        };
    }
    if st.group.is_some() && !matches!(req, Request::Bye | Request::Hello | Request::Auth { .. }) {
        return error("this session came for a group trial: join it first");
    }
    request(req, info, &mut st.windows, shared, client)
}

fn join(shared: &Shared, peer: &str, st: &mut SessionState, group: &str, senders: u16, plan: crate::StepPlan) -> Response {
    if st.member.is_some() {
        return error("already a member of a group: one group per session");
    }
    if st.group.as_deref() != Some(group) {
        return error(match &st.group {
            Some(g) => format!("this session came for group {g}, not {group}"),
            None => "this session came for a run of its own: say the group at auth to join one".into(),
        });
    }
    match group_session::join(shared, peer, group, senders, plan) {
        Ok((m, answer)) => {
            st.member = Some(m);
            let mut holder = shared.holder();
            if holder.is_none() {
                // The client that announced the group left before it formed: the group holds drop now.
                *holder = Some(Holder { client: peer.to_string(), since: SystemTime::now(), state: HolderState::Group(group.to_string()) });
            }
            answer
        }
        Err(e) => error(e.to_string()),
    }
}

fn check_prepare(info: &PeerInfo, rx_queues: u16, max_size: u32) -> Option<Response> {
    if rx_queues == 0 || rx_queues > info.max_rx_queues {
        return Some(error(format!("rx_queues {rx_queues} is out of range: drop takes 1 to {}", info.max_rx_queues)));
    }
    if max_size < MIN_FRAME_SIZE || max_size > info.max_size {
        return Some(error(format!(
            "max_size {max_size} is out of range: drop takes frames of {MIN_FRAME_SIZE} to {} bytes",
            info.max_size
        )));
    }
    None
}

/// One request of an authenticated session.
fn request(req: Request, info: &PeerInfo, windows: &mut Windows, shared: &Shared, client: ClientLink<'_>) -> Response {
    match req {
        Request::Hello | Request::Auth { .. } => error("already authenticated: this session is open"),
        Request::Prepare { rx_queues, max_size } => match check_prepare(info, rx_queues, max_size) {
            Some(e) => e,
            None => windows.prepare(&mut *shared.backend(), rx_queues, max_size, "the client"),
        },
        Request::StartWindow { streams } => windows.start(&mut *shared.backend(), streams.as_slice(), client),
        Request::EndWindow { window, streams } => windows.end(&mut *shared.backend(), window, streams.as_slice()),
        Request::Bye => {
            shared.backend().client_leaving();
            Response::Bye
        }
        Request::Join { .. } => error("join comes first in a session"),
        Request::GroupEnd { .. } => error("group_end is for a group member: join a group first"),
    }
}
