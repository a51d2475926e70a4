//! A ladder whose larger queue counts are beyond what the receiver takes:
//! those steps are left out with a line saying so, the feasible ones run,
//! and the record says which counts were dropped and why (drop --listen on
//! memif with one RX queue, blast --peer --queues 1,2).

mod common;
use common::*;
use std::time::Duration;

#[test]
fn counts_beyond_drops_rx_queues_are_left_out_and_the_rest_run() {
    let _g = heavy();
    let dir = scratch("ladder-fit");
    let sock = dir.join("memif.sock").display().to_string();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut d = strings(&["--port", "net_memif0", "--queues", "1", "--listen", &addr, "--duration", "120", "--"]);
    d.extend(eal_base());
    d.push(format!("--vdev=net_memif0,role=server,socket={sock},socket-abstract=no"));
    d.push("--lcores=0@1,1@1".into());
    let mut drop = spawn(DROP, &d);
    drop.wait_for_line("control on", Duration::from_secs(30));

    let json = dir.join("fit.json");
    let mut b = strings(&["--port", "net_memif0", "--peer", &addr, "--queues", "1,2", "--size", "64", "--rate", "100k"]);
    b.extend(strings(&["--warmup", "0.2", "--duration", "0.5", "--json", &json.display().to_string(), "--"]));
    b.extend(eal_base());
    b.push(format!("--vdev=net_memif0,role=client,socket={sock},socket-abstract=no"));
    b.push("--lcores=0@0,1@0,2@0".into());
    let out = run(BLAST, &b, Duration::from_secs(60));
    sigint(&drop);
    let drop_out = drop.finish(Duration::from_secs(30));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    assert!(drop_out.status.code() == Some(EXIT_INTERRUPTED), "drop: {:?}\n{}", drop_out.status, drop_out.stderr);
    let said = "queue count(s) 2 left out of the ladder: drop's port net_memif0 (net_memif) has at most 1 RX queues; the other steps run";
    assert!(out.stdout.contains(said) || out.stderr.contains(said), "no line naming the dropped count: {}\n{}", out.stdout, out.stderr);

    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["ladder"]["queues"], serde_json::json!([1]), "{}", v["ladder"]);
    let dropped = &v["ladder"]["dropped"];
    assert_eq!(
        dropped,
        &serde_json::json!([{"queues": [2], "port": "drop's port net_memif0 (net_memif)", "limit": 1, "what": "RX queues"}])
    );
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "only the 1-queue step ran: {steps:?}");
    assert_eq!(steps[0]["queues"], 1);
    assert!(steps[0]["received"]["packets"].as_u64().is_some_and(|r| r > 0), "the feasible step measured: {}", steps[0]);
}

fn null_blast(queues: &str, sizes: &str, json: &std::path::Path) -> Vec<String> {
    let mut b = strings(&["--port", "net_null0", "--queues", queues, "--size", sizes, "--warmup", "0.1", "--duration", "0.2"]);
    b.extend(["--json".to_string(), json.display().to_string(), "--".into()]);
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_null0", "--lcores=0@0,1@0"]));
    b
}

#[test]
fn counts_beyond_blasts_own_port_are_left_out_and_a_single_one_refused() {
    let _g = heavy();
    let dir = scratch("ladder-fit-null");
    let json = dir.join("null.json");
    // net_null takes at most 1024 queue pairs; 2000 is left out before
    // the lcores are counted, so two lcores run the 1-queue step.
    let out = run(BLAST, &null_blast("1,2000", "64", &json), Duration::from_secs(60));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    let said = "queue count(s) 2000 left out of the ladder: blast's port net_null0 (net_null) has at most 1024 queue pairs (RX and TX)";
    assert!(out.stdout.contains(said), "{}", out.stdout);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["ladder"]["dropped"][0]["queues"], serde_json::json!([2000]));
    assert_eq!(v["ladder"]["dropped"][0]["limit"], 1024);
    assert_eq!(v["steps"].as_array().unwrap().len(), 1);
    // One count beyond the limit (a ladder over sizes): refused as before.
    let out = run(BLAST, &null_blast("2000", "64,128", &dir.join("one.json")), Duration::from_secs(60));
    assert!(!out.status.success());
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(last.contains("is beyond the device's limit") && last.contains("lower --queues"), "{last}");
}
