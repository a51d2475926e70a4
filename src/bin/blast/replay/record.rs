//! A replay's JSON record: the capture as read and rewritten, how closely
//! its timing was kept, each queue's figures, and drop's window with --peer.

use capture::{Capture, ProbeStats, RewriteStats};

use crate::settings::AsGiven;

pub use records::replay::{CaptureRecord, ProbeRecord, QueueRow, ReplayBody, RewriteRecord, Summary, TimingRecord, HELD_PCT, LATE_US};

pub fn capture_record(file: &std::path::Path, c: &Capture, rewrite: Option<RewriteStats>, probes: Option<ProbeStats>) -> CaptureRecord {
    CaptureRecord {
        file: file.display().to_string(),
        format: c.format.as_str().to_owned(),
        frames: c.len() as u64,
        frame_bytes: c.frame_bytes(),
        largest: c.largest() as u64,
        flows: c.flows() as u64,
        span_seconds: c.span_ns() as f64 / 1e9,
        out_of_order: c.out_of_order() as u64,
        memory_bytes: c.memory(),
        kinds: c.kinds().into_iter().map(|(k, n)| (k.as_str().to_owned(), n)).collect(),
        rewrite: rewrite.map(|r| RewriteRecord {
            macs: r.l2,
            ipv4: r.l3,
            ipv4_tagged: r.l3_tagged,
            ipv6: r.l3_ipv6,
            l4_checksums_computed: r.l4,
            l4_checksums_updated: r.l4_incremental,
            l4_checksums_left: r.l4_left,
            icmp_quoted_headers: r.icmp_quoted,
            not_rewritten: r.kept.into_iter().map(|(k, n)| (k.to_owned(), n)).collect(),
        }),
        probes: probes.map(|p| ProbeRecord { frames: p.frames, udp_checksums_zeroed: p.udp_checksums_zeroed }),
    }
}

/// The record: the header every record begins with, then the replay's own.
pub type Record<'a> = records::replay::ReplayRecord<&'a AsGiven<'a>>;

/// The JSON schema of a replay's record.
pub fn schema() -> schemars::Schema {
    records::schema_of::<Record<'static>>()
}
