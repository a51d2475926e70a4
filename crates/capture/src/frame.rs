//! What a captured frame is, read from its headers: the kind of traffic,
//! where its IPv4 header sits (behind any VLAN tags), its flow, and
//! whether a probe fits.

use wire::{ETHERNET_HEADER_LEN, PROBE_LEN, PROBE_OFFSET};

/// 802.1Q, 802.1ad (QinQ's outer tag) and the older 0x9100 outer tag.
const ETHERTYPES_VLAN: [u16; 3] = [0x8100, 0x88a8, 0x9100];
/// Tags read before giving up: QinQ is two; a longer stack is not a real path's.
const MAX_TAGS: usize = 4;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_ARP: u16 = 0x0806;
pub(crate) const PROTO_ICMP: u8 = 1;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

/// The kinds a capture's frames are counted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlowKind {
    Ipv4Udp,
    Ipv4Tcp,
    /// IPv4 with another protocol (ICMP, GRE, ...).
    Ipv4Other,
    /// An IPv4 fragment: its L4 header is not (all) here.
    Ipv4Fragment,
    /// ICMP over IPv4 reporting an error (unreachable, time exceeded,
    /// parameter problem, source quench, redirect): it quotes the IPv4
    /// header of the datagram it is about.
    Ipv4IcmpError,
    /// Ethertype IPv4 but no whole IPv4 header (too short, a wrong version
    /// or header length): only its MACs are rewritten.
    Ipv4Malformed,
    /// IPv6: its addresses rewritten when IPv6 addresses are given, else
    /// only its MACs.
    Ipv6,
    /// ARP: only its MACs are rewritten (the addresses in its body are kept).
    Arp,
    /// Another ethertype (LLDP, MPLS, ...): only its MACs are rewritten.
    OtherEthertype,
}

impl FlowKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FlowKind::Ipv4Udp => "ipv4 udp",
            FlowKind::Ipv4Tcp => "ipv4 tcp",
            FlowKind::Ipv4Other => "ipv4 other",
            FlowKind::Ipv4Fragment => "ipv4 fragment",
            FlowKind::Ipv4IcmpError => "ipv4 icmp error",
            FlowKind::Ipv4Malformed => "ipv4 malformed",
            FlowKind::Ipv6 => "ipv6",
            FlowKind::Arp => "arp",
            FlowKind::OtherEthertype => "other ethertype",
        }
    }

    /// Whether the rewrite gives this kind the new IPv4 addresses.
    pub fn is_ipv4(self) -> bool {
        matches!(self, FlowKind::Ipv4Udp | FlowKind::Ipv4Tcp | FlowKind::Ipv4Other | FlowKind::Ipv4Fragment | FlowKind::Ipv4IcmpError)
    }
}

/// ICMP types whose message quotes the offending datagram's IPv4 header
/// (RFC 792): destination unreachable, source quench, redirect, time
/// exceeded, parameter problem.
pub(crate) fn is_icmp_error(icmp_type: u8) -> bool {
    matches!(icmp_type, 3 | 4 | 5 | 11 | 12)
}

/// One frame's headers, as far as replay needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameInfo {
    pub kind: FlowKind,
    /// Where the IPv4 or IPv6 header starts (after any VLAN tags).
    pub ip_at: Option<usize>,
    /// A hash of the flow, the same for both directions of a conversation,
    /// so spreading frames over queues by it keeps each flow's order.
    pub flow: u64,
    /// A UDP datagram over IPv4 with no options and no VLAN tag, whose
    /// payload holds a probe: blast stamps one there (wire::PROBE_OFFSET).
    pub probe_room: bool,
}

impl FrameInfo {
    /// Reads the headers of an Ethernet frame (FCS not included). Frames
    /// too short for what their headers claim are counted by their
    /// outermost header that fits.
    pub fn of(f: &[u8]) -> FrameInfo {
        let (l2, ethertype) = behind_tags(f);
        let non_ip = |kind| FrameInfo {
            kind,
            ip_at: None,
            flow: hash(&[f.get(..12).unwrap_or(f), &ethertype.unwrap_or(0).to_be_bytes()]),
            probe_room: false,
        };
        match ethertype {
            Some(ETHERTYPE_IPV4) => {}
            Some(ETHERTYPE_IPV6) => return FrameInfo { ip_at: Some(l2), ..non_ip(FlowKind::Ipv6) },
            Some(ETHERTYPE_ARP) => return non_ip(FlowKind::Arp),
            _ => return non_ip(FlowKind::OtherEthertype),
        }
        let Some(ip) = f.get(l2..l2 + 20) else { return non_ip(FlowKind::Ipv4Malformed) };
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        if ip[0] >> 4 != 4 || ihl < 20 || f.len() < l2 + ihl {
            return non_ip(FlowKind::Ipv4Malformed);
        }
        let proto = ip[9];
        let (src, dst) = (&ip[12..16], &ip[16..20]);
        let fragment = u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff != 0;
        let l4 = l2 + ihl;
        let ports = match proto {
            PROTO_UDP | PROTO_TCP if !fragment => f.get(l4..l4 + 4),
            _ => None,
        };
        let icmp_error = proto == PROTO_ICMP && f.get(l4).is_some_and(|&t| is_icmp_error(t));
        let kind = match (proto, fragment, ports.is_some()) {
            (_, true, _) => FlowKind::Ipv4Fragment,
            (PROTO_UDP, _, true) => FlowKind::Ipv4Udp,
            (PROTO_TCP, _, true) => FlowKind::Ipv4Tcp,
            _ if icmp_error => FlowKind::Ipv4IcmpError,
            _ => FlowKind::Ipv4Other,
        };
        // Both directions of a conversation hash alike: the endpoints in order.
        let (a, b) = match ports {
            Some(p) => ([src, &p[0..2]].concat(), [dst, &p[2..4]].concat()),
            None => (src.to_vec(), dst.to_vec()),
        };
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let flow = hash(&[&lo, &hi, &[proto]]);
        let probe_room = kind == FlowKind::Ipv4Udp && l2 == ETHERNET_HEADER_LEN && ihl == 20 && f.len() >= PROBE_OFFSET + PROBE_LEN && {
            let udp_len = usize::from(u16::from_be_bytes([f[l4 + 4], f[l4 + 5]]));
            udp_len >= wire::UDP_HEADER_LEN + PROBE_LEN
        };
        FrameInfo { kind, ip_at: Some(l2), flow, probe_room }
    }
}

/// Where the header after the Ethernet header and any VLAN tags starts,
/// and its ethertype (None: the frame ends first).
fn behind_tags(f: &[u8]) -> (usize, Option<u16>) {
    let mut l2 = ETHERNET_HEADER_LEN;
    let mut ethertype = be16(f, 12);
    for _ in 0..MAX_TAGS {
        match ethertype {
            Some(t) if ETHERTYPES_VLAN.contains(&t) => {
                l2 += 4;
                ethertype = be16(f, l2 - 2);
            }
            _ => break,
        }
    }
    (l2, ethertype)
}

fn be16(f: &[u8], at: usize) -> Option<u16> {
    f.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]))
}

/// FNV-1a over the parts: stable across runs and machines.
fn hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wire::{FrameSpec, MacAddr};

    pub fn udp_frame(size: usize, src_port: u16, dst_port: u16) -> Vec<u8> {
        let spec = FrameSpec {
            frame_size: size,
            src_port,
            dst_port,
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            ..FrameSpec::default()
        };
        let mut f = vec![0u8; spec.len_without_fcs()];
        wire::write_frame(&spec, &mut f).unwrap();
        f
    }

    #[test]
    fn a_udp_frame_has_probe_room_and_its_flow_is_symmetric() {
        let f = udp_frame(64, 1000, 2000);
        let i = FrameInfo::of(&f);
        assert_eq!(i.kind, FlowKind::Ipv4Udp);
        assert_eq!(i.ip_at, Some(14));
        assert!(i.probe_room);
        // The reply: addresses and ports swapped.
        let mut r = f.clone();
        let (src, dst) = (r[26..30].to_vec(), r[30..34].to_vec());
        r[26..30].copy_from_slice(&dst);
        r[30..34].copy_from_slice(&src);
        r[34..36].copy_from_slice(&2000u16.to_be_bytes());
        r[36..38].copy_from_slice(&1000u16.to_be_bytes());
        assert_eq!(FrameInfo::of(&r).flow, i.flow);
        assert_ne!(FrameInfo::of(&udp_frame(64, 1001, 2000)).flow, i.flow);
    }

    #[test]
    fn tcp_fragments_vlan_and_others() {
        let mut tcp = udp_frame(128, 1, 2);
        tcp[23] = PROTO_TCP;
        let i = FrameInfo::of(&tcp);
        assert_eq!(i.kind, FlowKind::Ipv4Tcp);
        assert!(!i.probe_room);
        let mut frag = udp_frame(128, 1, 2);
        frag[20] = 0x20; // more fragments
        assert_eq!(FrameInfo::of(&frag).kind, FlowKind::Ipv4Fragment);
        let mut arp = udp_frame(64, 1, 2);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(FrameInfo::of(&arp).kind, FlowKind::Arp);
        let mut v6 = udp_frame(80, 1, 2);
        v6[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
        assert_eq!(FrameInfo::of(&v6).kind, FlowKind::Ipv6);
        let mut lldp = udp_frame(64, 1, 2);
        lldp[12..14].copy_from_slice(&0x88ccu16.to_be_bytes());
        assert_eq!(FrameInfo::of(&lldp).kind, FlowKind::OtherEthertype);
        // One VLAN tag: still UDP, but the probe's fixed offset is not its payload.
        let f = udp_frame(128, 1, 2);
        let mut v = f[..12].to_vec();
        v.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
        v.extend_from_slice(&f[12..]);
        let i = FrameInfo::of(&v);
        assert_eq!((i.kind, i.ip_at, i.probe_room), (FlowKind::Ipv4Udp, Some(18), false));
        // QinQ (802.1ad outer, 802.1Q inner), and two stacked 802.1Q tags.
        for outer in [0x88a8u16, 0x8100] {
            let mut q = f[..12].to_vec();
            q.extend_from_slice(&outer.to_be_bytes());
            q.extend_from_slice(&[0x00, 0x05, 0x81, 0x00, 0x00, 0x07]);
            q.extend_from_slice(&f[12..]);
            let i = FrameInfo::of(&q);
            assert_eq!((i.kind, i.ip_at, i.probe_room), (FlowKind::Ipv4Udp, Some(22), false), "outer tag {outer:#x}");
        }
        // Too short for its IPv4 header: counted as a malformed IPv4 frame.
        assert_eq!(FrameInfo::of(&f[..20]).kind, FlowKind::Ipv4Malformed);
        assert_eq!(FrameInfo::of(&[]).kind, FlowKind::OtherEthertype);
    }

    #[test]
    fn an_icmp_error_is_told_from_other_icmp() {
        let mut f = udp_frame(100, 1, 2);
        f[23] = PROTO_ICMP;
        f[34] = 3; // destination unreachable
        assert_eq!(FrameInfo::of(&f).kind, FlowKind::Ipv4IcmpError);
        f[34] = 8; // echo request
        assert_eq!(FrameInfo::of(&f).kind, FlowKind::Ipv4Other);
    }
}
