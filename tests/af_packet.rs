//! `blast` to `drop` over net_af_packet on a veth pair, in a network
//! namespace this test creates: a real kernel path between the two.

mod common;
use common::*;
use std::time::Duration;

#[test]
fn blast_to_drop_over_af_packet_on_veth() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("blast_to_drop_over_af_packet_on_veth", Netns::with_pair) else { return };
    let dir = scratch("afp");
    let drop_json = dir.join("drop.json");
    let count = 20_000u64;

    let mut d = strings(&["--port", "net_af_packet0", "--count", &count.to_string(), "--duration", "30", "--json"]);
    d.push(drop_json.display().to_string());
    d.push("--".into());
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b", "--lcores=0@1,1@1"]));
    let mut drop_proc = spawn("ip", &ns.exec(DROP, d));
    drop_proc.wait_for_line("drop: port", Duration::from_secs(30));

    let mut b =
        strings(&["--port", "net_af_packet0", "--count", &count.to_string(), "--rate", "50k", "--flows", "2", "--size", "256", "--"]);
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
    let blast_out = run_af_packet("ip", &ns.exec(BLAST, b), Duration::from_secs(60));
    assert!(blast_out.status.success(), "blast: {}\n{}", blast_out.stdout, blast_out.stderr);
    let drop_out = drop_proc.finish(Duration::from_secs(40));
    assert!(drop_out.status.success(), "drop: {}\n{}", drop_out.stdout, drop_out.stderr);

    let v = read_json(&drop_json);
    let s = &v["summary"];
    assert_eq!(v["environment"]["port"]["driver"], "net_af_packet");
    // The kernel path may drop a burst when a loaded machine deschedules
    // a side (the pacer then catches up in a burst the veth's queue cannot
    // hold); whatever it drops, the sequence accounting must name exactly.
    let got = s["received"]["packets"].as_u64().unwrap();
    let lost = s["probe"]["lost_estimate"].as_u64().unwrap();
    // (a loss after each stream's last arrival has no later frame to reveal it)
    assert!(got + lost <= count && got + lost >= count - count / 100, "received {got} + lost {lost} vs {count} sent: {}", drop_out.stdout);
    assert!(lost * 100 <= count, "at 50 kpps little should be lost: {lost} of {count}: {}", drop_out.stdout);
    let probed: u64 = s["streams"].as_array().unwrap().iter().map(|x| x["received"].as_u64().unwrap()).sum();
    assert_eq!(probed + s["no_probe"].as_u64().unwrap(), got);
    assert_eq!(probed, got, "every frame that arrived parsed as blast's");
    assert_eq!(s["streams"].as_array().unwrap().len(), 2);
    assert_eq!(s["probe"]["duplicates"], 0);
    assert_eq!(s["port"]["ipackets"].as_u64().unwrap(), got, "the port's counter agrees with the lcores'");
}
