use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::auth::Secret;
use crate::message::{Envelope, PeerInfo, Request, Response, MAX_LINE, VERSION};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// Could not reach the server.
    Connect(String),
    /// The connection failed or the server said nothing in time.
    Io(String),
    /// drop closed or reset the connection: it exited or was killed.
    Gone(String),
    /// The server answered with an error.
    Remote(String),
    /// The answer made no sense.
    Protocol(String),
    /// drop is still starting: what it is doing (crate::starting).
    Starting(String),
    /// drop was still starting when the client's deadline passed.
    StillStarting { doing: String, waited: Duration },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Connect(e) => write!(f, "cannot reach drop's control port: {e}"),
            ClientError::Io(e) => write!(f, "control connection to drop failed: {e}"),
            ClientError::Gone(e) => write!(f, "the receiver is gone (drop exited or was killed?): {e}"),
            ClientError::Remote(e) => write!(f, "drop refused: {e}"),
            ClientError::Protocol(e) => write!(f, "drop answered nonsense: {e}"),
            ClientError::Starting(doing) => write!(f, "drop is starting: {doing}"),
            ClientError::StillStarting { doing, waited } => {
                write!(f, "drop is starting: {doing} (still starting after {waited:?}: raise --control-timeout to wait longer)")
            }
        }
    }
}

impl std::error::Error for ClientError {}

/// How drop's end of the control connection went, seen between requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionEnd {
    /// drop closed it: it exited or was killed.
    Closed,
    /// Reading it failed (the error's text: io::Error is not Clone).
    Failed(String),
}

impl fmt::Display for ConnectionEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectionEnd::Closed => f.write_str("drop closed the control connection"),
            ConnectionEnd::Failed(e) => write!(f, "the control connection failed: {e}"),
        }
    }
}

/// An I/O error on the control connection: a closed or reset connection
/// means drop is gone, anything else is a failure of the connection.
fn io_error(e: std::io::Error) -> ClientError {
    use std::io::ErrorKind::*;
    match e.kind() {
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
            ClientError::Gone(format!("the control connection broke ({e})"))
        }
        _ => ClientError::Io(e.to_string()),
    }
}

/// blast's end of the control channel.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    next_id: u64,
}

impl Client {
    pub fn connect(addr: &str, timeout: Duration) -> Result<Client, ClientError> {
        let addrs: Vec<_> = addr.to_socket_addrs().map_err(|e| ClientError::Connect(format!("{addr}: {e}")))?.collect();
        let mut last = String::from("no address");
        for a in addrs {
            match TcpStream::connect_timeout(&a, timeout) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    let writer = s.try_clone().map_err(|e| ClientError::Connect(e.to_string()))?;
                    return Ok(Client { reader: BufReader::new(s), writer, next_id: 1 });
                }
                Err(e) => last = format!("{a}: {e}"),
            }
        }
        Err(ClientError::Connect(last))
    }

    /// Connects and says hello, trying again while drop answers that it is
    /// still starting, until `timeout` has passed since the first try
    /// (each connect and answer waits up to `timeout` too, as one would).
    pub fn connect_when_ready(
        addr: &str,
        secret: Option<&Secret>,
        group: Option<&str>,
        timeout: Duration,
    ) -> Result<(Client, PeerInfo), ClientError> {
        const RETRY: Duration = Duration::from_millis(250);
        let t0 = Instant::now();
        loop {
            let mut c = Client::connect(addr, timeout)?;
            match c.handshake_for(secret, group, timeout) {
                Ok(info) => return Ok((c, info)),
                Err(ClientError::Starting(doing)) if t0.elapsed() + RETRY >= timeout => {
                    return Err(ClientError::StillStarting { doing, waited: timeout })
                }
                Err(ClientError::Starting(_)) => std::thread::sleep(RETRY),
                Err(e) => return Err(e),
            }
        }
    }

    /// The handshake: hello, then the answer to drop's challenge (proving
    /// the secret without sending it). Returns drop's description.
    pub fn handshake(&mut self, secret: Option<&Secret>, timeout: Duration) -> Result<PeerInfo, ClientError> {
        self.handshake_for(secret, None, timeout)
    }

    /// The handshake of a client that comes to join group trial `group`
    /// (None: a run of its own).
    pub fn handshake_for(&mut self, secret: Option<&Secret>, group: Option<&str>, timeout: Duration) -> Result<PeerInfo, ClientError> {
        let (nonce, auth) = match self.call(Request::Hello, timeout)? {
            Response::Challenge { nonce, auth } => (nonce, auth),
            other => return Err(ClientError::Protocol(format!("expected a challenge, got {other:?}"))),
        };
        let proof = match (auth, secret) {
            (false, _) => String::new(),
            (true, Some(s)) => s.proof(&nonce),
            (true, None) => {
                return Err(ClientError::Remote(
                    "it asks for the shared secret: give blast --token-file FILE or set BLASTDROP_TOKEN".into(),
                ))
            }
        };
        match self.call(Request::Auth { proof, group: group.map(str::to_string) }, timeout)? {
            Response::Hello { info } => Ok(info),
            other => Err(ClientError::Protocol(format!("expected hello after auth, got {other:?}"))),
        }
    }

    /// Whether the server closed the connection (or it broke), without
    /// waiting: between requests the server sends nothing, so anything
    /// readable now is its end of the stream.
    pub fn peer_gone(&self) -> Option<ConnectionEnd> {
        let s = self.reader.get_ref();
        if s.set_nonblocking(true).is_err() {
            return None;
        }
        let mut byte = [0u8; 1];
        let gone = match s.peek(&mut byte) {
            Ok(0) => Some(ConnectionEnd::Closed),
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
            Err(e) => Some(ConnectionEnd::Failed(e.to_string())),
        };
        let _ = s.set_nonblocking(false);
        gone
    }

    /// Sends `req` and waits up to `timeout` for its answer.
    pub fn call(&mut self, req: Request, timeout: Duration) -> Result<Response, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let env = Envelope { v: VERSION, id, body: req };
        let mut line = serde_json::to_string(&env).map_err(|e| ClientError::Protocol(e.to_string()))?;
        line.push('\n');
        self.writer.write_all(line.as_bytes()).map_err(io_error)?;
        self.reader.get_ref().set_read_timeout(Some(timeout)).map_err(|e| ClientError::Io(e.to_string()))?;
        let mut answer = String::new();
        match self.reader.by_ref().take(MAX_LINE as u64 + 1).read_line(&mut answer) {
            Ok(0) => return Err(ClientError::Gone("drop closed the control connection".into())),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(ClientError::Io(format!("no answer within {timeout:?}")))
            }
            Err(e) => return Err(io_error(e)),
        }
        let env: Envelope<Response> =
            serde_json::from_str(answer.trim_end()).map_err(|e| ClientError::Protocol(format!("{e}: {:.200}", answer.trim_end())))?;
        if env.v != VERSION {
            return Err(ClientError::Protocol(format!(
                "drop speaks protocol version {}, this blast {VERSION}: run blast and drop of the same release",
                env.v
            )));
        }
        // An error with id 0 is drop's own word before reading anything
        // (busy, or a deadline): it answers whatever was asked.
        if let (0, Response::Error { error }) = (env.id, &env.body) {
            return Err(match crate::starting::starting_of(error) {
                Some(doing) => ClientError::Starting(doing.to_owned()),
                None => ClientError::Remote(error.clone()),
            });
        }
        if env.id != id {
            return Err(ClientError::Protocol(format!("answer to request {} while waiting for {id}", env.id)));
        }
        match env.body {
            Response::Error { error } => Err(ClientError::Remote(error)),
            other => Ok(other),
        }
    }
}
