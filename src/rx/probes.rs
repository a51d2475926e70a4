//! Per burst, what the receive lane reads of each frame: its length, its
//! probe (stream, sequence number, send time) into the stream table and
//! the trial's account, and the sizes of the frames that carried one.

use dpdk::Burst;
use latency::LatencyHistogram;
use seqtrack::{block_of, BlockCounts, StreamTable, STREAM_BLOCKS};

use crate::clock::WallClock;
use crate::counters::{SizeCounts, Tally};

/// Where a lane reads arrivals for --one-way: this host's wall clock at
/// the poll, or each frame's NIC timestamp (the mbuf field, and the map
/// from the device's clock onto the wall clock, which the wall clock at
/// drained polls calibrates).
#[derive(Debug, Clone)]
pub struct OneWayClock {
    pub wall: WallClock,
    pub nic: Option<(dpdk::RxTimestamp, latency::NicTimeMap)>,
}

/// A lane's one-way timing as it runs.
pub(super) struct OneWay {
    pub(super) clock: OneWayClock,
    pub(super) hist: LatencyHistogram,
    /// Probes stamped later than they arrived (the clocks disagree).
    pub(super) negative: u64,
    /// Probes with no usable NIC timestamp.
    pub(super) untimed: u64,
    /// The lane's counters: each time also goes into their live buckets.
    pub(super) live: std::sync::Arc<crate::counters::LaneCounters>,
}

/// Counts the burst's bytes and records each frame's probe in the stream
/// table; --one-way also times each probe, against this host's clock at
/// the poll or against the frame's NIC timestamp. `full`: the poll took as
/// many frames as it asked for (more may wait: it did not drain the ring).
#[inline(always)]
pub(super) fn count_probes(
    bufs: &Burst,
    full: bool,
    table: &mut StreamTable,
    tally: &mut Tally,
    blocks: &mut [BlockCounts; STREAM_BLOCKS],
    sizes: &mut SizeCounts,
    one_way: &mut Option<OneWay>,
) {
    let Some(o) = one_way.as_mut() else {
        return parse_probes(bufs, table, tally, blocks, sizes, |_, _| {});
    };
    let now = o.clock.wall.ns(dpdk::rdtsc());
    let (hist, negative, live) = (&mut o.hist, &mut o.negative, &o.live.latency);
    let mut time = |arrived: u64, sent: u64| match arrived.checked_sub(sent) {
        Some(d) => {
            hist.record_ns(d);
            live.record(d);
        }
        None => *negative += 1,
    };
    match &mut o.clock.nic {
        None => parse_probes(bufs, table, tally, blocks, sizes, |p, _| time(now, p.tx_ns)),
        Some((field, map)) => {
            // A short poll drained the ring: its newest frame was stamped
            // at most one poll before `now` (the device clock's calibration).
            if !full {
                if let Some(newest) = bufs.rx_timestamp(bufs.len() - 1, field) {
                    map.drained_poll(newest, now);
                }
            }
            let untimed = &mut o.untimed;
            parse_probes(bufs, table, tally, blocks, sizes, |p, i| match bufs.rx_timestamp(i, field).and_then(|ts| map.host_ns(ts)) {
                Some(arrived) => time(arrived, p.tx_ns),
                None => *untimed += 1,
            });
        }
    }
}

/// Records each frame's probe in the stream table, then hands the probe
/// and the frame's place in the burst to `also` (one-way timing, or nothing: the closure is inlined, so no
/// branch per frame decides which).
#[inline(always)]
fn parse_probes(
    bufs: &Burst,
    table: &mut StreamTable,
    tally: &mut Tally,
    blocks: &mut [BlockCounts; STREAM_BLOCKS],
    sizes: &mut SizeCounts,
    mut also: impl FnMut(wire::Probe, usize),
) {
    // Sums in locals, added once per burst: the compiler keeps them in
    // registers, where fields of `tally` would be loaded and stored per frame.
    // Probe frames' bytes and longest length give their sizes (count_sizes).
    let (mut bytes, mut no_probe, mut probe_bytes, mut longest) = (0u64, 0u64, 0u64, 0u32);
    let mut i = 0usize;
    bufs.read_frames(|len, frame| {
        bytes += u64::from(len);
        i += 1;
        match wire::parse_probe_and_run(frame) {
            Some((p, run)) => {
                (probe_bytes, longest) = (probe_bytes + u64::from(len), longest.max(len));
                // The block's loss is the stream's change in the table's
                // (a wrapping sum: a late frame takes one back).
                let lost = table.totals.lost;
                table.record_frame(p.stream, p.seq, run, len + wire::FCS_LEN as u32);
                let b = &mut blocks[block_of(p.stream)];
                (b.received, b.lost) = (b.received + 1, b.lost.wrapping_add(table.totals.lost.wrapping_sub(lost)));
                also(p, i - 1);
            }
            None => no_probe += 1,
        }
    });
    let probes = bufs.len() as u64 - no_probe;
    if probes > 0 {
        count_sizes(bufs, sizes, probes, probe_bytes, longest);
    }
    (tally.bytes, tally.no_probe) = (tally.bytes + bytes, tally.no_probe + no_probe);
    let t = &table.totals;
    (tally.lost, tally.reordered, tally.duplicates, tally.late) = (t.lost, t.reordered, t.duplicates, t.late);
    tally.untracked = table.untracked;
}

/// Counts a burst's `probes` probe frames by size. None is longer than
/// `longest` and their lengths add up to `bytes`: when that is `probes`
/// times `longest`, every one is that long (the usual case: one multiply);
/// otherwise a second pass counts runs of one length.
#[inline(always)]
pub(super) fn count_sizes(bufs: &Burst, sizes: &mut SizeCounts, probes: u64, bytes: u64, longest: u32) {
    if u64::from(longest) * probes == bytes {
        sizes.add(longest + wire::FCS_LEN as u32, probes);
        return;
    }
    let (mut run_len, mut run) = (0u32, 0u64);
    bufs.read_frames(|len, frame| {
        if wire::parse_probe(frame).is_none() {
            return;
        }
        if len != run_len && run > 0 {
            sizes.add(run_len + wire::FCS_LEN as u32, run);
            run = 0;
        }
        (run_len, run) = (len, run + 1);
    });
    if run > 0 {
        sizes.add(run_len + wire::FCS_LEN as u32, run);
    }
}
