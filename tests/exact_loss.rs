//! Exact figures under real loss and load: the kernel path of a veth pair
//! losing a quarter of what is sent, memif ladders that change queue counts,
//! reflected probes, all with CPU hogs beside them (a shared host). Every
//! step's `lost` must be `sent - received` of the trial's own frames, and a
//! latency tail must say whether a stalled lane explains it.

mod common;
use common::*;
use std::time::Duration;

#[test]
fn af_packet_above_what_the_machine_carries_counts_loss_exactly_under_load() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("af_packet_above_what_the_machine_carries", Netns::with_pair) else { return };
    let _hogs = Hogs::start(2);
    let dir = scratch("exact-afp");
    let mut lossy_steps = 0;
    for round in 0..2 {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut d = strings(&["--port", "net_af_packet0", "--listen", &addr, "--duration", "120", "--"]);
        d.extend(eal_base());
        d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b", "--lcores=0@1,1@1"]));
        let mut drop = spawn("ip", &ns.exec(DROP, d));
        drop.wait_for_line("control on", Duration::from_secs(30));
        let json = dir.join(format!("l{round}.json")).display().to_string();
        // The warm-up loses frames too: its gaps must not be counted in the window.
        let mut b = strings(&[
            "--port",
            "net_af_packet0",
            "--peer",
            &addr,
            "--size",
            "64,512",
            "--flows",
            "4",
            "--rate",
            "300k,2M",
            "--warmup",
            "0.5",
            "--duration",
            "1",
            "--json",
            &json,
            "--",
        ]);
        b.extend(eal_base());
        b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
        let out = run_af_packet("ip", &ns.exec(BLAST, b), Duration::from_secs(120));
        assert!(out.status.success(), "round {round}: {}\n{}", out.stdout, out.stderr);
        for s in read_json(&dir.join(format!("l{round}.json")))["steps"].as_array().unwrap() {
            let (_, lost) = assert_exact(s);
            lossy_steps += usize::from(lost > 0);
            // The stalls the hogs caused are recorded on both ends.
            assert!(s["stalls"]["sender"]["count"].is_u64() && s["stalls"]["receiver"]["count"].is_u64(), "{s}");
            assert!(!s["limit"].as_str().unwrap().starts_with("path"), "a lossy kernel path is not a broken one: {s}");
        }
        assert!(out.stdout.contains("lost, exact)"), "{}", out.stdout);
        sigint(&drop);
        let _ = drop.finish(Duration::from_secs(30));
    }
    assert!(lossy_steps > 0, "2 Mpps over a veth beside two CPU hogs loses frames: the test must see real loss");
}

#[test]
fn memif_ladders_that_change_queue_counts_under_load_deliver_every_frame() {
    let _g = heavy();
    let _hogs = Hogs::start(2);
    let dir = scratch("exact-memif");
    for round in 0..3 {
        let (drop, addr, sock) = listening_drop(&dir, &format!("m{round}"), 4, &[]);
        let json = dir.join(format!("m{round}.json")).display().to_string();
        let args = [
            "--peer",
            &addr,
            "--queues",
            "1,2,4",
            "--size",
            "64,512",
            "--flows",
            "8",
            "--rate",
            "100k",
            "--warmup",
            "0.2",
            "--duration",
            "0.5",
            "--json",
            &json,
        ];
        let out = run(BLAST, &memif_blast_args(&sock, 4, &args), Duration::from_secs(120));
        assert!(out.status.success(), "round {round}: {}\n{}", out.stdout, out.stderr);
        let v = read_json(&dir.join(format!("m{round}.json")));
        let steps = v["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 6);
        for s in steps {
            let (sent, lost) = assert_exact(s);
            // memif loses nothing: its queue pushes back instead.
            assert_eq!(lost, 0, "round {round}: every frame sent arrives over memif: {s}");
            assert!(sent > 0, "{s}");
            assert!(!s["limit"].as_str().unwrap().contains("path"), "round {round}: the rings were joined: {s}");
        }
        sigint(&drop);
        let _ = drop.finish(Duration::from_secs(30));
    }
}

#[test]
fn a_reflected_tail_on_a_loaded_host_says_whether_a_stall_caused_it() {
    let _g = heavy();
    let _hogs = Hogs::start(2);
    let dir = scratch("exact-reflect");
    let (drop, addr, sock) = listening_drop(&dir, "r", 1, &["--reflect"]);
    let json = dir.join("r.json").display().to_string();
    let args = ["--peer", &addr, "--rate", "50k,200k", "--shape", "even,burst:10", "--reflect", "--duration", "1", "--json", &json];
    let out = run(BLAST, &memif_blast_args(&sock, 1, &args), Duration::from_secs(120));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v = read_json(&dir.join("r.json"));
    for s in v["steps"].as_array().unwrap() {
        assert_exact(s);
        let l = &s["latency"];
        assert_eq!(l["count"], s["reflected"], "{s}");
        assert!(s["reflected_stale"].is_u64(), "{s}");
        if l["max_us"].as_f64().unwrap() >= 1000.0 {
            let cause = s["tail_cause"].as_str().unwrap_or_else(|| panic!("a tail of a millisecond or more names its cause: {s}"));
            // Three honest readings: the stall's, the path's own, or a stall
            // that fell where no probe was in flight (longer than the tail).
            assert!(
                cause.contains("the host's") || cause.contains("the path's own") || cause.contains("yet no probe waited that long"),
                "{cause}"
            );
            if cause.contains("the host's") {
                assert!(s["verdict"]["limits"][0]["evidence"].as_str().unwrap().contains(cause), "the verdict says so: {s}");
            }
        } else {
            assert!(s["tail_cause"].is_null(), "{s}");
        }
    }
    if v["steps"].as_array().unwrap().iter().any(|s| s["tail_cause"].as_str().is_some_and(|c| c.contains("the host's"))) {
        assert!(out.stdout.contains("(*: host stall)"), "the round-trip table marks it: {}", out.stdout);
    }
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
}
