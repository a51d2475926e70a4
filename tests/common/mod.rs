//! Helpers for the integration tests: they start the real `blast` and
//! `drop` binaries as processes (the EAL starts once per process), on real
//! virtual devices, with bounded waits everywhere.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const BLAST: &str = env!("CARGO_BIN_EXE_blast");
pub const DROP: &str = env!("CARGO_BIN_EXE_drop");

/// EAL arguments for tests: no hugepages, no PCI scan, no shared config, so
/// several processes can run at once on a CI machine without set-up.
pub fn eal_base() -> Vec<String> {
    ["--no-huge", "-m", "512", "--no-pci", "--no-shconf"].iter().map(|s| s.to_string()).collect()
}

/// Busy-polling runs share a 2-core machine: one at a time within a test binary.
pub fn heavy() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A scratch directory unique to this test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blastdrop-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Output {
    /// stderr without the EAL's and PMDs' own chatter.
    pub fn our_stderr(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.starts_with("EAL:") && !l.starts_with("TELEMETRY:") && !l.starts_with("rte_pmd_") && !l.trim().is_empty())
            .collect()
    }
}

/// A running binary whose stdout lines are collected as they come.
pub struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    err: Option<std::thread::JoinHandle<String>>,
    started: Instant,
}

/// A test that panics leaves no process behind: a binary still running
/// when its handle goes is killed.
impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn spawn(bin: &str, args: &[String]) -> Running {
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    let out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    Running { child, lines: rx, seen: Vec::new(), err: Some(err), started: Instant::now() }
}

impl Running {
    /// Waits until a stdout line contains `needle`; panics after `timeout`.
    pub fn wait_for_line(&mut self, needle: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
                return l.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(l) => self.seen.push(l),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {
                    if let Ok(Some(st)) = self.child.try_wait() {
                        // Drain what is left before giving up.
                        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(200)) {
                            self.seen.push(l);
                        }
                        if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
                            return l.clone();
                        }
                        panic!("process exited ({st}) before printing {needle:?}; stdout: {:?}", self.seen);
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("no line with {needle:?} within {timeout:?}; stdout so far: {:?}", self.seen);
                }
            }
        }
    }

    /// Whether a stdout line so far contains `needle` (without waiting).
    pub fn seen_line(&mut self, needle: &str) -> bool {
        while let Ok(l) = self.lines.try_recv() {
            self.seen.push(l);
        }
        self.seen.iter().any(|l| l.contains(needle))
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The exit status if it has exited, without waiting.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits for exit within `timeout` (killing it and failing past that).
    pub fn finish(mut self, timeout: Duration) -> Output {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push(l);
                }
                let stderr = self.err.take().map(|e| e.join().unwrap_or_default()).unwrap_or_default();
                panic!("process still running after {timeout:?}; stdout so far: {:?}; stderr: {stderr}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let elapsed = self.started.elapsed();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(500)) {
            self.seen.push(l);
        }
        let stderr = self.err.take().map(|e| e.join().unwrap_or_default()).unwrap_or_default();
        Output { status, stdout: self.seen.join("\n"), stderr, elapsed }
    }
}

/// Runs a binary to completion within `timeout`.
pub fn run(bin: &str, args: &[String], timeout: Duration) -> Output {
    spawn(bin, args).finish(timeout)
}

/// Runs a second DPDK process on net_af_packet in a namespace where one
/// already runs. DPDK's af_packet names its fanout group after
/// (pid ^ ifindex) & 0xffff: when that matches the first process's group
/// (bound to another interface) the kernel refuses the join (EINVAL) and
/// the port never appears. A new process has a new pid: start it again.
pub fn run_af_packet(bin: &str, args: &[String], timeout: Duration) -> Output {
    let mut out = run(bin, args, timeout);
    for _ in 0..3 {
        if out.status.success() || !out.stderr.contains("could not set PACKET_FANOUT") {
            break;
        }
        eprintln!("af_packet fanout group collided with the other process's (DPDK names it after the pid): starting again");
        out = run(bin, args, timeout);
    }
    out
}

pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("no JSON at {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON at {} does not parse: {e}", path.display()))
}

pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// A network namespace this test creates (and deletes when dropped), with
/// veth pairs in it: a real kernel path between two af_packet ports.
pub struct Netns(pub String);

impl Netns {
    fn ip(args: &[&str]) -> Result<(), String> {
        let out = Command::new("ip").args(args).output().map_err(|e| format!("cannot run ip: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
        }
    }

    fn create(name: &str) -> Result<Netns, String> {
        let _ = Command::new("ip").args(["netns", "del", name]).output();
        Self::ip(&["netns", "add", name])?;
        let ns = Netns(name.to_owned());
        // Loopback up: the control channel runs over it.
        Self::ip(&["-n", name, "link", "set", "lo", "up"])?;
        // No IPv6 chatter (router solicitations) on the pairs.
        let _ = Command::new("ip").args(["netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]).output();
        Ok(ns)
    }

    fn link(&self, args: &[&str]) -> Result<(), String> {
        let mut v = vec!["-n", &self.0, "link"];
        v.extend_from_slice(args);
        Self::ip(&v)
    }

    /// A veth pair whose ends have interface indexes `4096 x i` and
    /// `4096 x j`. DPDK's af_packet joins a fanout group numbered (pid ^
    /// ifindex) & 0xffff, and the kernel refuses a second device in one
    /// group: with the small consecutive indexes the kernel picks, two
    /// processes started one after the other (consecutive pids) on the two
    /// ends of a pair collide. Indexes 4096 apart keep every such XOR distinct.
    fn veth(&self, a: &str, i: u32, b: &str, j: u32) -> Result<(), String> {
        let (ia, ib) = ((4096 * i).to_string(), (4096 * j).to_string());
        self.link(&["add", a, "index", &ia, "type", "veth", "peer", "name", b, "index", &ib])
    }

    /// Sets `dev`'s MTU.
    pub fn set_mtu(&self, dev: &str, mtu: u32) -> Result<(), String> {
        self.link(&["set", dev, "mtu", &mtu.to_string()])
    }

    /// Two namespaces, `name` and `name`-b: bd-a (198.18.0.1/24) in the
    /// first to bd-b (198.18.0.2/24) in the second, and bd-c (10.99.0.1/24)
    /// to bd-d (10.99.0.2/24) for the control channel. A socket sender and
    /// a socket receiver in one namespace would talk over loopback, never
    /// the pair.
    pub fn apart(name: &str) -> Result<(Netns, Netns), String> {
        let (a, b) = (Self::create(name)?, Self::create(&format!("{name}-b"))?);
        for (x, i, y, j) in [("bd-a", 1, "bd-b", 2), ("bd-c", 3, "bd-d", 4)] {
            let (ix, iy) = ((4096 * i).to_string(), (4096 * j).to_string());
            a.link(&["add", x, "index", &ix, "type", "veth", "peer", "name", y, "index", &iy, "netns", &b.0])?;
        }
        for (ns, dev, addr) in
            [(&a, "bd-a", "198.18.0.1/24"), (&b, "bd-b", "198.18.0.2/24"), (&a, "bd-c", "10.99.0.1/24"), (&b, "bd-d", "10.99.0.2/24")]
        {
            Self::ip(&["-n", &ns.0, "addr", "add", addr, "dev", dev])?;
            ns.link(&["set", dev, "up"])?;
        }
        Ok((a, b))
    }

    /// bd-a <-> bd-b.
    pub fn with_pair(name: &str) -> Result<Netns, String> {
        let ns = Self::create(name)?;
        ns.veth("bd-a", 1, "bd-b", 2)?;
        for dev in ["bd-a", "bd-b"] {
            ns.link(&["set", dev, "up"])?;
        }
        Ok(ns)
    }

    /// bd-a <-> bd-b, bridge, bd-c <-> bd-d: a middle hop between bd-a and
    /// bd-d whose way out (bd-c) has MTU `mid_mtu`. The bridge drops larger
    /// frames silently, as a path with an MTU mismatch does: neither end's
    /// port counts them.
    pub fn with_bridged_path(name: &str, mid_mtu: u32) -> Result<Netns, String> {
        let ns = Self::create(name)?;
        ns.veth("bd-a", 1, "bd-b", 2)?;
        ns.veth("bd-c", 3, "bd-d", 4)?;
        ns.link(&["add", "bd-br", "type", "bridge"])?;
        ns.link(&["set", "bd-b", "master", "bd-br"])?;
        ns.link(&["set", "bd-c", "master", "bd-br"])?;
        ns.link(&["set", "bd-c", "mtu", &mid_mtu.to_string()])?;
        for dev in ["bd-a", "bd-b", "bd-c", "bd-d", "bd-br"] {
            ns.link(&["set", dev, "up"])?;
        }
        Ok(ns)
    }

    /// Fan-in: `senders` veth pairs bd-sI <-> bd-sI-p and bd-r <-> bd-r-p,
    /// every -p end on one bridge: senders on bd-s0.., the receiver on
    /// bd-r, all through one kernel bridge to one receiver port.
    pub fn with_fan_in(name: &str, senders: u16) -> Result<Netns, String> {
        let ns = Self::create(name)?;
        ns.link(&["add", "bd-br", "type", "bridge"])?;
        let ends: Vec<String> = (0..senders).map(|i| format!("bd-s{i}")).chain(["bd-r".to_string()]).collect();
        for (i, end) in ends.iter().enumerate() {
            let peer = format!("{end}-p");
            ns.veth(end, 2 * i as u32 + 1, &peer, 2 * i as u32 + 2)?;
            ns.link(&["set", &peer, "master", "bd-br"])?;
            ns.link(&["set", &peer, "up"])?;
            ns.link(&["set", end, "up"])?;
        }
        ns.link(&["set", "bd-br", "up"])?;
        Ok(ns)
    }

    /// `bin args...` run inside the namespace.
    pub fn exec(&self, bin: &str, args: Vec<String>) -> Vec<String> {
        let mut v = strings(&["netns", "exec", &self.0, bin]);
        v.extend(args);
        v
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

/// A free TCP port on loopback for a control channel.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Sends SIGINT to a running binary (Ctrl-C: it ends with its final report).
pub fn sigint(p: &Running) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(p.pid()), nix::sys::signal::Signal::SIGINT).unwrap();
}

/// The exit code of a run a signal cut short, its report and record written.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Whether this run is CI's: `CI` set and not empty (`.ci/run` exports
/// `CI=1`; scripts/dpdk-line and scripts/arm64 pass it into their roots).
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// A test that cannot run its real parts on this machine. Under CI that is
/// a failure: a green CI run must have run every test, so this panics with
/// `reason` (what is missing and how to get it). On a developer's machine
/// the test says `SKIP test: reason` and the caller returns:
/// `return skip_or_fail("name", "needs root ...")`.
pub fn skip_or_fail(test: &str, reason: &str) {
    if under_ci() {
        panic!("{test} cannot run here, and CI (CI is set) runs every test: {reason}");
    }
    eprintln!("SKIP {test}: {reason}");
}

/// A namespace made by `make`, or None (through `skip_or_fail`: a failure
/// under CI, a SKIP elsewhere) when not root or the namespace cannot be set up.
pub fn netns_or_skip(test: &str, make: impl FnOnce(&str) -> Result<Netns, String>) -> Option<Netns> {
    if !is_root() {
        skip_or_fail(test, "needs root to create a network namespace (run the tests as root)");
        return None;
    }
    match make(&format!("bd-{}-{}", &test[..test.len().min(6)], std::process::id())) {
        Ok(ns) => Some(ns),
        Err(e) => {
            skip_or_fail(test, &format!("cannot set up the namespace: {e} (needs ip from iproute2 and veth in the kernel)"));
            None
        }
    }
}

/// drop --listen 127.0.0.1:PORT on memif (server) at `dir/name.sock`, its
/// lcores on CPU 1, with `extra` flags. Returns it, its control address and
/// the socket path.
pub fn listening_drop(dir: &std::path::Path, name: &str, queues: u16, extra: &[&str]) -> (Running, String, String) {
    let sock = dir.join(format!("{name}.sock")).display().to_string();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut d = strings(&["--port", "net_memif0", "--queues", &queues.to_string(), "--listen", &addr, "--duration", "300"]);
    d.extend(strings(extra));
    d.push("--".into());
    d.extend(eal_base());
    d.push(format!("--vdev=net_memif0,role=server,socket={sock},socket-abstract=no"));
    d.push(lcores_on(queues, 1));
    let mut p = spawn(DROP, &d);
    p.wait_for_line("control on", Duration::from_secs(30));
    (p, addr, sock)
}

/// `--lcores` with the main lcore and `workers` workers all on `cpu`.
pub fn lcores_on(workers: u16, cpu: u32) -> String {
    let map: Vec<String> = (0..=workers).map(|l| format!("{l}@{cpu}")).collect();
    format!("--lcores={}", map.join(","))
}

/// blast's arguments as the memif client of `sock`, its lcores on CPU 0.
pub fn memif_blast_args(sock: &str, workers: u16, args: &[&str]) -> Vec<String> {
    let mut b = strings(&["--port", "net_memif0"]);
    b.extend(strings(args));
    b.push("--".into());
    b.extend(eal_base());
    b.push(format!("--vdev=net_memif0,role=client,socket={sock},socket-abstract=no"));
    b.push(lcores_on(workers, 0));
    b
}

/// The data rows of a ladder table.
pub fn table_rows(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && l.split_whitespace().count() >= 15).collect()
}

/// Checks `record` against docs/schema/`name`.schema.json (generated from
/// the Rust types by scripts/schemas); panics with every error.
pub fn assert_matches_schema(record: &serde_json::Value, name: &str) {
    let path = format!("{}/docs/schema/{name}.schema.json", env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(record).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "record does not match {path}: {errors:#?}");
}

/// CPU hogs beside a test (a shared cloud host's neighbours): `n` busy
/// shell loops, killed when this is dropped.
pub struct Hogs(Vec<Child>);

impl Hogs {
    pub fn start(n: usize) -> Hogs {
        Hogs((0..n).map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("a shell for the CPU hog")).collect())
    }

    /// `n` hogs pinned to `cpu` (taskset) at nice -10 (root): they take most
    /// of that CPU's time from whatever else runs there, however loaded the
    /// machine already is.
    pub fn pinned(n: usize, cpu: u32) -> Hogs {
        let hog = |_| {
            Command::new("nice")
                .args(["-n", "-10", "taskset", "-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
                .spawn()
                .expect("taskset (util-linux) for a pinned CPU hog")
        };
        Hogs((0..n).map(hog).collect())
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A measured step's (or knee trial's) loss is exact: drop's account of
/// the trial's own frames agrees with what blast sent, `received + lost =
/// sent`, and no accounting error was found. Returns (sent, lost).
pub fn assert_exact(step: &serde_json::Value) -> (u64, u64) {
    assert!(step["error"].is_null(), "the step failed: {step}");
    let t = &step["receiver"]["trial"];
    assert!(t.is_object(), "no exact account ({}): {step}", step["receiver"]["trial_unavailable"]);
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("not a count: {v} in {step}"));
    let (sent, received, lost) = (n(&step["sent"]["packets"]), n(&t["received"]), n(&t["lost"]));
    assert_eq!(n(&t["sent"]), sent, "blast's count and its sequence numbers agree: {step}");
    assert_eq!(received + lost, sent, "received + lost = sent: {step}");
    assert_eq!(n(&step["lost"]), lost, "{step}");
    assert_eq!(n(&step["received"]["packets"]), received, "the step's received is the trial's own frames: {step}");
    assert_eq!(n(&t["error_streams"]), 0, "{step}");
    assert!(step["accounting_error"].is_null(), "{step}");
    let other = n(&step["receiver"]["other_frames"]);
    assert_eq!(received + other, n(&step["receiver"]["packets"]), "the trial's and the others make drop's count: {step}");
    (sent, lost)
}

/// A headless browser (Debian's chromium; scripts/deps.sh installs it for the tests).
pub fn browser() -> String {
    for b in ["chromium", "chromium-browser"] {
        if Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return b.to_string();
        }
    }
    panic!(
        "no chromium: the report test renders the HTML in a real browser (Debian's chromium; scripts/deps.sh installs it for the tests)"
    );
}

/// `html` as a person would see it: chromium headless, the DOM it built
/// (--dump-dom) and a screenshot `png` of `width` x `height` pixels.
pub fn render_in_browser(html: &std::path::Path, png: &std::path::Path, width: u32, height: u32) -> String {
    let b = browser();
    let profile = html.with_extension("chromium-profile");
    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ];
    let chrome = |extra: Vec<String>| {
        let mut a = strings(&common);
        a.push(format!("--user-data-dir={}", profile.display()));
        a.extend(extra);
        a.push(url.clone());
        run(&b, &a, Duration::from_secs(120))
    };
    let dom = chrome(strings(&["--dump-dom"]));
    assert!(dom.status.success(), "chromium --dump-dom: {}", dom.stderr);
    let shot = chrome(vec![format!("--screenshot={}", png.display()), format!("--window-size={width},{height}")]);
    assert!(shot.status.success() && png.exists(), "chromium --screenshot: {}", shot.stderr);
    dom.stdout
}

/// A record read whole into its records type `T`, which writes the same
/// JSON value again (key order aside: the flags are read as a JSON map).
pub fn reads_back_whole<T: serde::de::DeserializeOwned + serde::Serialize>(kind: &str, v: &serde_json::Value) -> T {
    let typed: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{kind} reads back whole: {e}"));
    assert_eq!(&serde_json::to_value(&typed).unwrap(), v, "{kind}: its type writes the same JSON again");
    typed
}

/// A little-endian microsecond pcap of `(time in us, frame)`.
pub fn pcap_bytes(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [0xa1b2_c3d4u32.to_le_bytes().to_vec(), 2u16.to_le_bytes().to_vec(), 4u16.to_le_bytes().to_vec(), vec![0; 8]] {
        b.extend(v);
    }
    b.extend(65535u32.to_le_bytes());
    b.extend(1u32.to_le_bytes());
    for (us, f) in frames {
        for v in [(us / 1_000_000) as u32, (us % 1_000_000) as u32, f.len() as u32, f.len() as u32] {
            b.extend(v.to_le_bytes());
        }
        b.extend(f);
    }
    b
}

/// A UDP frame of `size` bytes (FCS included) from `src_port`.
pub fn udp_frame(size: usize, src_port: u16) -> Vec<u8> {
    let spec = wire::FrameSpec { frame_size: size, src_port, ..wire::FrameSpec::default() };
    let mut f = vec![0u8; spec.len_without_fcs()];
    wire::write_frame(&spec, &mut f).unwrap();
    f
}
