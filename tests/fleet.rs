//! The fleet playbook (deploy/ansible/fleet.yml) through scripts/fleet-demo:
//! three senders and one receiver on this machine, a 2-step ladder. Checks
//! the records it fetches: every member's JSON valid against the schema,
//! the group's sent the sum of its members', the group's received what
//! drop counted in the same window, every member's own row, and drop's
//! arrival view with Q_burst's inputs.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn the_fleet_playbook_runs_a_group_ladder() {
    let _g = heavy();
    if !is_root() {
        return skip_or_fail(
            "the_fleet_playbook_runs_a_group_ladder",
            "scripts/fleet-demo needs root (a network namespace): run the tests as root",
        );
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("scripts/fleet-demo")).current_dir(root).output().expect("scripts/fleet-demo runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() && stderr.contains("could not install ansible-core") {
        return skip_or_fail("the_fleet_playbook_runs_a_group_ladder", stderr.trim());
    }
    assert!(out.status.success(), "fleet-demo failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("group demo: 3 senders -> drop"), "{stdout}");

    let records = root.join("target/fleet-demo/records");
    let drop = read_json(&records.join("rx/drop.json"));
    let windows = drop["windows"].as_array().expect("drop's windows");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("docs/schema/blast-ladder.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut members_seen = Vec::new();
    for i in 0..3 {
        let v = read_json(&records.join(format!("tx{i}/tx{i}.json")));
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "tx{i}'s record does not match docs/schema: {errors:#?}");
        let steps = v["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2, "a 2-step ladder");
        for s in steps {
            let g = &s["group"];
            members_seen.push(g["member"].as_u64().unwrap());
            let sum: u64 = g["members"].as_array().unwrap().iter().map(|m| m["sent_packets"].as_u64().unwrap()).sum();
            assert_eq!(s["sent"]["packets"].as_u64().unwrap(), sum, "the group's sent is its members' sum");
            let w = s["receiver"]["window"].as_u64().unwrap();
            let counted = windows.iter().find(|x| x["window"].as_u64() == Some(w)).expect("drop kept the window");
            assert_eq!(s["receiver"]["packets"], counted["packets"], "the group's received is what drop counted in window {w}");
            assert_eq!(counted["group"]["members"], s["group"]["members"], "drop's own record of the window holds the group");
            let received = s["receiver"]["trial"]["received"].as_u64().unwrap();
            let lost = s["lost"].as_u64().unwrap();
            assert_eq!(received + lost, sum, "exact: received {received} + lost {lost} = {sum} sent");
            for m in g["members"].as_array().unwrap() {
                let (sent, rx, lost) = (m["sent_packets"].as_u64().unwrap(), m["received"].as_u64().unwrap(), m["lost"].as_u64().unwrap());
                assert!(m["exact"] == true && rx + lost == sent, "member: sent {sent}, received {rx}, lost {lost}: {m}");
            }
            for m in g["members"].as_array().unwrap() {
                assert!(m["cycles_per_packet"].as_f64().unwrap() > 0.0, "each member's own cycles per frame: {m}");
                assert!(m["sender_limit"].is_string(), "each member's own sender-side verdict: {m}");
            }
            // drop's view of the superposed arrivals, with Q_burst's inputs.
            let a = &s["receiver"]["arrivals"];
            assert_eq!(a["interval_us"], 100, "{a}");
            let (peak, mean) = (a["peak_per_interval"].as_u64().unwrap(), a["mean_per_interval"].as_f64().unwrap());
            assert!(peak >= 1 && mean > 0.0 && peak as f64 >= mean, "{a}");
            let q = &a["q_burst"];
            let (lambda, mu, t_b) =
                (q["lambda_peak_mpps"].as_f64().unwrap(), q["mu_mpps"].as_f64().unwrap(), q["t_b_us"].as_f64().unwrap());
            assert!(lambda > 0.0 && lambda <= peak as f64 / t_b + 1e-6 && mu > 0.0, "lambda_peak is a busiest interval's rate: {a}");
            let expect = ((lambda - mu) * t_b).max(0.0);
            assert!((q["frames"].as_f64().unwrap() - expect).abs() < 1e-6, "Q_burst = (lambda - mu) x T_b: {a}");
        }
    }
    members_seen.sort();
    assert_eq!(members_seen, [0, 0, 1, 1, 2, 2], "three members, each in both steps");
    report_of_the_group(&records);
}

/// `blast report` of the fleet's records (each member's ladder and drop's),
/// read in a real browser: the members' records are one group section, every
/// member's share in its table.
fn report_of_the_group(records: &Path) {
    let html = records.join("group-report.html");
    let mut a = strings(&["report"]);
    a.extend((0..3).map(|i| records.join(format!("tx{i}/tx{i}.json")).display().to_string()));
    a.push(records.join("rx/drop.json").display().to_string());
    a.extend(strings(&["--html", html.to_str().unwrap()]));
    let out = run(BLAST, &a, std::time::Duration::from_secs(60));
    assert!(out.status.success(), "blast report: {}\n{}", out.stdout, out.stderr);
    let dom = render_in_browser(&html, &records.join("group-report.png"), 1400, 1600);
    assert!(dom.contains("its members' records") && dom.contains("Windows served to blast"), "the group's parts");
    for i in 0..3 {
        assert!(dom.contains(&format!("tx{i}.json")), "member tx{i}'s run");
    }
    // The three members' records are one group trial: one section with every
    // member's share (two steps x three members), one headline; drop's the other.
    assert_eq!(dom.matches("each member's share, per step").count(), 1, "one group section for the members' three records");
    assert_eq!(dom.matches("<li class=\"headline\">").count(), 2, "one headline for the group trial, one for drop");
}
