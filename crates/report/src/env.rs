//! Where and how a run ran, and the warnings its environment carries
//! (LLQ off, write-combining off, workers sharing a core, no hugepages):
//! read from the record, said first.

use crate::record::{Kind, Record, J};

/// Name and value pairs describing the run's hosts, ports and lcores.
pub fn facts(r: &Record) -> Vec<(String, String)> {
    let e = r.env();
    let mut f: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| {
        if !v.is_empty() {
            f.push((k.to_string(), v));
        }
    };
    put("blastdrop", r.j().text("version"));
    put("host", join(&[e.text("hostname"), e.text("cpu_model")], ", "));
    put("machine", machine(e));
    put("EC2", ec2(e));
    put("kernel", e.text("machine/kernel"));
    put("DPDK", dpdk(e));
    put("hugepages", e.bool("hugepages").map(|h| if h { "yes" } else { "no" }.to_string()).unwrap_or_default());
    for (i, p) in ports(e).iter().enumerate() {
        put(&if i == 0 { "port".to_string() } else { format!("port {i}") }, port(J(p)));
        if let Some(ena) = ena(J(p)) {
            put("ENA", ena);
        }
    }
    put("lcores", lcores(e));
    put("placement", placement(e));
    if matches!(r.kind, Kind::Ladder | Kind::Knee) {
        put("receiver", receiver(r.j().at("environment/receiver")));
    }
    if r.kind == Kind::Replay {
        put("receiver", receiver(r.j().at("receiver_environment")));
    }
    put("traffic", traffic(r));
    f
}

fn join(parts: &[String], sep: &str) -> String {
    parts.iter().filter(|p| !p.is_empty()).cloned().collect::<Vec<_>>().join(sep)
}

fn machine(e: J) -> String {
    join(&[e.text("machine/vendor"), e.text("machine/product"), e.text("machine/placement_group")], " ")
}

fn ec2(e: J) -> String {
    let x = e.at("machine/ec2");
    if x.is_null() {
        return String::new();
    }
    let mut s = join(&[x.text("instance_type"), x.text("availability_zone"), x.text("ami_id")], ", ");
    if let Some(err) = x.str("error") {
        s = join(&[s, format!("metadata: {err}")], "; ");
    }
    s
}

fn dpdk(e: J) -> String {
    let (run, built) = (e.text("dpdk_runtime"), e.text("dpdk_built_against"));
    if built.is_empty() {
        run
    } else {
        format!("{run} (built against {built})")
    }
}

fn ports(e: J) -> Vec<serde_json::Value> {
    let many = e.arr("ports");
    if many.is_empty() {
        if e.at("port").is_null() {
            vec![]
        } else {
            vec![e.at("port").0.clone()]
        }
    } else {
        many.to_vec()
    }
}

fn port(p: J) -> String {
    let speed = p.u64("link_speed_mbps").map(|m| format!("link {} Gb/s", m / 1000)).unwrap_or_default();
    let rss = match p.bool("rss") {
        Some(true) => "RSS on".to_string(),
        Some(false) => "RSS off".to_string(),
        None => String::new(),
    };
    join(
        &[
            format!("{} ({})", p.text("name"), p.text("driver")),
            p.u64("mtu").map(|m| format!("MTU {m}")).unwrap_or_default(),
            speed,
            rss,
            p.i64_text("socket", "NUMA node"),
        ],
        ", ",
    )
}

impl J<'_> {
    /// "NUMA node N", or "" where unknown (negative).
    fn i64_text(self, path: &str, what: &str) -> String {
        match self.at(path).0.as_i64() {
            Some(n) if n >= 0 => format!("{what} {n}"),
            _ => String::new(),
        }
    }
}

fn ena(p: J) -> Option<String> {
    let e = p.at("ena");
    if e.is_null() {
        return None;
    }
    let llq = match e.str("llq/state") {
        Some("on") => "LLQ on".to_string(),
        Some(s) => format!("LLQ {s} ({})", e.text("llq/reason")),
        None => "LLQ unknown (the PMD's log did not say)".to_string(),
    };
    Some(format!("{llq}; write-combining {}", e.text("write_combining")))
}

fn lcores(e: J) -> String {
    e.arr("lcores")
        .iter()
        .map(|l| {
            let l = J(l);
            // `cpus` is the lcore's whole set; records before it carry only `cpu`.
            let cpus = if l.at("cpus").is_null() { format!("CPU {}", l.text("cpu")) } else { format!("CPUs {}", l.text("cpus")) };
            format!("queue {} on lcore {} ({cpus}, socket {})", l.text("queue"), l.text("lcore"), l.text("socket"))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Where blastdrop placed the lcores ("" when -l/--lcores placed them).
fn placement(e: J) -> String {
    let p = e.at("placement");
    if p.is_null() {
        return String::new();
    }
    let nic = p.u64("nic_node").map_or("unknown".to_string(), |n| n.to_string());
    format!("placed by blastdrop: main lcore on CPU {}, workers on CPUs {}, the NIC's NUMA node {nic}", p.text("main"), p.text("workers"))
}

fn receiver(h: J) -> String {
    if h.is_null() {
        return "none (sender-side figures only)".to_string();
    }
    join(&[h.text("hostname"), h.text("cpu_model"), h.text("dpdk"), format!("{} ({})", h.text("port_name"), h.text("driver"))], ", ")
}

/// The flags that qualify every figure of the run.
fn traffic(r: &Record) -> String {
    let c = r.j().at("config");
    if r.kind == Kind::Drop {
        return join(&[format!("queues {}", c.text("queues")), opt("listen", c.text("listen"))], ", ");
    }
    // A replay's frames are the capture's: --size and --flows do not apply.
    if r.kind == Kind::Replay {
        return join(
            &[
                format!("queues {}", c.text("queues")),
                opt("capture", c.text("pcap")),
                opt("timing", c.text("pcap_timing")),
                opt("passes", c.text("pcap_loop")),
            ],
            ", ",
        );
    }
    join(
        &[
            format!("queues {}", c.text("queues")),
            format!("size {} B", c.text("size")),
            opt("size mix", c.text("size_mix")),
            format!("flows {}", flows(c)),
            opt("rate (frames/s)", c.text("rate")),
            opt("shape", c.text("shape")),
            opt("duration (s)", c.text("duration")),
            opt("published Gb/s", c.text("published_gbps")),
            opt("repeat", c.text("repeat")),
        ],
        ", ",
    )
}

/// `--flows`, or its default: one flow per queue.
pub fn flows(config: J) -> String {
    match config.text("flows") {
        f if f.is_empty() => "= queues".to_string(),
        f => f,
    }
}

/// The flows in words, for a sentence: "64 flows", "one flow per queue".
pub fn flows_phrase(config: J) -> String {
    match config.text("flows") {
        f if f.is_empty() => "one flow per queue".to_string(),
        f if f == "1" => "1 flow".to_string(),
        f => format!("{f} flows"),
    }
}

fn opt(name: &str, v: String) -> String {
    if v.is_empty() {
        v
    } else {
        format!("{name} {v}")
    }
}

/// What the environment says the reader must know before any figure.
pub fn warnings(r: &Record) -> Vec<String> {
    let e = r.env();
    let mut w: Vec<String> =
        e.arr("placement/warnings").iter().filter_map(|v| v.as_str()).map(|s| format!("lcore placement: {s}")).collect();
    w.extend(e.arr("lcore_warnings").iter().filter_map(|v| v.as_str()).map(|s| format!("lcore placement: {s}")));
    for p in ports(e) {
        let p = J(&p);
        let name = p.text("name");
        match p.str("ena/llq/state") {
            Some("off") => w.push(format!("{name}: LLQ is off ({}): ENA's fast TX path is not in use", p.text("ena/llq/reason"))),
            None if !p.at("ena").is_null() => w.push(format!("{name}: whether LLQ is on is unknown (the PMD's log did not say)")),
            _ => {}
        }
        if p.str("ena/write_combining").is_some_and(|s| !s.starts_with("on")) {
            w.push(format!("{name}: write-combining is {} on the LLQ BAR (TX is slow without it)", p.text("ena/write_combining")));
        }
    }
    if e.bool("hugepages") == Some(false) {
        w.push("the EAL ran without hugepages: slower than a tuned set-up".to_string());
    }
    // A listening drop is always ended by a signal: that is not an interruption.
    let listening = r.kind == Kind::Drop && !r.j().at("config/listen").is_null();
    if !listening && (r.j().bool("interrupted") == Some(true) || r.j().bool("summary/interrupted") == Some(true)) {
        w.push("the run was interrupted (Ctrl-C or SIGTERM): what it had not reached is missing".to_string());
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn rec(v: serde_json::Value) -> Record {
        Record::from_json(Path::new("r.json"), v, None).unwrap()
    }

    #[test]
    fn ena_llq_off_and_shared_cores_stand_first() {
        let r = rec(json!({"tool": "blast", "mode": "single", "schema_version": 1, "environment": {
            "hugepages": true,
            "placement": {"warnings": ["workers share physical cores (hyperthread siblings 1/33): each gets about half a core"]},
            "port": {"name": "0000:00:06.0", "driver": "net_ena", "mtu": 9001,
                     "ena": {"llq": {"state": "off", "reason": "no LLQ BAR"}, "write_combining": "off"}}}}));
        let w = warnings(&r);
        assert!(w[0].starts_with("lcore placement: workers share physical cores"), "{w:?}");
        assert!(w.iter().any(|s| s.contains("LLQ is off (no LLQ BAR)")), "{w:?}");
        assert!(w.iter().any(|s| s.contains("write-combining is off")), "{w:?}");
        let f = facts(&r);
        assert!(f.iter().any(|(k, v)| k == "ENA" && v.starts_with("LLQ off (no LLQ BAR)")), "{f:?}");
        assert!(f.iter().any(|(k, v)| k == "port" && v.contains("MTU 9001")), "{f:?}");
    }

    #[test]
    fn a_plain_port_has_no_ena_line_and_an_interrupted_run_says_so() {
        let r = rec(json!({"tool": "drop", "schema_version": 1, "summary": {"interrupted": true},
            "environment": {"hugepages": true, "port": {"name": "net_memif0", "driver": "net_memif"}}}));
        assert!(!facts(&r).iter().any(|(k, _)| k == "ENA"));
        assert_eq!(warnings(&r).len(), 1);
        assert!(warnings(&r)[0].contains("interrupted"));
    }
}
