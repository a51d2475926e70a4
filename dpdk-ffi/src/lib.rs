//! Raw DPDK bindings, generated at build time by bindgen from the DPDK that
//! pkg-config finds, plus the `bd_*` shim functions over DPDK's static
//! inline functions. Nothing here is safe; `crates/dpdk` wraps it.
//!
//! The DPDK LTS line is exposed as a cfg (`dpdk_22_11`, `dpdk_23_11`,
//! `dpdk_24_11`) and as `DEP_DPDK_LINE` to crates that depend on this one.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code)]
#![allow(clippy::all)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

/// The DPDK version blastdrop was built against, from pkg-config.
pub const BUILT_AGAINST: &str = env!("DPDK_PKG_VERSION");
