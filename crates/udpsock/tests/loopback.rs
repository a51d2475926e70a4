//! The socket path on this host's loopback: real sockets, real GSO and
//! GRO, and every frame sent either counted by a receive lane or dropped
//! where the kernel says it dropped it.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use udpsock::{receiver_socket, sender_socket, snmp, socket_drops, RecvCounts, RecvLane, SendLane};

const STREAMS: u16 = 2;

struct Outcome {
    sent: Vec<u32>,
    counts: RecvCounts,
    /// Per stream: frames received and lost, by their sequence numbers.
    streams: Vec<(u64, u64)>,
    duplicates: u64,
    socket_drops: u64,
    rcvbuf_errors: u64,
    segments: usize,
}

/// `frames` frames of `frame` bytes per stream, one send lane per stream,
/// to two receive lanes sharing a port. The receivers stop once what they
/// counted and what their sockets dropped add up to what was sent, or after
/// a drain that waited long enough.
fn run(frame: usize, frames: u64, rcvbuf: usize, gro: bool, slow_receiver: bool) -> Outcome {
    // One at a time: the namespace's UDP counters are read around each run.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (first, _) = receiver_socket(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), Some(rcvbuf), gro).unwrap();
    let port = nix::sys::socket::getsockname::<nix::sys::socket::SockaddrIn>(std::os::fd::AsRawFd::as_raw_fd(&first)).unwrap().port();
    let at = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let (second, _) = receiver_socket(at, Some(rcvbuf), gro).unwrap();
    let before = snmp::udp_counters().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let receivers: Vec<_> = [first, second]
        .into_iter()
        .map(|fd| {
            let stop = stop.clone();
            thread::spawn(move || {
                let mut lane = RecvLane::new(fd, 32, usize::from(STREAMS));
                while !stop.load(Ordering::Relaxed) {
                    lane.poll().unwrap();
                    if slow_receiver {
                        thread::sleep(Duration::from_micros(200));
                    }
                }
                // What is still queued is counted too.
                while lane.poll().unwrap() > 0 {}
                let drops = socket_drops(lane.socket()).unwrap();
                (lane, drops)
            })
        })
        .collect();
    let senders: Vec<_> = (0..STREAMS)
        .map(|stream| {
            thread::spawn(move || {
                let (fd, _) = sender_socket(None, at, Some(1 << 20)).unwrap();
                let mut lane = SendLane::new(fd, stream, frame, 64, 8).unwrap();
                let segments = lane.segments();
                while lane.counts.datagrams < frames {
                    let left = (frames - lane.counts.datagrams) as usize;
                    lane.send(left.div_ceil(segments), 0).unwrap();
                }
                (lane.next_seq(), segments)
            })
        })
        .collect();
    let sent: Vec<(u32, usize)> = senders.into_iter().map(|s| s.join().unwrap()).collect();
    thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let mut o = Outcome {
        sent: sent.iter().map(|s| s.0).collect(),
        counts: RecvCounts::default(),
        streams: vec![(0, 0); usize::from(STREAMS)],
        duplicates: 0,
        socket_drops: 0,
        rcvbuf_errors: 0,
        segments: sent[0].1,
    };
    for r in receivers {
        let (lane, drops) = r.join().unwrap();
        o.socket_drops += drops;
        let c = lane.counts;
        o.counts.datagrams += c.datagrams;
        o.counts.buffers += c.buffers;
        o.counts.coalesced += c.coalesced;
        o.counts.no_probe += c.no_probe;
        o.counts.truncated += c.truncated;
        for (id, s) in lane.table.active() {
            o.streams[usize::from(id)].0 += s.received;
            o.duplicates += s.duplicates;
        }
    }
    o.rcvbuf_errors = snmp::udp_counters().unwrap().since(&before).rcvbuf_errors;
    // A stream's loss is what it sent less what arrived (both receivers
    // may have taken part of it; each lane's own gap count would see holes
    // the other lane filled).
    for (s, sent) in o.streams.iter_mut().zip(&o.sent) {
        s.1 = u64::from(*sent) - s.0;
    }
    o
}

/// Frames sent, received and lost over both streams.
fn totals(o: &Outcome) -> (u64, u64, u64) {
    let sent = o.sent.iter().map(|&s| u64::from(s)).sum();
    (sent, o.streams.iter().map(|s| s.0).sum(), o.streams.iter().map(|s| s.1).sum())
}

#[test]
fn gso_to_gro_on_loopback_counts_every_frame_exactly() {
    for frame in [64, 1518] {
        // UDP has no flow control: a sender that only waits for its own
        // buffer outruns a receiver copying 1518 B frames, and the
        // receiving sockets drop whole GRO buffers. Every frame is counted
        // either way: received, or lost in a buffer the sockets dropped.
        let o = run(frame, 200_000, 32 << 20, true, false);
        let (sent, received, lost) = totals(&o);
        assert_eq!(o.counts.no_probe + o.counts.truncated + o.duplicates, 0, "{frame} B");
        assert_eq!((o.counts.datagrams, received + lost), (received, sent), "{frame} B");
        assert!(o.counts.coalesced > 0, "{frame} B: GRO handed up no buffer of several datagrams: {:?}", o.counts);
        // On loopback a GSO buffer travels whole, and is dropped whole.
        assert_eq!(lost, o.socket_drops * o.segments as u64, "{frame} B: {lost} lost, {} buffers dropped", o.socket_drops);
    }
}

/// A slow receiver on a 4 KiB buffer: 256 B frames, three rounds, each
/// checked by `check` with its frames lost once every frame is accounted for.
fn slow_receiver_rounds(gro: bool, check: impl Fn(usize, &Outcome, u64)) {
    for round in 0..3 {
        let o = run(256, 100_000, 4096, gro, true);
        let (sent, received, lost) = totals(&o);
        assert!(lost > 0, "round {round}: a slow receiver on a 4 KiB buffer lost nothing");
        assert_eq!(received + lost, sent);
        check(round, &o, lost);
    }
}

#[test]
fn without_gro_every_frame_a_full_buffer_dropped_is_a_socket_drop() {
    slow_receiver_rounds(false, |round, o, lost| {
        assert_eq!(o.socket_drops, lost, "round {round}: the sockets' drops are the frames lost, one each");
        assert!(o.rcvbuf_errors >= lost, "round {round}: RcvbufErrors grew {} for {lost} lost", o.rcvbuf_errors);
        assert_eq!(o.counts.coalesced, 0);
    });
}

#[test]
fn with_gro_a_socket_drop_is_a_whole_buffer_of_frames() {
    slow_receiver_rounds(true, |round, o, lost| {
        assert_eq!(lost, o.socket_drops * o.segments as u64, "round {round}: {lost} lost in {} dropped buffers", o.socket_drops);
        // The namespace's counter counts buffers too (other sockets may add to it).
        assert!(o.rcvbuf_errors >= o.socket_drops, "round {round}: RcvbufErrors {}", o.rcvbuf_errors);
    });
}

#[test]
fn a_frame_too_small_for_a_probe_is_refused_in_one_line() {
    let (fd, _) = sender_socket(None, SocketAddr::from((Ipv4Addr::LOCALHOST, 9)), None).unwrap();
    let e = SendLane::new(fd, 0, 63, 64, 8).err().expect("63 B carries no probe");
    assert_eq!(e.to_string(), "a frame of 63 B cannot carry a probe: frames are 64 B at least");
}

/// A paced lane sends what is due, not whole calls: 5 datagrams with 4 to a
/// GSO buffer go as a buffer of 4 and one of 1, numbered on from where the
/// lane was told to continue.
#[test]
fn a_short_call_sends_whole_buffers_and_one_shorter_numbered_on() {
    let (rx, _) = receiver_socket(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), Some(1 << 20), false).unwrap();
    let port = nix::sys::socket::getsockname::<nix::sys::socket::SockaddrIn>(std::os::fd::AsRawFd::as_raw_fd(&rx)).unwrap().port();
    let (fd, _) = sender_socket(None, SocketAddr::from((Ipv4Addr::LOCALHOST, port)), None).unwrap();
    let mut lane = SendLane::new(fd, 0, 128, 4, 2).unwrap();
    assert_eq!((lane.per_call(), lane.frame_bytes()), (8, 128));
    lane.set_next_seq(100);
    assert_eq!(lane.send_datagrams(5, 0).unwrap(), 5);
    assert_eq!(lane.send_datagrams(8, 0).unwrap(), 8);
    assert_eq!(lane.next_seq(), 113);
    let mut recv = RecvLane::new(rx, 32, 1);
    let mut got = 0;
    for _ in 0..20 {
        got += recv.poll().unwrap();
        if got >= 13 {
            break;
        }
    }
    assert_eq!(recv.counts.datagrams, 13, "every datagram of both calls arrived, one each");
    assert_eq!(recv.counts.frame_bytes, 13 * 128);
}

/// drop --reflect and blast --reflect on sockets: a reflecting receive lane
/// sends each datagram back to its sender's socket, which takes them back
/// with their probes intact (sequence numbers and send times as sent), and
/// the one-way hook sees every probe counted.
#[test]
fn a_reflecting_lane_sends_every_datagram_back_to_its_sender_probe_intact() {
    let (rx, _) = receiver_socket(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), Some(1 << 20), false).unwrap();
    let port = nix::sys::socket::getsockname::<nix::sys::socket::SockaddrIn>(std::os::fd::AsRawFd::as_raw_fd(&rx)).unwrap().port();
    let (fd, _) = sender_socket(None, SocketAddr::from((Ipv4Addr::LOCALHOST, port)), Some(1 << 20)).unwrap();
    let mut send = SendLane::new(fd, 3, 100, 1, 16).unwrap();
    send.expect_echoes();
    let mut recv = RecvLane::reflecting(rx, 32, 4);
    for round in 0..4u64 {
        assert_eq!(send.send_datagrams(16, 1_000 + round).unwrap(), 16);
    }
    let (mut seen, mut back) = (Vec::new(), Vec::new());
    for _ in 0..50 {
        recv.poll_timed(|_| {}, |p| seen.push(p.seq)).unwrap();
        send.take_echoes(|p| back.push(p.map(|p| (p.stream, p.seq, p.tx_ns)))).unwrap();
        if back.len() >= 64 {
            break;
        }
    }
    assert_eq!(seen, (0..64).collect::<Vec<u32>>(), "the hook saw every probe, in order");
    assert_eq!((recv.counts.reflected, recv.counts.reflect_refused), (64, 0));
    let want: Vec<_> = (0..64u32).map(|s| Some((3, s, 1_000 + u64::from(s / 16)))).collect();
    assert_eq!(back, want, "every datagram came back to its sender as sent");
    // A lane that expects no echoes takes none.
    let (fd, _) = sender_socket(None, SocketAddr::from((Ipv4Addr::LOCALHOST, port)), None).unwrap();
    let mut plain = SendLane::new(fd, 0, 64, 1, 1).unwrap();
    assert_eq!(plain.take_echoes(|_| panic!("no echo expected")).unwrap(), 0);
}
