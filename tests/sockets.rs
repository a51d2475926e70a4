//! The kernel's UDP path (crates/udpsock) against blast's DPDK frames: blast
//! on DPDK's af_packet at one end of a veth pair in a namespace the test
//! creates, a socket receive lane bound to the other end's address. The
//! probe header is the same on every path, so the socket lane's count is as
//! exact as drop's.

mod common;
use common::*;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use udpsock::{receiver_socket, snmp, socket_drops, RecvLane};

const DST_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

/// `ip -n NS args...`, which must succeed.
fn ip_in(ns: &Netns, args: &[&str]) {
    let out = run("ip", &strings(&[&["-n", &ns.0][..], args].concat()), Duration::from_secs(10));
    assert!(out.status.success(), "ip {args:?}: {}", out.stderr);
}

/// `dev`'s MAC address in `ns`.
fn mac_of(ns: &Netns, dev: &str) -> String {
    run("ip", &ns.exec("cat", vec![format!("/sys/class/net/{dev}/address")]), Duration::from_secs(10)).stdout.trim().to_owned()
}

/// The test's veth pair in a namespace of its own, DST_IP on the receiving
/// end bd-b, and bd-b's MAC (None: skipped, said why).
fn receiver_ns(test: &str) -> Option<(Netns, String)> {
    let ns = netns_or_skip(test, Netns::with_pair)?;
    ip_in(&ns, &["addr", "add", "198.18.0.2/24", "dev", "bd-b"]);
    let mac = mac_of(&ns, "bd-b");
    Some((ns, mac))
}

/// `work` on a thread of its own inside `ns` (the network namespace is a
/// thread's: the sockets it opens are the namespace's).
fn in_ns<T: Send + 'static>(ns: &Netns, work: impl FnOnce() -> T + Send + 'static) -> std::thread::JoinHandle<T> {
    let path = format!("/run/netns/{}", ns.0);
    std::thread::spawn(move || {
        let netns = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        nix::sched::setns(netns.as_fd(), nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
        work()
    })
}

/// What a socket lane in `ns` counted on DST_IP:9: (frames by stream 0's
/// sequence numbers received, highest sequence seen + 1, the socket's drops,
/// the namespace's UDP counters' growth), once `stop` is set.
/// `slow`: a small receive buffer and a 5 ms pause after each call (32
/// frames at most a call: 6.4 kpps), a receiver that cannot keep up.
fn socket_lane_in(
    ns: &Netns,
    (gro, slow): (bool, bool),
    ready: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(RecvLane, u64, snmp::UdpCounters)> {
    in_ns(ns, move || {
        let rcvbuf = if slow { 16 << 10 } else { 4 << 20 };
        let (fd, buffer) = receiver_socket(SocketAddr::from((DST_IP, 9)), Some(rcvbuf), gro).unwrap();
        assert!(buffer.granted >= rcvbuf, "{buffer:?}");
        let before = snmp::udp_counters().unwrap();
        let mut lane = RecvLane::new(fd, 32, 16);
        ready.store(true, Ordering::Relaxed);
        while !stop.load(Ordering::Relaxed) {
            lane.poll().unwrap();
            if slow {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        while lane.poll().unwrap() > 0 {}
        let drops = socket_drops(lane.socket()).unwrap();
        (lane, drops, snmp::udp_counters().unwrap().since(&before))
    })
}

#[test]
fn blast_on_af_packet_to_a_socket_lane_counts_every_frame() {
    let _g = heavy();
    let Some((ns, mac)) = receiver_ns("blast_on_af_packet_to_a_socket_lane_counts_every_frame") else { return };
    let dir = scratch("sockets-mixed");
    // The last round's receiver cannot keep up: its loss must be named.
    let rounds = [("64", false, false), ("256", true, false), ("1518", true, false), ("256", false, true)];
    for (round, (size, gro, slow)) in rounds.into_iter().enumerate() {
        let (ready, stop) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let lane = socket_lane_in(&ns, (gro, slow), ready.clone(), stop.clone());
        let until = Instant::now() + Duration::from_secs(10);
        while !ready.load(Ordering::Relaxed) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let json = dir.join(format!("blast-{round}.json"));
        let mut b = strings(&["--port", "net_af_packet0", "--rate", "20k", "--size", size, "--count", "20000", "--dst-mac", &mac]);
        b.extend(strings(&["--dst-ip", "198.18.0.2", "--dst-port", "9", "--json", &json.display().to_string(), "--"]));
        b.extend(eal_base());
        b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
        let out = run_af_packet("ip", &ns.exec(BLAST, b), Duration::from_secs(60));
        assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
        let sent = read_json(&json)["summary"]["sent"]["packets"].as_u64().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        let (lane, drops, udp) = lane.join().unwrap();
        let (c, streams): (_, Vec<_>) = (lane.counts, lane.table.active().map(|(id, s)| (id, *s)).collect());
        let received: u64 = streams.iter().map(|(_, s)| s.received).sum();
        let lost: u64 = streams.iter().map(|(_, s)| s.lost).sum();
        let duplicates: u64 = streams.iter().map(|(_, s)| s.duplicates + s.reordered).sum();
        // Every frame blast sent is a datagram the lane counted by its
        // probe, or one the kernel counted dropped at the socket's full
        // buffer (none at 20 kpps, unless the host held the lane's thread
        // back: 851 of 20,000 once here, with CI's tests beside it). Frames
        // arrive one by one from a veth: a drop is one datagram.
        assert_eq!((sent, c.no_probe, duplicates, c.coalesced), (20_000, 0, 0, 0), "{size} B: {c:?}");
        assert_eq!(received + drops, sent, "{size} B: {c:?} {udp:?}");
        // The gaps in the sequence numbers miss a lost tail: never more than the loss.
        assert!(lost <= sent - received, "{size} B: {lost} gaps, {} lost", sent - received);
        assert_eq!((udp.rcvbuf_errors, udp.in_errors, udp.no_ports), (drops, drops, 0), "{size} B: the namespace's UDP counters: {udp:?}");
        assert_eq!(udp.in_datagrams, received, "{size} B: {udp:?}");
        // The verdict names the full socket buffer for every frame lost, or nothing.
        let v = limits::socket_verdict(&limits::SocketCounters {
            lost: sent - received,
            socket_drops: drops,
            gro,
            rcvbuf_errors: udp.rcvbuf_errors,
            no_ports: udp.no_ports,
            in_csum_errors: udp.in_csum_errors,
            mem_errors: udp.mem_errors,
            interface_drops: 0,
            backlog_drops: 0,
        });
        let want = if drops > 0 { limits::LimitKind::Receiver } else { limits::LimitKind::None };
        assert_eq!((v.limits[0].kind, v.limits[0].frames, v.limits.len()), (want, drops, 1), "{size} B: {v:?}");
        if slow {
            assert!(drops > 1000, "a 6.4 kpps receiver on a 16 KiB buffer lost {drops} of 20,000");
            assert!(v.limits[0].evidence.contains("frames dropped by a full socket buffer"), "{}", v.limits[0].evidence);
        }
        let frame: u64 = size.parse().unwrap();
        assert_eq!(c.frame_bytes, received * frame, "{size} B: the lane's frame bytes");
    }
}

/// A socket send lane in `ns` (bound to 198.18.0.1 on bd-a) sending
/// `frames` frames of `frame` bytes of stream `stream` to 198.18.0.2:9 at
/// about `pps`, 32 a buffer. Returns the frames the kernel took.
fn socket_sender_in(ns: &Netns, stream: u16, frame: usize, frames: u64, pps: u64) -> u64 {
    in_ns(ns, move || {
        let (fd, _) = udpsock::sender_socket(Some(SocketAddr::from(([198, 18, 0, 1], 1024))), SocketAddr::from((DST_IP, 9)), None).unwrap();
        let mut lane = udpsock::SendLane::new(fd, stream, frame, 32, 1).unwrap();
        let (start, per_call) = (Instant::now(), lane.per_call() as u64);
        while lane.counts.datagrams < frames {
            // Paced by the clock: the next call when its frames are due.
            let due = start + Duration::from_secs_f64(lane.counts.datagrams as f64 / pps as f64);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            lane.send(1, 0).unwrap();
        }
        assert_eq!(lane.counts.datagrams % per_call, 0);
        lane.counts.datagrams
    })
    .join()
    .unwrap()
}

/// The reverse: frames the kernel built (its IPv4 identification field is
/// its own, not a run id) counted by drop on DPDK's af_packet, exactly.
#[test]
fn a_socket_send_lane_to_drop_on_af_packet_counts_every_frame() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("a_socket_send_lane_to_drop_on_af_packet_counts_every_frame", Netns::with_pair) else { return };
    ip_in(&ns, &["addr", "add", "198.18.0.1/24", "dev", "bd-a"]);
    let mac = mac_of(&ns, "bd-b");
    // No ARP: bd-b has no address, and drop would count the requests as frames without a probe.
    ip_in(&ns, &["neigh", "add", "198.18.0.2", "lladdr", &mac, "dev", "bd-a"]);
    // A veth takes a GSO buffer whole and hands it whole to a packet
    // socket (one 32-datagram "frame" of 2 KiB: 625 of 20,000 arrived
    // so); a NIC cuts it into frames on the way out. Without UDP
    // segmentation on bd-a (it takes one segment at most) the stack cuts
    // it before the veth, as a NIC would.
    ip_in(&ns, &["link", "set", "bd-a", "gso_max_segs", "1"]);
    let dir = scratch("sockets-reverse");
    for (round, frame) in [64usize, 1518].into_iter().enumerate() {
        let json = dir.join(format!("drop-{round}.json"));
        let mut d = strings(&["--port", "net_af_packet0", "--duration", "120", "--json", &json.display().to_string(), "--"]);
        d.extend(eal_base());
        d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b", "--lcores=0@1,1@1"]));
        let mut drop = spawn("ip", &ns.exec(DROP, d));
        drop.wait_for_line("drop: port", Duration::from_secs(30));
        // Two sender runs into the same drop, each numbering stream 3 from 0:
        // the second is a restart of the stream, not 10,240 late frames.
        let sent = socket_sender_in(&ns, 3, frame, 10_240, 20_000) + socket_sender_in(&ns, 3, frame, 10_240, 20_000);
        std::thread::sleep(Duration::from_millis(500));
        sigint(&drop);
        let out = drop.finish(Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(EXIT_INTERRUPTED), "drop: {}\n{}", out.stdout, out.stderr);
        let s = &read_json(&json)["summary"];
        let (probe, socket_drops) = (&s["probe"], s["port"]["socket_drops"].as_u64().unwrap_or(0));
        let received = probe["received"].as_u64().unwrap();
        assert_eq!(sent, 20_480, "{frame} B");
        assert_eq!(
            (probe["restarts"].as_u64(), probe["duplicates"].as_u64(), probe["late"].as_u64()),
            (Some(1), Some(0), Some(0)),
            "{frame} B: {probe}"
        );
        // Every frame received, or one of drop's socket drops (a host that held drop's lane back).
        assert_eq!(received + socket_drops, sent, "{frame} B: {}", out.stdout);
        assert_eq!(s["sizes"][0]["size"].as_u64(), Some(frame as u64), "{frame} B: {}", s["sizes"]);
    }
}

/// drop --socket in `ns`, bound to DST_IP:9 with up to `queues` sockets,
/// serving blast on a control port of its own; its extra flags after.
fn drop_on_sockets(ns: &Netns, queues: u16, extra: &[&str]) -> (Running, String) {
    let addr = format!("127.0.0.1:{}", free_port());
    let q = queues.to_string();
    // Its lanes on CPU 1, blast's on CPU 0 (taskset chooses drop's CPUs).
    let mut d = strings(&["-c", "1", DROP, "--socket", "198.18.0.2:9", "--queues", &q, "--listen", &addr, "--duration", "120"]);
    d.extend(strings(extra));
    let mut drop = spawn("ip", &ns.exec("taskset", d));
    drop.wait_for_line("control on", Duration::from_secs(30));
    (drop, addr)
}

/// blast on DPDK's af_packet (bd-a, up to 4 queues) against drop's control
/// port `peer`, to bd-b's 198.18.0.2:9; `plan` the ladder's own flags.
fn blast_to(ns: &Netns, peer: &str, mac: &str, plan: &[&str], json: &std::path::Path) -> Vec<String> {
    let mut b = strings(&["--port", "net_af_packet0", "--peer", peer, "--dst-mac", mac, "--dst-ip", "198.18.0.2", "--dst-port", "9"]);
    b.extend(strings(plan));
    b.extend(strings(&["--warmup", "0.3", "--json", &json.display().to_string(), "--"]));
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a,qpairs=4", "--lcores=0@0,1@0,2@0,3@0,4@0"]));
    ns.exec(BLAST, b)
}

/// A window's CPU time per frame: a positive figure where a tick of
/// /proc/stat (10 ms) fell to the lanes' CPUs, and none (unknown, not 0)
/// where not one did (a light load between two reads).
fn assert_cpu_per_frame(cpu: &serde_json::Value, step: &serde_json::Value) {
    let ticked = ["user_seconds", "system_seconds", "softirq_seconds"].iter().any(|k| cpu[k].as_f64().is_some_and(|s| s > 0.0));
    match cpu["ns_per_frame"].as_f64() {
        Some(ns) => assert!(ticked && ns > 0.0, "{step}"),
        None => assert!(!ticked, "CPU time was counted, so a figure per frame is owed: {step}"),
    }
}

/// Each step over drop's sockets: exact, its receiver the kernel's UDP
/// path, and any loss named by the kernel's counter for it (a full socket
/// buffer: a host that holds a lane back overflows it), never `none`.
fn assert_socket_step(s: &serde_json::Value) -> (u64, u64) {
    let (sent, lost) = assert_exact(s);
    let r = &s["receiver"];
    assert_eq!(r["udp"]["address"], "198.18.0.2:9", "{s}");
    let drops = r["socket_drops"].as_u64().unwrap();
    // A veth hands frames up one by one: a GRO buffer here holds one.
    assert_eq!(r["udp"]["coalesced"], 0, "{s}");
    assert_eq!(drops, lost, "every frame lost is one the sockets dropped (no other loss on a veth): {s}");
    assert_eq!(r["udp"]["rcvbuf_errors"].as_u64(), Some(drops), "{s}");
    // The lanes run on CPU 1 (taskset): their CPU time, the kernel's included, per frame.
    assert_eq!(r["udp"]["cpu"]["cpus"], serde_json::json!([1]), "{s}");
    assert_cpu_per_frame(&r["udp"]["cpu"], s);
    let limit = s["limit"].as_str().unwrap();
    if lost > 0 {
        assert!(limit.contains("receiver"), "{s}");
        let first = &s["verdict"]["limits"][0];
        assert_eq!(first["counters"][0], "socket_drops", "{s}");
        assert_eq!(first["frames"].as_u64(), Some(lost), "{s}");
    } else {
        // Nothing lost: `none`, or `sender` where blast's lanes (four on one CPU here) fell short of the pace.
        assert!(limit == "none" || limit == "sender", "{s}");
    }
    (sent, lost)
}

/// blast's ladder over queues 1, 2 and 4 (paced: this machine has 2 CPUs)
/// and 64 and 1518 B into drop on the kernel's UDP sockets, one socket and
/// thread per queue: every step counted exactly through the control channel.
#[test]
fn a_ladder_into_drop_on_sockets_counts_every_step_exactly() {
    let _g = heavy();
    let Some((ns, mac)) = receiver_ns("a_ladder_into_drop_on_sockets") else { return };
    let dir = scratch("sockets-ladder");
    // A statistic of the interface's kernel driver, watched as on a port (on ENA the allowances are, always).
    let (drop, peer) = drop_on_sockets(&ns, 4, &["--socket-rcvbuf", "4MB", "--watch-xstat", "rx_queue_0_xdp_packets"]);
    let json = dir.join("ladder.json");
    let plan = ["--queues", "1,2,4", "--size", "64,1518", "--rate", "20k", "--duration", "1"];
    let out = run_af_packet("ip", &blast_to(&ns, &peer, &mac, &plan, &json), Duration::from_secs(180));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    sigint(&drop);
    let d = drop.finish(Duration::from_secs(30));
    assert_eq!(d.status.code(), Some(EXIT_INTERRUPTED), "drop --socket ends on Ctrl-C: {}\n{}", d.stdout, d.stderr);
    let v = read_json(&json);
    assert_eq!(v["environment"]["receiver"]["driver"], "udp-socket", "{}", v["environment"]["receiver"]);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6, "{}", out.stdout);
    for s in steps {
        let (sent, _) = assert_socket_step(s);
        assert!(sent > 15_000, "{s}");
        assert!(s["receiver"]["xstats"]["rx_queue_0_xdp_packets"].is_u64(), "the veth's statistic, watched: {s}");
        // One socket per queue the step asked for.
        assert_eq!(s["receiver"]["queues"].as_array().unwrap().len() as u64, s["queues"].as_u64().unwrap(), "{s}");
    }
    assert!(d.stdout.contains("drop: received "), "{}", d.stdout);
    assert!(
        d.stdout.contains("drop: NIC counters from the kernel driver veth's statistics of bd-b (rx_queue_0_xdp_packets)"),
        "{}",
        d.stdout
    );
}

/// A receiver that cannot keep up (a 16 KiB buffer, no GRO, 200,000 cycles
/// of work a datagram): its loss is counted exactly and named by the
/// kernel's counter. Then blast killed with -9 mid-step, three times: drop
/// on sockets stays up, and the next run's steps are exact again.
#[test]
fn drop_on_sockets_names_a_full_socket_buffer_and_outlives_a_killed_sender() {
    let _g = heavy();
    let Some((ns, mac)) = receiver_ns("drop_on_sockets_names_a_full_socket_buffer") else { return };
    let dir = scratch("sockets-slow");
    let (mut drop, peer) = drop_on_sockets(&ns, 2, &["--socket-rcvbuf", "16kB", "--no-gro", "--rx-cost", "200000"]);
    // Frames for another port would all be lost to NoPorts: refused before a frame is sent.
    let mut wrong = blast_to(&ns, &peer, &mac, &["--size", "64", "--rate", "1k", "--duration", "1"], &dir.join("wrong.json"));
    let at = wrong.iter().position(|a| a == "--dst-port").unwrap();
    wrong[at + 1] = "10".into();
    let out = run_af_packet("ip", &wrong, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "{}\n{}", out.stdout, out.stderr);
    let errors: Vec<&str> = out.our_stderr().into_iter().filter(|l| l.starts_with("blast: error:")).collect();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(
        errors[0].contains(
            "drop receives on UDP sockets at 198.18.0.2:9 but blast sends to 198.18.0.2:10: give --dst-ip 198.18.0.2 --dst-port 9"
        ),
        "{}",
        errors[0]
    );

    let plan = ["--queues", "1", "--size", "256", "--rate", "20k", "--duration", "1"];
    let json = dir.join("slow.json");
    let out = run_af_packet("ip", &blast_to(&ns, &peer, &mac, &plan, &json), Duration::from_secs(60));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let s = &read_json(&json)["steps"][0];
    let (sent, lost) = assert_socket_step(s);
    assert!(lost > sent / 10, "a receiver of about 10 kpps on a 16 KiB buffer keeps up with 20 kpps: {s}");
    let evidence = s["verdict"]["limits"][0]["evidence"].as_str().unwrap();
    assert!(evidence.contains("frames dropped by a full socket buffer") && evidence.contains("raise the receive buffer"), "{evidence}");

    for round in 0..3 {
        let json = dir.join(format!("killed-{round}.json"));
        let plan = ["--queues", "1,2", "--size", "64", "--rate", "5k", "--duration", "2"];
        let mut blast = spawn("ip", &blast_to(&ns, &peer, &mac, &plan, &json));
        // Killed inside its second step's window.
        blast.wait_for_line("step 1 (", Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(1200));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(blast.pid()), nix::sys::signal::Signal::SIGKILL).unwrap();
        let _ = blast.finish(Duration::from_secs(10));
        assert!(drop.try_status().is_none(), "round {round}: drop --socket stays up when its sender is killed");
        let json = dir.join(format!("after-{round}.json"));
        let plan = ["--queues", "2", "--size", "64", "--rate", "5k", "--duration", "1"];
        let out = run_af_packet("ip", &blast_to(&ns, &peer, &mac, &plan, &json), Duration::from_secs(60));
        assert!(out.status.success(), "round {round}: {}\n{}", out.stdout, out.stderr);
        // 5 kpps is within the slow receiver: still, a loss must be its sockets'.
        assert_socket_step(&read_json(&json)["steps"][0]);
    }
    sigint(&drop);
    let d = drop.finish(Duration::from_secs(30));
    assert_eq!(d.status.code(), Some(EXIT_INTERRUPTED), "{}\n{}", d.stdout, d.stderr);
    assert!(d.stdout.contains("drop: limit: receiver"), "drop's own summary names the sockets' drops: {}", d.stdout);
    assert!(d.stdout.contains("drop: CPU: the lanes' CPUs [1] spent"), "{}", d.stdout);
    // And a second's line says the sockets' drops where there were some, with the second's verdict.
    assert!(
        d.stdout.lines().any(|l| l.contains(" received ") && l.contains(", the sockets dropped ") && l.contains("| limit: receiver")),
        "{}",
        d.stdout
    );
}

/// The shared secret of the tests' control channels between namespaces
/// (drop refuses to listen on an address other hosts reach without one).
const TOKEN: &str = "BLASTDROP_TOKEN=blastdrop-sockets-test-secret";

/// The sending and the receiving namespace of `Netns::apart` (None: skipped, said why).
fn apart_or_skip(test: &str) -> Option<(Netns, Netns)> {
    if !is_root() {
        skip_or_fail(test, "needs root to create network namespaces (run the tests as root)");
        return None;
    }
    match Netns::apart(&format!("bd-{}-{}", &test[..test.len().min(6)], std::process::id())) {
        Ok(pair) => Some(pair),
        Err(e) => {
            skip_or_fail(test, &format!("cannot set up the namespaces: {e} (needs ip from iproute2 and veth in the kernel)"));
            None
        }
    }
}

/// drop in `rx`, its lanes on CPU 1, serving blast from the other
/// namespace at 10.99.0.2; `how` its receiver's flags. Returns it and its control address.
fn drop_apart(rx: &Netns, how: &[&str]) -> (Running, String) {
    let addr = format!("10.99.0.2:{}", free_port());
    let mut d = strings(&[TOKEN, "taskset", "-c", "1", DROP, "--listen", &addr, "--duration", "300"]);
    d.extend(strings(how));
    let mut drop = spawn("ip", &rx.exec("env", d));
    drop.wait_for_line("control on", Duration::from_secs(30));
    (drop, addr)
}

/// blast --socket in `tx` from 198.18.0.1, its lanes on CPU 0, to drop's
/// control port `peer` and 198.18.0.2:9; `plan` the run's own flags.
fn blast_on_sockets(tx: &Netns, peer: &str, plan: &[&str], json: &std::path::Path) -> Vec<String> {
    let mut b = strings(&[TOKEN, "taskset", "-c", "0", BLAST, "--socket", "--peer", peer, "--src-ip", "198.18.0.1"]);
    b.extend(strings(&["--dst-ip", "198.18.0.2", "--dst-port", "9", "--warmup", "0.3", "--json", &json.display().to_string()]));
    b.extend(strings(plan));
    tx.exec("env", b)
}

/// The sender's side of a step blast sent on sockets: its path named, its
/// count the sockets' (there is no port), and a sender limit that names sendmmsg.
fn assert_sent_on_sockets(v: &serde_json::Value) {
    let port = &v["environment"]["sender"]["port"];
    assert_eq!(port["name"], "udp:198.18.0.1", "the sending address: {port}");
    assert_eq!(port["driver"], "udp-socket", "{port}");
    assert_eq!(port["mtu"], 1500, "bd-a's MTU: {port}");
    assert_eq!(v["environment"]["sender"]["dpdk_runtime"], "none: the kernel's UDP sockets", "{}", v["environment"]["sender"]);
    for s in v["steps"].as_array().unwrap() {
        assert_eq!(s["sender_opackets"], s["sent"]["packets"], "{s}");
        assert_eq!(s["sender_udp"]["destination"], "198.18.0.2:9", "{s}");
        assert_cpu_per_frame(&s["sender_udp"]["cpu"], s);
        for l in s["verdict"]["limits"].as_array().unwrap().iter().filter(|l| l["kind"] == "sender") {
            assert_eq!(l["counters"][0], "sendmmsg", "{l}");
            assert!(!l["evidence"].as_str().unwrap().contains("tx_burst"), "{l}");
        }
    }
}

/// blast and drop both on the kernel's UDP sockets, in two namespaces
/// joined by a veth pair: a ladder over queues 1, 2 and 4 (paced: 2 CPUs)
/// and 64 and 1518 B counted exactly at every step; an unpaced step into a
/// slow socket whose loss is the sockets', named so; frames over bd-a's MTU refused
/// before a frame leaves; then drop killed with -9 under a running ladder,
/// three times: blast ends in one line, with no figure for the step it lost.
#[test]
fn blast_on_sockets_to_drop_on_sockets_counts_every_step_exactly() {
    let _g = heavy();
    let Some((tx, rx)) = apart_or_skip("blast_on_sockets_to_drop_on_sockets") else { return };
    let dir = scratch("sockets-both");
    let (mut drop, mut peer) = drop_apart(&rx, &["--socket", "198.18.0.2:9", "--queues", "4", "--socket-rcvbuf", "4MB"]);
    let json = dir.join("ladder.json");
    let plan = ["--queues", "1,2,4", "--size", "64,1518", "--rate", "20k", "--duration", "1"];
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &json), Duration::from_secs(180));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    assert_sent_on_sockets(&v);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6, "{}", out.stdout);
    assert!(
        out.stdout.contains("none: the kernel's UDP sockets; receiver:"),
        "the sender's line says what moved its frames: {}",
        out.stdout
    );
    for s in steps {
        let (sent, lost) = assert_exact(s);
        assert!(sent > 15_000, "{s}");
        assert_eq!(s["receiver"]["udp"]["address"], "198.18.0.2:9", "{s}");
        assert_eq!(s["receiver"]["queues"].as_array().unwrap().len() as u64, s["queues"].as_u64().unwrap(), "{s}");
        assert_eq!(s["flows"], s["queues"], "one flow per socket: {s}");
        // Any loss at this pace is a host that held a lane back: the sockets' own, named so.
        if lost > 0 {
            assert_eq!(s["verdict"]["limits"][0]["counters"][0], "socket_drops", "{s}");
        }
    }

    // Unpaced, into one slow socket (a 16 kB buffer, no GRO, work on every
    // datagram: loss even where the sender is emulated): every lost frame is the sockets'.
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
    let slow = ["--socket", "198.18.0.2:9", "--queues", "1", "--socket-rcvbuf", "16kB", "--no-gro", "--rx-cost", "200000"];
    (drop, peer) = drop_apart(&rx, &slow);
    let json = dir.join("unpaced.json");
    let plan = ["--queues", "1", "--size", "64", "--duration", "1"];
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &json), Duration::from_secs(60));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    assert_sent_on_sockets(&v);
    let s = &v["steps"][0];
    let (_, lost) = assert_exact(s);
    assert!(lost > 0, "one socket does not keep up with an unpaced sender: {s}");
    let first = &s["verdict"]["limits"][0];
    assert_eq!(first["counters"][0], "socket_drops", "{s}");
    assert_eq!(first["frames"].as_u64(), Some(lost), "the sockets' drops account for every lost frame: {s}");
    assert!(s["limit"].as_str().unwrap().starts_with("receiver"), "{s}");

    // Alone (no --peer), its series kept, ended by Ctrl-C: its summary and record are written.
    let (json, csv) = (dir.join("ctrl-c.json"), dir.join("ctrl-c.csv"));
    let mut b = strings(&[TOKEN, "taskset", "-c", "0", BLAST, "--socket", "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2"]);
    b.extend(strings(&["--dst-port", "9", "--rate", "50k", "--duration", "60", "--json", &json.display().to_string()]));
    b.extend(strings(&["--series", &csv.display().to_string()]));
    let mut blast = spawn("ip", &tx.exec("env", b));
    blast.wait_for_line("sent ", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(2200));
    sigint(&blast);
    let b = blast.finish(Duration::from_secs(30));
    assert_eq!(b.status.code(), Some(EXIT_INTERRUPTED), "{}\n{}", b.stdout, b.stderr);
    assert!(b.stdout.contains("--- blast summary (sender-side: datagrams the sockets' sendmmsg took) ---"), "{}", b.stdout);
    assert!(b.stdout.contains("no port: what the sockets took is what left"), "{}", b.stdout);
    let v = read_json(&json);
    assert_eq!(v["summary"]["interrupted"], true, "{v}");
    let sent = v["summary"]["sent"]["packets"].as_u64().unwrap();
    assert!(sent > 50_000, "about 2 s at 50 kpps: {v}");
    assert_eq!(v["summary"]["port"]["opackets"].as_u64(), Some(sent), "what the sockets took: {v}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.lines().count() >= 3, "a header and a row a second: {rows}");

    // Frames bd-a cannot carry whole: refused in one line, naming the fix.
    let plan = ["--queues", "1", "--size", "1600", "--rate", "1k", "--duration", "1"];
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &dir.join("mtu.json")), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "{}\n{}", out.stdout, out.stderr);
    let errors: Vec<&str> = out.our_stderr().into_iter().filter(|l| l.starts_with("blast: error:")).collect();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(
        errors[0].contains("frames of 1600 B do not fit bd-a's MTU of 1500 B") && errors[0].contains("give --size up to"),
        "{}",
        errors[0]
    );

    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
    (drop, peer) = drop_apart(&rx, &["--socket", "198.18.0.2:9", "--queues", "4"]);
    for round in 0..3 {
        let json = dir.join(format!("peer-killed-{round}.json"));
        let plan = ["--queues", "1,2", "--size", "64", "--rate", "5k", "--duration", "2"];
        let mut blast = spawn("ip", &blast_on_sockets(&tx, &peer, &plan, &json));
        blast.wait_for_line("step 1 (", Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(1200));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(drop.pid()), nix::sys::signal::Signal::SIGKILL).unwrap();
        let b = blast.finish(Duration::from_secs(60));
        assert!(!b.status.success(), "round {round}: blast cannot finish a ladder whose receiver is gone: {}\n{}", b.stdout, b.stderr);
        assert!(!b.stderr.contains("panicked"), "round {round}: {}", b.stderr);
        // The first step stands, exact; the one drop died in has no receiver-side figure.
        let v = read_json(&json);
        let steps = v["steps"].as_array().unwrap();
        assert_exact(&steps[0]);
        assert!(steps.iter().skip(1).all(|s| !s["error"].is_null() && s["received"].is_null()), "round {round}: {v}");
        let _ = drop.finish(Duration::from_secs(10));
        // A new drop binds the same address at once (UDP leaves nothing behind a kill -9).
        (drop, peer) = drop_apart(&rx, &["--socket", "198.18.0.2:9", "--queues", "4"]);
    }
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
}

/// blast on sockets into drop on DPDK's af_packet (the mixed path): with
/// GSO over veth refused in one line (veth hands a GSO buffer over whole,
/// one frame to a port); without it, every step exact.
#[test]
fn blast_on_sockets_to_drop_on_a_port_counts_exactly_without_gso() {
    let _g = heavy();
    let Some((tx, rx)) = apart_or_skip("blast_on_sockets_to_drop_on_a_port") else { return };
    let dir = scratch("sockets-to-port");
    let mut how = strings(&["--port", "net_af_packet0", "--queues", "2", "--"]);
    how.extend(eal_base());
    how.extend(strings(&["--vdev=net_af_packet0,iface=bd-b,qpairs=2", "--lcores=0@1,1@1,2@1"]));
    let mut how: Vec<&str> = how.iter().map(String::as_str).collect();
    let (drop, peer) = drop_apart(&rx, &how);
    let plan = ["--queues", "1", "--size", "64", "--rate", "1k", "--duration", "1"];
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &dir.join("gso.json")), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "{}\n{}", out.stdout, out.stderr);
    let errors: Vec<&str> = out.our_stderr().into_iter().filter(|l| l.starts_with("blast: error:")).collect();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(errors[0].contains("veth hands each GSO buffer to its peer whole") && errors[0].contains("give --no-gso"), "{}", errors[0]);

    let json = dir.join("ladder.json");
    let plan = ["--no-gso", "--queues", "1,2", "--size", "64,1518", "--rate", "20k", "--duration", "1"];
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &json), Duration::from_secs(180));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    assert_sent_on_sockets(&v);
    assert_eq!(v["environment"]["receiver"]["driver"], "net_af_packet", "{}", v["environment"]["receiver"]);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "{}", out.stdout);
    for s in steps {
        let (sent, _) = assert_exact(s);
        assert!(sent > 15_000, "{s}");
    }
    sigint(&drop);
    let d = drop.finish(Duration::from_secs(30));
    assert_eq!(d.status.code(), Some(EXIT_INTERRUPTED), "{}\n{}", d.stdout, d.stderr);

    // Round trips through drop --reflect on the port: bd-a leaves its UDP
    // checksums to an offload a veth never completes, so every reflection
    // would die in this host's kernel as a checksum error: refused in one
    // line naming the fix; with the offload off, every step's probes come back.
    let eal_from = how.iter().position(|&a| a == "--").unwrap();
    how.insert(eal_from, "--reflect");
    let (drop, peer) = drop_apart(&rx, &how);
    let plan = ["--no-gso", "--reflect", "--queues", "1", "--size", "64", "--rate", "10k", "--duration", "1"];
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &dir.join("refused.json")), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "{}\n{}", out.stdout, out.stderr);
    let errors: Vec<&str> = out.our_stderr().into_iter().filter(|l| l.starts_with("blast: error:")).collect();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(errors[0].contains("checksum error") && errors[0].contains("ethtool -K bd-a tx off"), "{}", errors[0]);
    let off = run("ip", &tx.exec("ethtool", strings(&["-K", "bd-a", "tx", "off"])), Duration::from_secs(10));
    assert!(off.status.success(), "ethtool -K bd-a tx off: {}\n{}", off.stdout, off.stderr);
    let json = dir.join("round-trips.json");
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &json), Duration::from_secs(60));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    assert_round_trips(&read_json(&json));
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
}

/// Every step's probes came back from drop --reflect and were timed: the
/// exact account holds, the round trips counted are the probes that came
/// back, nearly all of them (a reflection the sender's own socket buffer
/// drops is not timed), and their median is a veth's: above 0, below 100 ms.
fn assert_round_trips(v: &serde_json::Value) {
    for s in v["steps"].as_array().unwrap() {
        let (sent, lost) = assert_exact(s);
        let (back, l) = (s["reflected"].as_u64().unwrap(), &s["latency"]);
        assert_eq!(l["count"].as_u64(), Some(back), "{s}");
        assert!(back * 100 >= (sent - lost) * 95 && back <= sent - lost, "{back} of {} received came back: {s}", sent - lost);
        let p50 = l["p50_us"].as_f64().unwrap();
        assert!(p50 > 0.0 && p50 < 100_000.0, "median round trip {p50} us: {s}");
    }
}

/// Both ends on sockets with time: drop --socket --reflect --one-way sends
/// every datagram back (GRO off) and times each probe one way; blast
/// --socket --reflect times each round trip on its own sockets. A ladder
/// over queues 1 and 2 and 64 and 1518 B: every step exact and timed. drop's
/// own outputs on sockets: its /metrics while it runs, its summary, and its
/// record (no port, the kernel's counters, the one-way times, its series),
/// which `blast report` reads.
#[test]
fn round_trips_and_one_way_times_on_sockets() {
    let _g = heavy();
    let Some((tx, rx)) = apart_or_skip("round_trips_and_one_way_times_on_sockets") else { return };
    let dir = scratch("sockets-timed");
    let (record, csv, metrics) = (dir.join("drop.json"), dir.join("drop.csv"), format!("10.99.0.2:{}", free_port()));
    let (record_s, csv_s) = (record.display().to_string(), csv.display().to_string());
    let how = ["--socket", "198.18.0.2:9", "--queues", "2", "--socket-rcvbuf", "4MB", "--reflect", "--one-way"];
    let how = [&how[..], &["--json", &record_s, "--series", &csv_s, "--metrics", &metrics]].concat();
    let (drop, peer) = drop_apart(&rx, &how);
    let json = dir.join("ladder.json");
    let plan = ["--reflect", "--queues", "1,2", "--size", "64,1518", "--rate", "10k", "--duration", "1"];
    let out = run("ip", &blast_on_sockets(&tx, &peer, &plan, &json), Duration::from_secs(180));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    assert_sent_on_sockets(&v);
    assert_eq!(v["steps"].as_array().unwrap().len(), 4, "{}", out.stdout);
    assert_round_trips(&v);
    assert!(out.stdout.contains("round trip (drop --reflect; both stamps on blast's own clock)"), "{}", out.stdout);
    let scraped = run("ip", &rx.exec("curl", strings(&["-s", "-m", "3", &format!("http://{metrics}/metrics")])), Duration::from_secs(10));
    assert!(scraped.stdout.contains(r#"blastdrop_frames_total{tool="drop",direction="received",queue="0"}"#), "{}", scraped.stdout);
    assert!(scraped.stdout.contains(r#"blastdrop_latency_seconds_count{tool="drop",kind="one_way"}"#), "{}", scraped.stdout);
    sigint(&drop);
    let d = drop.finish(Duration::from_secs(30));
    assert_eq!(d.status.code(), Some(EXIT_INTERRUPTED), "{}\n{}", d.stdout, d.stderr);
    assert!(d.stdout.contains("UDP GRO off (reflecting: each datagram goes back as it came)"), "{}", d.stdout);
    let received = number_after(&d.stdout, "drop: received ");
    let reflected = number_after(&d.stdout, "drop: reflect: ");
    assert!(received > 30_000 && reflected == received, "every datagram went back: {}", d.stdout);
    let one_way = d.stdout.lines().find(|l| l.starts_with("drop: one way (")).unwrap_or_else(|| panic!("{}", d.stdout));
    assert!(one_way.contains(&format!("(n = {received})")), "every probe timed one way: {one_way}");

    // The record says the same, with no port and the kernel's counters where a port's go.
    let r = read_json(&record);
    let (m, e) = (&r["summary"], &r["environment"]);
    assert_eq!((e["port"]["name"].as_str(), e["port"]["driver"].as_str()), (Some("udp:198.18.0.2:9"), Some("udp-socket")), "{e}");
    assert_eq!(e["dpdk_runtime"], "none: the kernel's UDP sockets", "{e}");
    assert_eq!(m["received"]["packets"].as_u64(), Some(received), "{m}");
    assert!(m["port"].is_null() && m["ns_per_packet"].is_null(), "no port, no busy polls: {m}");
    let k = &m["socket"];
    assert_eq!(k["reflected"].as_u64(), Some(received), "{k}");
    assert_eq!(k["udp"]["address"], "198.18.0.2:9", "{k}");
    assert_cpu_per_frame(&k["udp"]["cpu"], &serde_json::json!({ "received": m["received"] }));
    let o = &m["one_way"];
    assert_eq!((o["clock"].as_str(), o["latency"]["count"].as_u64()), (Some("host_poll"), Some(received)), "{o}");
    let queued: u64 = m["queues"].as_array().unwrap().iter().map(|q| q["received"]["packets"].as_u64().unwrap()).sum();
    assert_eq!(queued, received, "the queues' shares add up: {m}");
    assert!(m["limit"].is_string() && !m["limit"].as_str().unwrap().is_empty(), "{m}");
    let rows = r["series"]["received_frames"].as_array().unwrap_or_else(|| panic!("{}", r["series"]));
    assert!(rows.len() >= 4, "a row a second: {}", r["series"]);
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() >= 4, "the CSV has its rows");
    let md = dir.join("report.md");
    let rep = run(BLAST, &strings(&["report", &record_s, "--markdown", &md.display().to_string()]), Duration::from_secs(60));
    assert!(rep.status.success(), "{}\n{}", rep.stdout, rep.stderr);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("The run (receiver-side, on the kernel's UDP sockets)") && !text.contains("without hugepages"), "{text}");
}

/// The number that follows `after` on the first line holding it.
fn number_after(text: &str, after: &str) -> u64 {
    let line = text.lines().find_map(|l| l.split_once(after).map(|(_, rest)| rest)).unwrap_or_else(|| panic!("no {after:?} in {text}"));
    line.split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{after:?}: {line}"))
}
