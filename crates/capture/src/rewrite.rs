//! Rewriting a capture's addresses for the path under test: a cloud
//! network (EC2 among them) drops frames that carry another host's MAC or
//! IP, so each frame gets the sender's and receiver's addresses, and the
//! checksums those addresses feed are computed again. IPv4 is found behind
//! any VLAN tags (802.1Q, QinQ); an ICMP error's quoted header gets the
//! addresses too. Frames of other kinds keep their L3 and are counted by kind.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use wire::MacAddr;

use crate::frame::{is_icmp_error, FlowKind, FrameInfo};
use crate::Capture;

/// The addresses every frame gets. IPv4 addresses apply to IPv4 frames;
/// other frames get only the MACs.
#[derive(Debug, Clone, Copy)]
pub struct Rewrite {
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    /// The IPv6 source and destination; without them IPv6 frames keep
    /// their addresses (only their MACs change).
    pub ipv6: Option<(Ipv6Addr, Ipv6Addr)>,
}

/// What the rewrite did. It zeroes no checksum: the frames a probe is
/// stamped into are readied apart (`Capture::ready_for_probes`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewriteStats {
    /// Frames whose MACs were rewritten (all).
    pub l2: u64,
    /// IPv4 frames whose addresses and header checksum were rewritten.
    pub l3: u64,
    /// Of those, frames whose IPv4 header is behind VLAN tags (802.1Q, QinQ).
    pub l3_tagged: u64,
    /// UDP and TCP checksums computed again.
    pub l4: u64,
    /// UDP and TCP checksums updated for the new addresses alone (RFC 1624:
    /// the pseudo-header's words swapped in the old sum), where the whole
    /// datagram is not in the frame: the first fragment of a fragmented
    /// datagram (its checksum covers every fragment's bytes, which the
    /// rewrite leaves as they were), or a datagram captured truncated.
    pub l4_incremental: u64,
    /// IPv4 and IPv6 frames whose L4 checksum could not be rewritten (its
    /// field not captured, or a UDP-over-IPv6 datagram not whole captured
    /// with checksum 0): sent with the old one, now wrong for the new addresses.
    pub l4_left: u64,
    /// IPv6 frames whose addresses were rewritten (UDP, TCP or ICMPv6 right
    /// after the IPv6 header), their checksums following.
    pub l3_ipv6: u64,
    /// ICMP errors whose quoted IPv4 header was rewritten (the addresses
    /// mirrored, as sent by the receiver to this port) with its checksums.
    pub icmp_quoted: u64,
    /// Frames whose L3 was left as captured (only their MACs rewritten), by
    /// kind: `ipv6` (no IPv6 addresses given), `ipv6 malformed` (its header
    /// not whole), `ipv6 extension headers`
    /// (or another next header than UDP, TCP, ICMPv6: where its L4 checksum
    /// is was not looked for), `arp`, `other ethertype`, `ipv4 malformed`,
    /// and `ipv4 icmp error quote` (an ICMP error whose quoted header is not
    /// whole). An ICMPv6 error's quoted header is kept too (`ipv6 icmp error quote`).
    pub kept: BTreeMap<&'static str, u64>,
}

/// The kind counted for an ICMP error whose quoted IPv4 header is not whole.
pub const ICMP_QUOTE_KEPT: &str = "ipv4 icmp error quote";

impl Capture {
    /// Rewrites every frame's addresses and checksums in place.
    pub fn rewrite(&mut self, r: &Rewrite) -> RewriteStats {
        let mut s = RewriteStats::default();
        for i in 0..self.len() {
            let info = *self.info(i);
            let f = self.frame_mut(i);
            f[0..6].copy_from_slice(&r.dst_mac.0);
            f[6..12].copy_from_slice(&r.src_mac.0);
            s.l2 += 1;
            if let (FlowKind::Ipv6, Some(ip), Some(addrs)) = (info.kind, info.ip_at, r.ipv6) {
                rewrite_ipv6(f, ip, addrs, &mut s);
                continue;
            }
            let Some(ip) = info.ip_at.filter(|_| info.kind.is_ipv4()) else {
                *s.kept.entry(info.kind.as_str()).or_insert(0) += 1;
                continue;
            };
            let old_addrs = rewrite_ipv4(f, ip, r);
            s.l3 += 1;
            s.l3_tagged += u64::from(ip > wire::ETHERNET_HEADER_LEN);
            rewrite_l4(f, ip, &info, &old_addrs, &mut s);
            if info.kind == FlowKind::Ipv4IcmpError {
                match rewrite_icmp_error(f, ip, r) {
                    true => s.icmp_quoted += 1,
                    false => *s.kept.entry(ICMP_QUOTE_KEPT).or_insert(0) += 1,
                }
            }
        }
        s
    }
}

/// The IPv4 header at `ip`: its addresses and its checksum computed again.
/// Returns the addresses it had, which an L4 checksum may need swapped out.
fn rewrite_ipv4(f: &mut [u8], ip: usize, r: &Rewrite) -> [u8; 8] {
    let old_addrs: [u8; 8] = f[ip + 12..ip + 20].try_into().expect("an IPv4 header's addresses");
    f[ip + 12..ip + 16].copy_from_slice(&r.src_ip.octets());
    f[ip + 16..ip + 20].copy_from_slice(&r.dst_ip.octets());
    set_ipv4_checksum(f, ip);
    old_addrs
}

/// Computes the checksum of the IPv4 header at `ip` (options included) again.
pub(crate) fn set_ipv4_checksum(f: &mut [u8], ip: usize) {
    let ihl = usize::from(f[ip] & 0x0f) * 4;
    f[ip + 10..ip + 12].fill(0);
    let sum = wire::checksum(&f[ip..ip + ihl]);
    f[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
}

/// Where a UDP or TCP header keeps its checksum.
fn checksum_at(proto: u8) -> Option<usize> {
    match proto {
        17 => Some(6),
        6 => Some(16),
        _ => None,
    }
}

/// The UDP or TCP checksum after the IPv4 header at `ip` was rewritten:
/// computed again over a whole datagram, updated for the addresses alone
/// where the datagram is not all there, or left (counted) where its field
/// was not captured.
fn rewrite_l4(f: &mut [u8], ip: usize, info: &FrameInfo, old_addrs: &[u8; 8], s: &mut RewriteStats) {
    let ihl = usize::from(f[ip] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([f[ip + 2], f[ip + 3]]));
    let l4 = ip + ihl;
    let proto = f[ip + 9];
    let at = match (info.kind, checksum_at(proto)) {
        (FlowKind::Ipv4Udp | FlowKind::Ipv4Tcp, Some(at)) => at,
        // Only the first fragment holds the L4 header; the others
        // carry nothing the addresses feed.
        (FlowKind::Ipv4Fragment, Some(at)) if u16::from_be_bytes([f[ip + 6], f[ip + 7]]) & 0x1fff == 0 => at,
        _ => return,
    };
    let whole = info.kind != FlowKind::Ipv4Fragment && total >= ihl && ip + total <= f.len() && l4 + at + 2 <= ip + total;
    if !whole {
        if l4 + at + 2 <= (ip + total).min(f.len()) {
            let new_addrs: [u8; 8] = f[ip + 12..ip + 20].try_into().expect("an IPv4 header's addresses");
            update_l4_checksum(f, l4 + at, proto, old_addrs, &new_addrs);
            s.l4_incremental += 1;
        } else {
            s.l4_left += 1;
        }
        return;
    }
    f[l4 + at..l4 + at + 2].fill(0);
    let mut sum = l4_checksum(&f[ip + 12..ip + 16], &f[ip + 16..ip + 20], proto, &f[l4..ip + total]);
    if proto == 17 && sum == 0 {
        sum = 0xffff; // 0 means "no checksum" for UDP
    }
    f[l4 + at..l4 + at + 2].copy_from_slice(&sum.to_be_bytes());
    s.l4 += 1;
}

/// The UDP or TCP checksum field at `c` updated for addresses `old` become
/// `new` (RFC 1624). UDP's 0 is "no checksum": it stays so.
fn update_l4_checksum(f: &mut [u8], c: usize, proto: u8, old: &[u8], new: &[u8]) {
    let was = u16::from_be_bytes([f[c], f[c + 1]]);
    if proto == 17 && was == 0 {
        return;
    }
    let mut now = incremental(was, old, new);
    if proto == 17 && now == 0 {
        now = 0xffff;
    }
    f[c..c + 2].copy_from_slice(&now.to_be_bytes());
}

/// The kinds counted when an IPv6 frame is not (all) rewritten.
pub const IPV6_EXTENSIONS_KEPT: &str = "ipv6 extension headers";
pub const ICMPV6_QUOTE_KEPT: &str = "ipv6 icmp error quote";
pub const IPV6_MALFORMED_KEPT: &str = "ipv6 malformed";

/// The IPv6 header at `ip` given `addrs`, when UDP, TCP or ICMPv6 follows
/// it directly (each covers the addresses in its checksum: computed over a
/// whole datagram, else updated for the addresses, else counted left);
/// another next header (extension headers) is kept and counted.
fn rewrite_ipv6(f: &mut [u8], ip: usize, (src, dst): (Ipv6Addr, Ipv6Addr), s: &mut RewriteStats) {
    let l4 = ip + 40;
    if f.len() < l4 {
        *s.kept.entry(IPV6_MALFORMED_KEPT).or_insert(0) += 1;
        return;
    }
    let at = match f[ip + 6] {
        17 => 6,
        6 => 16,
        58 => 2,
        _ => {
            *s.kept.entry(IPV6_EXTENSIONS_KEPT).or_insert(0) += 1;
            return;
        }
    };
    let proto = f[ip + 6];
    let end = l4 + usize::from(u16::from_be_bytes([f[ip + 4], f[ip + 5]]));
    let old: [u8; 32] = f[ip + 8..ip + 40].try_into().expect("an IPv6 header's addresses");
    f[ip + 8..ip + 24].copy_from_slice(&src.octets());
    f[ip + 24..ip + 40].copy_from_slice(&dst.octets());
    s.l3_ipv6 += 1;
    if proto == 58 && f.get(l4).is_some_and(|&t| t < 128) {
        *s.kept.entry(ICMPV6_QUOTE_KEPT).or_insert(0) += 1;
    }
    let c = l4 + at;
    if end <= f.len() && c + 2 <= end {
        f[c..c + 2].fill(0);
        let mut sum = l4_checksum_v6(&f[ip + 8..ip + 40], proto, &f[l4..end]);
        // 0 is "no checksum", which IPv6 forbids for UDP (RFC 8200): its complement.
        if sum == 0 && proto == 17 {
            sum = 0xffff;
        }
        f[c..c + 2].copy_from_slice(&sum.to_be_bytes());
        s.l4 += 1;
    } else if c + 2 <= end.min(f.len()) && !(proto == 17 && f[c..c + 2] == [0, 0]) {
        let new: [u8; 32] = f[ip + 8..ip + 40].try_into().expect("an IPv6 header's addresses");
        update_l4_checksum(f, c, proto, &old, &new);
        s.l4_incremental += 1;
    } else {
        s.l4_left += 1;
    }
}

/// The Internet checksum of an L4 segment over IPv6 (`addrs`: source and
/// destination), its pseudo-header (RFC 8200 8.1) included.
fn l4_checksum_v6(addrs: &[u8], proto: u8, seg: &[u8]) -> u16 {
    let mut pseudo = [0u8; 40];
    pseudo[0..32].copy_from_slice(addrs);
    pseudo[32..36].copy_from_slice(&(seg.len() as u32).to_be_bytes());
    pseudo[39] = proto;
    let a = u32::from(!wire::checksum(&pseudo));
    let b = u32::from(!wire::checksum(seg));
    let mut sum = a + b;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An ICMP error's quoted datagram (at 8 bytes into the ICMP message of
/// the IPv4 header at `ip`) was sent by the host the error goes to: in the
/// rewritten capture, the receiver to this port. Its addresses become
/// those, its header checksum and (where quoted) its UDP or TCP checksum
/// follow, then the ICMP checksum over the message. False, and nothing
/// changed, when the quoted IPv4 header is not whole.
fn rewrite_icmp_error(f: &mut [u8], ip: usize, r: &Rewrite) -> bool {
    let ihl = usize::from(f[ip] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([f[ip + 2], f[ip + 3]]));
    let (icmp, end) = (ip + ihl, (ip + total).min(f.len()));
    let q = icmp + 8;
    let Some(&v) = f.get(q) else { return false };
    let qihl = usize::from(v & 0x0f) * 4;
    if !is_icmp_error(f[icmp]) || v >> 4 != 4 || qihl < 20 || q + qihl > end {
        return false;
    }
    // The words this changes, for the ICMP checksum when the message is cut short.
    let quoted_l4 = checksum_at(f[q + 9]).map(|at| q + qihl + at).filter(|&c| c + 2 <= end);
    let changed = q..quoted_l4.map_or(q + qihl, |c| c + 2);
    let before = f[changed.clone()].to_vec();
    let old_addrs = f[q + 12..q + 20].to_vec();
    let new_addrs = [r.dst_ip.octets(), r.src_ip.octets()].concat();
    f[q + 12..q + 20].copy_from_slice(&new_addrs);
    set_ipv4_checksum(f, q);
    if let Some(c) = quoted_l4 {
        let proto = f[q + 9];
        update_l4_checksum(f, c, proto, &old_addrs, &new_addrs);
    }
    if ip + total <= f.len() && total >= ihl + 4 {
        f[icmp + 2..icmp + 4].fill(0);
        let sum = wire::checksum(&f[icmp..ip + total]);
        f[icmp + 2..icmp + 4].copy_from_slice(&sum.to_be_bytes());
    } else if icmp + 4 <= end {
        // Cut short: the message's checksum updated for the words that changed.
        let was = u16::from_be_bytes([f[icmp + 2], f[icmp + 3]]);
        let now = incremental(was, &before, &f[changed]);
        f[icmp + 2..icmp + 4].copy_from_slice(&now.to_be_bytes());
    }
    true
}

/// A checksum `sum` over data whose words `old` became `new` (RFC 1624,
/// eqn. 3: HC' = ~(~HC + ~m + m')), without the rest of the data.
fn incremental(sum: u16, old: &[u8], new: &[u8]) -> u16 {
    let mut acc = u32::from(!sum);
    for (o, n) in old.chunks_exact(2).zip(new.chunks_exact(2)) {
        acc += u32::from(!u16::from_be_bytes([o[0], o[1]])) + u32::from(u16::from_be_bytes([n[0], n[1]]));
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The Internet checksum of an L4 segment over IPv4, pseudo-header included.
fn l4_checksum(src: &[u8], dst: &[u8], proto: u8, seg: &[u8]) -> u16 {
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(src);
    pseudo[4..8].copy_from_slice(dst);
    pseudo[9] = proto;
    pseudo[10..12].copy_from_slice(&(seg.len() as u16).to_be_bytes());
    let fold = |mut s: u32| {
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s
    };
    // wire::checksum gives the complement of each part's folded sum.
    let a = u32::from(!wire::checksum(&pseudo));
    let b = u32::from(!wire::checksum(seg));
    !(fold(a + b) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::tests::udp_frame;
    use crate::read::tests::pcap;
    use std::collections::BTreeMap;

    fn rw() -> Rewrite {
        Rewrite {
            src_mac: MacAddr([2, 0, 0, 0, 0, 0xaa]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 0xbb]),
            src_ip: Ipv4Addr::new(10, 1, 0, 1),
            dst_ip: Ipv4Addr::new(10, 1, 0, 2),
            ipv6: None,
        }
    }

    /// Whether an IPv4 frame's header and L4 checksums verify.
    fn verifies(f: &[u8], proto: u8, at: usize) -> (bool, bool) {
        let ip = &f[14..34];
        let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        let seg = &f[34..14 + total];
        let l4 = l4_checksum_with(&ip[12..16], &ip[16..20], proto, seg, at);
        (wire::checksum(ip) == 0, l4)
    }

    fn l4_checksum_with(src: &[u8], dst: &[u8], proto: u8, seg: &[u8], at: usize) -> bool {
        // A segment whose checksum field is right sums to 0xffff with its pseudo-header.
        let mut copy = seg.to_vec();
        let got = u16::from_be_bytes([copy[at], copy[at + 1]]);
        copy[at..at + 2].fill(0);
        let want = l4_checksum(src, dst, proto, &copy);
        got == want || (proto == 17 && want == 0 && got == 0xffff)
    }

    #[test]
    fn addresses_and_checksums_are_rewritten() {
        let mut tcp = udp_frame(200, 1234, 80);
        tcp[23] = 6;
        // A payload byte to make the sums non-trivial.
        tcp[60] = 0x5a;
        let mut vlan = udp_frame(128, 5, 6);
        vlan.splice(12..12, [0x81, 0x00, 0x00, 0x07]);
        let frames = vec![
            (0, udp_frame(64, 1, 2)),
            (1, tcp),
            (2, vlan),
            (3, {
                let mut arp = udp_frame(64, 1, 2);
                arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
                arp
            }),
        ];
        let mut c = Capture::parse(pcap(&frames)).unwrap();
        let s = c.rewrite(&rw());
        let kept = BTreeMap::from([("arp", 1)]);
        assert_eq!(s, RewriteStats { l2: 4, l3: 3, l3_tagged: 1, l4: 3, kept, ..RewriteStats::default() });
        for i in 0..4 {
            let f = c.frame(i);
            assert_eq!(&f[0..6], &rw().dst_mac.0);
            assert_eq!(&f[6..12], &rw().src_mac.0);
        }
        // The frame with probe room: addresses, header checksum, and its UDP
        // checksum computed (the rewrite zeroes none: probes are readied apart).
        let f = c.frame(0);
        assert_eq!(&f[26..30], &[10, 1, 0, 1]);
        assert_eq!(&f[30..34], &[10, 1, 0, 2]);
        assert_eq!(wire::run_id(f), wire::run_id(&frames[0].1), "the identification is the capture's");
        assert_eq!(verifies(f, 17, 6), (true, true));
        assert_ne!(&f[40..42], &[0, 0]);
        // TCP: both checksums verify.
        assert_eq!(verifies(c.frame(1), 6, 16), (true, true));
        // VLAN-tagged UDP: its addresses behind the tag, its UDP checksum computed.
        let v = c.frame(2);
        assert_eq!(&v[30..34], &[10, 1, 0, 1]);
        assert_eq!(wire::checksum(&v[18..38]), 0);
        let untagged: Vec<u8> = [&v[..12], &v[16..]].concat();
        assert_eq!(verifies(&untagged, 17, 6), (true, true));
        // ARP: only the MACs.
        assert_eq!(&c.frame(3)[12..], &frames[3].1[12..]);
    }

    /// A 2000-byte UDP datagram as two IPv4 fragments (1480 + 528 bytes of
    /// it), its checksum right for 192.0.2.1 -> 192.0.2.2.
    fn fragmented_datagram() -> Vec<Vec<u8>> {
        let (src, dst) = ([192, 0, 2, 1], [192, 0, 2, 2]);
        let mut udp = vec![0u8; 2008];
        udp[0..2].copy_from_slice(&5353u16.to_be_bytes());
        udp[2..4].copy_from_slice(&9u16.to_be_bytes());
        udp[4..6].copy_from_slice(&2008u16.to_be_bytes());
        for (i, b) in udp[8..].iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        let sum = l4_checksum(&src, &dst, 17, &udp);
        udp[6..8].copy_from_slice(&sum.to_be_bytes());
        [(0usize, 1480usize, true), (1480, 528, false)]
            .iter()
            .map(|&(off, len, more)| {
                let mut f = vec![0u8; 14 + 20 + len];
                f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
                let ip = &mut f[14..34];
                ip[0] = 0x45;
                ip[2..4].copy_from_slice(&((20 + len) as u16).to_be_bytes());
                ip[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
                let frag = (off / 8) as u16 | if more { 0x2000 } else { 0 };
                ip[6..8].copy_from_slice(&frag.to_be_bytes());
                (ip[8], ip[9]) = (64, 17);
                ip[12..16].copy_from_slice(&src);
                ip[16..20].copy_from_slice(&dst);
                f[34..].copy_from_slice(&udp[off..off + len]);
                f
            })
            .collect()
    }

    /// Sums 16-bit words the plain way (an independent check of the
    /// datagram's checksum): a right one makes pseudo-header + segment 0xffff.
    fn plain_sum(src: &[u8], dst: &[u8], seg: &[u8]) -> u16 {
        let mut words: Vec<u32> = Vec::new();
        let mut pseudo = vec![0u8, 17];
        pseudo.extend_from_slice(&(seg.len() as u16).to_be_bytes());
        for part in [src, dst, &pseudo, seg] {
            for w in part.chunks(2) {
                words.push(u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0)));
            }
        }
        let mut s: u32 = words.iter().sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    #[test]
    fn a_fragmented_datagram_keeps_a_right_checksum_for_its_new_addresses() {
        let frames: Vec<(u64, Vec<u8>)> = fragmented_datagram().into_iter().enumerate().map(|(i, f)| (i as u64, f)).collect();
        let before: Vec<u8> = frames.iter().flat_map(|(_, f)| f[34..].to_vec()).collect();
        assert_eq!(plain_sum(&[192, 0, 2, 1], &[192, 0, 2, 2], &before), 0xffff, "the datagram as made is right");
        let mut c = Capture::parse(pcap(&frames)).unwrap();
        let s = c.rewrite(&rw());
        // The first fragment's checksum updated; the second holds no L4 header.
        assert_eq!((s.l3, s.l4, s.l4_incremental, s.l4_left), (2, 0, 1, 0));
        let after: Vec<u8> = (0..2).flat_map(|i| c.frame(i)[34..].to_vec()).collect();
        assert_eq!(plain_sum(&[10, 1, 0, 1], &[10, 1, 0, 2], &after), 0xffff, "reassembled, it verifies with the new addresses");
        for i in 0..2 {
            assert_eq!(wire::checksum(&c.frame(i)[14..34]), 0, "fragment {i}'s header checksum");
            assert_eq!(&c.frame(i)[18..20], &[0x12, 0x34], "a fragment keeps its datagram's identification");
        }
    }

    #[test]
    fn a_truncated_capture_gets_the_incremental_update_and_a_lost_field_is_left() {
        let mut whole = fragmented_datagram()[0].clone();
        // As one unfragmented datagram captured short: 2008 bytes said, 1480 here.
        whole[14 + 6..14 + 8].fill(0);
        whole[14 + 2..14 + 4].copy_from_slice(&2028u16.to_be_bytes());
        let mut tiny = whole[..14 + 20 + 4].to_vec(); // the checksum field itself not captured
        tiny[14 + 2..14 + 4].copy_from_slice(&2028u16.to_be_bytes());
        let mut c = Capture::parse(pcap(&[(0, whole), (1, tiny)])).unwrap();
        let s = c.rewrite(&rw());
        assert_eq!((s.l4_incremental, s.l4_left), (1, 1));
    }

    /// `f` with VLAN tags of these ethertypes (VLAN id 5, 7, ...) after its MACs.
    fn tagged(f: &[u8], tpids: &[u16]) -> Vec<u8> {
        let mut v = f[..12].to_vec();
        for (i, t) in tpids.iter().enumerate() {
            v.extend_from_slice(&t.to_be_bytes());
            v.extend_from_slice(&(5 + 2 * i as u16).to_be_bytes());
        }
        v.extend_from_slice(&f[12..]);
        v
    }

    #[test]
    fn ipv4_behind_qinq_and_stacked_tags_is_rewritten() {
        let mut inner = udp_frame(200, 7, 8);
        inner[100] = 0x77;
        let frames: Vec<(u64, Vec<u8>)> = [&[0x88a8u16, 0x8100][..], &[0x8100, 0x8100], &[0x9100, 0x8100]]
            .iter()
            .enumerate()
            .map(|(i, t)| (i as u64, tagged(&inner, t)))
            .collect();
        let mut c = Capture::parse(pcap(&frames)).unwrap();
        let s = c.rewrite(&rw());
        assert_eq!((s.l3, s.l3_tagged, s.l4, s.kept.len()), (3, 3, 3, 0));
        for (i, (_, was)) in frames.iter().enumerate() {
            let f = c.frame(i);
            assert_eq!(&f[12..22], &was[12..22], "the tags are kept");
            let untagged: Vec<u8> = [&f[..12], &f[20..]].concat();
            assert_eq!(&untagged[26..34], &[10, 1, 0, 1, 10, 1, 0, 2]);
            assert_eq!(verifies(&untagged, 17, 6), (true, true), "frame {i}");
        }
    }

    #[test]
    fn frames_not_rewritten_are_counted_by_kind() {
        let with_type = |t: u16| {
            let mut f = udp_frame(80, 1, 2);
            f[12..14].copy_from_slice(&t.to_be_bytes());
            f
        };
        let mut short_v4 = udp_frame(64, 1, 2);
        short_v4[14] = 0x65; // version 6 under ethertype IPv4
        let frames = vec![
            (0, with_type(0x86dd)),
            (1, tagged(&with_type(0x86dd), &[0x8100])),
            (2, with_type(0x0806)),
            (3, with_type(0x88cc)),
            (4, short_v4),
        ];
        let mut c = Capture::parse(pcap(&frames)).unwrap();
        let s = c.rewrite(&rw());
        let kept = BTreeMap::from([("ipv6", 2), ("arp", 1), ("other ethertype", 1), ("ipv4 malformed", 1)]);
        // Without IPv6 addresses to give, IPv6 keeps its own.
        assert_eq!(s, RewriteStats { l2: 5, kept, ..RewriteStats::default() });
        for (i, (_, f)) in frames.iter().enumerate() {
            assert_eq!(&c.frame(i)[12..], &f[12..], "frame {i}: only the MACs");
        }
    }

    /// An ICMP port unreachable from 192.0.2.2 to 192.0.2.1 quoting the
    /// UDP datagram 192.0.2.1 -> 192.0.2.2 that caused it (its IPv4 header
    /// and `quoted` bytes of it: 8 is RFC 792's minimum).
    fn icmp_unreachable(quoted: usize) -> Vec<u8> {
        let orig = fragmented_datagram()[0].clone();
        let mut q = orig[14..34 + quoted].to_vec();
        q[2..4].copy_from_slice(&2028u16.to_be_bytes());
        q[6..8].fill(0);
        q[10..12].fill(0);
        let sum = wire::checksum(&q[..20]);
        q[10..12].copy_from_slice(&sum.to_be_bytes());
        let mut f = vec![0u8; 14 + 20 + 8];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f.extend_from_slice(&q);
        let total = (f.len() - 14) as u16;
        let ip = &mut f[14..34];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        (ip[8], ip[9]) = (64, 1);
        ip[12..16].copy_from_slice(&[192, 0, 2, 2]);
        ip[16..20].copy_from_slice(&[192, 0, 2, 1]);
        set_ipv4_checksum(&mut f, 14);
        (f[34], f[35]) = (3, 3);
        let sum = wire::checksum(&f[34..]);
        f[36..38].copy_from_slice(&sum.to_be_bytes());
        f
    }

    #[test]
    fn an_icmp_errors_quoted_header_is_rewritten_with_its_checksums() {
        let cut = icmp_unreachable(8);
        let mut short = cut.clone();
        short.truncate(14 + 20 + 8 + 10); // the quoted header itself cut short
        let mut c = Capture::parse(pcap(&[(0, cut.clone()), (1, icmp_unreachable(300)), (2, short)])).unwrap();
        let s = c.rewrite(&rw());
        assert_eq!((s.l3, s.icmp_quoted), (3, 2));
        assert_eq!(s.kept, BTreeMap::from([(ICMP_QUOTE_KEPT, 1)]));
        for i in 0..2 {
            let f = c.frame(i);
            assert_eq!(wire::checksum(&f[14..34]), 0, "frame {i}: outer header");
            assert_eq!(wire::checksum(&f[34..]), 0, "frame {i}: the ICMP checksum over the message");
            let q = &f[42..62];
            assert_eq!(&q[12..20], &[10, 1, 0, 2, 10, 1, 0, 1], "frame {i}: the quoted datagram went receiver -> sender");
            assert_eq!(wire::checksum(q), 0, "frame {i}: quoted header checksum");
        }
        // The quoted UDP checksum, updated for the mirrored addresses, is the
        // one the whole datagram would have had with them.
        let orig = fragmented_datagram();
        let mut udp: Vec<u8> = orig.iter().flat_map(|f| f[34..].to_vec()).collect();
        udp[6..8].copy_from_slice(&c.frame(0)[68..70]);
        assert_eq!(plain_sum(&[10, 1, 0, 2], &[10, 1, 0, 1], &udp), 0xffff);
        // The ICMP checksum of a message captured cut short: updated for the words changed.
        let mut trunc = icmp_unreachable(300);
        let total = trunc.len() - 14;
        trunc.truncate(14 + 20 + 8 + 20 + 40);
        let mut c = Capture::parse(pcap(&[(0, trunc)])).unwrap();
        let mut full = Capture::parse(pcap(&[(0, icmp_unreachable(300))])).unwrap();
        assert_eq!(c.rewrite(&rw()).icmp_quoted, 1);
        full.rewrite(&rw());
        assert_eq!(&c.frame(0)[36..38], &full.frame(0)[36..38], "as computed over the whole {total}-byte message");
    }

    #[test]
    fn a_known_udp_checksum() {
        // RFC 1071's example words, as a UDP "segment" with a zero pseudo-header.
        let seg = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let sum = l4_checksum(&[0; 4], &[0; 4], 0, &seg);
        // Pseudo-header adds the length (8): 0xddf2 + 8 folded, complemented.
        assert_eq!(sum, !(0xddf2u16 + 8));
    }

    /// UDP (or `proto` with its checksum at `at`) over IPv6, fd00::1 ->
    /// fd00::2, with a right checksum: `payload` bytes after an 8-byte L4 header.
    fn ipv6_frame(proto: u8, at: usize, payload: usize) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 40 + 8 + payload];
        f[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
        f[14] = 0x60;
        f[18..20].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        (f[20], f[21]) = (proto, 64);
        f[22..38].copy_from_slice(&"fd00::1".parse::<Ipv6Addr>().unwrap().octets());
        f[38..54].copy_from_slice(&"fd00::2".parse::<Ipv6Addr>().unwrap().octets());
        f[54..58].copy_from_slice(&[0x13, 0x88, 0x13, 0x89]);
        match proto {
            17 => f[58..60].copy_from_slice(&((8 + payload) as u16).to_be_bytes()),
            58 => (f[54], f[55]) = (128, 0), // echo request
            _ => {}
        }
        for (i, b) in f[62..].iter_mut().enumerate() {
            *b = (i * 11 + 5) as u8;
        }
        let sum = l4_checksum_v6(&f[22..54], proto, &f[54..]);
        f[54 + at..56 + at].copy_from_slice(&sum.to_be_bytes());
        f
    }

    /// Whether an IPv6 frame's L4 checksum verifies (the segment with its
    /// pseudo-header sums to 0xffff), by plain word sums.
    fn v6_verifies(f: &[u8], proto: u8) -> bool {
        let seg = &f[54..];
        let mut pseudo = f[22..54].to_vec();
        pseudo.extend_from_slice(&(seg.len() as u32).to_be_bytes());
        pseudo.extend_from_slice(&[0, 0, 0, proto]);
        let mut s: u64 = 0;
        for part in [&pseudo[..], seg] {
            for w in part.chunks(2) {
                s += u64::from(w[0]) << 8 | u64::from(*w.get(1).unwrap_or(&0));
            }
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s == 0xffff
    }

    #[test]
    fn ipv6_addresses_are_rewritten_when_given_with_their_checksums() {
        let mut r = rw();
        let (src, dst): (Ipv6Addr, Ipv6Addr) = ("2001:db8::a".parse().unwrap(), "2001:db8::b".parse().unwrap());
        r.ipv6 = Some((src, dst));
        let mut zero_udp = ipv6_frame(17, 6, 40);
        zero_udp[60..62].fill(0); // captured with 0 (illegal over IPv6): computed now
        let mut hop_by_hop = ipv6_frame(17, 6, 40);
        hop_by_hop[20] = 0;
        let mut unreachable = ipv6_frame(58, 2, 40);
        unreachable[54] = 1; // an ICMPv6 error: its quote is kept
        unreachable[56..58].fill(0);
        let sum = l4_checksum_v6(&unreachable[22..54], 58, &unreachable[54..]);
        unreachable[56..58].copy_from_slice(&sum.to_be_bytes());
        let mut truncated = ipv6_frame(17, 6, 400);
        truncated.truncate(14 + 40 + 8 + 100);
        let frames = vec![
            (0, ipv6_frame(17, 6, 40)),
            (1, ipv6_frame(6, 16, 60)),
            (2, ipv6_frame(58, 2, 30)),
            (3, zero_udp),
            (4, unreachable),
            (5, hop_by_hop.clone()),
            (6, truncated),
            (7, tagged(&ipv6_frame(17, 6, 40), &[0x88a8, 0x8100])),
        ];
        let mut c = Capture::parse(pcap(&frames)).unwrap();
        let s = c.rewrite(&r);
        let kept = BTreeMap::from([(IPV6_EXTENSIONS_KEPT, 1), (ICMPV6_QUOTE_KEPT, 1)]);
        assert_eq!(s, RewriteStats { l2: 8, l3_ipv6: 7, l4: 6, l4_incremental: 1, kept, ..RewriteStats::default() });
        for (i, proto) in [(0, 17), (1, 6), (2, 58), (3, 17), (4, 58)] {
            let f = c.frame(i);
            assert_eq!(&f[22..38], &src.octets(), "frame {i}");
            assert_eq!(&f[38..54], &dst.octets(), "frame {i}");
            assert!(v6_verifies(f, proto), "frame {i}: its checksum over the new pseudo-header");
        }
        assert_ne!(&c.frame(3)[60..62], &[0, 0], "UDP over IPv6 never 0");
        assert_eq!(&c.frame(5)[14..], &hop_by_hop[14..], "extension headers: kept whole");
        // The truncated datagram: updated for the addresses, as computed over it whole.
        let mut whole = Capture::parse(pcap(&[(0, ipv6_frame(17, 6, 400))])).unwrap();
        whole.rewrite(&r);
        assert_eq!(&c.frame(6)[60..62], &whole.frame(0)[60..62]);
        // Behind QinQ: the IPv6 header 8 bytes on.
        let q = c.frame(7);
        let untagged: Vec<u8> = [&q[..12], &q[20..]].concat();
        assert_eq!(&untagged[22..38], &src.octets());
        assert!(v6_verifies(&untagged, 17));
    }
}
