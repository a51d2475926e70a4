//! Start-up shared by both binaries: arguments, logging, the EAL, the port,
//! each failure turned into one line that names the fix. `memif` checks
//! net_memif's socket files before the EAL starts; `parse` holds the flags'
//! value parsers.

mod memif;
pub mod parse;

pub use memif::check_memif_sockets;

use std::path::Path;

use clap::Parser;
use dpdk::{Eal, LimitKind, Port};
use nix::unistd::AccessFlags;

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
    if let Err(e) = access(folder, AccessFlags::W_OK | AccessFlags::X_OK) {
        return Err(Failure::usage(format!(
            "{flag} {shown}: folder {where_} is not writable ({e}): give a path in a folder you can write to"
        )));
    }
    if path.exists() {
        if let Err(e) = access(path, AccessFlags::W_OK) {
            return Err(Failure::usage(format!("{flag} {shown} exists and cannot be overwritten ({e}): give another path")));
        }
    }
    Ok(())
}

/// access(2), for the real user (root passes unless the file system is
/// read-only); its error as std's, so the sentence reads as before.
fn access(path: &Path, mode: AccessFlags) -> std::io::Result<()> {
    nix::unistd::access(path, mode).map_err(std::io::Error::from)
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
    // The EAL would refuse the --lcores made for them with its whole usage
    // text. (Lcores the user chose are checked against the device's limits
    // first, then counted: worker_lcores.)
    let max_lcores = dpdk::consts::MAX_LCORE;
    if !eal_args::user_chose_lcores(user) && u32::from(workers) + 1 > max_lcores {
        return Err(Failure::usage(format!(
            "--queues {workers} needs {} lcores (one per queue and the main one), but this DPDK build has at most {max_lcores} \
             (RTE_MAX_LCORE): lower --queues to {} or fewer",
            u32::from(workers) + 1,
            max_lcores - 1
        )));
    }
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
            // ENODEV: a --vdev whose driver DPDK does not have.
            let hint = eal_args::unknown_vdev_hint(user)
                .filter(|_| reason.contains("No such device"))
                .unwrap_or_else(|| eal_args::init_failure_hint(user));
            Failure::runtime(format!("the DPDK EAL failed to start ({reason}): {hint}"))
        }
        other => other.into(),
    })?;
    if eal_args::user_chose_lcores(user) {
        // The user's map may put workers on one CPU (`--lcores=0@0,1@0,2@0`):
        // said now, and in the record's environment.lcore_warnings.
        let lanes: Vec<(u32, Vec<u32>)> = eal.worker_lcores().into_iter().map(|l| (l, eal.lcore_cpus(l))).collect();
        if let Some(w) = topology::shared_cpu_warning(&lanes) {
            tracing::warn!("{w}");
        }
    }
    Ok(Started { eal, eal_args: plan.args, placement: plan.placement })
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
    if e.is_device_wait() {
        return e.into();
    }
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
