//! The kernel's side of an af_packet port (`net_af_packet`): its packet
//! sockets, found off the data path by matching the process's open sockets
//! (`/proc/self/fd`) against the kernel's packet socket table
//! (`/proc/net/packet`, which gives each socket's interface index), since
//! the PMD does not expose them. Two uses, each where the PMD falls short
//! (read in DPDK's rte_eth_af_packet.c, 22.11 to 25.11):
//! - TX: the PMD counts a frame in `opackets` when it puts it in the
//!   socket's TX ring and kicks the kernel once per burst; a frame the
//!   qdisc refused stays in the ring (marked to send) until the next kick,
//!   and stopping the port closes the socket with it. [`drain_tx`] kicks
//!   until the rings are empty and the kernel holds no frame of ours.
//! - RX: the kernel counts frames its RX ring had no room for
//!   (`PACKET_STATISTICS` `tp_drops`, reset on each read); DPDK folds them
//!   into `imissed` only from 25.03. [`take_rx_drops`] reads them.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// The inodes of the packet sockets bound to interface `ifindex`, from the
/// text of `/proc/net/packet` (`sk RefCnt Type Proto Iface R Rmem User Inode`).
fn inodes_on(table: &str, ifindex: u32) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let iface: u32 = cols.get(4)?.parse().ok()?;
            let inode: u64 = cols.get(8)?.parse().ok()?;
            (iface == ifindex).then_some(inode)
        })
        .collect()
}

/// This process's file descriptors that are sockets, with their inodes.
fn own_sockets() -> Vec<(RawFd, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| {
            let fd: RawFd = e.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(e.path()).ok()?;
            let inode = target.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()?;
            Some((fd, inode))
        })
        .collect()
}

/// The packet sockets this process holds on interface `ifindex` (an
/// af_packet port's, one per queue pair), as file descriptors. Empty where
/// /proc cannot be read or the interface has none of ours.
pub fn packet_sockets(ifindex: u32) -> Vec<RawFd> {
    if ifindex == 0 {
        return Vec::new();
    }
    let Ok(table) = std::fs::read_to_string("/proc/net/packet") else { return Vec::new() };
    let inodes = inodes_on(&table, ifindex);
    own_sockets().into_iter().filter(|(_, inode)| inodes.contains(inode)).map(|(fd, _)| fd).collect()
}

/// One kick of a socket's TX ring: true when the ring had nothing left to
/// send (the kernel took every frame marked to send, or there were none).
fn kick_ring_empty(fd: RawFd) -> bool {
    // SAFETY: a null buffer of length 0 is how a TX ring is kicked
    // (packet_mmap.rst); MSG_DONTWAIT keeps it from blocking on a full qdisc.
    let rc = unsafe { libc::sendto(fd, std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
    // 0: no frame was marked to send; > 0: frames went (more may follow);
    // -1 (ENOBUFS, EAGAIN): the qdisc is full, frames wait in the ring.
    rc == 0
}

/// Bytes of this socket's frames the kernel still holds (in the qdisc or
/// the driver): SIOCOUTQ, the socket's write allocation. None on error.
fn bytes_in_flight(fd: RawFd) -> Option<i32> {
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int into `n`, which we own.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut n) };
    (rc == 0).then_some(n)
}

/// How a TX drain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxDrain {
    /// Not a port with kernel sockets (or none found): nothing to drain.
    NotKernel,
    /// Every frame accepted has left the socket: rings empty, nothing in flight.
    Drained { waited: Duration },
    /// Frames were still queued when the deadline came: they may never leave.
    TimedOut { waited: Duration },
}

/// Kicks the TX rings of `fds` until none has a frame marked to send and
/// the kernel holds none of their frames, or until `limit`. Call only while
/// no lane bursts on these sockets (after the lanes stop, before the port
/// stops). Sleeps a millisecond between rounds.
pub fn drain_tx(fds: &[RawFd], limit: Duration) -> TxDrain {
    if fds.is_empty() {
        return TxDrain::NotKernel;
    }
    let start = Instant::now();
    loop {
        // Every ring kicked each round: one socket's frames wait behind another's in the qdisc.
        let empty: Vec<bool> = fds.iter().map(|&fd| kick_ring_empty(fd)).collect();
        let rings_empty = empty.iter().all(|&e| e);
        let in_flight = fds.iter().any(|&fd| bytes_in_flight(fd).is_none_or(|n| n > 0));
        let waited = start.elapsed();
        if rings_empty && !in_flight {
            return TxDrain::Drained { waited };
        }
        if waited >= limit {
            return TxDrain::TimedOut { waited };
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The frames the kernel dropped for want of room in the RX rings of
/// `fds` since the last read (PACKET_STATISTICS resets on each read: the
/// caller sums). None when a read failed.
pub fn take_rx_drops(fds: &[RawFd]) -> Option<u64> {
    let mut total = 0u64;
    for &fd in fds {
        let mut st = libc::tpacket_stats { tp_packets: 0, tp_drops: 0 };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: PACKET_STATISTICS on a packet socket writes a
        // tpacket_stats (TPACKET_V2, the PMD's version) of `len` bytes into `st`.
        let rc = unsafe {
            libc::getsockopt(fd, libc::SOL_PACKET, libc::PACKET_STATISTICS, (&mut st as *mut libc::tpacket_stats).cast(), &mut len)
        };
        if rc != 0 {
            return None;
        }
        total += u64::from(st.tp_drops);
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packet_table_gives_the_inodes_on_one_interface() {
        let table = "sk               RefCnt Type Proto  Iface R Rmem   User   Inode\n\
                     ffff8e1f4c2d6000 3      3    0003   4096   1 0      0      91234\n\
                     ffff8e1f4c2d7000 3      3    0003   8192   1 0      0      91235\n\
                     ffff8e1f4c2d8000 3      3    0003   4096   1 0      0      91236\n\
                     garbage line\n";
        assert_eq!(inodes_on(table, 4096), [91234, 91236]);
        assert_eq!(inodes_on(table, 8192), [91235]);
        assert!(inodes_on(table, 1).is_empty());
    }

    #[test]
    fn no_interface_no_sockets() {
        assert!(packet_sockets(0).is_empty());
        assert_eq!(drain_tx(&[], Duration::from_secs(1)), TxDrain::NotKernel);
    }
}
