//! drop's record: the receiver's environment, its summary with the
//! receiver-side verdict, its series over time, and with --listen the
//! windows and sessions it served. drop writes it; `blast report` reads it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::environment::{ClockSync, Environment};
use crate::figures::{PerPacket, PortStats};
use crate::step::Rates;
use crate::window::{FrameSize, WindowFigures};
use seqtrack::SeqCounts;

/// drop --json record: receiver-side figures, the verdict, and with --listen
/// every window served (docs/json.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "DropRecord")]
pub struct DropBody {
    pub environment: Environment,
    pub summary: Summary,
    /// The run's figures per interval (--interval), as columns.
    pub series: series::Series,
    /// Where the received rate moved and held, allowance counters' onsets,
    /// and a credit bucket when the rate fell to a baseline and held it.
    pub series_analysis: series::Analysis,
    /// With --listen: the measured windows served (the last 1000), as sent
    /// to blast, and the sessions (the last 100); counts of what was not kept.
    #[serde(flatten)]
    pub history: History,
}

/// drop's whole record: drop writes it with its flags as given (`C` =
/// `AsGiven`), a reader reads the flags as JSON (the default).
pub type DropRecord<C = serde_json::Value> = crate::Record<crate::NoMode, crate::Config<C>, DropBody>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueSummary {
    pub queue: u16,
    /// Index of its port in --port order.
    pub port: u16,
    pub lcore: u32,
    pub received: Rates,
    /// The lane's busy time per frame; absent on the kernel's sockets, whose
    /// lanes wait inside recvmmsg (their CPU time is `summary.socket.udp.cpu`).
    #[serde(flatten)]
    pub busy: Option<PerPacket>,
    pub no_probe: u64,
    pub probe: SeqCounts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamSummary {
    pub id: u16,
    pub queue: u16,
    #[serde(flatten)]
    pub counts: SeqCounts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub side: String,
    pub interrupted: bool,
    /// Over the window from the first frame's burst to the last's.
    pub received: Rates,
    /// The lanes' busy time per frame; absent on the kernel's sockets (drop
    /// --socket), whose lanes wait inside recvmmsg: their CPUs' time, the
    /// kernel's included, is `socket.udp.cpu`.
    #[serde(flatten)]
    pub busy: Option<PerPacket>,
    /// Frames with no blastdrop probe header.
    pub no_probe: u64,
    /// Probe frames whose stream id was beyond --streams.
    pub untracked: u64,
    /// Summed over streams. `lost_estimate` counts gaps behind the newest frame of each stream: an estimate (a standalone drop has no sender counts; the exact loss is in a measured window's `trial`).
    pub probe: SeqCounts,
    /// Streams seen on more than one queue (their sequence accounting is split).
    pub split_streams: u32,
    /// The port's counters over the run; null on the kernel's sockets, which have no port (`socket`).
    pub port: Option<PortStats>,
    /// The device's counters went backwards before the end (memif resets
    /// them when its peer leaves): `port` holds the last read before that.
    pub port_counters_reset: bool,
    pub queues: Vec<QueueSummary>,
    pub streams: Vec<StreamSummary>,
    pub arrivals: Arrivals,
    /// Probe frames received by size, FCS included (not counted with
    /// --count-only), and those of sizes beyond what a lane counts apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<FrameSize>,
    #[serde(default, skip_serializing_if = "crate::window::is_zero")]
    pub sizes_other: u64,
    /// --reflect: frames the TX queues would not take back.
    pub reflect_drops: u64,
    /// --one-way: latency from the sender's stamp to arrival, by the two hosts' wall clocks
    /// (the arrival read where `clock` says).
    pub one_way: Option<OneWay>,
    /// With several --port: each port's share (its queues; its device counters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortSummary>,
    /// What held the received figure where it is, from what drop sees alone
    /// (its port's drop counters, allowances, watched counters, its lanes'
    /// busy time, the probes' sequence numbers): docs/limits.md.
    pub limit: String,
    pub verdict: limits::Verdict,
    /// Bursts that faulted because a memif peer left under them (caught).
    pub faults: u64,
    /// drop --socket: the kernel's counters over the run, where a port's are
    /// on a port (the verdict reads them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<SocketRun>,
}

/// drop on the kernel's UDP sockets over its whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SocketRun {
    /// The sockets, the namespace's UDP counters, the host's input backlog
    /// and the lanes' CPUs' time over the run (every CPU a lane ran on:
    /// a ladder may have changed the lanes).
    pub udp: crate::window::UdpWindow,
    /// The sockets' own drops (`/proc/net/udp`), over every set of lanes:
    /// buffers, under GRO, of up to 64 frames each.
    pub socket_drops: u64,
    /// Why a socket's drops could not be read, if one's could not (the
    /// count is then short, and the verdict unknown).
    pub unread_drops: Option<String>,
    /// The interface's own receive drops.
    pub interface_drops: u64,
    /// --reflect: datagrams sent back to their senders.
    pub reflected: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PortSummary {
    /// Index in --port order.
    pub port: u16,
    pub name: String,
    /// Frames its queues took, over its own first to last arrival.
    pub received: Rates,
    pub probe: SeqCounts,
    /// The device's own counters over the run (as read at the end).
    pub device: PortStats,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OneWay {
    /// Where each arrival was read: `host_poll` (this host's CLOCK_REALTIME at the poll, the RX
    /// ring's wait included), `nic_kernel` (the kernel's receive timestamp, CLOCK_REALTIME) or
    /// `nic_device` (the NIC's receive timestamp mapped onto CLOCK_REALTIME). The sender's stamp is
    /// its CLOCK_REALTIME: the figure depends on both hosts' clocks agreeing.
    pub clock: latency::LatencyClock,
    /// The same, in words.
    pub arrival: String,
    /// --arrival-clock auto took the host's clock: why not the NIC's.
    pub fallback: Option<String>,
    /// Probes not timed: no NIC timestamp on the frame, or one that came before the device
    /// clock's first calibration window closed (each lane's first 10 ms).
    pub untimed: u64,
    /// This host's kernel on its clock (adjtimex): synchronised or not, and its maximum error.
    pub sync: Option<ClockSync>,
    pub latency: latency::LatencySummary,
    /// Probes that arrived before they were sent, by the clocks: they disagree.
    pub negative: u64,
    pub histogram: Vec<latency::Bucket>,
}

/// How bursty the arrivals were (receiver-side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Arrivals {
    /// Polls by frames returned: "0", "1", "2-3", "4-7", ... "512".
    pub polls_by_frames: BTreeMap<String, u64>,
    /// Polls that came back with a full burst: frames were waiting beyond one poll.
    pub full_polls: u64,
    /// The most frames taken in one run of polls that each followed a full one.
    pub max_backlog_frames: u64,
    /// Arrivals per interval (null when off).
    pub interval_us: Option<u64>,
    pub peak_per_interval: Option<u64>,
    pub mean_per_interval: Option<f64>,
    pub peak_to_mean: Option<f64>,
}

/// What drop served, bounded: a client that loops windows forever cannot
/// grow drop's memory or its JSON without limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct History {
    /// The last MAX_WINDOWS windows served, of every session.
    pub windows: std::collections::VecDeque<WindowFigures>,
    /// Windows served in all, and those no longer kept above.
    pub windows_served: u64,
    pub windows_not_kept: u64,
    /// The last MAX_SESSIONS sessions, and those no longer kept.
    pub sessions: std::collections::VecDeque<SessionRecord>,
    pub sessions_not_kept: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionRecord {
    pub client: String,
    /// Seconds since the Unix epoch.
    pub started: u64,
    pub ended: Option<u64>,
    pub why_ended: Option<String>,
    pub windows: u64,
    pub incomplete_windows: u64,
}
