//! Start-up shared by both binaries: logging, the EAL, the ports and the
//! lcores, each failure as an [`Error`] (the binaries say it in their flags'
//! terms: src/bin/common). `memif` checks
//! net_memif's socket files before the EAL starts; `parse` holds the flags'
//! value parsers.

mod memif;
pub mod parse;

pub use memif::check_memif_sockets;

use dpdk::{Eal, Port};

use crate::eal_args;
use crate::error::Error;

/// Logs go to stderr; reports go to stdout.
pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("BLASTDROP_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .try_init();
}

/// The EAL, started with the user's arguments plus defaults for what they
/// left out.
pub struct Started {
    /// None on the socket paths (blast --socket), which start no EAL.
    pub eal: Option<Eal>,
    pub eal_args: Vec<String>,
    /// Where blastdrop put the lcores (None when the user gave -l/--lcores).
    pub placement: Option<topology::Placement>,
}

/// `ports`: the --port specs, for placing each port's workers on its NUMA node.
pub fn start_eal(tool: &str, user: &[String], workers: u16, ports: &[String]) -> Result<Started, Error> {
    // The EAL would refuse the --lcores made for them with its whole usage
    // text. (Lcores the user chose are checked against the device's limits
    // first, then counted: worker_lcores.)
    let max_lcores = dpdk::consts::MAX_LCORE;
    if !eal_args::user_chose_lcores(user) && u32::from(workers) + 1 > max_lcores {
        return Err(Error::LcoresBeyondBuild { workers, max_lcores });
    }
    let plan = eal_args::plan(user, workers, ports);
    check_memif_sockets(&plan.args)?;
    if let Some(p) = &plan.placement {
        eprintln!("{tool}: lcores: {} (from sysfs; give -l or --lcores after -- to choose)", p.describe());
    }
    for note in &plan.notes {
        tracing::warn!("{note}");
    }
    tracing::debug!("EAL arguments: {}", plan.args.join(" "));
    let eal = Eal::init(tool, &plan.args).map_err(|e| match e {
        dpdk::Error::EalInit { reason } => {
            // ENODEV: a --vdev whose driver DPDK does not have.
            let hint = eal_args::unknown_vdev_hint(user)
                .filter(|_| reason.contains("No such device"))
                .unwrap_or_else(|| eal_args::init_failure_hint(user));
            Error::EalInit { reason, hint }
        }
        other => other.into(),
    })?;
    if eal_args::user_chose_lcores(user) {
        // The user's map may put workers on one CPU (`--lcores=0@0,1@0,2@0`):
        // said now, and in the record's environment.lcore_warnings.
        let lanes: Vec<(u32, Vec<u32>)> = eal.worker_lcores().into_iter().map(|l| (l, eal.lcore_cpus(l))).collect();
        if let Some(w) = topology::shared_cpu_warning(&lanes) {
            tracing::warn!("{w}");
        }
    }
    Ok(Started { eal: Some(eal), eal_args: plan.args, placement: plan.placement })
}

impl Started {
    /// A run on the socket paths: no EAL, no placement.
    pub fn without_eal() -> Started {
        Started { eal: None, eal_args: Vec::new(), placement: None }
    }
}

/// Opens `spec`, or says which ports exist and how to add one.
pub fn open_port(spec: &str) -> Result<Port, Error> {
    Port::open(spec).map_err(|e| match e {
        dpdk::Error::NoSuchPort { .. } => Error::NoSuchPort { source: e },
        dpdk::Error::AlreadyOpen { .. } => Error::PortTwice { spec: spec.to_owned(), source: e },
        other => other.into(),
    })
}

/// Says which port would not start and what usually causes it.
pub fn start_failure(port: &Port, e: dpdk::Error) -> Error {
    if e.is_device_wait() {
        return e.into();
    }
    let i = port.info();
    Error::PortStart { port: port.id(), name: i.name.clone(), driver: i.driver.clone(), source: e }
}

/// The first `queues` worker lcores, or an error saying how many to give.
pub fn worker_lcores(eal: &Eal, queues: u16) -> Result<Vec<u32>, Error> {
    let workers = eal.worker_lcores();
    if workers.len() < usize::from(queues) {
        return Err(Error::TooFewLcores { queues, workers: workers.len() });
    }
    Ok(workers[..usize::from(queues)].to_vec())
}
