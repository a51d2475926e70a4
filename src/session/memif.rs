//! net_memif's socket files, checked before the EAL starts: the PMD's own
//! failures surface only as "no ports".

use std::path::Path;

use crate::eal_args;
use crate::error::MemifError;

/// Checks each net_memif vdev's socket before the EAL starts, since the
/// PMD's own failures surface only as "no ports". DPDK 22.11's memif server
/// binds its socket at probe and neither removes nor reuses a file already
/// there (bind fails with EADDRINUSE, the vdev is dropped); it removes the
/// file itself only on a clean close. So: a server socket someone serves is
/// refused, naming it; one nobody listens on (left by a killed process) is
/// removed, with a warning. A socket file's folder must exist (client or
/// server: the PMD checks it at probe).
pub fn check_memif_sockets(args: &[String]) -> Result<(), MemifError> {
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

fn check_memif_socket(m: &eal_args::MemifVdev) -> Result<(), MemifError> {
    let path = &m.socket;
    let in_use = |shown: String| MemifError::InUse { shown, vdev: m.name.clone() };
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
fn check_socket_folder(m: &eal_args::MemifVdev) -> Result<(), MemifError> {
    let path = &m.socket;
    if path.len() >= 108 {
        return Err(MemifError::PathTooLong { path: path.clone(), vdev: m.name.clone() });
    }
    let folder = match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => return Err(MemifError::NoFolder { path: path.clone(), vdev: m.name.clone() }),
    };
    if !Path::new(folder).is_dir() {
        return Err(MemifError::FolderMissing { path: path.clone(), folder: folder.to_owned(), vdev: m.name.clone() });
    }
    Ok(())
}

/// A server's socket file: refused if a process serves it or it is not a
/// socket, removed (with a warning) if nobody listens on it.
fn check_server_socket(m: &eal_args::MemifVdev, in_use: impl Fn(String) -> MemifError) -> Result<(), MemifError> {
    use std::os::unix::fs::FileTypeExt;
    let path = &m.socket;
    match std::fs::symlink_metadata(path) {
        Err(_) => return Ok(()),
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(MemifError::NotASocket { path: path.clone(), vdev: m.name.clone() });
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
            Err(source) => Err(MemifError::StaleNotRemoved { path: path.clone(), vdev: m.name.clone(), source }),
        },
        Probe::Other(source) => Err(MemifError::Unchecked { path: path.clone(), vdev: m.name.clone(), source }),
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
