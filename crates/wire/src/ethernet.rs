use crate::MacAddr;

pub const ETHERNET_HEADER_LEN: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;

mod field {
    use std::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
}

/// A view over an Ethernet II header at the start of a buffer.
#[derive(Debug)]
pub struct EthernetFrame<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps `buffer`, or returns None when it is shorter than a header.
    pub fn new_checked(buffer: T) -> Option<Self> {
        (buffer.as_ref().len() >= ETHERNET_HEADER_LEN).then_some(EthernetFrame { buffer })
    }

    pub fn dst(&self) -> MacAddr {
        MacAddr(self.buffer.as_ref()[field::DST].try_into().unwrap())
    }

    pub fn src(&self) -> MacAddr {
        MacAddr(self.buffer.as_ref()[field::SRC].try_into().unwrap())
    }

    pub fn ethertype(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::ETHERTYPE];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// The bytes after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[ETHERNET_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    pub fn set_dst(&mut self, mac: MacAddr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&mac.0);
    }

    pub fn set_src(&mut self, mac: MacAddr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&mac.0);
    }

    pub fn set_ethertype(&mut self, ethertype: u16) {
        self.buffer.as_mut()[field::ETHERTYPE].copy_from_slice(&ethertype.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[ETHERNET_HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let mut buf = [0u8; 20];
        let mut f = EthernetFrame::new_checked(&mut buf[..]).unwrap();
        f.set_dst(MacAddr([1, 2, 3, 4, 5, 6]));
        f.set_src(MacAddr([7, 8, 9, 10, 11, 12]));
        f.set_ethertype(ETHERTYPE_IPV4);
        assert_eq!(f.dst(), MacAddr([1, 2, 3, 4, 5, 6]));
        assert_eq!(f.src(), MacAddr([7, 8, 9, 10, 11, 12]));
        assert_eq!(f.ethertype(), 0x0800);
        assert_eq!(f.payload().len(), 6);
        assert_eq!(&buf[12..14], &[0x08, 0x00]);
    }

    #[test]
    fn short_buffer_is_refused() {
        assert!(EthernetFrame::new_checked(&[0u8; 13][..]).is_none());
    }
}
