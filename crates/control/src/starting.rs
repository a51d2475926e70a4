//! drop's control port while drop is still starting: its listener is
//! bound before the EAL starts, but the server runs only once the port is
//! up, and a client that connected in between heard nothing (blast's "no
//! answer within 15s", with drop stuck in a device call). Until drop is
//! ready, every client is answered at once with what drop is doing
//! ("starting: rte_eth_dev_start on 0000:00:05.0 for 12 s"); a client
//! ([`crate::Client::connect_when_ready`]) tries again until its deadline.

use std::io::{ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::lines::{send, TICK};
use crate::message::error;

/// How a refusal says the server is starting: this, then what it is doing.
pub const STARTING: &str = "starting: ";

/// How long the answer waits for the client's first line (its hello) before
/// answering anyway: answered after the client has written, the close that
/// follows does not reset the connection under the answer.
const HELLO_WAIT: Duration = Duration::from_millis(500);

/// The refusal text for a server doing `doing`.
pub fn starting_text(doing: &str) -> String {
    format!("{STARTING}{doing}")
}

/// What a refusal says the server is doing while it starts, if that is what it says.
pub fn starting_of(refusal: &str) -> Option<&str> {
    refusal.strip_prefix(STARTING)
}

/// Answers every connection on `listener` with [`starting_text`] of
/// `doing()` until `ready` or `stop` is set, then gives the listener back
/// for the server. Connections are answered one at a time, each within
/// [`HELLO_WAIT`] (starting, drop has nothing else to give them).
pub fn answer_while_starting(
    listener: TcpListener,
    doing: impl Fn() -> String,
    ready: &AtomicBool,
    stop: &AtomicBool,
) -> std::io::Result<TcpListener> {
    listener.set_nonblocking(true)?;
    while !ready.load(Ordering::SeqCst) && !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, addr)) => {
                let text = starting_text(&doing());
                tracing::debug!("control: {addr} told drop is {text}");
                answer(stream, &text);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(TICK.min(Duration::from_millis(50))),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::warn!("control: accept failed while starting: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    Ok(listener)
}

/// Reads what the client sent first (up to a line, within [`HELLO_WAIT`]),
/// then answers `text` as drop's own word (id 0) and closes.
fn answer(mut stream: TcpStream, text: &str) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(HELLO_WAIT));
    let mut buf = [0u8; 512];
    let _ = stream.read(&mut buf);
    let _ = send(&mut stream, 0, &error(text));
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Client, ClientError};
    use std::sync::Arc;

    #[test]
    fn the_refusal_text_round_trips() {
        let t = starting_text("rte_eth_dev_start on 0000:00:05.0 for 12 s");
        assert_eq!(t, "starting: rte_eth_dev_start on 0000:00:05.0 for 12 s");
        assert_eq!(starting_of(&t), Some("rte_eth_dev_start on 0000:00:05.0 for 12 s"));
        assert_eq!(starting_of("busy: serving x"), None);
    }

    #[test]
    fn a_client_hears_what_drop_is_doing_then_the_listener_comes_back() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let ready = Arc::new(AtomicBool::new(false));
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let r = ready.clone();
        let t = std::thread::spawn(move || answer_while_starting(listener, || "rte_eth_dev_start on net_null0 for 3 s".into(), &r, stop));
        for _ in 0..3 {
            let mut c = Client::connect(&addr, Duration::from_secs(2)).unwrap();
            let e = c.handshake(None, Duration::from_secs(2)).unwrap_err();
            assert_eq!(e, ClientError::Starting("rte_eth_dev_start on net_null0 for 3 s".into()));
            assert_eq!(e.to_string(), "drop is starting: rte_eth_dev_start on net_null0 for 3 s");
        }
        ready.store(true, Ordering::SeqCst);
        let back = t.join().unwrap().unwrap();
        assert_eq!(back.local_addr().unwrap().to_string(), addr);
    }

    #[test]
    fn a_client_that_waits_gives_up_at_its_deadline_naming_what_drop_did() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let ready: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        std::thread::spawn(move || answer_while_starting(listener, || "rte_eth_dev_configure on 0000:00:05.0 for 9 s".into(), ready, stop));
        let t0 = std::time::Instant::now();
        let e = Client::connect_when_ready(&addr, None, None, Duration::from_millis(800)).err().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        assert_eq!(
            e.to_string(),
            "drop is starting: rte_eth_dev_configure on 0000:00:05.0 for 9 s (still starting after 800ms: raise --control-timeout to wait longer)"
        );
        ready.store(true, Ordering::SeqCst);
    }
}
