//! The verdict on a socket receiver (the kernel's UDP path,
//! crates/udpsock): which of the kernel's counters explain the frames
//! lost. Loss itself comes from the probes (sent less received); the
//! counters only say where. Under UDP GRO the kernel drops whole buffers of
//! up to 64 datagrams and counts each once, so a drop count is no frame
//! count there: the frames are the loss, the count the reason.

use serde::{Deserialize, Serialize};

use crate::limit::{Limit, LimitKind, Side, Verdict};

/// The most datagrams one GRO buffer holds (the kernel's UDP_GRO_CNT_MAX).
const GRO_MAX_SEGMENTS: u64 = 64;

/// What the kernel counted around a socket receiver over a run or window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketCounters {
    /// Frames the sender sent that no lane received.
    pub lost: u64,
    /// The receive sockets' own drops (`/proc/net/udp`'s `drops`): a full
    /// receive buffer, mostly. Buffers, not frames, under GRO.
    pub socket_drops: u64,
    /// GRO was on: one drop may be a buffer of many frames.
    pub gro: bool,
    /// Growth of the namespace's UDP counters (other sockets' too).
    pub rcvbuf_errors: u64,
    pub no_ports: u64,
    pub in_csum_errors: u64,
    pub mem_errors: u64,
    /// The receiving interface's own drops (`/proc/net/dev`).
    pub interface_drops: u64,
    /// Frames dropped at a full per-CPU input backlog (`/proc/net/softnet_stat`,
    /// the host's), which the kernel counts in the device's rx_dropped too.
    pub backlog_drops: u64,
}

/// What a window's verdict needs of a socket receiver beyond its drops
/// (`WindowCounters::receiver_udp`): whether GRO was on, and the growth of
/// the receiving namespace's UDP counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UdpReceiver {
    pub gro: bool,
    pub rcvbuf_errors: u64,
    pub no_ports: u64,
    pub in_csum_errors: u64,
    pub mem_errors: u64,
    /// The host's input backlog drops (softnet_stat).
    #[serde(default)]
    pub backlog_drops: u64,
}

impl UdpReceiver {
    /// With the frames lost and the sockets' and interface's drops.
    pub fn counters(&self, lost: u64, socket_drops: u64, interface_drops: u64) -> SocketCounters {
        SocketCounters {
            lost,
            socket_drops,
            gro: self.gro,
            rcvbuf_errors: self.rcvbuf_errors,
            no_ports: self.no_ports,
            in_csum_errors: self.in_csum_errors,
            mem_errors: self.mem_errors,
            interface_drops,
            backlog_drops: self.backlog_drops,
        }
    }
}

/// The receiver-side verdict on a socket receiver, the limit with the most
/// frames first; `none` only where nothing was lost.
pub fn socket_verdict(c: &SocketCounters) -> Verdict {
    let mut limits = kernel_limits(c);
    let left = c.lost - limits.iter().map(|l| l.frames).sum::<u64>();
    if left > 0 {
        limits.push(Limit {
            kind: LimitKind::Network,
            side: Side::Both,
            counters: vec!["probe_lost".into()],
            delta: left,
            frames: left,
            evidence: format!("{left} frames lost and no counter of the receiving kernel explains them: lost before this host"),
        });
    }
    if limits.is_empty() {
        limits.push(Limit {
            kind: LimitKind::None,
            side: Side::Receiver,
            counters: Vec::new(),
            delta: 0,
            frames: 0,
            evidence: "nothing lost: every frame sent was received".into(),
        });
    }
    limits.sort_by_key(|l| std::cmp::Reverse(l.frames));
    Verdict { limits, invalid: None }
}

/// The receiving kernel's counters that explain the frames lost, each
/// credited with no more frames than are left unexplained (the frames they
/// explain add up to `c.lost` at most); in the order they are credited.
pub(crate) fn kernel_limits(c: &SocketCounters) -> Vec<Limit> {
    let mut left = c.lost;
    let mut limits = Vec::new();
    // The socket's drops first: they are the receive sockets' own count.
    if c.socket_drops > 0 && left > 0 {
        let frames = if c.gro { c.socket_drops.saturating_mul(GRO_MAX_SEGMENTS).min(left) } else { c.socket_drops.min(left) };
        left -= frames;
        let unit = if c.gro {
            format!(
                "{frames} frames lost in {} buffers the receive sockets dropped (UDP GRO: the kernel drops and counts a buffer of up to 64 frames as one)",
                c.socket_drops
            )
        } else {
            format!("{frames} frames dropped by a full socket buffer (the receive sockets' drops +{})", c.socket_drops)
        };
        limits.push(Limit {
            kind: LimitKind::Receiver,
            side: Side::Receiver,
            counters: vec!["socket_drops".into(), "RcvbufErrors".into()],
            delta: c.socket_drops,
            frames,
            evidence: format!(
                "{unit}, RcvbufErrors +{} in the namespace: raise the receive buffer (net.core.rmem_max, SO_RCVBUF) or add queues",
                c.rcvbuf_errors
            ),
        });
    }
    for (name, delta, why) in [
        (
            "NoPorts",
            c.no_ports,
            "datagrams arrived for a UDP port no socket was bound to (does the receiver listen on the port the sender sends to?)",
        ),
        ("InCsumErrors", c.in_csum_errors, "datagrams whose UDP checksum failed"),
        ("MemErrors", c.mem_errors, "the kernel could not charge the socket's memory (net.ipv4.udp_mem)"),
        (
            "softnet_dropped",
            c.backlog_drops,
            "a CPU's input backlog was full (/proc/net/softnet_stat): raise net.core.netdev_max_backlog, or spread receive processing over more CPUs (RPS, more queues)",
        ),
        // A backlog drop is in the device's rx_dropped too: only the rest is the interface's own.
        ("interface_drops", c.interface_drops.saturating_sub(c.backlog_drops), "the receiving interface dropped frames it took off the wire"),
    ] {
        if delta > 0 && left > 0 {
            let frames = delta.min(left);
            left -= frames;
            limits.push(Limit {
                kind: LimitKind::Receiver,
                side: Side::Receiver,
                counters: vec![name.into()],
                delta,
                frames,
                evidence: format!("{name} +{delta}: {why}"),
            });
        }
    }
    limits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_gro_each_socket_drop_is_a_frame_and_is_named_receiver() {
        // A run here: 851 of 20,000 dropped by a socket whose lane the host held back.
        let v = socket_verdict(&SocketCounters { lost: 851, socket_drops: 851, rcvbuf_errors: 851, ..Default::default() });
        let l = &v.limits[0];
        assert_eq!((l.kind, l.frames, v.limits.len()), (LimitKind::Receiver, 851, 1));
        assert!(
            l.evidence.starts_with("851 frames dropped by a full socket buffer (the receive sockets' drops +851), RcvbufErrors +851"),
            "{}",
            l.evidence
        );
    }

    #[test]
    fn under_gro_the_frames_are_the_loss_and_the_count_is_buffers() {
        // Loopback, 1518 B: 186,076 frames lost in 4,229 dropped buffers of 44.
        let c = SocketCounters { lost: 186_076, socket_drops: 4_229, gro: true, rcvbuf_errors: 4_229, ..Default::default() };
        let v = socket_verdict(&c);
        assert_eq!((v.limits[0].frames, v.limits[0].delta, v.limits.len()), (186_076, 4_229, 1));
        assert!(v.limits[0].evidence.contains("186076 frames lost in 4229 buffers"), "{}", v.limits[0].evidence);
        // The same drops without GRO would explain only 4,229 frames: the rest is unexplained.
        let v = socket_verdict(&SocketCounters { gro: false, ..c });
        assert_eq!((v.limits[0].kind, v.limits[0].frames), (LimitKind::Network, 181_847));
        // And a buffer holds 64 frames at most: 2 drops explain 128 of 200.
        let v = socket_verdict(&SocketCounters { lost: 200, socket_drops: 2, gro: true, ..Default::default() });
        assert_eq!(v.limits.iter().map(|l| (l.kind, l.frames)).collect::<Vec<_>>(), [(LimitKind::Receiver, 128), (LimitKind::Network, 72)]);
    }

    #[test]
    fn a_full_backlog_is_named_and_not_counted_again_as_the_interfaces() {
        let v = socket_verdict(&SocketCounters { lost: 500, backlog_drops: 300, interface_drops: 320, ..Default::default() });
        let named: Vec<_> = v.limits.iter().map(|l| (l.counters[0].as_str(), l.frames)).collect();
        assert_eq!(named, [("softnet_dropped", 300), ("probe_lost", 180), ("interface_drops", 20)]);
        assert!(v.limits[0].evidence.contains("netdev_max_backlog"), "{}", v.limits[0].evidence);
    }

    #[test]
    fn no_loss_is_none_whatever_other_sockets_counted_and_unexplained_loss_is_never_none() {
        let v = socket_verdict(&SocketCounters { rcvbuf_errors: 12, no_ports: 3, ..Default::default() });
        assert_eq!((v.limits[0].kind, v.limits.len()), (LimitKind::None, 1));
        let v = socket_verdict(&SocketCounters { lost: 40, no_ports: 30, ..Default::default() });
        assert_eq!(v.limits.iter().map(|l| (l.kind, l.frames)).collect::<Vec<_>>(), [(LimitKind::Receiver, 30), (LimitKind::Network, 10)]);
        assert!(v.limits[0].evidence.starts_with("NoPorts +30"));
    }
}
