//! net_memif's socket files, checked before the EAL starts: the PMD's own
//! failures surface only as "no ports".

use std::path::Path;

use crate::eal_args;
use crate::fail::Failure;

/// Checks each net_memif vdev's socket before the EAL starts, since the
/// PMD's own failures surface only as "no ports". DPDK 22.11's memif server
/// binds its socket at probe and neither removes nor reuses a file already
/// there (bind fails with EADDRINUSE, the vdev is dropped); it removes the
/// file itself only on a clean close. So: a server socket someone serves is
/// refused, naming it; one nobody listens on (left by a killed process) is
/// removed, with a warning. A socket file's folder must exist (client or
/// server: the PMD checks it at probe).
pub fn check_memif_sockets(args: &[String]) -> Result<(), Failure> {
    let mut seen = Vec::new();
    for m in eal_args::memif_vdevs(args) {
        if seen.contains(&(m.socket.clone(), m.socket_abstract, m.server)) {
            continue;
        }
        seen.push((m.socket.clone(), m.socket_abstract, m.server));
        check_memif_socket(&m)?;
    }
    Ok(())
}

fn check_memif_socket(m: &eal_args::MemifVdev) -> Result<(), Failure> {
    let path = &m.socket;
    let in_use = |shown: String| {
        Failure::usage(format!(
            "memif socket {shown} is in use by another process (a drop still running?): stop it or give the vdev {} another socket=PATH",
            m.name
        ))
    };
    if m.socket_abstract {
        // In the abstract namespace: no file; only a listener to find.
        return match (m.server, memif_probe(path, true)) {
            (true, Probe::Listening) => Err(in_use(format!("@{path} (in the abstract namespace)"))),
            _ => Ok(()),
        };
    }
    check_socket_folder(m)?;
    if !m.server {
        return Ok(());
    }
    check_server_socket(m, in_use)
}

/// A socket path the kernel takes, in a folder that exists (the PMD checks
/// it at probe, client or server).
fn check_socket_folder(m: &eal_args::MemifVdev) -> Result<(), Failure> {
    let path = &m.socket;
    if path.len() >= 108 {
        return Err(Failure::usage(format!(
            "memif socket {path} is {} bytes long, above the 107 a Unix socket path may have: give the vdev {} a shorter socket=PATH",
            path.len(),
            m.name
        )));
    }
    let folder = match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => {
            return Err(Failure::usage(format!(
                "memif socket {path} has no folder: give the vdev {} a full path, e.g. socket=/tmp/{path}",
                m.name
            )))
        }
    };
    if !Path::new(folder).is_dir() {
        return Err(Failure::usage(format!(
            "memif socket {path}: folder {folder} does not exist: create it or give the vdev {} another socket=PATH",
            m.name
        )));
    }
    Ok(())
}

/// A server's socket file: refused if a process serves it or it is not a
/// socket, removed (with a warning) if nobody listens on it.
fn check_server_socket(m: &eal_args::MemifVdev, in_use: impl Fn(String) -> Failure) -> Result<(), Failure> {
    use std::os::unix::fs::FileTypeExt;
    let path = &m.socket;
    match std::fs::symlink_metadata(path) {
        Err(_) => return Ok(()),
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(Failure::usage(format!(
                "memif socket {path} exists and is not a socket: remove it or give the vdev {} another socket=PATH",
                m.name
            )));
        }
        Ok(_) => {}
    }
    match memif_probe(path, false) {
        Probe::Listening => Err(in_use(path.clone())),
        Probe::Gone => Ok(()),
        Probe::Refused => match std::fs::remove_file(path) {
            Ok(()) => {
                tracing::warn!("memif socket {path} was left by a process that is gone (nobody listens on it): removed it");
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Failure::usage(format!(
                "memif socket {path} is stale (nobody listens on it) but cannot be removed ({e}): remove it or give the vdev {} another socket=PATH",
                m.name
            ))),
        },
        Probe::Other(e) => Err(Failure::usage(format!(
            "memif socket {path} exists and cannot be checked ({e}): remove it if no process serves it, or give the vdev {} another socket=PATH",
            m.name
        ))),
    }
}

/// What a connection attempt to a memif socket found.
enum Probe {
    /// Something accepts connections there.
    Listening,
    /// A socket nobody listens on (its process is gone).
    Refused,
    /// No socket there.
    Gone,
    Other(std::io::Error),
}

/// Connects to a memif socket as a client would (SOCK_SEQPACKET), without
/// blocking; on success waits briefly for the server's hello before
/// closing, so the server has written it before the connection goes (a
/// server that writes to a closed peer may be killed by SIGPIPE).
fn memif_probe(name: &str, abstract_ns: bool) -> Probe {
    use nix::errno::Errno;
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::socket::{connect, recv, socket, AddressFamily, MsgFlags, SockFlag, SockType, UnixAddr};
    use std::os::fd::{AsFd, AsRawFd};
    // Abstract names are exactly their bytes (as memif binds them). A name
    // too long for sockaddr_un cannot have been bound.
    let addr = if abstract_ns { UnixAddr::new_abstract(name.as_bytes()) } else { UnixAddr::new(name) };
    let Ok(addr) = addr else { return Probe::Gone };
    let fd = match socket(AddressFamily::Unix, SockType::SeqPacket, SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC, None) {
        Ok(fd) => fd,
        Err(e) => return Probe::Other(e.into()),
    };
    match connect(fd.as_raw_fd(), &addr) {
        Ok(()) => {}
        Err(Errno::ECONNREFUSED) => return Probe::Refused,
        Err(Errno::ENOENT) => return Probe::Gone,
        // A listener whose backlog is full, or of another socket type: in use either way.
        Err(Errno::EAGAIN | Errno::EPROTOTYPE) => return Probe::Listening,
        Err(e) => return Probe::Other(e.into()),
    }
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    if poll(&mut fds, PollTimeout::from(500u16)).is_ok_and(|n| n > 0) {
        let mut hello = [0u8; 256];
        let _ = recv(fd.as_raw_fd(), &mut hello, MsgFlags::MSG_DONTWAIT);
    }
    Probe::Listening
}
