//! `blast --cross-check` over net_memif against drop: every step measured
//! a second time at once with the C lanes (blast-ref's send loop linked
//! into blast), drop counting both windows exactly; blast's loop slowed on
//! purpose (the tests' knob) named the limit, in the record, the verdict,
//! the table and the report's "Read first"; a drop killed mid-ladder; and
//! what the C lanes cannot send, refused. The net_null ladders are in
//! null_port.rs (they run on arm64 and every DPDK line too).

mod common;
use common::*;
use std::time::Duration;

/// A cross-checked ladder against a listening drop on memif: blast's
/// output and its record. `env`: the tests' knob, if any.
fn cross_checked(dir: &std::path::Path, queues: u16, sizes: &str, env: Option<&str>) -> (Output, serde_json::Value, Running) {
    let (drop, addr, sock) = listening_drop(dir, "cc", queues, &[]);
    let json = dir.join("l.json");
    let q: Vec<String> = (1..=queues).map(|q| q.to_string()).collect();
    let args = memif_blast_args(
        &sock,
        queues,
        &[
            "--peer",
            &addr,
            "--queues",
            &q.join(","),
            "--size",
            sizes,
            "--warmup",
            "0.3",
            "--duration",
            "1",
            "--cross-check",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let out = match env {
        Some(e) => {
            let mut a = vec![e.to_string(), BLAST.to_string()];
            a.extend(args);
            run("env", &a, Duration::from_secs(180))
        }
        None => run(BLAST, &args, Duration::from_secs(180)),
    };
    assert!(out.status.success(), "blast failed: {}\n{}", out.stdout, out.stderr);
    (out, read_json(&json), drop)
}

#[test]
fn a_cross_checked_memif_ladder_has_drop_count_both_windows_exactly() {
    let _g = heavy();
    let dir = scratch("cross-check-memif");
    let (out, v, drop) = cross_checked(&dir, 2, "64,1500", None);
    sigint(&drop);
    drop.finish(Duration::from_secs(30));
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "{}", out.stdout);
    let mut ratios = 0;
    for s in steps {
        assert_exact(s);
        let x = &s["cross_check"];
        assert_eq!(x["basis"], "receiver", "{x}");
        // drop's exact account of the C lanes' own frames: memif loses none.
        let (sent, lost) = assert_exact(&x["c_lanes"]);
        assert_eq!(lost, 0, "memif loses nothing: {x}");
        assert!(sent > 0);
        let ratio = x["ratio"].as_f64();
        if let Some(r) = ratio {
            let expect = s["received"]["mpps"].as_f64().unwrap() / x["c_lanes"]["received"]["mpps"].as_f64().unwrap();
            assert!((r - (expect * 100.0).round() / 100.0).abs() < 1e-9, "{x}");
            ratios += 1;
        } else {
            // Two lanes share blast's one CPU here: where their stalls could
            // move the finding, the host, not a loop, set the figures.
            assert!(x["sentence"].as_str().unwrap().contains("stood still"), "{x}");
        }
    }
    // A busy machine can stand every window still enough to withhold every
    // ratio (each unknown is checked above to be the stalls'): how many were
    // given is said, and the slowed-on-purpose test below needs its ratio.
    eprintln!("{ratios} of {} steps judged; the rest unknown for their stalls", steps.len());
    assert!(out.stdout.contains("blast: step 1: cross-check: "), "{}", out.stdout);
    assert_matches_schema(&v, "blast-ladder");
}

#[test]
fn blasts_loop_slowed_on_purpose_is_named_the_limit_everywhere() {
    let _g = heavy();
    let dir = scratch("cross-check-slowed");
    // 20 us a frame: blast's own lanes send at most 50 kfps; the C lanes
    // are not slowed.
    let (out, v, drop) = cross_checked(&dir, 1, "64", Some("BLASTDROP_TEST_SLOW_TX=20000"));
    sigint(&drop);
    drop.finish(Duration::from_secs(30));
    assert!(out.stderr.contains("BLASTDROP_TEST_SLOW_TX=20000: blast's own send lanes spin"), "the knob is said: {}", out.stderr);
    let s = &v["steps"][0];
    let x = &s["cross_check"];
    assert_eq!(x["finding"], "blast", "{x}");
    assert!(x["ratio"].as_f64().unwrap() < 0.5, "{x}");
    let sentence = x["sentence"].as_str().unwrap();
    assert!(sentence.starts_with("the C loop carried ") && sentence.contains("x more (receiver-side"), "{sentence}");
    assert!(sentence.ends_with("): blast's loop is the limit at this step"), "{sentence}");
    // The step's own verdict says so: its limit is the sender, and which loop.
    assert_eq!(s["limit"], "sender", "{s}");
    let evidence = s["verdict"]["limits"][0]["evidence"].as_str().unwrap();
    assert!(evidence.ends_with(&format!("cross-check: {sentence}")), "{evidence}");
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("   1   1      1     64") && l.ends_with("blast's loop"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(row.contains(&format!("{:.2}", x["ratio"].as_f64().unwrap())), "{row}");
    // The report's "Read first" names the step.
    let html = dir.join("r.html");
    let r =
        run(BLAST, &strings(&["report", dir.join("l.json").to_str().unwrap(), "--html", html.to_str().unwrap()]), Duration::from_secs(60));
    assert!(r.status.success(), "{}\n{}", r.stdout, r.stderr);
    let h = std::fs::read_to_string(&html).unwrap();
    let at = h.find("<h2>Read first</h2>").expect("a Read first section");
    let read_first = &h[at..at + h[at..].find("</ul>").unwrap()];
    assert!(read_first.contains("data-kind=\"blast-loop-limit\""), "{read_first}");
    assert!(
        read_first.contains("blast&#39;s own send loop was the limit") || read_first.contains("blast's own send loop was the limit"),
        "{read_first}"
    );
    assert!(h.contains("Cross-check: each step again at once"), "the cross-check table");
}

/// drop killed with -9 while the C lanes run (their warm-up, then their
/// window), twice each: blast ends with a clear error, the C lanes' fault
/// on the vanished ring is caught, and the step says its cross-check is
/// unknown; no step carries a ratio from a window that did not finish.
#[test]
fn a_drop_killed_under_the_c_lanes_leaves_no_false_ratio() {
    let _g = heavy();
    for (round, after_ms) in [(1, 150u64), (2, 700), (3, 150), (4, 700)] {
        let dir = scratch(&format!("cross-check-killed-{round}"));
        let (mut drop, addr, sock) = listening_drop(&dir, "k", 1, &[]);
        let json = dir.join("l.json");
        let args = memif_blast_args(
            &sock,
            1,
            &["--peer", &addr, "--size", "64,128", "--warmup", "0.3", "--duration", "1", "--cross-check", "--json", json.to_str().unwrap()],
        );
        let mut blast = spawn(BLAST, &args);
        blast.wait_for_line("step 1: cross-check: the same step again with the C lanes", Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(after_ms));
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(drop.pid()), nix::sys::signal::Signal::SIGKILL);
        let _ = drop.try_status();
        let out = blast.finish(Duration::from_secs(120));
        assert!(!out.status.success(), "round {round}: blast went on without its receiver: {}", out.stdout);
        assert!(out.stderr.contains("ladder stopped after 1 step(s)"), "round {round}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "round {round}: {}", out.stderr);
        let v = read_json(&json);
        let steps = v["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1, "round {round}: {}", out.stdout);
        assert_exact(&steps[0]);
        let x = &steps[0]["cross_check"];
        assert_eq!(x["finding"], "unknown", "round {round}: {x}");
        assert!(x["ratio"].is_null(), "{x}");
        assert!(x["sentence"].as_str().unwrap().starts_with("unknown: the C lanes' window failed: "), "round {round}: {x}");
    }
}

/// The host takes the lanes' CPU (two busy loops pinned beside their
/// lcore, at a higher priority), twice: the C lanes count their stalls as
/// blast's do, and a finding the stalls could have moved is unknown; one
/// they could not says it stands despite them.
#[test]
fn a_host_that_takes_the_cpu_makes_the_finding_unknown_not_false() {
    let _g = heavy();
    if !is_root() {
        return skip_or_fail("a_host_that_takes_the_cpu_makes_the_finding_unknown_not_false", "nice -10 needs root");
    }
    for round in 1..=2 {
        let dir = scratch(&format!("cross-check-hogs-{round}"));
        let json = dir.join("l.json");
        let mut args = strings(&["--port", "net_null0", "--queues", "1", "--size", "64,1500", "--warmup", "0.1", "--duration", "0.5"]);
        args.extend(strings(&["--cross-check", "--json", json.to_str().unwrap(), "--"]));
        args.extend(eal_base());
        args.extend(strings(&["--vdev=net_null0", "--lcores=0@0,1@1"]));
        let hogs = Hogs::pinned(2, 1);
        let out = run(BLAST, &args, Duration::from_secs(120));
        drop(hogs);
        assert!(out.status.success(), "round {round}: {}\n{}", out.stdout, out.stderr);
        let v = read_json(&json);
        let mut c_stalled = 0;
        for s in v["steps"].as_array().unwrap() {
            let x = &s["cross_check"];
            let c = &x["c_lanes"];
            c_stalled += c["stalls"]["sender"]["count"].as_u64().unwrap();
            let stalled = |r: &serde_json::Value| r["stalls"]["sender"]["total_ms"].as_f64().unwrap() > 0.0;
            let sentence = x["sentence"].as_str().unwrap();
            if x["finding"] == "unknown" {
                assert!(sentence.contains("stood still"), "round {round}: unknown for another reason: {x}");
            } else if stalled(s) || stalled(c) {
                // Judged despite the stalls: only where they could not move it, and said.
                assert!(sentence.contains("not enough to change the finding"), "round {round}: {x}");
            }
        }
        assert!(c_stalled > 0, "round {round}: the C lanes count the host's stalls as blast's lanes do: {}", out.stdout);
    }
}

#[test]
fn what_the_c_lanes_cannot_send_is_refused_in_one_line() {
    for (extra, named) in [
        (vec!["--reflect"], "--reflect"),
        (vec!["--size-mix", "imix"], "--size-mix"),
        (vec!["--find-knee", "--peer", "127.0.0.1:9"], "--find-knee"),
        (vec!["--socket", "--dst-ip", "127.0.0.1"], "--socket"),
    ] {
        let mut a = strings(&["--cross-check"]);
        a.extend(strings(&extra));
        let out = run(BLAST, &a, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}\n{}", out.stdout, out.stderr);
        let ours = out.our_stderr();
        assert_eq!(ours.len(), 1, "{extra:?}: one line: {}", out.stderr);
        assert!(ours[0].contains("--cross-check runs steps again with the plain C send loop") && ours[0].contains(named), "{}", ours[0]);
    }
}
