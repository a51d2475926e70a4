//! A small safe layer over DPDK for blastdrop: the EAL (once per process),
//! ports opened by id, PCI address or device name and checked against what
//! the device reports, per-queue mempools, and work launched on EAL lcores
//! with panics caught at the `extern "C"` boundary.
//!
//! Handles here (`Port`, `RxQueue`, `TxQueue`, `Mempool`) must not outlive
//! the [`Eal`]; the binaries hold the `Eal` for the whole of `main`.
//!
//! Every `unsafe` block says why it is sound (a `SAFETY:` comment, which
//! clippy enforces here), and every DPDK call's return code is checked or
//! its neglect explained.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod af_xdp;
mod burst;
pub mod deadline;
mod eal;
mod error;
mod lcore;
mod mbuf;
mod mempool;
mod port;

pub use burst::{Burst, BURST_MAX};
pub use eal::{logged, rdtsc, tsc_hz, Eal};
pub use error::{Error, LimitKind, Result, STALL_CAUSE};
pub use lcore::{launch, LcoreJob};
pub use mbuf::{Mbuf, MbufLayout, RxTimestamp, MBUF_F_EXTERNAL};
pub use mempool::{Mempool, PoolSizing};
pub use port::{
    available_ports, available_ports_with_driver, xstats_all, xstats_by_id, Configured, DescLimits, DeviceInfo, Link, Port, PortConfig,
    PortStats, Queue, Rx, RxQueue, Tx, TxDrain, TxQueue, XstatIds,
};

/// The build-time DPDK constants the rest of blastdrop sizes things with;
/// the FFI itself stays inside this crate.
pub mod consts {
    /// The CPU cache line DPDK was built for, in bytes (data rooms are
    /// rounded up to it).
    pub const CACHE_LINE_SIZE: u32 = dpdk_ffi::RTE_CACHE_LINE_SIZE;
    /// DPDK's default mbuf buffer: 2 KiB of data room plus the headroom.
    pub const MBUF_DEFAULT_BUF_SIZE: u32 = dpdk_ffi::RTE_MBUF_DEFAULT_BUF_SIZE;
    /// The most lcores an EAL of this build can have (lcore ids are below it).
    pub const MAX_LCORE: u32 = dpdk_ffi::RTE_MAX_LCORE;
}

/// The DPDK version this build was compiled against.
pub fn built_against() -> &'static str {
    dpdk_ffi::BUILT_AGAINST
}

/// The version string of the DPDK library loaded at run time.
pub fn runtime_version() -> String {
    // SAFETY: rte_version returns a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(dpdk_ffi::rte_version()) }.to_string_lossy().into_owned()
}

pub(crate) fn errno_message(code: i32) -> String {
    let code = code.abs();
    // SAFETY: rte_strerror returns a pointer to a static or thread-local string.
    unsafe { std::ffi::CStr::from_ptr(dpdk_ffi::rte_strerror(code)) }.to_string_lossy().into_owned()
}
