//! blastdrop's probe header: the first 18 bytes of every UDP payload it
//! sends, so the receiver can count loss, reordering and duplicates per
//! stream and (later) latency.
//!
//! ```text
//!  0               4       6               10                              18
//! +---------------+-------+---------------+-------------------------------+
//! | magic "BDP1"  |stream | sequence      | TX timestamp (sender's TSC)   |
//! +---------------+-------+---------------+-------------------------------+
//! ```
//! All fields big-endian. 18 bytes is exactly what a 64-byte frame leaves
//! after its Ethernet, IPv4 and UDP headers and FCS, so every legal frame
//! carries a probe. The sequence is 32 bits and wraps; the receiver extends
//! it (`seqtrack`).

use crate::{ETHERNET_HEADER_LEN, ETHERTYPE_IPV4, HEADERS_LEN, IP_PROTO_UDP, UDP_HEADER_LEN};

/// "BDP1": blastdrop probe, version 1, in a frame whose IPv4
/// identification field holds its sender's run id ([`run_id`]).
pub const PROBE_MAGIC: u32 = 0x4244_5031;
/// "BDPK": the same probe in a datagram the kernel's UDP stack built
/// (crates/udpsock): the kernel writes the identification field itself, a
/// count that moves with every datagram, so it is no run id; a receiver
/// counts such frames under run 0, "no run id" (no blast run picks 0).
pub const PROBE_MAGIC_KERNEL: u32 = 0x4244_504b;
pub const PROBE_LEN: usize = 18;
/// Where the probe starts in a frame whose IPv4 header has no options.
pub const PROBE_OFFSET: usize = HEADERS_LEN;

mod field {
    use std::ops::Range;
    pub const MAGIC: Range<usize> = 0..4;
    pub const STREAM: Range<usize> = 4..6;
    pub const SEQ: Range<usize> = 6..10;
    pub const TX_NS: Range<usize> = 10..18;
}

/// A decoded probe header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub stream: u16,
    pub seq: u32,
    /// When the frame's burst was sent: the sender's wall clock
    /// (CLOCK_REALTIME, nanoseconds since the Unix epoch, read from its TSC).
    pub tx_ns: u64,
}

impl Probe {
    /// Writes the whole header, magic included.
    pub fn write(&self, out: &mut [u8; PROBE_LEN]) {
        out[field::MAGIC].copy_from_slice(&PROBE_MAGIC.to_be_bytes());
        self.stamp(out);
    }

    /// Writes the whole header with the magic of a datagram the kernel
    /// builds ([`PROBE_MAGIC_KERNEL`]).
    pub fn write_kernel_sent(&self, out: &mut [u8; PROBE_LEN]) {
        out[field::MAGIC].copy_from_slice(&PROBE_MAGIC_KERNEL.to_be_bytes());
        self.stamp(out);
    }

    /// Writes everything but the magic: the per-packet work of the sender,
    /// whose frames already carry the magic from their template.
    #[inline(always)]
    pub fn stamp(&self, out: &mut [u8; PROBE_LEN]) {
        out[field::STREAM].copy_from_slice(&self.stream.to_be_bytes());
        out[field::SEQ].copy_from_slice(&self.seq.to_be_bytes());
        out[field::TX_NS].copy_from_slice(&self.tx_ns.to_be_bytes());
    }

    /// Reads a probe header from the start of a UDP payload, either magic.
    #[inline(always)]
    pub fn read(b: &[u8; PROBE_LEN]) -> Option<Probe> {
        is_probe(magic_of(b)).then(|| Probe::fields(b))
    }

    /// The fields after the magic.
    #[inline(always)]
    fn fields(b: &[u8; PROBE_LEN]) -> Probe {
        Probe {
            stream: u16::from_be_bytes(b[field::STREAM].try_into().unwrap()),
            seq: u32::from_be_bytes(b[field::SEQ].try_into().unwrap()),
            tx_ns: u64::from_be_bytes(b[field::TX_NS].try_into().unwrap()),
        }
    }
}

/// A probe header's magic.
#[inline(always)]
fn magic_of(b: &[u8; PROBE_LEN]) -> u32 {
    u32::from_be_bytes(b[field::MAGIC].try_into().unwrap())
}

/// Whether `magic` is a probe's, either kind.
#[inline(always)]
fn is_probe(magic: u32) -> bool {
    magic == PROBE_MAGIC || magic == PROBE_MAGIC_KERNEL
}

/// Where the sender's run id sits: the IPv4 identification field.
const RUN_ID_OFFSET: usize = crate::ETHERNET_HEADER_LEN + 4;

/// The sender run a frame belongs to. blast (and the C sender) pick a run
/// id at random per process and write it into the IPv4 identification field
/// of every frame: free for atomic datagrams (DF is set; RFC 6864), and
/// written once into the frame template, so it costs nothing per frame and
/// no byte of the probe, which fills a 64-byte frame. A receiver that sees
/// a stream arrive with another run id starts that stream afresh instead of
/// counting the new run's frames as duplicates or late. Call it on a frame
/// `parse_probe` accepted (it is long enough).
#[inline(always)]
pub fn run_id(frame: &[u8]) -> u16 {
    u16::from_be_bytes([frame[RUN_ID_OFFSET], frame[RUN_ID_OFFSET + 1]])
}

/// Finds and reads the probe in a whole Ethernet frame (FCS stripped), or
/// None when the frame is not UDP over IPv4 or carries no probe.
#[inline]
pub fn parse_probe(frame: &[u8]) -> Option<Probe> {
    parse_probe_and_run(frame).map(|(p, _)| p)
}

/// As [`parse_probe`], with the sender run the frame belongs to: its
/// [`run_id`] where the probe says the sender wrote one, else 0 (a
/// datagram the kernel built: [`PROBE_MAGIC_KERNEL`]).
#[inline]
pub fn parse_probe_and_run(frame: &[u8]) -> Option<(Probe, u16)> {
    if frame.len() < PROBE_OFFSET + PROBE_LEN {
        return None;
    }
    if frame[12..14] != ETHERTYPE_IPV4.to_be_bytes() {
        return None;
    }
    let ver_ihl = frame[ETHERNET_HEADER_LEN];
    if ver_ihl >> 4 != 4 || frame[ETHERNET_HEADER_LEN + 9] != IP_PROTO_UDP {
        return None;
    }
    let start = ETHERNET_HEADER_LEN + usize::from(ver_ihl & 0x0f) * 4 + UDP_HEADER_LEN;
    let bytes: &[u8; PROBE_LEN] = frame.get(start..start + PROBE_LEN)?.try_into().unwrap();
    let magic = magic_of(bytes);
    if !is_probe(magic) {
        return None;
    }
    // Without a branch per frame: under the kernel's magic the
    // identification field is no run id, and the run is 0.
    let run = run_id(frame) & if magic == PROBE_MAGIC { u16::MAX } else { 0 };
    Some((Probe::fields(bytes), run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{write_frame, FrameSpec};

    #[test]
    fn round_trip() {
        let p = Probe { stream: 513, seq: 0xdead_beef, tx_ns: 0x0102_0304_0506_0708 };
        let mut b = [0u8; PROBE_LEN];
        p.write(&mut b);
        assert_eq!(&b[..4], b"BDP1");
        assert_eq!(&b[4..6], &[2, 1]);
        assert_eq!(&b[6..10], &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(&b[10..], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(Probe::read(&b), Some(p));
    }

    #[test]
    fn a_kernel_sent_probe_reads_the_same_and_belongs_to_run_0() {
        let p = Probe { stream: 3, seq: 9, tx_ns: 7 };
        let mut frame = [0u8; 60];
        write_frame(&FrameSpec { frame_size: 64, ..FrameSpec::default() }, &mut frame).unwrap();
        // The identification field as the kernel leaves it: a count, not a run.
        frame[RUN_ID_OFFSET..RUN_ID_OFFSET + 2].copy_from_slice(&0x1234u16.to_be_bytes());
        fn probe(frame: &mut [u8; 60]) -> &mut [u8; PROBE_LEN] {
            (&mut frame[PROBE_OFFSET..PROBE_OFFSET + PROBE_LEN]).try_into().unwrap()
        }
        p.write_kernel_sent(probe(&mut frame));
        assert_eq!(&probe(&mut frame)[..4], b"BDPK");
        assert_eq!(Probe::read(probe(&mut frame)), Some(p));
        assert_eq!(parse_probe_and_run(&frame), Some((p, 0)));
        p.write(probe(&mut frame));
        assert_eq!(parse_probe_and_run(&frame), Some((p, 0x1234)));
    }

    #[test]
    fn wrong_magic_is_no_probe() {
        let mut b = [0u8; PROBE_LEN];
        Probe { stream: 1, seq: 2, tx_ns: 3 }.write(&mut b);
        b[0] ^= 0xff;
        assert_eq!(Probe::read(&b), None);
    }

    #[test]
    fn parsed_from_a_built_64_byte_frame() {
        let mut frame = [0u8; 60];
        let spec = FrameSpec { frame_size: 64, ..FrameSpec::default() };
        write_frame(&spec, &mut frame).unwrap();
        let p = Probe { stream: 7, seq: 42, tx_ns: 99 };
        p.stamp((&mut frame[PROBE_OFFSET..PROBE_OFFSET + PROBE_LEN]).try_into().unwrap());
        assert_eq!(parse_probe(&frame), Some(p));
        // Truncated, not IPv4, not UDP: no probe.
        assert_eq!(parse_probe(&frame[..59]), None);
        let mut arp = frame;
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(parse_probe(&arp), None);
        let mut tcp = frame;
        tcp[23] = 6;
        assert_eq!(parse_probe(&tcp), None);
    }

    #[test]
    fn run_id_is_the_ipv4_identification() {
        let mut frame = [0u8; 60];
        let spec = FrameSpec { run_id: 0xbeef, ..FrameSpec::default() };
        write_frame(&spec, &mut frame).unwrap();
        assert_eq!(run_id(&frame), 0xbeef);
        assert_eq!(&frame[18..20], &[0xbe, 0xef]);
        let ip = crate::Ipv4Packet::new_checked(&frame[14..]).unwrap();
        assert!(ip.checksum_valid() && ip.dont_fragment());
    }

    #[test]
    fn parsed_past_ip_options() {
        // Same frame with a 24-byte IPv4 header (one word of options).
        let mut frame = vec![0u8; 64];
        let spec = FrameSpec { frame_size: 68, ..FrameSpec::default() };
        let mut plain = [0u8; 64];
        write_frame(&spec, &mut plain).unwrap();
        frame[..34].copy_from_slice(&plain[..34]);
        frame[14] = 0x46;
        frame[38..].copy_from_slice(&plain[34..60]);
        Probe { stream: 3, seq: 4, tx_ns: 5 }.stamp((&mut frame[46..64]).try_into().unwrap());
        assert_eq!(parse_probe(&frame).map(|p| p.seq), Some(4));
    }
}
