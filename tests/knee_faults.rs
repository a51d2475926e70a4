//! The knee search when the sender, not the path, is what falls short:
//! over memif a receiver that spends 2000 cycles a frame pushes back, so
//! blast cannot deliver the rates it is asked for. Such trials must count
//! at the rate they delivered, never at the offered one, and no NDR or PDR
//! may be more than its confirming trial delivered. And --reflect against a
//! drop that does not reflect is refused before the first trial.

mod common;
use common::*;
use std::time::Duration;

/// drop --listen on the memif server side, with `extra` flags; returns it,
/// the memif socket and the control address.
fn memif_drop_listening(dir: &std::path::Path, extra: &[&str]) -> (Running, String, String) {
    let sock = dir.join("memif.sock").display().to_string();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut d = strings(&["--port", "net_memif0", "--listen", &addr, "--duration", "120"]);
    d.extend(strings(extra));
    d.push("--".into());
    d.extend(eal_base());
    d.extend([format!("--vdev=net_memif0,role=server,socket={sock},socket-abstract=no"), "--lcores=0@1,1@1".into()]);
    let mut p = spawn(DROP, &d);
    p.wait_for_line("control on", Duration::from_secs(30));
    (p, sock, addr)
}

fn memif_blast(sock: &str, addr: &str, args: &[&str], timeout: Duration) -> Output {
    let mut b = strings(&["--port", "net_memif0", "--peer", addr]);
    b.extend(strings(args));
    b.push("--".into());
    b.extend(eal_base());
    b.extend([format!("--vdev=net_memif0,role=client,socket={sock},socket-abstract=no"), "--lcores=0@0,1@0".into()]);
    run(BLAST, &b, timeout)
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_sender_that_cannot_deliver_the_offered_rate_never_passes_at_it() {
    let _g = heavy();
    let dir = scratch("knee-short-sender");
    let json = dir.join("k.json");
    let j = json.display().to_string();
    let (drop, sock, addr) = memif_drop_listening(&dir, &["--rx-cost", "2000"]);
    let out = memif_blast(
        &sock,
        &addr,
        &[
            "--find-knee",
            "--rate",
            "20M",
            "--shape",
            "burst:32",
            "--search-duration",
            "0.3",
            "--duration",
            "0.5",
            "--warmup",
            "0.2",
            "--knee-precision",
            "10",
            "--sentence",
            "--json",
            &j,
        ],
        Duration::from_secs(120),
    );
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
    // A search that ran to its end exits 0, whether or not a knee was confirmed.
    assert!(out.status.success(), "blast --find-knee: {}\n{}", out.stdout, out.stderr);

    let v = read_json(&json);
    let whole: records::knee::KneeRecord = reads_back_whole("knee", &v);
    assert_eq!((whole.body.trials.len(), whole.body.result.delivery_tolerance_pct), (v["trials"].as_array().unwrap().len(), 1.0));
    let r = &v["result"];
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(f(&r["delivery_tolerance_pct"]), 1.0);

    // The first trial, at 20 Mpps, is far beyond what the receiver takes:
    // the sender falls short, and the trial counts at what it delivered.
    let first = &trials[0];
    assert_eq!(f(&first["offered_mpps"]), 20.0);
    assert_eq!(first["sender_short"], true, "{first}");
    assert!(f(&first["sent"]["mpps"]) < 20.0 * 0.99, "{first}");
    assert!(out.stdout.contains("sender short: delivered"), "{}", out.stdout);
    assert!(out.stdout.contains("not a pass at 20.000 Mpps"), "{}", out.stdout);
    assert!(r["sender_cap_mpps"].as_f64().is_some_and(|c| c <= 20.0), "{r}");
    for t in trials {
        let offered = f(&t["offered_mpps"]);
        let sent = f(&t["sent"]["mpps"]);
        let short = t["sender_short"].as_bool().unwrap();
        assert_eq!(short, sent < offered * 0.99, "sender_short as the tolerance defines it: {t}");
        if short {
            assert_ne!(t["confirmed"], true, "a confirmation the sender fell short on confirms nothing: {t}");
            if let Some(at) = t["counted_at_mpps"].as_f64() {
                assert!((at - sent).abs() <= sent * 0.001 + 1e-6, "a short trial counts at the delivered rate: {t}");
            }
        }
    }

    // Every confirmed figure is a rate its confirming trial delivered.
    for (goal, key) in [("ndr", "ndr_mpps"), ("pdr", "pdr_mpps")] {
        match r[key].as_f64() {
            Some(x) => {
                let i = r[format!("{goal}_confirmed_by")].as_u64().expect("the confirming trial is named") as usize;
                let t = &trials[i - 1];
                assert_eq!(t["kind"], "confirm", "{t}");
                assert_eq!(t["goal"], goal, "{t}");
                assert_eq!(t["confirmed"], true, "{t}");
                assert_eq!(t["sender_short"], false, "{t}");
                let sent = f(&t["sent"]["mpps"]);
                assert!(x <= sent * 1.001, "{goal} {x} Mpps is more than its confirming trial delivered ({sent} Mpps)");
                assert!(x <= f(&t["offered_mpps"]) * 1.001, "{goal} {x} Mpps above what was offered: {t}");
            }
            None => {
                let text = r[goal].as_str().unwrap();
                assert!(text.starts_with("none"), "{goal}: {text}");
            }
        }
    }
    match r["knee_mpps"].as_f64() {
        Some(k) => {
            // Either the result says it is bounded by the sender ("at least"),
            // or the path's knee lies under a trial that carried more and
            // lost; either way it is below every rate the sender fell short
            // of before it was confirmed.
            let by = r["pdr_confirmed_by"].as_u64().unwrap() as usize;
            for t in trials[..by - 1].iter().filter(|t| t["sender_short"] == true) {
                assert!(k < f(&t["offered_mpps"]), "knee {k} Mpps at or above a rate the sender could not deliver: {t}");
            }
            if r["sender_limited"] == true {
                assert_eq!(r["pdr_bounded_by"], "sender", "{r}");
                assert!(r["pdr"].as_str().unwrap().starts_with("at least"), "{r}");
                assert!(out.stdout.contains("PDR (loss <= 0.5%): at least"), "{}", out.stdout);
                assert!(out.stdout.contains("ceiling for this traffic: at least"), "{}", out.stdout);
                let s = r["sentence"].as_str().unwrap();
                assert!(s.contains("sender-limited: the path's knee is at least"), "{s}");
            } else if r["pdr_bounded_by"] == "held-back" {
                // A trial above it fell short of a rate an earlier trial delivered.
                assert!(
                    trials.iter().any(|t| t["held_back"] == true && f(&t["offered_mpps"]) > k),
                    "a knee bounded by a held-back trial has one above it: {r}"
                );
                assert!(!out.stdout.contains("the sender delivered no more"), "{}", out.stdout);
            } else {
                assert_eq!(r["pdr_bounded_by"], "path", "{r}");
                assert!(
                    trials.iter().any(|t| t["pdr_pass"] == false && t["counted_at_mpps"].as_f64().is_some_and(|a| a > k)),
                    "a knee bounded by the path has a trial above it that carried more and lost"
                );
            }
            let s = r["sentence"].as_str().unwrap();
            // Written as every capacity is: truncated, never rounded up.
            assert!(s.contains(&format!("{} Mpps", knee::mpps_floor(k))), "the sentence claims the confirmed rate: {s}");
            assert!(!s.contains(" us at "), "no latency was measured: the sentence quotes none: {s}");
        }
        None => {
            // The sender kept falling short: say so, not "none found".
            assert!(out.stdout.contains("no knee confirmed"), "{}", out.stdout);
            assert!(r["sentence"].is_null());
        }
    }
}

#[test]
fn reflect_against_a_drop_that_does_not_reflect_is_refused_before_any_trial() {
    let _g = heavy();
    let dir = scratch("knee-no-reflect");
    let (drop, sock, addr) = memif_drop_listening(&dir, &[]);
    let out = memif_blast(
        &sock,
        &addr,
        &["--find-knee", "--reflect", "--rate", "100k", "--shape", "even", "--search-duration", "0.3", "--duration", "0.5"],
        Duration::from_secs(60),
    );
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "refused as bad input: {}\n{}", out.stdout, out.stderr);
    let errors: Vec<&str> = out.our_stderr().into_iter().filter(|l| l.starts_with("blast: error:")).collect();
    assert_eq!(errors.len(), 1, "one line: {:?}", out.stderr);
    assert!(errors[0].contains("--reflect"), "{}", errors[0]);
    assert!(!out.stdout.contains("trial 1"), "refused before the first trial: {}", out.stdout);
    assert!(!out.stdout.contains("P50 0.0 us"), "{}", out.stdout);
}

/// A receiver-limited path (af_packet on a veth pair, drop spending 100k
/// cycles a frame: its socket ring overflows at a few tens of thousands of
/// frames/s) while the sender easily carries the top of the search. The
/// knee is the receiver's: bounded by the trials that lost above it (or by
/// one the host held back, below a rate the sender had delivered), never
/// "at least ...: the sender delivered no more"; the figures are written as
/// the record holds them, never rounded up.
#[test]
fn a_receiver_limited_knee_is_not_blamed_on_the_sender() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("receiver_limited_knee", Netns::with_pair) else { return };
    let dir = scratch("knee-receiver");
    let json = dir.join("k.json");
    let addr = format!("127.0.0.1:{}", free_port());
    let mut d = strings(&["--port", "net_af_packet0", "--listen", &addr, "--duration", "300", "--rx-cost", "100000", "--"]);
    d.extend(eal_base());
    d.extend(["--vdev=net_af_packet0,iface=bd-b".into(), "--lcores=0@1,1@1".into()]);
    let mut drop = spawn("ip", &ns.exec(DROP, d));
    drop.wait_for_line("control on", Duration::from_secs(30));
    let mut b = strings(&[
        "--port",
        "net_af_packet0",
        "--peer",
        &addr,
        "--find-knee",
        "--rate",
        "60k",
        "--search-duration",
        "0.3",
        "--duration",
        "0.5",
        "--warmup",
        "0.2",
        "--knee-precision",
        "10",
        "--json",
        &json.display().to_string(),
        "--",
    ]);
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
    let out = run_af_packet("ip", &ns.exec(BLAST, b), Duration::from_secs(240));
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
    assert!(out.status.success(), "blast --find-knee: {}\n{}", out.stdout, out.stderr);

    let v = read_json(&json);
    let r = &v["result"];
    let trials = v["trials"].as_array().unwrap();
    let first = &trials[0];
    assert!(f(&first["loss_pct"]) > 20.0, "the first trial, at 60k, is far beyond the receiver: {first}");
    let most = trials.iter().map(|t| f(&t["sent"]["mpps"])).fold(0.0, f64::max);
    // The sender's cap is only ever a rate no trial delivered.
    if let Some(cap) = r["sender_cap_mpps"].as_f64() {
        assert!(most < cap * 0.99, "a sender cap at {cap} Mpps though a trial delivered {most} Mpps");
    }
    for t in trials.iter().filter(|t| t["held_back"] == true) {
        assert_eq!(t["sender_short"], true, "{t}");
        assert!(f(&t["offered_mpps"]) <= most, "held back below a rate delivered: {t}");
    }
    if f(&first["sent"]["mpps"]) >= 0.06 * 0.99 {
        // The sender carried the top: nothing above the knee is its limit.
        for goal in ["ndr", "pdr"] {
            assert_ne!(r[format!("{goal}_bounded_by")], "sender", "{r}");
            assert!(!r[goal].as_str().unwrap().contains("the sender delivered no more"), "{r}");
        }
        assert_ne!(r["sender_limited"], true, "{r}");
        assert!(!out.stdout.contains("the sender delivered no more"), "{}", out.stdout);
        assert!(!out.stdout.contains("give the sender more CPU"), "{}", out.stdout);
    } else {
        eprintln!("the first trial fell short ({}): the host, not the code; the sender-cap checks are skipped", first["sent"]["mpps"]);
    }
    if r["pdr_bounded_by"] == "path" {
        // The receiver, and on a loaded host the sender beside it ("receiver + sender").
        let above = r["limit_above"].as_str().unwrap_or_default();
        assert!(above.split(" + ").any(|l| l == "receiver"), "the trials above the knee lost at the receiver: {r}");
    }
    // The printed figures are the record's, never rounded up.
    if let Some(ndr) = r["ndr_mpps"].as_f64() {
        let printed = knee::mpps_floor(ndr);
        let line = out.stdout.lines().find(|l| l.starts_with("NDR (loss <= 0%)")).expect("the result line");
        assert!(line.contains(&format!(" {printed} Mpps")), "NDR {ndr} as {printed}: {line}");
        assert!(printed.parse::<f64>().unwrap() <= ndr);
    }
}
