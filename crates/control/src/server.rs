//! drop's end of the control channel. Built for a shared management
//! network: nobody holds the door (every connection has its own thread and
//! deadlines, and one that has not authenticated in time is closed), one
//! client's session at a time (others are told who holds it and since
//! when), requests assembled into lines across any number of reads, and
//! every count bounded (connections, line length, what is buffered).

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::group_session;
use crate::handshake::handshake;
use crate::lines::{send, LineReader, TICK};
use crate::message::{error, Response};
use crate::session::{session, SessionEnd, SessionState};
use crate::shared::{ServerConfig, Shared};

/// Accepts connections until `stop` is set, each on its own thread: the
/// accept loop never waits on a peer.
pub fn serve(listener: TcpListener, backend: Arc<Mutex<dyn Backend>>, cfg: ServerConfig, stop: &'static AtomicBool) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let shared = Arc::new(Shared::new(backend, cfg, stop));
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        threads.retain(|t| !t.is_finished());
        match listener.accept() {
            Ok((mut stream, addr)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                let peer = addr.to_string();
                if let Some(busy) = shared.busy_text() {
                    tracing::info!("control: {peer} refused ({busy})");
                    let _ = send(&mut stream, 0, &error(busy));
                    continue;
                }
                if shared.pending.load(Ordering::SeqCst) >= shared.cfg.max_pending {
                    tracing::warn!("control: {peer} refused: {} connections are already waiting to authenticate", shared.cfg.max_pending);
                    let _ = send(&mut stream, 0, &error("busy: too many connections waiting to authenticate; try again shortly"));
                    continue;
                }
                shared.pending.fetch_add(1, Ordering::SeqCst);
                let s = shared.clone();
                match std::thread::Builder::new().name("bd-control".into()).spawn(move || connection(stream, peer, &s)) {
                    Ok(t) => threads.push(t),
                    Err(e) => {
                        shared.pending.fetch_sub(1, Ordering::SeqCst);
                        tracing::warn!("control: cannot start a thread for a connection: {e}");
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait_readable(&listener, TICK),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::warn!("control: accept failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    for t in threads {
        let _ = t.join();
    }
    Ok(())
}

/// Waits until a connection is waiting to be accepted, or `timeout`: a
/// burst of connects is taken as it comes (a sleep would let the kernel's
/// accept queue overflow, and a refused connect waits a second to retry).
fn wait_readable(listener: &TcpListener, timeout: Duration) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
    // An error (EINTR) or a timeout only means the accept loop goes round again.
    let _ = poll(&mut fds, PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX));
}

/// Counts a connection as pending until it authenticates or ends.
struct PendingGuard<'a>(&'a AtomicUsize, bool);

impl PendingGuard<'_> {
    fn done(&mut self) {
        if !self.1 {
            self.1 = true;
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.done();
    }
}

/// One connection: the handshake within its deadlines, then the session.
fn connection(stream: TcpStream, peer: String, shared: &Shared) {
    let mut pending = PendingGuard(&shared.pending, false);
    let accepted = Instant::now();
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("control: {peer}: {e}");
            return;
        }
    };
    let mut reader = LineReader::new(stream);
    let admitted = match handshake(&mut reader, &mut writer, &peer, shared, accepted) {
        Ok(a) => a,
        Err(why) => {
            tracing::info!("control: {peer} not served ({why})");
            return;
        }
    };
    pending.done();
    shared.backend().session_started(&peer);
    tracing::info!("control: {peer} authenticated; session started");
    let guest = admitted.guest;
    let mut st = SessionState::new(admitted.group);
    let SessionEnd { why, bye } = session(&mut reader, &mut writer, &peer, shared, &mut st);
    shared.backend().session_ended(&peer, &why);
    // The holder's run ends with its session; a group's with its last member.
    let group_over = st.member.map(|m| group_session::leave(shared, m, &why));
    let mut holder = shared.holder();
    match group_over {
        Some(true) => *holder = None,
        Some(false) => {}
        // The holder left without joining: the group it announced is not
        // formed unless a guest formed it.
        None if !guest && shared.group().is_none() => *holder = None,
        None => {}
    }
    drop(holder);
    if let Some(id) = bye {
        let _ = send(&mut writer, id, &Response::Bye);
    }
    tracing::info!("control: {peer} done ({why})");
}
