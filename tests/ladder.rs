//! A whole ladder over net_memif: drop --listen and blast --peer as separate
//! processes, the control channel over loopback.

mod common;
use common::*;
use std::time::Duration;

struct Drop {
    proc: Running,
    addr: String,
    sock: String,
}

fn start_drop(dir: &std::path::Path, queues: u16, extra: &[&str]) -> Drop {
    let sock = dir.join("memif.sock").display().to_string();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut d = strings(&["--port", "net_memif0", "--queues", &queues.to_string(), "--listen", &addr, "--duration", "120"]);
    d.extend(strings(extra));
    d.push("--".into());
    d.extend(eal_base());
    d.push(format!("--vdev=net_memif0,role=server,socket={sock},socket-abstract=no"));
    let map: Vec<String> = (0..=queues).map(|l| format!("{l}@1")).collect();
    d.push(format!("--lcores={}", map.join(",")));
    let mut proc = spawn(DROP, &d);
    proc.wait_for_line("control on", Duration::from_secs(30));
    Drop { proc, addr, sock }
}

fn blast_args(d: &Drop, queues: &str, sizes: &str, extra: &[&str]) -> Vec<String> {
    let mut b = strings(&["--port", "net_memif0", "--peer", &d.addr, "--queues", queues, "--size", sizes]);
    b.extend(strings(extra));
    b.push("--".into());
    b.extend(eal_base());
    b.push(format!("--vdev=net_memif0,role=client,socket={},socket-abstract=no", d.sock));
    let max_q: u16 = queues.split(',').map(|q| q.parse::<u16>().unwrap()).max().unwrap();
    let map: Vec<String> = (0..=max_q).map(|l| format!("{l}@0")).collect();
    b.push(format!("--lcores={}", map.join(",")));
    b
}

#[test]
fn ladder_over_memif_writes_table_json_csv_and_svg() {
    let _g = heavy();
    let dir = scratch("ladder");
    let (json, csv, svg) = (dir.join("l.json"), dir.join("l.csv"), dir.join("l.svg"));
    let drop = start_drop(&dir, 2, &[]);
    let mut extra = strings(&["--rate", "200k", "--flows", "4", "--warmup", "0.5", "--duration", "1", "--published-gbps", "1", "--json"]);
    extra.extend([json.display().to_string(), "--csv".into(), csv.display().to_string(), "--plot".into(), svg.display().to_string()]);
    let extra_ref: Vec<&str> = extra.iter().map(String::as_str).collect();
    let out = run(BLAST, &blast_args(&drop, "1,2", "64,512", &extra_ref), Duration::from_secs(120));
    sigint(&drop.proc);
    let drop_out = drop.proc.finish(Duration::from_secs(30));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    assert!(drop_out.status.code() == Some(EXIT_INTERRUPTED), "drop: {:?} {}\n{}", drop_out.status, drop_out.stdout, drop_out.stderr);

    // The table: a header of two lines and a row per step.
    let rows: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && l.split_whitespace().count() >= 15)
        .collect();
    assert_eq!(rows.len(), 4, "{}", out.stdout);
    // memif loses nothing, so a step's limit is the sender's or none: a
    // step that delivered the pace is "none"; one whose lanes were
    // descheduled (two queues share blast's one core here, and a loaded
    // machine deschedules even one) and fell short of it by more than 1%
    // is "sender", which is then the truth.
    for r in &rows {
        let f: Vec<&str> = r.split_whitespace().collect();
        let (offered, sent): (f64, f64) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        let limit = *f.last().unwrap();
        if sent >= offered * 0.995 {
            assert_eq!(limit, "none", "delivered the pace: {r}");
        } else if sent < offered * 0.985 {
            assert_eq!(limit, "sender", "fell short of the pace: {r}");
        } else {
            assert!(limit == "none" || limit == "sender", "{r}");
        }
        assert_eq!(f[10], "0.000", "memif loses nothing: {r}");
    }
    assert!(out.stdout.contains("Gb/s wire"));
    assert!(out.stdout.contains("ceiling (64 B frames)") || out.stdout.contains("no ceiling (64 B frames)"), "{}", out.stdout);
    assert!(out.stderr.contains("step 4/4"), "progress on stderr: {}", out.stderr);

    // JSON: valid against the documented schema.
    let v = read_json(&json);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/schema/blast-ladder.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "record does not match docs/schema: {errors:#?}");
    assert_eq!(v["environment"]["receiver"]["driver"], "net_memif");
    let steps = v["steps"].as_array().unwrap();
    let order: Vec<(u64, u64)> = steps.iter().map(|s| (s["queues"].as_u64().unwrap(), s["size"].as_u64().unwrap())).collect();
    assert_eq!(order, [(1, 64), (2, 64), (1, 512), (2, 512)], "size-major order");

    // Every step's received count is drop's own count for that window.
    let windows: Vec<u64> = drop_out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("drop: window "))
        .map(|l| l.split("received ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(windows.len(), 4, "{}", drop_out.stdout);
    for (s, w) in steps.iter().zip(&windows) {
        assert_eq!(s["received"]["packets"].as_u64().unwrap(), *w);
        assert_eq!(s["receiver"]["packets"].as_u64().unwrap(), *w);
        assert!(*w > 100_000, "about 200k frames in a 1 s window, got {w}");
        let sent = s["sent"]["packets"].as_u64().unwrap();
        assert_eq!(*w, sent, "memif pushes back rather than drop: every frame of the trial arrives inside drop's window");
        assert_eq!(s["receiver"]["probe"]["lost_estimate"], 0);
        assert_eq!(s["loss_pct"], 0.0);
        let limit = s["limit"].as_str().unwrap();
        // A lane the host stood still (named in the evidence) may fall short on one queue too.
        let host_held = s["verdict"]["limits"][0]["evidence"].as_str().unwrap_or_default().contains("stood still");
        assert!(limit == "none" || (limit == "sender" && (s["queues"] == 2 || host_held)), "paced and fully delivered: {}", s["verdict"]);
        assert_eq!(s["verdict"]["limits"][0]["kind"], limit);
        assert_eq!(
            s["receiver"]["queues"].as_array().unwrap().len() as u64,
            s["queues"].as_u64().unwrap(),
            "drop followed the queue count"
        );
    }

    // CSV: a header and a row per step.
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv_text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("step,run,queues,size_bytes"));

    // SVG: XML with a series per frame size and labelled axes.
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&svg_text).expect("the SVG is XML");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    for want in [
        "64 B frames",
        "512 B frames",
        "queues (log2 scale)",
        "received Mpps (million frames/s)",
        "frame size (bytes, FCS included)",
        "published 1 Gb/s (wire)",
        "line rate, Gb/s of frames",
        // 512 B at 1 Gb/s: 0.235 Mpps, near the paced 0.2 Mpps; 64 B's 1.488 Mpps is off scale.
        "line rate 512 B: 0.23 Mpps",
        "(line rate at 1 Gb/s off scale)",
    ] {
        assert!(texts.contains(&want), "{want:?} missing from the SVG: {texts:?}");
    }
    // Every step's point, as drawn, is in its size's marker and filled with
    // its verdict's colour, and the verdict is keyed in the legend.
    let v = read_json(&json);
    let steps: Vec<ladder::StepRecord> = serde_json::from_value(v["steps"].clone()).expect("the steps read back");
    let points: Vec<ladder::drawn::DrawnPoint> =
        ladder::drawn::drawn_points(&svg_text).unwrap().into_iter().filter(|p| p.x < 700.0).collect();
    assert_eq!(points.len(), steps.len(), "a point per step (no --repeat): {points:?}");
    for s in &steps {
        let class = s.class();
        assert!(texts.contains(&ladder::verdict_words(class).as_str()), "{class} missing from the SVG legend");
        let (shape, outline) = ladder::series_marker(usize::from(s.size == 512));
        let fill = ladder::verdict_color(class);
        assert!(
            points.iter().any(|p| (p.shape, p.outline, p.fill) == (shape, outline, fill)),
            "step {} ({} B, {} queue(s)): no point in its marker filled with its verdict {class}: {points:?}",
            s.step + 1,
            s.size,
            s.queues
        );
    }
}

#[test]
fn steps_the_receiver_cannot_take_are_refused_before_sending() {
    let _g = heavy();
    let dir = scratch("ladder-refuse");
    let drop = start_drop(&dir, 1, &["--max-size", "1000"]);
    // A single count beyond the limit is refused (a ladder of several drops it: tests/ladder_fit.rs).
    let out = run(BLAST, &blast_args(&drop, "2", "64", &["--duration", "1"]), Duration::from_secs(60));
    assert!(!out.status.success());
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("blast: error: the ladder needs 2 RX queues"), "{last}");
    assert!(!out.stdout.contains("step 1"), "nothing sent: {}", out.stdout);
    let out = run(BLAST, &blast_args(&drop, "1", "64,1500", &["--duration", "1"]), Duration::from_secs(60));
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(last.contains("restart drop with --max-size 1500"), "{last}");
    sigint(&drop.proc);
    assert!(drop.proc.finish(Duration::from_secs(30)).status.code() == Some(EXIT_INTERRUPTED));
}

#[test]
fn a_receiver_that_vanishes_mid_ladder_ends_it_with_a_clear_error() {
    let _g = heavy();
    let dir = scratch("ladder-vanish");
    let drop = start_drop(&dir, 1, &[]);
    let mut blast = spawn(
        BLAST,
        &blast_args(&drop, "1", "64,128,256", &["--rate", "100k", "--warmup", "0.2", "--duration", "2", "--control-timeout", "3"]),
    );
    blast.wait_for_line("step 1 (", Duration::from_secs(60));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(drop.proc.pid()), nix::sys::signal::Signal::SIGKILL).unwrap();
    let _ = drop.proc.finish(Duration::from_secs(10));
    let out = blast.finish(Duration::from_secs(60));
    assert!(!out.status.success(), "{}", out.stdout);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("blast: error: ladder stopped after"), "{last}");
    assert!(last.contains("drop"), "{last}");
}
