//! Figures over time with real parts: a credit bucket made by the Linux
//! kernel's token-bucket shaper (tc tbf) on a veth, sent through
//! net_af_packet with the queueing discipline in the path, found and sized
//! from drop's series; a steady run that reports no change; the sender's
//! verdict under a shaper that pushes back; the series' CSV and plot; the
//! memory of a long run held flat; and /metrics checked by promtool and
//! scraped by a real Prometheus server.

mod common;
use common::*;
use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, Instant};

/// tbf's figures: 20 Mbit/s, a 40 MiB bucket (tc's "mb" is 1024 x 1024 bytes).
const TBF_RATE_BPS: f64 = 20e6;
const TBF_BURST_BYTES: f64 = 40.0 * 1024.0 * 1024.0;
/// The frame size blast sends; tbf counts the frame without its FCS.
const SIZE: u64 = 512;

/// `tc qdisc add dev bd-a root tbf rate RATE burst BURST limit 64kb` in the
/// namespace, or why not (a kernel without sch_tbf).
fn shape(ns: &Netns, rate: &str, burst: &str) -> Result<(), String> {
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.0, "tc", "qdisc", "add", "dev", "bd-a", "root", "tbf", "rate", rate, "burst", burst, "limit", "64kb"])
        .output()
        .map_err(|e| format!("cannot run tc: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// drop's arguments on bd-b: standalone for `drop_secs`, its series and
/// record into `dir`.
fn drop_args(dir: &std::path::Path, drop_secs: u32, drop_extra: &[&str]) -> Vec<String> {
    let mut d = strings(&["--port", "net_af_packet0", "--duration", &drop_secs.to_string(), "--idle-timeout", "3"]);
    d.extend(strings(drop_extra));
    d.extend(strings(&["--series", &dir.join("drop.csv").display().to_string()]));
    d.extend(strings(&["--series-svg", &dir.join("drop.svg").display().to_string()]));
    d.extend(strings(&["--json", &dir.join("drop.json").display().to_string(), "--"]));
    d.extend(eal_base());
    // An RX ring of 8192 frames (400 ms at 20 kpps, against 512 by default):
    // on a loaded test machine drop's lane is descheduled for long enough
    // that a smaller ring overflows, and its socket's drops are not the shaper's.
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b,framecnt=8192", "--lcores=0@1,1@1"]));
    d
}

/// blast's arguments on bd-a (the qdisc in its path: qdisc_bypass=0), its
/// record into `dir`, its lanes on CPU 0.
fn blast_args(dir: &std::path::Path, blast_extra: &[&str]) -> Vec<String> {
    let mut b = strings(&["--port", "net_af_packet0", "--json", &dir.join("blast.json").display().to_string()]);
    b.extend(strings(blast_extra));
    b.push("--".into());
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a,qdisc_bypass=0", "--lcores=0@0,1@0"]));
    b
}

/// drop standalone on bd-b for `drop_secs`, then after `lead_in` (drop
/// idle, as users start it) blast on bd-a with `blast_args`: both records
/// and drop's output.
fn shaped_run(
    ns: &Netns,
    dir: &std::path::Path,
    (drop_secs, drop_extra): (u32, &[&str]),
    blast_extra: &[&str],
    lead_in: Duration,
) -> (serde_json::Value, serde_json::Value, String) {
    let mut drop_proc = spawn("ip", &ns.exec(DROP, drop_args(dir, drop_secs, drop_extra)));
    drop_proc.wait_for_line("drop: port", Duration::from_secs(30));
    std::thread::sleep(lead_in);
    let blast_out = run_af_packet("ip", &ns.exec(BLAST, blast_args(dir, blast_extra)), Duration::from_secs(60));
    assert!(blast_out.status.success(), "blast: {}\n{}", blast_out.stdout, blast_out.stderr);
    let drop_out = drop_proc.finish(Duration::from_secs(40));
    assert!(drop_out.status.success(), "drop: {}\n{}", drop_out.stdout, drop_out.stderr);
    (read_json(&dir.join("drop.json")), read_json(&dir.join("blast.json")), drop_out.stdout)
}

#[test]
fn a_token_bucket_shaper_is_found_and_sized_and_named_as_the_paths_push_back() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("a_token_bucket_shaper_is_found_and_sized", Netns::with_pair) else { return };
    if let Err(e) = shape(&ns, "20mbit", "40mb") {
        return skip_or_fail("a_token_bucket_shaper_is_found_and_sized", &format!("this kernel has no tbf qdisc ({e}): needs sch_tbf"));
    }
    let dir = scratch("tbf");
    let (drop_rec, blast_rec, drop_out) =
        shaped_run(&ns, &dir, (14, &[]), &["--size", "512", "--rate", "40k", "--duration", "10"], Duration::ZERO);
    let a = &drop_rec["series_analysis"];
    let bucket = &a["bucket"];
    assert!(bucket.is_object(), "drop found no bucket: {a}\n{drop_out}");
    // The baseline: tbf's rate in frames of 508 bytes (no FCS).
    let want_pps = TBF_RATE_BPS / 8.0 / (SIZE - 4) as f64;
    let baseline = bucket["baseline_pps"].as_f64().unwrap();
    assert!((baseline - want_pps).abs() <= want_pps * 0.10, "baseline {baseline:.0} pps vs tbf's {want_pps:.0}: {a}");
    // The bucket: tbf's burst, counted in drop's frames (with FCS).
    let above = bucket["frames_above"].as_f64().unwrap();
    let want_frames = TBF_BURST_BYTES / (SIZE - 4) as f64;
    assert!((above - want_frames).abs() <= want_frames * 0.15, "bucket {above:.0} frames above baseline vs tbf's {want_frames:.0}: {a}");
    let burst = bucket["burst_pps"].as_f64().unwrap();
    assert!((burst - 40_000.0).abs() <= 4_000.0, "the burst is blast's pace: {burst:.0} pps: {a}");
    let sentence = a["sentence"].as_str().unwrap();
    assert!(sentence.contains("(baseline)") && sentence.contains("above baseline"), "{sentence}");
    assert!(drop_out.contains("drop: over time: received"), "{drop_out}");

    // The series is in the record, as columns, and in the CSV and the plot.
    let s = &drop_rec["series"];
    let rows = s["t_s"].as_array().unwrap().len();
    assert!(rows >= 10, "a row a second: {rows}");
    assert_eq!(s["received_frames"].as_array().unwrap().len(), rows);
    let csv = std::fs::read_to_string(dir.join("drop.csv")).unwrap();
    assert!(csv.starts_with("t_s,secs,"), "{csv}");
    assert_eq!(csv.lines().count(), rows + 1, "a line per row and the header");
    let svg = std::fs::read_to_string(dir.join("drop.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("received over time"), "the plot is drawn");

    // blast was held back by the shaper through its kernel socket, not by its cores.
    let v = &blast_rec["summary"]["verdict"];
    let evidence = serde_json::to_string(v).unwrap();
    assert!(
        evidence.contains("the path beneath the queues pushed back"),
        "blast's verdict should name the path's push-back, not the cores: {evidence}"
    );
    assert!(blast_rec["series"]["sent_frames"].is_array(), "blast keeps its sent series too");
}

/// 1000 B frames at 20 kpps through tbf `rate` with a `burst`-byte bucket,
/// drop started 3 s before blast (an idle lead-in, stray kernel frames and
/// all): drop's bucket, its frames above baseline against tbf's bucket in
/// frames of 996 B (tbf counts the frame without its FCS), within 5%.
fn tbf_bucket(name: &str, (rate, rate_bps): (&str, f64), (burst, burst_bytes): (&str, f64), blast_secs: u32) -> serde_json::Value {
    let Some(ns) = netns_or_skip(name, Netns::with_pair) else { return serde_json::Value::Null };
    if let Err(e) = shape(&ns, rate, burst) {
        skip_or_fail(name, &format!("this kernel has no tbf qdisc ({e}): needs sch_tbf"));
        return serde_json::Value::Null;
    }
    let dir = scratch(name);
    let blast = ["--size", "1000", "--rate", "20k", "--duration", &blast_secs.to_string()];
    let (drop_rec, _, out) = shaped_run(&ns, &dir, (blast_secs + 12, &[]), &blast, Duration::from_secs(3));
    let a = drop_rec["series_analysis"].clone();
    let b = &a["bucket"];
    assert!(b.is_object(), "{name}: drop found no bucket: {a}\n{out}");
    let (above, baseline) = (b["frames_above"].as_f64().unwrap(), b["baseline_pps"].as_f64().unwrap());
    let (want_above, want_pps) = (burst_bytes / 996.0, rate_bps / 8.0 / 996.0);
    // tbf drops nothing while its bucket lasts: frames missing from the
    // probes' sequence in the burst's rows were lost at drop's own socket
    // (counted by the kernel, not received): the bucket carried them too.
    let first =
        drop_rec["series"]["trial_first_frame_s"].as_f64().unwrap_or_else(|| panic!("{name}: no trial mark: {}", drop_rec["series"]));
    let burst_end = first + b["burst_s"].as_f64().unwrap();
    let col = |c: &str| drop_rec["series"][c].as_array().unwrap().iter().map(|v| v.as_f64().unwrap_or(0.0)).collect::<Vec<f64>>();
    let (t, secs, lost) = (col("t_s"), col("secs"), col("lost"));
    let lost_in_burst: f64 = (0..t.len()).filter(|&i| t[i] > first && t[i] - secs[i] < burst_end).map(|i| lost[i]).sum();
    eprintln!(
        "{name}: {above:.0} frames above a {baseline:.0} pps baseline, {lost_in_burst:.0} lost at drop in the burst; tbf: {want_above:.0} above \
         {want_pps:.0}: {}",
        a["sentence"]
    );
    assert!((baseline - want_pps).abs() <= want_pps * 0.05, "{name}: baseline {baseline:.0} pps vs tbf's {want_pps:.0}: {a}");
    // A baseline above tbf's own rate means bucket frames reached drop after
    // the burst's rows ended (drop or the host delayed them past a row's
    // edge: CI once measured 12607 pps against 12550 and 4939 frames above
    // against 5264): the analysis then moved them into the baseline, and
    // they are counted back here, the spill over the baseline's span, so
    // that every bucket frame is still accounted for. docs/testing.md.
    let spill = (baseline - want_pps).max(0.0) * (a["active_s"].as_f64().unwrap() - b["burst_s"].as_f64().unwrap()).max(0.0);
    let spill = if baseline > want_pps * 1.002 { spill } else { 0.0 };
    let carried = above + lost_in_burst + spill;
    assert!(
        (carried - want_above).abs() <= want_above * 0.05 && above <= want_above * 1.05,
        "{name}: {above:.0} frames above baseline (+{lost_in_burst:.0} lost at drop, +{spill:.0} spilled past the burst) vs tbf's {want_above:.0}: {a}"
    );
    let sentence = a["sentence"].as_str().unwrap();
    assert!(sentence.contains("above baseline") && !sentence.starts_with("no change"), "{name}: {sentence}");
    // The analysis ran from the trial's first frame, not the lead-in's strays.
    assert!(first >= 3.0, "{name}: the trial began after the 3 s lead-in: {first}");
    let active = a["active_s"].as_f64().unwrap();
    assert!((active - blast_secs as f64).abs() <= 1.0, "{name}: the active span is blast's {blast_secs} s: {active}: {a}");
    a
}

/// tbf 50mbit with a 20 MiB bucket: a burst of about 1.5 s at 20 kpps, at
/// drop's default 1 s interval.
#[test]
fn a_tbf_bucket_is_sized_at_the_default_interval_after_an_idle_lead_in() {
    let _g = heavy();
    let a = tbf_bucket("tbf50", ("50mbit", 50e6), ("20mb", 20.0 * 1024.0 * 1024.0), 8);
    if a.is_object() {
        assert_eq!(a["bucket"]["resolved"], true, "{a}");
    }
}

/// tbf 100mbit with a 5 MiB bucket: a burst of about 0.7 s, shorter than
/// one interval: sized all the same.
#[test]
fn a_tbf_burst_shorter_than_an_interval_is_sized_not_called_no_change() {
    let _g = heavy();
    tbf_bucket("tbf100", ("100mbit", 100e6), ("5mb", 5.0 * 1024.0 * 1024.0), 6);
}

/// blast's lanes on CPU 0 sending as fast as they can, with two busy loops
/// pinned to that CPU (at nice -10, so they win it on a loaded machine too)
/// from a few seconds in to the end: its sent rate falls
/// and holds, but it is the host's doing, and blast's own analysis says so
/// rather than calling it a credit bucket.
#[test]
fn a_sender_slowed_by_cpu_hogs_is_not_a_credit_bucket() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("a_sender_slowed_by_cpu_hogs", Netns::with_pair) else { return };
    let dir = scratch("hogs");
    let mut drop_proc = spawn("ip", &ns.exec(DROP, drop_args(&dir, 20, &["--count-only"])));
    drop_proc.wait_for_line("drop: port", Duration::from_secs(30));
    let args = blast_args(&dir, &["--size", "64", "--duration", "12"]);
    let mut blast = spawn("ip", &ns.exec(BLAST, args.clone()));
    blast.wait_for_line(" sent ", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(3500));
    let hogs = Hogs::pinned(2, 0);
    let out = blast.finish(Duration::from_secs(30));
    drop(hogs);
    sigint(&drop_proc);
    let _ = drop_proc.finish(Duration::from_secs(30));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    let rec = read_json(&dir.join("blast.json"));
    let a = &rec["series_analysis"];
    eprintln!("blast over time: {}", a["sentence"]);
    assert!(a["bucket"].is_null(), "blast called its own slowdown a credit bucket: {a}\n{}", out.stdout);
    assert!(
        !a["changes"].as_array().unwrap().is_empty(),
        "the hogs did not slow the sender (the test proves nothing): {a}\n{}",
        out.stdout
    );
    let fall = &a["sender_fall"];
    assert!(fall["host_stalled"].as_u64().unwrap_or(0) >= 1, "the lanes stood still after the fall: {a}");
    assert!(a["sentence"].as_str().unwrap().contains("the host, not a credit bucket"), "{a}");
}

#[test]
fn a_steady_run_reports_no_change() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("a_steady_run_reports_no_change", Netns::with_pair) else { return };
    let dir = scratch("steady");
    for round in 0..2 {
        let (drop_rec, _, out) =
            shaped_run(&ns, &dir, (12, &["--one-way"]), &["--size", "256", "--rate", "20k", "--duration", "8"], Duration::ZERO);
        let a = &drop_rec["series_analysis"];
        assert!(a["bucket"].is_null(), "round {round}: a bucket from a steady run: {a}\n{out}");
        assert_eq!(a["changes"].as_array().unwrap().len(), 0, "round {round}: a change in a steady run: {a}\n{out}");
        assert!(a["sentence"].as_str().unwrap().starts_with("no change"), "{a}");
        // --one-way: each interval's latency percentiles are in the series.
        let p50 = drop_rec["series"]["latency_ns"]["p50"].as_array().unwrap();
        let timed: Vec<u64> = p50.iter().filter_map(|v| v.as_u64()).collect();
        assert!(timed.len() >= 6 && timed.iter().all(|&ns| ns > 0 && ns < 1_000_000_000), "p50 per interval: {p50:?}");
    }
}

/// drop on net_null (its RX makes frames as fast as a lane polls) with
/// `extra` flags until stopped.
fn null_drop(extra: &[&str]) -> Running {
    let mut d = strings(&["--port", "net_null0", "--duration", "120"]);
    d.extend(strings(extra));
    d.push("--".into());
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_null0", "--lcores=0@0,1@1"]));
    let mut p = spawn(DROP, &d);
    p.wait_for_line("drop: port", Duration::from_secs(30));
    p
}

/// `s` percent-encoded for a query string.
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A plain HTTP GET on loopback: the status line's code and the body.
fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    let code = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|x| x.1.to_string()).unwrap_or_default();
    (code, body)
}

#[test]
fn metrics_pass_promtool_and_a_real_prometheus_scrapes_them() {
    let _g = heavy();
    let (Ok(_), Ok(_)) = (Command::new("promtool").arg("--version").output(), Command::new("prometheus").arg("--version").output()) else {
        panic!("promtool and prometheus are needed (Debian's prometheus package; scripts/deps.sh installs it for the tests)");
    };
    let addr = format!("127.0.0.1:{}", free_port());
    let drop_proc = null_drop(&["--metrics", &addr]);
    std::thread::sleep(Duration::from_secs(2));
    let (code, body) = get(&addr, "/metrics");
    assert_eq!(code, 200, "{body}");
    for family in ["blastdrop_frames_total", "blastdrop_bytes_total", "blastdrop_verdict", "blastdrop_lost_frames_total"] {
        assert!(body.contains(family), "{family} missing: {body}");
    }
    let dir = scratch("prom");
    let file = dir.join("metrics.txt");
    std::fs::write(&file, &body).unwrap();
    let check = Command::new("sh").arg("-c").arg(format!("promtool check metrics < {}", file.display())).output().unwrap();
    assert!(check.status.success(), "promtool: {}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    assert_eq!(get(&addr, "/nothing").0, 404);

    // A real Prometheus scrapes it every second; its HTTP API gives the series back.
    let web = format!("127.0.0.1:{}", free_port());
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: drop\n    static_configs:\n      - targets: ['{addr}']\n"),
    )
    .unwrap();
    let mut prom = Command::new("prometheus")
        .args([
            &format!("--config.file={}", config.display()),
            &format!("--storage.tsdb.path={}", dir.join("tsdb").display()),
            &format!("--web.listen-address={web}"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(40);
    let mut last = String::new();
    let found = loop {
        std::thread::sleep(Duration::from_secs(1));
        if let Ok(s) = std::net::TcpStream::connect(&web) {
            drop(s);
            let (code, body) = get(&web, "/api/v1/query?query=blastdrop_frames_total");
            if code == 200 && body.contains("\"result\":[{") && body.contains("\"tool\":\"drop\"") {
                break Some(body);
            }
            last = body;
        }
        if Instant::now() > until {
            break None;
        }
    };
    // Every query of the Grafana dashboard in docs/ parses and runs in this Prometheus.
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/grafana-dashboard.json")).unwrap())
            .unwrap();
    let mut queries = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            let (code, body) = get(&web, &format!("/api/v1/query?query={}", url_encode(expr)));
            assert!(code == 200 && body.contains("\"status\":\"success\""), "dashboard query {expr:?}: {code} {body}");
            queries += 1;
        }
    }
    assert!(queries >= 6, "{queries}");
    let _ = prom.kill();
    let _ = prom.wait();
    sigint(&drop_proc);
    let out = drop_proc.finish(Duration::from_secs(30));
    assert!(out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", out.stdout, out.stderr);
    let body = found.unwrap_or_else(|| panic!("Prometheus never had blastdrop_frames_total: {last}"));
    assert!(body.contains("\"direction\":\"received\""), "{body}");
}

#[test]
fn metrics_on_every_interface_are_refused_like_the_control_port() {
    let out = run(
        DROP,
        &strings(&["--port", "net_null0", "--metrics", "0.0.0.0:9477", "--", "--vdev=net_null0", "--no-huge", "-m", "256"]),
        Duration::from_secs(30),
    );
    assert!(!out.status.success());
    let lines = out.our_stderr();
    assert_eq!(lines.len(), 1, "one line: {lines:?}");
    assert!(lines[0].contains("--metrics 0.0.0.0:9477") && lines[0].contains("every interface"), "{lines:?}");
}

/// VmRSS of a process, in kB.
fn rss_kb(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A soak in small: drop keeps a row every 10 ms (a day's rows at 1 s
/// would take 14 minutes to make) while receiving; its memory after the
/// first rows must stay flat, and Ctrl-C ends it with its whole record.
#[test]
fn a_long_run_keeps_its_memory_flat_and_ends_with_its_record_on_ctrl_c() {
    let _g = heavy();
    let dir = scratch("soak");
    let json = dir.join("drop.json");
    let csv = dir.join("drop.csv");
    let mut drop_proc = null_drop(&[
        "--interval",
        "10ms",
        "--json",
        &json.display().to_string(),
        "--series",
        &csv.display().to_string(),
        "--xstats-interval",
        "1",
    ]);
    let _ = &mut drop_proc;
    std::thread::sleep(Duration::from_secs(5));
    let first = rss_kb(drop_proc.pid());
    let mut samples = Vec::new();
    for _ in 0..6 {
        std::thread::sleep(Duration::from_secs(5));
        samples.push(rss_kb(drop_proc.pid()));
    }
    // The CSV grows as it goes: a killed run would leave these lines.
    let lines_midway = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert!(lines_midway > 1000, "a line per 10 ms interval, written as it went: {lines_midway}");
    sigint(&drop_proc);
    let out = drop_proc.finish(Duration::from_secs(30));
    assert!(out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", out.stdout, out.stderr);
    let last = *samples.last().unwrap();
    eprintln!("drop's VmRSS: {first} kB after 5 s, then {samples:?} kB every 5 s");
    // A row is tens of bytes: 3000 rows are well under a megabyte; anything
    // that grew per frame or per poll would show as many megabytes.
    assert!(last <= first + 4096, "memory grew from {first} kB to {last} kB: {samples:?}");
    let v = read_json(&json);
    let rows = v["series"]["t_s"].as_array().unwrap().len();
    assert!(rows > 2000, "the record has the whole series: {rows} rows");
    assert!(v["summary"]["interrupted"].as_bool().unwrap(), "{}", v["summary"]);
}
