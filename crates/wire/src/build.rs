//! Building whole frames from a description.

use std::fmt;
use std::net::Ipv4Addr;

use crate::{
    EthernetFrame, Ipv4Packet, MacAddr, Probe, UdpDatagram, ETHERTYPE_IPV4, FCS_LEN, HEADERS_LEN, IPV4_HEADER_LEN, IP_PROTO_UDP, MIN_FRAME,
    PROBE_LEN, PROBE_OFFSET,
};

/// What one UDP-over-IPv4 frame looks like. `frame_size` counts the FCS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
    pub frame_size: usize,
    pub ttl: u8,
    /// The sender's run id, in the IPv4 identification field (see `run_id`).
    pub run_id: u16,
}

impl Default for FrameSpec {
    fn default() -> Self {
        FrameSpec {
            src_mac: MacAddr([0x02, 0, 0, 0, 0, 0x01]),
            dst_mac: MacAddr([0x02, 0, 0, 0, 0, 0x02]),
            // RFC 2544's benchmarking range.
            src_ip: Ipv4Addr::new(198, 18, 0, 1),
            dst_ip: Ipv4Addr::new(198, 18, 0, 2),
            src_port: 1024,
            dst_port: 9,
            frame_size: MIN_FRAME,
            ttl: 64,
            run_id: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// Below the 64-byte Ethernet minimum.
    TooSmall(usize),
    /// IPv4's total length field cannot describe it.
    TooLarge(usize),
    /// The output buffer cannot hold the frame without its FCS.
    BufferTooShort { need: usize, have: usize },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooSmall(n) => {
                write!(f, "frame size {n} is below the Ethernet minimum of {MIN_FRAME} bytes (FCS included)")
            }
            FrameError::TooLarge(n) => write!(f, "frame size {n} is beyond what IPv4 can carry (65553 bytes)"),
            FrameError::BufferTooShort { need, have } => write!(f, "buffer of {have} bytes cannot hold a {need}-byte frame"),
        }
    }
}

impl std::error::Error for FrameError {}

impl FrameSpec {
    /// Bytes the frame occupies in memory: the frame size less the FCS.
    pub fn len_without_fcs(&self) -> usize {
        self.frame_size - FCS_LEN
    }

    pub fn validate(&self) -> Result<(), FrameError> {
        if self.frame_size < MIN_FRAME {
            return Err(FrameError::TooSmall(self.frame_size));
        }
        if self.frame_size - FCS_LEN - crate::ETHERNET_HEADER_LEN > usize::from(u16::MAX) {
            return Err(FrameError::TooLarge(self.frame_size));
        }
        Ok(())
    }
}

/// Writes the frame `spec` describes into the start of `out`: headers with a
/// valid IPv4 checksum, a UDP checksum of zero (legal over IPv4, and it stays
/// right when the sender rewrites ports and probe fields per packet), a probe
/// header for stream 0, sequence 0, and a zero-filled rest. Returns the
/// number of bytes written (the frame size less the FCS).
pub fn write_frame(spec: &FrameSpec, out: &mut [u8]) -> Result<usize, FrameError> {
    spec.validate()?;
    let len = spec.len_without_fcs();
    if out.len() < len {
        return Err(FrameError::BufferTooShort { need: len, have: out.len() });
    }
    let frame = &mut out[..len];
    frame.fill(0);
    let mut eth = EthernetFrame::new_checked(&mut *frame).expect("length checked");
    eth.set_dst(spec.dst_mac);
    eth.set_src(spec.src_mac);
    eth.set_ethertype(ETHERTYPE_IPV4);

    let ip_len = len - crate::ETHERNET_HEADER_LEN;
    let mut ip = Ipv4Packet::new_checked(eth.payload_mut()).expect("length checked");
    ip.set_version_and_minimal_header();
    ip.set_total_len(ip_len as u16);
    ip.set_ident(spec.run_id);
    ip.set_dont_fragment();
    ip.set_ttl(spec.ttl);
    ip.set_protocol(IP_PROTO_UDP);
    ip.set_src(spec.src_ip);
    ip.set_dst(spec.dst_ip);
    ip.fill_checksum();

    let mut udp = UdpDatagram::new_checked(ip.payload_mut()).expect("length checked");
    udp.set_src_port(spec.src_port);
    udp.set_dst_port(spec.dst_port);
    udp.set_len((ip_len - IPV4_HEADER_LEN) as u16);
    udp.set_checksum(0);

    debug_assert!(len >= HEADERS_LEN + PROBE_LEN);
    let probe: &mut [u8; PROBE_LEN] = (&mut frame[PROBE_OFFSET..PROBE_OFFSET + PROBE_LEN]).try_into().unwrap();
    Probe { stream: 0, seq: 0, tx_ns: 0 }.write(probe);
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-byte frame written out by hand, field by field.
    #[rustfmt::skip]
    const REFERENCE_64: [u8; 60] = [
        // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, IPv4
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x08, 0x00,
        // IPv4: v4 IHL5, tos 0, total 46, id 0, DF, ttl 64, UDP,
        0x45, 0x00, 0x00, 0x2e, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
        // checksum 0xae97 (worked by hand below), 198.18.0.1 -> 198.18.0.2
        0xae, 0x97, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02,
        // UDP: 1024 -> 9, length 26, checksum 0 (none)
        0x04, 0x00, 0x00, 0x09, 0x00, 0x1a, 0x00, 0x00,
        // probe: "BDP1", stream 0, seq 0, tx tsc 0
        0x42, 0x44, 0x50, 0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn reference_checksum_worked_by_hand() {
        // 4500 + 002e + 0000 + 4000 + 4011 + c612 + 0001 + c612 + 0002
        let sum: u32 = [0x4500u32, 0x002e, 0x0000, 0x4000, 0x4011, 0xc612, 0x0001, 0xc612, 0x0002].iter().sum();
        let folded = (sum & 0xffff) + (sum >> 16);
        assert_eq!(sum, 0x2_5166);
        assert_eq!(!(folded as u16), 0xae97);
    }

    #[test]
    fn built_frame_matches_reference_byte_by_byte() {
        let mut out = [0xaau8; 80];
        let n = write_frame(&FrameSpec::default(), &mut out).unwrap();
        assert_eq!(n, 60);
        for (i, (got, want)) in out[..60].iter().zip(REFERENCE_64.iter()).enumerate() {
            assert_eq!(got, want, "byte {i}");
        }
        assert_eq!(out[60], 0xaa, "nothing written past the frame");
    }

    #[test]
    fn large_frames_have_consistent_lengths_and_checksum() {
        for size in [65, 128, 1500, 1518, 9000, 9018] {
            let spec = FrameSpec { frame_size: size, ..FrameSpec::default() };
            let mut out = vec![0u8; size];
            let n = write_frame(&spec, &mut out).unwrap();
            assert_eq!(n, size - 4);
            let ip = Ipv4Packet::new_checked(&out[14..n]).unwrap();
            assert_eq!(usize::from(ip.total_len()), n - 14);
            assert!(ip.checksum_valid());
            let udp = UdpDatagram::new_checked(ip.payload()).unwrap();
            assert_eq!(usize::from(udp.len()), n - 34);
            assert!(crate::parse_probe(&out[..n]).is_some());
        }
    }

    #[test]
    fn sizes_out_of_range_are_refused() {
        let mut out = vec![0u8; 70000];
        let small = FrameSpec { frame_size: 63, ..FrameSpec::default() };
        assert_eq!(write_frame(&small, &mut out), Err(FrameError::TooSmall(63)));
        let huge = FrameSpec { frame_size: 65554, ..FrameSpec::default() };
        assert_eq!(write_frame(&huge, &mut out), Err(FrameError::TooLarge(65554)));
        let spec = FrameSpec::default();
        assert_eq!(write_frame(&spec, &mut out[..10]), Err(FrameError::BufferTooShort { need: 60, have: 10 }));
    }
}
