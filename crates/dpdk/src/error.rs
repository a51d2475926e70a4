//! The layer's one error type: each variant says what went wrong and what
//! to change, in words a person acts on (the binaries print them as they are).

use std::fmt;

pub type Result<T> = std::result::Result<T, Error>;

/// What went wrong, with enough words to say what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `Eal::init` was called a second time in one process.
    EalAlreadyStarted,
    /// `rte_eal_init` failed.
    EalInit { reason: String },
    /// No port matched the given id, PCI address or name.
    NoSuchPort { spec: String, available: Vec<(u16, String)> },
    /// The port is open already in this process (given twice?).
    AlreadyOpen { port: u16 },
    /// A request beyond what the device reports it can do.
    Limit { port: u16, what: LimitKind, asked: u64, limit: String },
    /// A DPDK call failed.
    Call { call: &'static str, code: i32, message: String },
    /// A worker closure panicked on an lcore.
    WorkerPanicked { lcore: u32, message: String },
    /// A device call did not return within the device timeout (it is
    /// left running; the process is wedged: see `deadline`).
    Stalled { device: String, call: &'static str, waited: std::time::Duration },
    /// A signal came while a device call had not returned (left running too).
    Interrupted { device: String, call: &'static str, waited: std::time::Duration },
    /// Refused: an earlier device call was given up and may still run.
    Wedged { device: String, call: &'static str },
    /// Anything else, said plainly.
    Other(String),
}

/// Which of the device's limits a request went beyond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    RxQueues,
    TxQueues,
    FrameSize,
    RxRing,
    TxRing,
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitKind::RxQueues => "RX queues",
            LimitKind::TxQueues => "TX queues",
            LimitKind::FrameSize => "frame size",
            LimitKind::RxRing => "RX ring size",
            LimitKind::TxRing => "TX ring size",
        })
    }
}

impl Error {
    pub(crate) fn call(call: &'static str, code: i32) -> Error {
        Error::Call { call, code, message: crate::errno_message(code) }
    }

    /// Whether a device call was given up (stalled or interrupted) or
    /// refused after one was: the device is not to be touched again.
    pub fn is_device_wait(&self) -> bool {
        matches!(self, Error::Stalled { .. } | Error::Interrupted { .. } | Error::Wedged { .. })
    }
}

/// What a device that never answers a call most likely is.
pub const STALL_CAUSE: &str = "a virtio device without iommu_platform behind vfio-pci and a translating IOMMU, \
     or a device its PMD cannot drive; see docs/ec2.md \"Any PCI NIC\"";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EalAlreadyStarted => write!(f, "the DPDK EAL is already started in this process (it starts once per process)"),
            Error::EalInit { reason } => write!(f, "the DPDK EAL failed to start: {reason}"),
            Error::NoSuchPort { spec, available } => {
                if available.is_empty() {
                    write!(f, "port {spec:?} not found: DPDK sees no ports (bind a NIC to vfio-pci, or add --vdev after --)")
                } else {
                    let list: Vec<String> = available.iter().map(|(id, name)| format!("{id} ({name})")).collect();
                    write!(f, "port {spec:?} not found; available ports: {}", list.join(", "))
                }
            }
            Error::AlreadyOpen { port } => write!(f, "port {port} is already open in this process"),
            Error::Limit { port, what, asked, limit } => write!(f, "port {port}: {what} {asked} is beyond the device's limit ({limit})"),
            Error::Call { call, code, message } => write!(f, "{call} failed: {message} ({code})"),
            Error::WorkerPanicked { lcore, message } => write!(f, "worker on lcore {lcore} panicked: {message}"),
            Error::Stalled { device, call, waited } => write!(
                f,
                "device did not answer: {call} on {device} did not return within {} s; likely cause: {STALL_CAUSE} \
                 (--device-timeout sets the wait)",
                waited.as_secs()
            ),
            Error::Interrupted { device, call, waited } => {
                write!(f, "interrupted while {call} on {device} had not returned after {:.1} s", waited.as_secs_f64())
            }
            Error::Wedged { device, call } => {
                write!(f, "{call} on {device} not attempted: an earlier device call did not return and may still be running")
            }
            Error::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {}
