//! Several ports at once: blast spreads its queues over two ports, drop
//! receives on two, and every step carries a row per port whose figures
//! add up to the step's totals.

mod common;
use common::*;
use std::time::Duration;

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn blast_spreads_queues_over_two_null_ports_and_counts_each() {
    let _g = heavy();
    let dir = scratch("ports-null");
    let json = dir.join("b.json");
    let mut b = strings(&["--port", "net_null0", "--port", "net_null1", "--queues", "3", "--rate", "300k", "--duration", "1"]);
    b.extend(strings(&["--dst-ip", "198.18.0.2", "--dst-ip", "198.18.1.2", "--json"]));
    b.push(json.display().to_string());
    b.push("--".into());
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_null0", "--vdev=net_null1", "--lcores=0@0,1@1,2@1,3@1"]));
    let out = run(BLAST, &b, Duration::from_secs(60));
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("ports 0 (net_null0, net_null) + 1 (net_null1, net_null)"), "{}", out.stdout);

    let v = read_json(&json);
    let s = &v["summary"];
    let ports = s["ports"].as_array().expect("a row per port");
    assert_eq!(ports.len(), 2);
    // Queues 0 and 2 on the first port, queue 1 on the second.
    assert_eq!(ports[0]["queues"], 2);
    assert_eq!(ports[1]["queues"], 1);
    let sum: u64 = ports.iter().map(|p| u(&p["sent"]["packets"])).sum();
    assert_eq!(sum, u(&s["sent"]["packets"]), "per-port rows add up to the total");
    for p in ports {
        assert_eq!(u(&p["sent"]["packets"]), u(&p["sender_opackets"]), "each port's own counter agrees: {p}");
        // Its share of the pace (0.1 Mpps a queue): delivered is "none"; three
        // workers share one CPU here, and a port that fell short is "sender".
        let asked = 0.1 * p["queues"].as_f64().unwrap();
        let mpps = p["sent"]["mpps"].as_f64().unwrap();
        let limit = p["limit"].as_str().unwrap();
        if mpps >= asked * 0.995 {
            assert_eq!(limit, "none", "{p}");
        } else if mpps < asked * 0.985 {
            assert_eq!(limit, "sender", "{p}");
        }
    }
    let lcores: Vec<(u64, u64)> = v["environment"]["lcores"].as_array().unwrap().iter().map(|l| (u(&l["queue"]), u(&l["port"]))).collect();
    assert_eq!(lcores, [(0, 0), (1, 1), (2, 0)]);
    assert_eq!(v["environment"]["ports"].as_array().unwrap().len(), 2);
}

#[test]
fn addresses_are_given_once_or_once_per_port() {
    let mut b = strings(&["--port", "net_null0", "--port", "net_null1", "--queues", "2", "--duration", "1"]);
    b.extend(strings(&["--dst-ip", "198.18.0.2", "--dst-ip", "198.18.1.2", "--dst-ip", "198.18.2.2", "--"]));
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_null0", "--vdev=net_null1"]));
    let out = run(BLAST, &b, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--dst-ip is given 3 times for 2 --port"), "{}", out.stderr);

    let mut b = strings(&["--port", "net_null0", "--port", "net_null0", "--queues", "2", "--duration", "1", "--"]);
    b.extend(eal_base());
    b.push("--vdev=net_null0".into());
    let out = run(BLAST, &b, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("given twice"), "{}", out.stderr);

    let mut b = strings(&["--port", "net_null0", "--port", "net_null1", "--queues", "1", "--duration", "1", "--"]);
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_null0", "--vdev=net_null1"]));
    let out = run(BLAST, &b, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("give every --port a queue"), "{}", out.stderr);
}

#[test]
fn a_ladder_over_two_memif_pairs_has_rows_per_port_that_add_up() {
    let _g = heavy();
    let dir = scratch("ports-memif");
    let (a, b) = (dir.join("a.sock").display().to_string(), dir.join("b.sock").display().to_string());
    let (json, csv, drop_json) = (dir.join("l.json"), dir.join("l.csv"), dir.join("d.json"));
    let addr = format!("127.0.0.1:{}", free_port());
    let mut d = strings(&["--port", "net_memif0", "--port", "net_memif1", "--queues", "2", "--listen", &addr, "--duration", "120"]);
    d.extend(["--json".into(), drop_json.display().to_string(), "--".into()]);
    d.extend(eal_base());
    d.push(format!("--vdev=net_memif0,role=server,socket={a},socket-abstract=no"));
    d.push(format!("--vdev=net_memif1,role=server,socket={b},socket-abstract=no"));
    d.push("--lcores=0@1,1@1,2@1".into());
    let mut drop_proc = spawn(DROP, &d);
    drop_proc.wait_for_line("control on", Duration::from_secs(30));

    let mut bl = strings(&["--port", "net_memif0", "--port", "net_memif1", "--peer", &addr, "--queues", "2", "--size", "64,512"]);
    bl.extend(strings(&["--rate", "100k", "--warmup", "0.3", "--duration", "1", "--json"]));
    bl.extend([json.display().to_string(), "--csv".into(), csv.display().to_string(), "--".into()]);
    bl.extend(eal_base());
    bl.push(format!("--vdev=net_memif0,role=client,socket={a},socket-abstract=no"));
    bl.push(format!("--vdev=net_memif1,role=client,socket={b},socket-abstract=no"));
    bl.push("--lcores=0@0,1@0,2@0".into());
    let out = run(BLAST, &bl, Duration::from_secs(120));
    sigint(&drop_proc);
    let drop_out = drop_proc.finish(Duration::from_secs(30));
    assert!(out.status.success(), "blast: {}\n{}", out.stdout, out.stderr);
    assert!(drop_out.status.code() == Some(EXIT_INTERRUPTED), "drop: {:?}\n{}\n{}", drop_out.status, drop_out.stdout, drop_out.stderr);

    let v = read_json(&json);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        assert!(s["error"].is_null(), "{s}");
        let ports = s["ports"].as_array().expect("rows per port");
        assert_eq!(ports.len(), 2);
        let sent: u64 = ports.iter().map(|p| u(&p["sent"]["packets"])).sum();
        let recv: u64 = ports.iter().map(|p| u(&p["received"]["packets"])).sum();
        assert_eq!(sent, u(&s["sent"]["packets"]), "sent per port adds up: {s}");
        assert_eq!(recv, u(&s["received"]["packets"]), "received per port adds up: {s}");
        for (i, p) in ports.iter().enumerate() {
            assert_eq!(p["queues"], 1);
            assert_eq!(p["receiver_port"], format!("net_memif{i}"), "blast's port i pairs with drop's port i");
            // memif loses nothing: what each port sent arrived on its peer.
            assert_eq!(p["sent"]["packets"], p["received"]["packets"], "{p}");
            assert!(p["limit"] == "none" || p["limit"] == "sender", "{p}");
        }
        let rx_ports = s["receiver"]["ports"].as_array().expect("drop's figures per port");
        assert_eq!(rx_ports.len(), 2);
        // Exact over the step, and each port's share of the trial's own frames.
        assert_exact(s);
        for (p, rx) in ports.iter().zip(rx_ports) {
            assert_eq!(p["received"]["packets"], rx["trial_received"], "{rx}");
        }
    }
    // The table has a row per port under each step, the CSV too.
    let sub_rows = out.stdout.lines().filter(|l| l.trim_start().starts_with("p0") || l.trim_start().starts_with("p1")).count();
    assert_eq!(sub_rows, 4, "{}", out.stdout);
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let ports_col: Vec<&str> = csv_text.lines().skip(1).map(|l| l.rsplit(',').nth(1).unwrap()).collect();
    assert_eq!(ports_col, ["all", "0", "1", "all", "0", "1"], "{csv_text}");

    // drop's own record: a row per port, adding up.
    let dv = read_json(&drop_json);
    let ds = &dv["summary"];
    let dp = ds["ports"].as_array().expect("drop's rows per port");
    assert_eq!(dp.len(), 2);
    assert_eq!(dp.iter().map(|p| u(&p["received"]["packets"])).sum::<u64>(), u(&ds["received"]["packets"]));
    assert!(dv["windows"].as_array().unwrap().iter().all(|w| w["ports"].as_array().is_some_and(|p| p.len() == 2)));
}
