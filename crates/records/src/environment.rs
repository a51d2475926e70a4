//! The environment a record keeps: where and on what a run happened (the
//! machine, the ports as opened, each queue's lcore and CPU, the mempools),
//! and with drop as the peer, both ends'. The tools fill these from the EAL
//! (blastdrop's `environment`); `blast report` reads them back.

use serde::{Deserialize, Serialize};

use crate::window::PeerInfo;

/// Which queue ran on which lcore and CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    pub tx_offloads: Vec<String>,
    pub promiscuous: bool,
    pub link_up: bool,
    pub link_speed_mbps: u32,
    /// net_ena only: what its TX path runs with (LLQ, write-combining).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ena: Option<EnaTxState>,
    /// net_af_xdp only: the XDP path as the kernel runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdp: Option<XdpState>,
    /// Where the NIC counters a verdict reads come from when not from the
    /// port's own extended stats: on net_af_xdp and net_af_packet, the
    /// kernel driver's statistics of the interface under the port ("the
    /// kernel driver ena's statistics of ens5"), read as `ethtool -S` reads
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_from: Option<String>,
}

/// An AF_XDP port's path as the kernel runs it, read from the kernel once
/// the port started (the PMD says neither).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct XdpState {
    /// The kernel interface (the vdev's iface= argument), or None when the
    /// EAL arguments do not name it.
    pub interface: Option<String>,
    /// How the XDP program is attached to it: "native", "generic" (the
    /// kernel's skb path: every frame copied), "offload", "several" (more
    /// than one program), "none", or "unknown (why)" (rtnetlink).
    pub attach: String,
    /// This process's AF_XDP sockets and how many run zero-copy
    /// (getsockopt XDP_OPTIONS).
    pub sockets: u32,
    pub zero_copy_sockets: u32,
    /// "zero-copy", "copy (forced: force_copy=1)", "copy (the kernel fell
    /// back: the driver offers no AF_XDP zero-copy)", "mixed (n of m
    /// zero-copy)", or "unknown (why)".
    pub copy_mode: String,
    /// Which XDP program hands frames to the sockets: DPDK's default (every
    /// frame on a served queue, whatever it is) or the one the vdev's
    /// `xdp_prog=` names (blastdrop's UDP port filter for a shared
    /// interface: deploy/xdp/udp-ports.c); absent from older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

impl XdpState {
    pub fn describe(&self) -> String {
        let program = self.program.as_deref().map(|p| format!("; program: {p}")).unwrap_or_default();
        format!(
            "XDP on {}: attached {}, {}{program}",
            self.interface.as_deref().unwrap_or("(interface not named)"),
            self.attach,
            self.copy_mode
        )
    }
}

/// ENA's TX path as it really runs: LLQ (from the PMD's log at probe) and
/// whether the LLQ memory BAR is mapped write-combining (from the kernel's
/// PAT list, x86 only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EnaTxState {
    /// None when the log did not say (its level below info for pmd.net.ena.driver).
    pub llq: Option<limits::ena_state::Llq>,
    /// "on", "off", or "unknown (why)".
    pub write_combining: String,
}

impl EnaTxState {
    pub fn describe(&self) -> String {
        format!("{}, write-combining {}", self.llq.as_ref().map_or("LLQ state not logged".into(), |l| l.describe()), self.write_combining)
    }
}

/// Mempool memory, derived and bounded (see docs/memory.md for the formula).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MempoolRecord {
    pub pools: u32,
    pub mbufs_per_pool: u32,
    pub data_room: u32,
    pub bytes_per_mbuf: u64,
    pub bytes_total: u64,
}

impl MempoolRecord {
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortRecord>,
    pub lcores: Vec<LcoreRecord>,
    /// What the lanes' CPU sets say, whoever placed them: workers that may
    /// run on one CPU (`topology::shared_cpu_warning`). Empty when none do.
    pub lcore_warnings: Vec<String>,
    pub mempools: Vec<MempoolRecord>,
}

/// What the machine says about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    pub ec2: Option<Ec2Metadata>,
}

impl Machine {
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

/// What the instance metadata service said about this instance.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ec2Metadata {
    /// e.g. "c8gn.12xlarge"; null when the service did not say (see `error`).
    pub instance_type: Option<String>,
    /// e.g. "us-east-1a"; null when the service did not say.
    pub availability_zone: Option<String>,
    /// e.g. "ami-0123456789abcdef0"; null when the service did not say.
    pub ami_id: Option<String>,
    /// Why a value is null: the token refused, no answer within the time
    /// allowed, a status other than 200, or an answer that is not a short
    /// printable value. Null when all three were read.
    pub error: Option<String>,
}

/// What the kernel says about the wall clock's synchronisation (adjtimex).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClockSync {
    /// False when the kernel reports the clock unsynchronised (STA_UNSYNC).
    pub synchronized: bool,
    /// The kernel's estimate of the clock's maximum error, in microseconds.
    pub max_error_us: i64,
}

/// Both ends' environments, for a record of runs against drop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Environments {
    pub sender: Environment,
    pub receiver: Option<PeerInfo>,
}
