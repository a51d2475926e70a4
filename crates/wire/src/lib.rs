//! Typed, zero-copy views over the bytes of the frames blastdrop sends: an
//! Ethernet header, an IPv4 header, a UDP header and blastdrop's probe
//! header, plus the code that builds a whole frame from a [`FrameSpec`].
//!
//! Frame sizes in this crate follow the users' convention: `frame_size`
//! includes the 4-byte FCS that the NIC appends, so a "64-byte frame" is 60
//! bytes in the mbuf.

mod addr;
mod build;
mod ethernet;
mod ipv4;
mod mix;
mod probe;
mod reflect;
mod udp;

pub use addr::{MacAddr, ParseMacError};
pub use build::{write_frame, FrameError, FrameSpec};
pub use ethernet::{EthernetFrame, ETHERNET_HEADER_LEN, ETHERTYPE_IPV4};
pub use ipv4::{checksum, Ipv4Packet, IPV4_HEADER_LEN, IP_PROTO_UDP};
pub use mix::{MixError, SizeMix, MAX_CYCLE, SIMPLE_IMIX};
pub use probe::{parse_probe, parse_probe_and_run, run_id, Probe, PROBE_LEN, PROBE_MAGIC, PROBE_MAGIC_KERNEL, PROBE_OFFSET};
pub use reflect::reflect_in_place;
pub use udp::{UdpDatagram, UDP_HEADER_LEN};

/// The Ethernet frame check sequence the NIC appends to every frame.
pub const FCS_LEN: usize = 4;
/// Preamble, start-of-frame delimiter and minimum inter-frame gap: the bytes
/// every frame costs on the wire beyond its own.
pub const WIRE_OVERHEAD: usize = 20;
/// The smallest legal Ethernet frame, FCS included.
pub const MIN_FRAME: usize = 64;
/// Headers of the UDP-over-IPv4 frames blastdrop sends.
pub const HEADERS_LEN: usize = ETHERNET_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN;

/// Bits per second on the wire for `packets` frames totalling `frame_bytes`
/// (FCS included), counting preamble and inter-frame gap.
pub fn wire_bits(packets: u64, frame_bytes: u64) -> u64 {
    (frame_bytes + packets * WIRE_OVERHEAD as u64) * 8
}

#[cfg(test)]
mod tests {
    #[test]
    fn wire_bits_counts_preamble_and_gap() {
        // 14.88 Mpps of 64-byte frames is 10 Gb/s on the wire.
        assert_eq!(super::wire_bits(14_880_952, 14_880_952 * 64), 9_999_999_744);
    }
}
