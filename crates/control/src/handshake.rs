//! The handshake: hello, a challenge, then auth with a proof of the
//! secret, by the server's deadlines; its logic apart from any socket
//! (`Handshake`, fuzzed), and the loop that runs it on a connection.

use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime};

use crate::auth::{nonce, Secret};
use crate::lines::{send, Line, LineReader};
use crate::message::{error, parse_request, Request, Response, MAX_LINE};
use crate::shared::{Holder, HolderState, Shared};

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
pub(crate) enum NotServed {
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

/// A client through the handshake: whether it came while another held
/// drop (to join that one's group), and the group it came for.
pub(crate) struct Admitted {
    pub(crate) guest: bool,
    pub(crate) group: Option<String>,
}

/// hello, challenge, auth: by the deadlines, or the connection closes.
/// Nothing before a verified proof extends a deadline, and any error
/// before it ends the connection.
pub(crate) fn handshake(
    reader: &mut LineReader,
    writer: &mut TcpStream,
    peer: &str,
    shared: &Shared,
    accepted: Instant,
) -> Result<Admitted, NotServed> {
    let mut hs = Handshake::new(shared.cfg.secret.clone(), nonce());
    loop {
        let text = next_line(reader, writer, shared, accepted, hs.said_hello())?;
        match hs.step(&text) {
            HandshakeStep::Reply(id, r) => send(writer, id, &r).map_err(NotServed::Write)?,
            HandshakeStep::Refuse(id, r, why) => {
                let _ = send(writer, id, &r);
                if why == Refusal::WrongSecret {
                    tracing::warn!("control: {peer} gave a wrong secret");
                }
                return Err(NotServed::Refused(why));
            }
            HandshakeStep::Authenticated(id, group) => return admit(writer, peer, shared, id, group),
        }
    }
}

/// The handshake's next line, by its deadline: the first line's (and the
/// proof's) before hello, the proof's after.
fn next_line(
    reader: &mut LineReader,
    writer: &mut TcpStream,
    shared: &Shared,
    accepted: Instant,
    said_hello: bool,
) -> Result<Vec<u8>, NotServed> {
    let cfg = &shared.cfg;
    let first = accepted + cfg.first_line_deadline;
    let auth_by = accepted + cfg.auth_deadline;
    let deadline = if said_hello { auth_by } else { first.min(auth_by) };
    match reader.read_line(Some(deadline), shared.stop).map_err(NotServed::Read)? {
        Line::Text(t) => Ok(t),
        Line::TooLong => {
            let _ = send(writer, 0, &error(format!("message longer than {MAX_LINE} bytes")));
            Err(NotServed::TooLong)
        }
        Line::Eof => Err(NotServed::Closed),
        Line::Stopped => Err(NotServed::Stopping),
        Line::Timeout => {
            let (what, limit) =
                if said_hello { ("did not authenticate", cfg.auth_deadline) } else { ("sent no complete line", cfg.first_line_deadline) };
            let _ = send(writer, 0, &error(format!("{what} within {limit:?}: closing")));
            Err(NotServed::Timeout { what, limit })
        }
    }
}

/// An authenticated client: it holds drop, or joins the one who does as a
/// guest, or hears drop is busy; then drop's info answers its proof.
fn admit(writer: &mut TcpStream, peer: &str, shared: &Shared, id: u64, group: Option<String>) -> Result<Admitted, NotServed> {
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
    Ok(Admitted { guest, group })
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
