//! Direct access to the mbuf fields the hot loops touch, at offsets fixed
//! when the bindings are generated for this DPDK line (a load or store per
//! field, no call), and the Rx timestamp's dynamic field.

use dpdk_ffi as ffi;

pub type Mbuf = ffi::rte_mbuf;

/// Byte offsets of the mbuf fields the hot paths touch, as this DPDK line
/// lays out struct rte_mbuf (the C shim's `offsetof`s, evaluated when the
/// bindings are generated): per-packet access is a load or store at a
/// constant offset, with no call and no register held for the offset.
mod off {
    use dpdk_ffi::bd_mbuf_offset as o;
    pub const BUF_ADDR: usize = o::BD_MBUF_BUF_ADDR as usize;
    pub const DATA_OFF: usize = o::BD_MBUF_DATA_OFF as usize;
    pub const PKT_LEN: usize = o::BD_MBUF_PKT_LEN as usize;
    pub const DATA_LEN: usize = o::BD_MBUF_DATA_LEN as usize;
    pub const BUF_LEN: usize = o::BD_MBUF_BUF_LEN as usize;
    pub const NEXT: usize = o::BD_MBUF_NEXT as usize;
    pub const TX_OFFLOAD: usize = o::BD_MBUF_TX_OFFLOAD as usize;
    pub const VLAN_TCI: usize = o::BD_MBUF_VLAN_TCI as usize;
    pub const VLAN_TCI_OUTER: usize = o::BD_MBUF_VLAN_TCI_OUTER as usize;
    pub const NB_SEGS: usize = o::BD_MBUF_NB_SEGS as usize;
    pub const PORT: usize = o::BD_MBUF_PORT as usize;
    pub const OL_FLAGS: usize = o::BD_MBUF_OL_FLAGS as usize;
    pub const PACKET_TYPE: usize = o::BD_MBUF_PACKET_TYPE as usize;

    // What the accessors assume, checked when this DPDK line is built against.
    const SIZE: usize = o::BD_MBUF_SIZE as usize;
    const _: () = assert!(BUF_ADDR == 0, "buf_addr leads struct rte_mbuf in every supported line");
    const _: () = assert!(SIZE >= 128 && o::BD_MBUF_HEADROOM >= 64);
    const _: () = assert!(
        DATA_OFF.is_multiple_of(2)
            && DATA_LEN.is_multiple_of(2)
            && PKT_LEN.is_multiple_of(4)
            && OL_FLAGS.is_multiple_of(8)
            && NEXT.is_multiple_of(8)
    );
    const _: () = assert!(BUF_LEN < SIZE && NEXT < SIZE && TX_OFFLOAD < SIZE && PACKET_TYPE < SIZE);
}

/// RTE_MBUF_F_EXTERNAL: the one flag rte_pktmbuf_reset keeps (the EAL test
/// checks it against the shim's value).
pub const MBUF_F_EXTERNAL: u64 = 1 << 61;

/// Where the hot paths find an mbuf's fields, and the sizes pools are built from.
#[derive(Debug, Clone, Copy)]
pub struct MbufLayout {
    pub headroom: u16,
    pub mbuf_size: u16,
}

impl MbufLayout {
    pub const fn get() -> MbufLayout {
        MbufLayout { headroom: ffi::bd_mbuf_offset::BD_MBUF_HEADROOM as u16, mbuf_size: ffi::bd_mbuf_offset::BD_MBUF_SIZE as u16 }
    }

    /// Start of the packet data.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn data(&self, m: *mut Mbuf) -> *mut u8 {
        let base = m as *mut u8;
        let buf = (base.add(off::BUF_ADDR) as *const *mut u8).read();
        let off = (base.add(off::DATA_OFF) as *const u16).read();
        buf.add(usize::from(off))
    }

    /// Length of the first segment.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn data_len(&self, m: *const Mbuf) -> u16 {
        ((m as *const u8).add(off::DATA_LEN) as *const u16).read()
    }

    /// Length of the whole packet, all segments.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn pkt_len(&self, m: *const Mbuf) -> u32 {
        ((m as *const u8).add(off::PKT_LEN) as *const u32).read()
    }

    /// Bytes of buffer from the data start to the buffer's end.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn room(&self, m: *const Mbuf) -> usize {
        let base = m as *const u8;
        let len = (base.add(off::BUF_LEN) as *const u16).read();
        let off = (base.add(off::DATA_OFF) as *const u16).read();
        usize::from(len.saturating_sub(off))
    }

    /// Where a freshly allocated mbuf's data starts (after the default headroom).
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn fresh_data(&self, m: *mut Mbuf) -> *mut u8 {
        let buf = ((m as *mut u8).add(off::BUF_ADDR) as *const *mut u8).read();
        buf.add(usize::from(self.headroom))
    }

    /// Bytes a freshly allocated mbuf holds from its data start.
    ///
    /// # Safety
    /// `m` must be a valid mbuf.
    #[inline(always)]
    pub unsafe fn fresh_room(&self, m: *const Mbuf) -> usize {
        let len = ((m as *const u8).add(off::BUF_LEN) as *const u16).read();
        usize::from(len.saturating_sub(self.headroom))
    }

    /// Does what rte_pktmbuf_reset does to an mbuf fresh from its pool,
    /// and makes it one segment of `len` bytes, in one pass over it.
    ///
    /// # Safety
    /// `m` must be a valid mbuf owned by the caller, taken from a packet pool.
    #[inline(always)]
    pub unsafe fn reset_to_len(&self, m: *mut Mbuf, len: u16) {
        let b = m as *mut u8;
        (b.add(off::NEXT) as *mut usize).write(0);
        (b.add(off::TX_OFFLOAD) as *mut u64).write(0);
        (b.add(off::VLAN_TCI) as *mut u16).write(0);
        (b.add(off::VLAN_TCI_OUTER) as *mut u16).write(0);
        (b.add(off::NB_SEGS) as *mut u16).write(1);
        (b.add(off::PORT) as *mut u16).write(u16::MAX);
        let flags = b.add(off::OL_FLAGS) as *mut u64;
        flags.write(flags.read() & MBUF_F_EXTERNAL);
        (b.add(off::PACKET_TYPE) as *mut u32).write(0);
        let buf_len = (b.add(off::BUF_LEN) as *const u16).read();
        (b.add(off::DATA_OFF) as *mut u16).write(self.headroom.min(buf_len));
        self.set_len(m, len);
    }

    /// Sets a single-segment mbuf's lengths.
    ///
    /// # Safety
    /// `m` must be a valid mbuf owned by the caller.
    #[inline(always)]
    pub unsafe fn set_len(&self, m: *mut Mbuf, len: u16) {
        let base = m as *mut u8;
        (base.add(off::DATA_LEN) as *mut u16).write(len);
        (base.add(off::PKT_LEN) as *mut u32).write(u32::from(len));
    }
}

/// Where a received mbuf carries the device's receive timestamp: the
/// `rte_dynfield_timestamp` dynamic field (a u64, in the driver's units),
/// valid when its `rte_dynflag_rx_timestamp` bit is set in ol_flags.
/// Looked up once; a PMD that offers the offload registers the same pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxTimestamp {
    offset: usize,
    flag: u64,
}

impl RxTimestamp {
    /// The field and flag, registered if no PMD did yet (after the EAL started).
    pub fn register() -> crate::Result<RxTimestamp> {
        let (mut offset, mut flag) = (0i32, 0u64);
        // SAFETY: writes two values we own; the EAL is up (mbuf dynamic
        // fields live in its shared memory).
        let rc = unsafe { ffi::bd_rx_timestamp_register(&mut offset, &mut flag) };
        if rc != 0 || offset < 0 || flag == 0 {
            return Err(crate::Error::call("rte_mbuf_dyn_rx_timestamp_register", if rc != 0 { rc } else { -libc::EINVAL }));
        }
        Ok(RxTimestamp { offset: offset as usize, flag })
    }

    /// The timestamp `m` came with, when the device stamped it.
    ///
    /// # Safety
    /// `m` must be a valid mbuf, and `self` registered in this process.
    #[inline(always)]
    pub unsafe fn of(&self, m: *const Mbuf) -> Option<u64> {
        let b = m as *const u8;
        let flags = (b.add(off::OL_FLAGS) as *const u64).read();
        // The dynamic field is 8-aligned (registered with u64's alignment).
        (flags & self.flag != 0).then(|| (b.add(self.offset) as *const u64).read())
    }

    /// Stamps `m` as a device would (for tests of the readers).
    ///
    /// # Safety
    /// `m` must be a valid mbuf owned by the caller, and `self` registered in this process.
    pub unsafe fn write(&self, m: *mut Mbuf, ns: u64) {
        let b = m as *mut u8;
        let flags = b.add(off::OL_FLAGS) as *mut u64;
        flags.write(flags.read() | self.flag);
        (b.add(self.offset) as *mut u64).write(ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_shim() {
        // No EAL needed: the layout is compile-time facts of this DPDK; the
        // constants and the shim's run-time offsetofs must agree.
        let mut l = ffi::bd_mbuf_layout::default();
        // SAFETY: fills a plain struct.
        unsafe { ffi::bd_mbuf_layout(&mut l) };
        let got = [off::BUF_ADDR, off::DATA_OFF, off::PKT_LEN, off::DATA_LEN, off::BUF_LEN];
        let want = [l.buf_addr, l.data_off, l.pkt_len, l.data_len, l.buf_len].map(usize::from);
        assert_eq!(got, want);
        let m = MbufLayout::get();
        assert_eq!((m.headroom, m.mbuf_size), (l.headroom, l.mbuf_size));
    }
}
