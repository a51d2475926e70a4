//! The control protocol over real TCP on loopback, with a stand-in for
//! drop's receiver (no EAL needed): every bad message gets an error reply
//! and the server keeps serving.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use control::{serve, Backend, Client, ClientError, PeerInfo, Prepared, Request, Response, ServerConfig, WindowFigures, MAX_LINE};

#[derive(Default)]
struct Log {
    started: u32,
    ended: u32,
    abandoned: u32,
    prepared: Vec<u16>,
}

struct StandIn(Arc<Mutex<Log>>);

impl Backend for StandIn {
    fn info(&mut self) -> PeerInfo {
        PeerInfo { hostname: "stand-in".into(), max_rx_queues: 8, ..Default::default() }
    }
    fn prepare(&mut self, rx_queues: u16, _max_size: u32) -> Result<Prepared, String> {
        if rx_queues > 8 {
            return Err(format!("{rx_queues} RX queues asked, the device has 8"));
        }
        self.0.lock().unwrap().prepared.push(rx_queues);
        Ok(Prepared { rx_queues, restarted: true, link_up: true })
    }
    fn start_window(&mut self) -> Result<(), String> {
        self.0.lock().unwrap().started += 1;
        Ok(())
    }
    fn end_window(&mut self, _window: u64) -> Result<WindowFigures, String> {
        self.0.lock().unwrap().ended += 1;
        Ok(WindowFigures { packets: 42, seconds: 1.0, ..Default::default() })
    }
    fn abandon_window(&mut self, _window: u64, _why: &str) {
        self.0.lock().unwrap().abandoned += 1;
    }
}

struct Server {
    addr: String,
    log: Arc<Mutex<Log>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(cfg: ServerConfig) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let log = Arc::new(Mutex::new(Log::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (l2, s2) = (log.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut b = StandIn(l2);
            serve(&listener, &mut b, &cfg, &s2).unwrap();
        });
        Server { addr, log, stop, thread: Some(thread) }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// A raw connection for sending arbitrary bytes.
struct Raw {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

impl Raw {
    fn open(addr: &str) -> Raw {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Raw { w: s.try_clone().unwrap(), r: BufReader::new(s) }
    }
    fn send(&mut self, line: &str) -> serde_json::Value {
        self.w.write_all(line.as_bytes()).unwrap();
        self.w.write_all(b"\n").unwrap();
        let mut s = String::new();
        self.r.read_line(&mut s).unwrap();
        serde_json::from_str(&s).unwrap_or_else(|e| panic!("reply {s:?} is not JSON: {e}"))
    }
    fn closed(&mut self) -> bool {
        let mut s = String::new();
        matches!(self.r.read_line(&mut s), Ok(0))
    }
}

fn hello_works(raw: &mut Raw) {
    let v = raw.send(r#"{"v":1,"id":99,"type":"hello"}"#);
    assert_eq!(v["type"], "hello", "{v}");
    assert_eq!(v["id"], 99);
    assert_eq!(v["info"]["hostname"], "stand-in");
}

#[test]
fn bad_messages_get_error_replies_and_the_server_keeps_serving() {
    let srv = Server::start(ServerConfig::default());
    let mut raw = Raw::open(&srv.addr);
    let cases = [
        ("{not json", "not a JSON object"),
        ("42", "not a JSON object"),
        (r#"{"v":1,"id":1,"type":"format_disk"}"#, "unknown message type"),
        (r#"{"v":9,"id":2,"type":"hello"}"#, "protocol version 9"),
        (r#"{"id":3,"type":"hello"}"#, "no protocol version"),
        (r#"{"v":1,"id":4,"type":"end_window","window":"x"}"#, "bad fields"),
        (r#"{"v":1,"id":5,"type":"end_window","window":3}"#, "not open"),
    ];
    for (line, want) in cases {
        let v = raw.send(line);
        assert_eq!(v["type"], "error", "{line} -> {v}");
        assert!(v["error"].as_str().unwrap().contains(want), "{line} -> {v}");
        hello_works(&mut raw);
    }
    let huge = format!(r#"{{"v":1,"id":6,"type":"hello","pad":"{}"}}"#, "z".repeat(MAX_LINE * 2));
    let v = raw.send(&huge);
    assert!(v["error"].as_str().unwrap().contains("longer than"), "{v}");
    hello_works(&mut raw);
    // Errors repeat the request id when it could be read.
    assert_eq!(raw.send(r#"{"v":1,"id":77,"type":"nope"}"#)["id"], 77);
}

#[test]
fn a_wrong_token_is_refused_and_the_right_one_served() {
    let srv = Server::start(ServerConfig { token: Some("s3cret".into()), ..Default::default() });
    let mut raw = Raw::open(&srv.addr);
    let v = raw.send(r#"{"v":1,"id":1,"type":"hello","token":"guess"}"#);
    assert!(v["error"].as_str().unwrap().contains("token"), "{v}");
    assert!(raw.closed(), "the connection is closed after a wrong token");
    let mut c = Client::connect(&srv.addr, Some("s3cret".into()), Duration::from_secs(2)).unwrap();
    assert!(matches!(c.call(Request::Hello, Duration::from_secs(2)).unwrap(), Response::Hello { .. }));
    let mut bad = Client::connect(&srv.addr, None, Duration::from_secs(2));
    // The server serves one connection at a time: close the good one first.
    drop(c);
    let err = bad.as_mut().unwrap().call(Request::Hello, Duration::from_secs(2)).unwrap_err();
    assert!(matches!(err, ClientError::Remote(ref e) if e.contains("token")), "{err}");
}

#[test]
fn a_whole_step_through_the_client() {
    let srv = Server::start(ServerConfig::default());
    let mut c = Client::connect(&srv.addr, None, Duration::from_secs(2)).unwrap();
    let t = Duration::from_secs(2);
    match c.call(Request::Prepare { rx_queues: 4, max_size: 1518 }, t).unwrap() {
        Response::Prepared(p) => assert_eq!(p.rx_queues, 4),
        other => panic!("{other:?}"),
    }
    let w = match c.call(Request::StartWindow, t).unwrap() {
        Response::WindowStarted { window } => window,
        other => panic!("{other:?}"),
    };
    assert!(matches!(c.call(Request::StartWindow, t), Err(ClientError::Remote(e)) if e.contains("already open")));
    match c.call(Request::EndWindow { window: w }, t).unwrap() {
        Response::WindowFigures(f) => {
            assert_eq!(f.window, w);
            assert_eq!(f.packets, 42);
        }
        other => panic!("{other:?}"),
    }
    let err = c.call(Request::Prepare { rx_queues: 9, max_size: 1518 }, t).unwrap_err();
    assert!(matches!(err, ClientError::Remote(ref e) if e.contains("has 8")), "{err}");
    assert!(matches!(c.call(Request::Bye, t).unwrap(), Response::Bye));
    let log = srv.log.lock().unwrap();
    assert_eq!((log.started, log.ended, log.abandoned), (1, 1, 0));
    assert_eq!(log.prepared, [4]);
}

#[test]
fn a_client_vanishing_mid_step_abandons_the_window_and_the_server_carries_on() {
    let srv = Server::start(ServerConfig::default());
    {
        let mut c = Client::connect(&srv.addr, None, Duration::from_secs(2)).unwrap();
        assert!(matches!(c.call(Request::StartWindow, Duration::from_secs(2)).unwrap(), Response::WindowStarted { .. }));
    } // dropped: the connection closes with the window open
    let deadline = Instant::now() + Duration::from_secs(5);
    while srv.log.lock().unwrap().abandoned == 0 {
        assert!(Instant::now() < deadline, "window not abandoned");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = Client::connect(&srv.addr, None, Duration::from_secs(2)).unwrap();
    assert!(matches!(c.call(Request::StartWindow, Duration::from_secs(2)).unwrap(), Response::WindowStarted { .. }));
}

#[test]
fn a_silent_client_times_out_and_a_silent_server_too() {
    let srv = Server::start(ServerConfig { idle_timeout: Duration::from_millis(600), ..Default::default() });
    let mut raw = Raw::open(&srv.addr);
    let t0 = Instant::now();
    assert!(raw.closed(), "the server hangs up on a silent client");
    assert!(t0.elapsed() < Duration::from_secs(4));
    hello_works(&mut Raw::open(&srv.addr));

    // A server that accepts and never answers: the client's wait is bounded.
    let mute = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = mute.local_addr().unwrap().to_string();
    let mut c = Client::connect(&addr, None, Duration::from_secs(2)).unwrap();
    let t0 = Instant::now();
    let err = c.call(Request::Hello, Duration::from_millis(300)).unwrap_err();
    assert!(matches!(err, ClientError::Io(ref e) if e.contains("no answer")), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(2));
    // Nobody listening at all.
    drop(mute);
    assert!(matches!(Client::connect(&addr, None, Duration::from_secs(1)), Err(ClientError::Connect(_))));
}
