//! A receive lane: `recvmmsg` on one socket into buffers allocated once,
//! GRO's coalesced buffers split back into their datagrams, each datagram's
//! probe counted into the lane's stream table.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use seqtrack::StreamTable;
use wire::{Probe, PROBE_LEN};

use crate::messages::Messages;
use crate::payload::frame_len;

/// The most a receive buffer holds: one GRO buffer of up to 64 KiB.
pub const MAX_BUFFER: usize = 65_536;

/// The run id the socket path records frames under: "no run id", as
/// DPDK's receive lanes count datagrams the kernel sent (wire's "BDPK"
/// probes). A UDP socket does not see the IPv4 identification field, where
/// blast's DPDK lanes carry their run id; a new sender run is told by its
/// numbering starting over (seqtrack's doc says how).
const SOCKET_RUN: u16 = seqtrack::NO_RUN;

/// What a receive lane counted. `datagrams` are the sender's frames, one
/// each; `buffers` what the kernel handed up (more than one datagram each
/// when GRO coalesced them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecvCounts {
    pub datagrams: u64,
    /// Frame bytes, as a DPDK port counts them: headers and FCS included.
    pub frame_bytes: u64,
    pub buffers: u64,
    /// Buffers that held more than one datagram (GRO at work).
    pub coalesced: u64,
    /// Datagrams too short for a probe, or without its magic.
    pub no_probe: u64,
    /// Buffers cut short by the kernel (larger than [`MAX_BUFFER`]): never
    /// expected, counted so a short count is not silent.
    pub truncated: u64,
    pub calls: u64,
    /// Reflecting: datagrams sent back to their senders, and those the
    /// kernel would not take back (a full send buffer).
    pub reflected: u64,
    pub reflect_refused: u64,
}

/// One socket's receive loop and what it counted.
pub struct RecvLane {
    fd: OwnedFd,
    messages: Messages,
    controls: Vec<u8>,
    pub table: StreamTable,
    pub counts: RecvCounts,
}

/// Room for one `UDP_GRO` control message (an int) per buffer.
const CONTROL_LEN: usize = 64;

impl RecvLane {
    /// A lane over `fd` that takes up to `batch` buffers per call and tracks
    /// `streams` stream ids.
    pub fn new(fd: OwnedFd, batch: usize, streams: usize) -> RecvLane {
        RecvLane::with(fd, Messages::new(batch.clamp(1, 1024), MAX_BUFFER), batch, streams)
    }

    /// As [`RecvLane::new`], sending every datagram back to where it came
    /// from once counted (drop --reflect: the sender times the round trip).
    /// The socket must not coalesce (no UDP GRO): each buffer goes back as
    /// one datagram, so a coalesced one is not sent back but counted refused.
    pub fn reflecting(fd: OwnedFd, batch: usize, streams: usize) -> RecvLane {
        RecvLane::with(fd, Messages::with_names(batch.clamp(1, 1024), MAX_BUFFER), batch, streams)
    }

    fn with(fd: OwnedFd, messages: Messages, batch: usize, streams: usize) -> RecvLane {
        let batch = batch.clamp(1, 1024);
        RecvLane {
            fd,
            messages,
            controls: vec![0; batch * CONTROL_LEN],
            table: StreamTable::with_capacity(streams),
            counts: RecvCounts::default(),
        }
    }

    /// The socket, for reading its drops.
    pub fn socket(&self) -> &OwnedFd {
        &self.fd
    }

    /// One `recvmmsg`: waits for a buffer (up to the socket's receive
    /// timeout), takes what else is queued up to the batch, and counts it.
    /// Returns the datagrams counted; 0 when the wait ended empty.
    pub fn poll(&mut self) -> std::io::Result<usize> {
        self.poll_with(|_| {})
    }

    /// As [`RecvLane::poll`], calling `before` with the lane's stream table
    /// once buffers are in hand and before they are counted (a measured
    /// window's bounds are taken in there: frames that arrived after the
    /// window opened are never counted before them).
    pub fn poll_with(&mut self, before: impl FnOnce(&mut StreamTable)) -> std::io::Result<usize> {
        self.poll_timed(before, |_| {})
    }

    /// As [`RecvLane::poll_with`], handing `each` every probe counted
    /// (drop --one-way times them; the closure is inlined: no branch per
    /// datagram when it does nothing).
    #[inline]
    pub fn poll_timed(&mut self, before: impl FnOnce(&mut StreamTable), mut each: impl FnMut(&Probe)) -> std::io::Result<usize> {
        let batch = self.messages.batch();
        if self.messages.has_names() {
            self.messages.reset_names();
        }
        for (i, m) in self.messages.headers.iter_mut().enumerate() {
            m.msg_hdr.msg_control = self.controls[i * CONTROL_LEN..].as_mut_ptr().cast();
            m.msg_hdr.msg_controllen = CONTROL_LEN as _;
            m.msg_hdr.msg_flags = 0;
            m.msg_len = 0;
        }
        // SAFETY: every header points at an iovec and a control buffer this
        // lane owns, of the lengths it states.
        let n = unsafe {
            libc::recvmmsg(self.fd.as_raw_fd(), self.messages.headers.as_mut_ptr(), batch as _, libc::MSG_WAITFORONE, std::ptr::null_mut())
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(0),
                _ => Err(e),
            };
        }
        self.counts.calls += 1;
        if n > 0 {
            before(&mut self.table);
        }
        let before = self.counts.datagrams;
        for i in 0..n as usize {
            let (len, segment, truncated) = {
                let m = &self.messages.headers[i];
                (m.msg_len as usize, gro_segment(&m.msg_hdr), m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0)
            };
            self.counts.truncated += u64::from(truncated);
            let buf = self.messages.buffer(i, len);
            self.counts.buffers += 1;
            let segment = segment.filter(|&s| s > 0 && s < len).unwrap_or(len.max(1));
            self.counts.coalesced += u64::from(segment < len);
            for datagram in buf.chunks(segment) {
                count(datagram, &mut self.table, &mut self.counts, &mut each);
            }
        }
        if self.messages.has_names() && n > 0 {
            self.reflect(n as usize);
        }
        Ok((self.counts.datagrams - before) as usize)
    }

    /// Sends the call's `n` buffers back to their senders, each as it came
    /// (never waiting: what a full send buffer refuses is counted).
    fn reflect(&mut self, n: usize) {
        let coalesced = |h: &libc::mmsghdr| gro_segment(&h.msg_hdr).is_some_and(|s| s > 0 && s < h.msg_len as usize);
        let mut i = 0;
        while i < n {
            if coalesced(&self.messages.headers[i]) {
                // Never on a socket opened without GRO: not sent back as one datagram.
                self.counts.reflect_refused += 1;
                i += 1;
                continue;
            }
            // A run of single datagrams, sent back in as few calls as the kernel takes them.
            let mut end = i;
            while end < n && !coalesced(&self.messages.headers[end]) {
                let len = self.messages.headers[end].msg_len as usize;
                self.messages.set_len(end, len);
                self.messages.headers[end].msg_hdr.msg_controllen = 0;
                end += 1;
            }
            let mut sent = i;
            while sent < end {
                // SAFETY: the headers point at this lane's buffers, iovecs and
                // addresses, filled by the recvmmsg just before.
                let r = unsafe {
                    libc::sendmmsg(self.fd.as_raw_fd(), self.messages.headers[sent..].as_mut_ptr(), (end - sent) as _, libc::MSG_DONTWAIT)
                };
                if r <= 0 {
                    break;
                }
                sent += r as usize;
            }
            self.counts.reflected += (sent - i) as u64;
            self.counts.reflect_refused += (end - sent) as u64;
            for k in i..end {
                self.messages.set_len(k, self.messages.stride);
            }
            i = end;
        }
    }

    /// Polls until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) -> std::io::Result<()> {
        while !stop.load(Relaxed) {
            self.poll()?;
        }
        Ok(())
    }
}

#[inline(always)]
fn count(datagram: &[u8], table: &mut StreamTable, counts: &mut RecvCounts, each: &mut impl FnMut(&Probe)) {
    counts.datagrams += 1;
    let frame = frame_len(datagram.len());
    counts.frame_bytes += frame as u64;
    match datagram.first_chunk::<PROBE_LEN>().and_then(Probe::read) {
        Some(p) => {
            table.record_frame(p.stream, p.seq, SOCKET_RUN, frame as u32);
            each(&p);
        }
        None => counts.no_probe += 1,
    }
}

/// The segment size of a GRO buffer, from its `UDP_GRO` control message.
fn gro_segment(h: &libc::msghdr) -> Option<usize> {
    // SAFETY: the header's control buffer was filled by the kernel and its
    // length set by it; the CMSG macros walk only within it.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == libc::UDP_GRO {
                let size: libc::c_int = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                return usize::try_from(size).ok();
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}
