//! Opening the sockets a lane owns, with their options set and what the
//! kernel granted read back.

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use nix::sys::socket::{self, sockopt, AddressFamily, SockFlag, SockType, SockaddrStorage};
use nix::sys::time::TimeVal;

/// How long a lane's receive call waits before it looks at its stop flag.
pub const RECEIVE_WAIT: Duration = Duration::from_millis(50);

/// A socket buffer: what was asked and what the kernel granted. The kernel
/// doubles what it is asked for its own bookkeeping, and caps a plain ask
/// at `net.core.rmem_max` / `wmem_max`; as root the cap is passed
/// (`SO_RCVBUFFORCE`), and `forced` says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffer {
    pub asked: Option<usize>,
    pub granted: usize,
    pub forced: bool,
}

/// What stopped a socket from opening, each with its fix.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("opening a UDP socket failed: {0}")]
    Open(nix::Error),
    #[error("setting {option} on a UDP socket failed: {error}{hint}")]
    Option { option: &'static str, error: nix::Error, hint: &'static str },
    #[error("binding a UDP socket to {addr} failed: {error} (is the address on an interface of this network namespace, and the port free of sockets without SO_REUSEPORT?)")]
    Bind { addr: SocketAddr, error: nix::Error },
    #[error("connecting a UDP socket to {addr} failed: {error} (is there a route to it?)")]
    Connect { addr: SocketAddr, error: nix::Error },
    #[error("a frame of {0} B cannot carry a probe: frames are 64 B at least")]
    FrameTooSmall(usize),
}

fn family(addr: &SocketAddr) -> AddressFamily {
    if addr.is_ipv4() {
        AddressFamily::Inet
    } else {
        AddressFamily::Inet6
    }
}

fn option<T>(what: &'static str, r: nix::Result<T>) -> Result<T, SocketError> {
    r.map_err(|error| SocketError::Option { option: what, error, hint: "" })
}

/// A receiving socket on `addr`, one of several sharing it through
/// `SO_REUSEPORT` (the kernel spreads flows over them by hash), with UDP GRO
/// on when `gro` and its receive buffer set to `rcvbuf` bytes when given.
/// Receive calls return after [`RECEIVE_WAIT`] with nothing.
pub fn receiver_socket(addr: SocketAddr, rcvbuf: Option<usize>, gro: bool) -> Result<(OwnedFd, Buffer), SocketError> {
    let fd = socket::socket(family(&addr), SockType::Datagram, SockFlag::SOCK_CLOEXEC, None).map_err(SocketError::Open)?;
    option("SO_REUSEPORT", socket::setsockopt(&fd, sockopt::ReusePort, &true))?;
    let buffer = size(&fd, rcvbuf, sockopt::RcvBufForce, sockopt::RcvBuf, sockopt::RcvBuf)?;
    if gro {
        socket::setsockopt(&fd, sockopt::UdpGroSegment, &true).map_err(|error| SocketError::Option {
            option: "UDP_GRO",
            error,
            hint: " (UDP GRO needs Linux 5.0 or later; run without it)",
        })?;
    }
    let wait = TimeVal::new(0, RECEIVE_WAIT.as_micros() as _);
    option("SO_RCVTIMEO", socket::setsockopt(&fd, sockopt::ReceiveTimeout, &wait))?;
    socket::bind(fd.as_raw_fd(), &SockaddrStorage::from(addr)).map_err(|error| SocketError::Bind { addr, error })?;
    Ok((fd, buffer))
}

/// A sending socket connected to `dest` (bound to `local` first when
/// given, so that each lane's flow has its own source port), its send
/// buffer set to `sndbuf` bytes when given. Sends block while the buffer is
/// full (for up to [`RECEIVE_WAIT`]): a sender that outruns the stack waits rather than drops.
pub fn sender_socket(local: Option<SocketAddr>, dest: SocketAddr, sndbuf: Option<usize>) -> Result<(OwnedFd, Buffer), SocketError> {
    let fd = socket::socket(family(&dest), SockType::Datagram, SockFlag::SOCK_CLOEXEC, None).map_err(SocketError::Open)?;
    let buffer = size(&fd, sndbuf, sockopt::SndBufForce, sockopt::SndBuf, sockopt::SndBuf)?;
    // A send that blocks on a full buffer returns within the wait (EAGAIN,
    // nothing sent), so a lane looks at its stop flag.
    let wait = TimeVal::new(0, RECEIVE_WAIT.as_micros() as _);
    option("SO_SNDTIMEO", socket::setsockopt(&fd, sockopt::SendTimeout, &wait))?;
    if let Some(addr) = local {
        socket::bind(fd.as_raw_fd(), &SockaddrStorage::from(addr)).map_err(|error| SocketError::Bind { addr, error })?;
    }
    socket::connect(fd.as_raw_fd(), &SockaddrStorage::from(dest)).map_err(|error| SocketError::Connect { addr: dest, error })?;
    Ok((fd, buffer))
}

/// Sets a socket buffer (forced past the sysctl cap where the process may)
/// and reads back what the kernel granted.
fn size<F, P, R>(fd: &OwnedFd, bytes: Option<usize>, force: F, plain: P, read: R) -> Result<Buffer, SocketError>
where
    F: socket::SetSockOpt<Val = usize>,
    P: socket::SetSockOpt<Val = usize>,
    R: socket::GetSockOpt<Val = usize>,
{
    let mut forced = false;
    if let Some(b) = bytes {
        forced = socket::setsockopt(fd, force, &b).is_ok();
        if !forced {
            option("the socket buffer size", socket::setsockopt(fd, plain, &b))?;
        }
    }
    let granted = option("reading the socket buffer size", socket::getsockopt(fd, read))?;
    Ok(Buffer { asked: bytes, granted, forced })
}

/// The datagrams the kernel dropped at this socket since it opened (a full
/// receive buffer, a failed checksum, a filter): the `drops` column of
/// `/proc/net/udp` (or `udp6`) on the socket's line, found by its inode, in
/// the reading thread's network namespace. Under UDP GRO the kernel counts
/// one per buffer it drops, whatever the datagrams in it.
pub fn socket_drops(fd: &OwnedFd) -> std::io::Result<u64> {
    let inode = nix::sys::stat::fstat(fd.as_raw_fd()).map_err(std::io::Error::from)?.st_ino;
    for table in ["/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"] {
        if let Some(d) = drops_of_inode(&std::fs::read_to_string(table)?, inode) {
            return Ok(d);
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::NotFound, format!("no UDP socket with inode {inode} in this network namespace")))
}

/// `sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops`
fn drops_of_inode(table: &str, inode: u64) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.len() >= 13 && f[9].parse() == Ok(inode)).then(|| f[12].parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sockets_drops_are_the_last_column_of_its_inodes_line() {
        // From a 6.18 kernel's /proc/net/udp.
        let t = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
         1089: 0100007F:A1B3 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4118773 2 0000000000000000 0\n\
         1090: 0100007F:A1B4 00000000:0000 07 00000000:0003F600 00:00000000 00000000     0        0 4118774 2 0000000000000000 1712\n";
        assert_eq!(drops_of_inode(t, 4118774), Some(1712));
        assert_eq!(drops_of_inode(t, 4118773), Some(0));
        assert_eq!(drops_of_inode(t, 99), None);
    }
}
