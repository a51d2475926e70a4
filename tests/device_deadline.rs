//! A device call that does not return ends the run in bounded time with
//! one line naming the device and the call (exit 3), Ctrl-C answers while
//! it waits (exit 130, a record that says the run never started), and a
//! blast that asks a drop stuck so hears what drop is doing. The stall is
//! the test-only hook BLASTDROP_FAULT_STALL (dpdk::deadline), on net_null.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// `bin` with the stall hook on `call`, through env(1) (it execs: the pid
/// is the tool's, for signals).
fn stalled(bin: &str, call: &str, args: &[String]) -> Running {
    let mut a = vec![format!("BLASTDROP_FAULT_STALL={call}"), bin.to_string()];
    a.extend_from_slice(args);
    spawn("/usr/bin/env", &a)
}

fn null_args(tool_flags: &[&str], json: &std::path::Path, vdev: &str) -> Vec<String> {
    let mut a = strings(tool_flags);
    a.extend(["--json".into(), json.display().to_string(), "--".into()]);
    a.extend(eal_base());
    a.extend(["-l".into(), "0-1".into(), format!("--vdev={vdev}")]);
    a
}

/// The run's one line about the stall, and that nothing panicked.
fn stall_line<'a>(out: &'a Output, tool: &str) -> &'a str {
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let prefix = format!("{tool}: error: device did not answer: ");
    let lines: Vec<&str> = out.our_stderr().into_iter().filter(|l| l.starts_with(&prefix)).collect();
    assert_eq!(lines.len(), 1, "one line naming the stall: {}", out.stderr);
    lines[0]
}

#[test]
fn a_device_call_that_does_not_return_ends_the_run_within_its_deadline() {
    let _g = heavy();
    let dir = scratch("dd-stall");
    // The calls a virtio device behind vfio-pci waits forever in, one per round.
    for (round, call) in ["rte_eth_dev_start", "rte_eth_dev_configure", "rte_eth_promiscuous_enable"].iter().enumerate() {
        let json = dir.join(format!("{round}.json"));
        let p = stalled(DROP, call, &null_args(&["--device-timeout", "1"], &json, "net_null0"));
        let out = p.finish(Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(3), "{call}: {}", out.stderr);
        assert!(out.elapsed < Duration::from_secs(10), "{call}: ended after {:?}", out.elapsed);
        let line = stall_line(&out, "drop");
        assert!(line.contains(&format!("{call} on net_null0 did not return within 1 s")), "{line}");
        assert!(line.contains("iommu_platform") && line.contains("docs/ec2.md"), "the likely cause: {line}");
        let v = read_json(&json);
        assert_matches_schema(&v, "not-started");
        assert_eq!(v["started"], false);
        assert_eq!(v["exit_code"], 3);
        assert_eq!(v["device_call"]["call"], *call);
        assert_eq!(v["device_call"]["device"], "net_null0");
        assert_eq!(v["device_call"]["interrupted"], false);
    }
    // blast's port goes the same way (its link read here).
    let json = dir.join("blast.json");
    let out = stalled(BLAST, "rte_eth_link_get_nowait", &null_args(&["--device-timeout", "1", "--duration", "5"], &json, "net_null1"))
        .finish(Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    assert!(stall_line(&out, "blast").contains("rte_eth_link_get_nowait on net_null1 did not return within 1 s"));
    assert_eq!(read_json(&json)["device_call"]["call"], "rte_eth_link_get_nowait");
}

#[test]
fn ctrl_c_while_a_device_call_waits_ends_the_run_with_a_record_that_says_it_never_started() {
    let _g = heavy();
    let dir = scratch("dd-sigint");
    for (bin, tool, vdev) in [(DROP, "drop", "net_null0"), (BLAST, "blast", "net_null1")] {
        let json = dir.join(format!("{tool}.json"));
        let mut p = stalled(bin, "rte_eth_dev_start", &null_args(&["--device-timeout", "60"], &json, vdev));
        p.wait_for_line(&format!("{tool}: memory:"), Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(500));
        let signalled = Instant::now();
        sigint(&p);
        let out = p.finish(Duration::from_secs(15));
        assert_eq!(out.status.code(), Some(EXIT_INTERRUPTED), "{tool}: {}", out.stderr);
        assert!(signalled.elapsed() < Duration::from_secs(5), "{tool} answered Ctrl-C after {:?}", signalled.elapsed());
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(
            out.stderr.contains(&format!("{tool}: error: interrupted while rte_eth_dev_start on {vdev} had not returned")),
            "{}",
            out.stderr
        );
        let v = read_json(&json);
        assert_matches_schema(&v, "not-started");
        assert_eq!(v["started"], false, "{tool}");
        assert_eq!(v["exit_code"], 130);
        assert_eq!(v["device_call"]["interrupted"], true);
        assert_eq!(v["device_call"]["call"], "rte_eth_dev_start");
    }
}

#[test]
fn blast_says_what_a_drop_stuck_in_start_up_is_doing() {
    let _g = heavy();
    let dir = scratch("dd-peer");
    let addr = format!("127.0.0.1:{}", free_port());
    let json = dir.join("drop.json");
    let mut d = stalled(DROP, "rte_eth_dev_start", &null_args(&["--device-timeout", "60", "--listen", &addr], &json, "net_null0"));
    d.wait_for_line("drop: memory:", Duration::from_secs(30));
    let mut b = strings(&["--peer", &addr, "--control-timeout", "2", "--duration", "1", "--"]);
    b.extend(eal_base());
    b.extend(strings(&["-l", "0-1", "--vdev=net_null1"]));
    let out = run(BLAST, &b, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert!(out.elapsed < Duration::from_secs(15), "blast took {:?}", out.elapsed);
    let line =
        out.our_stderr().into_iter().find(|l| l.starts_with("blast: error: ")).unwrap_or_else(|| panic!("{}", out.stderr)).to_owned();
    assert!(line.starts_with("blast: error: drop is starting: rte_eth_dev_start on net_null0 for "), "{line}");
    assert!(line.ends_with("(still starting after 2s: raise --control-timeout to wait longer)"), "{line}");
    sigint(&d);
    let out = d.finish(Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(EXIT_INTERRUPTED), "{}", out.stderr);
    assert_eq!(read_json(&json)["started"], false);
}
