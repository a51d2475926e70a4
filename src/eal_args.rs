//! The EAL arguments a run starts with: the user's, passed through
//! unchanged after `--`, plus defaults for what they left out (one lcore per
//! queue and a main lcore; quieter EAL logs), and a hint when the EAL fails
//! for want of hugepages.

use std::path::Path;

/// What was added to the user's EAL arguments, and why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EalPlan {
    pub args: Vec<String>,
    /// Notes for the user (e.g. workers sharing a core).
    pub notes: Vec<String>,
    /// Where the lcores went, when blastdrop placed them (no -l/--lcores given).
    pub placement: Option<topology::Placement>,
}

/// The PCI addresses of the devices the user allowed (-a/--allow, -w), in
/// the order given.
fn allowed_pci(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = match a.as_str() {
            "-a" | "--allow" | "-w" | "--pci-whitelist" => it.next().cloned(),
            _ => a.strip_prefix("--allow=").or_else(|| a.strip_prefix("-a")).filter(|v| !v.is_empty()).map(str::to_owned),
        };
        if let Some(v) = v {
            // Device arguments follow a comma.
            let pci = v.split(',').next().unwrap_or_default().to_string();
            if pci.matches(':').count() >= 1 && pci.contains('.') {
                out.push(if pci.matches(':').count() == 1 { format!("0000:{pci}") } else { pci });
            }
        }
    }
    out
}

/// The PCI address of the first device the user allowed (-a/--allow, -w), if any.
pub fn first_pci(args: &[String]) -> Option<String> {
    allowed_pci(args).into_iter().next()
}

/// Every PCI address the user allowed, in the order the EAL probes them
/// (bus order), which is the order their port ids follow.
pub fn all_pci(args: &[String]) -> Vec<String> {
    let mut out = allowed_pci(args);
    out.sort();
    out.dedup();
    out
}

/// The PCI address a --port spec names: itself, or for a port id the
/// id-th allowed PCI device (None for virtual devices and unknown ids).
fn port_pci(spec: &str, pci: &[String]) -> Option<String> {
    if let Ok(id) = spec.parse::<usize>() {
        return pci.get(id).cloned();
    }
    (spec.contains(':') && spec.contains('.'))
        .then(|| if spec.matches(':').count() == 1 { format!("0000:{spec}") } else { spec.to_string() })
}

/// The error in the user's terms: which flag fixes it.
fn with_fix(e: &topology::TopologyError) -> String {
    match e {
        topology::TopologyError::TooManyWorkers { .. } => format!("{e}: lower --queues, or give -l/--lcores yourself"),
        _ => e.to_string(),
    }
}

/// Places the main lcore and `workers` workers from the machine's topology
/// (sysfs), on the NIC's NUMA node when the user named a PCI device; with
/// several `ports`, each worker on its own port's node.
pub fn auto_lcores(user: &[String], workers: u16, ports: &[String]) -> Result<topology::Placement, topology::TopologyError> {
    let root = topology::sysfs_root();
    let topo = topology::Topology::from_sysfs(&root)?.restricted_to(&allowed_cpus());
    if ports.len() > 1 {
        let pci = all_pci(user);
        let nodes: Vec<Option<u32>> = ports.iter().map(|s| port_pci(s, &pci).and_then(|p| topology::pci_numa_node(&root, &p))).collect();
        return topology::place_ports(&topo, usize::from(workers), &nodes);
    }
    let nic_node = first_pci(user).and_then(|p| topology::pci_numa_node(&root, &p));
    topology::place(&topo, usize::from(workers), nic_node)
}

fn has_flag(args: &[String], names: &[&str]) -> bool {
    args.iter().any(|a| names.iter().any(|n| a == n || a.starts_with(&format!("{n}="))))
}

/// True when the user picked lcores themselves.
pub fn user_chose_lcores(args: &[String]) -> bool {
    has_flag(args, &["-l", "-c", "--lcores"]) || args.iter().any(|a| a.starts_with("-l") && a.len() > 2 && !a.starts_with("--"))
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<u32> {
    use nix::sched::{sched_getaffinity, CpuSet};
    let Ok(set) = sched_getaffinity(nix::unistd::Pid::from_raw(0)) else {
        return vec![0];
    };
    (0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).map(|c| c as u32).collect()
}

/// Maps lcore 0 (main) and `workers` worker lcores onto `cpus`: main on the
/// first CPU, workers on the following ones, wrapping round when there are
/// too few (which works, but busy-polling workers then share a core).
pub fn lcore_map(workers: u16, cpus: &[u32]) -> (String, Option<String>) {
    let cpus = if cpus.is_empty() { &[0][..] } else { cpus };
    let mut map = vec![format!("0@{}", cpus[0])];
    let pool: Vec<u32> = if cpus.len() > 1 { cpus[1..].to_vec() } else { cpus.to_vec() };
    for w in 0..usize::from(workers) {
        map.push(format!("{}@{}", w + 1, pool[w % pool.len()]));
    }
    let note = (usize::from(workers) > pool.len()).then(|| {
        format!(
            "{workers} worker lcores share {} CPU(s): busy-polling workers on one core slow each other; pass -l or --lcores after -- to place them",
            pool.len()
        )
    });
    (format!("--lcores={}", map.join(",")), note)
}

/// The full EAL argument list for `workers` workers.
pub fn plan(user: &[String], workers: u16, ports: &[String]) -> EalPlan {
    let mut plan = EalPlan::default();
    if !user_chose_lcores(user) {
        match auto_lcores(user, workers, ports) {
            Ok(p) => {
                plan.args.push(format!("--lcores={}", p.eal_lcores()));
                plan.notes.extend(p.warnings.iter().cloned());
                plan.placement = Some(p);
            }
            Err(e) => {
                // No topology to read (a container without /sys): in order.
                let (lcores, note) = lcore_map(workers, &allowed_cpus());
                plan.notes.push(format!("lcores placed in CPU order: {}", with_fix(&e)));
                plan.args.push(lcores);
                plan.notes.extend(note);
            }
        }
    }
    if !has_flag(user, &["--log-level"]) {
        // EAL's start-up chatter at INFO drowns the report; warnings still show.
        plan.args.push("--log-level=lib.eal:notice".into());
        // ENA's PMD says at info whether its TX path got LLQ; blastdrop
        // reads that line into the record (a handful of lines, at probe).
        plan.args.push("--log-level=pmd.net.ena.driver:info".into());
    }
    plan.args.extend(user.iter().cloned());
    plan
}

/// DPDK EAL options (22.11 to 24.11), long and short, by name.
const EAL_LONG: &[&str] = &[
    "--lcores",
    "--allow",
    "--block",
    "--pci-whitelist",
    "--pci-blacklist",
    "--vdev",
    "--no-huge",
    "--socket-mem",
    "--socket-limit",
    "--no-pci",
    "--no-shconf",
    "--in-memory",
    "--file-prefix",
    "--proc-type",
    "--iova-mode",
    "--huge-dir",
    "--huge-unlink",
    "--huge-worker-stack",
    "--log-level",
    "--main-lcore",
    "--master-lcore",
    "--base-virtaddr",
    "--legacy-mem",
    "--single-file-segments",
    "--match-allocations",
    "--mbuf-pool-ops-name",
    "--no-hpet",
    "--no-telemetry",
    "--telemetry",
    "--syslog",
    "--trace",
    "--trace-dir",
    "--trace-bufsz",
    "--trace-mode",
    "--vfio-intr",
    "--vfio-vf-token",
    "--create-uio-dev",
    "--vmware-tsc-map",
    "--service-corelist",
    "--service-coremask",
    "--force-max-simd-bitwidth",
    "--log-color",
    "--log-timestamp",
];
const EAL_SHORT: &[&str] = &["-l", "-c", "-a", "-b", "-w", "-m", "-n", "-r", "-d", "-s", "-S"];

/// The EAL option `arg` is (`--no-huge`, `--file-prefix` for
/// `--file-prefix=x`, `-l` for `-l0-2`), if it is one.
pub fn eal_option(arg: &str) -> Option<&'static str> {
    if arg.starts_with("--") {
        let name = arg.split('=').next().unwrap_or(arg);
        EAL_LONG.iter().copied().find(|n| *n == name)
    } else {
        let name = arg.get(..2)?;
        EAL_SHORT.iter().copied().find(|n| *n == name)
    }
}

/// A net_memif device given with --vdev, as DPDK's memif PMD reads its
/// arguments (22.11 to 24.11): role client unless it says server (or
/// master); socket /run/memif.sock unless given; an abstract socket
/// unless socket-abstract=no (the default since 22.11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemifVdev {
    pub name: String,
    pub server: bool,
    pub socket: String,
    pub socket_abstract: bool,
}

/// memif's socket when the vdev names none.
pub const MEMIF_DEFAULT_SOCKET: &str = "/run/memif.sock";

/// Every --vdev's value among the EAL arguments ("net_memif0,role=server"), in order.
pub fn vdev_specs(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.strip_prefix("--vdev=") {
            Some(v) => out.push(v.to_owned()),
            None if a == "--vdev" => out.extend(it.next().cloned()),
            None => {}
        }
    }
    out
}

/// Why the EAL refused a --vdev ("No such device": no driver by its name),
/// naming the devices given, or None when no --vdev was given.
pub fn unknown_vdev_hint(user: &[String]) -> Option<String> {
    let names: Vec<String> = vdev_specs(user).iter().map(|v| v.split(',').next().unwrap_or_default().trim().to_owned()).collect();
    if names.is_empty() {
        return None;
    }
    Some(format!(
        "{} {}: DPDK has no driver by that name (a vdev is its driver's name and a number: net_null0, net_memif0, \
         net_af_packet0, net_ring0, net_tap0); check the spelling, and that the driver's package is installed",
        if names.len() == 1 { "--vdev" } else { "one of --vdev" },
        names.join(", ")
    ))
}

/// The net_memif devices among the EAL arguments, in order.
pub fn memif_vdevs(args: &[String]) -> Vec<MemifVdev> {
    let mut out = Vec::new();
    for spec in vdev_specs(args) {
        let mut parts = spec.split(',');
        let name = parts.next().unwrap_or_default().trim().to_owned();
        if !name.starts_with("net_memif") {
            continue;
        }
        let mut m = MemifVdev { name, server: false, socket: MEMIF_DEFAULT_SOCKET.into(), socket_abstract: true };
        for kv in parts {
            let Some((k, v)) = kv.split_once('=') else { continue };
            // The PMD matches values by substring (strstr), as here.
            match k.trim() {
                "role" if v.contains("server") || v.contains("master") => m.server = true,
                "role" if v.contains("client") || v.contains("slave") => m.server = false,
                "socket" => m.socket = v.to_owned(),
                "socket-abstract" if v.contains("yes") => m.socket_abstract = true,
                "socket-abstract" if v.contains("no") => m.socket_abstract = false,
                _ => {}
            }
        }
        out.push(m);
    }
    out
}

/// Hugepages reserved on this machine, over every page size.
pub fn hugepages_reserved(sysfs: &Path) -> u64 {
    let Ok(dir) = std::fs::read_dir(sysfs) else { return 0 };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("nr_hugepages")).ok())
        .filter_map(|s| s.trim().parse::<u64>().ok())
        .sum()
}

/// The advice to add when the EAL fails to start.
pub fn init_failure_hint(user: &[String]) -> String {
    let no_huge = has_flag(user, &["--no-huge"]);
    if !no_huge && hugepages_reserved(Path::new("/sys/kernel/mm/hugepages")) == 0 {
        return "no hugepages are reserved: set them up (echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages; \
                mount -t hugetlbfs nodev /dev/hugepages) or pass --no-huge -m 512 after --"
            .into();
    }
    if no_huge {
        "check the EAL arguments after -- (with --no-huge, give memory with -m 512 and add --no-shconf when two processes run at once)"
            .into()
    } else {
        "check the EAL arguments after -- and the EAL messages above (hugepages mounted? another DPDK process using the same --file-prefix?)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn ports_map_to_the_pci_devices_in_bus_order() {
        let args = s(&["-a", "0000:00:07.0,llq_policy=1", "--allow=00:06.0", "-l", "0-2"]);
        assert_eq!(all_pci(&args), ["0000:00:06.0", "0000:00:07.0"]);
        assert_eq!(first_pci(&args).as_deref(), Some("0000:00:07.0"));
        let pci = all_pci(&args);
        assert_eq!(port_pci("0", &pci).as_deref(), Some("0000:00:06.0"), "port 0 is the first probed");
        assert_eq!(port_pci("1", &pci).as_deref(), Some("0000:00:07.0"));
        assert_eq!(port_pci("2", &pci), None);
        assert_eq!(port_pci("00:07.0", &pci).as_deref(), Some("0000:00:07.0"));
        assert_eq!(port_pci("net_memif0", &pci), None);
    }

    #[test]
    fn lcore_map_spreads_then_wraps() {
        assert_eq!(lcore_map(1, &[0, 1]), ("--lcores=0@0,1@1".into(), None));
        let (m, note) = lcore_map(3, &[0, 1]);
        assert_eq!(m, "--lcores=0@0,1@1,2@1,3@1");
        assert!(note.unwrap().contains("share 1 CPU"));
        assert_eq!(lcore_map(2, &[4, 5, 6]).0, "--lcores=0@4,1@5,2@6");
        assert_eq!(lcore_map(1, &[3]).0, "--lcores=0@3,1@3");
    }

    #[test]
    fn the_nics_pci_address_is_found_in_the_eal_arguments() {
        assert_eq!(first_pci(&s(&["-l", "0-2", "-a", "0000:00:06.0"])), Some("0000:00:06.0".into()));
        assert_eq!(first_pci(&s(&["--allow=00:06.0,llq_policy=1"])), Some("0000:00:06.0".into()));
        assert_eq!(first_pci(&s(&["-a0000:81:00.1"])), Some("0000:81:00.1".into()));
        assert_eq!(first_pci(&s(&["--vdev=net_null0", "--no-pci"])), None);
    }

    #[test]
    fn user_lcores_are_respected() {
        let p = plan(&s(&["-l", "0-2", "--no-huge"]), 2, &[]);
        assert_eq!(p.args, s(&["--log-level=lib.eal:notice", "--log-level=pmd.net.ena.driver:info", "-l", "0-2", "--no-huge"]));
        assert!(user_chose_lcores(&s(&["-l0-3"])));
        assert!(user_chose_lcores(&s(&["--lcores=0@0,1@1"])));
        assert!(!user_chose_lcores(&s(&["--log-level=8"])));
    }

    #[test]
    fn user_log_level_is_respected() {
        let p = plan(&s(&["-l", "0,1", "--log-level=debug"]), 1, &[]);
        assert_eq!(p.args, s(&["-l", "0,1", "--log-level=debug"]));
    }

    #[test]
    fn eal_options_are_recognised_with_or_without_a_value() {
        for a in ["--no-huge", "--file-prefix=x", "-l", "-l0-2", "-a0000:00:06.0", "--vdev=net_null0", "-m", "--lcores=0@0"] {
            assert!(eal_option(a).is_some(), "{a}");
        }
        assert_eq!(eal_option("--file-prefix=x"), Some("--file-prefix"));
        for a in ["--queues", "--rate", "-v", "--nonsense", "-", "--"] {
            assert_eq!(eal_option(a), None, "{a}");
        }
    }

    #[test]
    fn an_unknown_vdev_is_named() {
        assert_eq!(unknown_vdev_hint(&s(&["--no-huge", "-l", "0-1"])), None);
        let one = unknown_vdev_hint(&s(&["--vdev=net_bogus0,x=1", "-l", "0-1"])).unwrap();
        assert!(one.starts_with("--vdev net_bogus0: DPDK has no driver by that name"), "{one}");
        let two = unknown_vdev_hint(&s(&["--vdev", "net_null0", "--vdev=net_nul1"])).unwrap();
        assert!(two.starts_with("one of --vdev net_null0, net_nul1:"), "{two}");
    }

    #[test]
    fn memif_vdevs_read_as_the_pmd_reads_them() {
        let v = memif_vdevs(&s(&[
            "--vdev=net_memif0,role=server,socket=/tmp/a.sock,socket-abstract=no",
            "--vdev",
            "net_memif1",
            "--vdev=net_null0",
            "--vdev=net_memif2,role=master,socket-abstract=yes",
        ]));
        assert_eq!(
            v,
            [
                MemifVdev { name: "net_memif0".into(), server: true, socket: "/tmp/a.sock".into(), socket_abstract: false },
                MemifVdev { name: "net_memif1".into(), server: false, socket: MEMIF_DEFAULT_SOCKET.into(), socket_abstract: true },
                MemifVdev { name: "net_memif2".into(), server: true, socket: MEMIF_DEFAULT_SOCKET.into(), socket_abstract: true },
            ]
        );
    }

    #[test]
    fn hugepage_count_reads_sysfs_tree() {
        let dir = std::env::temp_dir().join(format!("bd-huge-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("hugepages-2048kB")).unwrap();
        std::fs::create_dir_all(dir.join("hugepages-1048576kB")).unwrap();
        std::fs::write(dir.join("hugepages-2048kB/nr_hugepages"), "0\n").unwrap();
        std::fs::write(dir.join("hugepages-1048576kB/nr_hugepages"), "2\n").unwrap();
        assert_eq!(hugepages_reserved(&dir), 2);
        std::fs::write(dir.join("hugepages-1048576kB/nr_hugepages"), "0\n").unwrap();
        assert_eq!(hugepages_reserved(&dir), 0);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(hugepages_reserved(&dir), 0);
    }
}
