//! `blast` to `drop` over net_memif: two processes sharing memory, so what
//! arrives can be checked frame by frame against what was sent.

mod common;
use common::*;
use std::time::Duration;

struct Pair {
    drop_json: std::path::PathBuf,
    blast_json: std::path::PathBuf,
    drop_out: Output,
    blast_out: Output,
}

/// Starts drop (memif server) and blast (memif client) with `queues` queues
/// and `count` frames at `rate`, each process's lcores on its own CPU.
fn memif_run(name: &str, queues: u16, flows: u32, count: u64, rate: &str, size: u32) -> Pair {
    let dir = scratch(name);
    let sock = dir.join("memif.sock").display().to_string();
    let drop_json = dir.join("drop.json");
    let blast_json = dir.join("blast.json");
    let lcores = |cpu: u32| {
        let map: Vec<String> = (0..=queues).map(|l| format!("{l}@{cpu}")).collect();
        format!("--lcores={}", map.join(","))
    };
    let mut d = strings(&["--port", "net_memif0", "--queues", &queues.to_string(), "--count", &count.to_string(), "--duration", "60"]);
    d.extend(["--max-size".into(), size.max(1518).to_string(), "--json".into(), drop_json.display().to_string(), "--".into()]);
    d.extend(eal_base());
    d.push(format!("--vdev=net_memif0,role=server,socket={sock},socket-abstract=no"));
    d.push(lcores(1));
    let mut drop_proc = spawn(DROP, &d);
    drop_proc.wait_for_line("drop: port", Duration::from_secs(30));

    let mut b = strings(&["--port", "net_memif0", "--queues", &queues.to_string(), "--flows", &flows.to_string()]);
    b.extend(["--count".into(), count.to_string(), "--rate".into(), rate.into(), "--size".into(), size.to_string()]);
    b.extend(["--json".into(), blast_json.display().to_string(), "--".into()]);
    b.extend(eal_base());
    b.push(format!("--vdev=net_memif0,role=client,socket={sock},socket-abstract=no"));
    b.push(lcores(0));
    let blast_out = run(BLAST, &b, Duration::from_secs(90));
    let drop_out = drop_proc.finish(Duration::from_secs(60));
    assert!(blast_out.status.success(), "blast failed:\n{}\n{}", blast_out.stdout, blast_out.stderr);
    assert!(drop_out.status.success(), "drop failed:\n{}\n{}", drop_out.stdout, drop_out.stderr);
    Pair { drop_json, blast_json, drop_out, blast_out }
}

#[test]
fn drop_receives_exactly_what_blast_sent_over_memif() {
    let _g = heavy();
    let count = 300_000;
    let p = memif_run("memif1", 1, 4, count, "300k", 64);
    let d = read_json(&p.drop_json);
    let b = read_json(&p.blast_json);
    let (ds, bs) = (&d["summary"], &b["summary"]);
    assert_eq!(bs["sent"]["packets"], count);
    assert_eq!(ds["received"]["packets"], count, "drop: {}", p.drop_out.stdout);
    assert_eq!(ds["received"]["bytes"], count * 64);
    assert_eq!(ds["side"], "receiver");
    for k in ["lost_estimate", "reordered", "duplicates", "late"] {
        assert_eq!(ds["probe"][k], 0, "{k}");
    }
    assert_eq!(ds["no_probe"], 0);
    // (memif's own port counters read zero once the peer has gone, so the
    // port's ipackets is not compared here; the af_packet test does.)
    // Per stream: the receiver's counts equal the sender's and add up.
    let sent: Vec<(u64, u64)> =
        bs["streams"].as_array().unwrap().iter().map(|s| (s["id"].as_u64().unwrap(), s["sent"].as_u64().unwrap())).collect();
    let got: Vec<(u64, u64)> =
        ds["streams"].as_array().unwrap().iter().map(|s| (s["id"].as_u64().unwrap(), s["received"].as_u64().unwrap())).collect();
    assert_eq!(sent.len(), 4);
    assert_eq!(got, sent);
    assert_eq!(got.iter().map(|s| s.1).sum::<u64>(), count);
    // Paced: the sender's achieved rate is near what was asked.
    let mpps = bs["sent"]["mpps"].as_f64().unwrap();
    assert!((mpps - 0.3).abs() < 0.03, "achieved {mpps} Mpps for 0.3 asked");
    assert!(p.blast_out.stdout.contains("offered 0.300 Mpps"));
}

#[test]
fn two_queues_over_memif_pair_queue_to_queue() {
    let _g = heavy();
    let count = 100_000;
    let p = memif_run("memif2", 2, 2, count, "200k", 1500);
    let d = read_json(&p.drop_json);
    let ds = &d["summary"];
    assert_eq!(ds["received"]["packets"], count);
    assert_eq!(ds["received"]["bytes"], count * 1500);
    assert_eq!(ds["probe"]["lost_estimate"], 0);
    assert_eq!(ds["probe"]["reordered"], 0);
    assert_eq!(ds["split_streams"], 0);
    let per_q: Vec<u64> = ds["queues"].as_array().unwrap().iter().map(|q| q["received"]["packets"].as_u64().unwrap()).collect();
    assert_eq!(per_q, [count / 2, count / 2], "memif pairs TX queue i with RX queue i");
    assert_eq!(d["environment"]["lcores"].as_array().unwrap().len(), 2);
    let b = read_json(&p.blast_json);
    assert_eq!(b["summary"]["sent"]["packets"], count);
}

#[test]
fn the_c_reference_sender_is_counted_exactly_like_blast() {
    let _g = heavy();
    let dir = scratch("memif-ref");
    let sock = dir.join("memif.sock").display().to_string();
    let drop_json = dir.join("drop.json");
    let count = 150_000u64;
    let mut d = strings(&["--port", "net_memif0", "--count", &count.to_string(), "--duration", "60", "--json"]);
    d.push(drop_json.display().to_string());
    d.push("--".into());
    d.extend(eal_base());
    d.push(format!("--vdev=net_memif0,role=server,socket={sock},socket-abstract=no"));
    d.push("--lcores=0@1,1@1".into());
    let mut drop_proc = spawn(DROP, &d);
    drop_proc.wait_for_line("drop: port", Duration::from_secs(30));

    let mut r = eal_base();
    r.push(format!("--vdev=net_memif0,role=client,socket={sock},socket-abstract=no"));
    r.push("--lcores=0@0,1@0".into());
    r.extend(strings(&["--", "--count", &count.to_string(), "--flows", "3", "--size", "128"]));
    let out = run(env!("BLAST_REF"), &r, Duration::from_secs(60));
    assert!(out.status.success(), "blast-ref: {}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains(&format!("sent {count} frames")), "{}", out.stdout);
    let drop_out = drop_proc.finish(Duration::from_secs(30));
    assert!(drop_out.status.success(), "{}", drop_out.stderr);

    let v = read_json(&drop_json);
    let s = &v["summary"];
    assert_eq!(s["received"]["packets"], count);
    assert_eq!(s["received"]["bytes"], count * 128);
    assert_eq!(s["no_probe"], 0, "the C sender's frames carry blastdrop's probe");
    for k in ["lost_estimate", "reordered", "duplicates", "late"] {
        assert_eq!(s["probe"][k], 0, "{k}");
    }
    let per: Vec<u64> = s["streams"].as_array().unwrap().iter().map(|x| x["received"].as_u64().unwrap()).collect();
    assert_eq!(per, [50_000, 50_000, 50_000], "same flow plan as blast");
}
