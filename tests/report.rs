//! `blast report` on real runs made here: two labelled memif ladders (the
//! atlas), a fixed-rate ladder with round trips, a knee search, a capture
//! replay, drop's own record, and a standalone drop with a single blast over af_packet on a
//! veth pair. The HTML is read in a real browser (chromium headless: the
//! DOM it built and a screenshot that is not blank), the Markdown parsed as
//! GitHub's dialect (its tables are tables), and the atlas compared with
//! the records figure for figure. A record of an unknown schema version is
//! refused.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One blast run against the listening drop at `addr` over memif `sock`.
fn blast_run(dir: &Path, sock: &str, addr: &str, name: &str, args: &[&str]) -> PathBuf {
    let json = dir.join(format!("{name}.json"));
    let mut a = strings(&["--peer", addr, "--json", &json.display().to_string()]);
    a.extend(strings(args));
    let out = run(BLAST, &memif_blast_args(sock, 2, &a.iter().map(String::as_str).collect::<Vec<_>>()), Duration::from_secs(240));
    assert!(out.status.success(), "blast {name}: {}\n{}", out.stdout, out.stderr);
    json
}

/// The memif runs: two labelled ladders, a fixed-rate ladder with --reflect,
/// a knee search, a capture replay, then drop's own record.
fn memif_runs(dir: &Path) -> Vec<PathBuf> {
    let drop_json = dir.join("drop.json");
    let (d, addr, sock) = listening_drop(dir, "rep", 2, &["--reflect", "--json", &drop_json.display().to_string()]);
    let mut runs = vec![
        blast_run(dir, &sock, &addr, "ladder-a", &["--queues", "1,2", "--size", "64,1518", "--duration", "1", "--published-gbps", "1"]),
        blast_run(dir, &sock, &addr, "ladder-b", &["--queues", "1,2", "--size", "64", "--duration", "1", "--published-gbps", "2"]),
        blast_run(
            dir,
            &sock,
            &addr,
            "fixed",
            &["--queues", "1", "--size", "64", "--rate", "20k,40k", "--shape", "even,poisson", "--reflect", "--duration", "1"],
        ),
        blast_run(
            dir,
            &sock,
            &addr,
            "knee",
            &["--queues", "1", "--size", "64", "--find-knee", "--rate", "200k", "--search-duration", "0.5", "--duration", "1"],
        ),
    ];
    // A capture of 3 flows and 3 sizes, 300 frames 200 us apart, replayed twice.
    let frames: Vec<(u64, Vec<u8>)> =
        (0..300usize).map(|i| (200 * i as u64, udp_frame([64, 700, 1500][i % 3], 3000 + (i % 3) as u16))).collect();
    let pcap = dir.join("three.pcap");
    std::fs::write(&pcap, pcap_bytes(&frames)).unwrap();
    runs.push(blast_run(dir, &sock, &addr, "replay", &["--pcap", pcap.to_str().unwrap(), "--pcap-loop", "2"]));
    sigint(&d);
    let out = d.finish(Duration::from_secs(30));
    assert!(out.status.code() == Some(EXIT_INTERRUPTED), "drop: {}\n{}", out.stdout, out.stderr);
    runs.push(drop_json);
    runs
}

/// A standalone drop and a single blast over af_packet (None without root).
fn af_packet_runs(dir: &Path) -> Option<Vec<PathBuf>> {
    let ns = netns_or_skip("report over af_packet", Netns::with_pair)?;
    let (drop_json, single_json) = (dir.join("drop-afp.json"), dir.join("single-afp.json"));
    let mut d =
        strings(&["--port", "net_af_packet0", "--count", "5000", "--duration", "30", "--json", &drop_json.display().to_string(), "--"]);
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b", "--lcores=0@1,1@1"]));
    let mut drop_proc = spawn("ip", &ns.exec(DROP, d));
    drop_proc.wait_for_line("drop: port", Duration::from_secs(30));
    let mut b = strings(&[
        "--port",
        "net_af_packet0",
        "--count",
        "5000",
        "--rate",
        "20k",
        "--size",
        "256",
        "--json",
        &single_json.display().to_string(),
        "--",
    ]);
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
    let out = run_af_packet("ip", &ns.exec(BLAST, b), Duration::from_secs(60));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    let out = drop_proc.finish(Duration::from_secs(40));
    assert!(out.status.success(), "drop: {}\n{}", out.stdout, out.stderr);
    Some(vec![drop_json, single_json])
}

fn report(runs: &[PathBuf], extra: &[&str]) -> Output {
    let mut a = strings(&["report"]);
    a.extend(runs.iter().map(|p| p.display().to_string()));
    a.extend(strings(extra));
    run(BLAST, &a, Duration::from_secs(60))
}

/// The share of a PNG's pixels that are not (near) white.
fn inked_share(png: &Path) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let inked = px.chunks(channels).filter(|p| p.iter().take(3).any(|&c| c < 200)).count();
    inked as f64 / (px.len() / channels) as f64
}

/// The atlas row of `label` in the Markdown: its cells.
fn atlas_row<'a>(md: &'a str, label: &str) -> Vec<&'a str> {
    let line = md.lines().find(|l| l.starts_with(&format!("| {label} |"))).unwrap_or_else(|| panic!("no atlas row {label}:\n{md}"));
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

/// The atlas's figures are the records' own: one queue and the wall from
/// the ceiling at the smallest size, the published figure, kpps per Gb/s.
fn assert_atlas_matches(md: &str, label: &str, record: &Path) {
    let v = read_json(record);
    let row = atlas_row(md, label);
    let ceiling = v["analysis"]["ceilings"].as_array().unwrap().iter().find(|c| c["size"] == 64).expect("a 64 B ceiling");
    let one: f64 = v["aggregates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["queues"] == 1 && a["size"] == 64)
        .map(|a| a["mpps"]["median"].as_f64().unwrap())
        .fold(f64::MIN, f64::max);
    let published = v["config"]["published_gbps"].as_f64().unwrap();
    let wall = ceiling["ceiling"]["mpps"].as_f64().unwrap();
    let strip = |c: &str| c.split(" [").next().unwrap().to_string();
    // The path: the sending port's driver (a label's paths are rows of their own).
    assert_eq!(row[1], format!("DPDK {}", v["environment"]["sender"]["port"]["driver"].as_str().unwrap()), "{row:?}");
    assert_eq!(row[2], format!("{published}"), "{row:?}");
    assert_eq!(strip(row[3]), format!("{one:.3}"), "{row:?}");
    assert_eq!(strip(row[4]), format!("{wall:.3}"), "{row:?}");
    assert_eq!(row[5], ceiling["ceiling"]["queues"].to_string(), "{row:?}");
    assert_eq!(row[6], "no --cross-check", "these runs were not cross-checked: {row:?}");
    assert_eq!(row[7], format!("{:.0}", wall * 1000.0 / published), "{row:?}");
    let x = &v["analysis"]["crossover"];
    let first = match x["first_size"].as_u64() {
        // memif carries more than a published 1 Gb/s: that figure is not its limit.
        _ if x["published_exceeded"] == true => "unknown: above published".to_string(),
        Some(s) => format!("{s} B"),
        None => "none of its sizes".to_string(),
    };
    assert_eq!(strip(row[8]), first, "{row:?}");
    assert_eq!(row[11], "no knee search", "no knee search was given with this label: {row:?}");
    // Each figure's verdict is a footnote naming the record it came from.
    let note: usize = row[4].split(" [").nth(1).unwrap().trim_end_matches(']').parse().unwrap();
    let file = record.file_name().unwrap().to_string_lossy();
    assert!(md.lines().any(|l| l.starts_with(&format!("{note}. ")) && l.contains(&*file)), "footnote {note} names {file}:\n{md}");
}

#[test]
fn a_report_of_real_runs_reads_in_a_real_browser_and_as_markdown() {
    let _g = heavy();
    let dir = scratch("report");
    let mut runs = memif_runs(&dir);
    let afp = af_packet_runs(&dir);
    runs.extend(afp.clone().unwrap_or_default());
    let (html, md) = (dir.join("report.html"), dir.join("report.md"));
    let mut labels = vec!["memif-a", "memif-b", "fixed", "knee", "replay", "drop"];
    labels.extend(afp.iter().flat_map(|_| ["afp-drop", "afp-single"]));
    let mut extra = vec!["--html", html.to_str().unwrap(), "--markdown", md.to_str().unwrap()];
    for l in &labels {
        extra.extend(["--label", l]);
    }
    let out = report(&runs, &extra);
    assert!(out.status.success(), "blast report: {}\n{}", out.stdout, out.stderr);

    // The browser's view: every part is there, and the page is not blank.
    let png = dir.join("report.png");
    let dom = render_in_browser(&html, &png, 1400, 2400);
    for part in [
        "What was found",
        "Read first",
        "Atlas: one row per instance type or label",
        "memif-a",
        "memif-b",
        "Every step",
        "Ceilings",
        "Bandwidth crossover",
        "Fixed-rate latency",
        "floor",
        "ceiling",
        "The knee",
        "Every trial",
        "Windows served to blast",
        "Sentences to paste",
    ] {
        assert!(dom.contains(part), "the rendered page lacks {part:?}");
    }
    if afp.is_some() {
        assert!(dom.contains("net_af_packet") && dom.contains("Sender-side only (no receiver)"), "af_packet runs");
    }
    // The answer first: one headline per run, before the warnings.
    assert_eq!(dom.matches("<li class=\"headline\">").count(), runs.len(), "one headline per run");
    assert!(dom.find("id=\"answer\"").unwrap() < dom.find("id=\"warnings\"").unwrap(), "the answer before the warnings");
    assert!(dom.matches("<table").count() >= 12, "tables: {}", dom.matches("<table").count());
    assert!(dom.matches("<svg").count() >= 4, "plots: {}", dom.matches("<svg").count());
    // Nothing to fetch: no script, no link or source; the only address is SVG's namespace, a name.
    let addresses = dom.replace("http://www.w3.org/2000/svg", "");
    assert!(
        !dom.contains("<script") && !dom.contains(" src=") && !dom.contains(" href=") && !addresses.contains("http"),
        "nothing fetched, no script"
    );
    let inked = inked_share(&png);
    assert!(inked > 0.03, "the screenshot is (near) blank: {:.1}% inked", inked * 100.0);

    // The Markdown is GitHub's dialect: its tables parse as tables, its plots are SVG files beside it.
    let text = std::fs::read_to_string(&md).unwrap();
    let mut html_md = String::new();
    pulldown_cmark::html::push_html(&mut html_md, pulldown_cmark::Parser::new_ext(&text, pulldown_cmark::Options::ENABLE_TABLES));
    let captions = text.lines().filter(|l| l.starts_with("**") && l.ends_with("**")).count();
    assert!(
        captions >= 12 && html_md.matches("<table>").count() >= captions,
        "{} tables for {captions} captions",
        html_md.matches("<table>").count()
    );
    for l in text.lines().filter(|l| l.starts_with("![")) {
        let file = l.rsplit('(').next().unwrap().trim_end_matches(')');
        roxmltree::Document::parse(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap_or_else(|e| panic!("{file}: {e}"));
    }

    // Each ladder plot colours its points by the verdicts of the record's
    // steps, which all have one: no point is "not judged".
    for r in &runs[..2] {
        for s in read_json(r)["steps"].as_array().unwrap() {
            assert!(s["limit"].as_str().is_some_and(|l| !l.is_empty() && l != "n/a"), "a memif ladder step without a verdict: {s}");
        }
    }
    let mut ladder_plots = 0;
    for l in text.lines().filter(|l| l.starts_with("![")) {
        let svg = std::fs::read_to_string(dir.join(l.rsplit('(').next().unwrap().trim_end_matches(')'))).unwrap();
        if svg.contains("queues (log2 scale)") {
            ladder_plots += 1;
            let unjudged = svg.contains("limit: n/a") || svg.contains("no verdict");
            assert!(svg.contains("limit: ") && !unjudged, "{l}: a ladder plot's points lost their verdicts");
        }
    }
    assert!(ladder_plots >= 2, "the two memif ladders are plotted: {ladder_plots}");

    // The atlas, figure for figure.
    assert_atlas_matches(&text, "memif-a", &runs[0]);
    assert_atlas_matches(&text, "memif-b", &runs[1]);
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-test");
    let _ = std::fs::create_dir_all(&target);
    for f in [&html, &md, &png] {
        let _ = std::fs::copy(f, target.join(f.file_name().unwrap()));
    }
}

#[test]
fn records_it_cannot_read_are_refused_with_the_fix() {
    let dir = scratch("report-refuse");
    let newer = dir.join("newer.json");
    std::fs::write(&newer, r#"{"tool": "blast", "mode": "ladder", "schema_version": 99}"#).unwrap();
    let out = report(std::slice::from_ref(&newer), &["--html", dir.join("r.html").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("schema_version 99") && out.stderr.contains("use the blastdrop that wrote it"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    assert!(!dir.join("r.html").exists(), "nothing written");

    let old = dir.join("old.json");
    std::fs::write(&old, r#"{"tool": "drop", "summary": {}}"#).unwrap();
    let out = report(&[old], &["--markdown", dir.join("r.md").to_str().unwrap()]);
    assert!(out.stderr.contains("no schema_version") && out.stderr.contains("run it again"), "{}", out.stderr);

    // A record cut short (a run killed while writing), a missing file, a directory.
    let cut = dir.join("cut.json");
    std::fs::write(&cut, r#"{"tool": "blast", "mode": "ladder", "schema_version": 1, "steps": [{"step": 0, "qu"#).unwrap();
    for (bad, want) in [(cut, "is not JSON"), (dir.join("missing.json"), "cannot read"), (dir.clone(), "cannot read")] {
        let out = report(std::slice::from_ref(&bad), &["--html", dir.join("r.html").to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}: {}", bad.display(), out.stderr);
        assert!(
            out.stderr.starts_with("blast report: error: ") && out.stderr.contains(want) && out.stderr.lines().count() == 1,
            "{}",
            out.stderr
        );
    }
    let out = report(std::slice::from_ref(&newer), &[]);
    assert!(out.stderr.contains("without --html FILE or --markdown FILE"), "{}", out.stderr);
    let out = report(&[newer.clone(), newer], &["--label", "a", "--label", "b", "--label", "c", "--html", "x.html"]);
    assert!(out.stderr.contains("--label is given 3 times for 2 runs"), "{}", out.stderr);
    // What blast writes, the report knows.
    assert!(report::KNOWN_SCHEMA_VERSIONS.contains(&(blastdrop::out::SCHEMA_VERSION as u64)));
}

/// The pixel rows of a PNG (RGB or RGBA) where a pixel within 2 of `rgb` on
/// every channel first appears, if any, and how many such pixels there are.
fn first_row_and_count(png: &Path, rgb: [u8; 3]) -> (Option<usize>, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let width = info.width as usize;
    let (mut first, mut count) = (None, 0);
    for (i, p) in buf[..info.buffer_size()].chunks(channels).enumerate() {
        if p.iter().take(3).zip(rgb).all(|(&c, want)| c.abs_diff(want) <= 2) {
            first = first.or(Some(i / width));
            count += 1;
        }
    }
    (first, count)
}

/// The verdict colours a record's plot must show: one per verdict class of
/// its measured steps (a ladder's, a group member's) or trials (a knee's).
fn verdict_colours(record: &Path) -> Vec<String> {
    let r = report::Record::read(record, None).unwrap();
    let steps: Vec<ladder::StepRecord> = match r.body().unwrap() {
        report::Body::Ladder(l) => l.steps,
        report::Body::Knee(k) => k.trials.into_iter().map(|t| t.step).collect(),
        _ => Vec::new(),
    };
    let mut colours: Vec<String> =
        steps.iter().filter(|s| s.error.is_none()).map(|s| ladder::drawn::hex(ladder::verdict_color(s.class()))).collect();
    colours.sort();
    colours.dedup();
    colours
}

/// Issue 40's reader: a report of a ladder, a knee, a group trial (three
/// members' records) and two drop records that share a file name, all real
/// (crates/report/testdata), opened in headless Chromium. On the DOM and on
/// the screenshots: the answer comes first, before any warning; no two runs
/// share a name; the group is one section; every plot whose records carry
/// verdicts shows each verdict's colour, drawn.
#[test]
fn the_first_screen_answers_and_every_plot_carries_its_verdicts_in_a_real_browser() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/report/testdata");
    let dir = scratch("report-first-screen");
    for sub in ["memif", "afp"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    // Two drop records of the same base name, from different folders.
    std::fs::copy(data.join("drop.json"), dir.join("memif/drop.json")).unwrap();
    std::fs::copy(data.join("group-drop.json"), dir.join("afp/drop.json")).unwrap();
    let group: Vec<PathBuf> = (0..3).map(|i| data.join(format!("group-blast{i}.json"))).collect();
    let mut runs = vec![data.join("ladder.json"), data.join("knee.json"), dir.join("memif/drop.json")];
    runs.extend(group.iter().cloned());
    runs.push(dir.join("afp/drop.json"));
    let html = dir.join("report.html");
    let out = report(&runs, &["--html", html.to_str().unwrap()]);
    assert!(out.status.success(), "blast report: {}\n{}", out.stdout, out.stderr);

    // The first screen, as a person opens it, and the whole page.
    let (first_png, page_png) = (dir.join("first.png"), dir.join("page.png"));
    let dom = render_in_browser(&html, &first_png, 1400, 900);
    let _ = render_in_browser(&html, &page_png, 1400, 16000);

    // The answer first: one headline per run, the group's members one run.
    let answer = dom.find("id=\"answer\"").expect("an answer section");
    let first_warning = dom.find("id=\"warnings\"").expect("warnings: the records carry some");
    let first_section = dom.find("<h2>Run ").unwrap();
    assert!(answer < first_warning && first_warning < first_section, "the answer, then the warnings, then the runs");
    let headlines: Vec<&str> = dom.match_indices("<li class=\"headline\">").map(|(i, _)| &dom[i..]).collect();
    assert_eq!(headlines.len(), runs.len() - group.len() + 1, "one headline per run, one for the group");
    assert!(dom.match_indices("<li class=\"headline\">").all(|(i, _)| i < first_warning), "every headline before any warning");
    // No two runs share a name: the two drop.json are told apart by their folders.
    let names: Vec<&str> = headlines
        .iter()
        .map(|h| h.split("<span class=\"run\">").nth(1).and_then(|x| x.split("</span>").next()).expect("the run's name"))
        .collect();
    let mut distinct = names.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), names.len(), "two runs share a name: {names:?}");
    assert!(names.iter().any(|n| n.contains("memif/drop.json")) && names.iter().any(|n| n.contains("afp/drop.json")), "{names:?}");
    // A sender-side ladder and a group trial ask for no atlas.
    assert!(!dom.contains("Atlas: not made"), "an atlas section with nothing to say");
    // The group trial is one section, whose heading names its three members.
    let group_headings: Vec<&str> = dom.lines().filter(|l| l.contains("<h2>") && l.contains("group-blast")).collect();
    assert_eq!(group_headings.len(), 1, "the group is one section: {group_headings:?}");
    assert!((0..3).all(|i| group_headings[0].contains(&format!("group-blast{i}.json"))), "{}", group_headings[0]);

    // On the first screen: the answer's box (blue border) stands above the
    // warnings' (orange border).
    let (answer_row, answer_px) = first_row_and_count(&first_png, [0x33, 0x66, 0xcc]);
    let (warning_row, _) = first_row_and_count(&first_png, [0xcc, 0x66, 0x00]);
    assert!(answer_px > 100, "the answer's box is on the first screen: {answer_px} pixels of its border");
    assert!(warning_row.is_none_or(|w| answer_row.unwrap() < w), "the answer above the warnings: rows {answer_row:?} {warning_row:?}");

    // Every plot whose records carry verdicts: each verdict's colour is a
    // point's fill in the SVG the report wrote, in the browser's DOM, and
    // drawn on the page.
    let written = std::fs::read_to_string(&html).unwrap();
    let svgs: Vec<&str> = written.match_indices("<svg").map(|(i, _)| &written[i..i + written[i..].find("</svg>").unwrap() + 6]).collect();
    let dom_svgs: Vec<&str> = dom.match_indices("<svg").map(|(i, _)| &dom[i..i + dom[i..].find("</svg>").unwrap()]).collect();
    assert_eq!(svgs.len(), dom_svgs.len(), "the browser built every plot");
    for (record, title) in [(&runs[0], "ladder.json"), (&runs[1], "knee.json"), (&group[0], "group trial trio of 3 senders")] {
        let want = verdict_colours(record);
        assert!(!want.is_empty(), "{title}: its steps carry verdicts");
        let at = svgs.iter().position(|s| s.contains(title)).unwrap_or_else(|| panic!("no plot titled with {title}"));
        let fills: Vec<String> = ladder::drawn::drawn_points(svgs[at]).unwrap().iter().map(|p| ladder::drawn::hex(p.fill)).collect();
        for colour in &want {
            assert!(fills.contains(colour), "{title}: no point filled {colour}: {fills:?}");
            assert!(dom_svgs[at].to_uppercase().contains(&colour.to_uppercase()), "{title}: the browser's plot lacks {colour}");
            let rgb = [1, 3, 5].map(|i| u8::from_str_radix(&colour[i..i + 2], 16).unwrap());
            let (_, drawn) = first_row_and_count(&page_png, rgb);
            assert!(drawn >= 10, "{title}: {colour} is not drawn on the page ({drawn} pixels)");
        }
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-test");
    let _ = std::fs::create_dir_all(&target);
    let _ = std::fs::copy(&first_png, target.join("first-screen.png"));
}
