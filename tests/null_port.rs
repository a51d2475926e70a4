//! `blast` on net_null: the fastest device, so it measures the sender alone.

mod common;
use common::*;
use std::time::Duration;

#[test]
fn blast_on_net_null_reports_a_rate_and_its_configuration() {
    let _g = heavy();
    let dir = scratch("null");
    let json = dir.join("blast.json");
    let mut args = strings(&["--port", "net_null0", "--duration", "1.5", "--size", "128", "--flows", "3", "--json"]);
    args.push(json.display().to_string());
    args.push("--".into());
    args.extend(eal_base());
    args.push("--vdev=net_null0".into());
    let out = run(BLAST, &args, Duration::from_secs(30));
    assert!(out.status.success(), "blast failed: {}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("sender-side"), "{}", out.stdout);
    assert!(out.stdout.contains("[   1.0s] sent"), "a live line each second: {}", out.stdout);

    let v = read_json(&json);
    assert_eq!(v["tool"], "blast");
    assert_eq!(v["mode"], "single");
    assert_eq!(v["config"]["size"], serde_json::json!([128]));
    assert_eq!(v["config"]["queues"], serde_json::json!([1]));
    assert_eq!(v["config"]["duration"], 1.5);
    assert_eq!(v["flows"], 3);
    assert_eq!(v["environment"]["port"]["driver"], "net_null");
    assert_eq!(v["environment"]["lcores"].as_array().unwrap().len(), 1);
    let s = &v["summary"];
    assert_eq!(s["side"], "sender");
    let sent = s["sent"]["packets"].as_u64().unwrap();
    assert!(sent > 0);
    assert!(s["sent"]["mpps"].as_f64().unwrap() > 0.0);
    assert_eq!(s["sent"]["bytes"].as_u64().unwrap(), sent * 128);
    assert!(s["cycles_per_packet"].as_f64().unwrap() > 0.0);
    assert_eq!(s["port"]["opackets"].as_u64().unwrap(), sent, "net_null counts what tx_burst took");
    // Three flows on one queue, sent round robin.
    let streams = s["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 3);
    let per: Vec<u64> = streams.iter().map(|x| x["sent"].as_u64().unwrap()).collect();
    assert_eq!(per.iter().sum::<u64>(), sent);
    assert!(per.iter().max().unwrap() - per.iter().min().unwrap() <= 1);
    let ports: Vec<u64> = streams.iter().map(|x| x["src_port"].as_u64().unwrap()).collect();
    assert_eq!(ports, [1024, 1025, 1026]);
}

#[test]
fn blast_count_mode_sends_exactly_the_count_on_two_queues() {
    let _g = heavy();
    let dir = scratch("null-count");
    let json = dir.join("blast.json");
    let mut args = strings(&["--port", "0", "--queues", "2", "--count", "100001", "--json"]);
    args.push(json.display().to_string());
    args.push("--".into());
    args.extend(eal_base());
    args.push("--vdev=net_null0".into());
    let out = run(BLAST, &args, Duration::from_secs(30));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    assert_eq!(v["summary"]["sent"]["packets"], 100001);
    let q: Vec<u64> = v["summary"]["queues"].as_array().unwrap().iter().map(|q| q["sent"]["packets"].as_u64().unwrap()).collect();
    assert_eq!(q, [50001, 50000]);
    assert_eq!(v["environment"]["lcores"].as_array().unwrap().len(), 2);
}
