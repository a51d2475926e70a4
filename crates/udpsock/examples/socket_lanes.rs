//! The socket path's lanes alone, for scripts/bench --sockets: one send
//! lane or one receive lane for a number of seconds, then one line with
//! what it moved. Not a user tool: blast and drop will drive the lanes.
//!
//!   socket_lanes send DEST SIZE SECONDS SEGMENTS
//!   socket_lanes recv ADDR SECONDS GRO(0|1)   (SECONDS at most; it ends 300 ms after the last datagram)

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use udpsock::{receiver_socket, sender_socket, socket_drops, RecvLane, SendLane};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("socket_lanes: error: {e} (usage: socket_lanes send DEST SIZE SECONDS SEGMENTS | recv ADDR SECONDS GRO)");
            ExitCode::from(2)
        }
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> Result<T, String> {
    args.get(i).and_then(|a| a.parse().ok()).ok_or_else(|| format!("argument {i} ({what}) missing or unreadable"))
}

fn run(args: &[String]) -> Result<String, String> {
    match args.first().map(String::as_str) {
        Some("send") => {
            let (dest, size, secs, segments): (SocketAddr, usize, u64, usize) =
                (arg(args, 1, "DEST")?, arg(args, 2, "SIZE")?, arg(args, 3, "SECONDS")?, arg(args, 4, "SEGMENTS")?);
            let (fd, _) = sender_socket(None, dest, Some(4 << 20)).map_err(|e| e.to_string())?;
            // 64 datagrams a call either way: in GSO buffers, or one each.
            let mut lane = SendLane::new(fd, 0, size, segments, 64 / segments.clamp(1, 64)).map_err(|e| e.to_string())?;
            let (start, until) = (Instant::now(), Duration::from_secs(secs));
            while start.elapsed() < until {
                lane.send(usize::MAX, 0).map_err(|e| e.to_string())?;
            }
            let s = start.elapsed().as_secs_f64();
            Ok(format!(
                "send: {} datagrams in {s:.2} s: {:.3} Mpps, {} per GSO buffer, {} calls refused",
                lane.counts.datagrams,
                lane.counts.datagrams as f64 / s / 1e6,
                lane.segments(),
                lane.counts.refused
            ))
        }
        Some("recv") => {
            let (addr, secs, gro): (SocketAddr, u64, u8) = (arg(args, 1, "ADDR")?, arg(args, 2, "SECONDS")?, arg(args, 3, "GRO")?);
            let (fd, _) = receiver_socket(addr, Some(32 << 20), gro == 1).map_err(|e| e.to_string())?;
            let mut lane = RecvLane::new(fd, 32, 1);
            // From the first datagram to the last: the run ends 300 ms after
            // one arrived last, or after SECONDS.
            let until = Duration::from_secs(secs);
            let waiting = Instant::now();
            while lane.poll().map_err(|e| e.to_string())? == 0 {
                if waiting.elapsed() > until {
                    return Err(format!("no datagram arrived in {secs} s"));
                }
            }
            let start = Instant::now();
            let (first, mut last) = (lane.counts.datagrams, Instant::now());
            while start.elapsed() < until && last.elapsed() < Duration::from_millis(300) {
                if lane.poll().map_err(|e| e.to_string())? > 0 {
                    last = Instant::now();
                }
            }
            let s = last.duration_since(start).as_secs_f64().max(1e-9);
            let n = lane.counts.datagrams - first;
            Ok(format!(
                "recv: {n} datagrams in {s:.2} s: {:.3} Mpps, {} buffers, socket drops {}",
                n as f64 / s / 1e6,
                lane.counts.buffers,
                socket_drops(lane.socket()).map_err(|e| e.to_string())?
            ))
        }
        _ => Err("the first argument is send or recv".into()),
    }
}
