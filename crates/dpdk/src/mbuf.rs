use std::sync::OnceLock;

use dpdk_ffi as ffi;

pub type Mbuf = ffi::rte_mbuf;

/// Byte offsets of the mbuf fields the hot paths touch, read from the C
/// shim once, so per-packet access is a plain load or store with no call and
/// no dependence on how this DPDK line lays out struct rte_mbuf.
#[derive(Debug, Clone, Copy)]
pub struct MbufLayout {
    buf_addr: usize,
    data_off: usize,
    pkt_len: usize,
    data_len: usize,
    buf_len: usize,
    pub headroom: u16,
    pub mbuf_size: u16,
}

impl MbufLayout {
    pub fn get() -> MbufLayout {
        static LAYOUT: OnceLock<MbufLayout> = OnceLock::new();
        *LAYOUT.get_or_init(|| {
            let mut l = ffi::bd_mbuf_layout::default();
            // SAFETY: fills a plain struct.
            unsafe { ffi::bd_mbuf_layout(&mut l) };
            MbufLayout {
                buf_addr: l.buf_addr.into(),
                data_off: l.data_off.into(),
                pkt_len: l.pkt_len.into(),
                data_len: l.data_len.into(),
                buf_len: l.buf_len.into(),
                headroom: l.headroom,
                mbuf_size: l.mbuf_size,
            }
        })
    }

    /// Start of the packet data.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn data(&self, m: *mut Mbuf) -> *mut u8 {
        let base = m as *mut u8;
        let buf = (base.add(self.buf_addr) as *const *mut u8).read();
        let off = (base.add(self.data_off) as *const u16).read();
        buf.add(usize::from(off))
    }

    /// Length of the first segment.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn data_len(&self, m: *const Mbuf) -> u16 {
        ((m as *const u8).add(self.data_len) as *const u16).read()
    }

    /// Length of the whole packet, all segments.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn pkt_len(&self, m: *const Mbuf) -> u32 {
        ((m as *const u8).add(self.pkt_len) as *const u32).read()
    }

    /// Bytes of buffer from the data start to the buffer's end.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn room(&self, m: *const Mbuf) -> usize {
        let base = m as *const u8;
        let len = (base.add(self.buf_len) as *const u16).read();
        let off = (base.add(self.data_off) as *const u16).read();
        usize::from(len.saturating_sub(off))
    }

    /// Where a freshly allocated mbuf's data starts (after the default headroom).
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn fresh_data(&self, m: *mut Mbuf) -> *mut u8 {
        let buf = ((m as *mut u8).add(self.buf_addr) as *const *mut u8).read();
        buf.add(usize::from(self.headroom))
    }

    /// Bytes a freshly allocated mbuf holds from its data start.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn fresh_room(&self, m: *const Mbuf) -> usize {
        let len = ((m as *const u8).add(self.buf_len) as *const u16).read();
        usize::from(len.saturating_sub(self.headroom))
    }

    /// Sets a single-segment mbuf's lengths.
    ///
    /// # Safety
    /// `m` must be a valid mbuf owned by the caller.
    #[inline(always)]
    pub unsafe fn set_len(&self, m: *mut Mbuf, len: u16) {
        let base = m as *mut u8;
        (base.add(self.data_len) as *mut u16).write(len);
        (base.add(self.pkt_len) as *mut u32).write(u32::from(len));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_shim() {
        // No EAL needed: the layout is compile-time facts of this DPDK.
        let l = MbufLayout::get();
        assert!(l.mbuf_size >= 128);
        assert_eq!(l.buf_addr, 0, "buf_addr leads struct rte_mbuf in every supported line");
        assert!(l.data_len > l.data_off);
        assert!(l.headroom >= 64);
        assert!(l.buf_len > l.buf_addr && l.buf_len < usize::from(l.mbuf_size));
    }
}
