//! One-line errors: every failure a user can cause ends with a single line
//! naming the problem and the fix, and a non-zero exit. The library's
//! [`blastdrop::Error`] says what went wrong with which port, queue or
//! path; [`explain`] adds the flag to change and the exit code.

use std::fmt;

use blastdrop::error::Error;
use dpdk::LimitKind;

/// A failure to report to the user, with the exit code it deserves.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
}

/// Exit code for bad input (as clap uses).
pub const USAGE: u8 = 2;
/// Exit code for a run that could not be carried out.
pub const RUNTIME: u8 = 1;
/// Exit code for a device that did not answer a call within
/// --device-timeout (dpdk::deadline): the run ends without touching it again.
pub const DEVICE_STALLED: u8 = 3;

/// What a frame too large for a device says to lower when the largest
/// frame is a capture's (blast --pcap).
const CAPTURE_SIZE: &str = "the capture's largest frame (leave such frames out: tshark -r IN -Y 'frame.len <= N' -w OUT)";

impl Failure {
    pub fn usage(message: impl fmt::Display) -> Failure {
        Failure { message: message.to_string(), code: USAGE }
    }

    pub fn runtime(message: impl fmt::Display) -> Failure {
        Failure { message: message.to_string(), code: RUNTIME }
    }
}

impl From<dpdk::Error> for Failure {
    fn from(e: dpdk::Error) -> Failure {
        let code = match &e {
            dpdk::Error::Stalled { .. } | dpdk::Error::Wedged { .. } => DEVICE_STALLED,
            dpdk::Error::Interrupted { .. } => blastdrop::signals::EXIT_INTERRUPTED,
            _ => RUNTIME,
        };
        Failure { message: e.to_string(), code }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        explain(e)
    }
}

/// `e` as the user's line, naming the flag that changes it, and its exit
/// code. `crate::SIZE_FLAG`: the binary's frame-size flag.
pub fn explain(e: Error) -> Failure {
    match e {
        Error::Dpdk(e) => e.into(),
        Error::Limit { source, from_capture } => limit(source, from_capture),
        Error::NoSuchPort { source } => Failure::usage(format!("{source}; choose one with --port, or add a device with --vdev after --")),
        Error::PortTwice { spec, source } => {
            Failure::usage(format!("--port {spec}: {source}: a port given twice (by name and by id?) must be given once"))
        }
        Error::LcoresBeyondBuild { workers, max_lcores } => Failure::usage(format!(
            "--queues {workers} needs {} lcores (one per queue and the main one), but this DPDK build has at most {max_lcores} \
             (RTE_MAX_LCORE): lower --queues to {} or fewer",
            u32::from(workers) + 1,
            max_lcores - 1
        )),
        Error::TooFewLcores { queues, workers } => Failure::usage(format!(
            "--queues {queues} needs {queues} worker lcores but the EAL has {workers}: pass -l or --lcores after -- with one more lcore than queues, or lower --queues"
        )),
        Error::SendQueuesBelowPorts { ports, queues } => {
            Failure::usage(format!("{ports} ports but at most {queues} queue(s): give every --port a queue (--queues {ports} or more)"))
        }
        Error::ReceiveQueuesBelowPorts { ports, queues } => {
            Failure::usage(format!("{ports} ports but --queues {queues}: give every --port a queue (--queues {ports} or more)"))
        }
        Error::QueuesBeyondReserved { asked, reserved } => Failure::usage(format!(
            "{asked} RX queues asked, but drop reserved lcores and pools for {reserved}: restart drop with --queues {asked}"
        )),
        Error::RxCostUnknownClock { cycles, clock } => Failure::usage(format!(
            "--rx-cost {cycles} is in core cycles, but this machine's core clock is {clock}: give --rx-cost 0 here, or run where the kernel has cpufreq in sysfs"
        )),
        Error::LinkDown { port, name, waited } => Failure::runtime(format!(
            "link of port {port} ({name}) still down after {waited:.0?}: is the peer running (drop, or the memif server)? raise --link-timeout to wait longer"
        )),
        Error::Layout(e) => layout(e),
        e @ Error::CLanesCannot { .. } => Failure::usage(format!("--cross-check: {e}")),
        Error::RecordWrite { path: None, source } => Failure::runtime(format!("cannot write --json to stdout: {source}")),
        Error::RecordWrite { path: Some(path), source } => Failure::runtime(format!("cannot write --json {}: {source}", path.display())),
        Error::EventsWrite { path, source } => Failure::runtime(format!("cannot write --events {}: {source}", path.display())),
        Error::MetricsAddress { spec, reason } => Failure::usage(format!("--metrics {spec}: {reason}")),
        Error::SeriesCreate { path, source } => {
            Failure::usage(format!("--series {}: cannot write it ({source}): give a path in a folder you can write", path.display()))
        }
        Error::SeriesWrite { path, source } => Failure::runtime(format!("--series {}: {source}", path.display())),
        Error::SeriesPlotWrite { path, source } => Failure::runtime(format!("--series-svg {}: cannot write it ({source})", path.display())),
        // Their own sentences name no flag: each says what to change.
        Error::Socket(e @ udpsock::SocketError::Bind { .. }) => Failure::usage(format!("--socket: {e}")),
        Error::Socket(e) => Failure::runtime(format!("--socket: {e}")),
        e @ Error::SocketLane { .. } => Failure::runtime(e),
        e @ (Error::SocketWatchWithoutInterface { .. }
        | Error::SocketSourceNotLocal { .. }
        | Error::SocketFrameAboveMtu { .. }
        | Error::AfXdpQueuesFixed { .. }) => {
            Failure::usage(e)
        }
        e @ (Error::Memif(_) | Error::ArrivalClock(_) | Error::NoSuchXstat { .. } | Error::NoSuchKernelStat { .. } | Error::Frame(_)) => {
            Failure::usage(e)
        }
        e @ (Error::PortStart { .. }
        | Error::EalInit { .. }
        | Error::LinkWaitInterrupted
        | Error::HandlesNotBack { .. }
        | Error::KernelStats(_)
        | Error::RecordEncode(_)) => Failure::runtime(e),
    }
}

/// A device limit, with the flag that sets what is past it.
fn limit(e: dpdk::Error, from_capture: bool) -> Failure {
    let dpdk::Error::Limit { what, .. } = &e else { return e.into() };
    let size = format!("lower {}", if from_capture { CAPTURE_SIZE } else { crate::SIZE_FLAG });
    let fix = match what {
        LimitKind::RxQueues | LimitKind::TxQueues => "lower --queues",
        LimitKind::FrameSize => &size,
        LimitKind::RxRing => "choose another --rx-ring",
        LimitKind::TxRing => "choose another --tx-ring",
    };
    Failure::usage(format!("{e}: {fix}"))
}

/// The shared secret could not be had, in the flags' terms.
/// The flags `given` that `path` does not support yet, refused in one line
/// naming each ("--socket sends on ..., where --port, --reflect are not
/// supported yet: leave them out"), `tail` after it; Ok when none was given.
pub fn not_supported_yet(path: &str, given: &[(&str, bool)], tail: &str) -> Result<(), Failure> {
    let unsupported: Vec<&str> = given.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect();
    if unsupported.is_empty() {
        return Ok(());
    }
    let one = unsupported.len() == 1;
    Err(Failure::usage(format!(
        "{path}, where {} {} not supported yet: leave {} out{tail}",
        unsupported.join(", "),
        if one { "is" } else { "are" },
        if one { "it" } else { "them" },
    )))
}

pub fn secret(e: control::SecretError) -> Failure {
    Failure::usage(match &e {
        control::SecretError::Unreadable { path, reason } => format!("cannot read --token-file {}: {reason}", path.display()),
        control::SecretError::EmptyFile { .. } => format!("--token-file {e}"),
        control::SecretError::EmptyEnvironment => e.to_string(),
    })
}

/// A listen address refused, in the flags' terms.
pub fn listen(e: control::ListenError) -> Failure {
    Failure::usage(format!("--listen {e}"))
}

/// A step that cannot be laid out, in the flags' terms.
pub fn layout(e: layout::LayoutError) -> Failure {
    Failure::usage(match e {
        layout::LayoutError::NoQueues => e.to_string(),
        layout::LayoutError::NoFlows => format!("--{e}"),
        layout::LayoutError::PortsRunOut { flows, base_port } => {
            format!("--flows {flows} from source port {base_port} runs past port 65535: lower --flows or --src-port")
        }
        layout::LayoutError::TooManyStreams { .. } => format!("{e}: lower --flows (and --queues) to fit this group member's share"),
    })
}

/// Writes the not-started record to `json` when `f` is a device call given
/// up (blastdrop::unfinished); a failure to write it is said on stderr: the
/// run's own line says why it ended.
pub fn write_if_device_call(tool: &str, json: Option<&std::path::Path>, config: serde_json::Value, f: &Failure) {
    if let Err(e) = blastdrop::unfinished::write_if_device_call(tool, json, config, &f.message, f.code) {
        eprintln!("{tool}: {}", explain(e).message);
    }
}

/// Prints `tool: error: message` as one line and returns the exit code.
pub fn report(tool: &str, f: &Failure) -> std::process::ExitCode {
    let one_line = f.message.replace('\n', "; ");
    eprintln!("{tool}: error: {one_line}");
    std::process::ExitCode::from(f.code)
}

/// A run's exit: a failure's code (its line printed); for a run a signal
/// cut short, once its report and record are written,
/// [`blastdrop::signals::EXIT_INTERRUPTED`] (130) with a line saying so, so
/// a script tells it from a run that went to its end; else 0. The
/// --metrics endpoint lingers first where the run ended on its own.
pub fn exit(tool: &str, result: Result<(), Failure>) -> std::process::ExitCode {
    let interrupted = blastdrop::signals::interrupted();
    blastdrop::timeline::linger();
    match result {
        Err(f) => report(tool, &f),
        Ok(()) if interrupted => {
            eprintln!(
                "{tool}: interrupted: the report and record above cover the run up to the signal (exit {})",
                blastdrop::signals::EXIT_INTERRUPTED
            );
            std::process::ExitCode::from(blastdrop::signals::EXIT_INTERRUPTED)
        }
        Ok(()) => std::process::ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    fn limit_of(what: LimitKind) -> dpdk::Error {
        dpdk::Error::Limit { port: 0, what, asked: 8192, limit: "4096".into() }
    }

    fn io_error() -> io::Error {
        io::Error::other("disk full")
    }

    /// The library's errors say what is wrong and name no flag; the
    /// binary's line adds the flag and the fix, word for word the line the
    /// tools printed when the library made it, with the same exit code.
    /// (`explain` has no catch-all arm: a new variant does not build until
    /// it is mapped.)
    #[test]
    fn each_library_error_becomes_the_line_naming_its_flag() {
        let limit = |what| format!("{}", limit_of(what));
        let cases: Vec<(Error, String, u8)> = vec![
            (Error::limit(limit_of(LimitKind::TxQueues), false), format!("{}: lower --queues", limit(LimitKind::TxQueues)), USAGE),
            (Error::limit(limit_of(LimitKind::RxRing), false), format!("{}: choose another --rx-ring", limit(LimitKind::RxRing)), USAGE),
            (Error::limit(limit_of(LimitKind::TxRing), false), format!("{}: choose another --tx-ring", limit(LimitKind::TxRing)), USAGE),
            (
                Error::limit(limit_of(LimitKind::FrameSize), false),
                format!("{}: lower {}", limit(LimitKind::FrameSize), crate::SIZE_FLAG),
                USAGE,
            ),
            (
                Error::limit(limit_of(LimitKind::FrameSize), true),
                format!(
                    "{}: lower the capture's largest frame (leave such frames out: tshark -r IN -Y 'frame.len <= N' -w OUT)",
                    limit(LimitKind::FrameSize)
                ),
                USAGE,
            ),
            (
                Error::PortTwice { spec: "net_null0".into(), source: dpdk::Error::AlreadyOpen { port: 0 } },
                "--port net_null0: port 0 is already open in this process: a port given twice (by name and by id?) must be given once"
                    .into(),
                USAGE,
            ),
            (
                Error::LcoresBeyondBuild { workers: 1000, max_lcores: 128 },
                "--queues 1000 needs 1001 lcores (one per queue and the main one), but this DPDK build has at most 128 (RTE_MAX_LCORE): lower --queues to 127 or fewer".into(),
                USAGE,
            ),
            (
                Error::TooFewLcores { queues: 4, workers: 2 },
                "--queues 4 needs 4 worker lcores but the EAL has 2: pass -l or --lcores after -- with one more lcore than queues, or lower --queues".into(),
                USAGE,
            ),
            (
                Error::SendQueuesBelowPorts { ports: 2, queues: 1 },
                "2 ports but at most 1 queue(s): give every --port a queue (--queues 2 or more)".into(),
                USAGE,
            ),
            (
                Error::ReceiveQueuesBelowPorts { ports: 2, queues: 1 },
                "2 ports but --queues 1: give every --port a queue (--queues 2 or more)".into(),
                USAGE,
            ),
            (
                Error::QueuesBeyondReserved { asked: 4, reserved: 2 },
                "4 RX queues asked, but drop reserved lcores and pools for 2: restart drop with --queues 4".into(),
                USAGE,
            ),
            (
                Error::RxCostUnknownClock { cycles: 100, clock: "unknown".into() },
                "--rx-cost 100 is in core cycles, but this machine's core clock is unknown: give --rx-cost 0 here, or run where the kernel has cpufreq in sysfs".into(),
                USAGE,
            ),
            (
                Error::LinkDown { port: 0, name: "net_memif0".into(), waited: Duration::from_secs(5) },
                "link of port 0 (net_memif0) still down after 5s: is the peer running (drop, or the memif server)? raise --link-timeout to wait longer".into(),
                RUNTIME,
            ),
            (
                Error::Layout(layout::LayoutError::PortsRunOut { flows: 10, base_port: 65530 }),
                "--flows 10 from source port 65530 runs past port 65535: lower --flows or --src-port".into(),
                USAGE,
            ),
            (Error::RecordWrite { path: None, source: io_error() }, "cannot write --json to stdout: disk full".into(), RUNTIME),
            (
                Error::RecordWrite { path: Some(PathBuf::from("out.json")), source: io_error() },
                "cannot write --json out.json: disk full".into(),
                RUNTIME,
            ),
            (
                Error::EventsWrite { path: PathBuf::from("ev.jsonl"), source: io_error() },
                "cannot write --events ev.jsonl: disk full".into(),
                RUNTIME,
            ),
            (
                Error::MetricsAddress { spec: "0.0.0.0:9100".into(), reason: "every interface".into() },
                "--metrics 0.0.0.0:9100: every interface".into(),
                USAGE,
            ),
            (
                Error::SeriesCreate { path: PathBuf::from("s.csv"), source: io_error() },
                "--series s.csv: cannot write it (disk full): give a path in a folder you can write".into(),
                USAGE,
            ),
            (Error::SeriesWrite { path: PathBuf::from("s.csv"), source: io_error() }, "--series s.csv: disk full".into(), RUNTIME),
            (
                Error::SeriesPlotWrite { path: PathBuf::from("s.svg"), source: io_error() },
                "--series-svg s.svg: cannot write it (disk full)".into(),
                RUNTIME,
            ),
        ];
        for (e, line, code) in cases {
            let said = e.to_string();
            assert!(!said.contains("--"), "the library's own text names no flag: {said}");
            let f = explain(e);
            assert_eq!((f.message.as_str(), f.code), (line.as_str(), code));
        }
    }

    /// A failure that names no flag keeps its library sentence; a device
    /// that stopped answering, or a signal while waiting on one, keeps its
    /// own exit code wherever it comes from.
    #[test]
    fn sentences_without_a_flag_stay_and_device_waits_keep_their_codes() {
        let stalled = || dpdk::Error::Stalled { device: "net_null0".into(), call: "rte_eth_dev_start", waited: Duration::from_secs(2) };
        let cases: Vec<(Error, u8)> = vec![
            (Error::LinkWaitInterrupted, RUNTIME),
            (Error::HandlesNotBack { want: 2, tx: 1, rx: 0 }, RUNTIME),
            (Error::NoSuchXstat { port: 0, driver: "net_null".into(), name: "rx_x".into() }, USAGE),
            (Error::NoSuchKernelStat { port: 0, interface: "bd-b".into(), driver: "veth".into(), name: "rx_x".into() }, USAGE),
            (Error::Memif(blastdrop::error::MemifError::NotASocket { path: "/tmp/m".into(), vdev: "net_memif0".into() }), USAGE),
            (Error::Dpdk(stalled()), DEVICE_STALLED),
            (Error::limit(stalled(), false), DEVICE_STALLED),
            (
                Error::Dpdk(dpdk::Error::Interrupted {
                    device: "net_null0".into(),
                    call: "rte_eth_dev_start",
                    waited: Duration::from_secs(1),
                }),
                blastdrop::signals::EXIT_INTERRUPTED,
            ),
        ];
        for (e, code) in cases {
            let said = e.to_string();
            let f = explain(e);
            assert_eq!((f.message.as_str(), f.code), (said.as_str(), code));
        }
    }
}
