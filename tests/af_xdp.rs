//! blast and drop over net_af_xdp (DPDK's AF_XDP PMD) on a veth pair in a
//! network namespace the test creates: the XDP path that needs no
//! unbinding (docs/af-xdp.md). On DPDK 22.11 the PMD checks queue_count
//! against the interface's combined channels, which a veth does not
//! report: one queue each way here.

mod common;
use common::*;
use std::time::Duration;

/// The EAL arguments for a net_af_xdp port on `iface`, lcores on `cpu`.
fn xdp_eal(iface: &str, cpu: u32) -> Vec<String> {
    let mut a = eal_base();
    a.push(format!("--vdev=net_af_xdp0,iface={iface}"));
    a.push(format!("--lcores=0@{cpu},1@{cpu}"));
    a
}

fn af_packet_eal(iface: &str, cpu: u32) -> Vec<String> {
    let mut a = eal_base();
    a.push(format!("--vdev=net_af_packet0,iface={iface}"));
    a.push(format!("--lcores=0@{cpu},1@{cpu}"));
    a
}

/// The kernel's own count of frames bd-b dropped on receipt (a veth counts
/// there what its XDP program could not hand to a socket).
fn rx_dropped(ns: &Netns, iface: &str) -> u64 {
    let out = run("ip", &ns.exec("cat", vec![format!("/sys/class/net/{iface}/statistics/rx_dropped")]), Duration::from_secs(10));
    out.stdout.trim().parse().unwrap_or_else(|_| panic!("rx_dropped of {iface}: {:?} {:?}", out.stdout, out.stderr))
}

/// drop on bd-b over `drop_port` (with `drop_extra` flags) for `count`
/// frames, blast's `count` frames at `rate` from bd-a over `blast_port`;
/// drop's record and stdout once both ended.
fn one_run(
    ns: &Netns,
    dir: &std::path::Path,
    drop_extra: &[&str],
    (drop_port, drop_eal): (&str, Vec<String>),
    (blast_port, blast_eal): (&str, Vec<String>),
    count: u64,
    (rate, size): (&str, &str),
) -> (serde_json::Value, String) {
    let json = dir.join("drop.json");
    let _ = std::fs::remove_file(&json);
    let mut d = strings(&["--port", drop_port, "--count", &count.to_string(), "--duration", "30", "--idle-timeout", "3", "--json"]);
    d.push(json.display().to_string());
    d.extend(strings(drop_extra));
    d.push("--".into());
    d.extend(drop_eal);
    let mut drop = spawn("ip", &ns.exec(DROP, d));
    drop.wait_for_line("drop: port", Duration::from_secs(30));
    let mut b = strings(&["--port", blast_port, "--count", &count.to_string(), "--rate", rate, "--flows", "2", "--size", size, "--"]);
    b.extend(blast_eal);
    let blast = run_af_packet("ip", &ns.exec(BLAST, b), Duration::from_secs(60));
    assert!(blast.status.success(), "blast: {}\n{}", blast.stdout, blast.stderr);
    let out = drop.finish(Duration::from_secs(40));
    assert!(out.status.success(), "drop: {}\n{}", out.stdout, out.stderr);
    (read_json(&json), out.stdout)
}

/// Every frame sent is received or named lost, and every lost frame is one
/// the kernel counted at an XDP socket whose ring was full (a loaded
/// machine may deschedule drop's lane: the record must then say so).
fn assert_exact_on_xdp(v: &serde_json::Value, count: u64, stdout: &str) {
    let s = &v["summary"];
    let got = s["probe"]["received"].as_u64().unwrap();
    let lost = s["probe"]["lost_estimate"].as_u64().unwrap();
    let socket_drops = s["port"]["socket_drops"].as_u64().unwrap_or(0);
    assert!(got <= count, "{got} received of {count}: {stdout}");
    if got < count {
        assert_eq!(s["limit"], "receiver", "frames went missing and drop must name its full XDP ring: {stdout}");
        assert!(got + socket_drops >= count, "received {got} + XDP ring drops {socket_drops} < {count} sent: {stdout}");
    }
    assert!(lost <= socket_drops, "lost {lost} but the XDP sockets dropped only {socket_drops}: {stdout}");
    assert_eq!(s["probe"]["duplicates"], 0, "{stdout}");
}

#[test]
fn blast_to_drop_over_af_xdp_on_veth_counts_every_frame_and_names_the_xdp_mode() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("blast_to_drop_over_af_xdp_on_veth_counts_every_frame_and_names_the_xdp_mode", Netns::with_pair) else {
        return;
    };
    let dir = scratch("afxdp");
    let count = 20_000;
    let (v, stdout) =
        one_run(&ns, &dir, &[], ("net_af_xdp0", xdp_eal("bd-b", 1)), ("net_af_xdp0", xdp_eal("bd-a", 0)), count, ("50k", "256"));
    assert_matches_schema(&v, "drop");
    assert_exact_on_xdp(&v, count, &stdout);
    let port = &v["environment"]["port"];
    assert_eq!(port["driver"], "net_af_xdp");
    // The kernel's word on the path: a veth runs XDP natively and has no
    // AF_XDP zero-copy, so the kernel bound the socket in copy mode.
    let xdp = &port["xdp"];
    assert_eq!(xdp["interface"], "bd-b", "{xdp}");
    assert!(xdp["program"].as_str().unwrap().starts_with("DPDK's default"), "{xdp}");
    assert_eq!(xdp["attach"], "native", "{xdp}");
    assert_eq!(xdp["sockets"], 1, "{xdp}");
    assert_eq!(xdp["zero_copy_sockets"], 0, "{xdp}");
    assert!(xdp["copy_mode"].as_str().unwrap().starts_with("copy (the kernel fell back"), "{xdp}");
    // Its pool is the socket's UMEM: 4 KiB objects, the fill ring's 2048 mbufs on top of the ring's.
    let pools = &v["environment"]["mempools"][0];
    assert_eq!(pools["bytes_per_mbuf"], 4096, "{pools}");
    assert_eq!(pools["mbufs_per_pool"], 4095, "{pools}");
    assert!(stdout.contains("XDP on bd-b: attached native, copy"), "drop says which XDP mode it got: {stdout}");
}

#[test]
fn a_slow_drop_on_af_xdp_names_its_full_xdp_ring_as_the_kernel_counts_it() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("a_slow_drop_on_af_xdp_names_its_full_xdp_ring_as_the_kernel_counts_it", Netns::with_pair) else {
        return;
    };
    let dir = scratch("afxdp-slow");
    let count = 20_000;
    let before = rx_dropped(&ns, "bd-b");
    // 200k cycles a frame: a few thousand frames a second, against 50k sent.
    let (v, stdout) = one_run(
        &ns,
        &dir,
        &["--rx-cost", "200000"],
        ("net_af_xdp0", xdp_eal("bd-b", 1)),
        ("net_af_xdp0", xdp_eal("bd-a", 0)),
        count,
        ("50k", "256"),
    );
    let dropped_by_kernel = rx_dropped(&ns, "bd-b") - before;
    let s = &v["summary"];
    let socket_drops = s["port"]["socket_drops"].as_u64().unwrap();
    assert!(socket_drops > count / 2, "most frames dropped at the full XDP ring: {stdout}");
    // Exact: what drop read from its XDP sockets is what the interface counted.
    assert_eq!(socket_drops, dropped_by_kernel, "the XDP sockets' rx_ring_full against bd-b's rx_dropped: {stdout}");
    // drop reads the interface's own count too, and counts those frames once.
    assert_eq!(s["port"]["interface_drops"].as_u64().unwrap(), dropped_by_kernel, "{stdout}");
    assert!(
        stdout.contains(&format!(" interface_drops {dropped_by_kernel} ")),
        "the summary's port line prints the record's figure: {stdout}"
    );
    assert_eq!(s["limit"], "receiver", "{stdout}");
    let l = &s["verdict"]["limits"][0];
    assert_eq!(l["counters"], serde_json::json!(["socket_drops", "interface_drops"]), "{l}");
    assert_eq!(l["frames"].as_u64().unwrap(), socket_drops, "one frame counted by both is one frame: {l}");
    assert!(stdout.contains("socket_drops +") && stdout.contains("XDP socket"), "{stdout}");
    let got = s["received"]["packets"].as_u64().unwrap();
    let no_probe = s["no_probe"].as_u64().unwrap();
    assert_eq!(got - no_probe + socket_drops, count, "every frame received or dropped at the ring, none unexplained: {stdout}");
}

#[test]
fn af_packet_to_af_xdp_and_back_count_every_frame() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("af_packet_to_af_xdp_and_back_count_every_frame", Netns::with_pair) else { return };
    let dir = scratch("afxdp-mixed");
    let count = 10_000;
    let (v, stdout) =
        one_run(&ns, &dir, &[], ("net_af_xdp0", xdp_eal("bd-b", 1)), ("net_af_packet0", af_packet_eal("bd-a", 0)), count, ("30k", "256"));
    assert_exact_on_xdp(&v, count, &stdout);
    let (v, stdout) =
        one_run(&ns, &dir, &[], ("net_af_packet0", af_packet_eal("bd-b", 1)), ("net_af_xdp0", xdp_eal("bd-a", 0)), count, ("30k", "256"));
    let s = &v["summary"];
    let (got, socket_drops) = (s["probe"]["received"].as_u64().unwrap(), s["port"]["socket_drops"].as_u64().unwrap_or(0));
    assert!(got == count || (s["limit"] == "receiver" && got + socket_drops >= count), "AF_XDP's frames on af_packet: {stdout}");
}

/// One end killed with -9 mid-run over AF_XDP (its XDP socket and the
/// program on its interface left behind), three times: each time the next
/// run on the same interfaces counts every frame. `end` is (binary, its
/// arguments before the EAL's, its interface and CPU, the line that says
/// it is running).
fn killed_on_af_xdp_then_the_next_run_is_exact(name: &str, end: (&str, &[&str], (&str, u32), &str)) {
    let _g = heavy();
    let Some(ns) = netns_or_skip(name, Netns::with_pair) else { return };
    let dir = scratch(name);
    let (bin, args, (iface, cpu), running) = end;
    for round in 0..3 {
        let mut a = strings(args);
        a.push("--".into());
        a.extend(xdp_eal(iface, cpu));
        let mut p = spawn("ip", &ns.exec(bin, a));
        p.wait_for_line(running, Duration::from_secs(30));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(p.pid()), nix::sys::signal::Signal::SIGKILL).unwrap();
        let _ = p.finish(Duration::from_secs(10));
        let (v, stdout) =
            one_run(&ns, &dir, &[], ("net_af_xdp0", xdp_eal("bd-b", 1)), ("net_af_xdp0", xdp_eal("bd-a", 0)), 5_000, ("20k", "256"));
        assert_exact_on_xdp(&v, 5_000, &stdout);
        assert!(v["summary"]["probe"]["received"].as_u64().unwrap() > 0, "{name} round {round}: nothing arrived after the kill: {stdout}");
    }
}

#[test]
fn drop_killed_on_af_xdp_leaves_a_path_the_next_drop_receives_on() {
    let drop = (DROP, &["--port", "net_af_xdp0", "--duration", "60"][..], ("bd-b", 1), "drop: port");
    killed_on_af_xdp_then_the_next_run_is_exact("drop_killed_on_af_xdp", drop);
}

#[test]
fn blast_killed_on_af_xdp_leaves_a_path_the_next_blast_sends_on() {
    let blast =
        (BLAST, &["--port", "net_af_xdp0", "--rate", "20k", "--size", "256", "--duration", "120"][..], ("bd-a", 0), "[   1.0s] sent");
    killed_on_af_xdp_then_the_next_run_is_exact("blast_killed_on_af_xdp", blast);
}

/// Ctrl-C mid-run on both ends over AF_XDP, three times on the same veth:
/// each ends with its final report and record, and what drop counted is
/// what blast said it sent, less only what the kernel counted at a full
/// XDP ring.
#[test]
fn ctrl_c_on_af_xdp_ends_both_ends_with_their_final_reports() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("ctrl_c_on_af_xdp_ends_both_ends_with_their_final_reports", Netns::with_pair) else { return };
    let dir = scratch("afxdp-ctrl-c");
    for round in 0..3 {
        let (drop_json, blast_json) = (dir.join(format!("drop-{round}.json")), dir.join(format!("blast-{round}.json")));
        let mut d = strings(&["--port", "net_af_xdp0", "--duration", "120", "--json", &drop_json.display().to_string(), "--"]);
        d.extend(xdp_eal("bd-b", 1));
        let mut drop = spawn("ip", &ns.exec(DROP, d));
        drop.wait_for_line("drop: port", Duration::from_secs(30));
        let mut b = strings(&["--port", "net_af_xdp0", "--rate", "20k", "--size", "256", "--duration", "120"]);
        b.extend(strings(&["--json", &blast_json.display().to_string(), "--"]));
        b.extend(xdp_eal("bd-a", 0));
        let mut blast = spawn("ip", &ns.exec(BLAST, b));
        blast.wait_for_line("[   1.0s] sent", Duration::from_secs(30));
        sigint(&blast);
        let out = blast.finish(Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(EXIT_INTERRUPTED), "round {round}: blast: {}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("--- blast summary") && out.stdout.contains("(interrupted)"), "round {round}: {}", out.stdout);
        let bv = read_json(&blast_json);
        assert_eq!(bv["summary"]["interrupted"], true, "round {round}");
        let sent = bv["summary"]["sent"]["packets"].as_u64().unwrap();
        assert!(sent > 0, "round {round}: {}", out.stdout);
        // The last frames reach drop's ring well within this.
        std::thread::sleep(Duration::from_millis(500));
        sigint(&drop);
        let dout = drop.finish(Duration::from_secs(30));
        assert_eq!(dout.status.code(), Some(EXIT_INTERRUPTED), "round {round}: drop: {}\n{}", dout.stdout, dout.stderr);
        assert!(dout.stdout.contains("--- drop summary"), "round {round}: {}", dout.stdout);
        let dv = read_json(&drop_json);
        assert_eq!(dv["summary"]["interrupted"], true, "round {round}");
        assert_exact_on_xdp(&dv, sent, &dout.stdout);
        assert!(!out.stderr.contains("panicked") && !dout.stderr.contains("panicked"), "round {round}");
    }
}

#[test]
fn frames_beyond_an_xdp_chunk_are_refused_with_the_limit_named() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("frames_beyond_an_xdp_chunk_are_refused_with_the_limit_named", Netns::with_pair) else { return };
    let mut d = strings(&["--port", "net_af_xdp0", "--max-size", "4000", "--duration", "5", "--"]);
    d.extend(xdp_eal("bd-b", 1));
    let out = run("ip", &ns.exec(DROP, d), Duration::from_secs(30));
    assert!(!out.status.success(), "{}", out.stdout);
    assert!(out.stderr.contains("takes frames up to 3520 bytes (one 4 KiB UMEM chunk per frame, no multi-buffer)"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[test]
fn a_ladder_over_af_xdp_counts_each_step_exactly() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("a_ladder_over_af_xdp_counts_each_step_exactly", Netns::with_pair) else { return };
    let dir = scratch("afxdp-ladder");
    let addr = format!("127.0.0.1:{}", free_port());
    let mut d = strings(&["--port", "net_af_xdp0", "--listen", &addr, "--duration", "120", "--"]);
    d.extend(xdp_eal("bd-b", 1));
    let mut drop = spawn("ip", &ns.exec(DROP, d));
    drop.wait_for_line("control on", Duration::from_secs(30));
    let json = dir.join("ladder.json");
    let mut b = strings(&["--port", "net_af_xdp0", "--peer", &addr, "--queues", "1", "--size", "64,1500", "--rate", "20k"]);
    b.extend(strings(&["--warmup", "0.3", "--duration", "1", "--json", &json.display().to_string(), "--"]));
    b.extend(xdp_eal("bd-a", 0));
    let out = run("ip", &ns.exec(BLAST, b), Duration::from_secs(120));
    assert!(out.status.success(), "blast ladder over AF_XDP: {}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{}", out.stdout);
    for step in steps {
        let trial = &step["receiver"]["trial"];
        let (sent, received, lost) =
            (trial["sent"].as_u64().unwrap(), trial["received"].as_u64().unwrap(), trial["lost"].as_u64().unwrap());
        assert!(sent > 0 && received + lost == sent, "each step's frames counted exactly: {step}");
        // A loaded machine may deschedule drop's lane: any loss must be the
        // XDP ring's, named as the receiver's.
        if lost > 0 {
            assert!(step["limit"].as_str().unwrap().contains("receiver"), "{step}");
            assert!(step["receiver"]["socket_drops"].as_u64().unwrap() >= lost, "{step}");
        }
    }
    assert_eq!(v["environment"]["sender"]["port"]["xdp"]["attach"], "native", "blast's record names its XDP path too");
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
}

/// Every pool object inside its UMEM: before the pools' memory began at a
/// chunk boundary, DPDK 22.11's net_af_xdp registered a UMEM that ended
/// inside the last object, and the kernel dropped (counting nothing) the
/// 3 frames of 20000 at 1200 B and up whose copy reached past its end.
#[test]
fn large_frames_from_af_xdp_on_veth_all_arrive() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("large_frames_from_af_xdp_on_veth_all_arrive", Netns::with_pair) else { return };
    let dir = scratch("afxdp-large");
    let (v, stdout) =
        one_run(&ns, &dir, &[], ("net_af_xdp0", xdp_eal("bd-b", 1)), ("net_af_xdp0", xdp_eal("bd-a", 0)), 20_000, ("20k", "1500"));
    assert_exact_on_xdp(&v, 20_000, &stdout);
}

#[test]
fn the_kernel_drivers_own_counters_join_the_verdict_on_af_xdp() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("the_kernel_drivers_own_counters_join_the_verdict_on_af_xdp", Netns::with_pair) else { return };
    let dir = scratch("afxdp-ethtool");
    let count = 10_000;
    // veth counts each frame its XDP program handed to a socket in
    // rx_queue_0_xdp_redirect (what `ethtool -S bd-b` prints): watched,
    // its delta over drop's run is every frame drop took off its ring.
    let (v, stdout) = one_run(
        &ns,
        &dir,
        &["--watch-xstat", "rx_queue_0_xdp_redirect"],
        ("net_af_xdp0", xdp_eal("bd-b", 1)),
        ("net_af_xdp0", xdp_eal("bd-a", 0)),
        count,
        ("30k", "256"),
    );
    assert_matches_schema(&v, "drop");
    let port = &v["environment"]["port"];
    assert_eq!(port["counters_from"], "the kernel driver veth's statistics of bd-b", "{port}");
    assert!(stdout.contains("net_af_xdp0: NIC counters from the kernel driver veth's statistics of bd-b"), "{stdout}");
    let s = &v["summary"];
    let other = s["verdict"]["limits"].as_array().unwrap().iter().find(|l| l["kind"] == "other").expect("the watched counter moved");
    assert_eq!(other["counters"][0], "rx_queue_0_xdp_redirect");
    assert_eq!(other["side"], "receiver");
    assert_eq!(other["delta"], s["received"]["packets"], "the kernel's redirects against drop's frames: {stdout}");
    // Exact either way: a loaded machine may leave drop's ring full (the
    // socket's own count says how many), never a frame unexplained.
    let (got, no_probe) = (s["received"]["packets"].as_u64().unwrap(), s["no_probe"].as_u64().unwrap());
    assert_eq!(got - no_probe + s["port"]["socket_drops"].as_u64().unwrap_or(0), count, "{stdout}");

    // A name the kernel driver does not list: one line that says where to look.
    let mut d = strings(&["--port", "net_af_xdp0", "--count", "10", "--duration", "3", "--watch-xstat", "no_such_counter", "--"]);
    d.extend(xdp_eal("bd-b", 1));
    let out = run("ip", &ns.exec(DROP, d), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "{}\n{}", out.stdout, out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(last.contains("lists no statistic \"no_such_counter\"") && last.contains("ethtool -S bd-b"), "{last}");
}

/// deploy/xdp/udp-ports.c built for UDP destination port `port` into
/// `dir`, as `deploy/setup.sh --af-xdp --xdp-udp-ports` builds it; None
/// (said, or failed under CI) without clang. BLASTDROP_XDP_FILTER names
/// one built already for port 9 (the DPDK line roots have no clang:
/// scripts/test builds it on the host).
fn udp_port_filter(dir: &std::path::Path, port: u16) -> Option<std::path::PathBuf> {
    if let Some(built) = std::env::var_os("BLASTDROP_XDP_FILTER").filter(|_| port == 9) {
        let built = std::path::PathBuf::from(built);
        assert!(built.exists(), "BLASTDROP_XDP_FILTER={} does not exist", built.display());
        let copy = dir.join("udp-ports.o");
        std::fs::copy(&built, &copy).unwrap();
        return Some(copy);
    }
    if std::process::Command::new("clang").arg("--version").output().is_err() {
        skip_or_fail("the XDP UDP port filter", "needs clang with its BPF target: scripts/deps.sh installs it");
        return None;
    }
    let out = dir.join("udp-ports.o");
    let port = port.to_string();
    let built = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/xdp/build-udp-ports"))
        .args([&port, &port])
        .arg(&out)
        .output()
        .expect("deploy/xdp/build-udp-ports runs");
    assert!(built.status.success(), "deploy/xdp/build-udp-ports could not build the filter: {}", String::from_utf8_lossy(&built.stderr));
    Some(out)
}

/// Runs `work` on a thread inside network namespace `ns`.
fn in_netns<T: Send + 'static>(ns: &str, work: impl FnOnce() -> T + Send + 'static) -> std::thread::JoinHandle<T> {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns into the test's namespace");
        work()
    })
}

#[test]
fn a_shared_interface_keeps_its_kernel_traffic_with_the_udp_port_filter() {
    let _g = heavy();
    // drop on bd-b with blastdrop's XDP filter, as on an instance whose one
    // interface also carries its SSH session: the probes (UDP port 9) go to
    // drop's XDP socket, every other frame to the kernel. The kernel's
    // traffic is UDP between two sockets here, over bd-a in a second
    // namespace (ARP included, which the filter also passes).
    let Some(ns) = netns_or_skip("shared", Netns::with_pair) else { return };
    let dir = scratch("afxdp-shared");
    let Some(filter) = udp_port_filter(&dir, 9) else { return };
    let peer = Netns(format!("{}-peer", ns.0));
    let ip = |args: &[&str]| {
        let out = run("ip", &strings(args), Duration::from_secs(10));
        assert!(out.status.success(), "ip {args:?}: {}", out.stderr);
    };
    ip(&["netns", "add", &peer.0]);
    ip(&["-n", &ns.0, "link", "set", "bd-a", "netns", &peer.0]);
    ip(&["-n", &peer.0, "addr", "add", "10.77.0.1/24", "dev", "bd-a"]);
    ip(&["-n", &peer.0, "link", "set", "bd-a", "up"]);
    ip(&["-n", &ns.0, "addr", "add", "10.77.0.2/24", "dev", "bd-b"]);

    let count = 20_000u64;
    let json = dir.join("drop.json");
    let mut d = strings(&["--port", "net_af_xdp0", "--count", &count.to_string(), "--duration", "30", "--idle-timeout", "3", "--json"]);
    d.push(json.display().to_string());
    d.push("--".into());
    d.extend(eal_base());
    d.push(format!("--vdev=net_af_xdp0,iface=bd-b,xdp_prog={}", filter.display()));
    d.push("--lcores=0@1,1@1".into());
    let mut drop = spawn("ip", &ns.exec(DROP, d));
    drop.wait_for_line("drop: port", Duration::from_secs(30));

    // The kernel's own traffic while drop receives: 200 datagrams to a
    // socket on bd-b's address, on another port.
    let listener = in_netns(&ns.0, || {
        let s = std::net::UdpSocket::bind("10.77.0.2:5000").expect("bind in the namespace");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let (mut got, mut buf) = (0u32, [0u8; 64]);
        while got < 200 && s.recv(&mut buf).is_ok() {
            got += 1;
        }
        got
    });
    std::thread::sleep(Duration::from_millis(200));
    let talker = in_netns(&peer.0, || {
        let s = std::net::UdpSocket::bind("10.77.0.1:0").unwrap();
        for i in 0..200u32 {
            s.send_to(&i.to_be_bytes(), "10.77.0.2:5000").expect("the kernel sends");
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let mut b =
        strings(&["--port", "net_af_packet0", "--count", &count.to_string(), "--rate", "20k", "--flows", "2", "--dst-port", "9", "--"]);
    b.extend(af_packet_eal("bd-a", 0));
    let blast = run_af_packet("ip", &peer.exec(BLAST, b), Duration::from_secs(60));
    assert!(blast.status.success(), "blast: {}\n{}", blast.stdout, blast.stderr);
    talker.join().unwrap();
    let kernel_got = listener.join().unwrap();
    let out = drop.finish(Duration::from_secs(40));
    assert!(out.status.success(), "drop: {}\n{}", out.stdout, out.stderr);

    assert_eq!(kernel_got, 200, "the kernel's datagrams pass the filter to their socket: {}", out.stdout);
    let v = read_json(&json);
    assert_exact_on_xdp(&v, count, &out.stdout);
    // None of the kernel's frames reached drop: only the probes did.
    assert_eq!(v["summary"]["no_probe"], 0, "{}", out.stdout);
    let program = v["environment"]["port"]["xdp"]["program"].as_str().unwrap_or_default().to_string();
    assert!(program.contains("udp-ports.o (xdp_prog="), "the record names the filter: {program}");
    assert!(out.stdout.contains("program: ") && out.stdout.contains("udp-ports.o"), "{}", out.stdout);
}
