//! Frames the kernel drops on drop's af_packet sockets (their RX rings
//! full) are counted: DPDK before 25.03 never reads the sockets'
//! PACKET_STATISTICS, so `imissed` stays 0 while frames go missing. drop
//! reads them itself (`socket_drops`) and its verdict names them.

mod common;
use common::*;
use std::time::Duration;

/// The N of "socket_drops +N" in a verdict's evidence, if it names them.
fn named_socket_drops(verdict: &serde_json::Value) -> Option<u64> {
    verdict["limits"].as_array()?.iter().find_map(|l| {
        let e = l["evidence"].as_str()?;
        let at = e.find("socket_drops +")? + "socket_drops +".len();
        e[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    })
}

#[test]
fn af_packet_socket_drops_are_counted_and_named_by_the_verdict() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("af_packet_socket_drops_are_counted", Netns::with_pair) else { return };
    let dir = scratch("af-socket-drops");
    let addr = format!("127.0.0.1:{}", free_port());
    let drop_json = dir.join("drop.json").display().to_string();
    let mut d = strings(&["--port", "net_af_packet0", "--listen", &addr, "--duration", "60", "--json", &drop_json, "--"]);
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b,framecnt=64", "--lcores=0@1,1@1"]));
    let mut drop = spawn("ip", &ns.exec(DROP, d));
    drop.wait_for_line("control on", Duration::from_secs(30));
    let json = dir.join("ladder.json").display().to_string();
    // drop's CPU is taken by a hog at nice -10 for the ladder, and its
    // socket's ring holds 64 frames: drop's lane is off the CPU for
    // milliseconds at a time while frames keep arriving, so the kernel
    // drops on the full ring whatever rate this machine's sender reaches
    // (a slow CI host's blast made 0.41 Mpps, which an unhindered drop
    // takes off its ring without a drop).
    let hog = Hogs::pinned(1, 1);
    let mut b = strings(&["--port", "net_af_packet0", "--peer", &addr, "--size", "64", "--rate", "300k,2M"]);
    b.extend(strings(&["--warmup", "0.3", "--duration", "1", "--json", &json, "--"]));
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
    let out = run_af_packet("ip", &ns.exec(BLAST, b), Duration::from_secs(120));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    std::mem::drop(hog);
    sigint(&drop);
    let drop_out = drop.finish(Duration::from_secs(30));
    assert_eq!(drop_out.status.code(), Some(EXIT_INTERRUPTED), "{}\n{}", drop_out.stdout, drop_out.stderr);

    let mut counted = 0;
    for s in read_json(std::path::Path::new(&json))["steps"].as_array().unwrap() {
        let (sent, lost) = assert_exact(s);
        let socket_drops = s["receiver"]["socket_drops"].as_u64().unwrap();
        assert_eq!(s["receiver"]["imissed"], 0, "DPDK 22.11's af_packet counts no imissed: {s}");
        // Every frame the sockets dropped is one of the window's lost frames.
        assert!(socket_drops <= lost, "socket drops {socket_drops} within sent - received ({lost} of {sent}): {s}");
        if socket_drops > 0 {
            counted += 1;
            assert_eq!(named_socket_drops(&s["verdict"]), Some(socket_drops), "the verdict names them: {}", s["verdict"]);
            // The sender may not reach 2 Mpps either: then both are named.
            assert!(s["limit"].as_str().unwrap().contains("receiver"), "the receiver is a limit: {s}");
        }
    }
    assert!(counted > 0, "a drop starved of its CPU overflows its ring: some step must see socket drops: {}", out.stdout);

    // drop's own record: the run's socket drops, named by its own verdict.
    let rec = read_json(std::path::Path::new(&drop_json));
    let port = &rec["summary"]["port"];
    let total = port["socket_drops"].as_u64().unwrap();
    assert!(total > 0, "{port}");
    assert_eq!(named_socket_drops(&rec["summary"]["verdict"]), Some(total), "{}", rec["summary"]["verdict"]);
    assert!(drop_out.stdout.contains(&format!("socket_drops {total}")), "{}", drop_out.stdout);
    // And each second's line says them where they moved.
    assert!(drop_out.stdout.lines().any(|l| l.starts_with('[') && l.contains(" socket_drops ")), "{}", drop_out.stdout);
}
