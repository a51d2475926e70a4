//! Where the lanes ran, as the record says it: each lcore's CPU set as the
//! EAL pinned it (its cpuset, not `rte_lcore_to_cpu_id`), and the warning
//! when two lanes may run on one CPU, whoever chose the map.

mod common;
use common::*;
use std::time::Duration;

/// Two queues' lanes both mapped onto CPU 0 (`--lcores=0@0,1@0,2@0`), on
/// net_null, for blast and for drop.
fn shared_map_args(tool_args: &[&str]) -> Vec<String> {
    let mut args = strings(tool_args);
    args.push("--".into());
    args.extend(eal_base());
    args.extend(strings(&["--lcores=0@0,1@0,2@0", "--vdev=net_null0"]));
    args
}

/// Both lanes recorded on CPU 0 alone, the shared-core warning in the
/// record and said on stderr.
fn assert_both_lanes_on_cpu0(tool: &str, out: &Output, v: &serde_json::Value) {
    assert!(out.status.success(), "{tool} failed: {}\n{}", out.stdout, out.stderr);
    let lcores = v["environment"]["lcores"].as_array().unwrap();
    assert_eq!(lcores.len(), 2, "{tool}: {lcores:?}");
    for l in lcores {
        assert_eq!(l["cpus"], serde_json::json!([0]), "{tool}: lane {l} is pinned to CPU 0 by --lcores");
        assert_eq!(l["cpu"], 0, "{tool}: {l}");
    }
    let w = v["environment"]["lcore_warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{tool}: {w:?}");
    let w = w[0].as_str().unwrap();
    assert!(w.starts_with("workers share a core (CPU 0: lcores [1, 2])"), "{tool}: {w}");
    assert!(out.stderr.contains("workers share a core (CPU 0: lcores [1, 2])"), "{tool} says it: {}", out.stderr);
}

#[test]
fn blast_records_two_lanes_on_one_cpu_and_warns() {
    let _g = heavy();
    let dir = scratch("placement-blast");
    let json = dir.join("blast.json");
    let json_arg = json.display().to_string();
    let args = shared_map_args(&["--port", "net_null0", "--queues", "2", "--duration", "1", "--rate", "200k", "--json", &json_arg]);
    let out = run(BLAST, &args, Duration::from_secs(30));
    let v = read_json(&json);
    assert_both_lanes_on_cpu0("blast", &out, &v);
    assert_matches_schema(&v, "blast-single");
}

#[test]
fn drop_records_two_lanes_on_one_cpu_and_warns() {
    let _g = heavy();
    let dir = scratch("placement-drop");
    let json = dir.join("drop.json");
    let json_arg = json.display().to_string();
    let args = shared_map_args(&["--port", "net_null0", "--queues", "2", "--duration", "1", "--json", &json_arg]);
    let out = run(DROP, &args, Duration::from_secs(30));
    let v = read_json(&json);
    assert_both_lanes_on_cpu0("drop", &out, &v);
    assert_matches_schema(&v, "drop");
}

/// The map blastdrop makes itself puts each worker on its own CPU (two
/// CPUs here: main and one worker): no shared-core warning.
#[test]
fn one_lane_per_cpu_gives_no_warning() {
    let _g = heavy();
    let dir = scratch("placement-apart");
    let json = dir.join("blast.json");
    let json_arg = json.display().to_string();
    let mut args = strings(&["--port", "net_null0", "--duration", "1", "--rate", "200k", "--json", &json_arg, "--"]);
    args.extend(eal_base());
    args.extend(strings(&["--lcores=0@0,1@1", "--vdev=net_null0"]));
    let out = run(BLAST, &args, Duration::from_secs(30));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let v = read_json(&json);
    assert_eq!(v["environment"]["lcores"][0]["cpus"], serde_json::json!([1]), "{}", v["environment"]["lcores"]);
    assert_eq!(v["environment"]["lcore_warnings"], serde_json::json!([]));
    assert!(!out.stderr.contains("share a core"), "{}", out.stderr);
}
