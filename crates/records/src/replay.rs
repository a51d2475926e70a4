//! blast's record of a capture replay: the capture as read and rewritten,
//! how closely its timing was kept, each queue's figures, and drop's window
//! with --peer. blast writes it; `blast report` reads it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::environment::Environment;
use crate::figures::PerPacket;
use crate::step::Rates;
use crate::window::{PeerInfo, WindowFigures};

/// The capture as read, and what was done to it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaptureRecord {
    pub file: String,
    pub format: String,
    pub frames: u64,
    /// Frames' bytes, FCS included.
    pub frame_bytes: u64,
    pub largest: u64,
    /// Both directions of a conversation count once.
    pub flows: u64,
    /// From the first frame's time to the last's.
    pub span_seconds: f64,
    /// Frames whose time is before the one ahead of them (sent at the earlier one's time).
    pub out_of_order: u64,
    pub memory_bytes: u64,
    pub kinds: BTreeMap<String, u64>,
    /// None with --pcap-keep-addresses.
    pub rewrite: Option<RewriteRecord>,
    /// The frames readied for a probe; None with --pcap-keep-payload (none stamped).
    pub probes: Option<ProbeRecord>,
}

/// The frames a probe is stamped into, readied once before the replay.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeRecord {
    /// Frames that carry a probe when sent (UDP over IPv4, no VLAN tag, no
    /// IP options, 18 B of payload or more): their IPv4 identification is the run id.
    pub frames: u64,
    /// UDP checksums set to 0 ("none", legal over IPv4) in those frames,
    /// because the probe changes the payload on every send; the rest were
    /// captured with none.
    pub udp_checksums_zeroed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RewriteRecord {
    pub macs: u64,
    /// IPv4 frames (behind VLAN tags too) whose addresses were rewritten.
    pub ipv4: u64,
    /// Of those, behind 802.1Q or QinQ tags.
    pub ipv4_tagged: u64,
    /// IPv6 frames whose addresses were rewritten (--pcap-src-ip6, --pcap-dst-ip6).
    pub ipv6: u64,
    pub l4_checksums_computed: u64,
    /// L4 checksums updated for the new addresses only (RFC 1624): first
    /// fragments of fragmented datagrams, datagrams captured truncated.
    pub l4_checksums_updated: u64,
    /// L4 checksums left as captured (their field not in the bytes captured): wrong for the new addresses.
    pub l4_checksums_left: u64,
    /// ICMP errors whose quoted IPv4 header got the addresses (receiver to
    /// this port), its checksums and the ICMP checksum following.
    pub icmp_quoted_headers: u64,
    /// Frames whose L3 (or part of it) was left as captured, by kind: ipv6
    /// (no --pcap-src-ip6/--pcap-dst-ip6), ipv6 extension headers, ipv6
    /// malformed, ipv6 icmp error quote, arp, other ethertype, ipv4
    /// malformed, ipv4 icmp error quote (the quoted header not whole).
    pub not_rewritten: BTreeMap<String, u64>,
}

/// How closely the replay kept the schedule.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimingRecord {
    pub timing: String,
    pub passes: u64,
    /// Frames whose time had come when the replay ended, and what was sent of them.
    pub due: u64,
    /// |gap as sent - gap asked for| between a queue's consecutive frames.
    pub gap_error: latency::LatencySummary,
    /// How late frames left after their time.
    pub lateness: latency::LatencySummary,
    /// Frames that left more than `LATE_US` after their time.
    pub late_frames: u64,
    /// At most `HELD_PCT` percent of the frames were late: the replay kept
    /// the capture's timing (else the verdict names the sender).
    pub held: bool,
}

/// A frame is late when it leaves more than this after its time.
pub const LATE_US: u64 = 50;
/// The timing was held when at most this share of frames was late.
pub const HELD_PCT: f64 = 1.0;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueRow {
    pub queue: u16,
    pub lcore: u32,
    pub sent: Rates,
    pub stamped: u64,
    pub unstamped: u64,
    #[serde(flatten)]
    pub busy: PerPacket,
    pub ring_full_retries: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub side: String,
    pub interrupted: bool,
    pub sent: Rates,
    /// Frames that carried a probe (drop counts them per stream) and that did not.
    pub stamped: u64,
    pub unstamped: u64,
    pub timing: TimingRecord,
    pub ring_full_retries: u64,
    pub alloc_failures: u64,
    pub unsent: u64,
    /// With --peer: what drop counted in the window (over the sender's
    /// trial, as a ladder step), the loss, and drop's whole figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<Rates>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<WindowFigures>,
    /// Both ends' counters with --peer, the sender's alone without.
    pub limit: String,
    pub verdict: limits::Verdict,
    pub queues: Vec<QueueRow>,
}

/// blast --json record of a capture replay (mode = replay): the capture, how
/// closely its timing was kept, and with --peer drop's window (docs/json.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BlastReplayRecord")]
pub struct ReplayBody {
    pub environment: Environment,
    /// drop's, with --peer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_environment: Option<PeerInfo>,
    pub capture: CaptureRecord,
    pub summary: Summary,
    /// The replay's sent figures per interval (--interval), and what was found in them.
    pub series: Option<series::Series>,
    pub series_analysis: Option<series::Analysis>,
}

/// A replay's whole record: blast writes it with its flags as given (`C` =
/// `AsGiven`), a reader reads the flags as JSON (the default).
pub type ReplayRecord<C = serde_json::Value> = crate::Record<crate::Mode, crate::Config<C>, ReplayBody>;
