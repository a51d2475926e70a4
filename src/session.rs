//! Start-up shared by both binaries: arguments, logging, the EAL, the port,
//! each failure turned into one line that names the fix.

use std::path::Path;

use clap::Parser;
use dpdk::{Eal, LimitKind, Port};

use crate::eal_args;
use crate::fail::Failure;

/// Parses the command line; help and version print as usual, any other
/// problem becomes one line (clap's own report spans several).
pub fn parse_args<T: Parser>() -> Result<T, Failure> {
    parse_args_from(std::env::args_os())
}

/// [`parse_args`] over given arguments (the program's name first).
pub fn parse_args_from<T: Parser>(argv: impl IntoIterator<Item = std::ffi::OsString>) -> Result<T, Failure> {
    T::try_parse_from(argv).map_err(|e| {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
            e.exit();
        }
        if e.kind() == ErrorKind::UnknownArgument {
            if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) {
                if let Some(name) = eal_args::eal_option(arg) {
                    let tool = T::command().get_name().to_owned();
                    return Failure::usage(format!(
                        "{name} is a DPDK EAL argument: put DPDK EAL arguments after -- (e.g. {tool} --queues 2 -- --no-huge -m 512)"
                    ));
                }
            }
        }
        if e.kind() == ErrorKind::MissingRequiredArgument {
            // clap lists the missing flags on the lines after the first.
            if let Some(ContextValue::Strings(missing)) = e.get(ContextKind::InvalidArg) {
                return Failure::usage(format!(
                    "a flag given needs {} too: add it, or leave that flag out (see --help)",
                    missing.join(", ")
                ));
            }
        }
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_owned();
        Failure::usage(format!("{first} (see --help)"))
    })
}

/// `--generate-completions SHELL` or `--generate-man`: prints them for
/// the tool's flags and says so (the caller exits); nothing else runs.
pub fn generated_docs<T: clap::CommandFactory>(completions: Option<clap_complete::Shell>, man: bool) -> Result<bool, Failure> {
    let mut cmd = T::command();
    let name = cmd.get_name().to_owned();
    let mut out = std::io::stdout();
    if let Some(shell) = completions {
        clap_complete::generate(shell, &mut cmd, name, &mut out);
        return Ok(true);
    }
    if man {
        clap_mangen::Man::new(cmd).render(&mut out).map_err(|e| Failure::runtime(format!("cannot write the man page: {e}")))?;
        return Ok(true);
    }
    Ok(false)
}

/// Checks, before anything runs, that every output file can be written:
/// its folder exists, is a folder and is writable, and the path itself is
/// not a folder (nor a file this user may not write). Creates nothing.
/// `outputs`: (flag, path given) pairs, e.g. `("--json", args.json.as_deref())`.
/// `-` (stdout) is for --json and --events, one of them at a time.
pub fn check_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<(), Failure> {
    let given: Vec<(&str, &Path)> = outputs.iter().filter_map(|&(f, p)| p.map(|p| (f, p))).collect();
    for (i, &(flag, path)) in given.iter().enumerate() {
        if let Some((other, _)) = given[..i].iter().find(|(_, p)| *p == path) {
            let target = if crate::out::is_stdout(path) { "stdout (-)".to_string() } else { path.display().to_string() };
            return Err(Failure::usage(format!("{other} and {flag} both write {target}: give each its own file")));
        }
        if crate::out::is_stdout(path) {
            if !matches!(flag, "--json" | "--events") {
                return Err(Failure::usage(format!("{flag} - is not supported: give a file (only --json and --events write to stdout)")));
            }
            continue;
        }
        check_output(flag, path)?;
    }
    Ok(())
}

fn check_output(flag: &str, path: &Path) -> Result<(), Failure> {
    let shown = path.display();
    let example = match flag {
        "--plot" => "out.svg",
        "--csv" => "out.csv",
        _ => "out.json",
    };
    if path.as_os_str().is_empty() {
        return Err(Failure::usage(format!("{flag} needs a file name, e.g. {flag} {example}")));
    }
    if path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/') {
        return Err(Failure::usage(format!("{flag} {shown} is a folder: give a file in it, e.g. {flag} {}", path.join(example).display())));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let where_ = folder.display();
    match std::fs::metadata(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::usage(format!("{flag} {shown}: folder {where_} does not exist: create it or give another path")));
        }
        Err(e) => return Err(Failure::usage(format!("{flag} {shown}: cannot reach folder {where_} ({e}): give another path"))),
        Ok(m) if !m.is_dir() => {
            return Err(Failure::usage(format!("{flag} {shown}: {where_} is not a folder: give a path in an existing folder")));
        }
        Ok(_) => {}
    }
    if let Err(e) = access(folder, libc::W_OK | libc::X_OK) {
        return Err(Failure::usage(format!(
            "{flag} {shown}: folder {where_} is not writable ({e}): give a path in a folder you can write to"
        )));
    }
    if path.exists() {
        if let Err(e) = access(path, libc::W_OK) {
            return Err(Failure::usage(format!("{flag} {shown} exists and cannot be overwritten ({e}): give another path")));
        }
    }
    Ok(())
}

/// access(2), for the real user (root passes unless the file system is read-only).
fn access(path: &Path, mode: libc::c_int) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: c is a NUL-terminated path that outlives the call.
    if unsafe { libc::access(c.as_ptr(), mode) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Logs go to stderr; reports go to stdout.
pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("BLASTDROP_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .try_init();
}

/// The EAL, started with the user's arguments plus defaults for what they
/// left out.
pub struct Started {
    pub eal: Eal,
    pub eal_args: Vec<String>,
    /// Where blastdrop put the lcores (None when the user gave -l/--lcores).
    pub placement: Option<topology::Placement>,
}

/// `ports`: the --port specs, for placing each port's workers on its NUMA node.
pub fn start_eal(tool: &str, user: &[String], workers: u16, ports: &[String]) -> Result<Started, Failure> {
    let plan = eal_args::plan(user, workers, ports);
    check_memif_sockets(&plan.args)?;
    if let Some(p) = &plan.placement {
        eprintln!("{tool}: lcores: {} (from sysfs; give -l or --lcores after -- to choose)", p.describe());
    }
    for note in &plan.notes {
        tracing::warn!("{note}");
    }
    tracing::debug!("EAL arguments: {}", plan.args.join(" "));
    let eal = Eal::init(tool, &plan.args).map_err(|e| match e {
        dpdk::Error::EalInit { reason } => {
            Failure::runtime(format!("the DPDK EAL failed to start ({reason}): {}", eal_args::init_failure_hint(user)))
        }
        other => other.into(),
    })?;
    Ok(Started { eal, eal_args: plan.args, placement: plan.placement })
}

/// Checks each net_memif vdev's socket before the EAL starts, since the
/// PMD's own failures surface only as "no ports". DPDK 22.11's memif server
/// binds its socket at probe and neither removes nor reuses a file already
/// there (bind fails with EADDRINUSE, the vdev is dropped); it removes the
/// file itself only on a clean close. So: a server socket someone serves is
/// refused, naming it; one nobody listens on (left by a killed process) is
/// removed, with a warning. A socket file's folder must exist (client or
/// server: the PMD checks it at probe).
pub fn check_memif_sockets(args: &[String]) -> Result<(), Failure> {
    let mut seen = Vec::new();
    for m in eal_args::memif_vdevs(args) {
        if seen.contains(&(m.socket.clone(), m.socket_abstract, m.server)) {
            continue;
        }
        seen.push((m.socket.clone(), m.socket_abstract, m.server));
        check_memif_socket(&m)?;
    }
    Ok(())
}

fn check_memif_socket(m: &eal_args::MemifVdev) -> Result<(), Failure> {
    let path = &m.socket;
    let in_use = |shown: String| {
        Failure::usage(format!(
            "memif socket {shown} is in use by another process (a drop still running?): stop it or give the vdev {} another socket=PATH",
            m.name
        ))
    };
    if m.socket_abstract {
        // In the abstract namespace: no file; only a listener to find.
        return match (m.server, memif_probe(path, true)) {
            (true, Probe::Listening) => Err(in_use(format!("@{path} (in the abstract namespace)"))),
            _ => Ok(()),
        };
    }
    if path.len() >= 108 {
        return Err(Failure::usage(format!(
            "memif socket {path} is {} bytes long, above the 107 a Unix socket path may have: give the vdev {} a shorter socket=PATH",
            path.len(),
            m.name
        )));
    }
    let folder = match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => {
            return Err(Failure::usage(format!(
                "memif socket {path} has no folder: give the vdev {} a full path, e.g. socket=/tmp/{path}",
                m.name
            )))
        }
    };
    if !Path::new(folder).is_dir() {
        return Err(Failure::usage(format!(
            "memif socket {path}: folder {folder} does not exist: create it or give the vdev {} another socket=PATH",
            m.name
        )));
    }
    if !m.server {
        return Ok(());
    }
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Err(_) => return Ok(()),
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(Failure::usage(format!(
                "memif socket {path} exists and is not a socket: remove it or give the vdev {} another socket=PATH",
                m.name
            )));
        }
        Ok(_) => {}
    }
    match memif_probe(path, false) {
        Probe::Listening => Err(in_use(path.clone())),
        Probe::Gone => Ok(()),
        Probe::Refused => match std::fs::remove_file(path) {
            Ok(()) => {
                tracing::warn!("memif socket {path} was left by a process that is gone (nobody listens on it): removed it");
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Failure::usage(format!(
                "memif socket {path} is stale (nobody listens on it) but cannot be removed ({e}): remove it or give the vdev {} another socket=PATH",
                m.name
            ))),
        },
        Probe::Other(e) => Err(Failure::usage(format!(
            "memif socket {path} exists and cannot be checked ({e}): remove it if no process serves it, or give the vdev {} another socket=PATH",
            m.name
        ))),
    }
}

/// What a connection attempt to a memif socket found.
enum Probe {
    /// Something accepts connections there.
    Listening,
    /// A socket nobody listens on (its process is gone).
    Refused,
    /// No socket there.
    Gone,
    Other(std::io::Error),
}

/// Connects to a memif socket as a client would (SOCK_SEQPACKET), without
/// blocking; on success waits briefly for the server's hello before
/// closing, so the server has written it before the connection goes (a
/// server that writes to a closed peer may be killed by SIGPIPE).
fn memif_probe(name: &str, abstract_ns: bool) -> Probe {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let bytes = name.as_bytes();
    // SAFETY: plain socket calls on a descriptor this function owns, with
    // an address built in a zeroed sockaddr_un within its bounds.
    unsafe {
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let start = usize::from(abstract_ns);
        if start + bytes.len() >= addr.sun_path.len() {
            return Probe::Gone;
        }
        for (i, b) in bytes.iter().enumerate() {
            addr.sun_path[start + i] = *b as libc::c_char;
        }
        let base = std::mem::size_of::<libc::sa_family_t>();
        // Abstract names are exactly their bytes (as memif binds them); a path ends with its NUL.
        let len = if abstract_ns { base + 1 + bytes.len() } else { base + bytes.len() + 1 };
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Probe::Other(std::io::Error::last_os_error());
        }
        let fd = OwnedFd::from_raw_fd(fd);
        let rc = libc::connect(fd.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len as libc::socklen_t);
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ECONNREFUSED) => Probe::Refused,
                Some(libc::ENOENT) => Probe::Gone,
                // A listener whose backlog is full, or of another socket type: in use either way.
                Some(libc::EAGAIN) | Some(libc::EPROTOTYPE) => Probe::Listening,
                _ => Probe::Other(e),
            };
        }
        let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        if libc::poll(&mut pfd, 1, 500) > 0 {
            let mut buf = [0u8; 256];
            libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT);
        }
        Probe::Listening
    }
}

/// Opens `spec`, or says which ports exist and how to add one.
pub fn open_port(spec: &str) -> Result<Port, Failure> {
    Port::open(spec).map_err(|e| match e {
        dpdk::Error::NoSuchPort { .. } => Failure::usage(format!("{e}; choose one with --port, or add a device with --vdev after --")),
        dpdk::Error::AlreadyOpen { .. } => {
            Failure::usage(format!("--port {spec}: {e}: a port given twice (by name and by id?) must be given once"))
        }
        other => other.into(),
    })
}

/// Turns a device-limit error into one that names the flag to change;
/// `size_flag` is the binary's frame-size flag.
pub fn limit_failure(e: dpdk::Error, size_flag: &str) -> Failure {
    let lower_size = format!("lower {size_flag}");
    let dpdk::Error::Limit { what, .. } = &e else { return e.into() };
    let flag = match what {
        LimitKind::RxQueues | LimitKind::TxQueues => "lower --queues",
        LimitKind::FrameSize => &lower_size,
        LimitKind::RxRing => "choose another --rx-ring",
        LimitKind::TxRing => "choose another --tx-ring",
    };
    Failure::usage(format!("{e}: {flag}"))
}

/// The shared secret could not be had, in the flags' terms.
pub fn secret_failure(e: control::SecretError) -> Failure {
    Failure::usage(match &e {
        control::SecretError::Unreadable { path, reason } => format!("cannot read --token-file {}: {reason}", path.display()),
        control::SecretError::EmptyFile { .. } => format!("--token-file {e}"),
        control::SecretError::EmptyEnvironment => e.to_string(),
    })
}

/// A listen address refused, in the flags' terms.
pub fn listen_failure(e: control::ListenError) -> Failure {
    Failure::usage(format!("--listen {e}"))
}

/// A step that cannot be laid out, in the flags' terms.
pub fn layout_failure(e: layout::LayoutError) -> Failure {
    Failure::usage(match e {
        layout::LayoutError::NoQueues => e.to_string(),
        layout::LayoutError::NoFlows => format!("--{e}"),
        layout::LayoutError::PortsRunOut { flows, base_port } => {
            format!("--flows {flows} from source port {base_port} runs past port 65535: lower --flows or --src-port")
        }
        layout::LayoutError::TooManyStreams { .. } => format!("{e}: lower --flows (and --queues) to fit this group member's share"),
    })
}

/// Says which port would not start and what usually causes it.
pub fn start_failure(port: &Port, e: dpdk::Error) -> Failure {
    let i = port.info();
    Failure::runtime(format!(
        "cannot start port {} ({}, {}): {e}; check the device's arguments, and that its peer is there (a memif client needs its server running first)",
        port.id(),
        i.name,
        i.driver
    ))
}

/// The first `queues` worker lcores, or an error saying how many to give.
pub fn worker_lcores(eal: &Eal, queues: u16) -> Result<Vec<u32>, Failure> {
    let workers = eal.worker_lcores();
    if workers.len() < usize::from(queues) {
        return Err(Failure::usage(format!(
            "--queues {queues} needs {queues} worker lcores but the EAL has {}: pass -l or --lcores after -- with one more lcore than queues, or lower --queues",
            workers.len()
        )));
    }
    Ok(workers[..usize::from(queues)].to_vec())
}

/// Parsers for clap that give one clear sentence each. Negative numbers
/// reach them (both tools' Args set `allow_negative_numbers`), and each
/// says what a good value is.
pub mod parse {
    use std::str::FromStr;

    pub use crate::units::BadValue;

    /// True when `s` is a number with a minus sign ("-5", "-0.5", "-1..4" is not).
    fn negative(s: &str) -> bool {
        let t = s.trim();
        t.strip_prefix('-').is_some_and(|r| r.parse::<f64>().is_ok() || r.parse::<u64>().is_ok())
    }

    /// A whole number of type T, or a sentence: "{s} is negative: give {what}"
    /// or "{s} is not {what}".
    fn whole<T: FromStr>(s: &str, what: &str) -> Result<T, BadValue> {
        if negative(s) {
            return Err(BadValue(format!("{} is negative: give {what}", s.trim())));
        }
        s.trim().parse::<T>().map_err(|_| BadValue(format!("{s:?} is not {what}")))
    }

    /// A decimal number, or the same sentences as [`whole`].
    fn decimal(s: &str, what: &str) -> Result<f64, BadValue> {
        if negative(s) {
            return Err(BadValue(format!("{} is negative: give {what}", s.trim())));
        }
        match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(BadValue(format!("{s:?} is not {what}"))),
        }
    }

    fn below_minimum(n: u64) -> String {
        format!("{n} is below the Ethernet minimum of {} bytes (FCS included): give 64 or more, e.g. 64 or 1518", wire::MIN_FRAME)
    }

    pub fn frame_size(s: &str) -> Result<u32, BadValue> {
        let n: u32 = whole(s, "a frame size in bytes: 64 (the Ethernet minimum, FCS included) or more, e.g. 1518")?;
        if (n as usize) < wire::MIN_FRAME {
            return Err(BadValue(below_minimum(u64::from(n))));
        }
        Ok(n)
    }

    /// A list given as one flag value ("1,2,4", "1..32").
    #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
    #[serde(transparent)]
    pub struct List<T>(pub Vec<T>);

    impl<T> std::ops::Deref for List<T> {
        type Target = Vec<T>;
        fn deref(&self) -> &Vec<T> {
            &self.0
        }
    }

    /// Each number in a list or range ("1,2", "1..32"), as typed.
    fn list_items(s: &str) -> impl Iterator<Item = &str> {
        s.split(',').flat_map(|p| p.split("..")).map(str::trim)
    }

    /// A queue count, a list of them or a doubling range.
    pub fn queue_list(s: &str) -> Result<List<u16>, BadValue> {
        if let Some(n) = list_items(s).find(|n| negative(n)) {
            return Err(BadValue(format!(
                "{n} is negative: a queue count is 1 to 65535: write a number, a list like 1,2,4 or a doubling range like 1..32"
            )));
        }
        Ok(List(ladder::parse_list(s, "queue count", u64::from(u16::MAX))?.into_iter().map(|v| v as u16).collect()))
    }

    /// A frame size, a list of them or a doubling range.
    pub fn size_list(s: &str) -> Result<List<u32>, BadValue> {
        for n in list_items(s) {
            if negative(n) {
                return Err(BadValue(format!(
                    "{n} is negative: a frame size is 64 bytes (FCS included) or more: write a number or a list like 64,1500"
                )));
            }
            // Said before the list parser's "at least 1" for 0.
            if let Ok(v) = n.parse::<u64>() {
                if (v as usize) < wire::MIN_FRAME {
                    return Err(BadValue(below_minimum(v)));
                }
            }
        }
        let v = ladder::parse_list(s, "frame size", u64::from(u32::MAX))?;
        for &n in &v {
            if (n as usize) < wire::MIN_FRAME {
                return Err(BadValue(below_minimum(n)));
            }
        }
        Ok(List(v.into_iter().map(|n| n as u32).collect()))
    }

    pub fn flows(s: &str) -> Result<u32, BadValue> {
        match whole::<u32>(s, "a number of flows, 1 to 65536")? {
            0 => Err(BadValue("there must be at least 1 flow".into())),
            n if n > 65536 => Err(BadValue(format!("{n} flows exceed the 65536 UDP source ports"))),
            n => Ok(n),
        }
    }

    pub fn queues(s: &str) -> Result<u16, BadValue> {
        match whole::<u16>(s, "a queue count (1 to 65535)")? {
            0 => Err(BadValue("there must be at least 1 queue".into())),
            n => Ok(n),
        }
    }

    pub fn burst(s: &str) -> Result<usize, BadValue> {
        let what = format!("a burst size from 1 to {}", crate::MAX_BURST);
        match whole::<usize>(s, &what) {
            Ok(n) if (1..=crate::MAX_BURST).contains(&n) => Ok(n),
            Err(e) if negative(s) => Err(e),
            _ => Err(BadValue(format!("{s:?} is not {what}"))),
        }
    }

    pub fn ring(s: &str) -> Result<u16, BadValue> {
        let what = "a ring size (descriptors, 1 to 65535)";
        match whole::<u16>(s, what) {
            Ok(n) if n > 0 => Ok(n),
            Err(e) if negative(s) => Err(e),
            _ => Err(BadValue(format!("{s:?} is not {what}"))),
        }
    }

    pub fn rate(s: &str) -> Result<f64, BadValue> {
        crate::units::parse_rate(s)
    }

    /// A frame size mix: "imix" or SIZE:WEIGHT pairs ("64:7,594:4,1518:1").
    pub fn size_mix(s: &str) -> Result<wire::SizeMix, BadValue> {
        wire::SizeMix::parse(s).map_err(|e| BadValue(e.to_string()))
    }

    /// A rate or a list of them ("100k,1M,4M"), each its own ladder step.
    pub fn rate_list(s: &str) -> Result<List<f64>, BadValue> {
        let v = s.split(',').map(crate::units::parse_rate).collect::<Result<Vec<f64>, BadValue>>()?;
        if (1..v.len()).any(|i| v[..i].contains(&v[i])) {
            return Err(BadValue(format!("rate list {s:?} repeats a rate: give each once")));
        }
        Ok(List(v))
    }

    /// An arrival shape or a list of them ("even,burst:8"), each its own ladder step.
    pub fn shape_list(s: &str) -> Result<List<pace::Shape>, BadValue> {
        let v =
            s.split(',').map(|x| x.trim().parse::<pace::Shape>()).collect::<Result<Vec<_>, _>>().map_err(|e| BadValue(e.to_string()))?;
        if (1..v.len()).any(|i| v[..i].contains(&v[i])) {
            return Err(BadValue(format!("shape list {s:?} repeats a shape: give each once")));
        }
        Ok(List(v))
    }

    pub fn duration(s: &str) -> Result<std::time::Duration, BadValue> {
        crate::units::parse_duration(s)
    }

    pub fn count(s: &str) -> Result<u64, BadValue> {
        crate::units::parse_count(s)
    }

    /// A percentage from 0 to 100 (loss allowed, thresholds).
    pub fn percent(s: &str) -> Result<f64, BadValue> {
        let what = "a percentage from 0 to 100, e.g. 0.5";
        match decimal(s, what)? {
            v if v <= 100.0 => Ok(v),
            v => Err(BadValue(format!("{v} is above 100: give {what}"))),
        }
    }

    /// A bandwidth in Gb/s, above 0.
    pub fn gbps(s: &str) -> Result<f64, BadValue> {
        match decimal(s, "a bandwidth in Gb/s above 0, e.g. 100")? {
            v if v > 0.0 => Ok(v),
            _ => Err(BadValue(format!("{s:?} is not a bandwidth in Gb/s above 0, e.g. 100"))),
        }
    }

    /// A UDP port, 0 to 65535.
    pub fn udp_port(s: &str) -> Result<u16, BadValue> {
        whole(s, "a UDP port, 0 to 65535")
    }

    /// How many times to run each ladder step, 1 to 100.
    pub fn repeat(s: &str) -> Result<u32, BadValue> {
        match whole::<u32>(s, "a repeat count from 1 to 100") {
            Ok(n) if (1..=100).contains(&n) => Ok(n),
            Err(e) if negative(s) => Err(e),
            _ => Err(BadValue(format!("{s:?} is not a repeat count from 1 to 100"))),
        }
    }

    /// CPU cycles of busy work per frame, 0 (none) or more.
    pub fn cycles(s: &str) -> Result<u64, BadValue> {
        whole(s, "a number of CPU cycles per frame, 0 (none) or more, e.g. 20000")
    }

    /// An interval in microseconds, 0 (off) or more.
    pub fn micros(s: &str) -> Result<u64, BadValue> {
        whole(s, "an interval in microseconds, 0 (off) or more, e.g. 100")
    }

    /// A number of mbufs, at least 1.
    pub fn mbufs(s: &str) -> Result<u32, BadValue> {
        match whole::<u32>(s, "a number of mbufs, 1 or more, e.g. 4095")? {
            0 => Err(BadValue("a pool needs at least 1 mbuf: give 1 or more, e.g. 4095".into())),
            n => Ok(n),
        }
    }

    /// Streams sequence-checked per queue, 1 to 65536.
    pub fn streams(s: &str) -> Result<usize, BadValue> {
        match whole::<usize>(s, "a number of streams, 1 to 65536") {
            Ok(n) if (1..=65536).contains(&n) => Ok(n),
            Err(e) if negative(s) => Err(e),
            _ => Err(BadValue(format!("{s:?} is not a number of streams, 1 to 65536"))),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn negative_numbers_say_so_and_what_fits() {
            assert!(queue_list("-2").unwrap_err().to_string().starts_with("-2 is negative: a queue count"));
            assert!(queue_list("1..-4").unwrap_err().to_string().starts_with("-4 is negative"));
            assert!(size_list("-64").unwrap_err().to_string().starts_with("-64 is negative: a frame size"));
            assert!(frame_size("-1").unwrap_err().to_string().starts_with("-1 is negative"));
            assert!(flows("-1").unwrap_err().to_string().starts_with("-1 is negative"));
            assert!(queues("-1").unwrap_err().to_string().starts_with("-1 is negative"));
            assert!(burst("-32").unwrap_err().to_string().starts_with("-32 is negative"));
            assert!(ring("-1").unwrap_err().to_string().starts_with("-1 is negative"));
            assert!(percent("-0.5").unwrap_err().to_string().starts_with("-0.5 is negative: give a percentage"));
            assert!(gbps("-100").unwrap_err().to_string().starts_with("-100 is negative"));
            assert!(udp_port("-1").unwrap_err().to_string().starts_with("-1 is negative: give a UDP port"));
            assert!(repeat("-3").unwrap_err().to_string().starts_with("-3 is negative"));
            assert!(cycles("-5").unwrap_err().to_string().starts_with("-5 is negative: give a number of CPU cycles"));
            assert!(micros("-1").unwrap_err().to_string().starts_with("-1 is negative"));
            assert!(mbufs("-1").unwrap_err().to_string().starts_with("-1 is negative"));
            assert!(streams("-1").unwrap_err().to_string().starts_with("-1 is negative"));
        }

        #[test]
        fn rate_and_shape_lists() {
            assert_eq!(rate_list("100k,1M,4M").unwrap().0, [1e5, 1e6, 4e6]);
            assert_eq!(rate_list("250k").unwrap().0, [2.5e5]);
            assert!(rate_list("1M,1000k").unwrap_err().to_string().contains("repeats a rate"));
            assert!(rate_list("1M,-5").unwrap_err().to_string().starts_with("-5 is negative"));
            assert_eq!(shape_list("even,burst:8").unwrap().0, [pace::Shape::Even, pace::Shape::Burst(8)]);
            assert!(shape_list("even,even").unwrap_err().to_string().contains("repeats a shape"));
            assert!(shape_list("even,bursty").unwrap_err().to_string().contains("is not an arrival shape"));
        }

        #[test]
        fn sizes_below_64_name_the_ethernet_minimum() {
            for s in ["0", "63", "0,64", "64,10", "0..128", "1..64"] {
                let e = size_list(s).unwrap_err().to_string();
                assert!(e.contains("Ethernet minimum of 64 bytes (FCS included)"), "{s}: {e}");
            }
            assert_eq!(size_list("64,1500").unwrap().0, [64, 1500]);
            assert!(frame_size("0").unwrap_err().to_string().contains("minimum of 64"));
        }

        #[test]
        fn ranges_and_good_values() {
            assert_eq!(percent("0").unwrap(), 0.0);
            assert_eq!(percent("100").unwrap(), 100.0);
            assert!(percent("101").unwrap_err().to_string().contains("above 100"));
            assert!(percent("nan").is_err());
            assert_eq!(udp_port("65535").unwrap(), 65535);
            assert!(udp_port("65536").is_err());
            assert_eq!(repeat("100").unwrap(), 100);
            assert!(repeat("0").is_err() && repeat("101").is_err());
            assert_eq!(cycles("0").unwrap(), 0);
            assert!(mbufs("0").is_err());
            assert_eq!(streams("65536").unwrap(), 65536);
            assert!(streams("0").is_err() && streams("65537").is_err());
            assert!(gbps("0").is_err());
        }
    }
}
