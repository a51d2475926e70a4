//! Why the library could not do what it was asked, as data: the ports,
//! queues, paths and sources involved. The binaries turn each into the one
//! line a user reads, naming the flag to change, and into an exit code
//! (src/bin/common/fail.rs); nothing here knows either.
//!
//! One enum for the library, not one per module: the sender and the
//! receiver fail through the plane, the session, the frame templates and
//! the extended stats, and each binary maps every failure it can meet in
//! one match.

use std::path::PathBuf;
use std::time::Duration;

/// A failure of the library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A DPDK call failed (a device that stopped answering, or a signal
    /// while waiting on it, among them).
    #[error(transparent)]
    Dpdk(#[from] dpdk::Error),
    /// A device limit (`dpdk::Error::Limit`) a setting goes past.
    /// `from_capture`: the largest frame is a capture's, not a setting's.
    #[error("{source}")]
    Limit { source: dpdk::Error, from_capture: bool },
    /// No port by that name or id.
    #[error("{source}")]
    NoSuchPort { source: dpdk::Error },
    /// A port asked for twice.
    #[error("{spec}: {source}")]
    PortTwice { spec: String, source: dpdk::Error },
    /// A port that would not start (not a device wait: that is `Dpdk`).
    #[error(
        "cannot start port {port} ({name}, {driver}): {source}; check the device's arguments, and that its peer is there (a memif client needs its server running first)"
    )]
    PortStart { port: u16, name: String, driver: String, source: dpdk::Error },
    /// The EAL would not start; `hint` is what usually causes it.
    #[error("the DPDK EAL failed to start ({reason}): {hint}")]
    EalInit { reason: String, hint: String },
    /// More workers than this DPDK build has lcores for.
    #[error("{workers} workers need {} lcores, but this DPDK build has at most {max_lcores}", u32::from(*workers) + 1)]
    LcoresBeyondBuild { workers: u16, max_lcores: u32 },
    /// Fewer worker lcores than queues.
    #[error("{queues} queues need {queues} worker lcores but the EAL has {workers}")]
    TooFewLcores { queues: u16, workers: usize },
    /// A UDP socket of drop --socket that could not be made or bound.
    #[error(transparent)]
    Socket(#[from] udpsock::SocketError),
    /// --watch-xstat on sockets bound to a wildcard address: no interface to read.
    #[error("--socket {addr} is on every interface, so no interface's statistics can be watched: bind the interface's own address, or leave --watch-xstat out")]
    SocketWatchWithoutInterface { addr: std::net::SocketAddr },
    /// A step asked of the C lanes that they cannot send (they are the
    /// plain loop: unpaced, one frame size, built frames on a DPDK port).
    #[error("blast's C lanes cannot send {what}: the cross-check runs unpaced steps of one frame size on a DPDK port only")]
    CLanesCannot { what: &'static str },
    /// A socket lane that could not run.
    #[error("socket lane {queue}: {why}")]
    SocketLane { queue: u16, why: String },
    /// blast --socket from an address no interface here holds.
    #[error(
        "--socket: --src-ip {ip} is on no interface of this network namespace: give the sending interface's own address with --src-ip"
    )]
    SocketSourceNotLocal { ip: std::net::Ipv4Addr },
    /// blast --socket with frames the sending interface cannot carry whole.
    #[error("--socket: frames of {size} B do not fit {interface}'s MTU of {mtu} B (at most {} B with the Ethernet header and FCS): give --size up to that, or raise the interface's MTU", mtu + 18)]
    SocketFrameAboveMtu { size: u32, interface: String, mtu: u32 },
    /// A net_memif socket that cannot be used.
    #[error(transparent)]
    Memif(#[from] MemifError),
    /// Fewer send queues than ports.
    #[error("{ports} ports but at most {queues} queue(s) to send on")]
    SendQueuesBelowPorts { ports: u16, queues: u16 },
    /// Fewer receive queues than ports.
    #[error("{ports} ports but at most {queues} queue(s) to receive on")]
    ReceiveQueuesBelowPorts { ports: u16, queues: u16 },
    /// More RX queues asked than the receiver reserved lcores and pools for.
    #[error("{asked} RX queues asked, but {reserved} reserved")]
    QueuesBeyondReserved { asked: u16, reserved: u16 },
    /// An AF_XDP port asked to change its queue count: DPDK's net_af_xdp
    /// makes each queue's XDP socket at queue set-up and frees it only when
    /// the port closes, so a second set-up of a queue fails (seen on 22.11
    /// over the igb driver: "Failed to configure xdp socket").
    #[error("{port} (net_af_xdp) runs {has} queue(s) and cannot change to {asked} within a run: DPDK's AF_XDP PMD frees its XDP sockets only when the port closes; run one queue count per run ({fix})")]
    AfXdpQueuesFixed { port: String, has: u16, asked: u16, fix: &'static str },
    /// A per-frame cost in core cycles where the core clock is unknown.
    #[error("a receive cost of {cycles} core cycles, but this machine's core clock is {clock}")]
    RxCostUnknownClock { cycles: u64, clock: String },
    /// No arrival clock fits the choice and the ports.
    #[error(transparent)]
    ArrivalClock(#[from] latency::arrival::NoNicTimestamps),
    /// A port's link still down after `waited`.
    #[error("link of port {port} ({name}) still down after {waited:.0?}")]
    LinkDown { port: u16, name: String, waited: Duration },
    /// A signal came while waiting for a link.
    #[error("interrupted while waiting for the link")]
    LinkWaitInterrupted,
    /// A lane kept its queue handles (it failed).
    #[error("the queue handles of {want} queue(s) are not all back from their lanes ({tx} TX, {rx} RX): a lane failed; run again")]
    HandlesNotBack { want: usize, tx: usize, rx: usize },
    /// An extended stat asked for that the port does not have.
    #[error("port {port} ({driver}) has no extended stat {name:?}: check the name (dpdk-testpmd's `show port xstats` lists them)")]
    NoSuchXstat { port: u16, driver: String, name: String },
    /// The statistics of the kernel interface under a port could not be read.
    #[error(transparent)]
    KernelStats(#[from] nicstats::Error),
    /// A statistic asked for that the kernel driver under a port does not list.
    #[error("{interface} (kernel driver {driver}{}) lists no statistic {name:?}: on a kernel interface, --watch-xstat names the driver's own statistics (`ethtool -S {interface}` lists them)", under_port(*port))]
    NoSuchKernelStat { port: u16, interface: String, driver: String, name: String },
    /// A frame that cannot be built as set.
    #[error(transparent)]
    Frame(#[from] wire::FrameError),
    /// A step that cannot be laid out on the queues and flows.
    #[error(transparent)]
    Layout(#[from] layout::LayoutError),
    /// A record that cannot be encoded as JSON.
    #[error("cannot encode the JSON record: {0}")]
    RecordEncode(serde_json::Error),
    /// The record could not be written; `path` None: to stdout.
    #[error("cannot write the record to {}: {source}", path.as_ref().map_or("stdout".to_string(), |p| p.display().to_string()))]
    RecordWrite { path: Option<PathBuf>, source: std::io::Error },
    /// The events file could not be created.
    #[error("cannot write the events to {}: {source}", path.display())]
    EventsWrite { path: PathBuf, source: std::io::Error },
    /// The metrics endpoint's address refused (`spec` as given).
    #[error("{spec}: {reason}")]
    MetricsAddress { spec: String, reason: String },
    /// The series file could not be created.
    #[error("{}: cannot write it ({source})", path.display())]
    SeriesCreate { path: PathBuf, source: std::io::Error },
    /// The series file's header could not be written.
    #[error("{}: {source}", path.display())]
    SeriesWrite { path: PathBuf, source: std::io::Error },
    /// The series plot could not be written.
    #[error("{}: cannot write it ({source})", path.display())]
    SeriesPlotWrite { path: PathBuf, source: std::io::Error },
}

/// A net_memif vdev's socket that cannot be used, found before the EAL
/// starts (the PMD's own failures surface only as "no ports"). `vdev`: the
/// vdev's name; each sentence says how to fix its arguments.
#[derive(Debug, thiserror::Error)]
pub enum MemifError {
    #[error(
        "memif socket {shown} is in use by another process (a drop still running?): stop it or give the vdev {vdev} another socket=PATH"
    )]
    InUse { shown: String, vdev: String },
    #[error(
        "memif socket {path} is {} bytes long, above the 107 a Unix socket path may have: give the vdev {vdev} a shorter socket=PATH",
        path.len()
    )]
    PathTooLong { path: String, vdev: String },
    #[error("memif socket {path} has no folder: give the vdev {vdev} a full path, e.g. socket=/tmp/{path}")]
    NoFolder { path: String, vdev: String },
    #[error("memif socket {path}: folder {folder} does not exist: create it or give the vdev {vdev} another socket=PATH")]
    FolderMissing { path: String, folder: String, vdev: String },
    #[error("memif socket {path} exists and is not a socket: remove it or give the vdev {vdev} another socket=PATH")]
    NotASocket { path: String, vdev: String },
    #[error(
        "memif socket {path} is stale (nobody listens on it) but cannot be removed ({source}): remove it or give the vdev {vdev} another socket=PATH"
    )]
    StaleNotRemoved { path: String, vdev: String, source: std::io::Error },
    #[error(
        "memif socket {path} exists and cannot be checked ({source}): remove it if no process serves it, or give the vdev {vdev} another socket=PATH"
    )]
    Unchecked { path: String, vdev: String, source: std::io::Error },
}

impl Error {
    /// `e` as a device limit when it is one (`from_capture` as for
    /// [`Error::Limit`]), else as it is.
    pub fn limit(e: dpdk::Error, from_capture: bool) -> Error {
        match e {
            dpdk::Error::Limit { .. } => Error::Limit { source: e, from_capture },
            other => Error::Dpdk(other),
        }
    }
}

/// ", under port N" for a port's kernel interface; nothing for an interface
/// watched alone (drop --socket: no port, `u16::MAX`).
fn under_port(port: u16) -> String {
    if port == u16::MAX {
        String::new()
    } else {
        format!(", under port {port}")
    }
}
