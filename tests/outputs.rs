//! Outputs a script can use: `--json -` (the record alone on stdout),
//! `--events -` (JSON lines while the run goes, a tick a second and a
//! final line), shell completions and man pages from the flags, and the
//! Debian package (built, installed, run and removed).

mod common;
use common::*;
use std::time::Duration;

fn null_eal() -> Vec<String> {
    let mut e = eal_base();
    e.extend(strings(&["--vdev=net_null0", "-l", "0,1"]));
    e
}

fn with_eal(args: &[&str], eal: Vec<String>) -> Vec<String> {
    let mut a = strings(args);
    a.push("--".into());
    a.extend(eal);
    a
}

#[test]
fn json_to_stdout_is_the_record_alone_for_blast_and_drop() {
    let _g = heavy();
    let out = run(BLAST, &with_eal(&["--duration", "1", "--rate", "100k", "--json", "-"], null_eal()), Duration::from_secs(30));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("stdout is one JSON document: {e}\n{}", out.stdout));
    assert_eq!(v["mode"], "single");
    assert_matches_schema(&v, "blast-single");
    assert!(v["summary"]["sent"]["packets"].as_u64().unwrap() > 50_000, "{v}");
    assert!(out.stderr.contains("--- blast summary"), "the human lines went to stderr: {}", out.stderr);

    let out = run(DROP, &with_eal(&["--duration", "1", "--json", "-"], null_eal()), Duration::from_secs(30));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("stdout is one JSON document: {e}\n{}", out.stdout));
    assert_eq!(v["tool"], "drop");
    assert_matches_schema(&v, "drop");
    assert!(v["summary"]["received"]["packets"].as_u64().unwrap() > 0, "{v}");
    assert!(out.stderr.contains("--- drop summary"), "{}", out.stderr);
}

#[test]
fn events_to_stdout_tick_every_second_and_end() {
    let _g = heavy();
    let out = run(BLAST, &with_eal(&["--duration", "3", "--rate", "100k", "--events", "-"], null_eal()), Duration::from_secs(30));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let lines: Vec<serde_json::Value> =
        out.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a JSON line: {e}: {l}"))).collect();
    for l in &lines {
        assert_matches_schema(l, "events");
    }
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"start"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"end"), "{kinds:?}");
    assert_eq!(lines.last().unwrap()["ok"], true);
    let ticks: Vec<&serde_json::Value> = lines.iter().filter(|l| l["event"] == "tick").collect();
    assert!(ticks.len() >= 2, "a tick a second over 3 s: {kinds:?}");
    for t in &ticks {
        assert_eq!(t["tool"], "blast");
        assert_eq!(t["side"], "sent");
        assert!(t["mpps"].as_f64().unwrap() > 0.05, "{t}");
        assert_eq!(t["queues"].as_array().unwrap().len(), 1);
    }
    let times: Vec<f64> = lines.iter().map(|l| l["time"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[1] >= w[0]), "in time order");

    // A failure still ends the stream, with the error.
    let dir = scratch("events");
    let ev = dir.join("e.jsonl");
    let out = run(BLAST, &with_eal(&["--port", "9", "--events", ev.to_str().unwrap()], null_eal()), Duration::from_secs(30));
    assert!(!out.status.success());
    let text = std::fs::read_to_string(&ev).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!((last["event"].as_str(), last["ok"].as_bool()), (Some("end"), Some(false)), "{text}");
    assert!(last["error"].as_str().unwrap().contains("port"), "{last}");
}

#[test]
fn the_schemas_in_docs_are_what_the_types_generate() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/schema");
    let mut kinds: Vec<(&str, Vec<String>, String)> = ["single", "ladder", "knee", "mlr", "replay", "paths", "not-started", "events"]
        .iter()
        .map(|k| {
            let name = if matches!(*k, "events" | "not-started") { k.to_string() } else { format!("blast-{k}") };
            (BLAST, strings(&["--generate-schema", k]), name)
        })
        .collect();
    kinds.push((DROP, strings(&["--generate-schema"]), "drop".into()));
    for (bin, args, name) in kinds {
        let out = run(bin, &args, Duration::from_secs(10));
        assert!(out.status.success(), "{name}: {}", out.stderr);
        let file = std::fs::read_to_string(format!("{dir}/{name}.schema.json")).unwrap_or_default();
        assert!(
            out.stdout.trim_end() == file.trim_end(),
            "docs/schema/{name}.schema.json differs from what the types generate: run scripts/schemas"
        );
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema", "{name}");
        jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{name} compiles: {e}"));
    }
}

/// A record's header typed, its own fields as JSON: blast's and drop's.
type Fields = serde_json::Map<String, serde_json::Value>;
type BlastRecord = records::Record<records::Mode, records::Config<serde_json::Value>, Fields>;
type DropRecord = records::Record<records::NoMode, records::Config<serde_json::Value>, Fields>;

/// Every record kind blast and drop write on net_null reads back into its
/// records type: the header (tool, mode, schema_version, version, config)
/// as `records::Record`, and whole into its kind's type (single, ladder,
/// replay and drop here; the knee's in tests/knee_faults.rs), and the not-started record (a device call
/// that never returned) whole.
#[test]
fn every_record_written_on_net_null_reads_back_into_its_type() {
    let _g = heavy();
    let dir = scratch("read-back");
    let json = |name: &str| dir.join(format!("{name}.json")).display().to_string();
    for (mode, flags) in [("single", vec!["--duration", "1"]), ("ladder", vec!["--duration", "0.5", "--warmup", "0.2", "--size", "64,128"])]
    {
        let path = json(mode);
        let mut a = strings(&["--port", "net_null0", "--json", &path]);
        a.extend(strings(&flags));
        let out = run(BLAST, &with_eal(&a.iter().map(String::as_str).collect::<Vec<_>>(), null_eal()), Duration::from_secs(30));
        assert!(out.status.success(), "{mode}: {}", out.stderr);
        let r: BlastRecord = serde_json::from_value(read_json(path.as_ref())).unwrap_or_else(|e| panic!("{mode} reads back: {e}"));
        assert_eq!((r.tool.as_str(), r.mode.mode.as_str()), ("blast", mode));
        assert_eq!((r.schema_version, r.version.as_str()), (records::SCHEMA_VERSION, records::VERSION));
        assert_eq!(r.config.config["port"][0], "net_null0", "{mode}");
        if mode == "single" {
            let whole: records::single::SingleRecord = reads_back_whole(mode, &read_json(path.as_ref()));
            let s = &whole.body.summary;
            assert_eq!((s.side.as_str(), whole.body.environment.port.name.as_str()), ("sender", "net_null0"));
            assert_eq!(s.sent.packets, s.queues.iter().map(|q| q.sent.packets).sum::<u64>());
        }
        if mode == "ladder" {
            let whole: records::ladder::LadderRecord = reads_back_whole(mode, &read_json(path.as_ref()));
            let l = &whole.body;
            assert_eq!(l.steps.iter().map(|s| s.size).collect::<Vec<_>>(), [64, 128]);
            assert_eq!((l.aggregates.len(), l.ladder.sizes.as_slice()), (2, &[64, 128][..]));
            assert_eq!(l.environment.sender.port.name, "net_null0");
            assert_eq!(l.step_series.iter().map(|s| (s.step, s.run)).collect::<Vec<_>>(), [(0, 1), (1, 1)]);
        }
    }
    let path = json("replay");
    let pcap = dir.join("r.pcap");
    std::fs::write(&pcap, pcap_bytes(&[(0, udp_frame(64, 1000)), (100, udp_frame(128, 1001))])).unwrap();
    let a = ["--port", "net_null0", "--pcap", &pcap.display().to_string(), "--json", &path];
    let out = run(BLAST, &with_eal(&a, null_eal()), Duration::from_secs(30));
    assert!(out.status.success(), "replay: {}", out.stderr);
    let whole: records::replay::ReplayRecord = reads_back_whole("replay", &read_json(path.as_ref()));
    assert_eq!(whole.mode.mode, "replay");
    let (c, s) = (&whole.body.capture, &whole.body.summary);
    assert_eq!((c.frames, c.format.as_str(), s.side.as_str()), (2, "pcap", "sender"));
    assert_eq!(s.sent.packets, s.queues.iter().map(|q| q.sent.packets).sum::<u64>());

    let path = json("drop");
    let out = run(DROP, &with_eal(&["--port", "net_null0", "--duration", "1", "--json", &path], null_eal()), Duration::from_secs(30));
    assert!(out.status.success(), "drop: {}", out.stderr);
    let r: DropRecord = serde_json::from_value(read_json(path.as_ref())).unwrap_or_else(|e| panic!("drop reads back: {e}"));
    assert_eq!((r.tool.as_str(), r.schema_version), ("drop", records::SCHEMA_VERSION));
    assert!(r.body.contains_key("summary") && !r.body.contains_key("mode"), "{:?}", r.body.keys());
    let whole: records::drop::DropRecord = reads_back_whole("drop", &read_json(path.as_ref()));
    let d = &whole.body;
    assert_eq!((d.summary.side.as_str(), d.environment.port.name.as_str()), ("receiver", "net_null0"));
    assert_eq!(d.summary.received.packets, d.summary.queues.iter().map(|q| q.received.packets).sum::<u64>());
    assert_eq!((d.history.windows_served, d.history.sessions.len()), (0, 0), "no --listen: nothing served");

    let path = json("not-started");
    let mut a = vec!["BLASTDROP_FAULT_STALL=rte_eth_dev_start".to_string(), DROP.to_string()];
    a.extend(with_eal(&["--port", "net_null0", "--device-timeout", "1", "--json", &path], null_eal()));
    let out = run("/usr/bin/env", &a, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    let r: records::not_started::NotStartedRecord =
        serde_json::from_value(read_json(path.as_ref())).unwrap_or_else(|e| panic!("not-started reads back: {e}"));
    assert_eq!((r.tool.as_str(), r.body.started, r.body.exit_code), ("drop", false, 3));
    assert_eq!(r.body.device_call.map(|c| c.call), Some("rte_eth_dev_start".to_string()));
}

#[test]
fn completions_and_man_pages_come_from_the_flags() {
    for bin in [BLAST, DROP] {
        let name = std::path::Path::new(bin).file_name().unwrap().to_str().unwrap().to_string();
        for shell in ["bash", "zsh", "fish"] {
            let out = run(bin, &strings(&["--generate-completions", shell]), Duration::from_secs(10));
            assert!(out.status.success(), "{name} {shell}: {}", out.stderr);
            assert!(out.stdout.contains("queues") && out.stdout.contains(&name), "{name} {shell}");
        }
        let out = run(bin, &strings(&["--generate-man"]), Duration::from_secs(10));
        assert!(out.status.success(), "{}", out.stderr);
        assert!(out.stdout.starts_with(".ie") || out.stdout.contains(".TH"), "{name}: roff");
        assert!(out.stdout.contains("queues"), "{name}: the flags");
    }
}

/// Removes the package however the test ends.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = std::process::Command::new("dpkg").args(["-r", "blastdrop"]).output();
    }
}

#[test]
fn the_debian_package_builds_installs_runs_and_removes() {
    if !is_root() || std::process::Command::new("dpkg-deb").arg("--version").output().is_err() {
        return skip_or_fail(
            "the_debian_package_builds_installs_runs_and_removes",
            "needs root and dpkg-deb (apt-get install dpkg-dev): run the tests as root",
        );
    }
    let _g = heavy();
    let dir = scratch("package");
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("bash").arg(format!("{root}/scripts/package")).arg(&dir).output().unwrap();
    assert!(out.status.success(), "scripts/package: {}", String::from_utf8_lossy(&out.stderr));
    let deb = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(deb.ends_with(".deb") && std::path::Path::new(&deb).exists(), "{deb}");
    let info = std::process::Command::new("dpkg-deb").args(["-f", &deb, "Depends"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&info.stdout).contains("librte-"),
        "depends on the DPDK runtime: {}",
        String::from_utf8_lossy(&info.stdout)
    );

    let _installed = Installed;
    let i = std::process::Command::new("dpkg").args(["-i", &deb]).output().unwrap();
    assert!(i.status.success(), "dpkg -i: {}{}", String::from_utf8_lossy(&i.stdout), String::from_utf8_lossy(&i.stderr));
    let v = run("/usr/bin/blast", &strings(&["--version"]), Duration::from_secs(10));
    assert!(v.status.success() && v.stdout.starts_with("blast "), "{}", v.stdout);
    match std::process::Command::new("man").args(["-w", "blast"]).output() {
        Ok(m) if m.status.success() => assert!(String::from_utf8_lossy(&m.stdout).contains("blast.1")),
        _ => assert!(std::path::Path::new("/usr/share/man/man1/blast.1.gz").exists(), "the man page is installed"),
    }
    assert!(std::path::Path::new("/usr/share/bash-completion/completions/drop").exists());
    let r = run("/usr/bin/blast", &with_eal(&["--duration", "1", "--rate", "10k"], null_eal()), Duration::from_secs(30));
    assert!(r.status.success(), "the installed blast runs: {}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("--- blast summary"), "{}", r.stdout);
}

/// `blast ... | head -3`: once the reader has gone, a human line is lost and
/// nothing else; the run ends as it would have (exit 0), with its record.
/// Before `say!` wrote through `out::say`, `println!` ended it with a panic.
#[test]
fn a_closed_stdout_loses_lines_not_the_run() {
    let _g = heavy();
    let dir = scratch("closed-stdout");
    let json = dir.join("run.json");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let args = with_eal(&["--duration", "1", "--rate", "100k", "--json", json.to_str().unwrap()], null_eal());
    let out = std::process::Command::new(BLAST)
        .args(&args)
        .stdout(std::process::Stdio::from(writer))
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("blast runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let v = read_json(&json);
    assert!(v["summary"]["sent"]["packets"].as_u64().unwrap() > 0, "{v}");
}
