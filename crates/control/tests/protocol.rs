//! The control protocol over real TCP on loopback, with a stand-in for
//! drop's receiver (no EAL needed): the handshake and its deadlines, the
//! busy answer, bounded lines and connections, and a session in which every
//! bad message gets an error reply and the server keeps serving.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use control::{
    serve, Backend, BackendError, Client, ClientError, ClientLink, PeerInfo, PlannedStep, Prepared, Request, Response, Secret,
    ServerConfig, StepPlan, WindowFigures, MAX_LINE,
};

#[derive(Default)]
struct Log {
    started: u32,
    ended: u32,
    abandoned: u32,
    prepared: Vec<u16>,
    /// The port's link never comes up: start_window waits, as drop's does
    /// for a memif peer, until the client goes.
    port_down: bool,
    gave_up_waiting: u32,
}

struct StandIn(Arc<Mutex<Log>>);

impl Backend for StandIn {
    fn info(&mut self) -> PeerInfo {
        PeerInfo { hostname: "stand-in".into(), max_rx_queues: 8, max_size: 9018, ..Default::default() }
    }
    fn prepare(&mut self, rx_queues: u16, _max_size: u32) -> Result<Prepared, BackendError> {
        if rx_queues > 8 {
            return Err(BackendError::Refused(format!("{rx_queues} RX queues asked, the device has 8")));
        }
        self.0.lock().unwrap().prepared.push(rx_queues);
        Ok(Prepared { rx_queues, restarted: true, link_up: true })
    }
    fn start_window(&mut self, _streams: &[seqtrack::StreamEdge], client: ClientLink<'_>) -> Result<(), BackendError> {
        if self.0.lock().unwrap().port_down {
            let until = Instant::now() + Duration::from_secs(20);
            while Instant::now() < until {
                if client.gone() {
                    self.0.lock().unwrap().gave_up_waiting += 1;
                    return Err(BackendError::ClientGone);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            return Err(BackendError::NotReceiving(Duration::from_secs(20)));
        }
        self.0.lock().unwrap().started += 1;
        Ok(())
    }
    fn end_window(&mut self, _window: u64, _streams: &[seqtrack::StreamEdge]) -> Result<WindowFigures, BackendError> {
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
    stop: &'static AtomicBool,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(cfg: ServerConfig) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let log = Arc::new(Mutex::new(Log::default()));
        // Each server has its own stop flag, kept for the test's life.
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let backend: Arc<Mutex<dyn Backend>> = Arc::new(Mutex::new(StandIn(log.clone())));
        let thread = std::thread::spawn(move || serve(listener, backend, cfg, stop).unwrap());
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

fn secret() -> Secret {
    Secret::new("s3cret").unwrap()
}

fn quick() -> ServerConfig {
    ServerConfig { first_line_deadline: Duration::from_millis(800), auth_deadline: Duration::from_millis(1500), ..Default::default() }
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
    fn reply(&mut self) -> serde_json::Value {
        let mut s = String::new();
        self.r.read_line(&mut s).unwrap();
        serde_json::from_str(&s).unwrap_or_else(|e| panic!("reply {s:?} is not JSON: {e}"))
    }
    fn send(&mut self, line: &str) -> serde_json::Value {
        self.w.write_all(line.as_bytes()).unwrap();
        self.w.write_all(b"\n").unwrap();
        self.reply()
    }
    /// The server closed this connection (read gives EOF or a reset),
    /// after at most a last error line.
    fn closed(&mut self) -> bool {
        loop {
            let mut s = String::new();
            match self.r.read_line(&mut s) {
                Ok(0) | Err(_) => return true,
                Ok(_) if s.contains(r#""type":"error""#) => continue,
                Ok(_) => return false,
            }
        }
    }
    /// A connection past its hello, opened again while drop is still
    /// releasing the last client's session (it answers "busy" and closes
    /// until then: a client that checked drop was free and left can race
    /// the next one).
    fn served(addr: &str) -> Raw {
        let deadline = Instant::now() + Duration::from_secs(8);
        loop {
            let mut raw = Raw::open(addr);
            let mut s = String::new();
            let hello = raw.w.write_all(b"{\"v\":2,\"id\":1,\"type\":\"hello\"}\n");
            if hello.is_ok() && raw.r.read_line(&mut s).is_ok() && s.contains(r#""type":"challenge""#) {
                return raw;
            }
            assert!(Instant::now() < deadline, "drop never served a new client; last answer {s:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    /// hello and auth with `secret` (None: an empty proof).
    fn authenticate(&mut self, secret: Option<&Secret>) -> serde_json::Value {
        let c = self.send(r#"{"v":2,"id":1,"type":"hello"}"#);
        assert_eq!(c["type"], "challenge", "{c}");
        let proof = secret.map(|s| s.proof(c["nonce"].as_str().unwrap())).unwrap_or_default();
        self.send(&format!(r#"{{"v":2,"id":2,"type":"auth","proof":"{proof}"}}"#))
    }
}

fn client(srv: &Server, secret: Option<&Secret>) -> Result<Client, ClientError> {
    let mut c = Client::connect(&srv.addr, Duration::from_secs(2))?;
    c.handshake(secret, Duration::from_secs(3))?;
    Ok(c)
}

/// A client served once drop has released the last session (a client
/// that went without a bye frees drop only once drop notices).
fn served_client(srv: &Server) -> Client {
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        match client(srv, None) {
            Ok(c) => return c,
            Err(e) => assert!(Instant::now() < deadline, "never served: {e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(8);
    while !cond() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_handshake_proves_the_secret_and_hands_over_the_info() {
    let srv = Server::start(ServerConfig { secret: Some(secret()), ..quick() });
    let mut raw = Raw::open(&srv.addr);
    let v = raw.authenticate(Some(&secret()));
    assert_eq!(v["type"], "hello", "{v}");
    assert_eq!(v["info"]["hostname"], "stand-in");
    assert_eq!(raw.send(r#"{"v":2,"id":3,"type":"bye"}"#)["type"], "bye");
    // The client does the same.
    let c = client(&srv, Some(&secret()));
    assert!(c.is_ok());
}

#[test]
fn a_wrong_or_missing_secret_is_refused_and_closed() {
    let srv = Server::start(ServerConfig { secret: Some(secret()), ..quick() });
    let mut raw = Raw::open(&srv.addr);
    let v = raw.authenticate(Some(&Secret::new("guess").unwrap()));
    assert!(v["error"].as_str().unwrap().contains("wrong secret"), "{v}");
    assert!(raw.closed());
    let mut raw = Raw::open(&srv.addr);
    let v = raw.authenticate(None);
    assert!(v["error"].as_str().unwrap().contains("wrong secret"), "{v}");
    let err = client(&srv, None).err().unwrap();
    assert!(matches!(err, ClientError::Remote(ref e) if e.contains("BLASTDROP_TOKEN")), "{err}");
    assert!(client(&srv, Some(&secret())).is_ok(), "the right secret is still served");
}

#[test]
fn bad_lines_before_authenticating_close_the_connection() {
    let srv = Server::start(quick());
    for (line, want) in [
        ("{not json", "not a JSON object"),
        (r#"{"v":1,"id":1,"type":"hello","token":"t"}"#, "protocol version 1"),
        (r#"{"v":2,"id":1,"type":"start_window"}"#, "before authenticating"),
        (r#"{"v":2,"id":1,"type":"auth","proof":""}"#, "before authenticating"),
        (r#"{"v":2,"id":1,"type":"format_disk"}"#, "unknown message type"),
    ] {
        let mut raw = Raw::open(&srv.addr);
        let v = raw.send(line);
        assert!(v["error"].as_str().unwrap().contains(want), "{line} -> {v}");
        assert!(raw.closed(), "{line}: closed after the error");
    }
    let mut raw = Raw::open(&srv.addr);
    let huge = format!(r#"{{"v":2,"id":6,"type":"hello","pad":"{}"}}"#, "z".repeat(MAX_LINE * 2));
    let v = raw.send(&huge);
    assert!(v["error"].as_str().unwrap().contains("longer than"), "{v}");
    assert!(client(&srv, None).is_ok());
}

#[test]
fn nobody_holds_the_door() {
    let srv = Server::start(quick());
    // Idle: connected, says nothing.
    let mut idle = Raw::open(&srv.addr);
    // Drip: a byte at a time, never a whole line in time.
    let mut drip = TcpStream::connect(&srv.addr).unwrap();
    let dripper = std::thread::spawn(move || {
        for b in br#"{"v":2,"id":1,"type":"hello"}"#.iter().cycle().take(40) {
            if drip.write_all(&[*b]).is_err() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    });
    // A real client is served meanwhile.
    let mut c = client(&srv, None).expect("served beside an idle and a dripping connection");
    assert!(matches!(c.call(Request::Bye, Duration::from_secs(2)).unwrap(), Response::Bye));
    let t0 = Instant::now();
    assert!(idle.closed(), "the idle connection is closed");
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert!(dripper.join().unwrap(), "the drip is cut off");
}

#[test]
fn a_request_split_across_reads_is_one_line() {
    let srv = Server::start(quick());
    let mut raw = Raw::open(&srv.addr);
    for part in [r#"{"v":2,"id":7,"#, r#""type":"hel"#, "lo\"}\n"] {
        raw.w.write_all(part.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    let v = raw.reply();
    assert_eq!((v["type"].as_str(), v["id"].as_u64()), (Some("challenge"), Some(7)), "{v}");
}

/// A client killed while drop waits for its port (blast's memif side dies
/// before it connects) must not hold drop for the wait: the next client is
/// served at once, round after round, and no window was opened.
#[test]
fn a_client_gone_while_drop_waits_for_its_port_frees_drop_at_once() {
    let srv = Server::start(quick());
    srv.log.lock().unwrap().port_down = true;
    for round in 1..=3 {
        let mut raw = Raw::served(&srv.addr);
        assert_eq!(raw.send(r#"{"v":2,"id":2,"type":"auth","proof":""}"#)["type"], "hello", "round {round}");
        raw.w.write_all(b"{\"v\":2,\"id\":3,\"type\":\"start_window\"}\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let gone = Instant::now();
        drop(raw);
        wait_until("the wait gave up", || srv.log.lock().unwrap().gave_up_waiting == round);
        wait_until("the next client is served", || client(&srv, None).is_ok());
        assert!(gone.elapsed() < Duration::from_secs(5), "round {round}: drop was held {:?} by a client that had gone", gone.elapsed());
    }
    let log = srv.log.lock().unwrap();
    assert_eq!((log.started, log.abandoned), (0, 0), "no window opened for a client that went");
}

/// drop answers a bye only once the session is released, so the next run
/// (a ladder's next blast, blast paths' next cell) is served at once,
/// never told drop is busy with the run that just said bye.
#[test]
fn a_client_told_bye_is_followed_at_once() {
    let srv = Server::start(quick());
    for round in 1..=30 {
        let mut c = client(&srv, None).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(matches!(c.call(Request::Bye, Duration::from_secs(2)).unwrap(), Response::Bye));
    }
}

#[test]
fn a_held_session_makes_others_busy_and_connections_are_bounded() {
    let srv = Server::start(ServerConfig { max_pending: 4, ..quick() });
    let mut holder = client(&srv, None).unwrap();
    let mut other = Raw::open(&srv.addr);
    let v = other.reply();
    let e = v["error"].as_str().unwrap();
    assert!(e.starts_with("busy: serving 127.0.0.1:") && e.contains(" since ") && e.contains("UTC"), "{e}");
    assert!(other.closed());
    assert!(matches!(holder.call(Request::Bye, Duration::from_secs(2)).unwrap(), Response::Bye));
    wait_until("the session is released", || client(&srv, None).is_ok());

    // Many at once: at most 4 wait to authenticate, the rest are told so
    // (or told the session is held, while the last client's is winding down).
    let many: Vec<Raw> = (0..40).map(|_| Raw::open(&srv.addr)).collect();
    let mut busy = 0;
    for mut r in many {
        let mut s = String::new();
        if r.r.read_line(&mut s).is_ok() && s.contains("busy:") {
            busy += 1;
        }
    }
    assert!(busy >= 30, "{busy} of 40 refused at once");
    wait_until("served again once they are gone", || client(&srv, None).is_ok());
}

#[test]
fn a_whole_step_through_the_client() {
    let srv = Server::start(ServerConfig::default());
    let mut c = client(&srv, None).unwrap();
    let t = Duration::from_secs(2);
    match c.call(Request::Prepare { rx_queues: 4, max_size: 1518 }, t).unwrap() {
        Response::Prepared(p) => assert_eq!(p.rx_queues, 4),
        other => panic!("{other:?}"),
    }
    let w = match c.call(Request::StartWindow { streams: None }, t).unwrap() {
        Response::WindowStarted { window } => window,
        other => panic!("{other:?}"),
    };
    assert!(matches!(c.call(Request::StartWindow { streams: None }, t), Err(ClientError::Remote(e)) if e.contains("already open")));
    assert!(
        matches!(c.call(Request::EndWindow { window: w + 5, streams: None }, t), Err(ClientError::Remote(e)) if e.contains("not open"))
    );
    match c.call(Request::EndWindow { window: w, streams: None }, t).unwrap() {
        Response::WindowFigures(f) => {
            assert_eq!(f.window, w);
            assert_eq!(f.packets, 42);
        }
        other => panic!("{other:?}"),
    }
    for (q, size, want) in [
        (0, 1518, "rx_queues 0"),
        (9, 1518, "1 to 8"),
        (65535, 1518, "1 to 8"),
        (1, 0, "64 to 9018"),
        (1, 10, "64 to 9018"),
        (1, 9019, "64 to 9018"),
    ] {
        let err = c.call(Request::Prepare { rx_queues: q, max_size: size }, t).unwrap_err();
        assert!(matches!(err, ClientError::Remote(ref e) if e.contains(want)), "{q} {size}: {err}");
    }
    assert!(matches!(c.call(Request::Hello, t), Err(ClientError::Remote(e)) if e.contains("already authenticated")));
    assert!(matches!(c.call(Request::Bye, t).unwrap(), Response::Bye));
    let log = srv.log.lock().unwrap();
    assert_eq!((log.started, log.ended, log.abandoned), (1, 1, 0));
    assert_eq!(log.prepared, [4]);
}

#[test]
fn errors_in_a_session_are_answered_and_the_session_goes_on() {
    let srv = Server::start(ServerConfig::default());
    let mut raw = Raw::open(&srv.addr);
    assert_eq!(raw.authenticate(None)["type"], "hello");
    for (line, want) in [
        ("{not json", "not a JSON object"),
        (r#"{"v":2,"id":1,"type":"format_disk"}"#, "unknown message type"),
        (r#"{"v":9,"id":2,"type":"start_window"}"#, "protocol version 9"),
        (r#"{"v":2,"id":4,"type":"end_window","window":"x"}"#, "bad fields"),
        (r#"{"v":2,"id":5,"type":"end_window","window":3}"#, "not open"),
    ] {
        let v = raw.send(line);
        assert!(v["error"].as_str().unwrap().contains(want), "{line} -> {v}");
    }
    let huge = format!(r#"{{"v":2,"id":6,"type":"bye","pad":"{}"}}"#, "z".repeat(MAX_LINE * 2));
    assert!(raw.send(&huge)["error"].as_str().unwrap().contains("longer than"));
    assert_eq!(raw.send(r#"{"v":2,"id":77,"type":"nope"}"#)["id"], 77, "errors repeat the id");
    assert_eq!(raw.send(r#"{"v":2,"id":8,"type":"start_window"}"#)["type"], "window_started");
}

#[test]
fn a_client_vanishing_mid_step_abandons_the_window_and_the_server_carries_on() {
    let srv = Server::start(ServerConfig::default());
    {
        let mut c = client(&srv, None).unwrap();
        assert!(matches!(c.call(Request::StartWindow { streams: None }, Duration::from_secs(2)).unwrap(), Response::WindowStarted { .. }));
    } // dropped: the connection closes with the window open
    wait_until("window abandoned", || srv.log.lock().unwrap().abandoned == 1);
    let mut c = served_client(&srv);
    assert!(matches!(c.call(Request::StartWindow { streams: None }, Duration::from_secs(2)).unwrap(), Response::WindowStarted { .. }));
}

#[test]
fn a_silent_client_times_out_and_a_silent_server_too() {
    let srv = Server::start(ServerConfig { idle_timeout: Duration::from_millis(600), ..quick() });
    let mut raw = Raw::open(&srv.addr);
    assert_eq!(raw.authenticate(None)["type"], "hello");
    let t0 = Instant::now();
    assert!(raw.closed(), "the server hangs up on a silent session");
    assert!(t0.elapsed() < Duration::from_secs(4));
    assert!(client(&srv, None).is_ok());

    // A server that accepts and never answers: the client's wait is bounded.
    let mute = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = mute.local_addr().unwrap().to_string();
    let mut c = Client::connect(&addr, Duration::from_secs(2)).unwrap();
    let t0 = Instant::now();
    let err = c.call(Request::Hello, Duration::from_millis(300)).unwrap_err();
    assert!(matches!(err, ClientError::Io(ref e) if e.contains("no answer")), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(2));
    // Nobody listening at all.
    drop(mute);
    assert!(matches!(Client::connect(&addr, Duration::from_secs(1)), Err(ClientError::Connect(_))));
}

// ---- group trials (issue 15): N senders, one window per step ----

fn group_plan(size: u32) -> StepPlan {
    StepPlan {
        steps: vec![PlannedStep {
            queues: 1,
            size,
            rx_queues: 1,
            rate: Some(1e5),
            shape: None,
            size_mix: None,
            duration_ms: 1000,
            warmup_ms: 0,
        }],
    }
}

fn member(srv: &Server, group: &str) -> Result<Client, ClientError> {
    let mut c = Client::connect(&srv.addr, Duration::from_secs(2))?;
    c.handshake_for(None, Some(group), Duration::from_secs(3))?;
    Ok(c)
}

/// `member`, once the server is free: the last group's members close their
/// connections as their threads end, and until the server has seen every
/// close it is still serving that group (busy) for a new one.
fn member_when_free(srv: &Server, group: &str) -> Client {
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        match member(srv, group) {
            Ok(c) => return c,
            Err(ClientError::Remote(e)) if e.contains("busy") && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("{group}: {e}"),
        }
    }
}

/// Joins and runs `steps` whole steps on its own thread; returns the answers it got.
fn run_member(
    mut c: Client,
    group: &str,
    senders: u16,
    sent: u64,
    steps: usize,
) -> std::thread::JoinHandle<Result<Vec<Response>, ClientError>> {
    let group = group.to_string();
    std::thread::spawn(move || {
        let t = Duration::from_secs(10);
        let mut got = vec![c.call(Request::Join { group, senders, plan: group_plan(64) }, t)?];
        for _ in 0..steps {
            got.push(c.call(Request::Prepare { rx_queues: 1, max_size: 64 }, t)?);
            let w = match c.call(Request::StartWindow { streams: None }, t)? {
                Response::WindowStarted { window } => window,
                other => panic!("{other:?}"),
            };
            got.push(Response::WindowStarted { window: w });
            got.push(c.call(
                Request::GroupEnd {
                    window: w,
                    sent_packets: sent,
                    sent_bytes: sent * 64,
                    cycles_per_packet: Some(50.0),
                    sender_limit: Some("none".into()),
                    streams: None,
                },
                t,
            )?);
        }
        c.call(Request::Bye, t)?;
        Ok(got)
    })
}

#[test]
fn a_group_steps_together_and_every_member_gets_the_group_figures() {
    let srv = Server::start(ServerConfig::default());
    let joiners: Vec<_> = (0..3).map(|i| run_member(member(&srv, "g").unwrap(), "g", 3, 1000 * (i + 1), 2)).collect();
    let answers: Vec<Vec<Response>> = joiners.into_iter().map(|j| j.join().unwrap().unwrap()).collect();
    let mut bases: Vec<u32> = answers
        .iter()
        .map(|a| match &a[0] {
            Response::Joined { senders: 3, stream_base, stream_count, .. } => {
                assert_eq!(*stream_count, 1344);
                *stream_base
            }
            other => panic!("{other:?}"),
        })
        .collect();
    bases.sort();
    assert_eq!(bases, [0, 1344, 2688], "each member its own streams");
    for a in &answers {
        // Both steps: the same window numbers, and the same figures with every member's count.
        assert!(matches!(a[2], Response::WindowStarted { window: 1 }) && matches!(a[5], Response::WindowStarted { window: 2 }), "{a:?}");
        for f in [&a[3], &a[6]] {
            let Response::WindowFigures(f) = f else { panic!("{f:?}") };
            let g = f.group.as_ref().expect("group figures");
            assert_eq!(g.name, "g");
            let mut sent: Vec<u64> = g.members.iter().map(|m| m.sent_packets).collect();
            sent.sort();
            assert_eq!(sent, [1000, 2000, 3000]);
            // Each member's own word on its sending travels with its row.
            assert!(g.members.iter().all(|m| m.cycles_per_packet == Some(50.0) && m.sender_limit.as_deref() == Some("none")), "{g:?}");
            assert_eq!(f.packets, 42, "the receiver's own count");
        }
    }
    let log = srv.log.lock().unwrap();
    assert_eq!((log.prepared.len(), log.started, log.ended), (2, 2, 2), "the receiver works once per step, not once per member");
    drop(log);
    wait_until("a run of its own is served once the group is over", || client(&srv, None).is_ok());
}

#[test]
fn a_member_with_another_plan_or_size_is_refused_by_name() {
    let srv = Server::start(ServerConfig::default());
    let t = Duration::from_secs(3);
    let mut a = member(&srv, "g").unwrap();
    assert!(matches!(
        a.call(Request::Join { group: "g".into(), senders: 2, plan: group_plan(64) }, t).unwrap(),
        Response::Joined { member: 0, .. }
    ));
    let mut b = member(&srv, "g").unwrap();
    match b.call(Request::Join { group: "g".into(), senders: 2, plan: group_plan(1500) }, t) {
        Err(ClientError::Remote(e)) => assert!(e.contains("step 1: frame size 1500 B, the group's is 64 B"), "{e}"),
        other => panic!("{other:?}"),
    }
    match b.call(Request::Join { group: "g".into(), senders: 3, plan: group_plan(64) }, t) {
        Err(ClientError::Remote(e)) => assert!(e.contains("expects 2 senders") && e.contains("--senders"), "{e}"),
        other => panic!("{other:?}"),
    }
    // Before joining, a member may do nothing else; a client of its own, or of another group, is busy.
    assert!(matches!(b.call(Request::StartWindow { streams: None }, t), Err(ClientError::Remote(e)) if e.contains("join it first")));
    assert!(matches!(client(&srv, None), Err(ClientError::Remote(e)) if e.contains("busy: serving group g")));
    assert!(matches!(member(&srv, "other"), Err(ClientError::Remote(e)) if e.contains("busy")));
    assert!(matches!(
        b.call(Request::Join { group: "g".into(), senders: 2, plan: group_plan(64) }, t).unwrap(),
        Response::Joined { member: 1, .. }
    ));
    // Full now: a third is told so at its handshake.
    assert!(matches!(member(&srv, "g"), Err(ClientError::Remote(e)) if e.contains("busy: serving group g (2 of 2")));
}

#[test]
fn a_member_that_vanishes_ends_the_step_for_all_and_the_next_group_is_served() {
    let srv = Server::start(ServerConfig::default());
    for round in 0..3 {
        let t = Duration::from_secs(10);
        let name = format!("g{round}");
        let join = |c: &mut Client| c.call(Request::Join { group: name.clone(), senders: 3, plan: group_plan(64) }, t).unwrap();
        let mut cs: Vec<Client> = (0..3).map(|_| member_when_free(&srv, &name)).collect();
        cs.iter_mut().for_each(|c| assert!(matches!(join(c), Response::Joined { .. })));
        let mut killed = cs.pop().unwrap();
        // The step is prepared by all three and its window opened by all three...
        let mut waiting: Vec<_> = cs
            .into_iter()
            .map(|mut c| {
                std::thread::spawn(move || {
                    c.call(Request::Prepare { rx_queues: 1, max_size: 64 }, t).unwrap();
                    let w = match c.call(Request::StartWindow { streams: None }, t).unwrap() {
                        Response::WindowStarted { window } => window,
                        other => panic!("{other:?}"),
                    };
                    // ...then two wait at the window's end for the third, which is gone.
                    c.call(
                        Request::GroupEnd {
                            window: w,
                            sent_packets: 1,
                            sent_bytes: 64,
                            cycles_per_packet: None,
                            sender_limit: None,
                            streams: None,
                        },
                        t,
                    )
                })
            })
            .collect();
        killed.call(Request::Prepare { rx_queues: 1, max_size: 64 }, t).unwrap();
        killed.call(Request::StartWindow { streams: None }, t).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        drop(killed);
        for w in waiting.drain(..) {
            match w.join().unwrap() {
                Err(ClientError::Remote(e)) => {
                    assert!(e.contains("member 2 left the group") && e.contains("the step ends for every member"), "{e}")
                }
                other => panic!("round {round}: {other:?}"),
            }
        }
        wait_until("the open window is recorded as incomplete", || srv.log.lock().unwrap().abandoned == round + 1);
    }
    // The members of the last group are gone with their threads: a new client is served.
    wait_until("served again", || client(&srv, None).is_ok());
}
