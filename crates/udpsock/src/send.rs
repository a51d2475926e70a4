//! A send lane: one stream's frames as UDP payloads, probes stamped in
//! place, handed to the kernel with `sendmmsg`, each message one GSO buffer
//! of up to [`MAX_SEGMENTS`] datagrams that the stack (or the NIC) cuts.

use std::os::fd::{AsRawFd, OwnedFd};

use nix::sys::socket::{self, sockopt};
use wire::{Probe, PROBE_LEN};

use crate::messages::Messages;
use crate::payload::{frame_len, payload_len};
use crate::socket::SocketError;

/// Datagrams per GSO buffer at most: the kernel's UDP_MAX_SEGMENTS was 64
/// before Linux 6.9 raised it to 128; 64 works on both.
pub const MAX_SEGMENTS: usize = 64;
/// A GSO buffer's payload may not pass an IPv4 datagram's (65,535 less the
/// IPv4 and UDP headers).
const MAX_GSO_BYTES: usize = 65_507;

/// What a send lane handed the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendCounts {
    /// Datagrams the kernel took (each one frame on the wire).
    pub datagrams: u64,
    pub frame_bytes: u64,
    pub calls: u64,
    /// Calls the kernel refused outright (ENOBUFS, EAGAIN, or
    /// ECONNREFUSED: the far host said no socket listens): nothing of them
    /// was sent, and their sequence numbers are used again.
    pub refused: u64,
}

/// One stream's sender on one connected socket.
pub struct SendLane {
    fd: OwnedFd,
    stream: u16,
    next_seq: u32,
    payload: usize,
    segments: usize,
    messages: Messages,
    /// Where datagrams sent back to this socket land (blast --reflect), if asked for.
    echoes: Option<Messages>,
    pub counts: SendCounts,
}

/// Echoes taken at most per call.
const ECHO_BATCH: usize = 64;

impl SendLane {
    /// A lane sending stream `stream`'s frames of `frame` bytes (FCS
    /// included) on `fd`, `segments` datagrams per GSO buffer (1: no GSO)
    /// and `batch` buffers per `sendmmsg`.
    pub fn new(fd: OwnedFd, stream: u16, frame: usize, segments: usize, batch: usize) -> Result<SendLane, SocketError> {
        let payload = payload_len(frame).ok_or(SocketError::FrameTooSmall(frame))?;
        let segments = segments.clamp(1, MAX_SEGMENTS).min((MAX_GSO_BYTES / payload).max(1));
        let batch = batch.clamp(1, 1024);
        if segments > 1 {
            socket::setsockopt(&fd, sockopt::UdpGsoSegment, &(payload as i32)).map_err(|error| SocketError::Option {
                option: "UDP_SEGMENT",
                error,
                hint: " (UDP GSO needs Linux 4.18 or later; send with one datagram per buffer)",
            })?;
        }
        Ok(SendLane {
            fd,
            stream,
            next_seq: 0,
            payload,
            segments,
            messages: Messages::new(batch, segments * payload),
            echoes: None,
            counts: SendCounts::default(),
        })
    }

    /// Has the lane take what its peer sends back to its socket (a
    /// connected socket receives from its peer alone): see [`Self::take_echoes`].
    pub fn expect_echoes(&mut self) {
        self.echoes = Some(Messages::new(ECHO_BATCH, self.payload.max(PROBE_LEN)));
    }

    /// Takes, without waiting, what came back to the socket, handing `each`
    /// every datagram's probe (None: a datagram without one). Returns how
    /// many it took; 0 when none waited or no echoes are expected.
    #[inline]
    pub fn take_echoes(&mut self, mut each: impl FnMut(Option<Probe>)) -> std::io::Result<usize> {
        let Some(m) = self.echoes.as_mut() else { return Ok(0) };
        // SAFETY: the headers point at iovecs over the echo array's own buffers.
        let n = unsafe {
            libc::recvmmsg(self.fd.as_raw_fd(), m.headers.as_mut_ptr(), m.batch() as _, libc::MSG_DONTWAIT, std::ptr::null_mut())
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                // ECONNREFUSED: an ICMP port-unreachable, reported here rather than on a send.
                Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNREFUSED) => Ok(0),
                _ => Err(e),
            };
        }
        for i in 0..n as usize {
            let len = m.headers[i].msg_len as usize;
            each(m.buffer(i, len).first_chunk::<PROBE_LEN>().and_then(Probe::read));
        }
        Ok(n as usize)
    }

    /// Datagrams per call when every buffer is taken.
    pub fn per_call(&self) -> usize {
        self.segments * self.messages.batch()
    }

    /// Each datagram's frame on the wire, FCS included (the step's frame size).
    pub fn frame_bytes(&self) -> u64 {
        frame_len(self.payload) as u64
    }

    /// Datagrams per GSO buffer.
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// The next sequence number this lane will send.
    pub fn next_seq(&self) -> u32 {
        self.next_seq
    }

    /// Continues the stream from `seq` (a ladder's steps keep numbering
    /// each stream where the last step left it).
    pub fn set_next_seq(&mut self, seq: u32) {
        self.next_seq = seq;
    }

    /// Stamps a call's probes (sequence numbers from the next one on, sent
    /// at `tx_ns`) and hands up to `buffers` GSO buffers to the kernel.
    /// Returns the datagrams it took; the sequence numbers of what it did
    /// not take are sent next time, so a receiver never counts them lost.
    pub fn send(&mut self, buffers: usize, tx_ns: u64) -> std::io::Result<usize> {
        self.send_datagrams(buffers.clamp(1, self.messages.batch()) * self.segments, tx_ns)
    }

    /// As [`send`](Self::send), for `datagrams` datagrams (at most
    /// [`per_call`](Self::per_call)): whole GSO buffers, and the rest in one
    /// shorter buffer (a paced lane sends what is due, not a whole call).
    pub fn send_datagrams(&mut self, datagrams: usize, tx_ns: u64) -> std::io::Result<usize> {
        let datagrams = datagrams.clamp(1, self.per_call());
        let (whole, rest) = (datagrams / self.segments, datagrams % self.segments);
        let buffers = whole + usize::from(rest > 0);
        for d in 0..datagrams {
            let at = d * self.payload;
            let probe: &mut [u8; PROBE_LEN] = (&mut self.messages.bufs[at..at + PROBE_LEN]).try_into().expect("a payload holds a probe");
            Probe { stream: self.stream, seq: self.next_seq.wrapping_add(d as u32), tx_ns }.write_kernel_sent(probe);
        }
        if rest > 0 {
            self.messages.set_len(whole, rest * self.payload);
        }
        // SAFETY: the headers point at iovecs over this lane's own buffers.
        let n = unsafe { libc::sendmmsg(self.fd.as_raw_fd(), self.messages.headers.as_mut_ptr(), buffers as _, 0) };
        if rest > 0 {
            self.messages.set_len(whole, self.messages.stride);
        }
        self.counts.calls += 1;
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                // ECONNREFUSED: an ICMP port-unreachable from an earlier
                // datagram (no receiver yet, or gone), reported on this call,
                // which sent nothing.
                Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNREFUSED) => {
                    self.counts.refused += 1;
                    Ok(0)
                }
                _ => Err(e),
            };
        }
        // Buffers go in order: the short one, if taken, is the last.
        let n = n as usize;
        let taken = if n > whole { datagrams } else { n * self.segments };
        self.next_seq = self.next_seq.wrapping_add(taken as u32);
        self.counts.datagrams += taken as u64;
        self.counts.frame_bytes += (taken * frame_len(self.payload)) as u64;
        Ok(taken)
    }
}
