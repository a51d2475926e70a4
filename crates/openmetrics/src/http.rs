//! The `/metrics` endpoint: std only, a thread per connection.
//!
//! Faults are inputs. At most [`MAX_CONNECTIONS`] connections are served
//! at once; one beyond is closed as soon as it is accepted. Each
//! connection has [`DEADLINE`] in all, from accept to the last byte
//! written (a total deadline, not a read timeout that a client dripping a
//! byte a second would renew), and a request head of at most
//! [`MAX_HEAD`] bytes. Answers: `GET /metrics` the exposition (OpenMetrics
//! text when the request's Accept names `application/openmetrics-text`, as
//! Prometheus's does, else the Prometheus text format 0.0.4, as client
//! libraries negotiate it), `GET /` a
//! one-line pointer, 404 for other paths, 405 for other methods on those
//! two, 400 for what is not an HTTP/1.x request head, 431 for a head too
//! large, 408 for one not complete by the deadline; always
//! `Connection: close`. The accept loop polls a stop flag, so dropping the
//! [`MetricsServer`] ends it within one poll.
//!
//! Hand-written, because no maintained server crate keeps these limits
//! without a wrapper as large as this module. tiny_http's `ServerConfig`
//! is an address and TLS settings only, and its `Server` offers no
//! setting for a total per-connection deadline, a request head's size or
//! the number of connections (`num_connections` only counts them): all
//! three would be rebuilt around it. hyper 1.x brings no executor or I/O
//! of its own: serving with it means an async runtime (tokio, through
//! hyper-util) for one endpoint scraped every few seconds. The HTTP spoken
//! here is one request head read, one answer written, the connection closed.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::Metrics;

/// The `Content-Type` of prometheus-client's OpenMetrics text encoder
/// (OpenMetrics text 1.0.0, as the crate's own server examples send it).
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The `Content-Type` of the Prometheus text format 0.0.4, for a scrape
/// that does not ask for OpenMetrics.
pub const PROMETHEUS_TEXT_CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;
/// Connections served at once; one beyond is closed when accepted.
pub const MAX_CONNECTIONS: usize = 8;
/// A connection's time in all, from accept to the answer's last byte.
pub const DEADLINE: Duration = Duration::from_secs(2);
/// The longest request head (request line and headers) read.
pub const MAX_HEAD: usize = 8 * 1024;

/// How long the accept loop sleeps when nobody is waiting.
const ACCEPT_POLL: Duration = Duration::from_millis(20);
/// The longest a connection's read waits before it looks at the stop flag.
const READ_SLICE: Duration = Duration::from_millis(100);
/// Time to write a 408 after the deadline has passed.
const LATE_ANSWER: Duration = Duration::from_millis(100);

/// Why the endpoint could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address is refused by the control port's rules (every interface,
    /// not ADDR:PORT, no address): the control port's own sentence.
    #[error(transparent)]
    Refused(#[from] control::ListenError),
    /// The address is allowed but the bind failed (in use, not this host's).
    #[error("cannot listen on {spec}: {source}; {}", control::bind_fix(source))]
    Bind { spec: String, source: std::io::Error },
    /// The accept thread could not be started.
    #[error("cannot start the metrics thread: {0}")]
    Thread(std::io::Error),
}

/// A running /metrics endpoint; dropping it stops it (the accept thread
/// ends within one poll, ~20 ms; connections in flight see the stop within
/// ~100 ms).
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Where it listens (the port chosen, for "ADDR:0").
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(accept) = self.accept.take() {
            // The loop does not panic; were it to, there is nothing to add.
            let _ = accept.join();
        }
    }
}

/// Binds `spec` (ADDR:PORT; the same rules as drop's control port:
/// `control::listen_addrs` refuses every-interface addresses; "127.0.0.1:0"
/// for an ephemeral port) and serves `metrics` on its own thread.
pub fn serve(spec: &str, metrics: Arc<Metrics>) -> Result<MetricsServer, ServeError> {
    let addrs = control::listen_addrs(spec)?;
    let bind_failed = |source| ServeError::Bind { spec: spec.to_string(), source };
    let listener = TcpListener::bind(&addrs[..]).map_err(bind_failed)?;
    let addr = listener.local_addr().map_err(bind_failed)?;
    listener.set_nonblocking(true).map_err(bind_failed)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let accept = std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || accept_loop(listener, metrics, flag))
        .map_err(ServeError::Thread)?;
    Ok(MetricsServer { addr, stop, accept: Some(accept) })
}

/// Gives a connection slot back when its thread ends, however it ends.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn accept_loop(listener: TcpListener, metrics: Arc<Metrics>, stop: Arc<AtomicBool>) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            // Nobody waiting, or out of descriptors for now: either way,
            // wait a poll rather than spin.
            Err(_) => {
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        };
        let deadline = Instant::now() + DEADLINE;
        if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
            continue; // dropped: closed
        }
        active.fetch_add(1, Ordering::Relaxed);
        let slot = Slot(Arc::clone(&active));
        let (metrics, stop) = (Arc::clone(&metrics), Arc::clone(&stop));
        // A thread that cannot start drops its closure: the stream closes
        // and the slot is given back.
        let _ = std::thread::Builder::new().name("metrics-conn".into()).spawn(move || {
            let _slot = slot;
            connection(stream, deadline, &metrics, &stop);
        });
    }
}

/// What came of reading a request head.
#[derive(Debug, PartialEq)]
enum Head {
    Complete(Vec<u8>),
    TooLarge,
    /// The client closed, or the socket failed.
    Gone,
    TimedOut,
    Stopped,
}

/// One connection, start to close, by `deadline`.
fn connection(mut stream: TcpStream, deadline: Instant, metrics: &Metrics, stop: &AtomicBool) {
    // Accepted sockets do not inherit the listener's non-blocking mode on
    // Linux; say so rather than rely on it.
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    let answer = match read_head(&mut stream, deadline, stop) {
        Head::Complete(head) => respond(&head, metrics),
        Head::TooLarge => plain(431, "Request Header Fields Too Large", &format!("request head over {MAX_HEAD} bytes")),
        Head::TimedOut => {
            let _ = write_by(&mut stream, &plain(408, "Request Timeout", "no complete request in time"), Instant::now() + LATE_ANSWER);
            return;
        }
        Head::Gone | Head::Stopped => return,
    };
    if write_by(&mut stream, &answer, deadline).is_err() {
        return;
    }
    let _ = stream.shutdown(Shutdown::Write);
    linger(&mut stream, deadline, stop);
}

/// Where a request head ends (past its blank line), if it has.
fn head_end(buf: &[u8]) -> Option<usize> {
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn read_head(stream: &mut TcpStream, deadline: Instant, stop: &AtomicBool) -> Head {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = head_end(&buf) {
            if end > MAX_HEAD {
                return Head::TooLarge;
            }
            buf.truncate(end);
            return Head::Complete(buf);
        }
        if buf.len() > MAX_HEAD {
            return Head::TooLarge;
        }
        if stop.load(Ordering::Relaxed) {
            return Head::Stopped;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Head::TimedOut;
        }
        if stream.set_read_timeout(Some(left.min(READ_SLICE))).is_err() {
            return Head::Gone;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Head::Gone,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return Head::Gone,
        }
    }
}

/// Writes all of `bytes` by `deadline`, or fails.
fn write_by(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// After the answer, reads what the client still sends until it closes
/// (by the deadline), so that closing with unread bytes does not reset
/// the connection under an answer it has not read yet.
fn linger(stream: &mut TcpStream, deadline: Instant, stop: &AtomicBool) {
    let mut sink = [0u8; 2048];
    let mut drained = 0usize;
    while drained < 64 * 1024 && !stop.load(Ordering::Relaxed) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left.min(READ_SLICE))).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(n) => drained += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return,
        }
    }
}

/// A request line's parts, once it is known to be HTTP/1.x.
#[derive(Debug, PartialEq)]
struct Request<'a> {
    method: &'a str,
    path: &'a str,
    /// An Accept header names OpenMetrics text.
    openmetrics: bool,
}

/// A token character (RFC 9110 section 5.6.2).
fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The request line and headers, or None for anything that is not an
/// HTTP/1.x request head.
fn parse(head: &[u8]) -> Option<Request<'_>> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || method.is_empty() || !method.bytes().all(tchar) {
        return None;
    }
    if !target.starts_with('/') || target.bytes().any(|b| b.is_ascii_control() || b == b' ' || !b.is_ascii()) {
        return None;
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return None;
    }
    let mut openmetrics = false;
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        if name.is_empty() || !name.bytes().all(tchar) {
            return None;
        }
        if name.eq_ignore_ascii_case("accept") && value.to_ascii_lowercase().contains("application/openmetrics-text") {
            openmetrics = true;
        }
    }
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    Some(Request { method, path, openmetrics })
}

/// The whole answer to a complete request head.
fn respond(head: &[u8], metrics: &Metrics) -> Vec<u8> {
    let Some(req) = parse(head) else {
        return plain(400, "Bad Request", "not an HTTP/1.x request");
    };
    let known = matches!(req.path, "/metrics" | "/");
    if !known {
        return plain(404, "Not Found", "not here: the metrics are at /metrics");
    }
    if req.method != "GET" {
        return answer(405, "Method Not Allowed", "text/plain; charset=utf-8", "Allow: GET\r\n", "only GET is served\n");
    }
    if req.path == "/" {
        return plain(200, "OK", "blastdrop metrics: GET /metrics (OpenMetrics text)");
    }
    if req.openmetrics {
        answer(200, "OK", OPENMETRICS_CONTENT_TYPE, "", &metrics.encode())
    } else {
        answer(200, "OK", PROMETHEUS_TEXT_CONTENT_TYPE, "", &metrics.encode_prometheus_text())
    }
}

fn plain(status: u16, reason: &str, line: &str) -> Vec<u8> {
    answer(status, reason, "text/plain; charset=utf-8", "", &format!("{line}\n"))
}

fn answer(status: u16, reason: &str, content_type: &str, extra: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn server() -> (MetricsServer, SocketAddr) {
        let m = Arc::new(Metrics::new("drop", "received"));
        m.set_queue(0, 10, 640, 0, 0);
        m.set_verdict("none");
        let s = serve("127.0.0.1:0", m).expect("serve on an ephemeral port");
        let a = s.local_addr();
        (s, a)
    }

    /// Sends `request` and reads the whole answer (bounded: 5 s).
    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        s.write_all(request).expect("write");
        let mut out = Vec::new();
        s.read_to_end(&mut out).expect("read the answer");
        String::from_utf8_lossy(&out).into_owned()
    }

    fn status(answer: &str) -> &str {
        answer.split(' ').nth(1).unwrap_or("")
    }

    fn scrape(addr: SocketAddr) -> String {
        let a = exchange(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text\r\n\r\n");
        assert_eq!(status(&a), "200", "{a}");
        a
    }

    #[test]
    fn a_real_get_returns_the_exposition() {
        let (_s, addr) = server();
        let a = scrape(addr);
        let (head, body) = a.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains(&format!("\r\nContent-Type: {OPENMETRICS_CONTENT_TYPE}\r\n")), "{head}");
        assert!(head.contains("\r\nConnection: close"), "{head}");
        assert!(head.contains(&format!("\r\nContent-Length: {}\r\n", body.len())), "{head}");
        assert!(body.contains(r#"blastdrop_frames_total{tool="drop",direction="received",queue="0"} 10"#), "{body}");
        assert!(body.ends_with("# EOF\n"), "{body}");
        // Without OpenMetrics in Accept (curl, a browser): the Prometheus
        // text format. A query string and HTTP/1.0 are fine.
        let a = exchange(addr, b"GET /metrics?x=1 HTTP/1.0\r\nAccept: */*\r\n\r\n");
        let (head, body) = a.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains(&format!("\r\nContent-Type: {PROMETHEUS_TEXT_CONTENT_TYPE}\r\n")), "{head}");
        assert!(body.contains("# TYPE blastdrop_frames_total counter\n"), "{body}");
        assert!(!body.contains("# EOF"), "{body}");
        // What Prometheus 2.x sends.
        let prom = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n\r\n";
        let a = exchange(addr, prom);
        assert!(a.contains(OPENMETRICS_CONTENT_TYPE) && a.ends_with("# EOF\n"), "{a}");
        // / points at /metrics.
        let root = exchange(addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(status(&root), "200", "{root}");
        assert!(root.ends_with("GET /metrics (OpenMetrics text)\n"), "{root}");
    }

    #[test]
    fn other_paths_methods_and_garbage_are_refused() {
        let (_s, addr) = server();
        for (request, want) in [
            (&b"GET /nope HTTP/1.1\r\n\r\n"[..], "404"),
            (b"GET /metrics/x HTTP/1.1\r\n\r\n", "404"),
            (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "405"),
            (b"HEAD /metrics HTTP/1.1\r\n\r\n", "405"),
            (b"DELETE / HTTP/1.1\r\n\r\n", "405"),
            (b"\x00\x01\x02garbage\r\n\r\n", "400"),
            (b"GET\r\n\r\n", "400"),
            (b"GET /metrics\r\n\r\n", "400"),
            (b"GET /metrics HTTP/2.0\r\n\r\n", "400"),
            (b"GET metrics HTTP/1.1\r\n\r\n", "400"),
            (b"GET /metrics HTTP/1.1 extra\r\n\r\n", "400"),
            (b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", "400"),
            (b"GET /m\xffx HTTP/1.1\r\n\r\n", "400"),
        ] {
            let a = exchange(addr, request);
            assert_eq!(status(&a), want, "{:?}: {a}", String::from_utf8_lossy(request));
            assert!(a.contains("Connection: close"), "{a}");
        }
        let a = exchange(addr, b"PUT /metrics HTTP/1.1\r\n\r\n");
        assert!(a.contains("\r\nAllow: GET\r\n"), "{a}");
        // A head over 8 KiB, ended or not.
        let mut big = b"GET /metrics HTTP/1.1\r\nX-Pad: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', MAX_HEAD + 100));
        assert_eq!(status(&exchange(addr, &big)), "431");
        big.extend_from_slice(b"\r\n\r\n");
        assert_eq!(status(&exchange(addr, &big)), "431");
        // And the server still answers.
        scrape(addr);
    }

    /// Reads until the server closes, and how long from `since` that took.
    fn until_closed(mut s: &TcpStream, since: Instant) -> (Duration, Vec<u8>) {
        let mut out = Vec::new();
        let mut chunk = [0u8; 512];
        while since.elapsed() < Duration::from_secs(5) {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
            }
        }
        (since.elapsed(), out)
    }

    #[test]
    fn silent_and_dripping_clients_are_cut_and_scrapes_go_on() {
        let (_s, addr) = server();
        for round in 0..3 {
            let t0 = Instant::now();
            let squatter = TcpStream::connect(addr).expect("connect");
            squatter.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
            let dripper = TcpStream::connect(addr).expect("connect");
            dripper.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
            let mut writer = dripper.try_clone().expect("clone");
            let drip = std::thread::spawn(move || {
                for &b in b"GET /metrics HTTP/1.1\r\n\r\n".iter() {
                    if writer.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(400));
                }
            });
            // Meanwhile, a scrape is answered.
            std::thread::sleep(Duration::from_millis(200));
            let scraped = Instant::now();
            scrape(addr);
            assert!(scraped.elapsed() < Duration::from_secs(1), "round {round}: scrape took {:?}", scraped.elapsed());
            let (took, out) = until_closed(&squatter, t0);
            assert!(
                took < Duration::from_millis(2500) && took >= Duration::from_millis(1900),
                "round {round}: squatter cut after {took:?}"
            );
            let out = String::from_utf8_lossy(&out);
            assert!(out.is_empty() || out.starts_with("HTTP/1.1 408 "), "{out}");
            let (took, _) = until_closed(&dripper, t0);
            assert!(took < Duration::from_millis(2500) && took >= Duration::from_millis(1900), "round {round}: dripper cut after {took:?}");
            drip.join().expect("drip thread");
        }
    }

    #[test]
    fn connections_beyond_the_cap_are_closed_at_once() {
        let (_s, addr) = server();
        let t0 = Instant::now();
        let squatters: Vec<TcpStream> = (0..MAX_CONNECTIONS).map(|_| TcpStream::connect(addr).expect("connect")).collect();
        // Let the accept loop take them all.
        std::thread::sleep(Duration::from_millis(200));
        let extra = TcpStream::connect(addr).expect("connect");
        extra.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let since = Instant::now();
        let (took, out) = until_closed(&extra, since);
        assert!(out.is_empty() && took < Duration::from_millis(500), "the ninth: {took:?}, {out:?}");
        // Once the squatters are cut, scrapes are served again.
        for s in &squatters {
            s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
            let (took, _) = until_closed(s, t0);
            assert!(took < Duration::from_millis(2500), "squatter cut after {took:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
        scrape(addr);
    }

    #[test]
    fn every_interface_is_refused_with_the_control_ports_sentence() {
        for spec in ["0.0.0.0:0", "[::]:9100", "0:9100"] {
            let m = Arc::new(Metrics::new("blast", "sent"));
            let e = serve(spec, m).expect_err(spec);
            assert!(matches!(e, ServeError::Refused(control::ListenError::EveryInterface { .. })), "{spec}: {e:?}");
            let control_sentence = control::listen_addrs(spec).expect_err(spec).to_string();
            assert_eq!(e.to_string(), control_sentence);
            assert!(control_sentence.contains("every interface"), "{control_sentence}");
        }
        let e = serve("9100", Arc::new(Metrics::new("blast", "sent"))).expect_err("no address");
        assert!(e.to_string().contains("ADDR:PORT"), "{e}");
    }

    #[test]
    fn a_port_in_use_is_a_bind_failure() {
        let (_s, addr) = server();
        let e = serve(&addr.to_string(), Arc::new(Metrics::new("blast", "sent"))).expect_err("in use");
        assert!(matches!(e, ServeError::Bind { .. }), "{e:?}");
        assert!(e.to_string().starts_with(&format!("cannot listen on {addr}: ")), "{e}");
    }

    #[test]
    fn dropping_the_server_stops_it_and_frees_the_port() {
        let (s, addr) = server();
        scrape(addr);
        // A connection in flight does not hold the drop up.
        let squatter = TcpStream::connect(addr).expect("connect");
        squatter.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        std::thread::sleep(Duration::from_millis(100));
        let t0 = Instant::now();
        drop(s);
        assert!(t0.elapsed() < Duration::from_millis(200), "drop took {:?}", t0.elapsed());
        let (took, _) = until_closed(&squatter, t0);
        assert!(took < Duration::from_millis(500), "the connection in flight ended after {took:?}");
        assert!(TcpStream::connect(addr).is_err(), "still accepting on {addr}");
        let again = TcpListener::bind(addr).expect("the port is free again");
        drop(again);
        let m = Arc::new(Metrics::new("drop", "received"));
        let s = serve(&addr.to_string(), m).expect("serve again on the same port");
        assert_eq!(s.local_addr(), addr);
        scrape(addr);
    }

    #[test]
    fn parse_reads_http_1_heads_only() {
        assert_eq!(
            parse(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"),
            Some(Request { method: "GET", path: "/metrics", openmetrics: false })
        );
        assert_eq!(parse(b"GET /?a=b HTTP/1.0\n\n"), Some(Request { method: "GET", path: "/", openmetrics: false }));
        assert_eq!(
            parse(b"GET /metrics HTTP/1.1\r\nACCEPT:Application/OpenMetrics-Text; version=1.0.0\r\n\r\n"),
            Some(Request { method: "GET", path: "/metrics", openmetrics: true })
        );
        assert_eq!(parse(b""), None);
        assert_eq!(parse(b"GET  /metrics HTTP/1.1\r\n\r\n"), None);
        assert_eq!(parse(b"G(T /metrics HTTP/1.1\r\n\r\n"), None);
        assert_eq!(parse(b"GET /metrics HTTP/1.1\r\n: empty\r\n\r\n"), None);
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nrest"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\n"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n"), None);
    }
}
