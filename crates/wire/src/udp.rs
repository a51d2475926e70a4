pub const UDP_HEADER_LEN: usize = 8;

mod field {
    use std::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const LENGTH: Range<usize> = 4..6;
    pub const CHECKSUM: Range<usize> = 6..8;
}

/// A view over a UDP header at the start of a buffer.
#[derive(Debug)]
pub struct UdpDatagram<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpDatagram<T> {
    pub fn new_checked(buffer: T) -> Option<Self> {
        (buffer.as_ref().len() >= UDP_HEADER_LEN).then_some(UdpDatagram { buffer })
    }

    fn word(&self, r: std::ops::Range<usize>) -> u16 {
        u16::from_be_bytes(self.buffer.as_ref()[r].try_into().unwrap())
    }

    pub fn src_port(&self) -> u16 {
        self.word(field::SRC_PORT)
    }

    pub fn dst_port(&self) -> u16 {
        self.word(field::DST_PORT)
    }

    /// Header plus payload length.
    pub fn len(&self) -> u16 {
        self.word(field::LENGTH)
    }

    pub fn is_empty(&self) -> bool {
        self.len() as usize <= UDP_HEADER_LEN
    }

    /// Zero means "no checksum", which IPv4 allows.
    pub fn checksum(&self) -> u16 {
        self.word(field::CHECKSUM)
    }

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[UDP_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpDatagram<T> {
    fn set_word(&mut self, r: std::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_src_port(&mut self, port: u16) {
        self.set_word(field::SRC_PORT, port);
    }

    pub fn set_dst_port(&mut self, port: u16) {
        self.set_word(field::DST_PORT, port);
    }

    pub fn set_len(&mut self, len: u16) {
        self.set_word(field::LENGTH, len);
    }

    pub fn set_checksum(&mut self, sum: u16) {
        self.set_word(field::CHECKSUM, sum);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[UDP_HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let mut buf = [0u8; 12];
        let mut u = UdpDatagram::new_checked(&mut buf[..]).unwrap();
        u.set_src_port(1024);
        u.set_dst_port(9);
        u.set_len(12);
        u.set_checksum(0);
        assert_eq!((u.src_port(), u.dst_port(), u.len(), u.checksum()), (1024, 9, 12, 0));
        assert_eq!(u.payload().len(), 4);
        assert_eq!(&buf[..6], &[0x04, 0x00, 0x00, 0x09, 0x00, 0x0c]);
    }
}
