use serde::{Deserialize, Serialize};

use crate::by_kind::XstatsByKind;
use crate::limit::side_str;
pub use crate::limit::{Limit, LimitKind, Side, Verdict, VerdictClass};

/// Both ends' counters over one step's window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowCounters {
    /// Frames the pacer scheduled in the window; None when unpaced.
    pub offered: Option<u64>,
    /// Frames tx_burst accepted.
    pub accepted: u64,
    /// tx_burst calls that took fewer frames than offered (ring full).
    pub ring_full_retries: u64,
    /// The share of the sending lanes' time (each from its start to its
    /// end) spent inside tx_burst calls, in percent (None where not
    /// measured: unpaced lanes, a replay's).
    #[serde(default)]
    pub sender_tx_pct: Option<f64>,
    /// The sender sent on the kernel's UDP sockets (blast --socket): its
    /// calls are sendmmsg, and a call that came back short met a full
    /// socket buffer or queueing discipline, not a ring.
    #[serde(default)]
    pub sender_sockets: bool,
    /// On sockets: datagrams per UDP GSO buffer at most (0 or 1: no GSO).
    #[serde(default)]
    pub sender_gso_segments: u64,
    /// The sender port's own counters.
    pub sender_opackets: u64,
    pub sender_oerrors: u64,
    /// Frames that arrived (None without a receiver).
    pub received: Option<u64>,
    pub receiver_imissed: u64,
    pub receiver_rx_nombuf: u64,
    pub receiver_ierrors: u64,
    /// af_packet: frames the kernel dropped on the receiver's full RX rings
    /// (its sockets' PACKET_STATISTICS), not in `receiver_imissed`.
    #[serde(default)]
    pub receiver_socket_drops: u64,
    /// af_packet and AF_XDP: frames the kernel interface under the
    /// receiver's port received and dropped (its rx_dropped,
    /// rx_missed_errors, rx_fifo_errors), which the PMDs do not pass on.
    #[serde(default)]
    pub receiver_interface_drops: u64,
    /// A receiver on the kernel's UDP sockets (drop --socket): its GRO and
    /// its namespace's UDP counters. Its drops are then
    /// `receiver_socket_drops` (the sockets' own, buffers under GRO) and
    /// `receiver_interface_drops`, judged as crate::socket does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_udp: Option<crate::socket::UdpReceiver>,
    /// Each end's watched extended stats by kind: allowance deltas (ENA),
    /// --watch-xstat deltas, and levels (not read by the verdict).
    pub sender_xstats: XstatsByKind,
    pub receiver_xstats: XstatsByKind,
    /// Time the busiest receiving lcore spent on polls that brought frames
    /// (and on the work behind them), as a share of the sender's trial, in percent. Near 100,
    /// the receiver was saturated: on devices that drop in the kernel without
    /// counting it (af_packet), this is the receiver's only evidence.
    pub receiver_busy_pct: Option<f64>,
    /// rx_burst calls of the receiver's lanes over the window, and how many
    /// came back empty (0 and 0: not known).
    #[serde(default)]
    pub receiver_polls: u64,
    #[serde(default)]
    pub receiver_empty_polls: u64,
    /// The sending lanes' loops that stood still in the trial (descheduled
    /// by the host): how often, and for how long in all (ms).
    #[serde(default)]
    pub sender_stalls: u64,
    #[serde(default)]
    pub sender_stalled_ms: f64,
    /// Why a counter sample of this window is not to be believed.
    pub invalid: Option<String>,
    /// The counts do not add up (a stream received more than was sent):
    /// no verdict can rest on them.
    #[serde(default)]
    pub accounting_error: Option<String>,
}

/// A receiving lcore busy for at least this share of the window (percent) was saturated.
pub const SATURATED_BUSY_PCT: f64 = 95.0;

/// A paced sender that delivered less than this share of its schedule fell behind.
const SENDER_SHORTFALL: f64 = 0.01;

/// The verdict for one window: every kind of evidence that moved, the one
/// that accounts for most frames first.
pub fn verdict(w: &WindowCounters) -> Verdict {
    if let Some(why) = &w.accounting_error {
        return Verdict { limits: Vec::new(), invalid: Some(why.clone()) };
    }
    if let Some(why) = &w.invalid {
        return Verdict { limits: Vec::new(), invalid: Some(format!("invalid counter sample: {why}")) };
    }
    let mut limits = allowance_limits(w);
    let allowance_moved = !limits.is_empty();
    match udp_limits(w) {
        Some(kernel) => limits.extend(kernel),
        None => limits.extend(receiver_drops(w)),
    }
    limits.extend(watched_limits(w));
    let path = broken_path(w);
    let path_broke = path.is_some();
    if let Some(path) = path {
        limits.push(path);
    } else if !allowance_moved {
        limits.extend(sender_limit(w));
    }
    // A shaper or a broken path explains a loss already.
    if !path_broke && !allowance_moved {
        limits.extend(unexplained_loss(w));
    }
    if limits.is_empty() {
        limits.push(Limit {
            kind: LimitKind::None,
            side: Side::Both,
            counters: Vec::new(),
            delta: 0,
            frames: 0,
            evidence: "the offered rate was delivered and no counter moved".into(),
        });
    }
    // The one that accounts for most frames first; ties keep the order above.
    limits.sort_by_key(|l| std::cmp::Reverse(l.frames));
    add_express(&mut limits, w);
    Verdict { limits, invalid: None }
}

/// Every ENA allowance counter that moved, on either end.
fn allowance_limits(w: &WindowCounters) -> Vec<Limit> {
    let mut limits = Vec::new();
    for (side, map) in [(Side::Sender, &w.sender_xstats.allowances), (Side::Receiver, &w.receiver_xstats.allowances)] {
        for (name, &delta) in map {
            if delta == 0 {
                continue;
            }
            if let Some(kind) = LimitKind::of_allowance(name) {
                let end = side_str(side);
                limits.push(Limit {
                    kind,
                    side,
                    counters: vec![name.clone()],
                    delta,
                    frames: delta,
                    evidence: format!("{name} +{delta} on the {end}: the platform's shaper queued or dropped {delta} packets"),
                });
            }
        }
    }
    limits
}

/// Frames the receiver's port counted as missed or without a buffer, or
/// its kernel dropped (see [`ReceiverDrops::frames`]); on a socket
/// receiver, the frames its kernel's counters explain.
fn rx_drops(w: &WindowCounters) -> u64 {
    match udp_limits(w) {
        Some(limits) => limits.iter().map(|l| l.frames).sum(),
        None => receiver_drops_of(w).frames(),
    }
}

/// A socket receiver's kernel counters as limits (None: not a socket
/// receiver). Under GRO a drop counts a buffer, so the frames are credited
/// from the loss (sent less received), never from the count alone.
fn udp_limits(w: &WindowCounters) -> Option<Vec<Limit>> {
    let u = w.receiver_udp?;
    let lost = w.received.map_or(0, |r| sent_by_port(w).saturating_sub(r));
    Some(crate::socket::kernel_limits(&u.counters(lost, w.receiver_socket_drops, w.receiver_interface_drops)))
}

fn receiver_drops_of(w: &WindowCounters) -> ReceiverDrops {
    ReceiverDrops {
        imissed: w.receiver_imissed,
        rx_nombuf: w.receiver_rx_nombuf,
        socket_drops: w.receiver_socket_drops,
        interface_drops: w.receiver_interface_drops,
    }
}

/// The receiver could not take frames as fast as they came. A kernel
/// interface counts every copy it dropped, and a sender's kernel that was
/// told of the drop sends the same frame again (af_packet straight into a
/// veth over its MTU: 436162 drops of some 20000 frames once), so where
/// the interface's drops moved the limit accounts for no more frames than
/// were lost.
fn receiver_drops(w: &WindowCounters) -> Option<Limit> {
    let mut limit = receiver_drop_limit(receiver_drops_of(w))?;
    if let (true, Some(received)) = (w.receiver_interface_drops > 0, w.received) {
        let lost = sent_by_port(w).saturating_sub(received);
        if limit.frames > lost {
            limit.evidence +=
                &format!(" (more drops than the {lost} frames lost: the kernel counted copies of a frame that was sent again)");
            limit.frames = lost;
        }
    }
    Some(limit)
}

/// What the sender's port says it sent; memif-like devices that zero
/// their counters are covered by what tx_burst accepted.
fn sent_by_port(w: &WindowCounters) -> u64 {
    if w.sender_opackets > 0 {
        w.sender_opackets
    } else {
        w.accepted
    }
}

/// The receiver's drop counters over one window.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReceiverDrops {
    pub imissed: u64,
    pub rx_nombuf: u64,
    /// A kernel socket's full RX ring (af_packet's, an XDP socket's).
    pub socket_drops: u64,
    /// The kernel interface under the port (af_packet, AF_XDP).
    pub interface_drops: u64,
}

impl ReceiverDrops {
    /// The frames these counters account for. A frame the kernel dropped
    /// for a full XDP socket can be counted by the socket and by the
    /// interface both (veth counts it in its rx_dropped), so the larger of
    /// the two stands for both: a loss beyond it stays unexplained, never
    /// hidden by a frame counted twice.
    pub fn frames(&self) -> u64 {
        self.imissed + self.rx_nombuf + self.socket_drops.max(self.interface_drops)
    }
}

/// The receiver could not take frames as fast as they came: its port
/// counted them missed (imissed), had no buffer for them (rx_nombuf), the
/// kernel dropped them on its sockets' full RX rings (socket_drops), or
/// the kernel interface under the port dropped them (interface_drops).
/// None when none moved. Both verdicts name them so.
pub(crate) fn receiver_drop_limit(d: ReceiverDrops) -> Option<Limit> {
    let moved: Vec<(&str, u64)> =
        [("imissed", d.imissed), ("rx_nombuf", d.rx_nombuf), ("socket_drops", d.socket_drops), ("interface_drops", d.interface_drops)]
            .into_iter()
            .filter(|&(_, v)| v > 0)
            .collect();
    if moved.is_empty() {
        return None;
    }
    let drops = d.frames();
    let parts: Vec<String> = moved.iter().map(|(n, v)| format!("{n} +{v}")).collect();
    let mut kernel = String::new();
    if d.socket_drops > 0 {
        kernel += " (socket_drops: a kernel socket's RX ring was full: net_af_packet's, or net_af_xdp's XDP socket)";
    }
    if d.interface_drops > 0 {
        kernel += " (interface_drops: the kernel interface under the port dropped frames it received: over its MTU, for a \
                   full XDP socket, or without an RX buffer; `ip -s link` shows them)";
    }
    if d.socket_drops > 0 && d.interface_drops > 0 {
        kernel += &format!(" (the kernel can count one frame in both: {drops} frames in all, not their sum)");
    }
    Some(Limit {
        kind: LimitKind::Receiver,
        side: Side::Receiver,
        counters: moved.iter().map(|(n, _)| n.to_string()).collect(),
        delta: drops,
        frames: drops,
        evidence: format!("{} on the receiver: it could not take frames as fast as they came{kernel}", parts.join(", ")),
    })
}

/// Every counter the user asked to watch that moved, on either end.
fn watched_limits(w: &WindowCounters) -> Vec<Limit> {
    let mut limits = Vec::new();
    for (side, map) in [(Side::Sender, &w.sender_xstats.watched), (Side::Receiver, &w.receiver_xstats.watched)] {
        for (name, &delta) in map {
            if delta > 0 {
                limits.push(Limit {
                    kind: LimitKind::Other,
                    side,
                    counters: vec![name.clone()],
                    delta,
                    frames: delta,
                    evidence: format!("watched counter {name} +{delta} on the {}", side_str(side)),
                });
            }
        }
    }
    limits
}

/// The sender as the limit: paced, it fell short of its schedule; unpaced,
/// it sent as fast as its queues took frames.
fn sender_limit(w: &WindowCounters) -> Option<Limit> {
    match w.offered {
        Some(offered) => {
            let short = offered.saturating_sub(w.accepted);
            (short as f64 > offered as f64 * SENDER_SHORTFALL).then(|| Limit {
                kind: LimitKind::Sender,
                side: Side::Sender,
                counters: vec![send_call(w).into()],
                delta: w.ring_full_retries,
                frames: short,
                evidence: sender_shortfall(w, offered) + &stalled(w),
            })
        }
        None => Some(Limit {
            kind: LimitKind::Sender,
            side: Side::Sender,
            counters: vec![send_call(w).into()],
            delta: w.ring_full_retries,
            frames: 0,
            evidence: format!(
                "unpaced: the sender sent as fast as its cores and {} took frames ({} accepted, {} {} calls came back short)",
                if w.sender_sockets { "sockets" } else { "queues" },
                w.accepted,
                w.ring_full_retries,
                send_call(w)
            ),
        }),
    }
}

/// Frames sent and not received beyond what the counters explain: a
/// saturated receiver's (on a device that drops what it misses without
/// counting it), else the network's.
fn unexplained_loss(w: &WindowCounters) -> Option<Limit> {
    let received = w.received?;
    let sent = sent_by_port(w);
    let lost = sent.saturating_sub(received);
    let explained = rx_drops(w) + w.receiver_ierrors + w.sender_oerrors;
    if lost <= explained {
        return None;
    }
    let unexplained = lost - explained;
    Some(match w.receiver_busy_pct.filter(|&busy| busy >= SATURATED_BUSY_PCT) {
        Some(busy) => Limit {
            kind: LimitKind::Receiver,
            side: Side::Receiver,
            counters: vec!["busy_cycles".into()],
            delta: unexplained,
            frames: unexplained,
            evidence: format!(
                "{unexplained} frames lost while the busiest receiving lcore was busy {busy:.1}% of the trial: it was saturated \
                 (this device drops what the receiver misses without counting it)"
            ),
        },
        None => Limit {
            kind: LimitKind::Network,
            side: Side::Both,
            counters: Vec::new(),
            delta: unexplained,
            frames: unexplained,
            evidence: format!(
                "the sender's port sent {sent}, the receiver got {received}: {unexplained} frames lost with no counter on either end to explain them{}",
                gso_signature(w, sent, unexplained)
            ),
        },
    })
}

/// A socket sender's GSO buffers of N that each left as one frame lose
/// (N-1)/N of what was sent, and no counter sees it (an interface whose UDP
/// segmentation offload does not cut them, a veth into a packet socket):
/// where the loss has that share, the evidence says so and names the fix.
fn gso_signature(w: &WindowCounters, sent: u64, lost: u64) -> String {
    let n = w.sender_gso_segments;
    if !w.sender_sockets || n < 2 || sent < n * 100 {
        return String::new();
    }
    let share = lost as f64 / sent as f64;
    let whole = (n - 1) as f64 / n as f64;
    if (share - whole).abs() > 0.01 {
        return String::new();
    }
    format!(
        "; {:.2}% lost is {}/{n} of what was sent, as if each GSO buffer of {n} datagrams arrived as one frame: the sending \
         interface's UDP segmentation (its NIC's offload, or a veth into a packet socket) is suspect; run again with --no-gso",
        share * 100.0,
        n - 1
    )
}

/// ENA Express falling back limits a flow's rate without dropping or
/// counting anything else: it joins the first limit's evidence.
fn add_express(limits: &mut [Limit], w: &WindowCounters) {
    let express: Vec<String> = crate::express_evidence(&w.sender_xstats, "sender")
        .into_iter()
        .chain(crate::express_evidence(&w.receiver_xstats, "receiver"))
        .collect();
    if !express.is_empty() {
        let first = &mut limits[0];
        first.evidence = format!("{}; {}", first.evidence, express.join("; "));
        if !first.counters.iter().any(|c| c.starts_with("ena_srd_")) {
            first.counters.push("ena_srd_tx_pkts".into());
        }
    }
}

/// A sender whose tx_burst came back short more often than it took frames
/// pushed against a full queue for the whole trial.
const PATH_RETRIES: u64 = 1000;

/// The sender's queue stayed full while the receiver's polls found nothing
/// (at most one in a thousand brought frames): whatever the sender's queue
/// was joined to, the receiver was not polling it. Not the sender's limit
/// (its queue pushed back), not the receiver's (it was idle).
fn broken_path(w: &WindowCounters) -> Option<Limit> {
    let received = w.received?;
    let pushed_back = w.ring_full_retries >= PATH_RETRIES && w.ring_full_retries > w.accepted;
    // Paced, a receiver that keeps up finds frames on few of its polls
    // too: the sign is a queue that held back most of the pace.
    let held_back = w.offered.is_none_or(|o| w.accepted.saturating_mul(2) < o);
    let busy_polls = w.receiver_polls.saturating_sub(w.receiver_empty_polls);
    let idle = w.receiver_polls >= 1000 && busy_polls * 1000 <= w.receiver_polls;
    // Frames the receiver's port or its kernel dropped reached it: the ends
    // were joined (a kernel interface that refuses every frame, over its
    // MTU, makes the sender's kernel send them again and fills its queue).
    let reached = rx_drops(w) > 0;
    if !pushed_back || !held_back || !idle || reached {
        return None;
    }
    let wanted = w.offered.unwrap_or(w.accepted).max(w.accepted);
    let frames = wanted.saturating_sub(received);
    Some(Limit {
        kind: LimitKind::Path,
        side: Side::Both,
        counters: vec!["tx_burst".into(), "empty_polls".into()],
        delta: w.ring_full_retries,
        frames,
        evidence: format!(
            "the sender's queue stayed full ({} tx_burst calls came back short, {} frames taken) while the receiver's lanes \
             polled {} times and found frames {} times ({received} frames): the two ends were not joined through \
             (memif rings not shared after a reconnect or a queue change, or a link down), so neither end's limit was measured",
            w.ring_full_retries, w.accepted, w.receiver_polls, busy_polls
        ),
    })
}

/// The sending lanes' stalls, for a sender limit's evidence.
fn stalled(w: &WindowCounters) -> String {
    if w.sender_stalls == 0 {
        return String::new();
    }
    format!(
        "; the sending lanes stood still {} time(s), {:.1} ms in all (descheduled by their host: the host, not the code, held them back for that long)",
        w.sender_stalls, w.sender_stalled_ms
    )
}

/// A paced sender whose lanes spent at least this share of their time
/// inside tx_burst was held back by what is beneath the queues: a lane that
/// keeps its pace waits for the next send most of the time, and one whose
/// cores fall behind spends it building frames, not inside the driver.
pub const PUSHED_BACK_TX_PCT: f64 = 50.0;

/// The call a sending lane hands frames over with.
fn send_call(w: &WindowCounters) -> &'static str {
    if w.sender_sockets {
        "sendmmsg"
    } else {
        "tx_burst"
    }
}

/// Why a paced sender fell short, in words: a queue that pushed back
/// (ring full) is a different cause from a core that was late to offer.
fn sender_shortfall(w: &WindowCounters, offered: u64) -> String {
    let (accepted, ring_full, call) = (w.accepted, w.ring_full_retries, send_call(w));
    let pct = offered.saturating_sub(accepted) as f64 / offered.max(1) as f64 * 100.0;
    let cause = if ring_full == 0 {
        match w.sender_tx_pct.filter(|&p| p >= PUSHED_BACK_TX_PCT) {
            Some(p) => format!(
                "no {call} call came back short, but the lanes spent {p:.0}% of their time inside {call}: the path beneath \
                 the {} pushed back by taking its time (a shaper or queueing discipline under a kernel socket such as \
                 net_af_packet's, or a driver waiting on its device), not the sending cores",
                if w.sender_sockets { "sockets" } else { "queues" }
            ),
            None => format!(
                "no {call} call came back short, so the sending cores, not the {}, fell behind the pace",
                if w.sender_sockets { "sockets" } else { "queues" }
            ),
        }
    } else if w.sender_sockets {
        format!("{ring_full} sendmmsg calls came back short (a full socket buffer or queueing discipline)")
    } else {
        format!("{ring_full} tx_burst calls came back short (ring full)")
    };
    format!("{call} accepted {accepted} of the {offered} frames the pace asked for ({pct:.2}% short); {cause}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_and_an_idle_receiver_are_a_broken_path_not_the_sender() {
        // The field case: 1536 frames taken, 743150 short tx_burst calls,
        // drop polled 71 million times and found frames 48 times.
        let w = WindowCounters {
            offered: Some(200_000),
            accepted: 1536,
            ring_full_retries: 743_150,
            received: Some(1536),
            receiver_polls: 71_000_000,
            receiver_empty_polls: 71_000_000 - 48,
            receiver_busy_pct: Some(0.0),
            ..Default::default()
        };
        let v = verdict(&w);
        assert_eq!(v.label(), "path");
        assert!(v.limits[0].evidence.contains("found frames 48 times"), "{}", v.limits[0].evidence);
        assert_eq!(v.limits[0].frames, 200_000 - 1536);
        // Paced and delivered nearly all of it: a receiver keeping up at a low
        // rate polls mostly empty too, and its stalls filled the queue.
        let kept_up = WindowCounters { accepted: 190_000, received: Some(190_000), receiver_empty_polls: 71_000_000 - 6_000, ..w.clone() };
        assert_eq!(verdict(&kept_up).label(), "sender");
        // A receiver that is busy with what the queue holds: the sender's queue is simply full.
        let slow_rx = WindowCounters { receiver_empty_polls: 1_000_000, receiver_polls: 2_000_000, ..w.clone() };
        assert!(!verdict(&slow_rx).label().contains("path"));
        // A sender whose queue never pushed back is a sender limit, stalls named.
        let cpu = WindowCounters {
            ring_full_retries: 0,
            accepted: 100_000,
            received: Some(100_000),
            sender_stalls: 12,
            sender_stalled_ms: 40.5,
            ..w
        };
        let v = verdict(&cpu);
        assert_eq!(v.label(), "sender");
        assert!(v.limits[0].evidence.contains("stood still 12 time(s), 40.5 ms in all"), "{}", v.limits[0].evidence);
    }

    fn paced(offered: u64, accepted: u64, received: u64) -> WindowCounters {
        WindowCounters { offered: Some(offered), accepted, sender_opackets: accepted, received: Some(received), ..Default::default() }
    }

    #[test]
    fn a_socket_receivers_buffer_drops_under_gro_are_credited_from_the_loss_and_the_rest_is_unexplained() {
        // 20,000 sent paced, 17,000 received; the sockets dropped 40 GRO buffers.
        let udp = crate::UdpReceiver { gro: true, rcvbuf_errors: 40, ..Default::default() };
        let w = WindowCounters { receiver_socket_drops: 40, receiver_udp: Some(udp), ..paced(20_000, 20_000, 17_000) };
        let v = verdict(&w);
        // 40 buffers hold up to 2,560 frames: the other 440 are no counter's.
        assert_eq!(
            v.limits.iter().map(|l| (l.kind, l.frames)).collect::<Vec<_>>(),
            [(LimitKind::Receiver, 2_560), (LimitKind::Network, 440)]
        );
        assert!(v.limits[0].evidence.contains("2560 frames lost in 40 buffers"), "{}", v.limits[0].evidence);
        assert!(v.limits[0].evidence.contains("raise the receive buffer"), "{}", v.limits[0].evidence);
        // Without GRO each drop is one frame; a port's socket_drops rule would have counted them alike.
        let plain =
            WindowCounters { receiver_socket_drops: 3_000, receiver_udp: Some(crate::UdpReceiver { gro: false, ..udp }), ..w.clone() };
        assert_eq!(verdict(&plain).label(), "receiver");
        assert_eq!(verdict(&plain).limits[0].frames, 3_000);
        // Nothing lost: other sockets' RcvbufErrors in the namespace do not make a limit.
        let clean = WindowCounters { receiver_udp: Some(crate::UdpReceiver { rcvbuf_errors: 99, ..udp }), ..paced(20_000, 20_000, 20_000) };
        assert_eq!(verdict(&clean).label(), "none");
        // A receiver no socket listened for: NoPorts names it.
        let unbound = WindowCounters {
            receiver_udp: Some(crate::UdpReceiver { no_ports: 20_000, ..Default::default() }),
            ..paced(20_000, 20_000, 0)
        };
        assert_eq!(verdict(&unbound).limits[0].counters, ["NoPorts"]);
    }

    #[test]
    fn a_rise_in_each_pmd_drop_counter_names_the_receiver() {
        for (driver, names) in crate::counters::PMD_DROP_COUNTERS {
            for pattern in *names {
                let name = pattern.replace("{n}", "0");
                // 700 frames lost: 300 imissed, 400 by the device's own counter.
                let mut w = paced(10_000, 10_000, 9_300);
                w.receiver_imissed = 300;
                w.receiver_xstats.insert(crate::CounterKind::Watched, name.clone(), 400);
                let v = verdict(&w);
                let own = v.limits.iter().find(|l| l.counters == [name.clone()]).unwrap_or_else(|| panic!("{driver}: {name}: {v:?}"));
                assert_eq!((own.side, own.frames), (Side::Receiver, 400), "{driver}: {name}");
                assert_eq!(own.evidence, format!("watched counter {name} +400 on the receiver"));
                assert!(v.label().contains(&format!("other: {name} (receiver)")), "{driver}: {}", v.label());
                // imissed's frames stay imissed's alone: nothing folded in is counted again.
                let basic = v.limits.iter().find(|l| l.kind == LimitKind::Receiver).expect("imissed names the receiver");
                assert_eq!((basic.counters.as_slice(), basic.frames), (&["imissed".to_string()][..], 300));
            }
        }
    }

    #[test]
    fn a_sender_held_inside_tx_burst_is_the_paths_push_back_not_its_cores() {
        // The field case: tc tbf under net_af_packet's socket, 40 kpps asked
        // for 10 s; no short tx_burst, the lanes' time all inside it.
        let w = WindowCounters { sender_tx_pct: Some(99.7), ..paced(399_494, 132_320, 132_320) };
        let v = verdict(&w);
        assert_eq!(v.label(), "sender");
        let e = &v.limits[0].evidence;
        assert!(e.contains("66.88% short") && e.contains("100% of their time inside tx_burst"), "{e}");
        assert!(e.contains("the path beneath the queues pushed back") && !e.contains("sending cores, not"), "{e}");
        // The same shortfall with the time spent building frames is the cores'.
        let cores = verdict(&WindowCounters { sender_tx_pct: Some(12.0), ..paced(399_494, 132_320, 132_320) });
        assert!(cores.limits[0].evidence.contains("so the sending cores, not the queues, fell behind the pace"), "{cores:?}");
        let unmeasured = verdict(&WindowCounters { sender_tx_pct: None, ..paced(399_494, 132_320, 132_320) });
        assert!(unmeasured.limits[0].evidence.contains("so the sending cores"), "{unmeasured:?}");
    }

    fn kinds(v: &Verdict) -> Vec<LimitKind> {
        v.limits.iter().map(|l| l.kind).collect()
    }

    #[test]
    fn delivered_and_quiet_is_none() {
        let v = verdict(&paced(1_000_000, 1_000_000, 1_000_000));
        assert_eq!(kinds(&v), [LimitKind::None]);
        assert_eq!(v.label(), "none");
    }

    #[test]
    fn each_allowance_names_its_verdict_and_side() {
        for (name, kind) in [
            ("pps_allowance_exceeded", LimitKind::PpsAllowance),
            ("bw_out_allowance_exceeded", LimitKind::BwOutAllowance),
            ("bw_in_allowance_exceeded", LimitKind::BwInAllowance),
            ("conntrack_allowance_exceeded", LimitKind::ConntrackAllowance),
            ("linklocal_allowance_exceeded", LimitKind::LinklocalAllowance),
        ] {
            let mut w = paced(1_000_000, 900_000, 900_000);
            w.sender_xstats.allowances.insert(name.into(), 5000);
            let v = verdict(&w);
            assert_eq!(kinds(&v), [kind], "{name}");
            assert_eq!(v.limits[0].side, Side::Sender);
            assert!(v.limits[0].evidence.contains(&format!("{name} +5000")));
            // An allowance moving rules out "sender" even though tx_burst fell short.
            assert!(!kinds(&v).contains(&LimitKind::Sender));
        }
        let mut w = paced(10, 10, 10);
        w.receiver_xstats.allowances.insert("bw_in_allowance_exceeded".into(), 7);
        assert_eq!(verdict(&w).label(), "bw-in-allowance (receiver)");
    }

    #[test]
    fn the_kernel_interfaces_own_drops_name_the_receiver() {
        // veth under drop's af_packet port refused 1200 B frames over its MTU.
        let mut w = paced(1000, 1000, 700);
        w.receiver_interface_drops = 300;
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Receiver], "{v:?}");
        assert_eq!((v.limits[0].frames, v.limits[0].counters.clone()), (300, vec!["interface_drops".to_string()]));
        assert!(v.limits[0].evidence.starts_with("interface_drops +300 on the receiver"), "{}", v.limits[0].evidence);
        assert!(v.limits[0].evidence.contains("MTU"), "{}", v.limits[0].evidence);
    }

    #[test]
    fn an_interface_that_counted_resent_copies_explains_no_more_than_the_loss() {
        let mut w = paced(20_000, 20_000, 0);
        w.receiver_interface_drops = 436_162;
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Receiver], "{v:?}");
        assert_eq!(v.limits[0].frames, 20_000);
        assert!(v.limits[0].evidence.contains("interface_drops +436162"), "{}", v.limits[0].evidence);
        assert!(v.limits[0].evidence.contains("more drops than the 20000 frames lost"), "{}", v.limits[0].evidence);
    }

    #[test]
    fn a_path_whose_receiver_dropped_frames_was_joined() {
        // af_packet straight into a veth over its MTU: the sender's ring
        // stayed full (its kernel sent each refused frame again), drop's
        // lanes found nothing, and the veth counted every refused copy.
        let mut w = paced(20_000, 33, 0);
        (w.ring_full_retries, w.receiver_polls, w.receiver_empty_polls) = (433_371, 68_485_120, 68_485_120);
        let broken = verdict(&w);
        assert_eq!(kinds(&broken)[0], LimitKind::Path, "{broken:?}");
        assert!(!broken.limits[0].evidence.contains("  "), "one space between words: {}", broken.limits[0].evidence);
        w.receiver_interface_drops = 436_162;
        let v = verdict(&w);
        // Both ends' own evidence instead: the sender's short pace (its
        // queue full of frames its kernel kept sending) and the receiver's drops.
        assert_eq!(kinds(&v), [LimitKind::Sender, LimitKind::Receiver], "{v:?}");
    }

    #[test]
    fn a_frame_both_the_xdp_socket_and_the_interface_counted_is_one_frame() {
        // AF_XDP on veth: 300 frames for a full XDP socket, counted by the
        // socket and by the veth; 100 more lost with no counter.
        let mut w = paced(1000, 1000, 600);
        (w.receiver_socket_drops, w.receiver_interface_drops) = (300, 300);
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Receiver, LimitKind::Network], "{v:?}");
        assert_eq!(v.limits[0].frames, 300);
        assert_eq!(v.limits[0].counters, ["socket_drops", "interface_drops"]);
        assert!(v.limits[0].evidence.contains("300 frames in all, not their sum"), "{}", v.limits[0].evidence);
        assert_eq!(v.limits[1].frames, 100, "the loss no counter explains stays unexplained");
    }

    #[test]
    fn af_packet_socket_drops_are_the_receivers() {
        let mut w = paced(1000, 1000, 900);
        w.receiver_socket_drops = 100;
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Receiver]);
        assert_eq!(v.limits[0].frames, 100);
        assert_eq!(v.limits[0].counters, ["socket_drops"]);
        assert!(v.limits[0].evidence.starts_with("socket_drops +100 on the receiver"), "{}", v.limits[0].evidence);
    }

    #[test]
    fn receiver_drops_are_the_receivers() {
        let mut w = paced(1000, 1000, 900);
        w.receiver_imissed = 60;
        w.receiver_rx_nombuf = 40;
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Receiver]);
        assert_eq!(v.limits[0].frames, 100);
        assert_eq!(v.limits[0].counters, ["imissed", "rx_nombuf"]);
    }

    #[test]
    fn a_paced_sender_that_falls_behind_is_the_sender() {
        let mut w = paced(1_000_000, 600_000, 600_000);
        w.ring_full_retries = 12_345;
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Sender]);
        assert_eq!(v.limits[0].frames, 400_000);
        assert!(v.limits[0].evidence.contains("40.00% short"));
        // Under 1% short is pacing noise, not a limit.
        assert_eq!(kinds(&verdict(&paced(1_000_000, 995_000, 995_000))), [LimitKind::None]);
    }

    #[test]
    fn unpaced_lossless_is_the_sender() {
        let w = WindowCounters { accepted: 5_000_000, sender_opackets: 5_000_000, received: Some(5_000_000), ..Default::default() };
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Sender]);
        assert!(v.limits[0].evidence.starts_with("unpaced"));
    }

    #[test]
    fn unexplained_loss_is_the_network() {
        let v = verdict(&paced(10_000, 10_000, 9_000));
        assert_eq!(kinds(&v), [LimitKind::Network]);
        assert_eq!(v.limits[0].frames, 1000);
        // Loss the receiver's counters explain is not the network's.
        let mut w = paced(10_000, 10_000, 9_000);
        w.receiver_imissed = 1000;
        assert_eq!(kinds(&verdict(&w)), [LimitKind::Receiver]);
        // Partly explained: both, the bigger first.
        let mut w = paced(10_000, 10_000, 9_000);
        w.receiver_imissed = 300;
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Network, LimitKind::Receiver]);
        assert_eq!((v.limits[0].frames, v.limits[1].frames), (700, 300));
        assert_eq!(v.label(), "network + receiver");
    }

    #[test]
    fn unexplained_loss_at_a_saturated_receiver_is_the_receivers() {
        let mut w = paced(10_000, 10_000, 4_000);
        w.receiver_busy_pct = Some(99.8);
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Receiver]);
        assert!(v.limits[0].evidence.contains("saturated"));
        // An idle receiver does not take the blame.
        w.receiver_busy_pct = Some(60.0);
        assert_eq!(kinds(&verdict(&w)), [LimitKind::Network]);
        // Nor does a saturated one when nothing was lost.
        let mut w = paced(10_000, 10_000, 10_000);
        w.receiver_busy_pct = Some(100.0);
        assert_eq!(kinds(&verdict(&w)), [LimitKind::None]);
    }

    #[test]
    fn mixed_verdicts_ordered_by_frames() {
        let mut w = paced(1_000_000, 1_000_000, 990_000);
        w.sender_xstats.allowances.insert("pps_allowance_exceeded".into(), 2_000);
        w.receiver_imissed = 10_000;
        w.receiver_xstats.watched.insert("rx_discards_phy".into(), 50);
        let v = verdict(&w);
        assert_eq!(kinds(&v), [LimitKind::Receiver, LimitKind::PpsAllowance, LimitKind::Other]);
        assert_eq!(v.label(), "receiver + pps-allowance (sender) + other: rx_discards_phy (receiver)");
        assert_eq!(v.primary().unwrap().kind, LimitKind::Receiver);
    }

    /// A c8gn sender's ENA Express counters over one window, as the 23.11+
    /// PMD reports them (mode 3: on, UDP included).
    fn srd(x: &mut XstatsByKind, eligible: u64, over_srd: u64, used: u64) {
        use crate::CounterKind::{Express, Level};
        x.insert(Express, "ena_srd_eligible_tx_pkts".into(), eligible);
        x.insert(Express, "ena_srd_tx_pkts".into(), over_srd);
        x.insert(Express, "ena_srd_rx_pkts".into(), 0);
        x.insert(Level, "ena_srd_mode".into(), 3);
        x.insert(Level, "ena_srd_resource_utilization".into(), used);
    }

    #[test]
    fn ena_express_fallback_joins_the_evidence() {
        // Delivered, nothing moved, but a fifth of the eligible packets left SRD.
        let mut w = paced(1_000_000, 1_000_000, 1_000_000);
        srd(&mut w.sender_xstats, 1_000_000, 800_000, 35);
        let v = verdict(&w);
        assert_eq!(v.label(), "none");
        assert!(
            v.limits[0].evidence.contains("200000 of 1000000 eligible packets (20.0%) did not go over SRD on the sender"),
            "{}",
            v.limits[0].evidence
        );
        assert!(v.limits[0].counters.contains(&"ena_srd_tx_pkts".to_string()));
        // Everything over SRD: the evidence says nothing of it.
        let mut w = paced(1_000_000, 1_000_000, 1_000_000);
        srd(&mut w.sender_xstats, 1_000_000, 1_000_000, 35);
        assert_eq!(verdict(&w).limits[0].evidence, "the offered rate was delivered and no counter moved");
        // Silent loss with the receiver's SRD resources used up: both named.
        let mut w = paced(1_000_000, 1_000_000, 900_000);
        srd(&mut w.sender_xstats, 1_000_000, 1_000_000, 20);
        srd(&mut w.receiver_xstats, 0, 0, 100);
        let v = verdict(&w);
        assert_eq!(v.label(), "network");
        assert!(v.limits[0].evidence.contains("the receiver's SRD resources were used up"), "{}", v.limits[0].evidence);
        // An invalid sample stays unknown whatever SRD says.
        w.invalid = Some("x went backwards".into());
        assert!(verdict(&w).label().starts_with("unknown"));
    }

    #[test]
    fn an_invalid_sample_makes_the_verdict_unknown() {
        let mut w = paced(10, 10, 10);
        w.invalid = Some("pps_allowance_exceeded went backwards (500 to 20)".into());
        let v = verdict(&w);
        assert!(v.limits.is_empty());
        assert!(v.label().starts_with("unknown (invalid counter sample: pps_allowance_exceeded went backwards"));
    }

    #[test]
    fn a_verdict_is_classed_by_its_first_limit_or_why_it_has_none() {
        let mut w = paced(1_000_000, 1_000_000, 1_000_000);
        w.sender_xstats.allowances.insert("pps_allowance_exceeded".into(), 2_000);
        w.receiver_xstats.watched.insert("rx_discards_phy".into(), 50);
        let v = verdict(&w);
        assert_eq!(v.label(), "pps-allowance (sender) + other: rx_discards_phy (receiver)");
        assert_eq!(v.class(), VerdictClass::Limit(LimitKind::PpsAllowance));
        assert_eq!(v.class().to_string(), "pps-allowance");
        let mut w = paced(10, 10, 10);
        w.receiver_xstats.watched.insert("rx_discards_phy".into(), 5);
        assert_eq!(verdict(&w).class(), VerdictClass::Limit(LimitKind::Other));
        assert_eq!(verdict(&paced(10, 10, 10)).class().as_str(), "none");
        w.invalid = Some("x went backwards".into());
        assert_eq!(verdict(&w).class(), VerdictClass::Unknown);
        assert_eq!(VerdictClass::of(None), VerdictClass::NotJudged);
        assert_eq!(VerdictClass::of(None).as_str(), "n/a");
        let (s, r) = (VerdictClass::Limit(LimitKind::Sender), VerdictClass::Limit(LimitKind::Receiver));
        assert_eq!(VerdictClass::agreed([s, s]), s);
        assert_eq!(VerdictClass::agreed([s, r, s]), VerdictClass::Mixed);
        assert_eq!(VerdictClass::agreed([]), VerdictClass::NotJudged);
    }

    #[test]
    fn sender_only_runs_still_get_a_verdict() {
        let w = WindowCounters { offered: Some(100), accepted: 100, received: None, ..Default::default() };
        assert_eq!(verdict(&w).label(), "none");
    }

    #[test]
    fn a_sender_limit_found_elsewhere_replaces_none() {
        let mut v = verdict(&WindowCounters { offered: Some(100), accepted: 100, ..Default::default() });
        assert_eq!(v.label(), "none");
        v.add_sender_limit(40, "fell behind".into());
        assert_eq!(v.label(), "sender");
        assert_eq!(v.limits[0].evidence, "fell behind");
        // Joined to a shortfall the counters showed, not listed twice.
        let mut v = verdict(&WindowCounters { offered: Some(100), accepted: 50, ..Default::default() });
        v.add_sender_limit(40, "fell behind".into());
        assert_eq!(v.label(), "sender");
        assert!(v.limits[0].evidence.ends_with("; fell behind"));
        assert_eq!(v.limits[0].frames, 50);
    }

    #[test]
    fn a_sender_on_sockets_is_named_by_its_sendmmsg_calls() {
        let w = WindowCounters { sender_sockets: true, accepted: 1_000, received: Some(1_000), ring_full_retries: 3, ..Default::default() };
        let v = verdict(&w);
        assert_eq!(v.limits[0].counters, vec!["sendmmsg".to_string()]);
        assert!(
            v.limits[0].evidence.contains("cores and sockets took frames") && v.limits[0].evidence.contains("3 sendmmsg calls"),
            "{}",
            v.limits[0].evidence
        );
        let paced = WindowCounters { offered: Some(2_000), ..w };
        let e = &verdict(&paced).limits[0].evidence;
        assert!(e.starts_with("sendmmsg accepted 1000 of the 2000") && e.contains("a full socket buffer or queueing discipline"), "{e}");
        assert!(!e.contains("tx_burst"), "{e}");
    }

    #[test]
    fn gso_buffers_that_left_whole_are_named_by_their_share() {
        let w = WindowCounters {
            sender_sockets: true,
            sender_gso_segments: 32,
            offered: Some(60_128),
            accepted: 60_128,
            received: Some(1_879),
            ..Default::default()
        };
        let e = &verdict(&w).limits[0].evidence;
        assert!(e.contains("96.88% lost is 31/32 of what was sent") && e.ends_with("run again with --no-gso"), "{e}");
        // Another share, or no GSO, or a port: the plain evidence.
        for other in [
            WindowCounters { received: Some(30_000), ..w.clone() },
            WindowCounters { sender_gso_segments: 1, ..w.clone() },
            WindowCounters { sender_sockets: false, ..w.clone() },
        ] {
            assert!(!verdict(&other).limits[0].evidence.contains("GSO"), "{other:?}");
        }
    }
}
