//! `blast paths`: the same plan over several paths (a DPDK port, AF_XDP,
//! the kernel's sockets), interleaved so that drift hits every path alike,
//! and the comparison by the reading guide's rule (crates/paths).
//!
//! Each run is blast itself, run again as a child with the path's flags:
//! one EAL per process, and an AF_XDP or af_packet port freed when its run
//! ends, so paths that share an interface take turns on it. A path's drop
//! is either already serving at its --peer, or started for each of its
//! runs by the path's --drop command and stopped after it.

mod print;
mod read;

use std::fs::File;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use clap::Parser;
use records::paths::{PathPlan, PathRun, PathsBody};

use crate::fail::Failure;

/// Runs one plan over several paths and compares them.
#[derive(Parser, Debug, serde::Serialize, schemars::JsonSchema)]
#[command(
    name = "blast-paths",
    bin_name = "blast paths",
    about = "Run the same plan (a fixed-rate table and each path's knee search) over several paths, interleaved, \
             and compare them where the comparison means something: below both paths' knees",
    after_help = "Example (docs/paths.md):\n  \
                  blast paths --out cmp \\\n    \
                  --path 'dpdk=--port net_af_packet0 --dst-mac 02:00:00:00:00:02 --peer 10.99.0.2:7701 -- --no-huge -m 512 --vdev=net_af_packet0,iface=eth1' \\\n    \
                  --path 'socket=--socket --src-ip 198.18.0.1 --dst-ip 198.18.0.2 --peer 10.99.0.2:7702' \\\n    \
                  --rate 100k,400k,1M --shape even -- --size 64 --duration 5 --warmup 1 --reflect\n\
                  Each run is blast with the path's flags, the flags after --, and its own --rate, --shape and --json.\n\
                  The ratios are against the path with the highest knee; a ratio where a path is past its knee is\n\
                  marked as that path's saturation, never as a speed-up."
)]
pub struct PathsArgs {
    /// A path: NAME=FLAGS, blast's flags for it (its --port or --socket, its --peer) and, after
    /// `--` inside FLAGS, its EAL arguments; quoted as a shell would (repeat it: two paths at least)
    #[arg(long = "path", value_name = "NAME=FLAGS")]
    pub paths: Vec<String>,
    /// NAME=COMMAND: a shell command that starts this path's drop; it is run before each of the
    /// path's runs, waited for until drop's control port answers, and stopped (SIGINT) after
    #[arg(long = "drop", value_name = "NAME=COMMAND")]
    pub drops: Vec<String>,
    /// The table's rates (total frames per second over all queues): 100k,400k,1M
    #[arg(long, value_parser = blastdrop::session::parse::rate_list, value_name = "RATE[,RATE...]")]
    #[serde(skip)]
    pub rate: Option<blastdrop::session::parse::List<f64>>,
    /// The table's arrival shapes (even, burst:N, poisson); each path's knee is searched at each
    #[arg(long, value_parser = blastdrop::session::parse::shape_list, value_name = "SHAPE[,SHAPE...]", default_value = "even")]
    #[serde(skip)]
    pub shape: blastdrop::session::parse::List<pace::Shape>,
    /// How many times the table is run (each round goes over every path, in a rotated order);
    /// each cell shows its median round by delivered rate
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: u32,
    /// Search no knees: every ratio is then marked unknown (no knee to read it by)
    #[arg(long)]
    pub no_knee: bool,
    /// Flags for the knee searches only, quoted: '--search-duration 0.5 --knee-precision 5%'
    #[arg(long, value_name = "FLAGS", default_value = "", allow_hyphen_values = true)]
    pub knee_args: String,
    /// The directory for every run's record and log, and the comparison (made if missing)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The comparison's record [default: DIR/paths.json]
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// How long one run may take before it is stopped (SIGINT, then SIGKILL 15 s later)
    #[arg(long, value_parser = blastdrop::session::parse::duration, default_value = "10m")]
    #[serde(skip)]
    pub run_timeout: Duration,
    /// How long a path's --drop command may take until drop's control port answers
    #[arg(long, value_parser = blastdrop::session::parse::duration, default_value = "30s")]
    #[serde(skip)]
    pub drop_timeout: Duration,
    /// Print the comparison as one committable sentence too
    #[arg(long)]
    pub sentence: bool,
    /// Print the man page (blast-paths.1) and exit
    #[arg(long, hide = true)]
    pub generate_man: bool,
    /// The flags every run gets: frame size, queues, flows, duration, warm-up, --reflect ...
    #[arg(last = true, value_name = "BLAST FLAGS")]
    pub common: Vec<String>,
}

/// Flags `blast paths` sets itself for each run, or that make one run more than one record.
const OWN_FLAGS: &[&str] = &[
    "--rate",
    "--shape",
    "--find-knee",
    "--json",
    "--csv",
    "--plot",
    "--events",
    "--series",
    "--series-svg",
    "--metrics",
    "--repeat",
    "--count",
    "--pcap",
    "--group",
];

/// One path, parsed.
struct PathSpec {
    plan: PathPlan,
    /// blast's flags, and the EAL's after them.
    flags: Vec<String>,
    eal: Vec<String>,
}

pub fn main(argv: Vec<std::ffi::OsString>) -> Result<(), Failure> {
    let args: PathsArgs = crate::cli::parse_args_from(argv)?;
    if crate::cli::generated_docs::<PathsArgs>(None, args.generate_man)? {
        return Ok(());
    }
    let Some(out) = args.out.clone() else {
        return Err(Failure::usage("blast paths needs --out DIR: the directory for every run's record and the comparison"));
    };
    if args.rate.is_none() {
        return Err(Failure::usage("blast paths needs --rate LIST: the table's rates, e.g. --rate 100k,400k,1M"));
    }
    let specs = specs(&args)?;
    let knee_args =
        shlex::split(&args.knee_args).ok_or_else(|| Failure::usage("--knee-args is not quoted as a shell would: close its quotes"))?;
    check_flags("the flags after --", &args.common)?;
    check_flags("--knee-args", &knee_args)?;
    check_knee_method(&knee_args)?;
    if args.common.iter().any(|a| a == "--") {
        return Err(Failure::usage("EAL arguments belong to a path: give them after -- inside its --path NAME='FLAGS -- EAL ARGS'"));
    }
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::usage(format!("--out {}: cannot make it ({e}): name a directory blast may write", out.display())))?;
    let json = args.json.clone().unwrap_or_else(|| out.join("paths.json"));
    crate::cli::check_outputs(&[("--json", Some(json.as_path()))])?;
    for s in &specs {
        std::fs::create_dir_all(out.join(&s.plan.name)).map_err(|e| Failure::runtime(format!("{}: {e}", out.display())))?;
    }
    blastdrop::signals::install();
    let rates: Vec<f64> = args.rate.as_deref().cloned().unwrap_or_default();
    let shapes: Vec<String> = args.shape.iter().map(|s| s.to_string()).collect();
    let runner = Runner { args: &args, out: &out };
    let mut runs: Vec<PathRun> = Vec::new();
    // The knees first, each shape's over every path in turn; then each
    // round of the table, every cell over every path, the order of the
    // paths rotated from cell to cell so that none always goes first.
    if !args.no_knee {
        for shape in &shapes {
            for s in &specs {
                if blastdrop::signals::stopping() {
                    break;
                }
                runs.push(runner.knee(s, shape, &knee_args));
            }
        }
    }
    let mut turn = 0usize;
    'table: for round in 1..=args.rounds {
        for shape in &shapes {
            for &rate in &rates {
                for i in 0..specs.len() {
                    if blastdrop::signals::stopping() {
                        break 'table;
                    }
                    let s = &specs[(i + turn) % specs.len()];
                    runs.push(runner.table(s, rate, shape, round));
                }
                turn += 1;
            }
        }
    }
    let figures: Vec<paths::PathFigures> = specs.iter().map(|s| read::figures(&s.plan.name, &runs, &out)).collect();
    let comparison = paths::compare(&figures);
    print::table(&comparison, &figures);
    if args.sentence {
        blastdrop::say!("{}", comparison.sentence);
    }
    let mut failed: Vec<String> = comparison.failures.iter().map(|f| f.path.clone()).collect();
    failed.dedup();
    let failed_runs = comparison.failures.len();
    let body = PathsBody {
        paths: specs.iter().map(|s| s.plan.clone()).collect(),
        rates_mpps: rates.iter().map(|r| r / 1e6).collect(),
        shapes,
        rounds: args.rounds,
        common_args: args.common.clone(),
        knee_args,
        directory: out.display().to_string(),
        runs,
        figures,
        comparison,
        interrupted: blastdrop::signals::interrupted(),
    };
    let record = records::Record::blast("paths", records::AsGiven::new(&args), body);
    blastdrop::record_file::write_json(&json, &record).map_err(crate::fail::explain)?;
    blastdrop::say!("paths: the comparison's record: {} (blast report {} --html FILE shows it)", json.display(), json.display());
    if blastdrop::signals::interrupted() {
        return Err(Failure {
            message: "interrupted: the comparison holds the runs that finished".into(),
            code: blastdrop::signals::EXIT_INTERRUPTED,
        });
    }
    if !failed.is_empty() {
        return Err(Failure::runtime(format!(
            "{} failed ({failed_runs} run(s)): the comparison keeps the other paths' figures",
            failed.join(", ")
        )));
    }
    Ok(())
}

pub fn schema() -> schemars::Schema {
    records::schema_of::<records::paths::PathsRecord<records::AsGiven<'static, PathsArgs>>>()
}

/// Refuses a flag `blast paths` sets itself.
fn check_flags(where_: &str, flags: &[String]) -> Result<(), Failure> {
    for f in flags {
        let name = f.split('=').next().unwrap_or(f);
        if OWN_FLAGS.contains(&name) {
            return Err(Failure::usage(format!(
                "{where_}: {name} is set by blast paths for each run (its --rate, --shape, --json; the knee searches' --find-knee): leave it out"
            )));
        }
    }
    Ok(())
}

/// What blast paths reads from each knee run is blast's own knee record:
/// an RFC 9971 search, a back-to-back test or a cross-check would write
/// another record, or more than the comparison uses.
fn check_knee_method(flags: &[String]) -> Result<(), Failure> {
    for f in flags {
        let name = f.split('=').next().unwrap_or(f);
        if ["--search", "--goal", "--back-to-back", "--burst-limit", "--cross-check"].contains(&name) {
            return Err(Failure::usage(format!(
                "--knee-args: {name} is not for blast paths, whose knee runs use blast's own search (its knee record is what the comparison reads): leave it out"
            )));
        }
    }
    Ok(())
}

/// The paths as given, each checked: a name, flags a shell would split, a --peer.
fn specs(args: &PathsArgs) -> Result<Vec<PathSpec>, Failure> {
    let mut specs: Vec<PathSpec> = Vec::new();
    for p in &args.paths {
        let (name, text) = p
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("--path {p:?}: give it as NAME=FLAGS, e.g. socket='--socket --peer 10.0.0.2:7700'")))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(Failure::usage(format!(
                "--path {p:?}: its name must be letters, digits, - or _ (it names a directory and a column)"
            )));
        }
        if specs.iter().any(|s| s.plan.name == name) {
            return Err(Failure::usage(format!("--path {name} is given twice: give each path once, under its own name")));
        }
        let words = shlex::split(text)
            .ok_or_else(|| Failure::usage(format!("--path {name}: its flags are not quoted as a shell would: close its quotes")))?;
        let (flags, eal) = match words.iter().position(|w| w == "--") {
            Some(i) => (words[..i].to_vec(), words[i + 1..].to_vec()),
            None => (words.clone(), Vec::new()),
        };
        check_flags(&format!("--path {name}"), &flags)?;
        let peer = flags
            .iter()
            .position(|f| f == "--peer")
            .and_then(|i| flags.get(i + 1).cloned())
            .or_else(|| flags.iter().find_map(|f| f.strip_prefix("--peer=").map(str::to_string)))
            .ok_or_else(|| {
                Failure::usage(format!("--path {name}: give it a --peer (its drop's control address): a comparison needs what arrived"))
            })?;
        specs.push(PathSpec { plan: PathPlan { name: name.to_string(), blast_args: words, drop_command: None, peer }, flags, eal });
    }
    if specs.len() < 2 {
        return Err(Failure::usage("blast paths compares paths: give two --path NAME=FLAGS at least"));
    }
    for d in &args.drops {
        let (name, cmd) = d.split_once('=').ok_or_else(|| Failure::usage(format!("--drop {d:?}: give it as NAME=COMMAND")))?;
        let Some(s) = specs.iter_mut().find(|s| s.plan.name == name.trim()) else {
            return Err(Failure::usage(format!("--drop {}: no --path has that name", name.trim())));
        };
        if s.plan.drop_command.is_some() {
            return Err(Failure::usage(format!("--drop {}: given twice: one command per path", name.trim())));
        }
        s.plan.drop_command = Some(cmd.to_string());
    }
    Ok(specs)
}

struct Runner<'a> {
    args: &'a PathsArgs,
    out: &'a Path,
}

impl Runner<'_> {
    fn table(&self, s: &PathSpec, rate: f64, shape: &str, round: u32) -> PathRun {
        let base = format!("{}/table-{shape}-{}-r{round}", s.plan.name, rate.round() as u64).replace(':', "_");
        let mut own = vec!["--rate".to_string(), format!("{}", rate.round() as u64), "--shape".into(), shape.to_string()];
        let mut run = PathRun {
            path: s.plan.name.clone(),
            what: "table".into(),
            rate_mpps: Some(rate / 1e6),
            shape: shape.into(),
            round,
            ..Default::default()
        };
        own.extend(self.args.common.iter().cloned());
        self.run(s, &base, own, &mut run);
        blastdrop::say!("{}", print::progress(&run, self.out));
        run
    }

    fn knee(&self, s: &PathSpec, shape: &str, knee_args: &[String]) -> PathRun {
        let base = format!("{}/knee-{shape}", s.plan.name).replace(':', "_");
        let mut own = vec!["--find-knee".to_string(), "--shape".into(), shape.to_string()];
        own.extend(self.args.common.iter().cloned());
        own.extend(knee_args.iter().cloned());
        let mut run = PathRun { path: s.plan.name.clone(), what: "knee".into(), shape: shape.into(), round: 1, ..Default::default() };
        self.run(s, &base, own, &mut run);
        blastdrop::say!("{}", print::progress(&run, self.out));
        run
    }

    /// Runs blast once on path `s` with `own` flags, its drop around it if
    /// the path has a command for one; fills in `run`.
    fn run(&self, s: &PathSpec, base: &str, own: Vec<String>, run: &mut PathRun) {
        let out = self.out;
        (run.record, run.log) = (format!("{base}.json"), format!("{base}.log"));
        let _ = std::fs::remove_file(out.join(&run.record));
        let started = Instant::now();
        run.started_unix = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let drop = match &s.plan.drop_command {
            Some(cmd) => match DropProcess::start(cmd, &s.plan.peer, &out.join(format!("{base}.drop.log")), self.args.drop_timeout) {
                Ok(d) => Some(d),
                Err(e) => {
                    run.error = Some(e);
                    run.seconds = started.elapsed().as_secs_f64();
                    return;
                }
            },
            None => None,
        };
        let mut argv = s.flags.clone();
        argv.extend(own);
        argv.extend(["--json".to_string(), out.join(&run.record).display().to_string()]);
        if !s.eal.is_empty() {
            argv.push("--".into());
            argv.extend(s.eal.iter().cloned());
        }
        match run_blast(&argv, &out.join(&run.log), self.args.run_timeout) {
            Ok(code) => {
                run.exit_code = code;
                if code == Some(i32::from(blastdrop::signals::EXIT_INTERRUPTED)) {
                    run.error = Some("interrupted by a signal: not a measurement".into());
                } else if code != Some(0) {
                    run.error = Some(last_error(&out.join(&run.log)).unwrap_or_else(|| format!("blast exited with {code:?}")));
                }
            }
            Err(e) => run.error = Some(e),
        }
        if let Some(d) = drop {
            if let Err(e) = d.stop() {
                run.error.get_or_insert(e);
            }
        }
        run.seconds = started.elapsed().as_secs_f64();
    }
}

/// blast's last "error:" line in a run's log (what made it fail, in its words).
fn last_error(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines().rev().find(|l| l.contains("error:")).map(|l| l.trim().to_string())
}

/// Runs blast as a child with `argv`, its output to `log`; its exit code
/// (None: a signal ended it). A run past `limit` is stopped.
fn run_blast(argv: &[String], log: &Path, limit: Duration) -> Result<Option<i32>, String> {
    use std::os::unix::process::CommandExt;
    // This very binary, even if its file was replaced since (an upgrade mid-run).
    let exe = if Path::new("/proc/self/exe").exists() {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().map_err(|e| format!("cannot find blast itself: {e}"))?
    };
    let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg0("blast")
        .args(argv)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start blast: {e}"))?;
    let deadline = Instant::now() + limit;
    let mut signalled: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status.code()),
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for blast: {e}")),
        }
        let now = Instant::now();
        // A signal to blast paths alone (kill, not a terminal's Ctrl-C,
        // which reaches the child too) ends the run in progress with its record.
        if blastdrop::signals::stopping() && signalled.is_none() {
            signal(&child, nix::sys::signal::Signal::SIGINT);
            signalled = Some(now);
        }
        match signalled {
            None if now >= deadline => {
                signal(&child, nix::sys::signal::Signal::SIGINT);
                signalled = Some(now);
            }
            Some(t) if now >= t + Duration::from_secs(15) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("the run took more than --run-timeout {limit:?} and did not stop on SIGINT: killed"));
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig);
}

/// A path's drop, started by its command for one run.
struct DropProcess {
    child: Child,
}

impl DropProcess {
    /// Starts `cmd` (in its own process group) and waits until `peer` accepts a connection.
    fn start(cmd: &str, peer: &str, log: &Path, limit: Duration) -> Result<DropProcess, String> {
        use std::os::unix::process::CommandExt;
        let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new("sh")
            .args(["-c", cmd])
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("its --drop command did not start: {e}"))?;
        let mut d = DropProcess { child };
        let addr = peer.to_socket_addrs().ok().and_then(|mut a| a.next()).ok_or_else(|| format!("its --peer {peer} is not an address"))?;
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = d.child.try_wait() {
                return Err(format!(
                    "its --drop command exited ({status}) before drop's control port {peer} answered: see {}",
                    log.display()
                ));
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(d);
            }
            if Instant::now() >= deadline || blastdrop::signals::stopping() {
                let _ = d.stop();
                return Err(format!(
                    "its drop's control port {peer} did not answer within {limit:?} of its --drop command: see {}",
                    log.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGINT to its process group (drop ends with its report), SIGKILL 15 s later.
    fn stop(mut self) -> Result<(), String> {
        let group = nix::unistd::Pid::from_raw(-(self.child.id() as i32));
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGINT);
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
                    let _ = self.child.wait();
                    return Err("its drop did not stop within 15 s of SIGINT: killed".into());
                }
            }
        }
    }
}

impl Drop for DropProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let group = nix::unistd::Pid::from_raw(-(self.child.id() as i32));
            let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
            let _ = self.child.wait();
        }
    }
}
