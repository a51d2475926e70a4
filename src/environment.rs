//! The environment record (`environment_record::Environment`): where and on what a run
//! happened. One builder for both tools; blast describes its sender, drop
//! its receiver, and each passes only what differs.

use crate::environment_record::{machine, port_record, with_ec2_metadata, Environment, LcoreRecord, MempoolRecord, PortRecord};
use crate::error::Error;
use crate::receiver::{Receiver, Totals};
use crate::sender::Sender;
use crate::session::Started;

/// A queue's worker: (queue, index of its port in --port order, lcore).
pub type QueueLcore = (u16, u16, u32);

/// The environment of a run: this host, the EAL as `started`, the ports
/// (the first is `port`; all of them in `ports` when there are several),
/// each queue's lcore and CPU, and the mempools.
pub fn build(
    started: &Started,
    tsc_hz: u64,
    ports: Vec<PortRecord>,
    lcores: impl IntoIterator<Item = QueueLcore>,
    mempools: Vec<MempoolRecord>,
) -> Environment {
    let lcores = match &started.eal {
        Some(eal) => lcore_records(eal, lcores),
        None => thread_records(lcores),
    };
    let mut ports = ports;
    for port in ports.iter_mut().filter(|p| dpdk::af_xdp::is_af_xdp(&p.driver)) {
        port.xdp = Some(crate::xdp::state(&port.name, &started.eal_args));
    }
    Environment {
        hostname: hostname(),
        cpu_model: cpu_model(),
        machine: with_ec2_metadata(machine()),
        dpdk_runtime: datapath(started.eal.is_none()),
        dpdk_built_against: dpdk::built_against().into(),
        tsc_hz,
        clock: crate::clock::core().clone(),
        hugepages: started.eal.as_ref().is_some_and(|e| e.has_hugepages()),
        eal_args: started.eal_args.clone(),
        placement: started.placement.clone(),
        port: ports[0].clone(),
        ports: if ports.len() > 1 { ports } else { Vec::new() },
        lcore_warnings: shared_cpus(&lcores).into_iter().collect(),
        lcores,
        mempools,
    }
}

/// Each queue's lcore with the CPUs the EAL pinned it to (its cpuset).
fn lcore_records(eal: &dpdk::Eal, lcores: impl IntoIterator<Item = QueueLcore>) -> Vec<LcoreRecord> {
    lcores
        .into_iter()
        .map(|(queue, port, lcore)| {
            let cpus = eal.lcore_cpus(lcore);
            let cpu = (cpus.len() == 1).then(|| cpus[0]);
            LcoreRecord { queue, port, lcore, cpu, cpus, socket: eal.lcore_socket(lcore) }
        })
        .collect()
}

/// What moves the frames, as records and lines say it: the DPDK release, or
/// on the socket paths (no EAL) the kernel's UDP sockets.
pub fn datapath(on_sockets: bool) -> String {
    if on_sockets {
        "none: the kernel's UDP sockets".into()
    } else {
        dpdk::runtime_version()
    }
}

/// Without an EAL (the socket paths) each queue's lane is a thread pinned
/// to one CPU, named where an lcore id would be; its NUMA node from sysfs.
fn thread_records(lanes: impl IntoIterator<Item = QueueLcore>) -> Vec<LcoreRecord> {
    lanes
        .into_iter()
        .map(|(queue, port, cpu)| LcoreRecord { queue, port, lcore: cpu, cpu: Some(cpu), cpus: vec![cpu], socket: numa_node_of(cpu) })
        .collect()
}

/// The NUMA node holding `cpu` (its `nodeN` entry in sysfs; 0 where none is listed).
fn numa_node_of(cpu: u32) -> u32 {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .unwrap_or(0)
}

/// Workers that may share a CPU, each lcore once (two queues on one lcore
/// are one lane).
fn shared_cpus(lcores: &[LcoreRecord]) -> Option<String> {
    let mut lanes: Vec<(u32, Vec<u32>)> = Vec::new();
    for l in lcores {
        if !lanes.iter().any(|(lcore, _)| *lcore == l.lcore) {
            lanes.push((l.lcore, l.cpus.clone()));
        }
    }
    topology::shared_cpu_warning(&lanes)
}

/// The sender's environment, its first `queues` queues' lcores.
pub fn of_sender(started: &Started, sender: &Sender, queues: u16) -> Environment {
    if let Some(side) = sender.socket_side() {
        let lcores = (0..queues).map(|q| (q, 0, sender.lcores()[usize::from(q)]));
        return build(started, sender.tsc_hz(), vec![socket_port_record(side)], lcores, Vec::new());
    }
    let nports = sender.sides().len() as u16;
    let ports = sender
        .sides()
        .iter()
        .map(|side| PortRecord {
            counters_from: side.watch.kernel_source(),
            ..port_record(&side.port, side.own_mac, false, side.link, side.ena.clone())
        })
        .collect();
    let lcores = sender.lcores()[..usize::from(queues)]
        .iter()
        .enumerate()
        .map(|(q, &l)| (q as u16, layout::Spread::new(queues, nports).port_of(q as u16).0, l));
    build(started, sender.tsc_hz(), ports, lcores, sender.mempools.clone())
}

/// blast --socket's path where a port's record goes: the interface that
/// holds --src-ip, its MTU, MAC, state and speed as the kernel says them.
fn socket_port_record(side: &crate::sender::SocketSide) -> PortRecord {
    let (link_up, link_speed_mbps) = kernel_link(&side.interface);
    PortRecord {
        id: 0,
        name: side.info.name.clone(),
        driver: side.info.driver.clone(),
        socket: -1,
        mac: side.mac.to_string(),
        max_rx_queues: 0,
        max_tx_queues: u16::MAX,
        max_frame: side.info.max_rx_pktlen,
        mtu: side.mtu,
        rss: false,
        tx_offloads: if side.cfg.segments > 1 { vec!["UDP_SEGMENT (GSO)".into()] } else { Vec::new() },
        promiscuous: false,
        link_up,
        link_speed_mbps,
        ena: None,
        xdp: None,
        counters_from: side.watch.as_ref().and_then(|w| w.kernel_source()),
    }
}

/// A kernel interface's state and speed as sysfs says them: up, and Mb/s
/// (veth and other virtual links say -1, unknown: 0 here, as a port without a speed).
fn kernel_link(interface: &str) -> (bool, u32) {
    let sys = |leaf: &str| std::fs::read_to_string(format!("/sys/class/net/{interface}/{leaf}")).unwrap_or_default();
    let speed = sys("speed").trim().parse::<i64>().ok().filter(|&s| s > 0).map_or(0, |s| s as u32);
    (sys("operstate").trim() == "up", speed)
}

/// drop --socket's environment: its sockets where a port's record goes
/// (the address, the interface that holds it, its MAC, MTU, state and
/// speed), and each queue's lane thread with its CPU.
pub fn of_socket_receiver(
    started: &Started,
    rx: &crate::socket_rx::SocketReceiver,
    totals: &crate::socket_rx::SocketTotals,
) -> Environment {
    let cfg = rx.config();
    let interface = rx.interface().unwrap_or_default();
    let sys = |leaf: &str| std::fs::read_to_string(format!("/sys/class/net/{interface}/{leaf}")).unwrap_or_default();
    let (link_up, link_speed_mbps) = if interface.is_empty() { (true, 0) } else { kernel_link(interface) };
    let mtu = sys("mtu").trim().parse().unwrap_or(0);
    let port = PortRecord {
        id: 0,
        name: format!("udp:{}", cfg.addr),
        driver: "udp-socket".into(),
        socket: -1,
        mac: sys("address").trim().to_string(),
        max_rx_queues: cfg.max_queues,
        max_tx_queues: 0,
        max_frame: if mtu > 0 { mtu + 18 } else { 0 },
        mtu,
        // SO_REUSEPORT spreads flows over the sockets by their hash, as RSS does.
        rss: true,
        tx_offloads: Vec::new(),
        promiscuous: false,
        link_up,
        link_speed_mbps,
        ena: None,
        xdp: None,
        counters_from: rx.counters_from(),
    };
    let lcores = totals.queues.iter().map(|q| (q.queue, 0, cfg.cpu_of(q.queue).unwrap_or(0) as u32));
    build(started, crate::clock::tsc_hz(), vec![port], lcores, Vec::new())
}

/// The receiver's environment, with the lcores of the queues in `totals`.
pub fn of_receiver(started: &Started, receiver: &Receiver, totals: &Totals) -> Result<Environment, Error> {
    let ports = receiver
        .sides()
        .iter()
        .map(|side| {
            let mac = wire::MacAddr(side.port.mac()?);
            Ok(PortRecord {
                counters_from: side.watch.kernel_source(),
                ..port_record(&side.port, mac, side.promiscuous, side.port.link(), side.ena.clone())
            })
        })
        .collect::<Result<Vec<PortRecord>, Error>>()?;
    let lcores = totals.queues.iter().map(|(&q, t)| (q, t.port, t.lcore));
    Ok(build(started, receiver.tsc_hz(), ports, lcores, receiver.mempools.clone()))
}

/// This host's name, or empty when it cannot be read.
pub fn hostname() -> String {
    nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_default()
}

/// The CPU's model as /proc/cpuinfo names it (x86's "model name", Arm's
/// "Model" or "CPU part"), or "unknown".
pub fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    for key in ["model name", "Model", "CPU part"] {
        if let Some(line) = info.lines().find(|l| l.starts_with(key)) {
            if let Some((_, v)) = line.split_once(':') {
                return v.trim().to_owned();
            }
        }
    }
    String::from("unknown")
}
