//! Ctrl-C ends a run with its final report, for both binaries.

mod common;
use common::*;
use std::time::Duration;

fn interrupt_after(bin: &str, name: &str, wait_line: &str, extra: &[&str]) -> (Output, serde_json::Value) {
    let dir = scratch(name);
    let json = dir.join("out.json");
    let mut args = strings(extra);
    args.extend(["--json".into(), json.display().to_string(), "--".into()]);
    args.extend(eal_base());
    args.push("--vdev=net_null0".into());
    let mut p = spawn(bin, &args);
    p.wait_for_line(wait_line, Duration::from_secs(30));
    sigint(&p);
    let out = p.finish(Duration::from_secs(15));
    let v = read_json(&json);
    (out, v)
}

#[test]
fn ctrl_c_ends_blast_with_its_final_report() {
    let _g = heavy();
    let (out, v) = interrupt_after(BLAST, "int-blast", "[   1.0s] sent", &["--duration", "120"]);
    assert!(out.status.code() == Some(EXIT_INTERRUPTED), "{}", out.stderr);
    assert!(out.elapsed < Duration::from_secs(30));
    assert!(out.stdout.contains("--- blast summary"), "{}", out.stdout);
    assert!(out.stdout.contains("(interrupted)"));
    assert_eq!(v["summary"]["interrupted"], true);
    assert!(v["summary"]["sent"]["packets"].as_u64().unwrap() > 0);
}

#[test]
fn ctrl_c_ends_drop_with_its_final_report() {
    let _g = heavy();
    // net_null hands drop an endless stream of frames without probes.
    let (out, v) = interrupt_after(DROP, "int-drop", "[   1.0s] received", &[]);
    assert!(out.status.code() == Some(EXIT_INTERRUPTED), "{}", out.stderr);
    assert!(out.stdout.contains("--- drop summary"), "{}", out.stdout);
    assert_eq!(v["summary"]["interrupted"], true);
    let got = v["summary"]["received"]["packets"].as_u64().unwrap();
    assert!(got > 0);
    assert_eq!(v["summary"]["no_probe"].as_u64().unwrap(), got, "net_null's frames carry no probe");
}
