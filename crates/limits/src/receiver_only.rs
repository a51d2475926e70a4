//! The verdict a receiver can give alone (drop without blast --peer): what
//! its own counters, its lanes' busy time and the probes' sequence numbers
//! say about why the figure it received is what it is. Without the
//! sender's counters, loss it cannot explain is placed before its port.

use serde::{Deserialize, Serialize};

use crate::by_kind::XstatsByKind;
use crate::verdict::{Limit, LimitKind, Side, Verdict, SATURATED_BUSY_PCT};

/// A receiver's counters over a run or an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReceiverCounters {
    /// Frames the lanes took.
    pub received: u64,
    pub imissed: u64,
    pub rx_nombuf: u64,
    pub ierrors: u64,
    /// af_packet: frames the kernel dropped on the full RX rings of the
    /// port's sockets (PACKET_STATISTICS), not in `imissed`.
    #[serde(default)]
    pub socket_drops: u64,
    /// af_packet and AF_XDP: frames the kernel interface under the port
    /// received and dropped (rx_dropped, rx_missed_errors, rx_fifo_errors).
    #[serde(default)]
    pub interface_drops: u64,
    /// The port's watched extended stats by kind: allowance deltas (ENA),
    /// --watch-xstat deltas, and levels (not read by the verdict).
    pub xstats: XstatsByKind,
    /// Gaps in the probes' sequence numbers (frames that never arrived).
    pub probe_lost: u64,
    /// Whether probes were read at all (not with --count-only).
    pub probes_read: bool,
    /// The busiest lane's busy time over the time frames were arriving, percent.
    pub busy_pct: Option<f64>,
    /// Why a counter sample is not to be believed, if it is not.
    pub invalid: Option<String>,
    /// The most stood-still lane's time stood still (descheduled by the
    /// host: its loop's clock reads more than a millisecond apart) over
    /// the time frames were arriving, percent (None: not measured).
    #[serde(default)]
    pub stalled_pct: Option<f64>,
}

/// A lane that stood still this share of the time frames arrived was held
/// back by its host: what it could take is not what it took.
pub const HOST_STALLED_PCT: f64 = 5.0;

/// The receiver-side verdict: the limit with the most frames first.
pub fn receiver_verdict(c: &ReceiverCounters) -> Verdict {
    if let Some(why) = &c.invalid {
        return Verdict { limits: Vec::new(), invalid: Some(format!("invalid counter sample: {why}")) };
    }
    let mut limits = allowance_limits(c);
    limits.extend(port_drops(c));
    limits.extend(watched_limits(c));
    let saturated = c.busy_pct.filter(|&b| b >= SATURATED_BUSY_PCT);
    let explained = drops_of(c).frames() + c.ierrors;
    if c.probe_lost > explained {
        limits.push(missing_probes(c.probe_lost - explained, saturated));
    } else if let Some(busy) = saturated.filter(|_| limits.is_empty()) {
        limits.push(Limit {
            kind: LimitKind::Receiver,
            side: Side::Receiver,
            counters: vec!["busy_cycles".into()],
            delta: 0,
            frames: 0,
            evidence: format!(
                "the busiest lane was busy {busy:.1}% of the time frames arrived: the receiver was saturated (no frame lost: the device held them back, as memif pushes back on its sender)"
            ),
        });
    }
    if limits.is_empty() {
        if let Some(why) = held_by_host(c) {
            // Not "none": the sender may have been held back by the same host.
            return Verdict { limits, invalid: Some(why) };
        }
        limits.push(nothing_held_back(c));
    }
    limits.sort_by_key(|l| std::cmp::Reverse(l.frames));
    Verdict { limits, invalid: None }
}

/// Why no limit can be told, where no counter moved and no lane was
/// saturated but a lane stood still (descheduled) a share of the time
/// frames arrived: it waited for frames between its turns, and the
/// sender, on the same host or one like it, may have sent less while it
/// stood still. A lane's busy time can include time it stood still (a
/// stall inside a run of busy polls), so the two shares are not added up
/// to call it saturated.
fn held_by_host(c: &ReceiverCounters) -> Option<String> {
    let stalled = c.stalled_pct.filter(|&s| s >= HOST_STALLED_PCT)?;
    let busy = c.busy_pct.map_or(String::new(), |b| format!(" (busy {b:.1}%, stand-stills inside busy runs included)"));
    Some(format!(
        "the host held the receiver back: a lane stood still (descheduled) {stalled:.1}% of the time frames arrived{busy}; \
         the sender may have been held back too, so no limit can be told from the receiver alone"
    ))
}

/// Every ENA allowance counter of the receiver's port that moved.
fn allowance_limits(c: &ReceiverCounters) -> Vec<Limit> {
    let mut limits = Vec::new();
    for (name, &delta) in c.xstats.allowances.iter().filter(|(_, &d)| d > 0) {
        if let Some(kind) = LimitKind::of_allowance(name) {
            limits.push(Limit {
                kind,
                side: Side::Receiver,
                counters: vec![name.clone()],
                delta,
                frames: delta,
                evidence: format!("{name} +{delta} on the receiver: the platform's shaper queued or dropped {delta} packets"),
            });
        }
    }
    limits
}

/// Frames the port counted as missed (imissed) or without a buffer
/// (rx_nombuf), or its kernel dropped (socket_drops, interface_drops).
/// Not capped at the probes' loss as the two-ended verdict caps a kernel
/// interface's drops at the frames lost: here the loss is the sequence
/// gaps', which miss a stream's lost tail (14432 gaps against 14496
/// frames both the XDP socket and veth counted, once), so it is no bound.
fn port_drops(c: &ReceiverCounters) -> Option<Limit> {
    crate::verdict::receiver_drop_limit(drops_of(c))
}

fn drops_of(c: &ReceiverCounters) -> crate::verdict::ReceiverDrops {
    crate::verdict::ReceiverDrops {
        imissed: c.imissed,
        rx_nombuf: c.rx_nombuf,
        socket_drops: c.socket_drops,
        interface_drops: c.interface_drops,
    }
}

/// Every counter the user asked to watch that moved.
fn watched_limits(c: &ReceiverCounters) -> Vec<Limit> {
    c.xstats
        .watched
        .iter()
        .filter(|(_, &d)| d > 0)
        .map(|(name, &delta)| Limit {
            kind: LimitKind::Other,
            side: Side::Receiver,
            counters: vec![name.clone()],
            delta,
            frames: delta,
            evidence: format!("watched counter {name} +{delta} on the receiver"),
        })
        .collect()
}

/// Probes missing beyond what the counters explain (`unexplained`): a
/// saturated receiver's when its busiest lane was `saturated`, else lost
/// before this port.
fn missing_probes(unexplained: u64, saturated: Option<f64>) -> Limit {
    match saturated {
        Some(busy) => Limit {
            kind: LimitKind::Receiver,
            side: Side::Receiver,
            counters: vec!["busy_cycles".into(), "probe_lost".into()],
            delta: unexplained,
            frames: unexplained,
            evidence: format!(
                "{unexplained} frames missing from the probes' sequence numbers while the busiest lane was busy {busy:.1}% of the time frames arrived: it was saturated (this device drops what the receiver misses without counting it)"
            ),
        },
        None => Limit {
            kind: LimitKind::Network,
            side: Side::Both,
            counters: vec!["probe_lost".into()],
            delta: unexplained,
            frames: unexplained,
            evidence: format!(
                "{unexplained} frames missing from the probes' sequence numbers and no counter here explains them: lost before this port (the sender's counters may say why: blast --peer reads both ends)"
            ),
        },
    }
}

/// Nothing moved: the rate is what the sender sent.
fn nothing_held_back(c: &ReceiverCounters) -> Limit {
    Limit {
        kind: LimitKind::None,
        side: Side::Receiver,
        counters: Vec::new(),
        delta: 0,
        frames: 0,
        evidence: format!(
            "nothing held the receiver back: no drop counter moved{}{}; the rate is what arrived from the sender",
            if c.probes_read { ", no probe missing" } else { " (probes not read: --count-only)" },
            c.busy_pct.map_or(String::new(), |b| format!(", the busiest lane busy {b:.1}% of the time frames arrived"))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean() -> ReceiverCounters {
        ReceiverCounters { received: 1000, probes_read: true, busy_pct: Some(10.0), ..Default::default() }
    }

    fn kinds(v: &Verdict) -> Vec<LimitKind> {
        v.limits.iter().map(|l| l.kind).collect()
    }

    #[test]
    fn a_clean_run_is_none() {
        let v = receiver_verdict(&clean());
        assert_eq!(v.label(), "none");
        assert!(v.limits[0].evidence.contains("no probe missing"));
    }

    #[test]
    fn drops_counted_at_the_port_are_the_receivers() {
        let v = receiver_verdict(&ReceiverCounters { imissed: 30, rx_nombuf: 5, probe_lost: 35, ..clean() });
        assert_eq!(kinds(&v), [LimitKind::Receiver]);
        assert_eq!(v.limits[0].frames, 35);
    }

    #[test]
    fn a_saturated_receiver_is_the_limit_with_or_without_loss() {
        let v = receiver_verdict(&ReceiverCounters { probe_lost: 500, busy_pct: Some(99.0), ..clean() });
        assert_eq!(kinds(&v), [LimitKind::Receiver]);
        assert!(v.limits[0].evidence.contains("saturated"));
        let v = receiver_verdict(&ReceiverCounters { busy_pct: Some(100.0), ..clean() });
        assert_eq!(kinds(&v), [LimitKind::Receiver]);
        assert!(v.limits[0].evidence.contains("no frame lost"));
    }

    #[test]
    fn a_lane_the_host_held_back_is_no_none() {
        // Quiet: a lane that stood still 1% of the time is no reason to doubt.
        let quiet = receiver_verdict(&ReceiverCounters { stalled_pct: Some(1.0), ..clean() });
        assert_eq!(kinds(&quiet), [LimitKind::None]);
        // Busy 38.7%, stood still 95.2% (two CPU hogs on its CPU): the shares overlap, and no limit can be told.
        let held = receiver_verdict(&ReceiverCounters { busy_pct: Some(38.7), stalled_pct: Some(95.2), ..clean() });
        assert!(held.limits.is_empty(), "{held:?}");
        let label = held.label();
        assert!(label.starts_with("unknown (the host held the receiver back: a lane stood still (descheduled) 95.2%"), "{label}");
        // Saturated is saturated, whatever else the host did.
        let busy = receiver_verdict(&ReceiverCounters { busy_pct: Some(99.0), stalled_pct: Some(10.0), ..clean() });
        assert_eq!(kinds(&busy), [LimitKind::Receiver]);
        // A counter that moved is evidence whatever the host did.
        let counted = receiver_verdict(&ReceiverCounters { imissed: 5, probe_lost: 5, stalled_pct: Some(30.0), ..clean() });
        assert_eq!(kinds(&counted), [LimitKind::Receiver]);
    }

    #[test]
    fn interface_drops_explain_loss_and_count_once_beside_socket_drops() {
        let v = receiver_verdict(&ReceiverCounters { interface_drops: 500, probe_lost: 500, ..clean() });
        assert_eq!(kinds(&v), [LimitKind::Receiver], "{v:?}");
        assert_eq!((v.limits[0].frames, v.limits[0].counters.clone()), (500, vec!["interface_drops".to_string()]));
        let both = receiver_verdict(&ReceiverCounters { socket_drops: 400, interface_drops: 400, probe_lost: 500, ..clean() });
        assert_eq!(kinds(&both), [LimitKind::Receiver, LimitKind::Network], "{both:?}");
        assert_eq!((both.limits[0].frames, both.limits[1].frames), (400, 100));
    }

    #[test]
    fn af_packet_socket_drops_explain_loss_and_are_named() {
        // DPDK 22.11's af_packet: imissed 0, the kernel's ring drops read from the sockets.
        let v = receiver_verdict(&ReceiverCounters { socket_drops: 400, probe_lost: 500, ..clean() });
        assert_eq!(kinds(&v), [LimitKind::Receiver, LimitKind::Network], "{v:?}");
        assert_eq!(v.limits[0].counters, ["socket_drops"]);
        assert_eq!(v.limits[0].frames, 400);
        assert!(v.limits[0].evidence.starts_with("socket_drops +400 on the receiver"), "{}", v.limits[0].evidence);
        assert_eq!(v.limits[1].frames, 100, "only the loss the sockets did not count is placed before the port");
    }

    #[test]
    fn unexplained_loss_at_an_idle_receiver_is_before_its_port() {
        let v = receiver_verdict(&ReceiverCounters { probe_lost: 500, ..clean() });
        assert_eq!(kinds(&v), [LimitKind::Network]);
    }

    #[test]
    fn allowances_and_watched_counters_name_themselves() {
        let mut c = clean();
        c.xstats.allowances.insert("bw_in_allowance_exceeded".into(), 9);
        c.xstats.watched.insert("rx_discards_phy".into(), 3);
        let v = receiver_verdict(&c);
        assert_eq!(v.label(), "bw-in-allowance (receiver) + other: rx_discards_phy (receiver)");
    }

    #[test]
    fn each_pmd_drop_counter_names_drops_receiver_alone() {
        for (driver, names) in crate::counters::PMD_DROP_COUNTERS {
            for pattern in *names {
                let name = pattern.replace("{n}", "3");
                let mut c = clean();
                c.imissed = 7;
                c.xstats.watched.insert(name.clone(), 11);
                let v = receiver_verdict(&c);
                let own = v.limits.iter().find(|l| l.counters == [name.clone()]).unwrap_or_else(|| panic!("{driver}: {name}: {v:?}"));
                assert_eq!(
                    (own.side, own.frames, own.evidence.as_str()),
                    (Side::Receiver, 11, format!("watched counter {name} +11 on the receiver").as_str())
                );
                let basic = v.limits.iter().find(|l| l.kind == LimitKind::Receiver).expect("imissed");
                assert_eq!(basic.frames, 7, "{driver}: imissed counted once, nothing folded into it added");
            }
        }
    }

    #[test]
    fn an_invalid_sample_is_unknown() {
        let v = receiver_verdict(&ReceiverCounters { invalid: Some("went backwards".into()), ..clean() });
        assert!(v.label().starts_with("unknown"));
    }
}
