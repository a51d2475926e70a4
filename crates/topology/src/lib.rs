//! Where to put lcores: the machine's CPUs read from sysfs (physical cores,
//! hyperthread siblings, NUMA nodes), and a placement for one main lcore and
//! N workers that knows them: workers on the NIC's NUMA node, one per
//! physical core before any hyperthread sibling, the main lcore on a core
//! of its own when there is one to spare. No EAL here; tests run on
//! recorded sysfs trees.

pub mod core_clock;

pub use core_clock::{CoreClock, TimerKind};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Why the CPUs could not be read or the lcores placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("bad CPU list {0:?}")]
    BadCpuList(String),
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("bad {file} for cpu{cpu}")]
    BadValue { file: String, cpu: u32 },
    #[error("no online CPU under {}", .0.display())]
    NoCpu(PathBuf),
    #[error("no CPU to place lcores on")]
    NothingToPlaceOn,
    /// More workers than CPUs the process may use.
    #[error("{workers} worker lcores asked for, but this process may use only {cpus} CPUs")]
    TooManyWorkers { workers: usize, cpus: usize },
}

/// One logical CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Cpu {
    pub id: u32,
    /// Physical core: (package, core id) is unique per physical core.
    pub package: u32,
    pub core: u32,
    pub node: u32,
}

impl Cpu {
    fn physical(&self) -> (u32, u32) {
        (self.package, self.core)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Topology {
    pub cpus: Vec<Cpu>,
}

/// Parses a sysfs CPU list ("0-3,8,10-11").
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, TopologyError> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (
                    a.parse().map_err(|_| TopologyError::BadCpuList(s.to_string()))?,
                    b.parse().map_err(|_| TopologyError::BadCpuList(s.to_string()))?,
                );
                if a > b {
                    return Err(TopologyError::BadCpuList(s.to_string()));
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| TopologyError::BadCpuList(s.to_string()))?),
        }
    }
    Ok(out)
}

fn read(path: &Path) -> Result<String, TopologyError> {
    std::fs::read_to_string(path).map_err(|e| TopologyError::Unreadable { path: path.to_path_buf(), reason: e.to_string() })
}

impl Topology {
    /// Reads the online CPUs under `root` (normally "/sys").
    pub fn from_sysfs(root: &Path) -> Result<Topology, TopologyError> {
        let cpu_dir = root.join("devices/system/cpu");
        let online = parse_cpu_list(&read(&cpu_dir.join("online"))?)?;
        // NUMA nodes: a machine without node directories is one node.
        let mut node_of = BTreeMap::new();
        let node_dir = root.join("devices/system/node");
        if let Ok(entries) = std::fs::read_dir(&node_dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if let Some(n) = name.strip_prefix("node").and_then(|n| n.parse::<u32>().ok()) {
                    if let Ok(list) = read(&e.path().join("cpulist")) {
                        for c in parse_cpu_list(&list)? {
                            node_of.insert(c, n);
                        }
                    }
                }
            }
        }
        let mut cpus = Vec::new();
        for id in online {
            let t = cpu_dir.join(format!("cpu{id}/topology"));
            let num = |f: &str| -> Result<u32, TopologyError> {
                let v = read(&t.join(f))?;
                // -1 where the platform does not say.
                Ok(v.trim().parse::<i64>().map_err(|_| TopologyError::BadValue { file: f.to_string(), cpu: id })?.max(0) as u32)
            };
            cpus.push(Cpu {
                id,
                package: num("physical_package_id")?,
                core: num("core_id")?,
                node: node_of.get(&id).copied().unwrap_or(0),
            });
        }
        if cpus.is_empty() {
            return Err(TopologyError::NoCpu(cpu_dir));
        }
        Ok(Topology { cpus })
    }

    /// Only these CPUs (the process's affinity mask).
    pub fn restricted_to(&self, allowed: &[u32]) -> Topology {
        Topology { cpus: self.cpus.iter().filter(|c| allowed.contains(&c.id)).copied().collect() }
    }

    pub fn physical_cores(&self) -> usize {
        let mut v: Vec<_> = self.cpus.iter().map(|c| c.physical()).collect();
        v.sort();
        v.dedup();
        v.len()
    }

    pub fn has_smt(&self) -> bool {
        self.physical_cores() < self.cpus.len()
    }
}

/// The NUMA node of a PCI device (None when sysfs does not say).
pub fn pci_numa_node(root: &Path, pci: &str) -> Option<u32> {
    let v = read(&root.join("bus/pci/devices").join(pci).join("numa_node")).ok()?;
    let n: i64 = v.trim().parse().ok()?;
    (n >= 0).then_some(n as u32)
}

/// Where the lcores go.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Placement {
    pub main: u32,
    /// Worker i runs on CPU workers[i].
    pub workers: Vec<u32>,
    pub nic_node: Option<u32>,
    /// With several ports: each port's NUMA node, in --port order (worker i
    /// serves port i mod their count). Empty with one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub port_nodes: Vec<Option<u32>>,
    pub warnings: Vec<String>,
}

impl Placement {
    /// The EAL's --lcores value: lcore 0 on the main CPU, lcore i on worker i-1's.
    pub fn eal_lcores(&self) -> String {
        let mut parts = vec![format!("0@{}", self.main)];
        parts.extend(self.workers.iter().enumerate().map(|(i, c)| format!("{}@{}", i + 1, c)));
        parts.join(",")
    }

    /// "main on CPU 0; workers on CPUs 1, 2, 3 (node 0)".
    pub fn describe(&self) -> String {
        let ws: Vec<String> = self.workers.iter().map(u32::to_string).collect();
        let nodes = if self.port_nodes.is_empty() {
            self.nic_node.map_or(String::new(), |n| format!(" (NIC on NUMA node {n})"))
        } else {
            let n: Vec<String> = self.port_nodes.iter().map(|n| n.map_or("?".into(), |n| n.to_string())).collect();
            format!(" (ports on NUMA nodes {}; worker i serves port i mod {})", n.join(", "), self.port_nodes.len())
        };
        format!("main lcore on CPU {}; {} worker(s) on CPU(s) {}{nodes}", self.main, self.workers.len(), ws.join(", "))
    }
}

/// Every CPU in the order workers should take them when their NIC is on
/// node `home` and the main lcore is on `main`: on `home` first, one thread
/// of every other physical core; then the main lcore's hyperthread siblings
/// (the main lcore mostly sleeps); then the other siblings. Only then the
/// other nodes, in the same order; and last the main lcore's own CPU.
fn worker_order(topo: &Topology, home: u32, main: u32) -> Vec<u32> {
    // (off the home node, node) -> physical core -> its CPUs.
    type Cores = BTreeMap<(u32, u32), Vec<u32>>;
    let mut nodes: BTreeMap<(bool, u32), Cores> = BTreeMap::new();
    for c in &topo.cpus {
        nodes.entry((c.node != home, c.node)).or_default().entry(c.physical()).or_default().push(c.id);
    }
    let mut order: Vec<u32> = Vec::new();
    for cores in nodes.values() {
        let mut cores: Vec<Vec<u32>> = cores.values().cloned().collect();
        for t in &mut cores {
            t.sort();
        }
        let mut main_siblings = Vec::new();
        if let Some(i) = cores.iter().position(|t| t.contains(&main)) {
            main_siblings = cores.remove(i).into_iter().filter(|&c| c != main).collect();
        }
        order.extend(cores.iter().map(|t| t[0]));
        order.extend(main_siblings);
        order.extend(cores.iter().flat_map(|t| t[1..].iter().copied()));
    }
    order.push(main);
    order
}

/// The main lcore: the first thread of the first physical core on `home`.
fn main_cpu(topo: &Topology, home: u32) -> u32 {
    let on_home = topo.cpus.iter().filter(|c| c.node == home);
    let first = on_home.clone().map(|c| c.physical()).min();
    match first {
        Some(core) => topo.cpus.iter().filter(|c| c.physical() == core).map(|c| c.id).min().expect("the core has a CPU"),
        None => topo.cpus.iter().map(|c| c.id).min().expect("at least one CPU"),
    }
}

/// Places a main lcore and `workers` workers on `topo`, preferring the
/// NIC's node. The main lcore takes the NIC node's first physical core;
/// workers follow `worker_order`.
pub fn place(topo: &Topology, workers: usize, nic_node: Option<u32>) -> Result<Placement, TopologyError> {
    if topo.cpus.is_empty() {
        return Err(TopologyError::NothingToPlaceOn);
    }
    let home = nic_node.unwrap_or(topo.cpus[0].node);
    let main = main_cpu(topo, home);
    let order = worker_order(topo, home, main);
    if workers > order.len() {
        return Err(TopologyError::TooManyWorkers { workers, cpus: topo.cpus.len() });
    }
    let chosen: Vec<u32> = order[..workers].to_vec();
    let warnings = warnings(topo, &chosen, main, |_| nic_node);
    Ok(Placement { main, workers: chosen, nic_node, port_nodes: Vec::new(), warnings })
}

/// Several ports, perhaps on different NUMA nodes (a machine whose two
/// network cards hang off two sockets): worker i serves port i mod P and
/// takes the next free CPU in its port's node's order; the main lcore goes
/// on the first port's node. With the ports on one node (or unknown), the
/// same as `place`.
pub fn place_ports(topo: &Topology, workers: usize, port_nodes: &[Option<u32>]) -> Result<Placement, TopologyError> {
    let known: Vec<u32> = port_nodes.iter().flatten().copied().collect();
    let first = port_nodes.first().copied().flatten().or(known.first().copied());
    if port_nodes.len() <= 1 || known.iter().all(|&n| Some(n) == first) {
        let mut p = place(topo, workers, first)?;
        if port_nodes.len() > 1 {
            p.port_nodes = port_nodes.to_vec();
        }
        return Ok(p);
    }
    if topo.cpus.is_empty() {
        return Err(TopologyError::NothingToPlaceOn);
    }
    if workers > topo.cpus.len() {
        return Err(TopologyError::TooManyWorkers { workers, cpus: topo.cpus.len() });
    }
    let home = first.unwrap_or(topo.cpus[0].node);
    let main = main_cpu(topo, home);
    let node_of = |w: usize| port_nodes[w % port_nodes.len()];
    let mut chosen: Vec<u32> = Vec::new();
    for w in 0..workers {
        let order = worker_order(topo, node_of(w).unwrap_or(home), main);
        let cpu = order.into_iter().find(|c| !chosen.contains(c)).expect("fewer workers than CPUs");
        chosen.push(cpu);
    }
    let warnings = warnings(topo, &chosen, main, node_of);
    Ok(Placement { main, workers: chosen, nic_node: first, port_nodes: port_nodes.to_vec(), warnings })
}

/// What a user should know about a placement: workers sharing a physical
/// core, the main lcore's CPU, and workers off their NIC's node.
fn warnings(topo: &Topology, chosen: &[u32], main: u32, node_of_worker: impl Fn(usize) -> Option<u32>) -> Vec<String> {
    let mut warnings = Vec::new();
    let cpu = |id: u32| topo.cpus.iter().find(|c| c.id == id).copied().expect("chosen from topo");
    let mut per_core: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
    for &w in chosen {
        per_core.entry(cpu(w).physical()).or_default().push(w);
    }
    let shared: Vec<String> = per_core.values().filter(|v| v.len() > 1).map(|v| format!("{v:?}")).collect();
    if !shared.is_empty() {
        warnings.push(format!("workers share physical cores (hyperthread siblings {}): each gets about half a core", shared.join(", ")));
    }
    if chosen.contains(&main) {
        warnings.push(format!("a worker shares CPU {main} with the main lcore: there are fewer CPUs than workers + 1"));
    } else if chosen.iter().any(|&w| cpu(w).physical() == cpu(main).physical()) {
        warnings.push("a worker shares the main lcore's physical core (hyperthread sibling)".to_string());
    }
    let mut off: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, &w) in chosen.iter().enumerate() {
        if let Some(n) = node_of_worker(i) {
            if cpu(w).node != n {
                off.entry(n).or_default().push(w);
            }
        }
    }
    for (n, cpus) in off {
        warnings.push(format!("workers on CPUs {cpus:?} are off the NIC's NUMA node {n}: every frame crosses the interconnect"));
    }
    warnings
}

/// Workers whose lcores may run on a common CPU, from each lane's CPU set as
/// the EAL pinned it (`lanes`: (lcore, its CPUs)); one sentence naming
/// them, or None when no two sets overlap. Busy-polling lanes on one CPU
/// take turns, so every per-lane figure is then the CPU's, split. Lanes
/// with an unknown (empty) set are left out: unknown is not shared.
pub fn shared_cpu_warning(lanes: &[(u32, Vec<u32>)]) -> Option<String> {
    let mut sharing: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, (lcore, cpus)) in lanes.iter().enumerate() {
        let overlaps = lanes.iter().enumerate().any(|(j, (_, other))| i != j && cpus.iter().any(|c| other.contains(c)));
        if overlaps {
            for &c in cpus {
                let on = sharing.entry(c).or_default();
                if !on.contains(lcore) {
                    on.push(*lcore);
                }
            }
        }
    }
    sharing.retain(|_, lcores| lcores.len() > 1);
    if sharing.is_empty() {
        return None;
    }
    let each: Vec<String> = sharing.iter().map(|(cpu, lcores)| format!("CPU {cpu}: lcores {lcores:?}")).collect();
    Some(format!("workers share a core ({}): busy-polling lanes on one CPU take turns, each gets a share of it", each.join("; ")))
}

/// The sysfs root: $BLASTDROP_SYSFS (for tests), or /sys.
pub fn sysfs_root() -> PathBuf {
    std::env::var_os("BLASTDROP_SYSFS").map_or_else(|| PathBuf::from("/sys"), PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sysfs trees under tests/sysfs: the Intel, Graviton and two-socket
    /// ones are written in the layout Linux gives those machines (first
    /// threads numbered first, siblings after); the VM one is copied from a
    /// real machine.
    fn fixture(name: &str) -> Topology {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sysfs").join(name);
        Topology::from_sysfs(&root).unwrap()
    }

    #[test]
    fn lanes_whose_cpu_sets_overlap_are_named() {
        // --lcores=0@0,1@0,2@0: both workers on CPU 0.
        let w = shared_cpu_warning(&[(1, vec![0]), (2, vec![0])]).unwrap();
        assert!(w.starts_with("workers share a core (CPU 0: lcores [1, 2])"), "{w}");
        // One lane allowed on 0-1, another on 1: they meet on CPU 1 only.
        let w = shared_cpu_warning(&[(1, vec![0, 1]), (2, vec![1]), (3, vec![2])]).unwrap();
        assert!(w.contains("CPU 1: lcores [1, 2]") && !w.contains("CPU 0") && !w.contains("CPU 2"), "{w}");
        // Disjoint sets, a single lane, an unknown set: nothing said.
        assert_eq!(shared_cpu_warning(&[(1, vec![0]), (2, vec![1])]), None);
        assert_eq!(shared_cpu_warning(&[(1, vec![0, 1])]), None);
        assert_eq!(shared_cpu_warning(&[(1, vec![]), (2, vec![])]), None);
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n").unwrap(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("5").unwrap(), [5]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }

    #[test]
    fn intel_with_hyperthreads_gets_one_worker_per_physical_core_first() {
        // 4 cores x 2 threads; siblings are n and n+4.
        let t = fixture("intel-4c8t");
        assert_eq!((t.cpus.len(), t.physical_cores(), t.has_smt()), (8, 4, true));
        let p = place(&t, 3, Some(0)).unwrap();
        assert_eq!(p.main, 0);
        assert_eq!(p.workers, [1, 2, 3], "one per physical core, main's core left alone");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.eal_lcores(), "0@0,1@1,2@2,3@3");
        // Five workers: the fourth and fifth are siblings, and it says so.
        // Five workers: the main lcore's sibling first (it mostly sleeps),
        // then another sibling; both said.
        let p = place(&t, 5, Some(0)).unwrap();
        assert_eq!(p.workers, [1, 2, 3, 4, 5]);
        assert!(p.warnings.iter().any(|w| w.contains("share physical cores")), "{:?}", p.warnings);
        assert!(p.warnings.iter().any(|w| w.contains("main lcore's physical core")), "{:?}", p.warnings);
    }

    #[test]
    fn graviton_without_smt_uses_every_core_but_the_main_one() {
        let t = fixture("graviton-16c");
        assert!(!t.has_smt());
        let p = place(&t, 15, None).unwrap();
        assert_eq!(p.main, 0);
        assert_eq!(p.workers, (1..16).collect::<Vec<_>>());
        assert!(p.warnings.is_empty());
        // One more than there is room for: the main lcore's CPU, with a warning.
        let p = place(&t, 16, None).unwrap();
        assert_eq!(p.workers.last(), Some(&0));
        assert!(p.warnings.iter().any(|w| w.contains("shares CPU 0 with the main lcore")));
        assert!(place(&t, 17, None).unwrap_err().to_string().contains("only 16 CPUs"));
    }

    #[test]
    fn two_sockets_keep_workers_on_the_nics_node() {
        // 2 sockets x 4 cores x 2 threads: node 0 has CPUs 0-3 and 8-11, node 1 has 4-7 and 12-15.
        let t = fixture("two-socket-2x4c");
        let p = place(&t, 3, Some(1)).unwrap();
        assert_eq!(p.main, 4, "the main lcore on the NIC's node too");
        assert_eq!(p.workers, [5, 6, 7]);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        // More workers than node 1 has physical cores: node 1's siblings
        // before the other node; crossing only past them, and flagged.
        let p = place(&t, 6, Some(1)).unwrap();
        assert_eq!(p.workers, [5, 6, 7, 12, 13, 14]);
        assert!(!p.warnings.iter().any(|w| w.contains("NUMA")), "{:?}", p.warnings);
        let p = place(&t, 9, Some(1)).unwrap();
        assert_eq!(p.workers, [5, 6, 7, 12, 13, 14, 15, 0, 1]);
        assert!(p.warnings.iter().any(|w| w.contains("off the NIC's NUMA node 1")), "{:?}", p.warnings);
    }

    #[test]
    fn two_ports_on_two_sockets_keep_each_worker_on_its_ports_node() {
        // Port 0's NIC on node 1, port 1's on node 0: workers alternate.
        let t = fixture("two-socket-2x4c");
        let p = place_ports(&t, 4, &[Some(1), Some(0)]).unwrap();
        assert_eq!(p.main, 4, "the main lcore on the first port's node");
        assert_eq!(p.workers, [5, 0, 6, 1], "worker i on port i mod 2's node");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.eal_lcores(), "0@4,1@5,2@0,3@6,4@1");
        assert!(p.describe().contains("ports on NUMA nodes 1, 0"), "{}", p.describe());
        // Past a node's physical cores: its siblings, then the other node, flagged.
        let p = place_ports(&t, 12, &[Some(1), Some(0)]).unwrap();
        assert_eq!(&p.workers[..8], [5, 0, 6, 1, 7, 2, 12, 3]);
        assert!(p.warnings.iter().any(|w| w.contains("share physical cores")), "{:?}", p.warnings);
        // Both ports on one node: exactly the one-port placement.
        let one = place(&t, 3, Some(1)).unwrap();
        let both = place_ports(&t, 3, &[Some(1), Some(1)]).unwrap();
        assert_eq!((both.main, both.workers.clone()), (one.main, one.workers.clone()));
        assert_eq!(both.port_nodes, [Some(1), Some(1)]);
        assert_eq!(place_ports(&t, 3, &[Some(1)]).unwrap(), one);
        assert!(place_ports(&t, 17, &[Some(1), Some(0)]).unwrap_err().to_string().contains("only 16 CPUs"));
    }

    #[test]
    fn an_affinity_mask_narrows_the_choice() {
        let t = fixture("intel-4c8t").restricted_to(&[2, 3, 6, 7]);
        let p = place(&t, 2, None).unwrap();
        assert_eq!(p.main, 2);
        assert_eq!(p.workers, [3, 6], "core 3's first thread, then the main lcore's sibling before core 3's");
    }

    #[test]
    fn this_projects_two_cpu_vm_as_recorded() {
        // Copied from /sys on the project's 2-CPU CI kind of machine.
        let t = fixture("recorded-amd-epyc-vm-2c");
        assert_eq!((t.cpus.len(), t.has_smt()), (2, false));
        let p = place(&t, 1, None).unwrap();
        assert_eq!((p.main, p.workers.clone()), (0, vec![1]));
        assert!(p.warnings.is_empty());
        let p = place(&t, 2, None).unwrap();
        assert_eq!(p.workers, [1, 0]);
        assert_eq!(p.warnings.len(), 1, "the second worker shares the main lcore's CPU: {:?}", p.warnings);
    }

    #[test]
    fn pci_numa_node_reads_sysfs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sysfs/two-socket-2x4c");
        assert_eq!(pci_numa_node(&root, "0000:81:00.0"), Some(1));
        assert_eq!(pci_numa_node(&root, "0000:00:05.0"), None, "numa_node -1: unknown");
        assert_eq!(pci_numa_node(&root, "0000:ff:00.0"), None);
    }
}
