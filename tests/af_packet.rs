//! `blast` to `drop` over net_af_packet on a veth pair, in a network
//! namespace this test creates: a real kernel path between the two.

mod common;
use common::*;
use std::process::Command;
use std::time::Duration;

struct Netns(String);

impl Netns {
    fn create(name: &str) -> Result<Netns, String> {
        let ip = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("ip").args(args).output().map_err(|e| format!("cannot run ip: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
            }
        };
        let _ = Command::new("ip").args(["netns", "del", name]).output();
        ip(&["netns", "add", name])?;
        let ns = Netns(name.to_owned());
        ip(&["-n", name, "link", "add", "bd-a", "type", "veth", "peer", "name", "bd-b"])?;
        ip(&["-n", name, "link", "set", "bd-a", "up"])?;
        ip(&["-n", name, "link", "set", "bd-b", "up"])?;
        // No IPv6 chatter (router solicitations) on the pair.
        let _ = Command::new("ip").args(["netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]).output();
        Ok(ns)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

fn in_ns(ns: &str, bin: &str, args: Vec<String>) -> Vec<String> {
    let mut v = strings(&["netns", "exec", ns, bin]);
    v.extend(args);
    v
}

#[test]
fn blast_to_drop_over_af_packet_on_veth() {
    if !is_root() {
        eprintln!("SKIP blast_to_drop_over_af_packet_on_veth: needs root to create a network namespace (run the tests as root)");
        return;
    }
    let _g = heavy();
    let ns_name = format!("bd-test-{}", std::process::id());
    let ns = match Netns::create(&ns_name) {
        Ok(ns) => ns,
        Err(e) => {
            eprintln!("SKIP blast_to_drop_over_af_packet_on_veth: cannot create a network namespace: {e}");
            return;
        }
    };
    let dir = scratch("afp");
    let drop_json = dir.join("drop.json");
    let count = 20_000u64;

    let mut d = strings(&["--port", "net_af_packet0", "--count", &count.to_string(), "--duration", "30", "--json"]);
    d.push(drop_json.display().to_string());
    d.push("--".into());
    d.extend(eal_base());
    d.extend(strings(&["--vdev=net_af_packet0,iface=bd-b", "--lcores=0@1,1@1"]));
    let mut drop_proc = spawn("ip", &in_ns(&ns.0, DROP, d));
    drop_proc.wait_for_line("drop: port", Duration::from_secs(30));

    let mut b =
        strings(&["--port", "net_af_packet0", "--count", &count.to_string(), "--rate", "50k", "--flows", "2", "--size", "256", "--"]);
    b.extend(eal_base());
    b.extend(strings(&["--vdev=net_af_packet0,iface=bd-a", "--lcores=0@0,1@0"]));
    let blast_out = run("ip", &in_ns(&ns.0, BLAST, b), Duration::from_secs(60));
    assert!(blast_out.status.success(), "blast: {}\n{}", blast_out.stdout, blast_out.stderr);
    let drop_out = drop_proc.finish(Duration::from_secs(40));
    assert!(drop_out.status.success(), "drop: {}\n{}", drop_out.stdout, drop_out.stderr);

    let v = read_json(&drop_json);
    let s = &v["summary"];
    assert_eq!(v["environment"]["port"]["driver"], "net_af_packet");
    // The kernel path may drop under load; at this rate everything should
    // arrive, and every frame that did must parse as ours.
    let got = s["received"]["packets"].as_u64().unwrap();
    assert!(got >= count, "received {got} of {count}: {}", drop_out.stdout);
    let probed: u64 = s["streams"].as_array().unwrap().iter().map(|x| x["received"].as_u64().unwrap()).sum();
    assert_eq!(probed + s["no_probe"].as_u64().unwrap(), got);
    assert!(probed >= count, "every blast frame parsed: {probed}");
    assert_eq!(s["streams"].as_array().unwrap().len(), 2);
    assert_eq!(s["probe"]["duplicates"], 0);
    assert_eq!(s["port"]["ipackets"].as_u64().unwrap(), got, "the port's counter agrees with the lcores'");
}
