//! Finding ports: every port DPDK sees, and one by id, PCI address or name.

use std::ffi::{c_char, CStr, CString};

use dpdk_ffi as ffi;

/// A C string DPDK handed out, as a String ("" for NULL).
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string alive for the call.
pub(super) unsafe fn c_string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-NULL, and NUL-terminated by the caller's promise.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

pub(super) fn port_name(id: u16) -> String {
    let mut buf = [0 as c_char; ffi::RTE_ETH_NAME_MAX_LEN as usize];
    // SAFETY: buf holds RTE_ETH_NAME_MAX_LEN bytes, the most the call writes.
    let rc = unsafe { ffi::rte_eth_dev_get_name_by_port(id, buf.as_mut_ptr()) };
    if rc == 0 {
        // SAFETY: the call wrote a NUL-terminated name into buf.
        unsafe { c_string(buf.as_ptr()) }
    } else {
        String::new()
    }
}

/// Every port DPDK sees: (id, name).
pub fn available_ports() -> Vec<(u16, String)> {
    (0..ffi::RTE_MAX_ETHPORTS as u16)
        // SAFETY: takes any id; a plain check.
        .filter(|&id| unsafe { ffi::rte_eth_dev_is_valid_port(id) } == 1)
        .map(|id| (id, port_name(id)))
        .collect()
}

/// Every port DPDK sees, with its driver's name: (id, name, driver).
pub fn available_ports_with_driver() -> Vec<(u16, String, String)> {
    available_ports()
        .into_iter()
        .map(|(id, name)| {
            let mut raw = ffi::rte_eth_dev_info::default();
            // SAFETY: id is a valid port; raw is a plain struct the call fills.
            let rc = unsafe { ffi::rte_eth_dev_info_get(id, &mut raw) };
            // SAFETY: on success driver_name is the driver's static name (or NULL).
            let driver = if rc == 0 { unsafe { c_string(raw.driver_name) } } else { String::new() };
            (id, name, driver)
        })
        .collect()
}

fn lookup(name: &str) -> Option<u16> {
    let c = CString::new(name).ok()?;
    let mut id = 0u16;
    // SAFETY: c is NUL-terminated and outlives the call; id is ours to fill.
    (unsafe { ffi::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) } == 0).then_some(id)
}

/// Finds a port by id ("0"), PCI address ("0000:00:05.0" or "00:05.0") or
/// device name ("net_memif0").
pub(super) fn resolve(spec: &str) -> Option<u16> {
    if let Ok(id) = spec.parse::<u16>() {
        // SAFETY: takes any id; a plain check.
        return (unsafe { ffi::rte_eth_dev_is_valid_port(id) } == 1).then_some(id);
    }
    lookup(spec).or_else(|| lookup(&format!("0000:{spec}")))
}
