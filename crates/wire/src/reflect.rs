//! Turning a received frame round in place, for drop --reflect: the
//! Ethernet addresses swap, and for UDP over IPv4 the IP addresses and the
//! UDP ports too. Both checksums hold unchanged: they sum 16-bit words, and
//! swapping two fields of the summed header only reorders the sum.

use crate::{ETHERNET_HEADER_LEN, ETHERTYPE_IPV4, IP_PROTO_UDP};

/// Swaps source and destination in `frame` (an Ethernet frame, FCS
/// stripped). Frames too short for a header are left alone; frames that are
/// not UDP over IPv4 get only their MAC addresses swapped.
#[inline]
pub fn reflect_in_place(frame: &mut [u8]) {
    if frame.len() < ETHERNET_HEADER_LEN {
        return;
    }
    let (dst, src) = frame[..12].split_at_mut(6);
    dst.swap_with_slice(src);
    if frame.len() < ETHERNET_HEADER_LEN + 20 + 8 || frame[12..14] != ETHERTYPE_IPV4.to_be_bytes() {
        return;
    }
    let ip = ETHERNET_HEADER_LEN;
    let (ver, ihl) = (frame[ip] >> 4, usize::from(frame[ip] & 0x0f) * 4);
    if ver != 4 || ihl < 20 {
        return;
    }
    let (a, b) = frame[ip + 12..ip + 20].split_at_mut(4);
    a.swap_with_slice(b);
    let udp = ip + ihl;
    if frame[ip + 9] != IP_PROTO_UDP || frame.len() < udp + 8 {
        return;
    }
    let (a, b) = frame[udp..udp + 4].split_at_mut(2);
    a.swap_with_slice(b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_probe, write_frame, FrameSpec, Ipv4Packet, MacAddr, Probe, PROBE_LEN, PROBE_OFFSET};

    #[test]
    fn a_reflected_frame_comes_back_addressed_to_its_sender_with_its_probe() {
        let spec = FrameSpec {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: "10.0.0.1".parse().unwrap(),
            dst_ip: "10.0.0.2".parse().unwrap(),
            src_port: 1024,
            dst_port: 9,
            frame_size: 64,
            ttl: 64,
            run_id: 7,
        };
        let mut f = vec![0u8; spec.len_without_fcs()];
        write_frame(&spec, &mut f).unwrap();
        let probe = Probe { stream: 3, seq: 77, tx_ns: 123_456 };
        probe.stamp((&mut f[PROBE_OFFSET..PROBE_OFFSET + PROBE_LEN]).try_into().unwrap());
        reflect_in_place(&mut f);
        assert_eq!(&f[..6], &[2, 0, 0, 0, 0, 1], "to the sender");
        assert_eq!(&f[6..12], &[2, 0, 0, 0, 0, 2]);
        let ip = Ipv4Packet::new_checked(&f[14..]).unwrap();
        assert!(ip.checksum_valid(), "the header checksum still holds");
        assert_eq!(&f[26..30], &[10, 0, 0, 2]);
        assert_eq!(&f[30..34], &[10, 0, 0, 1]);
        assert_eq!(&f[34..38], &[0, 9, 4, 0], "ports swapped");
        assert_eq!(parse_probe(&f), Some(probe));
        // Twice is the identity.
        let mut g = f.clone();
        reflect_in_place(&mut g);
        reflect_in_place(&mut g);
        assert_eq!(f, g);
    }

    #[test]
    fn short_and_foreign_frames_are_safe() {
        let mut tiny = [1u8, 2, 3];
        reflect_in_place(&mut tiny);
        assert_eq!(tiny, [1, 2, 3]);
        let mut arp = [0u8; 42];
        arp[..6].copy_from_slice(&[0xff; 6]);
        arp[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 9]);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        reflect_in_place(&mut arp);
        assert_eq!(&arp[..6], &[2, 0, 0, 0, 0, 9]);
        assert_eq!(&arp[6..12], &[0xff; 6]);
    }
}
