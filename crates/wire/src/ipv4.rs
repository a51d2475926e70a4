use std::net::Ipv4Addr;

pub const IPV4_HEADER_LEN: usize = 20;
pub const IP_PROTO_UDP: u8 = 17;

mod field {
    use std::ops::Range;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const TOTAL_LEN: Range<usize> = 2..4;
    pub const IDENT: Range<usize> = 4..6;
    pub const FLAGS_FRAG: Range<usize> = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
}

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A view over an IPv4 header at the start of a buffer.
#[derive(Debug)]
pub struct Ipv4Packet<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wraps `buffer` when it holds at least a minimal header.
    pub fn new_checked(buffer: T) -> Option<Self> {
        (buffer.as_ref().len() >= IPV4_HEADER_LEN).then_some(Ipv4Packet { buffer })
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn version(&self) -> u8 {
        self.b()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL x 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[field::VER_IHL] & 0x0f) * 4
    }

    pub fn tos(&self) -> u8 {
        self.b()[field::TOS]
    }

    pub fn total_len(&self) -> u16 {
        u16::from_be_bytes(self.b()[field::TOTAL_LEN].try_into().unwrap())
    }

    pub fn ident(&self) -> u16 {
        u16::from_be_bytes(self.b()[field::IDENT].try_into().unwrap())
    }

    pub fn dont_fragment(&self) -> bool {
        self.b()[field::FLAGS_FRAG.start] & 0x40 != 0
    }

    pub fn ttl(&self) -> u8 {
        self.b()[field::TTL]
    }

    pub fn protocol(&self) -> u8 {
        self.b()[field::PROTOCOL]
    }

    pub fn header_checksum(&self) -> u16 {
        u16::from_be_bytes(self.b()[field::CHECKSUM].try_into().unwrap())
    }

    pub fn src(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.b()[field::SRC]).unwrap())
    }

    pub fn dst(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.b()[field::DST]).unwrap())
    }

    /// True when the header checksum is right (EC2 silently drops frames where it is not).
    pub fn checksum_valid(&self) -> bool {
        let len = self.header_len();
        len >= IPV4_HEADER_LEN && len <= self.b().len() && checksum(&self.b()[..len]) == 0
    }

    /// The bytes after the header (and its options).
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len().min(self.b().len())..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Sets version 4 and a header without options.
    pub fn set_version_and_minimal_header(&mut self) {
        self.m()[field::VER_IHL] = 0x45;
    }

    pub fn set_tos(&mut self, tos: u8) {
        self.m()[field::TOS] = tos;
    }

    pub fn set_total_len(&mut self, len: u16) {
        self.m()[field::TOTAL_LEN].copy_from_slice(&len.to_be_bytes());
    }

    pub fn set_ident(&mut self, ident: u16) {
        self.m()[field::IDENT].copy_from_slice(&ident.to_be_bytes());
    }

    /// Sets the don't-fragment flag and a zero fragment offset.
    pub fn set_dont_fragment(&mut self) {
        self.m()[field::FLAGS_FRAG].copy_from_slice(&0x4000u16.to_be_bytes());
    }

    pub fn set_ttl(&mut self, ttl: u8) {
        self.m()[field::TTL] = ttl;
    }

    pub fn set_protocol(&mut self, proto: u8) {
        self.m()[field::PROTOCOL] = proto;
    }

    pub fn set_src(&mut self, ip: Ipv4Addr) {
        self.m()[field::SRC].copy_from_slice(&ip.octets());
    }

    pub fn set_dst(&mut self, ip: Ipv4Addr) {
        self.m()[field::DST].copy_from_slice(&ip.octets());
    }

    /// Computes and stores the header checksum over the header as it stands.
    pub fn fill_checksum(&mut self) {
        self.m()[field::CHECKSUM].copy_from_slice(&[0, 0]);
        let len = self.header_len();
        let sum = checksum(&self.b()[..len]);
        self.m()[field::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.m()[start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_rfc1071_example() {
        // RFC 1071 section 3: the ones-complement sum of these words is ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn checksum_of_odd_length_pads_with_zero() {
        assert_eq!(checksum(&[0x01]), !0x0100);
    }

    #[test]
    fn fields_round_trip() {
        let mut buf = [0u8; 24];
        let mut p = Ipv4Packet::new_checked(&mut buf[..]).unwrap();
        p.set_version_and_minimal_header();
        p.set_tos(0x10);
        p.set_total_len(24);
        p.set_ident(0x1234);
        p.set_dont_fragment();
        p.set_ttl(64);
        p.set_protocol(IP_PROTO_UDP);
        p.set_src(Ipv4Addr::new(10, 0, 0, 1));
        p.set_dst(Ipv4Addr::new(10, 0, 0, 2));
        p.fill_checksum();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.tos(), 0x10);
        assert_eq!(p.total_len(), 24);
        assert_eq!(p.ident(), 0x1234);
        assert!(p.dont_fragment());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), 17);
        assert_eq!(p.src(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(p.dst(), Ipv4Addr::new(10, 0, 0, 2));
        assert!(p.checksum_valid());
        assert_eq!(p.payload().len(), 4);
        buf[15] ^= 1;
        assert!(!Ipv4Packet::new_checked(&buf[..]).unwrap().checksum_valid());
    }
}
