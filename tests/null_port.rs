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
    clock_is_consistent(&v, s, &out.stdout);
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

/// Cycles are the core's: on x86 the TSC's ticks; on arm64 the platform
/// timer's ticks converted with the core's frequency, or null with the
/// reason when that frequency is unknown (as under qemu-user on an x86
/// host). Checked on whatever architecture the test was built for.
fn clock_is_consistent(v: &serde_json::Value, s: &serde_json::Value, stdout: &str) -> Option<u64> {
    let clock = &v["environment"]["clock"];
    let timer_hz = clock["timer_hz"].as_u64().unwrap();
    assert!(timer_hz > 0, "{clock}");
    assert_eq!(v["environment"]["tsc_hz"].as_u64(), Some(timer_hz));
    let ns = s["ns_per_packet"].as_f64().unwrap();
    assert!(ns > 0.0, "{s}");
    let source = clock["core_hz_source"].as_str().unwrap();
    if cfg!(target_arch = "x86_64") {
        assert_eq!(clock["timer"], "tsc");
        assert_eq!(clock["core_hz"].as_u64(), Some(timer_hz));
    }
    if cfg!(target_arch = "aarch64") {
        assert_eq!(clock["timer"], "arm_generic_timer");
    }
    match clock["core_hz"].as_u64() {
        Some(core_hz) => {
            let cycles = s["cycles_per_packet"].as_f64().unwrap();
            let want = ns * core_hz as f64 / 1e9;
            assert!((cycles - want).abs() <= want * 1e-6, "{cycles} cycles/pkt, but {ns} ns/pkt at {core_hz} Hz is {want}");
            assert!(stdout.contains(" cycles/pkt"), "{stdout}");
        }
        None => {
            assert!(s["cycles_per_packet"].is_null(), "no core clock, no cycles: {s}");
            assert!(source.starts_with("unknown"), "{source}");
            assert!(stdout.contains("cycles/pkt unknown ("), "the summary says so: {stdout}");
        }
    }
    clock["core_hz"].as_u64()
}

/// A sysfs under `dir` with only cpu0's cpufreq: a 2.8 GHz core (for
/// $BLASTDROP_SYSFS, with lcores given by -l so placement does not read it).
fn sysfs_with_cpufreq(dir: &std::path::Path) -> std::path::PathBuf {
    let freq = dir.join("sys/devices/system/cpu/cpu0/cpufreq");
    std::fs::create_dir_all(&freq).unwrap();
    std::fs::write(freq.join("cpuinfo_max_freq"), "2800000\n").unwrap();
    dir.join("sys")
}

/// A core clock from sysfs cpufreq ($BLASTDROP_SYSFS: a tree with only
/// cpu0's cpuinfo_max_freq, lcores given with -l so placement does not read
/// it): on arm64 the cycles come from it; on x86 the TSC is the cycle count
/// and the tree changes nothing.
#[test]
fn cycles_per_packet_follow_the_core_clock_the_record_names() {
    let _g = heavy();
    let dir = scratch("null-clock");
    let sys = sysfs_with_cpufreq(&dir);
    let json = dir.join("blast.json");
    let mut args = strings(&["--port", "0", "--count", "200000", "--json"]);
    args.push(json.display().to_string());
    args.push("--".into());
    args.extend(eal_base());
    args.extend(strings(&["-l", "0,1", "--vdev=net_null0"]));
    let out = std::process::Command::new(BLAST).args(&args).env("BLASTDROP_SYSFS", &sys).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let v = read_json(&json);
    let core_hz = clock_is_consistent(&v, &v["summary"], &stdout);
    let source = v["environment"]["clock"]["core_hz_source"].as_str().unwrap().to_owned();
    if cfg!(target_arch = "aarch64") {
        assert_eq!(core_hz, Some(2_800_000_000), "{source}");
        assert!(source.starts_with("sysfs: cpu0's cpufreq cpuinfo_max_freq (2800000 kHz"), "{source}");
    } else {
        assert!(source.starts_with("tsc"), "{source}");
    }
    for q in v["summary"]["queues"].as_array().unwrap() {
        assert!(q["ns_per_packet"].as_f64().unwrap() > 0.0, "{q}");
        assert_eq!(q["cycles_per_packet"].is_null(), core_hz.is_none(), "{q}");
    }
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

/// drop --rx-cost is in core cycles: with a known core clock it runs (the
/// lanes spin the converted ticks); on arm64 with none it refuses in one
/// line rather than spin timer ticks and call them cycles.
#[test]
fn drop_rx_cost_needs_a_known_core_clock() {
    let _g = heavy();
    let sys = sysfs_with_cpufreq(&scratch("null-rx-cost"));
    let mut args = strings(&["--port", "0", "--duration", "1", "--rx-cost", "1000", "--"]);
    args.extend(eal_base());
    args.extend(strings(&["-l", "0,1", "--vdev=net_null0"]));
    let known = std::process::Command::new(DROP).args(&args).env("BLASTDROP_SYSFS", &sys).output().unwrap();
    assert!(known.status.success(), "{}", String::from_utf8_lossy(&known.stderr));
    let plain = run(DROP, &args, Duration::from_secs(30));
    if !plain.status.success() {
        let arm64 = cfg!(target_arch = "aarch64");
        assert!(arm64, "only arm64 lacks a core clock: {}", plain.stderr);
        let ours = plain.our_stderr();
        assert_eq!(ours.len(), 1, "one line: {ours:?}");
        assert!(ours[0].contains("--rx-cost 1000 is in core cycles, but this machine's core clock is unknown"), "{ours:?}");
    }
}

/// A cross-check's step as the record gives it: the C lanes' window on the
/// same queues and size, unpaced, and a ratio that is the two windows'
/// figures on the basis named (rounded as printed), judged as printed; or
/// unknown, with the reason (here only a lane the host stood still).
fn assert_cross_checked(step: &serde_json::Value) {
    let x = &step["cross_check"];
    let c = &x["c_lanes"];
    assert!(c["error"].is_null(), "the C lanes' window failed: {x}");
    assert!(c["sent"]["packets"].as_u64().is_some_and(|n| n > 0), "the C lanes sent nothing: {x}");
    assert_eq!((&c["queues"], &c["size"], c["shape"].as_str()), (&step["queues"], &step["size"], Some("open")), "{x}");
    let basis = x["basis"].as_str().unwrap();
    let figure = |s: &serde_json::Value| if basis == "receiver" { s["received"]["mpps"].as_f64() } else { s["sent"]["mpps"].as_f64() };
    if x["finding"] == "unknown" {
        assert!(x["ratio"].is_null(), "{x}");
        assert!(x["sentence"].as_str().unwrap().contains("stood still"), "unknown for a reason other than a stall: {x}");
        return;
    }
    let ratio = x["ratio"].as_f64().unwrap();
    let expect = (figure(step).unwrap() / figure(c).unwrap() * 100.0).round() / 100.0;
    assert!((ratio - expect).abs() < 1e-9, "the ratio is the windows' {expect}: {x}");
    let finding = match ratio {
        r if r >= 0.95 => "not_blast",
        r if r < 0.90 => "blast",
        _ => "close",
    };
    assert_eq!(x["finding"], finding, "{x}");
    assert!(x["sentence"].as_str().unwrap().contains(&format!("{ratio:.2}")) || finding == "blast", "{x}");
}

#[test]
fn a_cross_checked_ladder_runs_every_step_on_the_c_lanes_too() {
    let _g = heavy();
    let dir = scratch("null-cross-check");
    let (json, csv) = (dir.join("l.json"), dir.join("l.csv"));
    let mut args = strings(&["--port", "net_null0", "--queues", "1,2", "--size", "64,1500", "--warmup", "0.1", "--duration", "0.5"]);
    args.extend(strings(&["--cross-check", "--json", &json.display().to_string(), "--csv", &csv.display().to_string(), "--"]));
    args.extend(eal_base());
    // Two lanes on two CPUs (the first beside the main lcore, which sleeps).
    args.extend(strings(&["--vdev=net_null0", "--lcores=0@0,1@0,2@1"]));
    let out = run(BLAST, &args, Duration::from_secs(120));
    assert!(out.status.success(), "blast failed: {}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    for s in steps {
        assert_eq!(s["cross_check"]["basis"], "sender", "no receiver: {s}");
        assert_cross_checked(s);
    }
    assert!(out.stdout.contains("cross-check (each step again at once with blast-ref's C loop"), "{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().skip_while(|l| !l.starts_with("cross-check (")).collect();
    for s in steps {
        let c = s["cross_check"]["c_lanes"]["sent"]["mpps"].as_f64().unwrap();
        let n = |k: &str| s[k].as_u64().unwrap();
        let row = format!("{:>4} {:>3} {:>6} {:>6}", n("step") + 1, 1, n("queues"), n("size"));
        let line = lines.iter().find(|l| l.starts_with(&row)).unwrap_or_else(|| panic!("no cross-check row {row:?}: {}", out.stdout));
        assert!(line.contains(&format!("{c:.3}")), "the C loop's Mpps as the record has it: {line}");
    }
    // The CSV: the C loop's figure, the ratio and the finding per step.
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} column: {header:?}"));
    for (row, s) in text.lines().skip(1).zip(steps) {
        let f: Vec<&str> = row.split(',').collect();
        let c: f64 = f[col("c_loop_sent_mpps")].parse().unwrap();
        assert!((c - s["cross_check"]["c_lanes"]["sent"]["mpps"].as_f64().unwrap()).abs() < 1e-6, "{row}");
        assert_eq!(f[col("cross_check")], s["cross_check"]["finding"].as_str().unwrap(), "{row}");
        let ratio = s["cross_check"]["ratio"].as_f64().map_or(String::new(), |r| format!("{r:.2}"));
        assert_eq!(f[col("blast_over_c_loop")], ratio, "{row}");
    }
    assert_matches_schema(&v, "blast-ladder");
}

#[test]
fn a_cross_checked_count_is_sent_whole_by_the_c_lanes_too() {
    let _g = heavy();
    let dir = scratch("null-cross-count");
    let json = dir.join("s.json");
    let mut args = strings(&["--port", "net_null0", "--queues", "2", "--count", "100001", "--flows", "3", "--cross-check", "--json"]);
    args.push(json.display().to_string());
    args.push("--".into());
    args.extend(eal_base());
    args.extend(strings(&["--vdev=net_null0", "--lcores=0@0,1@0,2@1"]));
    let out = run(BLAST, &args, Duration::from_secs(60));
    assert!(out.status.success(), "blast failed: {}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("blast: cross-check: the same run again with the C lanes"), "{}", out.stdout);
    let v = read_json(&json);
    let x = &v["cross_check"];
    assert_eq!(x["c_lanes"]["sent"]["packets"], 100001, "the C lanes honour the count: {x}");
    assert_eq!(x["c_lanes"]["sender_opackets"], 100001, "and the port counted them: {x}");
    assert_eq!(v["summary"]["sent"]["packets"], 100001);
    let step = serde_json::json!({ "queues": 2, "size": 64, "sent": v["summary"]["sent"], "cross_check": x });
    assert_cross_checked(&step);
    assert_matches_schema(&v, "blast-single");
}
