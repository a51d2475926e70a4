//! A group trial: three blasts, one drop, one measured window per step.
//! The senders reach drop's one port through a kernel bridge in a network
//! namespace this test creates (af_packet on veths), as N hosts reach one
//! receiver through a switch.

mod common;
use common::*;
use std::time::Duration;

const SENDERS: u16 = 3;

#[test]
fn three_senders_one_receiver_step_together() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("three_senders_one_receiver_step_together", |n| Netns::with_fan_in(n, SENDERS)) else { return };
    let dir = scratch("group");
    let addr = format!("127.0.0.1:{}", free_port());
    let drop_json = dir.join("drop.json");
    let mut d = strings(&["--port", "net_af_packet0", "--queues", "1", "--listen", &addr, "--duration", "120", "--json"]);
    d.push(drop_json.display().to_string());
    d.push("--".into());
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-r", "--lcores=0@1,1@1"]));
    let mut drop_proc = spawn("ip", &ns.exec(DROP, d));
    drop_proc.wait_for_line("control on", Duration::from_secs(30));

    let blasts: Vec<(Running, std::path::PathBuf)> = (0..SENDERS)
        .map(|i| {
            let json = dir.join(format!("blast{i}.json"));
            let mut b = strings(&[
                "--port",
                "net_af_packet0",
                "--peer",
                &addr,
                "--group",
                "trio",
                "--senders",
                &SENDERS.to_string(),
                "--queues",
                "1",
                "--size",
                "64,128",
                "--rate",
                "20k",
                "--flows",
                "2",
                "--duration",
                "1",
                "--warmup",
                "0.2",
                "--json",
            ]);
            b.push(json.display().to_string());
            b.push("--".into());
            b.extend(eal_base());
            let cpu = i % 2;
            b.extend([format!("--vdev=net_af_packet0,iface=bd-s{i}"), format!("--lcores=0@{cpu},1@{cpu}")]);
            (spawn("ip", &ns.exec(BLAST, b)), json)
        })
        .collect();
    let mut sent_by_member = vec![0u64; usize::from(SENDERS)];
    let mut group_windows: Vec<Vec<serde_json::Value>> = Vec::new();
    for (b, json) in blasts {
        let out = b.finish(Duration::from_secs(120));
        assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("of group trio (3 senders)"), "{}", out.stdout);
        let v = read_json(&json);
        let steps = v["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2);
        for s in steps {
            let g = &s["group"];
            assert_eq!((g["name"].as_str(), g["senders"].as_u64()), (Some("trio"), Some(3)), "{s}");
            let me = g["member"].as_u64().unwrap() as usize;
            let members = g["members"].as_array().unwrap();
            assert_eq!(members.len(), 3);
            // What this member says it sent is what drop lists for it.
            let own = g["own_sent"]["packets"].as_u64().unwrap();
            assert_eq!(members[me]["sent_packets"].as_u64().unwrap(), own, "{s}");
            let all: u64 = members.iter().map(|m| m["sent_packets"].as_u64().unwrap()).sum();
            assert_eq!(s["sent"]["packets"].as_u64().unwrap(), all, "the step's sent is the group's");
            let received = s["receiver"]["packets"].as_u64().unwrap();
            let lost = s["receiver"]["probe"]["lost_estimate"].as_u64().unwrap();
            // The gap estimate cannot see a loss after a stream's last
            // arrival (drop descheduled as the senders stop loses a whole
            // tail: 768 of 59136 short once, with 40% lost under load): it
            // must come within 1% when the exact account (checked below)
            // says little was lost.
            let exact_lost = s["lost"].as_u64().unwrap();
            assert!(received <= all, "received {received} vs {all} sent by all");
            let little = exact_lost * 100 <= all;
            assert!(!little || received + lost >= all - all / 100, "received {received} + lost {lost} vs {all} sent by all");
            sent_by_member[me] += own;
            // Each member's own accounting at drop: its trial frames, exact.
            for m in members {
                let (sent, rx, lost) = (m["sent_packets"].as_u64().unwrap(), m["received"].as_u64().unwrap(), m["lost"].as_u64().unwrap());
                assert_eq!(m["exact"], true, "{m}");
                assert_eq!(rx + lost, sent, "member {}: sent {sent}, received {rx}, lost {lost}", m["member"]);
                assert_eq!(m["trial"]["sent"].as_u64().unwrap(), sent, "its sequence numbers agree with its count: {m}");
            }
            let rx_sum: u64 = members.iter().map(|m| m["received"].as_u64().unwrap()).sum();
            let trial = &s["receiver"]["trial"];
            assert_eq!(rx_sum, trial["received"].as_u64().unwrap(), "the members' arrivals add up to the trial's");
            assert_eq!(rx_sum + s["receiver"]["other_frames"].as_u64().unwrap(), received, "the trial's and the others make drop's count");
            assert_eq!(s["lost"].as_u64().unwrap() + trial["received"].as_u64().unwrap(), all, "the step: received + lost = sent");
            assert!(s["accounting_error"].is_null(), "{s}");
        }
        group_windows.push(steps.iter().map(|s| s["receiver"]["window"].clone()).collect());
    }
    // One window per step, the same for every member.
    assert!(group_windows.windows(2).all(|w| w[0] == w[1]), "{group_windows:?}");
    assert!(sent_by_member.iter().all(|&n| n > 0), "{sent_by_member:?}");

    sigint(&drop_proc);
    let out = drop_proc.finish(Duration::from_secs(30));
    assert!(out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", out.stdout, out.stderr);
    // drop tracked each member's streams apart: 3 members x 2 flows.
    let v = read_json(&drop_json);
    let streams = v["summary"]["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 6, "{}", out.stdout);
    let ids: Vec<u64> = streams.iter().map(|s| s["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [0, 1, 1344, 1345, 2688, 2689], "each member's streams from its own share");
}

/// drop's af_packet port and control address in a fan-in namespace.
fn group_drop(ns: &Netns, addr: &str) -> Running {
    let mut d = strings(&["--port", "net_af_packet0", "--queues", "1", "--listen", addr, "--duration", "300", "--"]);
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-r", "--lcores=0@1,1@1"]));
    let mut p = spawn("ip", &ns.exec(DROP, d));
    p.wait_for_line("control on", Duration::from_secs(30));
    p
}

fn group_blast(ns: &Netns, addr: &str, group: &str, i: u16, sizes: &str, duration: &str) -> Running {
    let mut b = strings(&[
        "--port",
        "net_af_packet0",
        "--peer",
        addr,
        "--group",
        group,
        "--senders",
        "2",
        "--queues",
        "1",
        "--size",
        sizes,
        "--rate",
        "10k",
        "--duration",
        duration,
        "--warmup",
        "0.1",
    ]);
    b.push("--".into());
    b.extend(eal_base());
    b.extend([format!("--vdev=net_af_packet0,iface=bd-s{i}"), format!("--lcores=0@{i},1@{i}")]);
    spawn("ip", &ns.exec(BLAST, b))
}

#[test]
fn a_member_killed_mid_step_ends_it_for_the_group_and_drop_serves_the_next() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("a_member_killed_mid_step_ends_it", |n| Netns::with_fan_in(n, 2)) else { return };
    let addr = format!("127.0.0.1:{}", free_port());
    let mut drop_proc = group_drop(&ns, &addr);
    for round in 0..3 {
        let group = format!("pair{round}");
        let survivor = group_blast(&ns, &addr, &group, 0, "64", "4");
        let mut victim = group_blast(&ns, &addr, &group, 1, "64", "4");
        victim.wait_for_line("of group", Duration::from_secs(30));
        std::thread::sleep(Duration::from_secs(2));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(victim.pid()), nix::sys::signal::Signal::SIGKILL).unwrap();
        let _ = victim.finish(Duration::from_secs(10));
        let out = survivor.finish(Duration::from_secs(60));
        assert!(!out.status.success(), "round {round}: the survivor's step cannot stand: {}", out.stdout);
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(said.contains("left the group") && said.contains("the step ends for every member"), "round {round}: {said}");
        assert!(!said.contains("panicked"), "{said}");
    }
    // The next group: a member with another plan is refused by name, and
    // the group goes on when one with the same plan comes.
    let a = group_blast(&ns, &addr, "odd", 0, "64", "1");
    let mut a = a;
    a.wait_for_line("of group odd", Duration::from_secs(30));
    let wrong = group_blast(&ns, &addr, "odd", 1, "128", "1").finish(Duration::from_secs(60));
    assert!(!wrong.status.success(), "{}", wrong.stdout);
    assert!(
        wrong.stderr.contains("this member's plan differs: step 1: frame size 128 B, the group's is 64 B"),
        "{}\n{}",
        wrong.stdout,
        wrong.stderr
    );
    let right = group_blast(&ns, &addr, "odd", 1, "64", "1");
    for o in [a.finish(Duration::from_secs(60)), right.finish(Duration::from_secs(60))] {
        assert!(o.status.success(), "{}\n{}", o.stdout, o.stderr);
        assert!(o.stdout.contains("group odd (2 senders"), "{}", o.stdout);
    }
    assert!(drop_proc.try_status().is_none(), "drop is still serving");
    sigint(&drop_proc);
    let out = drop_proc.finish(Duration::from_secs(30));
    assert!(out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", out.stdout, out.stderr);
}
