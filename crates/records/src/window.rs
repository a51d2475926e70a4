//! The figures drop counts over a measured window and the receiver's
//! description, as blast's records keep them. drop sends them over the
//! control channel (`control` re-exports them for its messages); here they
//! are data only, so that what reads a record needs no protocol.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The receiver as blast's record needs it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerInfo {
    pub hostname: String,
    pub dpdk: String,
    pub port_name: String,
    pub driver: String,
    pub max_rx_queues: u16,
    pub worker_lcores: u16,
    pub max_size: u32,
    pub rss: bool,
    pub cpu_model: String,
    /// Ports drop receives on (several --port); `port_name` names them all.
    #[serde(default = "one_port")]
    pub ports: u16,
    /// Whether drop sends every frame back (drop --reflect): blast's
    /// --reflect needs it, or no probe comes back to time.
    #[serde(default)]
    pub reflect: bool,
    /// drop --socket: the address and UDP port its sockets are bound to
    /// (blast's frames must go there); absent for a DPDK port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_socket: Option<std::net::SocketAddr>,
}

fn one_port() -> u16 {
    1
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueFigures {
    pub queue: u16,
    pub packets: u64,
    pub bytes: u64,
    /// Seconds of the window this queue's lcore spent on polls that
    /// brought frames and the work behind them.
    #[serde(default)]
    pub busy_seconds: f64,
}

/// What drop counted over one measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowFigures {
    pub window: u64,
    /// The window's length on drop's clock.
    pub seconds: f64,
    pub packets: u64,
    /// Frame bytes, FCS included.
    pub bytes: u64,
    pub queues: Vec<QueueFigures>,
    pub imissed: u64,
    pub rx_nombuf: u64,
    pub ierrors: u64,
    /// af_packet: frames the kernel dropped on drop's full RX rings (its
    /// sockets' PACKET_STATISTICS), where the PMD does not count them in
    /// `imissed` (DPDK before 25.03); 0 otherwise, and from an older drop.
    #[serde(default)]
    pub socket_drops: u64,
    /// af_packet and AF_XDP: frames the kernel interface under the port
    /// received and dropped (rx_dropped, rx_missed_errors, rx_fifo_errors:
    /// on veth frames over its MTU and frames for a full XDP socket, on a
    /// NIC frames without a buffer); 0 for other drivers and from an older
    /// drop. On AF_XDP over veth a frame for a full XDP socket is counted
    /// here and in `socket_drops` both.
    #[serde(default)]
    pub interface_drops: u64,
    /// A receiver on the kernel's UDP sockets (drop --socket): what its
    /// kernel counted beside the lanes. Its `socket_drops` are then the
    /// UDP sockets' own drops (`/proc/net/udp`): buffers, not frames, under GRO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<Box<UdpWindow>>,
    pub no_probe: u64,
    /// Per-stream sequence accounting over every probe that arrived in the
    /// window, the trial's and any other (its loss is the gap estimate).
    pub probe: seqtrack::SeqCounts,
    /// The exact account of the trial's own frames: the senders' streams
    /// between the window's edges (absent where drop could not count them:
    /// `trial_unavailable` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<seqtrack::TrialAccount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_unavailable: Option<String>,
    /// Frames that arrived in the window and are not the trial's (frames
    /// without a probe, such as the kernel's IPv6 neighbour discovery;
    /// warm-up or earlier frames still in flight; another sender's), with
    /// the trial's duplicates: `packets - trial.received`. Reported beside
    /// the trial's figures, never mixed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_frames: Option<u64>,
    /// With several ports, on each port's figures: the trial's own frames
    /// that arrived on it, and their bytes (its share of `trial.received`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_received: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_received_bytes: Option<u64>,
    /// Each sender's own account, in the order of the edges drop was
    /// given (a group's members); drop's side only, never on the wire.
    #[serde(skip)]
    pub trial_parts: Vec<seqtrack::TrialAccount>,
    /// Watched extended-stat deltas over the window, by name (allowance
    /// counters on ENA, and --watch-xstat names). The wire form of
    /// `limits::XstatsByKind` (with `levels`): drop flattens its counters
    /// by kind into it once (`to_wire`), blast groups them again once
    /// (`from_wire`, each name's kind from the limits crate).
    pub xstats: BTreeMap<String, u64>,
    /// Levels (not counters) read at the window's end, e.g. conntrack_allowance_available.
    #[serde(default)]
    pub levels: BTreeMap<String, u64>,
    /// Why the counter samples of this window are not to be believed, if they are not.
    #[serde(default)]
    pub xstats_invalid: Option<String>,
    /// rx_burst calls over the window, and how many returned nothing:
    /// a receiver that never came back empty was saturated.
    #[serde(default)]
    pub polls: u64,
    #[serde(default)]
    pub empty_polls: u64,
    /// drop's lanes' loops that stood still in the window (see LaneStalls),
    /// and the share of its host's CPU time the hypervisor took (steal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<LaneStalls>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_steal_pct: Option<f64>,
    /// The busiest queue's busy_seconds: as long as the sender's trial, the
    /// receiver was saturated.
    #[serde(default)]
    pub busy_seconds: f64,
    /// With several ports: each port's own figures (its queues, its
    /// counters), in drop's --port order; the fields above are their sums.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<WindowFigures>,
    /// The device these figures are for, when they are one port's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_name: Option<String>,
    /// Set when the window ended without its client (it vanished, or moved
    /// on with the window open): why. Its figures stop where it went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// A group trial's window: the group and what each member sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Box<GroupFigures>>,
    /// How the window's arrivals bunched up (absent with --count-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Box<WindowArrivals>>,
    /// Probe frames received by size, FCS included, smallest first (empty
    /// with --count-only), and those of sizes beyond what a lane counts apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<FrameSize>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sizes_other: u64,
    /// Arrivals and losses per block of stream ids (seqtrack::STREAM_BLOCK
    /// ids each), for a group's per-member figures; drop's side only,
    /// never on the wire.
    #[serde(skip)]
    pub stream_blocks: Vec<seqtrack::BlockCounts>,
}

/// A socket receiver's window (drop --socket): its sockets, and the growth
/// of its network namespace's UDP counters (`/proc/net/snmp`: every
/// socket's in the namespace, not only drop's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UdpWindow {
    /// The address the sockets are bound to (one per queue, SO_REUSEPORT).
    pub address: String,
    /// UDP GRO on: the kernel hands up (and drops) buffers of up to 64 datagrams.
    pub gro: bool,
    /// Each socket's receive buffer as the kernel granted it, in bytes
    /// (double what was asked: its own bookkeeping).
    pub rcvbuf_bytes: u64,
    /// Buffers the lanes took from the kernel, and those that held more
    /// than one datagram (GRO at work).
    pub buffers: u64,
    pub coalesced: u64,
    pub in_datagrams: u64,
    pub no_ports: u64,
    pub in_errors: u64,
    pub rcvbuf_errors: u64,
    pub in_csum_errors: u64,
    pub mem_errors: u64,
    /// The host's per-CPU input backlog over the window (`/proc/net/softnet_stat`,
    /// every namespace's): frames dropped at a full backlog, and times the
    /// receive softirq ran out of budget with work left.
    #[serde(default)]
    pub softnet_dropped: u64,
    #[serde(default)]
    pub softnet_time_squeeze: u64,
    /// The CPU time the receiving cost over the window, the kernel's included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<KernelCpu>,
}

/// A sender on the kernel's UDP sockets (blast --socket) over a window:
/// its sockets, the growth of its network namespace's UDP send counters
/// (`/proc/net/snmp`: every socket's in the namespace, not only blast's),
/// and the CPU time sending cost, the kernel's included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UdpSendWindow {
    /// Where the sockets send to (each connected, from its own source port).
    pub destination: String,
    /// Datagrams per UDP GSO buffer at most (1: no GSO).
    pub gso_segments: u64,
    /// Each socket's send buffer as the kernel granted it, in bytes.
    pub sndbuf_bytes: u64,
    /// The namespace's `OutDatagrams`: under GSO the kernel counts one per
    /// buffer it sends (up to `gso_segments` frames), not one per frame.
    pub out_datagrams: u64,
    /// Sends the kernel refused for want of buffer room (ENOBUFS); blast
    /// offers their frames again, with the same numbers: no frame is lost
    /// to them, the lanes only waited.
    pub sndbuf_errors: u64,
    /// The lanes' CPUs' time (user, system, softirq) over the window; its
    /// `ns_per_frame` is per frame sent. A paced lane waits for its next send
    /// by spinning, as a DPDK lane does: that time is in `user_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<KernelCpu>,
}

/// CPU time over a window (from `/proc/stat`, in its clock ticks): the
/// lanes' CPUs' user, system and softirq time (anything else on those
/// CPUs counts too), and the host's softirq time (receive processing runs
/// on the CPU that took a frame in: on a veth, the sender's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelCpu {
    pub cpus: Vec<usize>,
    pub user_seconds: f64,
    pub system_seconds: f64,
    pub softirq_seconds: f64,
    pub host_softirq_seconds: f64,
    /// The lanes' CPUs' user, system and softirq time per frame received
    /// (a sender's: sent), in nanoseconds (None when there was none, or no
    /// tick of /proc/stat's fell to the lanes' CPUs: [`KernelCpu::ns_per`]).
    pub ns_per_frame: Option<f64>,
}

impl KernelCpu {
    /// The lanes' CPUs' user, system and softirq time per frame, in
    /// nanoseconds: None when there was no frame, or when not one of
    /// /proc/stat's ticks (10 ms) fell to them: a light load between two
    /// reads can cost less than a tick and show none, which is no 0.
    pub fn ns_per(&self, frames: u64) -> Option<f64> {
        let spent = self.user_seconds + self.system_seconds + self.softirq_seconds;
        (frames > 0 && spent > 0.0).then(|| spent * 1e9 / frames as f64)
    }
}

impl UdpWindow {
    /// What the verdict reads of it.
    pub fn receiver(&self) -> limits::UdpReceiver {
        limits::UdpReceiver {
            gro: self.gro,
            rcvbuf_errors: self.rcvbuf_errors,
            no_ports: self.no_ports,
            in_csum_errors: self.in_csum_errors,
            mem_errors: self.mem_errors,
            backlog_drops: self.softnet_dropped,
        }
    }
}

/// Lanes' loops that stood still over a window (descheduled by the host, or
/// their CPU taken): how often, the longest, and in all. A lane stopped
/// for 1.5 s delays every frame it should have handled by up to that.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneStalls {
    pub count: u64,
    pub longest_ms: f64,
    pub total_ms: f64,
    /// The queue of the lane that stood still longest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_queue: Option<u16>,
}

impl LaneStalls {
    /// Adds one lane's: `ticks` of `hz` per second.
    pub fn add(&mut self, queue: u16, count: u64, total_ticks: u64, longest_ticks: u64, hz: u64) {
        let ms = |t: u64| t as f64 / hz.max(1) as f64 * 1e3;
        self.count += count;
        self.total_ms += ms(total_ticks);
        if longest_ticks > 0 && ms(longest_ticks) > self.longest_ms {
            (self.longest_ms, self.longest_queue) = (ms(longest_ticks), Some(queue));
        }
    }
}

/// For `skip_serializing_if`: a count of nothing.
pub fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Frames of one size (bytes, FCS included) that arrived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameSize {
    pub size: u32,
    pub frames: u64,
}

impl FrameSize {
    /// A count by size as a list, smallest size first.
    pub fn list(by_size: &BTreeMap<u32, u64>) -> Vec<FrameSize> {
        by_size.iter().map(|(&size, &frames)| FrameSize { size, frames }).collect()
    }
}

/// What each member of a group sent in a window (its own count, given at group_end).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupFigures {
    pub name: String,
    pub members: Vec<MemberFigures>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemberFigures {
    pub member: u16,
    /// The member's control address, as drop saw it.
    pub client: String,
    /// The member's stream ids: [stream_base, stream_base + stream_count).
    pub stream_base: u32,
    pub stream_count: u32,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// What drop counted of this member's streams in the window: its trial
    /// frames that arrived, and those lost: exact (`sent - received` from
    /// the member's sequence numbers) when `exact`, else frames of its
    /// streams and the gap estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u64>,
    #[serde(default)]
    pub exact: bool,
    /// The member's exact account (with `exact`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<seqtrack::TrialAccount>,
    /// What the member said of its own sending at group_end: its lanes'
    /// cycles per frame and its sender-side verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_packet: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_limit: Option<String>,
}

/// How the arrivals bunched up at the receiver over one window, for the
/// traffic of every sender at once (drop's lanes measure it; off with
/// --count-only). docs/methodology.md reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowArrivals {
    /// Polls that came back full (frames were waiting beyond one poll),
    /// and the most frames taken in one run of such polls on one queue.
    pub full_polls: u64,
    pub max_backlog_frames: u64,
    /// Arrivals counted per interval of this many microseconds on each
    /// queue (absent when drop's --arrival-interval-us is 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_us: Option<u64>,
    /// Intervals with traffic (and the empty ones between), summed over queues.
    #[serde(default)]
    pub intervals: u64,
    /// The most frames one queue took in one interval, and the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_per_interval: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_per_interval: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_to_mean: Option<f64>,
    /// The backlog the busiest interval's burst builds on its queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_burst: Option<QBurst>,
}

/// Q_burst = (lambda_peak - mu) x T_b for the queue whose estimate is the
/// largest (where no peak exceeds its mu, the queue nearest to): lambda_peak its busiest interval's arrivals per second, mu the
/// frames it served per second of busy time, T_b the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QBurst {
    pub queue: u16,
    pub lambda_peak_mpps: f64,
    pub mu_mpps: f64,
    pub t_b_us: f64,
    /// The estimate, in frames (0 when the peak does not exceed mu).
    pub frames: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_per_frame_is_unknown_without_a_tick_or_a_frame() {
        let cpu = KernelCpu { user_seconds: 0.02, system_seconds: 0.01, softirq_seconds: 0.01, ..Default::default() };
        assert_eq!(cpu.ns_per(20_000), Some(2_000.0));
        assert_eq!(cpu.ns_per(0), None);
        assert_eq!(KernelCpu::default().ns_per(20_000), None, "no tick fell to the lanes: unknown, not 0");
    }
}
