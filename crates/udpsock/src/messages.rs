//! The message array a `sendmmsg` or `recvmmsg` call works on: `batch`
//! buffers of `stride` bytes, each behind one iovec and one header,
//! allocated once and reused by every call.

/// Buffers, their iovecs and the headers that point at them.
pub(crate) struct Messages {
    pub(crate) bufs: Vec<u8>,
    pub(crate) stride: usize,
    /// Read only through the headers' pointers; kept so they stay valid.
    _iovs: Vec<libc::iovec>,
    pub(crate) headers: Vec<libc::mmsghdr>,
    /// Each message's peer address (a receiver that answers its senders
    /// reads them; empty when not asked for).
    names: Vec<libc::sockaddr_storage>,
}

// The raw pointers in `_iovs` and `headers` point into the array's own heap
// buffers, which move with it.
unsafe impl Send for Messages {}

impl Messages {
    pub(crate) fn new(batch: usize, stride: usize) -> Messages {
        let mut bufs = vec![0u8; batch * stride];
        let mut iovs: Vec<libc::iovec> =
            (0..batch).map(|i| libc::iovec { iov_base: bufs[i * stride..].as_mut_ptr().cast(), iov_len: stride }).collect();
        // SAFETY: mmsghdr is plain data; all zeroes is a valid empty header.
        let mut headers: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; batch];
        for (h, iov) in headers.iter_mut().zip(iovs.iter_mut()) {
            h.msg_hdr.msg_iov = iov;
            h.msg_hdr.msg_iovlen = 1;
        }
        Messages { bufs, stride, _iovs: iovs, headers, names: Vec::new() }
    }

    /// The same, with room for each message's peer address: a `recvmmsg`
    /// fills them, and a `sendmmsg` of the same headers answers each peer.
    pub(crate) fn with_names(batch: usize, stride: usize) -> Messages {
        let mut m = Messages::new(batch, stride);
        // SAFETY: sockaddr_storage is plain data; all zeroes is an empty address.
        m.names = vec![unsafe { std::mem::zeroed() }; batch];
        for (h, name) in m.headers.iter_mut().zip(m.names.iter_mut()) {
            h.msg_hdr.msg_name = (name as *mut libc::sockaddr_storage).cast();
        }
        m
    }

    /// Before a `recvmmsg`: each header's address room back to its full size.
    pub(crate) fn reset_names(&mut self) {
        let len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        for h in self.headers.iter_mut().filter(|h| !h.msg_hdr.msg_name.is_null()) {
            h.msg_hdr.msg_namelen = len;
        }
    }

    pub(crate) fn has_names(&self) -> bool {
        !self.names.is_empty()
    }

    /// Has buffer `i`'s message carry its first `len` bytes (at most its stride).
    pub(crate) fn set_len(&mut self, i: usize, len: usize) {
        // SAFETY: each header's iovec pointer is into `_iovs`, which lives as long as the array.
        unsafe { (*self.headers[i].msg_hdr.msg_iov).iov_len = len.min(self.stride) };
    }

    /// Buffer `i`'s first `len` bytes.
    pub(crate) fn buffer(&self, i: usize, len: usize) -> &[u8] {
        &self.bufs[i * self.stride..i * self.stride + len.min(self.stride)]
    }

    pub(crate) fn batch(&self) -> usize {
        self.headers.len()
    }
}
