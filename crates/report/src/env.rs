//! Where and how a run ran, and the warnings its environment carries
//! (LLQ off, write-combining off, workers sharing a core, no hugepages):
//! read from the record, said first.

use records::environment::{EnaTxState, Environment, PortRecord};
use records::window::PeerInfo;

use crate::record::{Body, Kind, Record, J};
use crate::warning::{self, Place, Warning};

/// The run's own host's environment, and for a run against drop the
/// receiver's slot (None: the kind has none; Some(None): drop was not there).
fn environments(b: &Body) -> (&Environment, Option<Option<&PeerInfo>>) {
    match b {
        Body::Ladder(l) => (&l.environment.sender, Some(l.environment.receiver.as_ref())),
        Body::Knee(k) => (&k.environment.sender, Some(k.environment.receiver.as_ref())),
        Body::Mlr(k) => (&k.environment.sender, Some(k.environment.receiver.as_ref())),
        Body::Replay(x) => (&x.environment, Some(x.receiver_environment.as_ref())),
        Body::Single(x) => (&x.environment, None),
        Body::Drop(d) => (&d.environment, None),
    }
}

/// Name and value pairs describing the run's hosts, ports and lcores (none
/// for a record that does not read as its type: its section says why).
pub fn facts(r: &Record) -> Vec<(String, String)> {
    let Ok(body) = r.body() else { return Vec::new() };
    let (e, receiver_slot) = environments(&body);
    let mut f: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| {
        if !v.is_empty() {
            f.push((k.to_string(), v));
        }
    };
    put("blastdrop", r.j().text("version"));
    put("host", join(&[e.hostname.clone(), e.cpu_model.clone()], ", "));
    put("machine", machine(e));
    put("EC2", ec2(e));
    put("kernel", e.machine.kernel.clone().unwrap_or_default());
    put("DPDK", dpdk(e));
    put(
        "hugepages",
        if without_eal(e) {
            "none needed (no EAL)"
        } else if e.hugepages {
            "yes"
        } else {
            "no"
        }
        .to_string(),
    );
    for (i, p) in ports(e).iter().enumerate() {
        put(&if i == 0 { "port".to_string() } else { format!("port {i}") }, port(p));
        if let Some(ena) = p.ena.as_ref().map(ena) {
            put("ENA", ena);
        }
    }
    put("lcores", lcores(e));
    put("placement", placement(e));
    if let Some(h) = receiver_slot {
        put("receiver", receiver(h));
    }
    put("traffic", traffic(r));
    f
}

fn join(parts: &[String], sep: &str) -> String {
    parts.iter().filter(|p| !p.is_empty()).cloned().collect::<Vec<_>>().join(sep)
}

fn machine(e: &Environment) -> String {
    let m = &e.machine;
    join(&[m.vendor.clone(), m.product.clone(), m.placement_group.clone()].map(Option::unwrap_or_default), " ")
}

fn ec2(e: &Environment) -> String {
    let Some(x) = &e.machine.ec2 else { return String::new() };
    let mut s = join(&[x.instance_type.clone(), x.availability_zone.clone(), x.ami_id.clone()].map(Option::unwrap_or_default), ", ");
    if let Some(err) = &x.error {
        s = join(&[s, format!("metadata: {err}")], "; ");
    }
    s
}

fn dpdk(e: &Environment) -> String {
    let (run, built) = (&e.dpdk_runtime, &e.dpdk_built_against);
    if built.is_empty() {
        run.clone()
    } else {
        format!("{run} (built against {built})")
    }
}

/// Every port, in --port order (`ports` with several, else `port`).
fn ports(e: &Environment) -> Vec<&PortRecord> {
    if e.ports.is_empty() {
        vec![&e.port]
    } else {
        e.ports.iter().collect()
    }
}

fn port(p: &PortRecord) -> String {
    join(
        &[
            format!("{} ({})", p.name, p.driver),
            format!("MTU {}", p.mtu),
            format!("link {} Gb/s", p.link_speed_mbps / 1000),
            if p.rss { "RSS on" } else { "RSS off" }.to_string(),
            // "" where unknown (negative).
            if p.socket >= 0 { format!("NUMA node {}", p.socket) } else { String::new() },
        ],
        ", ",
    )
}

fn ena(e: &EnaTxState) -> String {
    let llq = match &e.llq {
        Some(limits::ena_state::Llq::On) => "LLQ on".to_string(),
        Some(l) => format!("LLQ {} ({})", written_state(l), llq_reason(l)),
        None => "LLQ unknown (the PMD's log did not say)".to_string(),
    };
    format!("{llq}; write-combining {}", e.write_combining)
}

/// The LLQ state's name and reason, as the record writes them.
fn written_state(l: &limits::ena_state::Llq) -> String {
    serde_json::to_value(l).ok().and_then(|v| v["state"].as_str().map(str::to_string)).unwrap_or_default()
}

fn llq_reason(l: &limits::ena_state::Llq) -> String {
    serde_json::to_value(l).ok().map(|v| J(&v).text("reason")).unwrap_or_default()
}

/// The run moved its frames on the kernel's sockets, with no EAL (its
/// `dpdk_runtime` says "none: ..."): its lanes are threads, not lcores.
fn without_eal(e: &Environment) -> bool {
    e.dpdk_runtime.starts_with("none:")
}

fn lcores(e: &Environment) -> String {
    e.lcores
        .iter()
        .map(|l| {
            let cpus: Vec<String> = l.cpus.iter().map(u32::to_string).collect();
            if without_eal(e) {
                return format!("queue {} on a thread on CPU {} (NUMA node {})", l.queue, cpus.join(","), l.socket);
            }
            format!("queue {} on lcore {} (CPUs {}, socket {})", l.queue, l.lcore, cpus.join(","), l.socket)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Where blastdrop placed the lcores ("" when -l/--lcores placed them).
fn placement(e: &Environment) -> String {
    let Some(p) = &e.placement else { return String::new() };
    let nic = p.nic_node.map_or("unknown".to_string(), |n| n.to_string());
    let workers: Vec<String> = p.workers.iter().map(u32::to_string).collect();
    format!("placed by blastdrop: main lcore on CPU {}, workers on CPUs {}, the NIC's NUMA node {nic}", p.main, workers.join(","))
}

fn receiver(h: Option<&PeerInfo>) -> String {
    let Some(h) = h else { return "none (sender-side figures only)".to_string() };
    join(&[h.hostname.clone(), h.cpu_model.clone(), h.dpdk.clone(), format!("{} ({})", h.port_name, h.driver)], ", ")
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
pub fn warnings(r: &Record) -> Vec<Warning> {
    let Ok(body) = r.body() else { return Vec::new() };
    let (e, _) = environments(&body);
    let placed = e.placement.iter().flat_map(|p| &p.warnings);
    let mut w: Vec<Warning> =
        placed.chain(&e.lcore_warnings).map(|s| Warning::new(warning::Kind::LcorePlacement, Place::Run, s.clone())).collect();
    for p in ports(e) {
        let name = &p.name;
        match p.ena.as_ref().map(|x| &x.llq) {
            Some(Some(l)) if written_state(l) == "off" => {
                w.push(Warning::new(warning::Kind::LlqOff, Place::Run, format!("{name}: {}", llq_reason(l))))
            }
            Some(None) => w.push(Warning::new(warning::Kind::LlqUnknown, Place::Run, name.clone())),
            _ => {}
        }
        if let Some(wc) = p.ena.as_ref().map(|x| &x.write_combining).filter(|s| !s.starts_with("on")) {
            w.push(Warning::new(warning::Kind::WriteCombiningOff, Place::Run, format!("{name}: {wc}")));
        }
    }
    // Hugepages are the EAL's: the kernel's sockets run without one.
    if !e.hugepages && !without_eal(e) {
        w.push(Warning::new(warning::Kind::NoHugepages, Place::Run, ""));
    }
    // A listening drop is always ended by a signal: that is not an interruption.
    let listening = r.kind == Kind::Drop && !r.j().at("config/listen").is_null();
    if !listening && interrupted(&body) {
        w.push(Warning::new(warning::Kind::Interrupted, Place::Run, ""));
    }
    w
}

/// Whether the run was interrupted: the record's own flag, or its summary's.
fn interrupted(b: &Body) -> bool {
    match b {
        Body::Ladder(l) => l.interrupted,
        Body::Knee(k) => k.interrupted,
        Body::Mlr(k) => k.interrupted,
        Body::Single(x) => x.summary.interrupted,
        Body::Replay(x) => x.summary.interrupted,
        Body::Drop(d) => d.summary.interrupted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::path::Path;

    /// A real record of testdata (read whole as its type), with `changes` made to it.
    fn rec(file: &str, changes: impl FnOnce(&mut Value)) -> Record {
        let text = match file {
            "single" => include_str!("../testdata/single.json"),
            _ => include_str!("../testdata/drop.json"),
        };
        let mut v: Value = serde_json::from_str(text).unwrap();
        changes(&mut v);
        Record::from_json(Path::new("r.json"), v, None).unwrap()
    }

    #[test]
    fn ena_llq_off_and_shared_cores_stand_first() {
        let r = rec("single", |v| {
            let e = &mut v["environment"];
            e["hugepages"] = json!(true);
            e["placement"] = json!({"main": 0, "workers": [1], "nic_node": null,
                "warnings": ["workers share physical cores (hyperthread siblings 1/33): each gets about half a core"]});
            let p = &mut e["port"];
            (p["name"], p["driver"], p["mtu"]) = (json!("0000:00:06.0"), json!("net_ena"), json!(9001));
            p["ena"] = json!({"llq": {"state": "off", "reason": "no LLQ BAR"}, "write_combining": "off"});
        });
        let w: Vec<String> = warnings(&r).iter().map(Warning::text).collect();
        assert!(w[0].starts_with("lcore placement: workers share physical cores"), "{w:?}");
        assert!(w.iter().any(|s| s.contains("LLQ is off (ENA's fast TX path is not in use): 0000:00:06.0: no LLQ BAR")), "{w:?}");
        assert!(
            w.iter().any(|s| s.contains("write-combining is not on (TX is slow on the LLQ BAR without it): 0000:00:06.0: off")),
            "{w:?}"
        );
        let f = facts(&r);
        assert!(f.iter().any(|(k, v)| k == "ENA" && v.starts_with("LLQ off (no LLQ BAR)")), "{f:?}");
        assert!(f.iter().any(|(k, v)| k == "port" && v.contains("MTU 9001")), "{f:?}");
    }

    #[test]
    fn a_plain_port_has_no_ena_line_and_an_interrupted_run_says_so() {
        // A standalone drop (no --listen) on memif, interrupted.
        let r = rec("drop", |v| {
            v["config"].as_object_mut().unwrap().remove("listen");
            v["summary"]["interrupted"] = json!(true);
            v["environment"]["hugepages"] = json!(true);
            v["environment"]["lcore_warnings"] = json!([]);
        });
        assert!(!facts(&r).iter().any(|(k, _)| k == "ENA"));
        assert_eq!(warnings(&r).len(), 1);
        assert!(warnings(&r)[0].text().contains("interrupted"));
    }

    /// A run on the kernel's sockets had no EAL: no hugepages warning, and
    /// its lanes are threads on CPUs, not lcores.
    #[test]
    fn a_run_on_sockets_is_not_warned_of_hugepages_and_names_threads() {
        let r = rec("drop", |v| {
            let e = &mut v["environment"];
            (e["dpdk_runtime"], e["hugepages"]) = (json!("none: the kernel's UDP sockets"), json!(false));
            e["lcore_warnings"] = json!([]);
        });
        assert!(!warnings(&r).iter().any(|w| w.text().contains("hugepages")), "{:?}", warnings(&r));
        let f = facts(&r);
        let fact = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
        assert_eq!(fact("hugepages"), "none needed (no EAL)");
        assert!(fact("lcores").starts_with("queue 0 on a thread on CPU "), "{f:?}");
    }

    /// The facts are the typed environment's own fields.
    #[test]
    fn the_facts_are_the_environments_fields() {
        let r = rec("drop", |_| ());
        let e = r.drop().unwrap().environment;
        let f = facts(&r);
        let fact = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
        assert_eq!(fact("host"), format!("{}, {}", e.hostname, e.cpu_model));
        assert!(fact("port").starts_with(&format!("{} ({}), MTU {}", e.port.name, e.port.driver, e.port.mtu)), "{f:?}");
        assert_eq!(fact("hugepages"), "no");
        assert!(warnings(&r).iter().any(|w| w.text() == format!("lcore placement: {}", e.lcore_warnings[0])));
    }
}
