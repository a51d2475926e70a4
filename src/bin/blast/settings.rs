//! What blast will do, resolved once from its flags (ripgrep's LowArgs ->
//! HiArgs -> Mode): `main` checks the flags and resolves the `Mode`
//! (mode/, whose errors name the flags), then makes these `Settings`; the
//! modes and everything below them read these parts, never `Args`. Only
//! the record's `config` still carries the flags as given, and it can be
//! written, not read.

use std::net::Ipv6Addr;
use std::path::PathBuf;
use std::time::Duration;

use crate::fail::Failure;
use blastdrop::sender::{Addressing, SenderConfig};
use blastdrop::socket_tx::SocketTxConfig;
use blastdrop::timeline::TimelineConfig;

use crate::args::Args;

/// One run of blast, everything below `main` needs.
pub(crate) struct Settings<'a> {
    /// The sender's ports, queues, ring and addresses, sized for every step
    /// the flags ask for (a ladder fitted to its ports, or a replay's
    /// largest frame, adjust it in `main`).
    pub sender: SenderConfig,
    /// --socket: the kernel's UDP sockets in place of a port (None: a DPDK port).
    pub socket: Option<SocketTxConfig>,
    pub traffic: Traffic,
    pub peer: PeerSettings,
    pub timing: Timing,
    pub judging: Judging,
    pub outputs: Outputs,
    pub rewrite: RewriteSettings,
    /// The flags as given, for the record's `config`.
    pub config: AsGiven<'a>,
}

/// What the steps send, beyond each step's own queues, size, rate and shape.
pub(crate) struct Traffic {
    /// Flows per step (None: one per queue).
    pub flows: Option<u32>,
    /// drop turns every frame round, for the round trip of the probes.
    pub reflect: bool,
    /// The rate of a run with one traffic (single, knee); None: unpaced.
    pub paced_rate: Option<f64>,
    /// Every rate given (empty: unpaced).
    pub rates: Vec<f64>,
    /// drop's RX queues per step (None: as many as the step's TX queues).
    pub rx_queues: Option<u16>,
    /// --cross-check: steps measured again with the C lanes.
    pub cross_check: bool,
}

impl Traffic {
    /// A step's flows at `queues` queues.
    pub fn flows_at(&self, queues: u16) -> u32 {
        self.flows.unwrap_or(u32::from(queues))
    }
}

/// The receiver blast drives, when there is one.
pub(crate) struct PeerSettings {
    /// drop's control address (None: no peer).
    pub addr: Option<String>,
    pub token_file: Option<PathBuf>,
    /// The secret given on the command line (the weakest of the three sources).
    pub token: Option<String>,
    /// A group of senders stepping together: its name and size.
    pub group: Option<(String, u16)>,
    /// How long each control exchange may take.
    pub control_timeout: Duration,
    /// Where the frames go, each port's (--dst-ip, --dst-port): a drop on
    /// UDP sockets must be listening there.
    pub destinations: Vec<(std::net::Ipv4Addr, u16)>,
}

/// How long each part of a step takes.
#[derive(Clone, Copy)]
pub(crate) struct Timing {
    pub warmup: Duration,
    /// A knee search trial's length (confirmations take the mode's duration).
    pub search_duration: Duration,
    /// Runs of every step.
    pub repeat: u32,
}

/// What the figures are judged against.
pub(crate) struct Judging {
    /// NDR's and PDR's loss, in percent.
    pub loss_pct: f64,
    pub pdr_loss_pct: f64,
    pub sla: Option<latency::Sla>,
    /// The knee search's precision, in percent.
    pub knee_precision_pct: f64,
    /// A ceiling: a step that adds less than this (percent) to the one before.
    pub ceiling_threshold_pct: f64,
    pub published_gbps: Option<f64>,
}

/// Where the run's figures go besides the terminal.
pub(crate) struct Outputs {
    /// The record (`-`: stdout).
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    /// A line a second during a ladder's or a knee's steps.
    pub live: bool,
    /// The knee's committable sentence printed alone.
    pub sentence: bool,
    /// The series: its interval, CSV and /metrics.
    pub timeline: TimelineConfig,
    /// The series plotted.
    pub series_svg: Option<PathBuf>,
}

/// How a replay's frames are rewritten.
pub(crate) struct RewriteSettings {
    pub keep_addresses: bool,
    pub keep_payload: bool,
    /// The IPv6 source and destination a replay's IPv6 frames get.
    pub ipv6: Option<(Ipv6Addr, Ipv6Addr)>,
}

/// The flags as given, for the record's `config`: written, never read.
pub(crate) type AsGiven<'a> = records::AsGiven<'a, Args>;

impl<'a> Settings<'a> {
    /// The settings of flags that passed the mode's checks.
    pub fn of(args: &'a Args) -> Result<Settings<'a>, Failure> {
        Ok(Settings {
            sender: sender_config(args)?,
            socket: args.socket.then(|| socket_config(args)),
            traffic: Traffic {
                flows: args.flows,
                reflect: args.reflect,
                cross_check: args.cross_check,
                paced_rate: args.paced_rate(),
                rates: args.rates(),
                rx_queues: args.rx_queues,
            },
            peer: PeerSettings {
                addr: args.peer.clone(),
                token_file: args.token_file.clone(),
                token: args.token.clone(),
                group: args.group.clone().zip(args.senders),
                control_timeout: args.control_timeout,
                destinations: args.dst_ip.iter().map(|&ip| (ip, args.dst_port)).collect(),
            },
            timing: Timing { warmup: args.warmup, search_duration: args.search_duration, repeat: args.repeat },
            judging: Judging {
                loss_pct: args.loss,
                pdr_loss_pct: args.pdr_loss,
                sla: args.sla.clone(),
                knee_precision_pct: args.knee_precision,
                ceiling_threshold_pct: args.ceiling_threshold,
                published_gbps: args.published_gbps,
            },
            outputs: Outputs {
                json: args.json.clone(),
                csv: args.csv.clone(),
                plot: args.plot.clone(),
                live: args.live,
                sentence: args.sentence,
                timeline: args.timeline.config("blast", "sent"),
                series_svg: args.timeline.series_svg.clone(),
            },
            rewrite: RewriteSettings {
                keep_addresses: args.pcap_keep_addresses,
                keep_payload: args.pcap_keep_payload,
                ipv6: args.pcap_src_ip6.zip(args.pcap_dst_ip6),
            },
            config: AsGiven::new(args),
        })
    }
}

/// --socket's lanes: the first addresses (mode checks refuse more), a GSO
/// buffer of up to --burst datagrams, and a lane on each CPU blast may use in turn.
fn socket_config(args: &Args) -> SocketTxConfig {
    SocketTxConfig {
        src_ip: args.src_ip[0],
        dest: std::net::SocketAddrV4::new(args.dst_ip[0], args.dst_port),
        sndbuf: args.socket_sndbuf.map(|b| b as usize),
        segments: if args.no_gso { 1 } else { args.burst.min(udpsock::MAX_SEGMENTS) },
        cpus: blastdrop::eal_args::allowed_cpus().into_iter().map(|c| c as usize).collect(),
    }
}

/// The sender for the largest step the flags ask for.
fn sender_config(args: &Args) -> Result<SenderConfig, Failure> {
    Ok(SenderConfig {
        ports: args.port.clone(),
        max_queues: args.max_queues(),
        max_size: args.max_size(),
        burst: args.burst,
        tx_ring: args.tx_ring,
        link_timeout: args.link_timeout,
        drain: args.drain,
        addressing: addressing(args)?,
        watch_xstats: args.watch_xstat.clone(),
        xstats_interval: args.xstats_interval,
        interval: args.timeline.interval,
        size_from_capture: false,
    })
}

/// Each port's addresses: a flag given once serves every port, or it is
/// given once per --port, in the same order.
fn addressing(args: &Args) -> Result<Vec<Addressing>, Failure> {
    let n = args.port.len();
    fn pick<T: Copy>(v: &[T], i: usize, n: usize, flag: &str) -> Result<Option<T>, Failure> {
        match v.len() {
            0 => Ok(None),
            1 => Ok(Some(v[0])),
            k if k == n => Ok(Some(v[i])),
            k => Err(Failure::usage(format!("{flag} is given {k} times for {n} --port: give it once for all ports or once per port"))),
        }
    }
    (0..n)
        .map(|i| {
            Ok(Addressing {
                src_mac: pick(&args.src_mac, i, n, "--src-mac")?,
                dst_mac: pick(&args.dst_mac, i, n, "--dst-mac")?.expect("has a default"),
                src_ip: pick(&args.src_ip, i, n, "--src-ip")?.expect("has a default"),
                dst_ip: pick(&args.dst_ip, i, n, "--dst-ip")?.expect("has a default"),
                src_port: args.src_port,
                dst_port: args.dst_port,
            })
        })
        .collect()
}
