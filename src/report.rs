//! Figures and their labels: rates from counts, the environment record,
//! and the text of live lines. Every rate says which end measured it.

use crate::fail::Failure;
use serde::Serialize;

pub use ladder::Rates;

/// A lane's busy time per packet, in the core's cycles and in nanoseconds
/// (0 when nothing moved). Serialised flat into the record that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerPacket {
    /// Busy core cycles per packet; null when the core's clock is unknown
    /// (environment.clock says how the lanes' counter ticks became cycles).
    pub cycles_per_packet: Option<f64>,
    /// Busy nanoseconds per packet.
    pub ns_per_packet: f64,
}

impl PerPacket {
    /// Per packet for a lane busy `ticks` of the lanes' counter over `packets`.
    pub fn of(ticks: u64, packets: u64) -> PerPacket {
        PerPacket::with(crate::clock::core(), ticks, packets)
    }

    pub fn with(clock: &topology::CoreClock, ticks: u64, packets: u64) -> PerPacket {
        PerPacket { cycles_per_packet: clock.cycles_per_packet(ticks, packets), ns_per_packet: clock.ns_per_packet(ticks, packets) }
    }
}

/// "41.5 cycles/pkt", or "cycles/pkt unknown (16.2 ns/pkt)" where the core's clock is not known.
impl std::fmt::Display for PerPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cycles_per_packet {
            Some(c) => write!(f, "{c:.1} cycles/pkt"),
            None => write!(f, "cycles/pkt unknown ({:.1} ns/pkt)", self.ns_per_packet),
        }
    }
}

/// Which queue ran on which lcore and CPU.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LcoreRecord {
    pub queue: u16,
    /// Index of the queue's port in --port order.
    pub port: u16,
    pub lcore: u32,
    /// The one CPU the lcore is pinned to, or null when its set has several
    /// (or none could be read).
    pub cpu: Option<u32>,
    /// Every CPU the lcore's thread may run on (its EAL cpuset).
    pub cpus: Vec<u32>,
    pub socket: u32,
}

/// The port as opened and configured.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PortRecord {
    pub id: u16,
    pub name: String,
    pub driver: String,
    pub socket: i32,
    pub mac: String,
    pub max_rx_queues: u16,
    pub max_tx_queues: u16,
    pub max_frame: u32,
    pub mtu: u32,
    pub rss: bool,
    pub tx_offloads: Vec<&'static str>,
    pub promiscuous: bool,
    pub link_up: bool,
    pub link_speed_mbps: u32,
    /// net_ena only: what its TX path runs with (LLQ, write-combining).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ena: Option<EnaTxState>,
}

impl PortRecord {
    /// The record of an opened port: its device info and configuration as
    /// they are now; its MAC, `promiscuous` and `link` as the caller read them.
    pub fn of(port: &dpdk::Port, mac: wire::MacAddr, promiscuous: bool, link: dpdk::Link, ena: Option<EnaTxState>) -> PortRecord {
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
            tx_offloads: configured.tx_offloads.clone(),
            promiscuous,
            link_up: link.up,
            link_speed_mbps: link.speed_mbps,
            ena,
        }
    }
}

/// ENA's TX path as it really runs: LLQ (from the PMD's log at probe) and
/// whether the LLQ memory BAR is mapped write-combining (from the kernel's
/// PAT list, x86 only).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EnaTxState {
    /// None when the log did not say (its level below info for pmd.net.ena.driver).
    pub llq: Option<limits::ena_state::Llq>,
    /// "on", "off", or "unknown (why)".
    pub write_combining: String,
}

impl EnaTxState {
    /// For `port` when it is an ENA port (its name is its PCI address).
    /// Read once, when the port is opened: the PMD logged it at probe.
    pub fn read(port: &dpdk::Port) -> Option<EnaTxState> {
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

    pub fn describe(&self) -> String {
        format!("{}, write-combining {}", self.llq.as_ref().map_or("LLQ state not logged".into(), |l| l.describe()), self.write_combining)
    }
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

/// Mempool memory, derived and bounded (see docs/memory.md for the formula).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MempoolRecord {
    pub pools: u32,
    pub mbufs_per_pool: u32,
    pub data_room: u32,
    pub bytes_per_mbuf: u64,
    pub bytes_total: u64,
}

impl MempoolRecord {
    pub fn new(pools: u32, sizing: &dpdk::PoolSizing) -> MempoolRecord {
        let mbuf = u32::from(dpdk::MbufLayout::get().mbuf_size);
        MempoolRecord {
            pools,
            mbufs_per_pool: sizing.mbufs(),
            data_room: sizing.data_room,
            bytes_per_mbuf: sizing.bytes_per_mbuf(mbuf),
            bytes_total: u64::from(pools) * sizing.bytes(mbuf),
        }
    }

    pub fn describe(&self, what: &str) -> String {
        format!(
            "{what}: {} pool(s) x {} mbufs x {} B = {:.1} MiB",
            self.pools,
            self.mbufs_per_pool,
            self.bytes_per_mbuf,
            self.bytes_total as f64 / f64::from(1 << 20)
        )
    }
}

/// Where and on what a run happened.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Environment {
    pub hostname: String,
    pub cpu_model: String,
    /// The machine as the platform names it, read from DMI: on EC2 Nitro
    /// the instance type ("c8gn.12xlarge"); on EC2 also what the instance
    /// metadata service says (`ec2`).
    pub machine: Machine,
    pub dpdk_runtime: String,
    pub dpdk_built_against: String,
    /// Ticks per second of the lanes' counter (the same as clock.timer_hz).
    pub tsc_hz: u64,
    /// The lanes' counter and the core clock its ticks became the cycles figures with.
    pub clock: topology::CoreClock,
    pub hugepages: bool,
    pub eal_args: Vec<String>,
    /// Where blastdrop placed the lcores from the machine's topology (null when -l/--lcores was given).
    pub placement: Option<topology::Placement>,
    /// The first port (the only one, usually).
    pub port: PortRecord,
    /// With several --port: every port, in that order (the first is `port`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortRecord>,
    pub lcores: Vec<LcoreRecord>,
    /// What the lanes' CPU sets say, whoever placed them: workers that may
    /// run on one CPU (`topology::shared_cpu_warning`). Empty when none do.
    pub lcore_warnings: Vec<String>,
    pub mempools: Vec<MempoolRecord>,
}

/// What the machine says about itself.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Machine {
    /// DMI sys_vendor ("Amazon EC2" on Nitro).
    pub vendor: Option<String>,
    /// DMI product_name: the instance type on EC2 Nitro.
    pub product: Option<String>,
    pub kernel: Option<String>,
    /// The kernel's ena driver version, when the module is loaded (the data
    /// interface itself is then DPDK's, not the kernel's).
    pub ena_module_version: Option<String>,
    /// The placement group, when the set-up recorded it (deploy/'s template
    /// writes /etc/blastdrop/placement-group; no metadata call).
    pub placement_group: Option<String>,
    /// The instance type, availability zone and AMI from the instance
    /// metadata service (IMDSv2), asked once per process and only when
    /// `vendor` is "Amazon EC2"; null elsewhere, where nothing is asked.
    pub ec2: Option<crate::ec2_metadata::Ec2Metadata>,
}

impl Machine {
    /// DMI and the kernel's files only: `ec2` stays null (see
    /// `with_ec2_metadata`), so that describing the machine costs no request.
    pub fn read() -> Machine {
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

    /// With `ec2` from the instance metadata service when DMI says EC2.
    pub fn with_ec2_metadata(self) -> Machine {
        let ec2 = crate::ec2_metadata::of_this_machine(self.vendor.as_deref());
        Machine { ec2, ..self }
    }

    /// "c8gn.12xlarge (Amazon EC2)", or the kernel when DMI says nothing.
    pub fn describe(&self) -> String {
        let what = match (&self.product, &self.vendor) {
            (Some(p), Some(v)) => format!("{p} ({v})"),
            (Some(p), None) => p.clone(),
            _ => format!("kernel {}", self.kernel.as_deref().unwrap_or("?")),
        };
        match &self.placement_group {
            Some(g) => format!("{what}, placement group {g}"),
            None => what,
        }
    }
}

pub fn hostname() -> String {
    nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_default()
}

pub fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    for key in ["model name", "Model", "CPU part"] {
        if let Some(line) = info.lines().find(|l| l.starts_with(key)) {
            if let Some((_, v)) = line.split_once(':') {
                return v.trim().to_owned();
            }
        }
    }
    String::from("unknown")
}

/// "12.345" with a fixed width, for aligned live lines.
/// The receiver's arrival view in one line.
pub fn arrivals_text(a: &control::WindowArrivals) -> String {
    let mut s = format!("{} full polls, backlog up to {} frames", a.full_polls, a.max_backlog_frames);
    if let (Some(us), Some(peak), Some(mean), Some(ratio)) = (a.interval_us, a.peak_per_interval, a.mean_per_interval, a.peak_to_mean) {
        s += &format!("; per {us} us on a queue: peak {peak}, mean {mean:.1}, peak-to-mean {ratio:.2}");
    }
    if let Some(q) = &a.q_burst {
        s += &format!(
            "; Q_burst = ({:.3} - {:.3} Mpps) x {:.0} us = {:.0} frames (queue {})",
            q.lambda_peak_mpps, q.mu_mpps, q.t_b_us, q.frames, q.queue
        );
    }
    s
}

pub fn mpps(v: f64) -> String {
    format!("{v:7.3}")
}

/// Writes `value` as pretty JSON to `path`.
/// `-` writes it to stdout (where nothing else goes then: crate::out).
pub fn write_json<T: Serialize>(path: &std::path::Path, value: &T) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Failure::runtime(format!("cannot encode the JSON record: {e}")))?;
    if crate::out::is_stdout(path) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        return out
            .write_all((text + "\n").as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| Failure::runtime(format!("cannot write --json to stdout: {e}")));
    }
    std::fs::write(path, text + "\n").map_err(|e| Failure::runtime(format!("cannot write --json {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_packet_of_nothing_is_zero_and_unknown_cycles_say_so() {
        let tsc = topology::CoreClock::detect(2_000_000_000, topology::TimerKind::Tsc, "/nonexistent".as_ref(), "/nonexistent".as_ref(), 0);
        assert_eq!(PerPacket::with(&tsc, 100, 0), PerPacket { cycles_per_packet: Some(0.0), ns_per_packet: 0.0 });
        let p = PerPacket::with(&tsc, 100, 4);
        assert_eq!(p, PerPacket { cycles_per_packet: Some(25.0), ns_per_packet: 12.5 });
        assert_eq!(p.to_string(), "25.0 cycles/pkt");
        let timer = topology::CoreClock::detect(
            1_000_000_000,
            topology::TimerKind::ArmGenericTimer,
            "/nonexistent".as_ref(),
            "/nonexistent".as_ref(),
            0,
        );
        let p = PerPacket::with(&timer, 100, 4);
        assert_eq!(p.cycles_per_packet, None);
        assert_eq!(p.to_string(), "cycles/pkt unknown (25.0 ns/pkt)");
        let json = serde_json::to_value(p).unwrap();
        assert!(json["cycles_per_packet"].is_null() && json["ns_per_packet"] == 25.0, "{json}");
    }
}
