//! Honest rates: arrival shapes over memif, round trips through drop
//! --reflect, and the knee search over a path with a real ceiling (af_packet
//! into a receiver that spends 100k cycles a frame).

mod common;
use common::*;
use std::time::Duration;

/// drop on the memif server side, with `extra` flags.
fn memif_drop(dir: &std::path::Path, extra: &[&str]) -> (Running, String) {
    let sock = dir.join("memif.sock").display().to_string();
    let mut d = strings(&["--port", "net_memif0", "--duration", "120"]);
    d.extend(strings(extra));
    d.push("--".into());
    d.extend(eal_base());
    d.extend([format!("--vdev=net_memif0,role=server,socket={sock},socket-abstract=no"), "--lcores=0@1,1@1".into()]);
    let mut p = spawn(DROP, &d);
    p.wait_for_line("drop: port", Duration::from_secs(30));
    (p, sock)
}

fn memif_blast(sock: &str, args: &[&str]) -> Output {
    let mut b = strings(&["--port", "net_memif0"]);
    b.extend(strings(args));
    b.push("--".into());
    b.extend(eal_base());
    b.extend([format!("--vdev=net_memif0,role=client,socket={sock},socket-abstract=no"), "--lcores=0@0,1@0".into()]);
    run(BLAST, &b, Duration::from_secs(90))
}

/// Whether an even shape's figures are those of one frame every 5 us.
fn even_held(even: &serde_json::Value) -> bool {
    even["frames_per_send"].as_f64().unwrap() < 1.1 && (even["mean_gap_us"].as_f64().unwrap() - 5.0).abs() < 0.5
}

#[test]
fn paced_shapes_hold_the_rate_and_differ_as_asked() {
    let _g = heavy();
    let dir = scratch("shapes");
    let (drop, sock) = memif_drop(&dir, &[]);
    let shape_run = |shape: &str, attempt: u32| {
        let json = dir.join(format!("{}-{attempt}.json", shape.replace(':', "-")));
        let j = json.display().to_string();
        let out = memif_blast(&sock, &["--rate", "200k", "--shape", shape, "--duration", "2", "--json", &j]);
        assert!(out.status.success(), "blast --shape {shape}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains(&format!("shape: {shape} asked; achieved")), "{}", out.stdout);
        let summary = read_json(&json)["summary"].clone();
        let mpps = summary["achieved_shape"]["achieved_mpps"].as_f64().unwrap();
        // The pacer catches a stalled lane up, so the mean rate holds, unless
        // the host held the lanes back past the run's end: then the record
        // says so (CI saw 0.1895 for 0.2, the ring full 240865 times and the
        // lanes standing still under the hypervisor's steal).
        let host_held =
            summary["stalls"]["total_ms"].as_f64().unwrap_or(0.0) >= 100.0 || summary["ring_full_retries"].as_u64().unwrap_or(0) > 0;
        assert!((mpps - 0.2).abs() / 0.2 < 0.02 || host_held, "{shape}: achieved {mpps} Mpps for 0.2 asked, the host not named");
        (summary, out.stdout)
    };
    // A lane held up by its host catches up in one send, and blast says
    // so: a try whose even shape did not hold must carry that note, and
    // one of three must hold (CI's 2 CPUs lost 10% of a run once), unless
    // every try was held back by its host (the lanes stood still for 5% of
    // the run or more, or the receiver on the same host left the ring
    // full): then the shape cannot be checked on this machine, and the
    // test says so rather than blame the pacer.
    let mut even = None;
    let mut host_held_every_try = true;
    for attempt in 0..3 {
        let (summary, stdout) = shape_run("even", attempt);
        let a = summary["achieved_shape"].clone();
        // blast's own rule (more than 5% of frames bunched) is stricter than
        // even_held's: a try near its edge (5.1% once on CI, a stall of the
        // host behind it) carries the note, and counts as not held.
        if even_held(&a) && summary.get("shape_bunched").is_none() {
            even = Some(a);
            break;
        }
        let note = summary["shape_bunched"].as_str().unwrap_or_else(|| panic!("even did not hold and blast did not say why: {summary}"));
        assert!(note.contains("went out bunched") && note.contains("held back by"), "{note}");
        assert!(stdout.contains(&format!("  shape not held: {note}")), "{stdout}");
        let stalled_ms = summary["stalls"]["total_ms"].as_f64().unwrap();
        let ring_full = summary["ring_full_retries"].as_u64().unwrap();
        host_held_every_try &= stalled_ms >= 100.0 || ring_full > 0;
        eprintln!("try {attempt}: even did not hold: {note}");
    }
    if even.is_none() {
        assert!(host_held_every_try, "even held in none of three tries, and not every miss was the host's (each said why above)");
        eprintln!("even pacing not checked: the host held the lanes back in all three tries (each said why above)");
    }
    let (burst_summary, _) = shape_run("burst:16", 0);
    let burst = burst_summary["achieved_shape"].clone();
    // The gaps between bursts hold only while the host lets the lane keep
    // its schedule: a run whose lanes stood still, or whose receiver (on
    // the same 2 CPUs) left the ring full, says so, and its spread is the
    // host's (0.95 seen at a load of 7 on 2 CPUs), not the pacer's.
    let burst_held_back =
        burst_summary["stalls"]["count"].as_u64().unwrap_or(0) > 0 || burst_summary["ring_full_retries"].as_u64().unwrap_or(0) > 0;
    let poisson = shape_run("poisson", 0).0["achieved_shape"].clone();
    sigint(&drop);
    assert!(drop.finish(Duration::from_secs(30)).status.code() == Some(EXIT_INTERRUPTED));

    if let Some(even) = &even {
        assert!(even["frames_per_send"].as_f64().unwrap() < 1.1, "even: one frame per tick: {even}");
        assert!((even["mean_gap_us"].as_f64().unwrap() - 5.0).abs() < 0.5, "200k/s: 5 us apart: {even}");
        assert!(even["gap_spread"].as_f64().unwrap() < 0.5, "even gaps barely vary: {even}");
    }
    assert_eq!(burst["frames_per_send"].as_f64().unwrap(), 16.0, "{burst}");
    assert_eq!(burst["max_frames_per_send"], 16);
    if burst_held_back {
        // A lane that found the ring full or stood still sent its bursts
        // late: the mean gap is then the host's (84.3 us for 80 seen on CI,
        // the median still 76.5, the ring full behind it), as is the spread.
        eprintln!("burst gaps not checked: the host held the lanes back (stalls or a full ring, in the record): {burst_summary}");
    } else {
        assert!((burst["mean_gap_us"].as_f64().unwrap() - 80.0).abs() < 4.0, "16 frames every 80 us: {burst}");
        assert!(burst["gap_spread"].as_f64().unwrap() < 0.5, "neither do bursts': {burst}");
    }
    assert!(poisson["gap_spread"].as_f64().unwrap() > 2.0, "Poisson gaps vary as exponential ones do (about 3.2): {poisson}");
}

#[test]
fn reflected_probes_all_come_back_and_their_percentiles_rise() {
    let _g = heavy();
    let dir = scratch("reflect");
    let (drop, sock) = memif_drop(&dir, &["--reflect"]);
    let json = dir.join("b.json");
    let j = json.display().to_string();
    let out = memif_blast(&sock, &["--reflect", "--count", "20000", "--rate", "50k", "--shape", "even", "--json", &j]);
    sigint(&drop);
    let drop_out = drop.finish(Duration::from_secs(30));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    assert!(drop_out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", drop_out.stdout, drop_out.stderr);
    let s = &read_json(&json)["summary"];
    assert_eq!(s["sent"]["packets"], 20000);
    assert_eq!(s["reflected"], 20000, "every probe came back: {}", out.stdout);
    let l = &s["latency"];
    assert_eq!(l["count"], 20000, "one round trip per probe sent");
    let ps: Vec<f64> =
        ["min_us", "p50_us", "p90_us", "p99_us", "p99.9_us", "p99.99_us", "max_us"].iter().map(|k| l[k].as_f64().unwrap()).collect();
    assert!(ps.windows(2).all(|w| w[0] <= w[1]), "percentiles are monotonic: {ps:?}");
    assert!(ps[0] > 0.0, "a round trip takes time: {ps:?}");
    let buckets: u64 = s["latency_histogram"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(buckets, 20000, "the exported histogram holds every sample");
    assert!(
        out.stdout.contains("round trip (reflected by drop, 20000 probes back of 20000 sent; on blast's own clock): P50"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_rate_and_shape_ladder_times_every_step_and_names_its_traffic() {
    let _g = heavy();
    let dir = scratch("rate-shape");
    let (drop, addr, sock) = listening_drop(&dir, "m", 1, &["--reflect"]);
    let (json, csv) = (dir.join("l.json"), dir.join("l.csv"));
    let (j, c) = (json.display().to_string(), csv.display().to_string());
    let args = memif_blast_args(
        &sock,
        1,
        &[
            "--peer",
            &addr,
            "--rate",
            "100k,300k",
            "--shape",
            "even,burst:8",
            "--reflect",
            "--duration",
            "1",
            "--warmup",
            "0.2",
            "--json",
            &j,
            "--csv",
            &c,
        ],
    );
    let out = run(BLAST, &args, Duration::from_secs(120));
    sigint(&drop);
    let drop_out = drop.finish(Duration::from_secs(30));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    assert!(drop_out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", drop_out.stdout, drop_out.stderr);

    let v = read_json(&json);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/schema/blast-ladder.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "the record does not match docs/schema: {errors:#?}");
    let steps = v["steps"].as_array().unwrap();
    let traffic: Vec<(f64, &str)> = steps.iter().map(|s| (s["offered_mpps"].as_f64().unwrap(), s["shape"].as_str().unwrap())).collect();
    assert_eq!(traffic, [(0.1, "even"), (0.1, "burst:8"), (0.3, "even"), (0.3, "burst:8")], "rate outer, shape inner");
    for s in steps {
        assert!(s["error"].is_null(), "{s}");
        let l = &s["latency"];
        assert!(l["count"].as_u64().unwrap() > 0, "every step timed probes: {l}");
        let ps: Vec<f64> =
            ["p50_us", "p90_us", "p99_us", "p99.9_us", "p99.99_us", "max_us"].iter().map(|k| l[k].as_f64().unwrap()).collect();
        assert!(ps.windows(2).all(|w| w[0] <= w[1]) && ps[0] > 0.0, "{ps:?}");
        assert!(s["loss_pct"].is_number(), "drop's count gives the loss: {s}");
        // The paced rate was delivered (the sender sends in whole bursts).
        let sent = s["sent"]["mpps"].as_f64().unwrap();
        let offered = s["offered_mpps"].as_f64().unwrap();
        // Short only as the step's verdict explains: the sender named, its
        // lanes held back by their host (CI saw 0.090 for 0.1 under steal).
        let sender_named = s["limit"].as_str().unwrap_or_default().contains("sender")
            && (s["stalls"]["sender"]["count"].as_u64().unwrap_or(0) > 0 || s["ring_full_retries"].as_u64().unwrap_or(0) > 0);
        assert!((sent - offered).abs() / offered < 0.05 || sent < offered && sender_named, "sent {sent} Mpps for {offered} offered: {s}");
    }
    assert_eq!(v["ladder"]["rates"], serde_json::json!([100000.0, 300000.0]));
    assert_eq!(v["ladder"]["shapes"], serde_json::json!(["even", "burst:8"]));
    assert_eq!(v["aggregates"].as_array().unwrap().len(), 4, "each traffic its own aggregate");

    // The round-trip table: a row per step with rate, shape, loss and limit,
    // and per rate the even shape as the floor, the bursty one as the ceiling.
    let table = out
        .stdout
        .split("round trip (drop --reflect; both stamps on blast's own clock), microseconds:")
        .nth(1)
        .expect("the round-trip table");
    let rows: Vec<&str> = table.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).collect();
    assert_eq!(rows.len(), 4, "{table}");
    assert!(rows[0].contains("0.100") && rows[0].contains("even") && rows[1].contains("burst:8") && rows[3].contains("0.300"), "{table}");
    let pairs: Vec<&str> = table.lines().filter(|l| l.starts_with("at ")).collect();
    assert_eq!(pairs.len(), 2, "{table}");
    assert!(
        pairs[0].starts_with("at 0.100 Mpps") && pairs[0].contains("even (floor)") && pairs[0].contains("burst:8 (ceiling)"),
        "{table}"
    );
    assert!(pairs[1].starts_with("at 0.300 Mpps"), "{table}");

    // The CSV: rate and shape columns on every row.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (shape_col, rate_col, p99_col) = (
        head.iter().position(|h| *h == "shape").unwrap(),
        head.iter().position(|h| *h == "offered_mpps").unwrap(),
        head.iter().position(|h| *h == "p99_us").unwrap(),
    );
    let got: Vec<(String, String)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert!(f[p99_col].parse::<f64>().is_ok(), "{l}");
            (f[rate_col].to_string(), f[shape_col].to_string())
        })
        .collect();
    let want = [("0.100000", "even"), ("0.100000", "burst:8"), ("0.300000", "even"), ("0.300000", "burst:8")];
    assert_eq!(got, want.map(|(r, s)| (r.to_string(), s.to_string())));
}

#[test]
fn an_imix_of_whole_cycles_arrives_as_the_mix_exactly() {
    let _g = heavy();
    let dir = scratch("imix");
    let drop_json = dir.join("drop.json");
    let dj = drop_json.display().to_string();
    let (drop, sock) = memif_drop(&dir, &["--json", &dj]);
    let json = dir.join("b.json");
    let j = json.display().to_string();
    // 1000 cycles of the simple IMIX (7 x 64, 4 x 594, 1 x 1518 B), paced so memif loses none.
    let out = memif_blast(&sock, &["--size", "imix", "--count", "12000", "--rate", "100k", "--shape", "even", "--json", &j]);
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("size mix imix (7 x 64 B, 4 x 594 B, 1 x 1518 B per cycle of 12; mean 361.8 B)"), "{}", out.stdout);
    std::thread::sleep(Duration::from_millis(300));
    sigint(&drop);
    let drop_out = drop.finish(Duration::from_secs(30));
    assert!(drop_out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", drop_out.stdout, drop_out.stderr);

    assert_matches_schema(&read_json(&json), "blast-single");
    let sent = &read_json(&json)["summary"]["sent"];
    assert_eq!(sent["packets"], 12000);
    assert_eq!(sent["bytes"], 1000 * 4342, "each frame's own bytes, FCS included");
    let d = &read_json(&drop_json)["summary"];
    assert_eq!(d["received"]["packets"], 12000, "{}", drop_out.stdout);
    assert_eq!(d["received"]["bytes"], 1000 * 4342);
    let sizes = serde_json::json!([{"size": 64, "frames": 7000}, {"size": 594, "frames": 4000}, {"size": 1518, "frames": 1000}]);
    assert_eq!(d["sizes"], sizes, "drop's sizes are the mix, exactly");
    assert_eq!(d["probe"]["lost_estimate"], 0);
    assert_eq!(d["probe"]["received"], 12000, "every size carries the probe");
    assert!(drop_out.stdout.contains("probe frames by size (FCS incl.): 64 B: 7000, 594 B: 4000, 1518 B: 1000"), "{}", drop_out.stdout);
}

#[test]
fn the_knee_of_a_path_with_a_real_ceiling_converges_and_its_ndr_holds() {
    let _g = heavy();
    let Some(ns) = netns_or_skip("the_knee_of_a_path_with_a_real_ceiling_converges_and_its_ndr_holds", Netns::with_pair) else { return };
    let dir = scratch("knee");
    let json = dir.join("k.json");
    let addr = format!("127.0.0.1:{}", free_port());
    // A receiver that spends 100k cycles a frame: a few tens of thousands of frames a second.
    let mut d = strings(&["--port", "net_af_packet0", "--listen", &addr, "--duration", "300", "--rx-cost", "100000", "--"]);
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b", "--lcores=0@1,1@1"]));
    let mut drop = spawn("ip", &ns.exec(DROP, d));
    drop.wait_for_line("control on", Duration::from_secs(30));
    let blast_args = |extra: &[&str]| {
        let mut b = strings(&["--port", "net_af_packet0", "--peer", &addr, "--size", "256", "--shape", "even", "--warmup", "0.3"]);
        b.extend(strings(extra));
        b.push("--".into());
        b.extend(eal_base());
        b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
        ns.exec(BLAST, b)
    };
    let j = json.display().to_string();
    let (svg_path, csv_path) = (dir.join("k.svg").display().to_string(), dir.join("k.csv").display().to_string());
    let out = run_af_packet(
        "ip",
        &blast_args(&[
            "--find-knee",
            "--rate",
            "200k",
            "--search-duration",
            "0.5",
            "--duration",
            "1",
            "--knee-precision",
            "5",
            "--sentence",
            "--json",
            &j,
            "--plot",
            &svg_path,
            "--csv",
            &csv_path,
        ]),
        Duration::from_secs(240),
    );
    assert!(out.status.success(), "blast --find-knee: {}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    assert_matches_schema(&v, "blast-knee");
    // The knee's picture: loss against offered rate, NDR and PDR marked, a
    // point per trial keyed by verdict; its CSV a row per trial.
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    for want in ["loss against offered rate (each trial)", "loss, % of frames sent", "confirmation trial"] {
        assert!(texts.contains(&want), "{want:?} missing from the knee SVG: {texts:?}");
    }
    // Each labelled, or both on one line labelled with both when they are close.
    assert!(texts.iter().any(|t| t.starts_with("NDR ")) && texts.iter().any(|t| t.contains("PDR ")), "{texts:?}");
    let trials = v["trials"].as_array().unwrap();
    // Every trial's loss is exact, above the knee (real loss) and below it.
    for t in trials {
        assert_exact(t);
    }
    assert!(trials.iter().any(|t| t["lost"].as_u64().unwrap() > 0), "trials above the knee lose frames");
    let circles = doc.descendants().filter(|n| n.has_tag_name("circle")).count();
    assert!(circles >= trials.len(), "a point per trial: {circles} for {}", trials.len());
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    assert_eq!(csv.lines().count(), trials.len() + 1, "{csv}");
    let r = &v["result"];
    let ndr = r["ndr_mpps"].as_f64().expect("an NDR was found");
    let pdr = r["pdr_mpps"].as_f64().expect("a PDR was found");
    assert!(ndr > 0.001 && ndr <= pdr && pdr < 0.2, "NDR {ndr} <= PDR {pdr} below the 0.2 Mpps top");
    // The receiver is the ceiling; on a loaded machine the sender may also
    // fall short of a trial's rate, and then the knee is reported as a lower
    // bound ("at least"), which must then say why: a short trial.
    if r["sender_limited"] == true {
        assert!(
            v["trials"].as_array().unwrap().iter().any(|t| t["sender_short"] == true),
            "sender-limited with no short trial: {}",
            out.stdout
        );
    }
    let trials = v["trials"].as_array().unwrap();
    assert!(trials.iter().any(|t| t["kind"] == "confirm" && t["goal"] == "ndr" && t["ndr_pass"] == true));
    assert!(
        trials.iter().any(|t| !t["pdr_pass"].as_bool().unwrap() && t["limit"] == "receiver"),
        "above the knee the receiver is the limit"
    );
    assert!(out.stdout.contains("ceiling for this traffic:") && out.stdout.contains("committable at 70% of it"), "{}", out.stdout);
    assert!(out.stdout.contains("256 B frames, MTU") && out.stdout.contains("even arrivals, 1 queue"), "qualifiers: {}", out.stdout);

    // The NDR, rerun as a plain step a search precision (5%) below it, loses
    // nothing. Not at the NDR itself: the search only resolves the knee to its
    // precision, and this receiver is saturated by design, so at the NDR
    // exactly it is busy 100% of the time and a rerun on a shared 2-CPU machine
    // can lose a few frames to a stall (CI saw 23 of 23207, 0.1%, the receiver
    // named as the limit); af_packet's 512-frame ring also hides up to ~1.7% of overload
    // over a 1.3 s trial at this rate.
    let rate = format!("{}", (ndr * 0.95 * 1e6).round() as u64);
    let rerun = dir.join("rerun.json");
    let rr = rerun.display().to_string();
    let out = run_af_packet("ip", &blast_args(&["--rate", &rate, "--duration", "1", "--json", &rr]), Duration::from_secs(60));
    assert!(out.status.success(), "rerun at the NDR: {}\n{}", out.stdout, out.stderr);
    let step = &read_json(&rerun)["steps"][0];
    // The one escape: the loss named to the frame by the receiver's own
    // counters (every lost frame one of the kernel's socket drops, the
    // limit the receiver's). On this 2-CPU machine drop's lane shares its
    // CPU with the kernel's softirq work and the host's steal: CI saw a
    // 100 ms stall lose 1303 of 17461, a lane busy the whole window lose
    // 1637, and a lane busy 48% with no stall lose 565 of 11235.
    let lost = step["lost"].as_u64().unwrap_or(0);
    let named = step["receiver"]["socket_drops"].as_u64() == Some(lost) && step["limit"] == "receiver";
    assert!(step["loss_pct"] == 0.0 || (lost > 0 && named), "no loss just below the NDR but what the receiver's own counters name: {step}");
    sigint(&drop);
    let _ = drop.finish(Duration::from_secs(30));
}

#[test]
fn one_way_latency_on_one_host_counts_every_probe() {
    let _g = heavy();
    let dir = scratch("one-way");
    let drop_json = dir.join("d.json");
    let dj = drop_json.display().to_string();
    let (drop, sock) = memif_drop(&dir, &["--one-way", "--json", &dj]);
    let out = memif_blast(&sock, &["--count", "20000", "--rate", "50k", "--shape", "even"]);
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    sigint(&drop);
    let drop_out = drop.finish(Duration::from_secs(30));
    assert!(drop_out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", drop_out.stdout, drop_out.stderr);
    let o = &read_json(&drop_json)["summary"]["one_way"];
    // memif stamps nothing: auto falls back to the poll's clock, and says so.
    assert_eq!(o["clock"], "host_poll", "{o}");
    assert!(o["fallback"].as_str().unwrap().contains("(net_memif) offer(s) no Rx timestamp offload"), "{o}");
    assert_eq!(o["untimed"], 0);
    // One host, one clock: every probe timed, none "before it was sent".
    assert_eq!(o["latency"]["count"], 20000, "{o}");
    assert_eq!(o["negative"], 0);
    let l = &o["latency"];
    let ps: Vec<f64> = ["min_us", "p50_us", "p99_us", "p99.9_us", "max_us"].iter().map(|k| l[k].as_f64().unwrap()).collect();
    assert!(ps.windows(2).all(|w| w[0] <= w[1]), "{ps:?}");
    assert!(ps[1] > 0.0 && ps[1] < 100_000.0, "a median one-way time between processes on one host: {ps:?}");
    assert!(
        drop_out.stdout.contains("one way (by both hosts' CLOCK_REALTIME, arrival read on this host's CLOCK_REALTIME at the poll"),
        "{}",
        drop_out.stdout
    );
    assert!(drop_out.stdout.contains("not the NIC's clock: net_memif"), "{}", drop_out.stdout);
}
