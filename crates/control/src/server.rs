//! drop's end of the control channel. Built for a shared management
//! network: nobody holds the door (every connection has its own thread and
//! deadlines, and one that has not authenticated in time is closed), one
//! client's session at a time (others are told who holds it and since
//! when), requests assembled into lines across any number of reads, and
//! every count bounded (connections, line length, what is buffered).

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use crate::auth::{nonce, Secret};
use crate::group_session::{self, GroupRun};
use crate::message::{parse_request, reply_line, PeerInfo, Prepared, Request, Response, WindowFigures, MAX_LINE, MIN_FRAME_SIZE};

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
}

/// What the server drives: drop's receiver, or a stand-in in tests.
pub trait Backend: Send {
    fn info(&mut self) -> PeerInfo;
    fn prepare(&mut self, rx_queues: u16, max_size: u32) -> Result<Prepared, BackendError>;
    /// Baselines every counter; the window starts now, its trial frames
    /// those of the senders' streams from these edges on (none given: no
    /// exact account of it).
    fn start_window(&mut self, streams: &[seqtrack::StreamEdge]) -> Result<(), BackendError>;
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
    fn window_group(&mut self, _window: u64, _group: &crate::message::GroupFigures) {}
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The shared secret clients must prove; None: any client (loopback only).
    pub secret: Option<Secret>,
    /// How long a session may stay silent with no window open.
    pub idle_timeout: Duration,
    /// How long a session may stay silent with a window open (a step's
    /// warm-up and duration must fit).
    pub window_timeout: Duration,
    /// From accept to the first complete line.
    pub first_line_deadline: Duration,
    /// From accept to a verified proof.
    pub auth_deadline: Duration,
    /// Connections not yet authenticated, at most; more are refused at once.
    pub max_pending: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            secret: None,
            idle_timeout: Duration::from_secs(60),
            window_timeout: Duration::from_secs(3600),
            first_line_deadline: Duration::from_secs(3),
            auth_deadline: Duration::from_secs(5),
            max_pending: 16,
        }
    }
}

/// One line, or why there is none.
#[derive(Debug)]
enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
    /// The deadline passed first (what had arrived of a line is kept).
    Timeout,
    Stopped,
}

/// Assembles lines from any number of reads, keeping a partial line across
/// reads and read timeouts. Holds at most MAX_LINE bytes of a line; a
/// longer one is consumed to its newline and reported as too long.
struct LineReader {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Bytes read past the last newline handed out.
    pending: Vec<u8>,
    too_long: bool,
}

impl LineReader {
    fn new(stream: TcpStream) -> LineReader {
        LineReader { stream, buf: Vec::new(), pending: Vec::new(), too_long: false }
    }

    /// Takes the next line out of what has arrived, if a whole one has.
    fn take_line(&mut self) -> Option<Line> {
        let i = self.pending.iter().position(|&b| b == b'\n')?;
        let rest = self.pending.split_off(i + 1);
        let mut chunk = std::mem::replace(&mut self.pending, rest);
        chunk.pop();
        let line = if self.too_long || self.buf.len() + chunk.len() > MAX_LINE {
            Line::TooLong
        } else {
            self.buf.extend_from_slice(&chunk);
            Line::Text(std::mem::take(&mut self.buf))
        };
        self.buf.clear();
        self.too_long = false;
        Some(line)
    }

    /// The next line, by `deadline` (None: no limit) unless `stop` is set.
    fn read_line(&mut self, deadline: Option<Instant>, stop: &AtomicBool) -> std::io::Result<Line> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(l) = self.take_line() {
                return Ok(l);
            }
            // No newline in what is pending: it all belongs to the line.
            if !self.too_long {
                if self.buf.len() + self.pending.len() > MAX_LINE {
                    self.too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.append(&mut self.pending);
                }
            }
            self.pending.clear();
            if stop.load(Ordering::Relaxed) {
                return Ok(Line::Stopped);
            }
            let wait = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left.min(TICK),
                    _ => return Ok(Line::Timeout),
                },
                None => TICK,
            };
            self.stream.set_read_timeout(Some(wait))?;
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(Line::Eof),
                Ok(n) => self.pending.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                    if deadline.is_none() {
                        return Ok(Line::Timeout);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// How often a waiting read looks at the stop flag.
pub(crate) const TICK: Duration = Duration::from_millis(100);

/// Who holds the session, and since when.
struct Holder {
    client: String,
    since: SystemTime,
    state: HolderState,
}

/// What the holder does with drop.
#[derive(Debug, Clone, PartialEq)]
enum HolderState {
    /// A run of its own: nobody else is served until it ends.
    Single,
    /// Group trial `0`: its members are served (until it is full), nobody else.
    Group(String),
}

impl Holder {
    fn busy(&self) -> String {
        format!("busy: serving {} since {} UTC; try again when its run ends", self.client, utc(self.since))
    }
}

pub(crate) struct Shared {
    backend: Arc<Mutex<dyn Backend>>,
    pub(crate) cfg: ServerConfig,
    session: Mutex<Option<Holder>>,
    pending: AtomicUsize,
    pub(crate) stop: &'static AtomicBool,
    /// The group trial being formed or run, if any; its members wait on `group_moved`.
    pub(crate) group: Mutex<Option<GroupRun>>,
    pub(crate) group_moved: Condvar,
}

impl Shared {
    pub(crate) fn backend(&self) -> MutexGuard<'_, dyn Backend + 'static> {
        self.backend.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn holder(&self) -> MutexGuard<'_, Option<Holder>> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Why a client coming for `group` (None: a run of its own) cannot be served now.
    fn busy_for(&self, group: Option<&str>) -> Option<String> {
        let holder = self.holder();
        let h = holder.as_ref()?;
        match (&h.state, group) {
            (HolderState::Group(g), Some(want)) if g == want && self.group_joinable() => None,
            (HolderState::Group(_), _) => Some(match self.group_text() {
                Some(g) => format!("busy: serving {g} since {} UTC; try again when its run ends", utc(h.since)),
                None => h.busy(),
            }),
            (HolderState::Single, _) => Some(h.busy()),
        }
    }

    /// The busy answer for a connection not yet authenticated: none while a
    /// group is forming (its members must get through to say so).
    fn busy_text(&self) -> Option<String> {
        let forming = matches!(self.holder().as_ref().map(|h| &h.state), Some(HolderState::Group(_))) && self.group_joinable();
        if forming {
            return None;
        }
        self.busy_for(None)
    }

    /// The group may take a member: formed with room, or not formed yet.
    fn group_joinable(&self) -> bool {
        self.group.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_none_or(GroupRun::joinable)
    }

    fn group_text(&self) -> Option<String> {
        self.group.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(GroupRun::describe)
    }
}

/// "2026-11-30 17:20:01" for a time.
fn utc(t: SystemTime) -> String {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Writes one reply; a client that does not read within a second is gone.
fn send(stream: &mut TcpStream, id: u64, reply: &Response) -> std::io::Result<()> {
    stream.set_write_timeout(Some(Duration::from_secs(1)))?;
    stream.write_all(reply_line(id, reply).as_bytes())
}

pub(crate) fn error(e: impl Into<String>) -> Response {
    Response::Error { error: e.into() }
}

/// Accepts connections until `stop` is set, each on its own thread: the
/// accept loop never waits on a peer.
pub fn serve(listener: TcpListener, backend: Arc<Mutex<dyn Backend>>, cfg: ServerConfig, stop: &'static AtomicBool) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let shared = Arc::new(Shared {
        backend,
        cfg,
        session: Mutex::new(None),
        pending: AtomicUsize::new(0),
        stop,
        group: Mutex::new(None),
        group_moved: Condvar::new(),
    });
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        threads.retain(|t| !t.is_finished());
        match listener.accept() {
            Ok((mut stream, addr)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                let peer = addr.to_string();
                if let Some(busy) = shared.busy_text() {
                    tracing::info!("control: {peer} refused ({busy})");
                    let _ = send(&mut stream, 0, &error(busy));
                    continue;
                }
                if shared.pending.load(Ordering::SeqCst) >= shared.cfg.max_pending {
                    tracing::warn!("control: {peer} refused: {} connections are already waiting to authenticate", shared.cfg.max_pending);
                    let _ = send(&mut stream, 0, &error("busy: too many connections waiting to authenticate; try again shortly"));
                    continue;
                }
                shared.pending.fetch_add(1, Ordering::SeqCst);
                let s = shared.clone();
                match std::thread::Builder::new().name("bd-control".into()).spawn(move || connection(stream, peer, &s)) {
                    Ok(t) => threads.push(t),
                    Err(e) => {
                        shared.pending.fetch_sub(1, Ordering::SeqCst);
                        tracing::warn!("control: cannot start a thread for a connection: {e}");
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait_readable(&listener, TICK),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::warn!("control: accept failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    for t in threads {
        let _ = t.join();
    }
    Ok(())
}

/// Waits until a connection is waiting to be accepted, or `timeout`: a
/// burst of connects is taken as it comes (a sleep would let the kernel's
/// accept queue overflow, and a refused connect waits a second to retry).
fn wait_readable(listener: &TcpListener, timeout: Duration) {
    use std::os::fd::AsRawFd;
    let mut fds = [libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
    // SAFETY: one valid pollfd, for the call's duration.
    unsafe { libc::poll(fds.as_mut_ptr(), 1, timeout.as_millis() as libc::c_int) };
}

/// Counts a connection as pending until it authenticates or ends.
struct PendingGuard<'a>(&'a AtomicUsize, bool);

impl PendingGuard<'_> {
    fn done(&mut self) {
        if !self.1 {
            self.1 = true;
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.done();
    }
}

/// One connection: the handshake within its deadlines, then the session.
fn connection(stream: TcpStream, peer: String, shared: &Shared) {
    let mut pending = PendingGuard(&shared.pending, false);
    let accepted = Instant::now();
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("control: {peer}: {e}");
            return;
        }
    };
    let mut reader = LineReader::new(stream);
    let admitted = match handshake(&mut reader, &mut writer, &peer, shared, accepted) {
        Ok(a) => a,
        Err(why) => {
            tracing::info!("control: {peer} not served ({why})");
            return;
        }
    };
    pending.done();
    shared.backend().session_started(&peer);
    tracing::info!("control: {peer} authenticated; session started");
    let guest = admitted.guest;
    let mut st = SessionState { group: admitted.group, member: None };
    let why = session(&mut reader, &mut writer, &peer, shared, &mut st);
    shared.backend().session_ended(&peer, &why);
    // The holder's run ends with its session; a group's with its last member.
    let group_over = st.member.map(|m| group_session::leave(shared, m, &why));
    let mut holder = shared.holder();
    match group_over {
        Some(true) => *holder = None,
        Some(false) => {}
        // The holder left without joining: the group it announced is not
        // formed unless a guest formed it.
        None if !guest && lock_group(shared).is_none() => *holder = None,
        None => {}
    }
    drop(holder);
    tracing::info!("control: {peer} done ({why})");
}

/// The handshake's logic, apart from any socket: hello, then auth with a
/// proof of the secret. Fuzzed (fuzz/fuzz_targets/control_message.rs).
pub struct Handshake {
    nonce: String,
    secret: Option<Secret>,
    said_hello: bool,
}

/// What one line of the handshake leads to.
#[derive(Debug, PartialEq)]
pub enum HandshakeStep {
    /// Answer this and read the next line (the challenge).
    Reply(u64, Response),
    /// The proof holds: the session may start (answer with drop's info).
    Authenticated(u64, Option<String>),
    /// Answer this and close the connection.
    Refuse(u64, Response, Refusal),
}

/// Why the handshake refused a client (for the log; the client gets the Response).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("refused before authenticating: {0}")]
    BadMessage(String),
    #[error("wrong secret")]
    WrongSecret,
    #[error("{0} before authenticating")]
    OutOfOrder(&'static str),
}

/// Why a connection closed before its session began (logged).
#[derive(Debug, thiserror::Error)]
enum NotServed {
    #[error("read failed: {0}")]
    Read(std::io::Error),
    #[error("write failed: {0}")]
    Write(std::io::Error),
    #[error("line too long before authenticating")]
    TooLong,
    #[error("closed before authenticating")]
    Closed,
    #[error("server stopping")]
    Stopping,
    #[error("{what} within {limit:?}")]
    Timeout { what: &'static str, limit: Duration },
    #[error(transparent)]
    Refused(Refusal),
    #[error("busy")]
    Busy,
}

impl Handshake {
    pub fn new(secret: Option<Secret>, nonce: String) -> Handshake {
        Handshake { nonce, secret, said_hello: false }
    }

    /// Whether hello came (the auth deadline applies from then).
    pub fn said_hello(&self) -> bool {
        self.said_hello
    }

    pub fn step(&mut self, line: &[u8]) -> HandshakeStep {
        let env = match parse_request(line) {
            Ok(env) => env,
            Err((id, e)) => return HandshakeStep::Refuse(id, error(e.to_string()), Refusal::BadMessage(e.to_string())),
        };
        match (env.body, self.said_hello) {
            (Request::Hello, false) => {
                self.said_hello = true;
                HandshakeStep::Reply(env.id, Response::Challenge { nonce: self.nonce.clone(), auth: self.secret.is_some() })
            }
            (Request::Auth { proof, group }, true) => match &self.secret {
                Some(s) if !s.verify(&self.nonce, &proof) => HandshakeStep::Refuse(
                    env.id,
                    error("wrong secret: give blast the secret drop was started with (--token-file or BLASTDROP_TOKEN)"),
                    Refusal::WrongSecret,
                ),
                _ => HandshakeStep::Authenticated(env.id, group),
            },
            (other, said_hello) => {
                let expected = if said_hello { "auth" } else { "hello" };
                HandshakeStep::Refuse(
                    env.id,
                    error(format!("{} before authenticating: send {expected} first", kind(&other))),
                    Refusal::OutOfOrder(kind(&other)),
                )
            }
        }
    }
}

/// hello, challenge, auth: by the deadlines, or the connection closes.
/// Nothing before a verified proof extends a deadline, and any error
/// before it ends the connection.
/// A client through the handshake: whether it came while another held
/// drop (to join that one's group), and the group it came for.
struct Admitted {
    guest: bool,
    group: Option<String>,
}

fn handshake(
    reader: &mut LineReader,
    writer: &mut TcpStream,
    peer: &str,
    shared: &Shared,
    accepted: Instant,
) -> Result<Admitted, NotServed> {
    let cfg = &shared.cfg;
    let first = accepted + cfg.first_line_deadline;
    let auth_by = accepted + cfg.auth_deadline;
    let mut hs = Handshake::new(cfg.secret.clone(), nonce());
    loop {
        let deadline = if hs.said_hello() { auth_by } else { first.min(auth_by) };
        let line = reader.read_line(Some(deadline), shared.stop).map_err(NotServed::Read)?;
        let text = match line {
            Line::Text(t) => t,
            Line::TooLong => {
                let _ = send(writer, 0, &error(format!("message longer than {MAX_LINE} bytes")));
                return Err(NotServed::TooLong);
            }
            Line::Eof => return Err(NotServed::Closed),
            Line::Stopped => return Err(NotServed::Stopping),
            Line::Timeout => {
                let (what, limit) = if hs.said_hello() {
                    ("did not authenticate", cfg.auth_deadline)
                } else {
                    ("sent no complete line", cfg.first_line_deadline)
                };
                let _ = send(writer, 0, &error(format!("{what} within {limit:?}: closing")));
                return Err(NotServed::Timeout { what, limit });
            }
        };
        match hs.step(&text) {
            HandshakeStep::Reply(id, r) => send(writer, id, &r).map_err(NotServed::Write)?,
            HandshakeStep::Refuse(id, r, why) => {
                let _ = send(writer, id, &r);
                if why == Refusal::WrongSecret {
                    tracing::warn!("control: {peer} gave a wrong secret");
                }
                return Err(NotServed::Refused(why));
            }
            HandshakeStep::Authenticated(id, group) => {
                // The session is this client's from before it hears so,
                // unless another got there first.
                if let Some(busy) = shared.busy_for(group.as_deref()) {
                    let _ = send(writer, id, &error(busy));
                    return Err(NotServed::Busy);
                }
                let guest = {
                    let mut holder = shared.holder();
                    if holder.is_some() {
                        true
                    } else {
                        let state = group.clone().map_or(HolderState::Single, HolderState::Group);
                        *holder = Some(Holder { client: peer.to_string(), since: SystemTime::now(), state });
                        false
                    }
                };
                let info = shared.backend().info();
                if let Err(e) = send(writer, id, &Response::Hello { info }) {
                    if !guest {
                        *shared.holder() = None;
                    }
                    return Err(NotServed::Write(e));
                }
                return Ok(Admitted { guest, group });
            }
        }
    }
}

fn kind(r: &Request) -> &'static str {
    match r {
        Request::Hello => "hello",
        Request::Auth { .. } => "auth",
        Request::Prepare { .. } => "prepare",
        Request::StartWindow { .. } => "start_window",
        Request::EndWindow { .. } => "end_window",
        Request::Bye => "bye",
        Request::Join { .. } => "join",
        Request::GroupEnd { .. } => "group_end",
    }
}

/// What a session is to the server besides its socket.
struct SessionState {
    /// The group trial it came for (said at auth); it must join it first.
    group: Option<String>,
    /// Its index in the group, once it joined.
    member: Option<u16>,
}

fn lock_group(shared: &Shared) -> MutexGuard<'_, Option<GroupRun>> {
    shared.group.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serves an authenticated session until it ends. Returns why it ended.
fn session(reader: &mut LineReader, writer: &mut TcpStream, peer: &str, shared: &Shared, st: &mut SessionState) -> String {
    let cfg = &shared.cfg;
    let info = shared.backend().info();
    let mut window: Option<u64> = None;
    let mut next_window = 1u64;
    let mut last_heard = Instant::now();
    let why = loop {
        let limit = if window.is_some() { cfg.window_timeout } else { cfg.idle_timeout };
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
                Ok(env) => (env.id, dispatch(env.body, &info, &mut window, &mut next_window, shared, peer, st)),
            },
            _ => (0, error(format!("message longer than {MAX_LINE} bytes"))),
        };
        if let Err(e) = send(writer, id, &reply) {
            break format!("write failed: {e}");
        }
        if matches!(reply, Response::Bye) {
            break "client said bye".into();
        }
    };
    if let Some(w) = window {
        shared.backend().abandon_window(w, &why);
        tracing::warn!("control: {peer} went away with measured window {w} open ({why}): it is recorded as incomplete");
    }
    why
}

/// Routes a request: a group member's go through the group's barriers; a
/// guest may only join; the holder's first request settles what it does.
fn dispatch(
    req: Request,
    info: &PeerInfo,
    window: &mut Option<u64>,
    next_window: &mut u64,
    shared: &Shared,
    peer: &str,
    st: &mut SessionState,
) -> Response {
    if let Request::Join { group, senders, plan } = req {
        return join(shared, peer, st, &group, senders, plan);
    }
    if let Some(m) = st.member {
        return match req {
            Request::Prepare { rx_queues, max_size } => match check_prepare(info, rx_queues, max_size) {
                Some(e) => e,
                None => group_session::prepare(shared, m, rx_queues, max_size),
            },
            Request::StartWindow { streams } => group_session::start_window(shared, m, streams),
            Request::GroupEnd { window, sent_packets, sent_bytes, cycles_per_packet, sender_limit, streams } => {
                let sent =
                    group_session::MemberSending { packets: sent_packets, bytes: sent_bytes, cycles_per_packet, sender_limit, streams };
                group_session::end_window(shared, m, window, sent)
            }
            Request::EndWindow { .. } => error("a group member ends its window with group_end (what it sent)"),
            other => request(other, info, window, next_window, shared),
        };
    }
    if st.group.is_some() && !matches!(req, Request::Bye | Request::Hello | Request::Auth { .. }) {
        return error("this session came for a group trial: join it first");
    }
    request(req, info, window, next_window, shared)
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
        Err(e) => error(e),
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
fn request(req: Request, info: &PeerInfo, window: &mut Option<u64>, next_window: &mut u64, shared: &Shared) -> Response {
    match req {
        Request::Hello | Request::Auth { .. } => error("already authenticated: this session is open"),
        Request::Prepare { rx_queues, max_size } => {
            if let Some(e) = check_prepare(info, rx_queues, max_size) {
                return e;
            }
            let mut b = shared.backend();
            if let Some(w) = window.take() {
                b.abandon_window(w, "the client prepared the next step with this window open");
            }
            match b.prepare(rx_queues, max_size) {
                Ok(p) => Response::Prepared(p),
                Err(e) => error(e.to_string()),
            }
        }
        Request::StartWindow { streams } => {
            if window.is_some() {
                return error("a window is already open: end it first");
            }
            match shared.backend().start_window(streams.as_slice()) {
                Ok(()) => {
                    *window = Some(*next_window);
                    *next_window += 1;
                    Response::WindowStarted { window: window.unwrap_or_default() }
                }
                Err(e) => error(e.to_string()),
            }
        }
        Request::EndWindow { window: w, streams } => match *window {
            Some(open) if open == w => {
                *window = None;
                match shared.backend().end_window(w, streams.as_slice()) {
                    Ok(mut f) => {
                        f.window = w;
                        Response::WindowFigures(Box::new(f))
                    }
                    Err(e) => error(e.to_string()),
                }
            }
            Some(open) => error(format!("window {w} is not open (window {open} is)")),
            None => error(format!("window {w} is not open (none is)")),
        },
        Request::Bye => {
            shared.backend().client_leaving();
            Response::Bye
        }
        Request::Join { .. } => error("join comes first in a session"),
        Request::GroupEnd { .. } => error("group_end is for a group member: join a group first"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    static NO_STOP: AtomicBool = AtomicBool::new(false);

    #[test]
    fn lines_are_assembled_across_reads_and_pauses() {
        let (mut a, b) = pair();
        let mut r = LineReader::new(b);
        let t = std::thread::spawn(move || {
            for part in [&b"{\"v\":2,"[..], b"\"id\":1", b",\"type\":\"hello\"}\nsecond\n", b"thi", b"rd\n"] {
                a.write_all(part).unwrap();
                std::thread::sleep(Duration::from_millis(150));
            }
            a
        });
        let deadline = Some(Instant::now() + Duration::from_secs(5));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == br#"{"v":2,"id":1,"type":"hello"}"#));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == b"second"));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == b"third"));
        drop(t.join().unwrap());
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Eof));
    }

    #[test]
    fn long_lines_are_bounded_and_the_stream_stays_in_step() {
        let (mut a, b) = pair();
        let mut r = LineReader::new(b);
        let t = std::thread::spawn(move || {
            a.write_all(&vec![b'y'; MAX_LINE + 10]).unwrap();
            a.write_all(b"\nok\n").unwrap();
            a
        });
        let deadline = Some(Instant::now() + Duration::from_secs(5));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::TooLong));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == b"ok"));
        assert!(r.buf.capacity() <= 2 * MAX_LINE + 8192, "what is held stays bounded");
        drop(t.join().unwrap());
    }

    #[test]
    fn a_deadline_ends_a_partial_line() {
        let (mut a, b) = pair();
        let mut r = LineReader::new(b);
        a.write_all(b"{\"v\":2").unwrap();
        let t0 = Instant::now();
        assert!(matches!(r.read_line(Some(t0 + Duration::from_millis(300)), &NO_STOP).unwrap(), Line::Timeout));
        assert!(t0.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn utc_is_a_civil_date() {
        assert_eq!(utc(SystemTime::UNIX_EPOCH), "1970-01-01 00:00:00");
        assert_eq!(utc(SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_055_201)), "2026-11-30 16:13:21");
    }
}
