use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::message::{parse_request, reply_line, PeerInfo, Prepared, Request, Response, WindowFigures, MAX_LINE};

/// What the server drives: drop's receiver, or a stand-in in tests.
pub trait Backend {
    fn info(&mut self) -> PeerInfo;
    fn prepare(&mut self, rx_queues: u16, max_size: u32) -> Result<Prepared, String>;
    /// Baselines every counter; the window starts now.
    fn start_window(&mut self) -> Result<(), String>;
    /// Figures since the baseline; window `window` ends now.
    fn end_window(&mut self, window: u64) -> Result<WindowFigures, String>;
    /// The window `window` ends without its client (`why`): its figures,
    /// if any are kept, are incomplete.
    fn abandon_window(&mut self, window: u64, why: &str);
    /// The client said bye; called before the reply goes out, so whatever
    /// must be quiet before the client's process exits can be made so.
    fn client_leaving(&mut self) {}
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub token: Option<String>,
    /// How long a connection may stay silent with no window open.
    pub idle_timeout: Duration,
    /// How long a connection may stay silent with a window open (a step's
    /// warm-up and duration must fit).
    pub window_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { token: None, idle_timeout: Duration::from_secs(60), window_timeout: Duration::from_secs(3600) }
    }
}

enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

/// Reads one line of at most MAX_LINE bytes; a longer one is consumed to
/// its end and reported as too long, so the stream stays in step.
fn read_line<R: BufRead>(r: &mut R) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(if line.is_empty() && !too_long {
                Line::Eof
            } else if too_long {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Text(line) });
        }
    }
}

/// Serves one connection until it closes, errs, times out or `stop` is set.
/// A window left open is abandoned. Returns why the connection ended.
pub fn serve_connection(stream: TcpStream, backend: &mut dyn Backend, cfg: &ServerConfig, stop: &AtomicBool) -> String {
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(e) => return format!("{peer}: {e}"),
    };
    let mut reader = BufReader::new(stream);
    let mut window: Option<u64> = None;
    let mut next_window = 1u64;
    // Short reads so a stop request is seen promptly; silence is summed.
    let tick = Duration::from_millis(200);
    let _ = reader.get_ref().set_read_timeout(Some(tick));
    let mut silent = Duration::ZERO;
    let why = loop {
        if stop.load(Ordering::Relaxed) {
            break "server stopping".to_string();
        }
        let line = match read_line(&mut reader) {
            Ok(Line::Eof) => break "client closed the connection".into(),
            Ok(l) => {
                silent = Duration::ZERO;
                l
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                silent += tick;
                let limit = if window.is_some() { cfg.window_timeout } else { cfg.idle_timeout };
                if silent >= limit {
                    break format!("client silent for {limit:?}");
                }
                continue;
            }
            Err(e) => break format!("read failed: {e}"),
        };
        let (id, reply, close) = match line {
            Line::TooLong => (0, Response::Error { error: format!("message longer than {MAX_LINE} bytes") }, false),
            Line::Eof => unreachable!(),
            Line::Text(text) => match parse_request(&text, cfg.token.as_deref()) {
                Err((id, e)) => (id, Response::Error { error: e.to_string() }, e.closes()),
                Ok(env) => {
                    let reply = match env.body {
                        Request::Hello => Response::Hello { info: backend.info() },
                        Request::Prepare { rx_queues, max_size } => {
                            if let Some(w) = window.take() {
                                backend.abandon_window(w, "the client prepared the next step with this window open");
                            }
                            match backend.prepare(rx_queues, max_size) {
                                Ok(p) => Response::Prepared(p),
                                Err(e) => Response::Error { error: e },
                            }
                        }
                        Request::StartWindow => {
                            if window.is_some() {
                                Response::Error { error: "a window is already open: end it first".into() }
                            } else {
                                match backend.start_window() {
                                    Ok(()) => {
                                        window = Some(next_window);
                                        next_window += 1;
                                        Response::WindowStarted { window: window.unwrap() }
                                    }
                                    Err(e) => Response::Error { error: e },
                                }
                            }
                        }
                        Request::EndWindow { window: w } => match window {
                            Some(open) if open == w => {
                                window = None;
                                match backend.end_window(w) {
                                    Ok(mut f) => {
                                        f.window = w;
                                        Response::WindowFigures(f)
                                    }
                                    Err(e) => Response::Error { error: e },
                                }
                            }
                            Some(open) => Response::Error { error: format!("window {w} is not open (window {open} is)") },
                            None => Response::Error { error: format!("window {w} is not open (none is)") },
                        },
                        Request::Bye => {
                            backend.client_leaving();
                            Response::Bye
                        }
                    };
                    let bye = matches!(reply, Response::Bye);
                    (env.id, reply, bye)
                }
            },
        };
        if let Err(e) = writer.write_all(reply_line(id, &reply).as_bytes()) {
            break format!("write failed: {e}");
        }
        if close {
            break match reply {
                Response::Bye => "client said bye".into(),
                _ => "refused: wrong token".into(),
            };
        }
    };
    if let Some(w) = window {
        backend.abandon_window(w, &why);
        tracing::warn!("control: {peer} went away with measured window {w} open ({why}): it is recorded as incomplete");
    }
    why
}

/// Accepts connections one at a time until `stop` is set.
pub fn serve(listener: &TcpListener, backend: &mut dyn Backend, cfg: &ServerConfig, stop: &AtomicBool) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, addr)) => {
                stream.set_nonblocking(false)?;
                let _ = stream.set_nodelay(true);
                tracing::info!("control: {addr} connected");
                let why = serve_connection(stream, backend, cfg, stop);
                tracing::info!("control: {addr} done ({why})");
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(50)),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_and_bounded() {
        let big = "y".repeat(MAX_LINE + 10);
        let input = format!("one\n{big}\ntwo\nlast");
        let mut r = BufReader::with_capacity(1000, input.as_bytes());
        assert!(matches!(read_line(&mut r).unwrap(), Line::Text(t) if t == b"one"));
        assert!(matches!(read_line(&mut r).unwrap(), Line::TooLong));
        assert!(matches!(read_line(&mut r).unwrap(), Line::Text(t) if t == b"two"));
        assert!(matches!(read_line(&mut r).unwrap(), Line::Text(t) if t == b"last"));
        assert!(matches!(read_line(&mut r).unwrap(), Line::Eof));
    }
}
