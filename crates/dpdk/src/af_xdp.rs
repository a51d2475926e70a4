//! net_af_xdp's rules for the pools it receives into, from DPDK's
//! drivers/net/af_xdp (22.11 to 25.11) and the kernel's XDP socket code.
//!
//! The PMD registers the RX queue's mempool itself as the XDP socket's
//! UMEM: every pool object becomes one UMEM chunk. Three rules follow, each
//! of which made `rte_eth_rx_queue_setup` fail (or leak) with DPDK's default
//! packet pool:
//! - at setup the PMD hands the kernel's fill ring 2048 mbufs at once,
//!   whatever the RX ring's size: a pool sized for the ring alone (2047
//!   mbufs) fails with "Failed to configure xdp socket" and -EINVAL;
//! - the kernel takes chunks of 2048 B to one page; DPDK pads objects for
//!   memory-channel spreading, and on 22.11 the PMD registers `count x
//!   chunk` bytes from the first object, so an object layout with a gap at
//!   each page boundary leaves the last objects outside the UMEM (their
//!   mbufs never come back). A 4 KiB object, unpadded, divides every page
//!   size: no gaps, on hugepages or 4 KiB pages (`--no-huge`) alike;
//! - every frame a queue transmits from another pool is copied into an mbuf
//!   of that queue's RX pool, held until the kernel completes it: a sender's
//!   RX pool also covers its TX ring and the completion ring.

use crate::PoolSizing;

/// The PMD's driver name, as `rte_eth_dev_info` gives it.
pub const DRIVER: &str = "net_af_xdp";

/// Mbufs the PMD gives the kernel's fill ring at each RX queue's setup.
pub const FILL_RING: u32 = 2048;

/// The kernel's completion ring for the socket's TX (the PMD's default).
pub const COMPLETION_RING: u32 = 2048;

/// Every pool object, header to data room's end: one UMEM chunk.
pub const CHUNK: u32 = 4096;

/// The largest frame (FCS counted, as every frame size here) a chunk
/// carries: the chunk less the mempool's object header (64 B), struct
/// rte_mbuf (128 B), the mbuf's headroom (128 B) and the kernel's
/// XDP_PACKET_HEADROOM (256 B); 4 B of it stand for the FCS the kernel
/// never sees, left as margin. No multi-buffer: one chunk per frame.
pub const MAX_FRAME: u32 = CHUNK - 576;

/// Whether a port is driven by net_af_xdp.
pub fn is_af_xdp(driver: &str) -> bool {
    driver == DRIVER
}

/// `sizing` for an RX queue's pool on a port whose driver is `driver`:
/// unchanged unless net_af_xdp, which needs the fill ring's mbufs on top,
/// 4 KiB objects, and, where the queue also sends (`tx_ring`: the TX ring
/// it sends through), the copies in flight on the TX and completion rings.
pub fn rx_pool(sizing: PoolSizing, driver: &str, tx_ring: Option<u32>) -> PoolSizing {
    if !is_af_xdp(driver) {
        return sizing;
    }
    let tx_held = tx_ring.map_or(0, |ring| ring + COMPLETION_RING);
    PoolSizing { held: sizing.held + FILL_RING + tx_held, chunk: Some(CHUNK), ..sizing }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> PoolSizing {
        PoolSizing { ring: 1024, burst: 32, cache: 256, data_room: 2176, held: 0, chunk: None }
    }

    #[test]
    fn other_drivers_keep_their_pools() {
        assert_eq!(rx_pool(plain(), "net_null", Some(1024)), plain());
    }

    #[test]
    fn a_receiver_pool_holds_the_fill_ring_beside_its_own_ring() {
        let s = rx_pool(plain(), DRIVER, None);
        // 1024 + 64 + 512 + 2048 = 3648 -> 4095: the 2047 of a plain pool failed setup.
        assert_eq!((plain().mbufs(), s.mbufs()), (2047, 4095));
        assert_eq!(s.chunk, Some(4096));
        assert_eq!(s.bytes_per_mbuf(128), 4096);
    }

    #[test]
    fn a_sender_pool_also_holds_its_copies_in_flight() {
        let s = rx_pool(PoolSizing { cache: 0, ..plain() }, DRIVER, Some(1024));
        // 1024 + 64 + 2048 + 1024 + 2048 = 6208 -> 8191
        assert_eq!(s.mbufs(), 8191);
    }

    #[test]
    fn a_chunk_carries_frames_up_to_3520_bytes() {
        assert_eq!(MAX_FRAME, 3520);
        // ENA's MTU limit for XDP without multi-buffer is 3498 B: its frame (+14 +4) fits.
        const { assert!(3498 + 18 <= MAX_FRAME) };
    }
}

/// This process's AF_XDP sockets as the kernel runs them: how many, and how
/// many of them in zero-copy mode (`getsockopt(XDP_OPTIONS)`, which only an
/// AF_XDP socket answers). The PMD asks for neither mode, so the kernel
/// binds zero-copy where the driver offers it and falls back to copy where
/// it does not, without a word; this is how to learn which it did. None
/// when /proc/self/fd cannot be read.
pub fn sockets() -> Option<XdpSockets> {
    let mut found = XdpSockets::default();
    for socket in xdp_sockets()? {
        found.sockets += 1;
        found.zero_copy += u32::from(socket.flags & libc::XDP_OPTIONS_ZEROCOPY != 0);
    }
    Some(found)
}

/// One of this process's AF_XDP sockets: its descriptor, its socket
/// inode (what tells a socket from a later one on the same descriptor
/// number) and its option flags.
struct XdpSocket {
    fd: i32,
    inode: u64,
    flags: u32,
}

/// This process's descriptors that answer as AF_XDP sockets.
fn xdp_sockets() -> Option<Vec<XdpSocket>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Some(flags) = xdp_options(fd) else { continue };
        let link = std::fs::read_link(entry.path()).ok();
        let inode = link.as_ref().and_then(|l| l.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok());
        if let Some(inode) = inode {
            out.push(XdpSocket { fd, inode, flags });
        }
    }
    Some(out)
}

/// Frames the kernel dropped because an XDP socket's RX ring was full (its
/// reader did not take them in time: XDP_STATISTICS `rx_ring_full`), over
/// this process's sockets, kept across sockets closed and made again when
/// a port is reconfigured. net_af_xdp does not pass this counter on (its
/// `imissed` is the sockets' `rx_dropped` alone), and the kernel does not
/// tell through getsockopt which interface a socket is bound to: the port
/// that owns the tally (the first net_af_xdp port) counts every socket's.
#[derive(Debug, Default)]
pub struct RingFullTally {
    /// Each live socket's count at the last read, by socket inode.
    last: std::sync::Mutex<std::collections::HashMap<u64, u64>>,
    total: std::sync::atomic::AtomicU64,
}

impl RingFullTally {
    /// The total so far, the live sockets read now. Off the data path: it walks /proc.
    pub fn read(&self) -> u64 {
        use std::sync::atomic::Ordering;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = std::collections::HashMap::new();
        for socket in xdp_sockets().unwrap_or_default() {
            let Some(stats) = xdp_statistics(socket.fd) else { continue };
            let before = last.get(&socket.inode).copied().unwrap_or(0);
            self.total.fetch_add(stats.rx_ring_full.saturating_sub(before), Ordering::Relaxed);
            seen.insert(socket.inode, stats.rx_ring_full);
        }
        *last = seen;
        self.total.load(Ordering::Relaxed)
    }
}

/// An AF_XDP socket's statistics (struct xdp_statistics, the full one).
fn xdp_statistics(fd: i32) -> Option<libc::xdp_statistics> {
    // SAFETY: a plain struct of six u64; zeroes are a valid value.
    let mut stats: libc::xdp_statistics = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::xdp_statistics>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `stats`; a shorter
    // answer (an old kernel's v1 struct) leaves rx_ring_full at 0.
    let rc = unsafe { libc::getsockopt(fd, libc::SOL_XDP, libc::XDP_STATISTICS, (&raw mut stats).cast(), &mut len) };
    (rc == 0).then_some(stats)
}

/// What `sockets` found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XdpSockets {
    pub sockets: u32,
    pub zero_copy: u32,
}

/// An AF_XDP socket's option flags (struct xdp_options); None for any
/// other descriptor (no socket: ENOTSOCK; another family: ENOPROTOOPT).
fn xdp_options(fd: i32) -> Option<u32> {
    let mut options = libc::xdp_options { flags: 0 };
    let mut len = std::mem::size_of::<libc::xdp_options>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `options`, a struct
    // xdp_options; on any other descriptor it fails and writes nothing.
    let rc = unsafe { libc::getsockopt(fd, libc::SOL_XDP, libc::XDP_OPTIONS, (&raw mut options).cast(), &mut len) };
    (rc == 0).then_some(options.flags)
}
