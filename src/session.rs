//! Start-up shared by both binaries: arguments, logging, the EAL, the port,
//! each failure turned into one line that names the fix.

use clap::Parser;
use dpdk::{Eal, Port};

use crate::eal_args;
use crate::fail::Failure;

/// Parses the command line; help and version print as usual, any other
/// problem becomes one line (clap's own report spans several).
pub fn parse_args<T: Parser>() -> Result<T, Failure> {
    T::try_parse().map_err(|e| {
        use clap::error::ErrorKind;
        if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
            e.exit();
        }
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_owned();
        Failure::usage(format!("{first} (see --help)"))
    })
}

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
    pub eal: Eal,
    pub eal_args: Vec<String>,
    /// Where blastdrop put the lcores (None when the user gave -l/--lcores).
    pub placement: Option<topology::Placement>,
}

/// `ports`: the --port specs, for placing each port's workers on its NUMA node.
pub fn start_eal(tool: &str, user: &[String], workers: u16, ports: &[String]) -> Result<Started, Failure> {
    let plan = eal_args::plan(user, workers, ports);
    if let Some(p) = &plan.placement {
        eprintln!("{tool}: lcores: {} (from sysfs; give -l or --lcores after -- to choose)", p.describe());
    }
    for note in &plan.notes {
        tracing::warn!("{note}");
    }
    tracing::debug!("EAL arguments: {}", plan.args.join(" "));
    let eal = Eal::init(tool, &plan.args).map_err(|e| match e {
        dpdk::Error::EalInit { reason } => {
            Failure::runtime(format!("the DPDK EAL failed to start ({reason}): {}", eal_args::init_failure_hint(user)))
        }
        other => other.into(),
    })?;
    Ok(Started { eal, eal_args: plan.args, placement: plan.placement })
}

/// Opens `spec`, or says which ports exist and how to add one.
pub fn open_port(spec: &str) -> Result<Port, Failure> {
    Port::open(spec).map_err(|e| match e {
        dpdk::Error::NoSuchPort { .. } => Failure::usage(format!("{e}; choose one with --port, or add a device with --vdev after --")),
        dpdk::Error::Other(m) if m.contains("already open") => {
            Failure::usage(format!("--port {spec}: {m}: a port given twice (by name and by id?) must be given once"))
        }
        other => other.into(),
    })
}

/// Turns a device-limit error into one that names the flag to change;
/// `size_flag` is the binary's frame-size flag.
pub fn limit_failure(e: dpdk::Error, size_flag: &str) -> Failure {
    let lower_size = format!("lower {size_flag}");
    let flag = match &e {
        dpdk::Error::Limit { what, .. } if what.contains("queues") => "lower --queues",
        dpdk::Error::Limit { what, .. } if what.contains("frame") => &lower_size,
        dpdk::Error::Limit { what, .. } if what.contains("RX ring") => "choose another --rx-ring",
        dpdk::Error::Limit { what, .. } if what.contains("TX ring") => "choose another --tx-ring",
        _ => return e.into(),
    };
    Failure::usage(format!("{e}: {flag}"))
}

/// Says which port would not start and what usually causes it.
pub fn start_failure(port: &Port, e: dpdk::Error) -> Failure {
    let i = port.info();
    Failure::runtime(format!(
        "cannot start port {} ({}, {}): {e}; check the device's arguments, and that its peer is there (a memif client needs its server running first)",
        port.id(),
        i.name,
        i.driver
    ))
}

/// The first `queues` worker lcores, or an error saying how many to give.
pub fn worker_lcores(eal: &Eal, queues: u16) -> Result<Vec<u32>, Failure> {
    let workers = eal.worker_lcores();
    if workers.len() < usize::from(queues) {
        return Err(Failure::usage(format!(
            "--queues {queues} needs {queues} worker lcores but the EAL has {}: pass -l or --lcores after -- with one more lcore than queues, or lower --queues",
            workers.len()
        )));
    }
    Ok(workers[..usize::from(queues)].to_vec())
}

/// Parsers for clap that give one clear sentence each.
pub mod parse {
    pub fn frame_size(s: &str) -> Result<u32, String> {
        let n: u32 = s.parse().map_err(|_| format!("{s:?} is not a frame size in bytes"))?;
        if (n as usize) < wire::MIN_FRAME {
            return Err(format!("{n} is below the Ethernet minimum of {} bytes (FCS included)", wire::MIN_FRAME));
        }
        Ok(n)
    }

    /// A list given as one flag value ("1,2,4", "1..32").
    #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
    #[serde(transparent)]
    pub struct List<T>(pub Vec<T>);

    impl<T> std::ops::Deref for List<T> {
        type Target = Vec<T>;
        fn deref(&self) -> &Vec<T> {
            &self.0
        }
    }

    /// A queue count, a list of them or a doubling range.
    pub fn queue_list(s: &str) -> Result<List<u16>, String> {
        Ok(List(ladder::parse_list(s, "queue count", u64::from(u16::MAX))?.into_iter().map(|v| v as u16).collect()))
    }

    /// A frame size, a list of them or a doubling range.
    pub fn size_list(s: &str) -> Result<List<u32>, String> {
        let v = ladder::parse_list(s, "frame size", u64::from(u32::MAX))?;
        for &n in &v {
            if (n as usize) < wire::MIN_FRAME {
                return Err(format!("{n} is below the Ethernet minimum of {} bytes (FCS included)", wire::MIN_FRAME));
            }
        }
        Ok(List(v.into_iter().map(|n| n as u32).collect()))
    }

    pub fn flows(s: &str) -> Result<u32, String> {
        match s.parse::<u32>() {
            Ok(0) => Err("there must be at least 1 flow".into()),
            Ok(n) if n > 65536 => Err(format!("{n} flows exceed the 65536 UDP source ports")),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("{s:?} is not a number of flows")),
        }
    }

    pub fn queues(s: &str) -> Result<u16, String> {
        match s.parse::<u16>() {
            Ok(0) => Err("there must be at least 1 queue".into()),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("{s:?} is not a queue count (1 to 65535)")),
        }
    }

    pub fn burst(s: &str) -> Result<usize, String> {
        match s.parse::<usize>() {
            Ok(n) if (1..=crate::MAX_BURST).contains(&n) => Ok(n),
            _ => Err(format!("{s:?} is not a burst size from 1 to {}", crate::MAX_BURST)),
        }
    }

    pub fn ring(s: &str) -> Result<u16, String> {
        match s.parse::<u16>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{s:?} is not a ring size (descriptors, 1 to 65535)")),
        }
    }

    pub fn rate(s: &str) -> Result<f64, String> {
        crate::units::parse_rate(s)
    }

    pub fn duration(s: &str) -> Result<std::time::Duration, String> {
        crate::units::parse_duration(s)
    }

    pub fn count(s: &str) -> Result<u64, String> {
        crate::units::parse_count(s)
    }
}
