//! /metrics during and after a real ladder with loss: blast -> drop over
//! af_packet on a veth pair in a namespace, at full rate (above what the
//! kernel path carries). Both tools' endpoints are scraped while the
//! ladder runs (blast's frames counter moves within a step, as drop's
//! does) and after it, while blast lingers, and the last scrapes are
//! compared with the JSON records: blast's frames and bytes with the steps'
//! `sent` and `warmup_sent`, its exact lost with the steps' `lost`, each step's account under
//! its qualifiers, its verdict gauge with the last step's `limit`; drop's
//! frames with its summary, its verdict gauge with its last series row.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// The endpoint's text, fetched from inside the namespace (the tools bind
/// its loopback); empty when nothing answered.
fn scrape(ns: &Netns, addr: &str) -> String {
    let args = ns.exec("curl", strings(&["-s", "-m", "3", &format!("http://{addr}/metrics")]));
    let out = std::process::Command::new("ip").args(&args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every sample of `name` whose labels contain each of `with`: (labels, value).
fn samples(text: &str, name: &str, with: &[&str]) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix(name)?.strip_prefix('{'))
        .filter_map(|rest| {
            let (labels, value) = rest.rsplit_once("} ")?;
            Some((labels.to_string(), value.trim().parse().ok()?))
        })
        .filter(|(labels, _)| with.iter().all(|w| labels.contains(w)))
        .collect()
}

fn sum(text: &str, name: &str, with: &[&str]) -> u64 {
    samples(text, name, with).iter().map(|(_, v)| *v as u64).sum()
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// One scrape of both tools while the ladder runs.
struct During {
    blast: u64,
    drop: u64,
}

/// Runs the ladder while scraping both endpoints every 400 ms; returns
/// blast's output, the scrapes made while it sent, and the scrapes of
/// both made while blast lingered after it.
fn ladder_with_scrapes(ns: &Netns, dir: &std::path::Path, control: &str, addrs: (&str, &str)) -> (Output, Vec<During>, (String, String)) {
    let json = dir.join("blast.json").display().to_string();
    let mut b = strings(&[
        "--port",
        "net_af_packet0",
        "--peer",
        control,
        "--size",
        "64",
        "--flows",
        "4",
        "--repeat",
        "2",
        "--warmup",
        "0.5",
        "--duration",
        "3",
        "--metrics",
        addrs.0,
        "--metrics-linger",
        "5s",
        "--json",
        &json,
        "--",
    ]);
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
    let mut blast = spawn("ip", &ns.exec(BLAST, b));
    let mut during = Vec::new();
    let until = Instant::now() + Duration::from_secs(90);
    let after = loop {
        std::thread::sleep(Duration::from_millis(400));
        let (bt, dt) = (scrape(ns, addrs.0), scrape(ns, addrs.1));
        if blast.seen_line("serving the final figures") {
            // Into the linger, past drop's next interval: both ends' last figures.
            std::thread::sleep(Duration::from_millis(2500));
            break (scrape(ns, addrs.0), scrape(ns, addrs.1));
        }
        during.push(During { blast: sum(&bt, "blastdrop_frames_total", &[]), drop: sum(&dt, "blastdrop_frames_total", &[]) });
        assert!(blast.try_status().is_none() && Instant::now() < until, "blast ended without lingering: {:?}", blast.try_status());
    };
    (blast.finish(Duration::from_secs(30)), during, after)
}

#[test]
fn metrics_during_and_after_a_lossy_ladder_match_the_records() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("metrics_during_and_after_a_lossy_ladder", Netns::with_pair) else { return };
    let dir = scratch("metrics-ladder");
    let control = format!("127.0.0.1:{}", free_port());
    let (blast_at, drop_at) = (format!("127.0.0.1:{}", free_port()), format!("127.0.0.1:{}", free_port()));
    let drop_json = dir.join("drop.json").display().to_string();
    let mut d = strings(&[
        "--port",
        "net_af_packet0",
        "--listen",
        &control,
        "--metrics",
        &drop_at,
        "--json",
        &drop_json,
        "--duration",
        "120",
        "--",
    ]);
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b", "--lcores=0@1,1@1"]));
    let mut drop = spawn("ip", &ns.exec(DROP, d));
    drop.wait_for_line("control on", Duration::from_secs(30));

    let (out, during, (blast_text, drop_text)) = ladder_with_scrapes(&ns, &dir, &control, (&blast_at, &drop_at));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    sigint(&drop);
    let drop_out = drop.finish(Duration::from_secs(30));
    assert_eq!(drop_out.status.code(), Some(130), "drop interrupted: {}\n{}", drop_out.stdout, drop_out.stderr);

    // While the ladder ran, blast's counter never stood still over 2 s in which drop's rose.
    let moved = during.windows(2).filter(|w| w[1].blast > w[0].blast).count();
    assert!(moved >= 6, "blast's frames counter moved between {moved} scrape pairs only");
    for w in during.windows(6) {
        let (first, last) = (&w[0], &w[5]);
        if last.drop > first.drop + 10_000 {
            assert!(last.blast > first.blast, "blast's counter stood still over 2 s while drop's rose by {}", last.drop - first.drop);
        }
    }

    let record = read_json(&dir.join("blast.json"));
    let steps = record["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{record}");
    let (mut sent, mut bytes, mut lost) = (0, 0, 0);
    for s in steps {
        let (s_sent, s_lost) = assert_exact(s);
        let q = format!(
            "step=\"{}\",run=\"{}\",queues=\"{}\",size=\"64\",shape=\"{}\"",
            s["step"],
            s["run"],
            s["queues"],
            s["shape"].as_str().unwrap()
        );
        assert_eq!(sum(&blast_text, "blastdrop_step_frames", &[&q, "account=\"sent\""]), s_sent, "{q}: {blast_text}");
        assert_eq!(sum(&blast_text, "blastdrop_step_frames", &[&q, "account=\"lost\""]), s_lost, "{q}: {blast_text}");
        let pct = samples(&blast_text, "blastdrop_step_loss_percent", &[&q]);
        assert!(pct.len() == 1 && (pct[0].1 - s["loss_pct"].as_f64().unwrap()).abs() < 1e-9, "{pct:?} {s}");
        // blast's frame counters count every frame its lanes sent: the warm-up's too.
        sent += s_sent + n(&s["warmup_sent"]["packets"]);
        bytes += n(&s["sent"]["bytes"]) + n(&s["warmup_sent"]["bytes"]);
        lost += s_lost;
    }
    assert!(lost > 0, "full rate over a veth loses frames: the test must see real loss");
    eprintln!("blast sent {sent} frames, lost {lost} exactly; /metrics said {}", sum(&blast_text, "blastdrop_frames_total", &[]));
    assert_eq!(sum(&blast_text, "blastdrop_frames_total", &["tool=\"blast\""]), sent, "{blast_text}");
    assert_eq!(sum(&blast_text, "blastdrop_bytes_total", &["tool=\"blast\""]), bytes, "{blast_text}");
    assert_eq!(sum(&blast_text, "blastdrop_lost_frames_total", &["tool=\"blast\"", "exact=\"true\""]), lost, "{blast_text}");
    // A sender sees no interval's loss: it exports none rather than a 0.
    assert!(samples(&blast_text, "blastdrop_interval_loss_percent", &[]).is_empty(), "{blast_text}");
    assert!(samples(&blast_text, "blastdrop_lost_frames_total", &["exact=\"false\""]).is_empty(), "{blast_text}");
    let limit = steps.last().unwrap()["limit"].as_str().unwrap();
    let on = samples(&blast_text, "blastdrop_verdict", &[]).into_iter().filter(|(_, v)| *v == 1.0).collect::<Vec<_>>();
    assert!(on.len() == 1 && on[0].0.contains(&format!("verdict=\"{limit}\"")), "verdict {limit}: {on:?}");

    // drop's figures, scraped after the ladder, against its record.
    let drop_record = read_json(&dir.join("drop.json"));
    let received = n(&drop_record["summary"]["received"]["packets"]);
    assert_eq!(sum(&drop_text, "blastdrop_frames_total", &["tool=\"drop\""]), received, "{drop_text}");
    let rows = drop_record["series"]["verdict"].as_array().unwrap();
    let last_verdict = rows.iter().rev().find_map(|v| v.as_str()).unwrap();
    let on = samples(&drop_text, "blastdrop_verdict", &[]).into_iter().filter(|(_, v)| *v == 1.0).collect::<Vec<_>>();
    assert!(on.len() == 1 && on[0].0.contains(&format!("verdict=\"{last_verdict}\"")), "verdict {last_verdict}: {on:?}");
}
