//! A signal delivered twice, as `timeout` delivers it (to the child, then
//! to its process group) or a shell's Ctrl-C with a group: the run still
//! ends with its summary and a valid JSON record, and exits 130
//! (interrupted), never 0 and never killed. Looped a few times: the second
//! signal races the first one's handling.

mod common;
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::Duration;

fn drop_args(json: &std::path::Path) -> Vec<String> {
    let mut d = strings(&["--port", "net_null0", "--json", &json.display().to_string(), "--"]);
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_null0", "--lcores=0@0,1@1"]));
    d
}

/// The record is there, whole, and says the run was interrupted.
fn assert_interrupted(out: &Output, json: &std::path::Path, summary_line: &str, round: usize) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(EXIT_INTERRUPTED), "round {round}: {:?}\n{}\n{}", out.status, out.stdout, out.stderr);
    assert!(out.stdout.contains(summary_line), "round {round}: no summary: {}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("interrupted"), "round {round}: {}", out.stderr);
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| panic!("round {round}: no record ({e}): {}", out.stderr));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("round {round}: the record is not whole JSON ({e})"))
}

/// SIGINT to the process, to its group, and once more, 20 ms apart: the
/// third is inside the grace period, so it is waited out too.
fn signal_pid_and_group(pid: i32) {
    for target in [pid, -pid, pid] {
        let _ = kill(Pid::from_raw(target), Signal::SIGINT);
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn drop_under_timeout_keeps_its_record_and_exits_130() {
    let _g = heavy();
    let dir = scratch("sig-timeout");
    for round in 0..3 {
        let json = dir.join(format!("d{round}.json"));
        let mut args = strings(&["--preserve-status", "-s", "INT", "3", DROP]);
        args.extend(drop_args(&json));
        let out = run("timeout", &args, Duration::from_secs(40));
        let v = assert_interrupted(&out, &json, "--- drop summary", round);
        assert_eq!(v["summary"]["interrupted"], true, "round {round}");
    }
}

/// SIGHUP (a terminal or an ssh session gone) ends drop as SIGINT does,
/// with its record and its port closed, twice.
#[test]
fn drop_hung_up_keeps_its_record_and_exits_130() {
    let _g = heavy();
    let dir = scratch("sig-hup");
    for round in 0..2 {
        let json = dir.join(format!("d{round}.json"));
        let mut p = spawn(DROP, &drop_args(&json));
        p.wait_for_line("[   1.0s] received", Duration::from_secs(30));
        let _ = kill(Pid::from_raw(p.pid()), Signal::SIGHUP);
        let out = p.finish(Duration::from_secs(30));
        let v = assert_interrupted(&out, &json, "--- drop summary", round);
        assert_eq!(v["summary"]["interrupted"], true, "round {round}");
    }
}

#[test]
fn drop_signalled_twice_through_its_group_keeps_its_record() {
    let _g = heavy();
    let dir = scratch("sig-drop");
    for round in 0..2 {
        let json = dir.join(format!("d{round}.json"));
        // setsid: drop leads its own process group, as a child of `timeout` is in one.
        let mut args = vec![DROP.to_string()];
        args.extend(drop_args(&json));
        let mut p = spawn("setsid", &args);
        p.wait_for_line("[   1.0s] received", Duration::from_secs(30));
        signal_pid_and_group(p.pid());
        let out = p.finish(Duration::from_secs(30));
        assert_interrupted(&out, &json, "--- drop summary", round);
    }
}

#[test]
fn a_ladder_signalled_twice_keeps_its_record_and_exits_130() {
    let _g = heavy();
    let dir = scratch("sig-ladder");
    for round in 0..2 {
        let json = dir.join(format!("b{round}.json"));
        let mut args = strings(&[BLAST, "--port", "net_null0", "--size", "64,128,256", "--warmup", "0.3", "--duration", "1"]);
        args.extend(strings(&["--json", &json.display().to_string(), "--"]));
        args.extend(eal_base());
        args.extend(strings(&["--vdev=net_null0", "--lcores=0@0,1@1"]));
        let mut p = spawn("setsid", &args);
        p.wait_for_line("  step 1 (", Duration::from_secs(30));
        signal_pid_and_group(p.pid());
        let out = p.finish(Duration::from_secs(30));
        let v = assert_interrupted(&out, &json, "step run queues", round);
        assert_eq!(v["interrupted"], true, "round {round}: {v}");
        assert!(!v["steps"].as_array().unwrap().is_empty(), "round {round}: the steps before the signal are kept");
    }
}
