//! A port's counters: the basic stats, and the extended stats by id (one
//! call, on ENA one admin command) or as the whole list.

use std::ffi::CString;

use dpdk_ffi as ffi;

use super::{c_string, Port};
use crate::{Error, Result};

/// The port's basic counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct PortStats {
    pub ipackets: u64,
    pub opackets: u64,
    pub ibytes: u64,
    pub obytes: u64,
    pub imissed: u64,
    pub ierrors: u64,
    pub oerrors: u64,
    pub rx_nombuf: u64,
    /// Frames the kernel dropped because an af_packet port's RX ring was
    /// full (its sockets' PACKET_STATISTICS `tp_drops`), summed since the
    /// port opened; read here where the PMD does not fold them into
    /// `imissed` itself (DPDK before 25.03), else 0. Not in `imissed`.
    #[serde(default)]
    pub socket_drops: u64,
    /// Frames the kernel interface under an af_packet or AF_XDP port
    /// received and dropped (its rx_dropped, rx_missed_errors and
    /// rx_fifo_errors, which the PMDs do not pass on); 0 for other
    /// drivers. On AF_XDP over veth a frame for a full XDP socket is
    /// counted here and in `socket_drops` both.
    #[serde(default)]
    pub interface_drops: u64,
}

impl PortStats {
    /// Counter-by-counter sum (several ports' figures as one).
    pub fn add(&mut self, o: &PortStats) {
        self.ipackets += o.ipackets;
        self.opackets += o.opackets;
        self.ibytes += o.ibytes;
        self.obytes += o.obytes;
        self.imissed += o.imissed;
        self.ierrors += o.ierrors;
        self.oerrors += o.oerrors;
        self.rx_nombuf += o.rx_nombuf;
        self.socket_drops += o.socket_drops;
        self.interface_drops += o.interface_drops;
    }

    /// Several ports' figures summed.
    pub fn total<'a>(all: impl IntoIterator<Item = &'a PortStats>) -> PortStats {
        let mut t = PortStats::default();
        for p in all {
            t.add(p);
        }
        t
    }

    /// Counter-by-counter difference since `earlier`.
    pub fn since(&self, earlier: &PortStats) -> PortStats {
        PortStats {
            ipackets: self.ipackets.wrapping_sub(earlier.ipackets),
            opackets: self.opackets.wrapping_sub(earlier.opackets),
            ibytes: self.ibytes.wrapping_sub(earlier.ibytes),
            obytes: self.obytes.wrapping_sub(earlier.obytes),
            imissed: self.imissed.wrapping_sub(earlier.imissed),
            ierrors: self.ierrors.wrapping_sub(earlier.ierrors),
            oerrors: self.oerrors.wrapping_sub(earlier.oerrors),
            rx_nombuf: self.rx_nombuf.wrapping_sub(earlier.rx_nombuf),
            socket_drops: self.socket_drops.wrapping_sub(earlier.socket_drops),
            interface_drops: self.interface_drops.wrapping_sub(earlier.interface_drops),
        }
    }
}

/// Extended-stat ids resolved once by name, for cheap repeated reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XstatIds {
    pub names: Vec<String>,
    pub ids: Vec<u64>,
}

/// Reads extended stats by id in one call (on ENA: one admin command).
/// Takes a port id, so a polling thread needs no `Port` handle.
pub fn xstats_by_id(port: u16, ids: &[u64]) -> Result<Vec<u64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut values = vec![0u64; ids.len()];
    // SAFETY: both arrays hold ids.len() elements.
    let rc = unsafe { ffi::rte_eth_xstats_get_by_id(port, ids.as_ptr(), values.as_mut_ptr(), ids.len() as u32) };
    if rc < 0 || rc as usize != ids.len() {
        return Err(Error::call("rte_eth_xstats_get_by_id", rc.min(0)));
    }
    Ok(values)
}

/// Every extended stat of `port`, indexed by id: `rte_eth_xstats_get`,
/// for PMDs whose by-id read is wrong for some counters (limits::ReadPath).
pub fn xstats_all(port: u16) -> Result<Vec<u64>> {
    // SAFETY: a NULL array asks for the count.
    let n = unsafe { ffi::rte_eth_xstats_get(port, std::ptr::null_mut(), 0) };
    if n < 0 {
        return Err(Error::call("rte_eth_xstats_get", n));
    }
    let mut xs = vec![ffi::rte_eth_xstat::default(); n as usize + 8];
    // SAFETY: xs holds xs.len() entries.
    let got = unsafe { ffi::rte_eth_xstats_get(port, xs.as_mut_ptr(), xs.len() as u32) };
    if got < 0 || got as usize > xs.len() {
        return Err(Error::call("rte_eth_xstats_get", got.min(0)));
    }
    let mut values = vec![0u64; got as usize];
    for x in &xs[..got as usize] {
        if let Some(v) = values.get_mut(x.id as usize) {
            *v = x.value;
        }
    }
    Ok(values)
}

impl Port {
    pub fn stats(&self) -> Result<PortStats> {
        let id = self.id;
        let (rc, s) = self.guard("rte_eth_stats_get", move || {
            let mut s = ffi::rte_eth_stats::default();
            // SAFETY: a valid port this handle owns; s is a plain struct the call fills.
            let rc = unsafe { ffi::rte_eth_stats_get(id, &mut s) };
            (rc, s)
        })?;
        if rc != 0 {
            return Err(Error::call("rte_eth_stats_get", rc));
        }
        Ok(PortStats {
            ipackets: s.ipackets,
            opackets: s.opackets,
            ibytes: s.ibytes,
            obytes: s.obytes,
            imissed: s.imissed,
            ierrors: s.ierrors,
            oerrors: s.oerrors,
            rx_nombuf: s.rx_nombuf,
            socket_drops: self.socket_drops(),
            interface_drops: self.interface_drops(),
        })
    }

    /// Names of every extended stat, in id order (names can repeat).
    pub fn xstat_names(&self) -> Result<Vec<String>> {
        let id = self.id;
        self.guard("rte_eth_xstats_get_names", move || xstat_names_of(id))?
    }

    /// Resolves stat names to ids once; a name the device lacks is an error naming it.
    pub fn xstat_ids(&self, names: &[&str]) -> Result<XstatIds> {
        let (id, driver) = (self.id, self.info.driver.clone());
        let owned: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        self.guard("rte_eth_xstats_get_id_by_name", move || xstat_ids_of(id, &driver, owned))?
    }

    /// Reads the stats `ids` names, in one call to the device.
    pub fn xstats(&self, ids: &XstatIds) -> Result<Vec<u64>> {
        let (id, ids) = (self.id, ids.ids.clone());
        self.guard("rte_eth_xstats_get_by_id", move || xstats_by_id(id, &ids))?
    }
}

/// Names of every extended stat of port `id`, in id order.
fn xstat_names_of(id: u16) -> Result<Vec<String>> {
    // SAFETY: a NULL array asks for the count.
    let n = unsafe { ffi::rte_eth_xstats_get_names(id, std::ptr::null_mut(), 0) };
    if n < 0 {
        return Err(Error::call("rte_eth_xstats_get_names", n));
    }
    let mut names = vec![ffi::rte_eth_xstat_name::default(); n as usize];
    // SAFETY: names holds n entries, the most the call writes.
    let got = unsafe { ffi::rte_eth_xstats_get_names(id, names.as_mut_ptr(), n as u32) };
    if got < 0 {
        return Err(Error::call("rte_eth_xstats_get_names", got));
    }
    // SAFETY: each name is a NUL-terminated array the call filled (or zeros).
    Ok(names.iter().take(got as usize).map(|x| unsafe { c_string(x.name.as_ptr()) }).collect())
}

/// The ids of `names` on port `port` (driver `driver`, for the error).
fn xstat_ids_of(port: u16, driver: &str, names: Vec<String>) -> Result<XstatIds> {
    let mut ids = Vec::with_capacity(names.len());
    for name in &names {
        let c = CString::new(name.as_str()).map_err(|_| Error::Other("xstat name contains NUL".into()))?;
        let mut id = 0u64;
        // SAFETY: c is NUL-terminated and outlives the call; id is ours to fill.
        let rc = unsafe { ffi::rte_eth_xstats_get_id_by_name(port, c.as_ptr(), &mut id) };
        if rc != 0 {
            return Err(Error::Other(format!("port {port} ({driver}) has no extended stat {name:?}")));
        }
        ids.push(id);
    }
    Ok(XstatIds { names, ids })
}
