//! A burst of mbufs owned by one lane: taken from a pool or received from
//! a queue, read or written as byte slices, offered to a queue, and freed
//! when dropped. The lanes above hold no raw mbuf pointer and no `unsafe`.
//!
//! Cost: a `Burst` is an array of pointers and two indexes on the lane's
//! stack; every method is a few loads and stores around the same DPDK call
//! the loops made by hand (checked in the benchmark, scripts/bench).

use dpdk_ffi as ffi;

use crate::{Mbuf, MbufLayout, Mempool, RxQueue, TxQueue};

/// The most mbufs one burst holds.
pub const BURST_MAX: usize = 512;

/// Up to [`BURST_MAX`] mbufs this burst owns: `bufs[head..tail]`. Frames
/// sent leave it from the front; what is left when it drops is freed.
pub struct Burst {
    bufs: [*mut Mbuf; BURST_MAX],
    head: usize,
    tail: usize,
    layout: MbufLayout,
    /// After `alloc`: the room every mbuf of the burst has (one pool, all
    /// fresh), so writing frames checks it once per burst, not per frame.
    fresh_room: Option<usize>,
    /// After `alloc`: the mbufs are as the pool keeps them, not reset yet.
    /// Writing their heads resets them in the same pass over the frames
    /// (one visit to each mbuf where rte_pktmbuf_alloc_bulk and the writes
    /// made two); anything else that uses them resets them first.
    unreset: bool,
}

// SAFETY: a Burst owns its mbufs exclusively (no other handle to them
// exists), so moving it to another lcore moves that ownership; DPDK's
// mempools take mbufs back from any lcore.
unsafe impl Send for Burst {}

impl Default for Burst {
    fn default() -> Burst {
        Burst::new()
    }
}

impl Burst {
    pub fn new() -> Burst {
        Burst { bufs: [std::ptr::null_mut(); BURST_MAX], head: 0, tail: 0, layout: MbufLayout::get(), fresh_room: None, unreset: false }
    }

    /// Frames owned (not yet sent or freed).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.tail - self.head
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// Takes `n` fresh mbufs (at most [`BURST_MAX`]) from `pool`, all or
    /// none; false when the pool has too few. Frees what the burst held.
    /// The mbufs are reset (as rte_pktmbuf_alloc_bulk does) where they are
    /// first written or used, not here.
    #[inline(always)]
    pub fn alloc(&mut self, pool: &Mempool, n: usize) -> bool {
        self.free();
        let n = n.min(BURST_MAX);
        // SAFETY: the pool is alive (borrowed); bufs has room for n pointers,
        // which the call fills all or none.
        let ok = unsafe { ffi::bd_mempool_get_bulk(pool.as_ptr(), self.bufs.as_mut_ptr(), n as u32) } == 0;
        self.tail = if ok { n } else { 0 };
        // SAFETY: bufs[0] is an mbuf of the pool when ok; every mbuf of a pool
        // has the same buffer, and reset puts the data start after the headroom.
        self.fresh_room = (ok && n > 0).then(|| unsafe { self.layout.fresh_room(self.bufs[0]) });
        self.unreset = ok && n > 0;
        ok
    }

    /// Resets mbufs taken by `alloc` and not written yet (empty frames).
    #[inline(always)]
    fn settle(&mut self) {
        if std::mem::take(&mut self.unreset) {
            for &m in &self.bufs[self.head..self.tail] {
                // SAFETY: m is an mbuf of a packet pool this burst owns.
                unsafe { self.layout.reset_to_len(m, 0) };
            }
        }
    }

    /// Receives up to `max` frames (at most [`BURST_MAX`]); returns how many.
    /// Frees what the burst held.
    #[inline(always)]
    pub fn rx(&mut self, queue: &mut RxQueue, max: usize) -> usize {
        self.free();
        let n = queue.rx_burst(&mut self.bufs[..max.min(BURST_MAX)]);
        (self.tail, self.fresh_room, self.unreset) = (n, None, false);
        n
    }

    /// Offers the frames to `queue`; those it takes leave the burst (the
    /// unsent tail stays). When the queue faulted under the burst (a memif
    /// ring unmapped), the device may hold any of them: the burst lets go
    /// of all without freeing any (a leak of one burst, never a double
    /// free), and returns 0.
    #[inline(always)]
    pub fn tx(&mut self, queue: &mut TxQueue) -> usize {
        self.settle();
        let sent = queue.tx_burst(&mut self.bufs[self.head..self.tail]);
        if queue.faulted() {
            self.head = self.tail;
            return 0;
        }
        self.head += sent;
        sent
    }

    /// Returns the frames to their pools.
    #[inline(always)]
    pub fn free(&mut self) {
        let n = self.len();
        if n > 0 {
            // SAFETY: bufs[head..tail] are mbufs this burst owns and nothing else references.
            unsafe { ffi::bd_pktmbuf_free_bulk(self.bufs[self.head..].as_mut_ptr(), n as u32) };
        }
        (self.head, self.tail, self.unreset) = (0, 0, false);
    }

    /// Each frame's bytes (its first segment).
    #[inline(always)]
    pub fn frames(&self) -> impl Iterator<Item = &[u8]> + '_ {
        assert!(!self.unreset, "frames of a burst not written since alloc");
        let l = self.layout;
        self.bufs[self.head..self.tail].iter().map(move |&m| {
            // SAFETY: m is an mbuf this burst owns; its first segment holds
            // data_len bytes from its data start, alive while the burst is borrowed.
            unsafe { std::slice::from_raw_parts(l.data(m), usize::from(l.data_len(m))) }
        })
    }

    /// Each frame's bytes (its first segment), for writing.
    #[inline(always)]
    pub fn frames_mut(&mut self) -> impl Iterator<Item = &mut [u8]> + '_ {
        self.settle();
        let l = self.layout;
        self.bufs[self.head..self.tail].iter().map(move |&m| {
            // SAFETY: as in `frames`; the burst is borrowed mutably and owns
            // each mbuf once, so no two slices alias.
            unsafe { std::slice::from_raw_parts_mut(l.data(m), usize::from(l.data_len(m))) }
        })
    }

    /// Makes every frame one segment of `len` bytes and hands the first
    /// `N` bytes of each to `write`, as an array (no bounds check per
    /// frame, and a plain loop the closure inlines into). `N` must not
    /// exceed `len`, and `len` must fit the mbufs' room (the pool was sized
    /// for the largest frame): both are checked, once per burst after
    /// `alloc`, per frame otherwise.
    #[inline(always)]
    pub fn write_heads<const N: usize>(&mut self, len: u16, mut write: impl FnMut(&mut [u8; N])) {
        if N > usize::from(len) {
            does_not_fit(N, len.into());
        }
        let l = self.layout;
        let frames = &self.bufs[self.head..self.tail];
        match self.fresh_room {
            Some(room) => {
                if usize::from(len) > room {
                    does_not_fit(len.into(), room);
                }
                if std::mem::take(&mut self.unreset) {
                    for &m in frames {
                        // SAFETY: as below; m comes straight from its pool, and
                        // the reset puts its data start where `room` was measured.
                        unsafe {
                            l.reset_to_len(m, len);
                            write(&mut *(l.data(m) as *mut [u8; N]));
                        }
                    }
                    return;
                }
                for &m in frames {
                    // SAFETY: m is owned by this burst, once each; `len` fits
                    // its room (checked above) and N <= len.
                    unsafe {
                        l.set_len(m, len);
                        write(&mut *(l.data(m) as *mut [u8; N]));
                    }
                }
            }
            None => {
                for &m in frames {
                    // SAFETY: as above, the room checked here.
                    unsafe {
                        if usize::from(len) > l.room(m) {
                            does_not_fit(len.into(), l.room(m));
                        }
                        l.set_len(m, len);
                        write(&mut *(l.data(m) as *mut [u8; N]));
                    }
                }
            }
        }
    }

    /// Like [`Burst::write_heads`], each frame its own length: `write` writes
    /// the first `N` bytes of a frame and says how long the frame is (at
    /// least `N`, within the mbuf's room: checked per frame). Returns the
    /// frames' bytes in all.
    #[inline(always)]
    pub fn write_heads_sized<const N: usize>(&mut self, mut write: impl FnMut(&mut [u8; N]) -> u16) -> u64 {
        self.write_frames(|room| {
            let Some(head) = room.first_chunk_mut::<N>() else { does_not_fit(N, room.len()) };
            let len = write(head);
            if N > usize::from(len) {
                does_not_fit(N, len.into());
            }
            usize::from(len)
        })
    }

    /// Hands every frame's whole room (from its data start) to `write`,
    /// which writes the frame there and says how long it is; the frame is
    /// then one segment of that length. Returns the frames' bytes in all.
    /// For frames copied whole (a replayed capture), one pass over them.
    #[inline(always)]
    pub fn write_frames(&mut self, mut write: impl FnMut(&mut [u8]) -> usize) -> u64 {
        self.settle();
        let l = self.layout;
        let mut total = 0u64;
        for &m in &self.bufs[self.head..self.tail] {
            // SAFETY: m is owned by this burst, once each; the slice spans
            // its room from the data start, and the length `write` gives is
            // checked against that room before it is set.
            unsafe {
                let room = self.fresh_room.unwrap_or_else(|| l.room(m));
                let len = write(std::slice::from_raw_parts_mut(l.data(m), room));
                if len > room.min(usize::from(u16::MAX)) {
                    does_not_fit(len, room.min(usize::from(u16::MAX)));
                }
                l.set_len(m, len as u16);
                total += len as u64;
            }
        }
        total
    }

    /// Hands each frame's length over all its segments and the bytes of its
    /// first segment to `read`, in a plain loop the closure inlines into
    /// (one pass over the mbufs).
    #[inline(always)]
    pub fn read_frames(&self, mut read: impl FnMut(u32, &[u8])) {
        assert!(!self.unreset, "frames of a burst not written since alloc");
        let l = self.layout;
        for &m in &self.bufs[self.head..self.tail] {
            // SAFETY: m is an mbuf this burst owns; its first segment holds
            // data_len bytes from its data start, alive while the burst is borrowed.
            unsafe { read(l.pkt_len(m), std::slice::from_raw_parts(l.data(m), usize::from(l.data_len(m)))) }
        }
    }

    /// The device's receive timestamp of the `i`th frame (None: not
    /// stamped, or no such frame).
    #[inline(always)]
    pub fn rx_timestamp(&self, i: usize, field: &crate::RxTimestamp) -> Option<u64> {
        let m = *self.bufs[self.head..self.tail].get(i)?;
        // SAFETY: m is an mbuf this burst owns; `field` was registered in this process.
        unsafe { field.of(m) }
    }

    /// Bytes over all segments of every frame.
    #[inline(always)]
    pub fn bytes(&self) -> u64 {
        assert!(!self.unreset, "frames of a burst not written since alloc");
        let l = self.layout;
        // SAFETY: each is an mbuf this burst owns.
        self.bufs[self.head..self.tail].iter().map(|&m| u64::from(unsafe { l.pkt_len(m) })).sum()
    }
}

/// A frame (or the head written of it) longer than where it goes: a bug in
/// the caller. Out of line and taking values, so that the hot loops' lengths
/// never have their address taken for the message (which would keep them
/// in memory, reloaded after every store to a frame).
#[cold]
#[inline(never)]
fn does_not_fit(len: usize, room: usize) -> ! {
    panic!("{len} B do not fit in {room} B (a frame beyond its mbuf's room, or a head beyond its frame)")
}

impl Drop for Burst {
    fn drop(&mut self) {
        self.free();
    }
}

impl Mempool {
    /// Writes `frame` into every mbuf of the pool, where a freshly allocated
    /// mbuf's data starts: allocation then resets only the metadata, so
    /// the bytes stay for every send. Refused when a frame does not fit.
    pub fn write_template(&self, frame: &[u8]) -> Result<(), crate::Error> {
        let l = MbufLayout::get();
        let mut too_small = None;
        self.for_each_mbuf(|m| {
            // SAFETY: every mbuf of a pool is valid while the pool lives; the
            // copy is bounded by the room after the default headroom.
            unsafe {
                let room = l.fresh_room(m);
                if frame.len() > room {
                    too_small = Some(room);
                    return;
                }
                std::ptr::copy_nonoverlapping(frame.as_ptr(), l.fresh_data(m), frame.len());
            }
        });
        match too_small {
            Some(room) => {
                Err(crate::Error::Other(format!("a frame of {} B does not fit the pool's mbufs ({room} B of room)", frame.len())))
            }
            None => Ok(()),
        }
    }
}
