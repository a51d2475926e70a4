//! A kernel network interface's driver statistics: the named counters
//! `ethtool -S IFACE` prints (on ENA the allowance counters, on veth the
//! per-queue XDP counters), and the driver's name (`ethtool -i`).
//!
//! Read with the ethtool ioctl (`SIOCETHTOOL`: `ETHTOOL_GDRVINFO`,
//! `ETHTOOL_GSSET_INFO`, `ETHTOOL_GSTRINGS`, `ETHTOOL_GSTATS`), as
//! ethtool(8) itself reads them: the kernel's ethtool netlink interface
//! carries the standard statistics groups only, never a driver's own
//! counters, and the text of `ethtool -S` is not parsed. No EAL: a port on
//! `net_af_xdp` or `net_af_packet` sits on such an interface, and DPDK does
//! not pass its driver's counters on.
//!
//! Each read is a few system calls; on ENA the kernel driver asks the
//! device for its ENI counters on every read (an admin command), so
//! callers read off the data path, about once a second.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd};

mod link;
pub use link::{link_drops, link_drops_of_index, LinkDrops, LinkError};

/// Bytes of one statistic's name in `ETHTOOL_GSTRINGS` (ETH_GSTRING_LEN).
const NAME_LEN: usize = 32;
const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GTXCSUM: u32 = 0x16;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
/// The string set of the driver's statistics (enum ethtool_stringset).
const ETH_SS_STATS: u32 = 1;
/// Room for this many entries beyond the count just read. The kernel fills
/// GSTRINGS and GSTATS with as many entries as the driver lists at that
/// moment, not as many as asked for, so a driver whose queues grew between
/// the count and the request would write past a buffer sized to the count
/// (ethtool(8) has the same window); a grown count is then reported, not
/// read.
const SLACK: usize = 256;

/// `struct ethtool_drvinfo` (linux/ethtool.h).
#[repr(C)]
struct DrvInfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

/// `struct ethtool_sset_info` asking for one string set.
#[repr(C)]
struct SsetInfo {
    cmd: u32,
    reserved: u32,
    sset_mask: u64,
    data: [u32; 1],
}

/// What went wrong reading an interface's statistics.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0:?} is not an interface name (1 to 15 bytes, no NUL)")]
    BadName(String),
    #[error("no socket to ask the kernel with: {0}")]
    Socket(nix::Error),
    #[error(
        "the ethtool ioctl ({what}) on {interface} failed: {errno} (no such interface in this network namespace, or a driver without it)"
    )]
    Ioctl { interface: String, what: &'static str, errno: nix::Error },
    #[error("no interface has index {index} in this network namespace: {errno}")]
    NoIndex { index: u32, errno: nix::Error },
    #[error("{interface}'s driver now lists {now} statistics, {was} before (its queues changed): read the names again")]
    CountChanged { interface: String, was: usize, now: usize },
}

mod ioctl {
    // SIOCETHTOOL's number carries no size or direction bits (a "bad" ioctl).
    nix::ioctl_readwrite_bad!(siocethtool, libc::SIOCETHTOOL, libc::ifreq);
}

/// An interface whose driver statistics can be read.
#[derive(Debug)]
pub struct Interface {
    name: String,
    socket: OwnedFd,
}

impl Interface {
    /// The interface `name` in this process's network namespace (its
    /// existence is checked by the first read).
    pub fn open(name: &str) -> Result<Interface, Error> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
            return Err(Error::BadName(name.into()));
        }
        use nix::sys::socket::{socket, AddressFamily, SockFlag, SockType};
        let socket = socket(AddressFamily::Inet, SockType::Datagram, SockFlag::SOCK_CLOEXEC, None).map_err(Error::Socket)?;
        Ok(Interface { name: name.into(), socket })
    }

    /// The interface whose index is `index` (a DPDK port's `if_index`).
    pub fn by_index(index: u32) -> Result<Interface, Error> {
        let name = nix::net::if_::if_indextoname(index).map_err(|errno| Error::NoIndex { index, errno })?;
        Interface::open(&name.to_string_lossy())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// One ethtool command on a buffer that starts with its command word.
    fn ask(&self, what: &'static str, buffer: *mut u8) -> Result<(), Error> {
        // SAFETY: ifreq is plain data; zeroed is a valid value.
        let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in request.ifr_name.iter_mut().zip(self.name.bytes()) {
            *dst = src as libc::c_char;
        }
        request.ifr_ifru.ifru_data = buffer.cast();
        // SAFETY: `buffer` points to a live, writable ethtool structure sized
        // for the command it names, with SLACK entries more where the kernel
        // fills as many as the driver lists at that moment (the callers
        // allocate it so), and the request names a NUL-terminated interface
        // (checked in `open`).
        unsafe { ioctl::siocethtool(self.socket.as_raw_fd(), &mut request) }.map(drop).map_err(|errno| Error::Ioctl {
            interface: self.name.clone(),
            what,
            errno,
        })
    }

    /// The kernel driver's name ("ena", "veth", "igb").
    pub fn driver(&self) -> Result<String, Error> {
        // SAFETY: plain data; zeroed is valid.
        let mut info: DrvInfo = unsafe { std::mem::zeroed() };
        info.cmd = ETHTOOL_GDRVINFO;
        self.ask("ETHTOOL_GDRVINFO", (&mut info as *mut DrvInfo).cast())?;
        Ok(c_text(&info.driver))
    }

    /// Whether the interface leaves transmitted checksums to its offload
    /// (`ethtool -k`'s tx-checksumming): a sender's frames then carry a
    /// partial checksum until the device fills it in, which a veth never does.
    pub fn tx_checksumming(&self) -> Result<bool, Error> {
        // struct ethtool_value: cmd, data.
        let mut value = [ETHTOOL_GTXCSUM, 0u32];
        self.ask("ETHTOOL_GTXCSUM", value.as_mut_ptr().cast())?;
        Ok(value[1] != 0)
    }

    /// How many statistics the driver lists now.
    fn count(&self) -> Result<usize, Error> {
        let mask = 1u64 << ETH_SS_STATS;
        let mut info = SsetInfo { cmd: ETHTOOL_GSSET_INFO, reserved: 0, sset_mask: mask, data: [0] };
        self.ask("ETHTOOL_GSSET_INFO", (&mut info as *mut SsetInfo).cast())?;
        // The kernel clears the bit of a set the driver does not have.
        Ok(if info.sset_mask & mask == 0 { 0 } else { info.data[0] as usize })
    }

    /// The names of the driver's statistics, in the order [`Interface::read`] gives their values.
    pub fn names(&self) -> Result<Vec<String>, Error> {
        let n = self.count()?;
        if n == 0 {
            return Ok(Vec::new());
        }
        // struct ethtool_gstrings: cmd, string_set, len, then len names of
        // 32 bytes (the kernel's len: room for SLACK more).
        let mut buf = vec![0u32; 3 + (n + SLACK) * NAME_LEN / 4];
        buf[0] = ETHTOOL_GSTRINGS;
        buf[1] = ETH_SS_STATS;
        buf[2] = n as u32;
        self.ask("ETHTOOL_GSTRINGS", buf.as_mut_ptr().cast())?;
        let got = buf[2] as usize;
        if got != n {
            return Err(Error::CountChanged { interface: self.name.clone(), was: n, now: got });
        }
        let bytes: Vec<u8> = buf[3..].iter().flat_map(|w| w.to_ne_bytes()).collect();
        Ok(split_names(&bytes, got))
    }

    /// The driver's statistics now, `expected` of them (the count
    /// [`Interface::names`] returned: a different count is an error, as the
    /// names no longer line up with the values).
    pub fn read(&self, expected: usize) -> Result<Vec<u64>, Error> {
        let now = self.count()?;
        if now != expected {
            return Err(Error::CountChanged { interface: self.name.clone(), was: expected, now });
        }
        if expected == 0 {
            // Drivers without statistics refuse ETHTOOL_GSTATS (loopback).
            return Ok(Vec::new());
        }
        // struct ethtool_stats: cmd and n_stats (one u64's room), then
        // n_stats u64 values (the kernel's n_stats: room for SLACK more).
        let mut buf = vec![0u64; 1 + expected + SLACK];
        buf[0] = stats_head(ETHTOOL_GSTATS, expected as u32);
        self.ask("ETHTOOL_GSTATS", buf.as_mut_ptr().cast())?;
        let given = buf[0].to_ne_bytes()[4..].try_into().map(u32::from_ne_bytes).unwrap_or(0) as usize;
        if given != expected {
            return Err(Error::CountChanged { interface: self.name.clone(), was: expected, now: given });
        }
        buf.truncate(1 + expected);
        buf.remove(0);
        Ok(buf)
    }
}

/// The head of `struct ethtool_stats` (cmd, then n_stats) as the u64 it
/// occupies in memory.
fn stats_head(cmd: u32, n: u32) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&cmd.to_ne_bytes());
    bytes[4..].copy_from_slice(&n.to_ne_bytes());
    u64::from_ne_bytes(bytes)
}

/// A fixed-size C string's text (up to its first NUL).
fn c_text(bytes: &[u8]) -> String {
    CStr::from_bytes_until_nul(bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

/// `n` names of [`NAME_LEN`] bytes each, NUL-padded, from `bytes`.
fn split_names(bytes: &[u8], n: usize) -> Vec<String> {
    bytes.chunks_exact(NAME_LEN).take(n).map(c_text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_at_their_nul_and_counted() {
        let mut bytes = vec![0u8; 3 * NAME_LEN];
        bytes[..22].copy_from_slice(b"pps_allowance_exceeded");
        bytes[NAME_LEN..NAME_LEN + 4].copy_from_slice(b"rx_0");
        // A name of the full width has no NUL: kept whole.
        bytes[2 * NAME_LEN..].copy_from_slice(&[b'x'; NAME_LEN]);
        assert_eq!(split_names(&bytes, 3), vec!["pps_allowance_exceeded".to_string(), "rx_0".into(), "x".repeat(NAME_LEN)]);
        assert_eq!(split_names(&bytes, 1).len(), 1);
    }

    #[test]
    fn the_request_layout_is_the_kernels() {
        // struct ethtool_drvinfo is 196 bytes (linux/ethtool.h).
        assert_eq!(std::mem::size_of::<DrvInfo>(), 196);
        assert_eq!(std::mem::offset_of!(SsetInfo, data), 16);
        let head = stats_head(ETHTOOL_GSTATS, 9).to_ne_bytes();
        assert_eq!(
            (u32::from_ne_bytes(head[..4].try_into().unwrap()), u32::from_ne_bytes(head[4..].try_into().unwrap())),
            (ETHTOOL_GSTATS, 9)
        );
        assert_eq!(std::mem::offset_of!(DrvInfo, n_stats), 4 + 5 * 32 + 12 + 4);
    }

    #[test]
    fn a_name_the_kernel_cannot_take_or_find_is_an_error_naming_it() {
        assert!(matches!(Interface::open(""), Err(Error::BadName(_))));
        assert!(matches!(Interface::open("a-name-far-too-long"), Err(Error::BadName(_))));
        let missing = Interface::open("bd-no-such0").unwrap();
        let e = missing.driver().unwrap_err().to_string();
        assert!(e.contains("bd-no-such0") && e.contains("ETHTOOL_GDRVINFO"), "{e}");
    }

    #[test]
    fn a_driver_without_statistics_reads_as_none() {
        // Every namespace has lo; its driver lists no statistics (and
        // refuses ETHTOOL_GSTATS): an empty list, read without asking.
        let lo = Interface::open("lo").unwrap();
        match lo.names() {
            Ok(names) => assert_eq!(names, Vec::<String>::new()),
            // qemu-user (CI's arm64 stage) passes no ethtool string-set
            // request to the kernel and answers ENOTTY itself; a kernel
            // answers lo's with an empty set.
            Err(Error::Ioctl { errno: nix::Error::ENOTTY, .. }) => return,
            Err(e) => panic!("{e}"),
        }
        assert_eq!(lo.read(0).unwrap(), Vec::<u64>::new());
        assert!(matches!(lo.read(3), Err(Error::CountChanged { was: 3, now: 0, .. })));
    }
}
