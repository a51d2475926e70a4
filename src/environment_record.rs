//! The environment record's types (`records::environment`: where and on
//! what a run happened) and what fills them from the EAL: a port as opened,
//! ENA's TX path, the mempools' sizes, the machine's DMI. `crate::environment`
//! builds one.

pub use records::environment::{EnaTxState, Environment, LcoreRecord, Machine, MempoolRecord, PortRecord};

/// The record of an opened port: its device info and configuration as they
/// are now; its MAC, `promiscuous` and `link` as the caller read them.
pub fn port_record(port: &dpdk::Port, mac: wire::MacAddr, promiscuous: bool, link: dpdk::Link, ena: Option<EnaTxState>) -> PortRecord {
    let info = port.info();
    let configured = port.configured().cloned().unwrap_or_default();
    PortRecord {
        id: port.id(),
        name: info.name.clone(),
        driver: info.driver.clone(),
        socket: info.socket,
        mac: mac.to_string(),
        max_rx_queues: info.max_rx_queues,
        max_tx_queues: info.max_tx_queues,
        max_frame: info.max_frame(),
        mtu: configured.mtu,
        rss: configured.rss,
        tx_offloads: configured.tx_offloads.iter().map(|o| o.to_string()).collect(),
        promiscuous,
        link_up: link.up,
        link_speed_mbps: link.speed_mbps,
        ena,
        xdp: None,
        counters_from: None,
    }
}

/// ENA's TX path for `port` when it is an ENA port (its name is its PCI
/// address). Read once, when the port is opened: the PMD logged it at probe.
pub fn ena_tx_state(port: &dpdk::Port) -> Option<EnaTxState> {
    let (id, name) = (port.id(), port.info().name.as_str());
    if port.info().driver != "net_ena" {
        return None;
    }
    // The PMD logs one placement line per ENA port it probes, in the
    // order of their port ids.
    let order = dpdk::available_ports_with_driver().iter().filter(|(pid, _, d)| d == "net_ena" && *pid < id).count();
    let llq = limits::ena_state::llq_from_log(&dpdk::logged()).into_iter().nth(order);
    Some(EnaTxState { llq, write_combining: write_combining(name) })
}

fn write_combining(pci: &str) -> String {
    let res = format!("/sys/bus/pci/devices/{pci}/resource");
    let Some(bar) = std::fs::read_to_string(&res).ok().and_then(|r| limits::ena_state::bar_start(&r, limits::ena_state::ENA_LLQ_BAR))
    else {
        return format!("unknown (no LLQ BAR in {res})");
    };
    match std::fs::read_to_string("/sys/kernel/debug/x86/pat_memtype_list") {
        Ok(pat) if limits::ena_state::write_combining_at(&pat, bar) => "on".into(),
        Ok(_) => "off".into(),
        Err(_) if cfg!(target_arch = "x86_64") => "unknown (mount debugfs as root to read x86/pat_memtype_list)".into(),
        Err(_) => "unknown (no PAT list on this architecture: the LLQ state and the rate tell)".into(),
    }
}

/// `pools` mempools of `sizing`: their memory, derived and bounded (docs/memory.md).
pub fn mempool_record(pools: u32, sizing: &dpdk::PoolSizing) -> MempoolRecord {
    let mbuf = u32::from(dpdk::MbufLayout::get().mbuf_size);
    MempoolRecord {
        pools,
        mbufs_per_pool: sizing.mbufs(),
        data_room: sizing.data_room,
        bytes_per_mbuf: sizing.bytes_per_mbuf(mbuf),
        bytes_total: u64::from(pools) * sizing.bytes(mbuf),
    }
}

/// The machine from DMI and the kernel's files only: `ec2` stays null (see
/// `with_ec2_metadata`), so that describing the machine costs no request.
pub fn machine() -> Machine {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    Machine {
        ec2: None,
        vendor: read("/sys/devices/virtual/dmi/id/sys_vendor"),
        product: read("/sys/devices/virtual/dmi/id/product_name"),
        kernel: read("/proc/sys/kernel/osrelease"),
        ena_module_version: read("/sys/module/ena/version"),
        placement_group: read("/etc/blastdrop/placement-group"),
    }
}

/// `m` with `ec2` from the instance metadata service when DMI says EC2.
pub fn with_ec2_metadata(m: Machine) -> Machine {
    let ec2 = crate::ec2_metadata::of_this_machine(m.vendor.as_deref());
    Machine { ec2, ..m }
}
