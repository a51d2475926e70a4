//! drop's control port under abuse: garbage, oversized lines, wrong
//! versions and secrets, idle and slow clients, a flood of connections,
//! out-of-order requests, clients that vanish mid-window and clients that
//! find the session taken. Every case runs against a real `drop --listen`
//! (memif) over raw TCP, and each is followed by a correct `blast --peer`
//! run that must succeed: no abuse may cost the next real run anything.
//! Also: the shared secret never crosses the wire nor shows in
//! /proc/PID/cmdline, and drop refuses listen addresses it must not use.

mod common;
use common::*;
use serde_json::{json, Value};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The shared secret drop is started with (by file) and blast proves.
const SECRET: &str = "abuse-Secret-5b7e1c0d";
const SECRET_ENV: &str = "BLASTDROP_TOKEN";

// ---------------------------------------------------------------------------
// Processes

/// `bin args` with BLASTDROP_TOKEN removed from the environment and `env`
/// set instead (tests/common's spawn inherits the environment as it is).
fn command(bin: &str, args: &[String], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args).env_remove(SECRET_ENV).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Collects a started child's output; kills it and fails past `timeout`.
fn finish_child(mut child: Child, timeout: Duration) -> Output {
    let started = Instant::now();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = started + timeout;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let (o, e) = (out_t.join().unwrap_or_default(), err_t.join().unwrap_or_default());
            panic!("process still running after {timeout:?}; stdout: {o}\nstderr: {e}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    Output { status, stdout: out_t.join().unwrap_or_default(), stderr: err_t.join().unwrap_or_default(), elapsed }
}

/// Runs `bin args` with `env` (and no other secret) to completion within `timeout`.
fn run_env(bin: &str, args: &[String], env: &[(&str, &str)], timeout: Duration) -> Output {
    let child = command(bin, args, env).spawn().unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    finish_child(child, timeout)
}

/// The lines of stderr that report a failure, as fail::report writes them.
fn error_lines<'a>(out: &'a Output, tool: &str) -> Vec<&'a str> {
    let prefix = format!("{tool}: error: ");
    out.stderr.lines().filter(|l| l.starts_with(&prefix)).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The proof of `secret` for `nonce` (HMAC-SHA256 under the protocol's context, in hex).
fn proof(secret: &str, nonce: &str) -> String {
    control::Secret::new(secret.as_bytes()).unwrap().proof(nonce)
}

/// A drop to abuse, and correct runs against it.
struct Rig {
    dir: PathBuf,
    addr: String,
    sock: String,
    runs: u32,
    drop: Running,
}

impl Rig {
    fn start(name: &str) -> Rig {
        let dir = scratch(name);
        let token = dir.join("token");
        std::fs::write(&token, format!("{SECRET}\n")).unwrap();
        let (drop, addr, sock) = listening_drop(&dir, "m", 1, &["--token-file", token.to_str().unwrap()]);
        Rig { dir, addr, sock, runs: 0, drop }
    }

    fn blast(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        run_env(BLAST, &memif_blast_args(&self.sock, 1, args), env, Duration::from_secs(60))
    }

    fn assert_alive(&mut self, after: &str) {
        if let Some(st) = self.drop.try_status() {
            panic!("drop exited ({st}) after {after}");
        }
    }

    /// A correct one-step ladder (secret by environment) that must succeed,
    /// with every frame counted at both ends.
    fn good_run(&mut self, after: &str) {
        self.assert_alive(after);
        self.runs += 1;
        let json = self.dir.join(format!("run{}.json", self.runs));
        let args = [
            "--peer",
            &self.addr,
            "--queues",
            "1",
            "--size",
            "64",
            "--rate",
            "100k",
            "--warmup",
            "0.2",
            "--duration",
            "0.3",
            "--drain",
            "0.2",
            "--json",
            json.to_str().unwrap(),
        ];
        let out = self.blast(&args, &[(SECRET_ENV, SECRET)]);
        assert!(out.status.success(), "the correct run after {after} failed ({:?}):\n{}\n{}", out.status, out.stdout, out.stderr);
        assert_eq!(table_rows(&out.stdout).len(), 1, "after {after}: {}", out.stdout);
        let v = read_json(&json);
        let steps = v["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1, "after {after}: {v}");
        let s = &steps[0];
        assert!(s["error"].is_null(), "after {after}: {s}");
        let sent = s["sent"]["packets"].as_u64().unwrap();
        assert!(sent > 10_000, "after {after}: {s}");
        assert_eq!(s["receiver"]["packets"].as_u64(), Some(sent), "memif loses nothing: after {after}: {s}");
        eprintln!("after {after}: a correct run succeeded ({:.1} s)", out.elapsed.as_secs_f64());
        self.assert_alive(after);
    }
}

// ---------------------------------------------------------------------------
// Raw connections, every read bounded

struct Raw {
    s: TcpStream,
    buf: Vec<u8>,
    opened: Instant,
    id: u64,
}

impl Raw {
    fn open(addr: &str) -> Raw {
        let a: SocketAddr = addr.parse().unwrap();
        let s = TcpStream::connect_timeout(&a, Duration::from_secs(5)).unwrap_or_else(|e| panic!("cannot connect to {addr}: {e}"));
        let _ = s.set_nodelay(true);
        s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        Raw { s, buf: Vec::new(), opened: Instant::now(), id: 0 }
    }

    fn local(&self) -> String {
        self.s.local_addr().unwrap().to_string()
    }

    fn send(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.s.write_all(b)
    }

    /// Sends `body` (a request without v and id) as a v2 line; returns its id.
    fn request(&mut self, body: Value) -> u64 {
        self.id += 1;
        let mut v = json!({"v": 2, "id": self.id});
        v.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
        let line = format!("{v}\n");
        self.send(line.as_bytes()).unwrap_or_else(|e| panic!("sending {line}: {e}"));
        self.id
    }

    /// One read of at most `wait`: Ok(true) bytes came, Ok(false) none yet,
    /// Err the stream ended (0 or an error).
    fn pull(&mut self, wait: Duration) -> Result<bool, String> {
        self.s.set_read_timeout(Some(wait.max(Duration::from_millis(1)))).unwrap();
        let mut chunk = [0u8; 16384];
        match self.s.read(&mut chunk) {
            Ok(0) => Err("closed".into()),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }

    fn take_line(&mut self) -> Option<String> {
        let i = self.buf.iter().position(|&b| b == b'\n')?;
        let rest = self.buf.split_off(i + 1);
        let line = std::mem::replace(&mut self.buf, rest);
        Some(String::from_utf8_lossy(&line[..i]).into_owned())
    }

    fn line(&mut self, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(l) = self.take_line() {
                return Ok(l);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no line within {timeout:?} (partial: {:?})", self.rest()));
            }
            if let Err(e) = self.pull(left.min(Duration::from_millis(200))) {
                return Err(format!("the connection ended ({e}) with no further line (partial: {:?})", self.rest()));
            }
        }
    }

    /// The next line, as a v2 reply.
    fn reply(&mut self, what: &str) -> Value {
        let l = self.line(Duration::from_secs(10)).unwrap_or_else(|e| panic!("{what}: {e}"));
        let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("{what}: reply is not JSON ({e}): {l}"));
        assert_eq!(v["v"], 2, "{what}: {l}");
        v
    }

    /// The next line, which must be an error answering `id`: its text.
    fn error(&mut self, what: &str, id: u64) -> String {
        let v = self.reply(what);
        assert_eq!(v["type"], "error", "{what}: {v}");
        assert_eq!(v["id"], id, "{what}: {v}");
        v["error"].as_str().unwrap_or_else(|| panic!("{what}: {v}")).to_string()
    }

    /// Waits up to `timeout` for drop to close its end; returns when it
    /// was seen closed, counted from the connect. What came before is kept.
    fn closed_within(&mut self, timeout: Duration) -> Result<Duration, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.pull(left.min(Duration::from_millis(100))).is_err() {
                return Ok(self.opened.elapsed());
            }
            if Instant::now() >= deadline {
                return Err(format!("still open {:?} after connecting (got {:?})", self.opened.elapsed(), self.rest()));
            }
        }
    }

    /// Asserts drop closes within `timeout`; returns when.
    fn assert_closed(&mut self, what: &str, timeout: Duration) -> Duration {
        self.closed_within(timeout).unwrap_or_else(|e| panic!("{what}: drop did not close the connection: {e}"))
    }

    fn rest(&self) -> String {
        String::from_utf8_lossy(&self.buf).into_owned()
    }

    /// hello: the challenge's nonce (auth is on).
    fn hello(&mut self, what: &str) -> String {
        self.challenge(what).unwrap_or_else(|busy| panic!("{what}: {busy}"))
    }

    /// hello: the challenge's nonce, or drop's busy refusal (it still
    /// serves another session).
    fn challenge(&mut self, what: &str) -> Result<String, String> {
        let id = self.request(json!({"type": "hello"}));
        let c = self.reply(what);
        if let Some(busy) = c["error"].as_str().filter(|e| c["type"] == "error" && e.starts_with("busy: serving ")) {
            return Err(busy.to_string());
        }
        assert_eq!((c["type"].as_str(), c["id"].as_u64(), c["auth"].as_bool()), (Some("challenge"), Some(id), Some(true)), "{what}: {c}");
        let nonce = c["nonce"].as_str().unwrap().to_string();
        assert!(nonce.len() >= 32 && nonce.bytes().all(|b| b.is_ascii_hexdigit()), "{what}: {c}");
        Ok(nonce)
    }

    /// hello, challenge, auth with the right proof: the session is ours.
    /// The last raw client's close may not have reached drop yet (it then
    /// still serves that session and says busy): connect again until it has.
    fn authenticate(addr: &str, what: &str) -> Raw {
        let deadline = Instant::now() + Duration::from_secs(8);
        let (mut r, nonce) = loop {
            let mut r = Raw::open(addr);
            match r.challenge(what) {
                Ok(nonce) => break (r, nonce),
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                Err(busy) => panic!("{what}: still busy after 8 s: {busy}"),
            }
        };
        let id = r.request(json!({"type": "auth", "proof": proof(SECRET, &nonce)}));
        let h = r.reply(what);
        assert_eq!((h["type"].as_str(), h["id"].as_u64()), (Some("hello"), Some(id)), "{what}: {h}");
        assert_eq!(h["info"]["max_size"], 1518, "{what}: {h}");
        r
    }
}

/// "busy: serving HOLDER since YYYY-MM-DD HH:MM:SS UTC; ..." naming `holder`.
fn assert_busy_naming(e: &str, holder: &str, what: &str) {
    let head = format!("busy: serving {holder} since ");
    assert!(e.starts_with(&head), "{what}: {e:?} does not name the holder {holder}");
    let date = &e[head.len()..];
    let shape = "dddd-dd-dd dd:dd:dd UTC";
    let ok = date.len() >= shape.len() && date.bytes().zip(shape.bytes()).all(|(c, s)| if s == b'd' { c.is_ascii_digit() } else { c == s });
    assert!(ok, "{what}: {e:?} does not say since when (YYYY-MM-DD HH:MM:SS UTC)");
}

// ---------------------------------------------------------------------------
// The abuse, one drop, a correct run after each case

#[test]
fn every_abuse_of_the_control_port_leaves_drop_serving_a_correct_run() {
    let _g = heavy();
    let began = Instant::now();
    let mut rig = Rig::start("abuse");
    let addr = rig.addr.clone();
    let wait = Duration::from_secs(8);

    // 1. Garbage.
    let mut c = Raw::open(&addr);
    c.send(b"hello there\n").unwrap();
    let e = c.error("garbage", 0);
    assert!(e.starts_with("not a JSON object"), "garbage: {e}");
    c.assert_closed("garbage", wait);
    rig.good_run("garbage");

    // 2. A 10 MB line with its newline: read to its end, refused, closed.
    let mut c = Raw::open(&addr);
    let mut big = vec![b'x'; 10 << 20];
    big.push(b'\n');
    let t = Instant::now();
    c.send(&big).unwrap_or_else(|e| panic!("drop must read a long line to its end, not stop reading: {e} after {:?}", t.elapsed()));
    let e = c.error("a 10 MB line", 0);
    assert_eq!(e, "message longer than 65536 bytes");
    c.assert_closed("a 10 MB line", wait);
    rig.good_run("a 10 MB line");

    // 3. A 10 MB line with no newline, then the end of the stream.
    let mut c = Raw::open(&addr);
    let sent = c.send(&big[..10 << 20]);
    let _ = c.s.shutdown(Shutdown::Write);
    let when = c.assert_closed("a 10 MB line with no newline", wait);
    eprintln!("10 MB with no newline: written {sent:?}, closed by drop {when:?} after connecting, said {:?}", c.rest());
    for l in c.rest().lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert_eq!(v["type"], "error", "{v}");
    }
    drop(c);
    drop(big);
    rig.good_run("a 10 MB line with no newline");

    // 4. Invalid JSON.
    let mut c = Raw::open(&addr);
    c.send(b"{\"v\":2,\"id\":3,\"type\":\n").unwrap();
    let e = c.error("invalid JSON", 0);
    assert!(e.starts_with("not a JSON object"), "invalid JSON: {e}");
    c.assert_closed("invalid JSON", wait);
    rig.good_run("invalid JSON");

    // 5. Protocol version 1 (a token in the message, as v1 had).
    let mut c = Raw::open(&addr);
    c.send(b"{\"v\":1,\"id\":5,\"type\":\"hello\",\"token\":\"letmein\"}\n").unwrap();
    let e = c.error("version 1", 5);
    assert_eq!(e, "protocol version 1 is not spoken here (this side speaks 2): run blast and drop of the same release");
    c.assert_closed("version 1", wait);
    rig.good_run("a version 1 message");

    // 6. A wrong secret: a proper handshake with a wrong proof; and blast with a wrong secret.
    let mut c = Raw::open(&addr);
    let nonce = c.hello("wrong secret");
    let id = c.request(json!({"type": "auth", "proof": proof("not-the-secret", &nonce)}));
    let e = c.error("wrong secret", id);
    assert!(e.starts_with("wrong secret"), "wrong secret: {e}");
    c.assert_closed("wrong secret", wait);
    let mut c = Raw::open(&addr);
    let _ = c.hello("empty proof");
    let id = c.request(json!({"type": "auth", "proof": ""}));
    assert!(c.error("empty proof", id).starts_with("wrong secret"));
    c.assert_closed("empty proof", wait);
    let ladder = ["--peer", &addr, "--queues", "1", "--size", "64", "--rate", "100k", "--warmup", "0.2", "--duration", "0.3"];
    let out = rig.blast(&ladder, &[(SECRET_ENV, "not-the-secret")]);
    assert_eq!(out.status.code(), Some(1), "blast with a wrong secret: {}\n{}", out.stdout, out.stderr);
    let errs = error_lines(&out, "blast");
    assert_eq!(errs.len(), 1, "{}", out.stderr);
    assert!(errs[0].contains("wrong secret"), "{}", errs[0]);
    rig.good_run("a wrong secret");

    // 7. No secret at all: blast says what to give, in one line.
    let out = rig.blast(&ladder, &[]);
    assert_eq!(out.status.code(), Some(1), "blast with no secret: {}\n{}", out.stdout, out.stderr);
    let errs = error_lines(&out, "blast");
    assert_eq!(errs.len(), 1, "{}", out.stderr);
    assert!(errs[0].contains("secret") && errs[0].contains("BLASTDROP_TOKEN") && errs[0].contains("--token-file"), "{}", errs[0]);
    assert!(table_rows(&out.stdout).is_empty(), "{}", out.stdout);
    rig.good_run("blast with no secret");

    // 8. Idle unauthenticated connections held open during a real run: one
    // silent (the first-line deadline, 3 s), one silent after hello (the
    // authentication deadline, 5 s). Neither holds the session.
    let mut idle = Raw::open(&addr);
    let mut half = Raw::open(&addr);
    let _ = half.hello("hello then silence");
    let watch = |mut r: Raw| std::thread::spawn(move || (r.closed_within(Duration::from_secs(12)), r.rest()));
    let (idle_w, half_w) = (watch(idle), watch(half));
    rig.good_run("an idle connection and a half-open handshake (held during the run)");
    let (closed, said) = idle_w.join().unwrap();
    let closed = closed.unwrap_or_else(|e| panic!("idle connection: {e}"));
    eprintln!("idle connection closed by drop {closed:?} after connecting: {said:?}");
    assert!(closed >= Duration::from_millis(2900) && closed < Duration::from_millis(5500), "idle connection closed after {closed:?}");
    assert!(said.contains("sent no complete line within 3s"), "{said}");
    let (closed, said) = half_w.join().unwrap();
    let closed = closed.unwrap_or_else(|e| panic!("hello then silence: {e}"));
    eprintln!("hello then silence closed by drop {closed:?} after connecting: {said:?}");
    assert!(closed >= Duration::from_millis(4900) && closed < Duration::from_millis(7500), "hello then silence closed after {closed:?}");
    assert!(said.contains("did not authenticate within 5s"), "{said}");
    idle = Raw::open(&addr); // and one more after the run, to be sure the deadline still holds
    let closed = idle.assert_closed("idle after the run", wait);
    assert!(closed < Duration::from_millis(5500), "{closed:?}");

    // 9. A slow drip: a byte every 300 ms never makes a line by the deadline.
    let mut c = Raw::open(&addr);
    let hello = b"{\"v\":2,\"id\":1,\"type\":\"hello\"}\n";
    let mut dripped = 0;
    let closed = loop {
        if dripped < hello.len() && c.send(&hello[dripped..dripped + 1]).is_ok() {
            dripped += 1;
        }
        // The 300 ms between bytes, spent waiting for drop's word.
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(300) {
            if c.pull(Duration::from_millis(300) - t.elapsed()).is_err() {
                break;
            }
        }
        if c.rest().contains('\n') || c.opened.elapsed() > Duration::from_secs(12) {
            break c.assert_closed("slow drip", wait);
        }
    };
    eprintln!("slow drip: {dripped} bytes sent, closed by drop {closed:?} after connecting: {:?}", c.rest());
    assert!(dripped < hello.len(), "the drip outran the deadline");
    assert!(c.rest().contains("sent no complete line within 3s"), "{}", c.rest());
    assert!(closed < Duration::from_millis(5000), "{closed:?}");
    rig.good_run("a slow drip");

    // 10. A hello split over three reads, 200 ms apart: assembled, answered.
    let mut c = Raw::open(&addr);
    for (i, part) in [&b"{\"v\":2,\"id\":"[..], b"1,\"type\":\"hel", b"lo\"}\n"].iter().enumerate() {
        if i > 0 {
            // 200 ms apart, and nothing may come back before the line is whole.
            assert!(matches!(c.pull(Duration::from_millis(200)), Ok(false)), "drop answered a partial line: {:?}", c.rest());
        }
        c.send(part).unwrap();
    }
    c.id = 1;
    let r = c.reply("split hello");
    assert_eq!((r["type"].as_str(), r["id"].as_u64(), r["auth"].as_bool()), (Some("challenge"), Some(1), Some(true)), "{r}");
    // And the rest of the session split too: auth in two parts, then bye.
    let line = format!("{}\n", json!({"v": 2, "id": 2, "type": "auth", "proof": proof(SECRET, r["nonce"].as_str().unwrap())}));
    let (a, b) = line.as_bytes().split_at(line.len() / 2);
    c.send(a).unwrap();
    assert!(matches!(c.pull(Duration::from_millis(200)), Ok(false)), "drop answered a partial line: {:?}", c.rest());
    c.send(b).unwrap();
    c.id = 2;
    assert_eq!(c.reply("split auth")["type"], "hello");
    let id = c.request(json!({"type": "bye"}));
    let r = c.reply("bye");
    assert_eq!((r["type"].as_str(), r["id"].as_u64()), (Some("bye"), Some(id)), "{r}");
    c.assert_closed("after bye", wait);
    rig.good_run("a request split across reads");

    // 11. 200 connections at once (200 threads connecting together), held:
    // at most 16 wait to authenticate, the rest are refused at once; drop
    // closes them all by its deadlines. A burst this size can overflow the
    // listen backlog: a connect the kernel dropped comes again a second
    // later, so "at once" is checked on the times drop closed them.
    let t0 = Instant::now();
    let gate = Arc::new(std::sync::Barrier::new(200));
    let watchers: Vec<_> = (0..200)
        .map(|_| {
            let (gate, addr) = (gate.clone(), addr.clone());
            std::thread::spawn(move || {
                gate.wait();
                let mut c = Raw::open(&addr);
                let connected = c.opened;
                let closed = c.closed_within(Duration::from_secs(12)).map(|d| connected + d);
                (connected, closed, c.rest(), c)
            })
        })
        .collect();
    let (mut refused, mut expired_at, mut other, mut latest, mut last_connect) =
        (0, Vec::new(), Vec::new(), Duration::ZERO, Duration::ZERO);
    let mut flood = Vec::new();
    for (i, w) in watchers.into_iter().enumerate() {
        let (connected, closed, said, c) = w.join().unwrap_or_else(|_| panic!("flood connection {i}: its thread failed"));
        let closed = closed.unwrap_or_else(|e| panic!("flood connection {i}: drop did not close it: {e}"));
        last_connect = last_connect.max(connected - t0);
        latest = latest.max(closed - t0);
        if said.contains("busy: too many connections waiting to authenticate") {
            refused += 1;
        } else if said.contains("sent no complete line within 3s") {
            expired_at.push(closed);
        } else {
            other.push(said);
        }
        flood.push(c);
    }
    expired_at.sort();
    // Each waited 3 s from its accept: those closed less than 2.5 s apart were all waiting at once.
    let most_at_once = (0..expired_at.len())
        .map(|i| expired_at[i..].iter().take_while(|&&t| t - expired_at[i] < Duration::from_millis(2500)).count())
        .max()
        .unwrap_or(0);
    eprintln!(
        "200 connections (the last connected {last_connect:?} in): {refused} refused at once, {} closed at the deadline (at most {most_at_once} waiting at once), all closed within {latest:?}",
        expired_at.len()
    );
    assert!(other.is_empty(), "{other:?}");
    assert_eq!(refused + expired_at.len(), 200);
    assert!(expired_at.len() >= 16, "16 may wait to authenticate; {} did", expired_at.len());
    assert!(most_at_once <= 16, "{most_at_once} connections waited to authenticate at once (16 at most)");
    let bound = last_connect + Duration::from_millis(3000) + Duration::from_millis(2500);
    assert!(latest < bound.max(Duration::from_secs(6)), "the last of the flood closed after {latest:?} (last connect {last_connect:?})");
    rig.good_run("200 connections at once (still held)");
    drop(flood);

    // 12. Out of order: a window before hello (closed); auth before hello
    // (closed); after authenticating, errors that leave the session usable.
    let mut c = Raw::open(&addr);
    let id = c.request(json!({"type": "start_window"}));
    assert_eq!(c.error("start_window before hello", id), "start_window before authenticating: send hello first");
    c.assert_closed("start_window before hello", wait);
    let mut c = Raw::open(&addr);
    let id = c.request(json!({"type": "auth", "proof": "00"}));
    assert_eq!(c.error("auth before hello", id), "auth before authenticating: send hello first");
    c.assert_closed("auth before hello", wait);
    let mut c = Raw::authenticate(&addr, "out of order");
    let id = c.request(json!({"type": "end_window", "window": 7}));
    assert_eq!(c.error("end_window with none open", id), "window 7 is not open (none is)");
    let id = c.request(json!({"type": "hello"}));
    assert!(c.error("hello again", id).starts_with("already authenticated"));
    let id = c.request(json!({"type": "reboot"}));
    assert!(c.error("unknown type", id).starts_with("unknown message type"));
    // A window needs a memif peer: a plain sender (no --peer) brings the link up.
    let sender = spawn(BLAST, &memif_blast_args(&rig.sock, 1, &["--queues", "1", "--size", "64", "--rate", "10k", "--duration", "60"]));
    let id = c.request(json!({"type": "prepare", "rx_queues": 1, "max_size": 64}));
    let p = c.reply("prepare");
    assert_eq!((p["type"].as_str(), p["id"].as_u64(), p["restarted"].as_bool()), (Some("prepared"), Some(id), Some(false)), "{p}");
    let window = open_window(&mut c, "out of order");
    let id = c.request(json!({"type": "end_window", "window": window + 5}));
    assert_eq!(c.error("end_window of another window", id), format!("window {} is not open (window {window} is)", window + 5));
    let id = c.request(json!({"type": "start_window"}));
    assert_eq!(c.error("a second start_window", id), "a window is already open: end it first");
    let id = c.request(json!({"type": "end_window", "window": window}));
    let f = c.reply("end_window");
    assert_eq!((f["type"].as_str(), f["id"].as_u64(), f["window"].as_u64()), (Some("window_figures"), Some(id), Some(window)), "{f}");
    assert!(f["packets"].is_u64(), "{f}");
    // Gone without bye (bye would park drop's memif lanes for a peer that
    // is not leaving: a raw client is not blast).
    drop(c);

    // 13. A client that vanishes mid-window: drop records the window as
    // incomplete and keeps serving.
    let mut c = Raw::authenticate(&addr, "vanishing");
    let id = c.request(json!({"type": "prepare", "rx_queues": 1, "max_size": 64}));
    assert_eq!(c.reply("prepare")["type"], "prepared", "{id}");
    let window = open_window(&mut c, "vanishing");
    drop(c);
    let l = rig.drop.wait_for_line(&format!("window {window} incomplete"), Duration::from_secs(10));
    assert!(l.contains("client closed the connection"), "{l}");
    sigint(&sender);
    let s = sender.finish(Duration::from_secs(30));
    assert!(s.status.code() == Some(EXIT_INTERRUPTED), "the plain sender: {:?}\n{}\n{}", s.status, s.stdout, s.stderr);
    rig.good_run("out-of-order requests and a client gone mid-window");

    // 14. prepare out of range: each refused naming the range; the session stays.
    let mut c = Raw::authenticate(&addr, "prepare out of range");
    for (q, size, want) in [
        (0, 64, "rx_queues 0 is out of range: drop takes 1 to 1"),
        (2, 64, "rx_queues 2 is out of range: drop takes 1 to 1"),
        (65535, 64, "rx_queues 65535 is out of range: drop takes 1 to 1"),
        (1, 0, "max_size 0 is out of range: drop takes frames of 64 to 1518 bytes"),
        (1, 10, "max_size 10 is out of range: drop takes frames of 64 to 1518 bytes"),
        (1, 63, "max_size 63 is out of range: drop takes frames of 64 to 1518 bytes"),
        (1, 1519, "max_size 1519 is out of range: drop takes frames of 64 to 1518 bytes"),
    ] {
        let id = c.request(json!({"type": "prepare", "rx_queues": q, "max_size": size}));
        assert_eq!(c.error(&format!("prepare {q} {size}"), id), want);
    }
    for bad in [json!({"type": "prepare", "rx_queues": 65536, "max_size": 64}), json!({"type": "prepare", "rx_queues": -1, "max_size": 64})]
    {
        let id = c.request(bad.clone());
        assert!(c.error(&format!("{bad}"), id).starts_with("bad fields"));
    }
    let id = c.request(json!({"type": "prepare", "rx_queues": 1, "max_size": 1518}));
    let p = c.reply("a valid prepare after the refusals");
    assert_eq!((p["type"].as_str(), p["id"].as_u64()), (Some("prepared"), Some(id)), "{p}");
    let id = c.request(json!({"type": "bye"}));
    assert_eq!(c.reply("bye")["id"], id);
    c.assert_closed("after bye", wait);
    rig.good_run("prepare with out-of-range values");

    // 15. The session is held: a new connection is told who holds it and
    // since when; so is a second client that authenticates while another
    // got there first; so is blast.
    let mut a = Raw::authenticate(&addr, "holder");
    let mut b = Raw::open(&addr);
    assert_busy_naming(&b.error("a connection while the session is held", 0), &a.local(), "at accept");
    b.assert_closed("busy at accept", wait);
    let id = a.request(json!({"type": "bye"}));
    assert_eq!(a.reply("bye")["id"], id);
    a.assert_closed("holder's bye", wait);
    let mut a = Raw::open(&addr);
    let mut b = Raw::open(&addr);
    let (na, nb) = (a.hello("first"), b.hello("second"));
    let id = a.request(json!({"type": "auth", "proof": proof(SECRET, &na)}));
    assert_eq!(a.reply("first auth")["type"], "hello", "{id}");
    let id = b.request(json!({"type": "auth", "proof": proof(SECRET, &nb)}));
    assert_busy_naming(&b.error("second auth while the first holds the session", id), &a.local(), "at auth");
    b.assert_closed("busy at auth", wait);
    let out = rig.blast(&ladder, &[(SECRET_ENV, SECRET)]);
    assert_eq!(out.status.code(), Some(1), "blast while the session is held: {}\n{}", out.stdout, out.stderr);
    let errs = error_lines(&out, "blast");
    assert_eq!(errs.len(), 1, "{}", out.stderr);
    assert!(errs[0].contains(&format!("busy: serving {} since ", a.local())), "{}", errs[0]);
    let id = a.request(json!({"type": "bye"}));
    assert_eq!(a.reply("bye")["id"], id);
    a.assert_closed("holder's bye", wait);
    rig.good_run("a second client while the session was held");

    // Nothing above shows the secret in drop's output.
    sigint(&rig.drop);
    let d = rig.drop.finish(Duration::from_secs(30));
    assert!(d.status.code() == Some(EXIT_INTERRUPTED), "drop: {:?}\n{}\n{}", d.status, d.stdout, d.stderr);
    assert!(!d.stdout.contains(SECRET) && !d.stderr.contains(SECRET), "drop printed the secret");
    eprintln!("{} correct runs after abuse, {:.1} s in all", rig.runs, began.elapsed().as_secs_f64());
}

/// start_window (waiting for the plain sender's memif link): the window's number.
fn open_window(c: &mut Raw, what: &str) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let id = c.request(json!({"type": "start_window"}));
        let w = c.reply(what);
        if w["type"] == "window_started" {
            assert_eq!(w["id"], id, "{w}");
            return w["window"].as_u64().unwrap_or_else(|| panic!("{what}: {w}"));
        }
        // drop waits 5 s for its memif peer's link before refusing.
        let e = w["error"].as_str().unwrap_or_default();
        assert!(e.contains("not receiving") && Instant::now() < deadline, "{what}: start_window: {w}");
    }
}

// ---------------------------------------------------------------------------
// The secret

/// A loopback relay to `target` that keeps every byte each way.
struct Relay {
    addr: String,
    to_drop: Arc<Mutex<Vec<u8>>>,
    to_blast: Arc<Mutex<Vec<u8>>>,
    stop: Arc<AtomicBool>,
}

impl Relay {
    fn start(target: &str) -> Relay {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let r = Relay {
            addr: l.local_addr().unwrap().to_string(),
            to_drop: Arc::default(),
            to_blast: Arc::default(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (up, down, stop, target) = (r.to_drop.clone(), r.to_blast.clone(), r.stop.clone(), target.to_string());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let server = TcpStream::connect(&target).unwrap();
                        let pump = |from: &TcpStream, to: &TcpStream, rec: &Arc<Mutex<Vec<u8>>>| {
                            let (mut from, mut to, rec) = (from.try_clone().unwrap(), to.try_clone().unwrap(), rec.clone());
                            std::thread::spawn(move || {
                                let mut b = [0u8; 16384];
                                loop {
                                    match from.read(&mut b) {
                                        Ok(0) | Err(_) => break,
                                        Ok(n) => {
                                            rec.lock().unwrap().extend_from_slice(&b[..n]);
                                            if to.write_all(&b[..n]).is_err() {
                                                break;
                                            }
                                        }
                                    }
                                }
                                let _ = to.shutdown(Shutdown::Write);
                            });
                        };
                        pump(&client, &server, &up);
                        pump(&server, &client, &down);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(10)),
                    Err(e) => panic!("relay: {e}"),
                }
            }
        });
        r
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The command line of a running process, NULs as spaces. Right after
/// spawn it can read empty: the parent resumes (vfork) before the new
/// image's arguments are in place. Polled until it names `--`.
fn cmdline(pid: u32) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_else(|e| panic!("/proc/{pid}/cmdline: {e}"));
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if line.contains(" --") || Instant::now() >= deadline {
            return line;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_secret_never_crosses_the_wire_nor_shows_in_the_command_line() {
    let _g = heavy();
    let rig = Rig::start("secret");
    assert!(!cmdline(rig.drop.pid() as u32).contains(SECRET), "drop's command line shows the secret");
    let token = rig.dir.join("token");
    let relay = Relay::start(&rig.addr);
    let secret_hex = hex(SECRET.as_bytes());
    for (how, by_file) in [("by file", true), ("by environment", false)] {
        let json = rig.dir.join(format!("relay-{by_file}.json"));
        let mut args = vec!["--peer", &relay.addr, "--queues", "1", "--size", "64", "--rate", "100k"];
        args.extend(["--warmup", "0.2", "--duration", "0.3", "--drain", "0.2", "--json", json.to_str().unwrap()]);
        let env: &[(&str, &str)] = if by_file {
            args.extend(["--token-file", token.to_str().unwrap()]);
            &[]
        } else {
            &[(SECRET_ENV, SECRET)]
        };
        let child = command(BLAST, &memif_blast_args(&rig.sock, 1, &args), env).spawn().unwrap();
        let line = cmdline(child.id());
        let out = finish_child(child, Duration::from_secs(60));
        assert!(line.contains("--peer"), "{line}");
        assert!(!line.contains(SECRET), "the secret {how} shows in blast's /proc/PID/cmdline: {line}");
        assert!(out.status.success(), "blast through the relay, secret {how}: {:?}\n{}\n{}", out.status, out.stdout, out.stderr);
        assert_eq!(table_rows(&out.stdout).len(), 1, "{}", out.stdout);
        assert!(!out.stdout.contains(SECRET) && !out.stderr.contains(SECRET), "blast printed the secret");
        let v = read_json(&json);
        assert!(!v.to_string().contains(SECRET), "blast's record holds the secret");
        assert_eq!(v["steps"][0]["receiver"]["packets"], v["steps"][0]["sent"]["packets"], "{v}");
    }
    // The probe above can see a secret: given with --token it shows (and
    // blast says so), and the run still works.
    let args =
        ["--peer", &rig.addr, "--token", SECRET, "--queues", "1", "--size", "64", "--rate", "100k", "--warmup", "0.2", "--duration", "0.3"];
    let child = command(BLAST, &memif_blast_args(&rig.sock, 1, &args), &[]).spawn().unwrap();
    let line = cmdline(child.id());
    let out = finish_child(child, Duration::from_secs(60));
    assert!(line.contains(SECRET), "/proc/PID/cmdline read without the --token given: {line}");
    assert!(out.status.success(), "blast --token: {:?}\n{}\n{}", out.status, out.stdout, out.stderr);
    assert!(out.stderr.contains("--token shows in ps"), "blast --token must warn: {}", out.stderr);
    // Both sessions went through the relay, every byte of them recorded.
    let (up, down) = (relay.to_drop.lock().unwrap().clone(), relay.to_blast.lock().unwrap().clone());
    let (up_s, down_s) = (String::from_utf8_lossy(&up), String::from_utf8_lossy(&down));
    assert_eq!(up_s.matches("\"type\":\"auth\"").count(), 2, "{up_s}");
    assert_eq!(down_s.matches("\"type\":\"window_figures\"").count(), 2, "{down_s}");
    eprintln!("relay: {} bytes to drop, {} bytes to blast", up.len(), down.len());
    for (dir, bytes) in [("blast to drop", &up), ("drop to blast", &down)] {
        for needle in [SECRET.to_string(), secret_hex.clone(), secret_hex.to_uppercase()] {
            assert!(!contains(bytes, needle.as_bytes()), "{dir}: the wire carried {needle:?}");
        }
    }
    drop(relay);
    sigint(&rig.drop);
    let d = rig.drop.finish(Duration::from_secs(30));
    assert!(d.status.code() == Some(EXIT_INTERRUPTED), "drop: {:?}\n{}\n{}", d.status, d.stdout, d.stderr);
    assert!(!d.stdout.contains(SECRET) && !d.stderr.contains(SECRET), "drop printed the secret");
}

// ---------------------------------------------------------------------------
// Listen addresses drop refuses, before the EAL starts

/// drop --listen `spec` (memif, so a started EAL would leave its socket):
/// must exit 2 with one line containing every `want`, the EAL never started.
fn assert_listen_refused(dir: &Path, spec: &str, extra: &[&str], want: &[&str]) {
    let sock = dir.join(format!("refused{}.sock", free_port()));
    let mut d = strings(&["--port", "net_memif0", "--listen", spec]);
    d.extend(strings(extra));
    d.push("--".into());
    d.extend(eal_base());
    d.push(format!("--vdev=net_memif0,role=server,socket={},socket-abstract=no", sock.display()));
    d.push(lcores_on(1, 1));
    let out = run_env(DROP, &d, &[], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "--listen {spec}: {:?}\n{}\n{}", out.status, out.stdout, out.stderr);
    let lines = out.our_stderr();
    assert_eq!(lines.len(), 1, "--listen {spec}: one line: {}", out.stderr);
    assert!(lines[0].starts_with("drop: error: --listen "), "{}", lines[0]);
    for w in want {
        assert!(lines[0].contains(w), "--listen {spec}: {:?} lacks {w:?}", lines[0]);
    }
    assert!(!out.stderr.contains("EAL:") && !out.stdout.contains("EAL:"), "--listen {spec}: the EAL started: {}", out.stderr);
    assert!(!sock.exists(), "--listen {spec}: the memif device was created before the refusal");
    eprintln!("--listen {spec}: {}", lines[0]);
}

/// A non-loopback IPv4 address of this machine, from `ip -4 -o addr`.
fn non_loopback_ipv4() -> Option<String> {
    let out = Command::new("ip").args(["-4", "-o", "addr", "show"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            w.position(|x| x == "inet")?;
            w.next()?.split('/').next().map(str::to_string)
        })
        .find(|a| a.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| !ip.is_loopback() && !ip.is_unspecified()))
}

#[test]
fn drop_refuses_every_interface_and_an_open_port_without_a_secret() {
    let dir = scratch("listen-refused");
    let token = dir.join("token");
    std::fs::write(&token, format!("{SECRET}\n")).unwrap();
    let tf = ["--token-file", token.to_str().unwrap()];
    let port = free_port();
    for spec in [format!("0:{port}"), format!("[::ffff:0.0.0.0]:{port}"), format!("[::]:{port}"), format!("0.0.0.0:{port}")] {
        assert_listen_refused(&dir, &spec, &tf, &["every interface"]);
    }
    match non_loopback_ipv4() {
        Some(ip) => {
            assert_listen_refused(&dir, &format!("{ip}:{port}"), &[], &["reachable from other hosts", "--token-file", "BLASTDROP_TOKEN"])
        }
        None => skip_or_fail(
            "drop_refuses_an_open_port_without_a_secret",
            "this machine has no non-loopback IPv4 address (ip -4 addr show): give an interface one to check the refusal on it",
        ),
    }
}
