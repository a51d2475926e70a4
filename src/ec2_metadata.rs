//! The EC2 instance type, availability zone and AMI, from the instance
//! metadata service (IMDSv2), for the environment record.
//!
//! Asked only when DMI says the machine is an EC2 instance: anywhere else
//! 169.254.169.254 is nobody's (or someone else's) address, and a run on a
//! laptop or another cloud must not send it anything. Asked once per
//! process, within about a second: the record is written after the run, and
//! a metadata service that does not answer must not hold it up.
//!
//! The HTTP is ureq's (no TLS, no proxy, no redirect, no pooled
//! connection); the limits stay this module's: each connect, write and read
//! within [`Limits::step`], the whole lookup within [`Limits::total`], the
//! answer's size bounded, and only short printable values taken.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// DMI `sys_vendor` on EC2 (Nitro) instances.
pub const EC2_VENDOR: &str = "Amazon EC2";

/// The instance metadata service.
pub const IMDS: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(169, 254, 169, 254), 80));

/// How long one connect, write or read may wait, and the whole lookup.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub step: Duration,
    pub total: Duration,
}

/// Per-step limit short enough that a machine without a reachable IMDS
/// (a container past the hop limit, a firewalled host) loses well under a
/// second; the service itself answers in about a millisecond.
pub const LIMITS: Limits = Limits { step: Duration::from_millis(300), total: Duration::from_secs(1) };

// Instance types, zone names and AMI ids are a few dozen characters; a
// longer answer is not one of them.
const MAX_VALUE: usize = 128;
// IMDSv2 tokens are about 60 characters.
const MAX_TOKEN: usize = 1024;
// The headers, and the body, each: anything larger is not the metadata service.
const MAX_RESPONSE: usize = 8192;

pub use records::environment::Ec2Metadata;

/// This machine's metadata when `vendor` (its DMI sys_vendor) says EC2,
/// asked once per process: every later call returns the first answer.
pub fn of_this_machine(vendor: Option<&str>) -> Option<Ec2Metadata> {
    static ONCE: OnceLock<Option<Ec2Metadata>> = OnceLock::new();
    ONCE.get_or_init(|| lookup(vendor, IMDS, LIMITS)).clone()
}

/// The metadata from the service at `addr`, or None without any request
/// when `vendor` is not EC2's.
pub fn lookup(vendor: Option<&str>, addr: SocketAddr, limits: Limits) -> Option<Ec2Metadata> {
    if vendor != Some(EC2_VENDOR) {
        return None;
    }
    let client = Client { addr, limits, deadline: Instant::now() + limits.total };
    let mut out = Ec2Metadata::default();
    let token = match client.token() {
        Ok(t) => t,
        Err(e) => {
            out.error = Some(e);
            return Some(out);
        }
    };
    let mut errors = Vec::new();
    for (path, slot) in [
        ("instance-type", &mut out.instance_type),
        ("placement/availability-zone", &mut out.availability_zone),
        ("ami-id", &mut out.ami_id),
    ] {
        match client.get(path, &token) {
            Ok(v) => *slot = Some(v),
            Err(e) => errors.push(format!("{path}: {e}")),
        }
    }
    out.error = (!errors.is_empty()).then(|| errors.join("; "));
    Some(out)
}

struct Client {
    addr: SocketAddr,
    limits: Limits,
    deadline: Instant,
}

impl Client {
    fn token(&self) -> Result<String, String> {
        let url = format!("http://{}/latest/api/token", self.addr);
        let (status, body) = self
            .exchange(|agent| {
                agent.put(&url).header("X-aws-ec2-metadata-token-ttl-seconds", "60").header("Connection", "close").send_empty()
            })
            .map_err(|e| format!("IMDSv2 token: {e}"))?;
        if status != 200 {
            return Err(format!("IMDSv2 token refused: HTTP {status} from {}", self.addr));
        }
        value(&body, MAX_TOKEN).map_err(|e| format!("IMDSv2 token: {e}"))
    }

    fn get(&self, path: &str, token: &str) -> Result<String, String> {
        let url = format!("http://{}/latest/meta-data/{path}", self.addr);
        let (status, body) =
            self.exchange(|agent| agent.get(&url).header("X-aws-ec2-metadata-token", token).header("Connection", "close").call())?;
        if status != 200 {
            return Err(format!("HTTP {status}"));
        }
        value(&body, MAX_VALUE)
    }

    /// Makes one request with what is left of the limits and returns the
    /// status and body of the answer.
    fn exchange(
        &self,
        request: impl FnOnce(&ureq::Agent) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<(u16, Vec<u8>), String> {
        let wait = self.wait()?;
        let left = self.deadline.saturating_duration_since(Instant::now());
        let mut response = request(&agent(wait, left)).map_err(|e| self.failed(e, wait))?;
        let body = response.body_mut().with_config().limit(MAX_RESPONSE as u64).read_to_vec().map_err(|e| self.failed(e, wait))?;
        Ok((response.status().as_u16(), body))
    }

    /// What one step may still wait: its own limit, cut to what is left of
    /// the whole lookup's.
    fn wait(&self) -> Result<Duration, String> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.out_of_time());
        }
        Ok(left.min(self.limits.step))
    }

    fn out_of_time(&self) -> String {
        format!("no answer from {} within {} ms", self.addr, self.limits.total.as_millis())
    }

    /// The sentence for a failed request: which step timed out after how
    /// long, or what went wrong.
    fn failed(&self, e: ureq::Error, waited: Duration) -> String {
        use ureq::Timeout as T;
        let doing = match &e {
            ureq::Error::Timeout(T::Global | T::PerCall) => return self.out_of_time(),
            ureq::Error::Timeout(T::Resolve | T::Connect) => "connecting to",
            ureq::Error::Timeout(T::PerWrite | T::SendRequest | T::SendBody) => "writing to",
            ureq::Error::Timeout(_) => "waiting for an answer from",
            ureq::Error::Io(io) if matches!(io.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => "waiting for an answer from",
            ureq::Error::BodyExceedsLimit(_) | ureq::Error::LargeResponseHeader(..) => {
                return format!("answer longer than {MAX_RESPONSE} bytes");
            }
            ureq::Error::Io(io) if io.kind() == ErrorKind::UnexpectedEof => {
                return format!("answer cut short: {} closed the connection before its end", self.addr);
            }
            ureq::Error::Protocol(p) => return format!("not an HTTP answer from {} (its status line or headers: {p})", self.addr),
            _ => return format!("asking {}: {e}", self.addr),
        };
        format!("timed out after {} ms {doing} {}", waited.as_millis(), self.addr)
    }
}

/// The client for one request: every step (connect, each write, each read)
/// within `step`, the request within `total`; never through a proxy (the
/// address is link-local; ureq would otherwise read HTTP_PROXY), no
/// redirect, no connection kept, headers and body each at most
/// MAX_RESPONSE bytes, and a status other than 200 an answer, not an error.
fn agent(step: Duration, total: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .proxy(None)
        .max_redirects(0)
        .max_idle_connections(0)
        .http_status_as_error(false)
        .max_response_header_size(MAX_RESPONSE)
        .timeout_global(Some(total))
        .timeout_connect(Some(step))
        .timeout_per_write(Some(step))
        .timeout_per_read(Some(step))
        .build()
        .new_agent()
}

/// `body` as a value for the record (or a header): printable ASCII without
/// spaces, at most `max` bytes.
fn value(body: &[u8], max: usize) -> Result<String, String> {
    let text = body.trim_ascii();
    if text.is_empty() {
        return Err("empty answer".into());
    }
    if text.len() > max {
        return Err(format!("answer of {} bytes, longer than the {max} expected", text.len()));
    }
    if !text.iter().all(u8::is_ascii_graphic) {
        return Err("answer is not printable ASCII".into());
    }
    Ok(String::from_utf8_lossy(text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::thread::JoinHandle;

    const TOKEN: &str = "AQAEAFakeToken-x_y==";

    /// A fake metadata service on 127.0.0.1: answers `connections`
    /// connections with `answer(request)` and returns the requests it saw.
    /// An answer with Content-Length stays open until the client closes (the
    /// client must stop at the length); one without is closed after it. The
    /// listener comes back with the requests, so that further connections
    /// wait in its backlog, unanswered, until the test drops it.
    fn serve(connections: usize, answer: impl Fn(&str) -> String + Send + 'static) -> (SocketAddr, JoinHandle<(Vec<String>, TcpListener)>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for _ in 0..connections {
                let (mut stream, _) = listener.accept().unwrap();
                stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut raw = Vec::new();
                let mut chunk = [0u8; 512];
                while header_end(&raw).is_none() {
                    let n = stream.read(&mut chunk).unwrap();
                    assert!(n > 0, "the client closed before its request ended: {raw:?}");
                    raw.extend_from_slice(&chunk[..n]);
                }
                let request = String::from_utf8(raw).unwrap();
                let reply = answer(&request);
                stream.write_all(reply.as_bytes()).unwrap();
                if reply.contains("Content-Length") {
                    assert_eq!(stream.read(&mut chunk).unwrap(), 0, "the client closes once the body is in");
                }
                seen.push(request);
            }
            (seen, listener)
        });
        (addr, server)
    }

    fn header_end(raw: &[u8]) -> Option<usize> {
        raw.windows(4).position(|w| w == b"\r\n\r\n")
    }

    fn header<'a>(request: &'a str, name: &str) -> Option<&'a str> {
        request.lines().find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
    }

    /// The service as IMDSv2 behaves: a token for a PUT with a TTL, values
    /// only for GETs carrying that token, 401 otherwise.
    fn imds(request: &str) -> String {
        let line = request.lines().next().unwrap();
        let (status, body) = match line {
            "PUT /latest/api/token HTTP/1.1" if header(request, "X-aws-ec2-metadata-token-ttl-seconds") == Some("60") => (200, TOKEN),
            _ if header(request, "X-aws-ec2-metadata-token") != Some(TOKEN) => (401, ""),
            "GET /latest/meta-data/instance-type HTTP/1.1" => (200, "c8gn.12xlarge"),
            "GET /latest/meta-data/placement/availability-zone HTTP/1.1" => (200, "us-east-1a"),
            // read-to-close: no Content-Length
            "GET /latest/meta-data/ami-id HTTP/1.1" => return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nami-0123456789abcdef0".into(),
            _ => (404, "Not Found"),
        };
        format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
    }

    #[test]
    fn on_ec2_the_three_values_come_from_imdsv2_with_its_token() {
        let (addr, server) = serve(4, imds);
        let got = lookup(Some("Amazon EC2"), addr, LIMITS).expect("EC2 by DMI is asked");
        let want = Ec2Metadata {
            instance_type: Some("c8gn.12xlarge".into()),
            availability_zone: Some("us-east-1a".into()),
            ami_id: Some("ami-0123456789abcdef0".into()),
            error: None,
        };
        assert_eq!(got, want);
        let (seen, _) = server.join().unwrap();
        assert!(seen[0].starts_with("PUT /latest/api/token HTTP/1.1\r\n"), "{}", seen[0]);
        for request in &seen {
            assert_eq!(header(request, "Connection"), Some("close"), "{request}");
        }
    }

    #[test]
    fn elsewhere_nothing_is_asked() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        for vendor in [None, Some("QEMU"), Some("Amazon EC2 "), Some("Xen")] {
            assert_eq!(lookup(vendor, addr, LIMITS), None, "{vendor:?}");
        }
        let until = Instant::now() + Duration::from_millis(150);
        while Instant::now() < until {
            match listener.accept() {
                Ok((_, peer)) => panic!("a connection from {peer} though DMI does not say EC2"),
                Err(e) => assert_eq!(e.kind(), ErrorKind::WouldBlock),
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_service_that_never_answers_costs_a_bounded_time_and_says_it_timed_out() {
        // Listening without accepting: the kernel completes the connection,
        // nobody reads the request.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let start = Instant::now();
        let got = lookup(Some(EC2_VENDOR), listener.local_addr().unwrap(), LIMITS).unwrap();
        assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
        let error = got.error.as_deref().unwrap();
        assert!(error.starts_with("IMDSv2 token: timed out after 300 ms"), "{error}");
        assert_eq!((got.instance_type, got.availability_zone, got.ami_id), (None, None, None));
    }

    #[test]
    fn values_that_hang_stop_at_the_whole_lookups_limit() {
        // The token comes; the GETs are never answered (the server holds
        // them until the client gives up).
        let (addr, server) = serve(1, imds);
        let limits = Limits { step: Duration::from_millis(300), total: Duration::from_millis(500) };
        let start = Instant::now();
        let got = lookup(Some(EC2_VENDOR), addr, limits).unwrap();
        let took = start.elapsed();
        assert!(took < Duration::from_millis(900), "{took:?}");
        assert_eq!((&got.instance_type, &got.ami_id), (&None, &None));
        let error = got.error.unwrap();
        assert!(error.starts_with("instance-type: timed out after 300 ms waiting for an answer"), "{error}");
        assert!(error.contains("; ami-id: "), "{error}");
        drop(server.join().unwrap());
    }

    #[test]
    fn a_refused_token_leaves_the_values_null_and_says_so() {
        let (addr, server) = serve(1, |_| "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".into());
        let got = lookup(Some(EC2_VENDOR), addr, LIMITS).unwrap();
        assert_eq!((got.instance_type, got.availability_zone, got.ami_id), (None, None, None));
        let error = got.error.unwrap();
        assert!(error.starts_with("IMDSv2 token refused: HTTP 403"), "{error}");
        let (_, listener) = server.join().unwrap();
        listener.set_nonblocking(true).unwrap();
        assert_eq!(listener.accept().unwrap_err().kind(), ErrorKind::WouldBlock, "no GET after a refused token");
    }

    #[test]
    fn only_short_printable_values_are_taken() {
        assert_eq!(value(b"us-east-1a\n", MAX_VALUE), Ok("us-east-1a".into()));
        assert!(value(b"", MAX_VALUE).unwrap_err().contains("empty"));
        assert!(value(b"a\x1b[31mb", MAX_VALUE).unwrap_err().contains("printable"));
        assert!(value("zone-é".as_bytes(), MAX_VALUE).unwrap_err().contains("printable"));
        assert!(value(&[b'a'; 200], MAX_VALUE).unwrap_err().contains("longer"));
    }

    /// The lookup's error from a service that answers the token's request
    /// with `reply` and closes the connection.
    fn token_error(reply: &'static str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut raw = Vec::new();
            let mut chunk = [0u8; 512];
            while header_end(&raw).is_none() {
                let n = stream.read(&mut chunk).unwrap();
                assert!(n > 0, "the client closed before its request ended");
                raw.extend_from_slice(&chunk[..n]);
            }
            stream.write_all(reply.as_bytes()).unwrap();
        });
        let got = lookup(Some(EC2_VENDOR), addr, LIMITS).unwrap();
        server.join().unwrap();
        got.error.unwrap()
    }

    #[test]
    fn an_answer_that_is_not_http_or_is_cut_short_is_refused() {
        let not_http = token_error("SSH-2.0-OpenSSH\r\n\r\n");
        assert!(not_http.contains("status line"), "{not_http}");
        let cut = token_error("HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nabc");
        assert!(cut.contains("cut short"), "{cut}");
    }
}
