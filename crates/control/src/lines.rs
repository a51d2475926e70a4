//! Line framing: requests assembled into lines across any number of
//! reads and read timeouts, each bounded to MAX_LINE bytes, and one reply
//! line written with a deadline.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::message::{reply_line, Response, MAX_LINE};

/// One line, or why there is none.
#[derive(Debug)]
pub(crate) enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
    /// The deadline passed first (what had arrived of a line is kept).
    Timeout,
    Stopped,
}

/// Assembles lines from any number of reads, keeping a partial line across
/// reads and read timeouts. Holds at most MAX_LINE bytes of a line; a
/// longer one is consumed to its newline and reported as too long.
pub(crate) struct LineReader {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Bytes read past the last newline handed out.
    pending: Vec<u8>,
    too_long: bool,
}

impl LineReader {
    pub(crate) fn new(stream: TcpStream) -> LineReader {
        LineReader { stream, buf: Vec::new(), pending: Vec::new(), too_long: false }
    }

    /// Takes the next line out of what has arrived, if a whole one has.
    fn take_line(&mut self) -> Option<Line> {
        let i = self.pending.iter().position(|&b| b == b'\n')?;
        let rest = self.pending.split_off(i + 1);
        let mut chunk = std::mem::replace(&mut self.pending, rest);
        chunk.pop();
        let line = if self.too_long || self.buf.len() + chunk.len() > MAX_LINE {
            Line::TooLong
        } else {
            self.buf.extend_from_slice(&chunk);
            Line::Text(std::mem::take(&mut self.buf))
        };
        self.buf.clear();
        self.too_long = false;
        Some(line)
    }

    /// The next line, by `deadline` (None: no limit) unless `stop` is set.
    pub(crate) fn read_line(&mut self, deadline: Option<Instant>, stop: &AtomicBool) -> std::io::Result<Line> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(l) = self.take_line() {
                return Ok(l);
            }
            // No newline in what is pending: it all belongs to the line.
            if !self.too_long {
                if self.buf.len() + self.pending.len() > MAX_LINE {
                    self.too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.append(&mut self.pending);
                }
            }
            self.pending.clear();
            if stop.load(Ordering::Relaxed) {
                return Ok(Line::Stopped);
            }
            let wait = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left.min(TICK),
                    _ => return Ok(Line::Timeout),
                },
                None => TICK,
            };
            self.stream.set_read_timeout(Some(wait))?;
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(Line::Eof),
                Ok(n) => self.pending.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                    if deadline.is_none() {
                        return Ok(Line::Timeout);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// How often a waiting read looks at the stop flag.
pub(crate) const TICK: Duration = Duration::from_millis(100);

/// Writes one reply; a client that does not read within a second is gone.
pub(crate) fn send(stream: &mut TcpStream, id: u64, reply: &Response) -> std::io::Result<()> {
    stream.set_write_timeout(Some(Duration::from_secs(1)))?;
    stream.write_all(reply_line(id, reply).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    static NO_STOP: AtomicBool = AtomicBool::new(false);

    #[test]
    fn lines_are_assembled_across_reads_and_pauses() {
        let (mut a, b) = pair();
        let mut r = LineReader::new(b);
        let t = std::thread::spawn(move || {
            for part in [&b"{\"v\":2,"[..], b"\"id\":1", b",\"type\":\"hello\"}\nsecond\n", b"thi", b"rd\n"] {
                a.write_all(part).unwrap();
                std::thread::sleep(Duration::from_millis(150));
            }
            a
        });
        let deadline = Some(Instant::now() + Duration::from_secs(5));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == br#"{"v":2,"id":1,"type":"hello"}"#));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == b"second"));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == b"third"));
        drop(t.join().unwrap());
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Eof));
    }

    #[test]
    fn long_lines_are_bounded_and_the_stream_stays_in_step() {
        let (mut a, b) = pair();
        let mut r = LineReader::new(b);
        let t = std::thread::spawn(move || {
            a.write_all(&vec![b'y'; MAX_LINE + 10]).unwrap();
            a.write_all(b"\nok\n").unwrap();
            a
        });
        let deadline = Some(Instant::now() + Duration::from_secs(5));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::TooLong));
        assert!(matches!(r.read_line(deadline, &NO_STOP).unwrap(), Line::Text(t) if t == b"ok"));
        assert!(r.buf.capacity() <= 2 * MAX_LINE + 8192, "what is held stays bounded");
        drop(t.join().unwrap());
    }

    #[test]
    fn a_deadline_ends_a_partial_line() {
        let (mut a, b) = pair();
        let mut r = LineReader::new(b);
        a.write_all(b"{\"v\":2").unwrap();
        let t0 = Instant::now();
        assert!(matches!(r.read_line(Some(t0 + Duration::from_millis(300)), &NO_STOP).unwrap(), Line::Timeout));
        assert!(t0.elapsed() < Duration::from_secs(2));
    }
}
