//! Rewriting a capture's addresses for the path under test: a cloud
//! network (EC2 among them) drops frames that carry another host's MAC or
//! IP, so each frame gets the sender's and receiver's addresses, and the
//! checksums those addresses feed are computed again.

use std::net::Ipv4Addr;

use wire::MacAddr;

use crate::frame::{FlowKind, FrameInfo};
use crate::Capture;

/// The addresses every frame gets. IPv4 addresses apply to IPv4 frames;
/// other frames get only the MACs.
#[derive(Debug, Clone, Copy)]
pub struct Rewrite {
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    /// Written into the IPv4 identification of frames that will carry a
    /// probe (they are unfragmented datagrams, where it is free; RFC 6864),
    /// as blast's own frames carry it (wire::run_id).
    pub run_id: u16,
}

/// What the rewrite did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewriteStats {
    /// Frames whose MACs were rewritten (all).
    pub l2: u64,
    /// IPv4 frames whose addresses and header checksum were rewritten.
    pub l3: u64,
    /// UDP and TCP checksums computed again.
    pub l4: u64,
    /// UDP checksums set to 0 ("none", legal over IPv4): the frames a
    /// probe will be stamped into, whose payload changes per send.
    pub l4_zeroed: u64,
    /// UDP and TCP checksums updated for the new addresses alone (RFC 1624:
    /// the pseudo-header's words swapped in the old sum), where the whole
    /// datagram is not in the frame: the first fragment of a fragmented
    /// datagram (its checksum covers every fragment's bytes, which the
    /// rewrite leaves as they were), or a datagram captured truncated.
    pub l4_incremental: u64,
    /// IPv4 frames whose L4 checksum could not be rewritten (its field not
    /// captured): sent with the old one, now wrong for the new addresses.
    pub l4_left: u64,
}

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
            let Some(ip) = info.ip_at else { continue };
            let old_addrs = rewrite_ipv4(f, ip, &info, r);
            s.l3 += 1;
            rewrite_l4(f, ip, &info, &old_addrs, &mut s);
        }
        s
    }
}

/// The IPv4 header at `ip`: its addresses, with room for a probe its
/// ident (the run id), and its checksum computed again. Returns the
/// addresses it had, which an L4 checksum may need swapped out.
fn rewrite_ipv4(f: &mut [u8], ip: usize, info: &FrameInfo, r: &Rewrite) -> [u8; 8] {
    let ihl = usize::from(f[ip] & 0x0f) * 4;
    let old_addrs: [u8; 8] = f[ip + 12..ip + 20].try_into().expect("an IPv4 header's addresses");
    f[ip + 12..ip + 16].copy_from_slice(&r.src_ip.octets());
    f[ip + 16..ip + 20].copy_from_slice(&r.dst_ip.octets());
    if info.probe_room {
        f[ip + 4..ip + 6].copy_from_slice(&r.run_id.to_be_bytes());
    }
    f[ip + 10..ip + 12].fill(0);
    let sum = wire::checksum(&f[ip..ip + ihl]);
    f[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
    old_addrs
}

/// The UDP or TCP checksum after the IPv4 header at `ip` was rewritten:
/// computed again over a whole datagram, zeroed where a probe goes,
/// updated for the addresses alone where the datagram is not all there,
/// or left (counted) where its field was not captured.
fn rewrite_l4(f: &mut [u8], ip: usize, info: &FrameInfo, old_addrs: &[u8; 8], s: &mut RewriteStats) {
    let ihl = usize::from(f[ip] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([f[ip + 2], f[ip + 3]]));
    let l4 = ip + ihl;
    let (proto, at) = match (info.kind, f[ip + 9]) {
        (FlowKind::Ipv4Udp, _) => (17u8, 6),
        (FlowKind::Ipv4Tcp, _) => (6u8, 16),
        // Only the first fragment holds the L4 header; the others
        // carry nothing the addresses feed.
        (FlowKind::Ipv4Fragment, p @ (17 | 6)) if u16::from_be_bytes([f[ip + 6], f[ip + 7]]) & 0x1fff == 0 => {
            (p, if p == 17 { 6 } else { 16 })
        }
        _ => return,
    };
    let whole = info.kind != FlowKind::Ipv4Fragment && total >= ihl && ip + total <= f.len() && l4 + at + 2 <= ip + total;
    if !whole {
        match f.get(l4 + at..l4 + at + 2) {
            Some(c) if l4 + at + 2 <= ip + total => {
                let old = u16::from_be_bytes([c[0], c[1]]);
                // UDP's 0 is "no checksum": it stays so.
                if !(proto == 17 && old == 0) {
                    let mut new = incremental(old, old_addrs, &f[ip + 12..ip + 20]);
                    if proto == 17 && new == 0 {
                        new = 0xffff;
                    }
                    f[l4 + at..l4 + at + 2].copy_from_slice(&new.to_be_bytes());
                }
                s.l4_incremental += 1;
            }
            _ => s.l4_left += 1,
        }
        return;
    }
    if info.probe_room {
        f[l4 + at..l4 + at + 2].fill(0);
        s.l4_zeroed += 1;
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

    fn rw() -> Rewrite {
        Rewrite {
            src_mac: MacAddr([2, 0, 0, 0, 0, 0xaa]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 0xbb]),
            src_ip: Ipv4Addr::new(10, 1, 0, 1),
            dst_ip: Ipv4Addr::new(10, 1, 0, 2),
            run_id: 0x4242,
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
        assert_eq!(s, RewriteStats { l2: 4, l3: 3, l4: 2, l4_zeroed: 1, l4_incremental: 0, l4_left: 0 });
        for i in 0..4 {
            let f = c.frame(i);
            assert_eq!(&f[0..6], &rw().dst_mac.0);
            assert_eq!(&f[6..12], &rw().src_mac.0);
        }
        // The probe frame: addresses, run id, header checksum, UDP checksum 0.
        let f = c.frame(0);
        assert_eq!(&f[26..30], &[10, 1, 0, 1]);
        assert_eq!(&f[30..34], &[10, 1, 0, 2]);
        assert_eq!(wire::run_id(f), 0x4242);
        assert_eq!(wire::checksum(&f[14..34]), 0);
        assert_eq!(&f[40..42], &[0, 0]);
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
        assert_eq!((s.l3, s.l4, s.l4_incremental, s.l4_left, s.l4_zeroed), (2, 0, 1, 0, 0));
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

    #[test]
    fn a_known_udp_checksum() {
        // RFC 1071's example words, as a UDP "segment" with a zero pseudo-header.
        let seg = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let sum = l4_checksum(&[0; 4], &[0; 4], 0, &seg);
        // Pseudo-header adds the length (8): 0xddf2 + 8 folded, complemented.
        assert_eq!(sum, !(0xddf2u16 + 8));
    }
}
