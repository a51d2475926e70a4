//! What drop will do, resolved once from its flags (ripgrep's LowArgs ->
//! HiArgs): `main` checks the flags (`mode::check`, whose errors name
//! them), makes the `Settings`, and from there on the run reads these
//! parts, never `Args`. Only the record's `config` still carries the flags
//! as given, and it can be written, not read.

use std::path::PathBuf;
use std::time::Duration;

use blastdrop::receiver::ReceiverConfig;
use blastdrop::timeline::TimelineConfig;

use crate::args::Args;

/// One run of drop, everything below `main` needs.
pub(crate) struct Settings<'a> {
    /// The receiver's ports, queues, pools and lanes (the library's own configuration).
    pub receiver: ReceiverConfig,
    /// DPDK's EAL arguments, passed through.
    pub eal: Vec<String>,
    pub stop: Stop,
    pub outputs: Outputs,
    /// The control address as given (--listen), for the start-up line; the
    /// bound port itself is the mode's.
    pub listen: Option<String>,
    /// The flags as given, for the record's `config`.
    pub config: AsGiven<'a>,
}

/// What ends a standalone run besides a signal.
#[derive(Clone, Copy, Default)]
pub(crate) struct Stop {
    pub duration: Option<Duration>,
    /// Frames received.
    pub count: Option<u64>,
    /// Nothing received for this long after the first frame.
    pub idle_timeout: Option<Duration>,
}

/// Where the run's figures go besides the terminal.
pub(crate) struct Outputs {
    /// The record (`-`: stdout).
    pub json: Option<PathBuf>,
    /// The series: its interval, CSV and /metrics.
    pub timeline: TimelineConfig,
    /// The series plotted.
    pub series_svg: Option<PathBuf>,
}

impl<'a> Settings<'a> {
    /// The settings of flags that passed `mode::check`.
    pub fn of(args: &'a Args) -> Settings<'a> {
        Settings {
            receiver: receiver_config(args),
            eal: args.eal.clone(),
            stop: Stop { duration: args.duration, count: args.count, idle_timeout: args.idle_timeout },
            outputs: Outputs {
                json: args.json.clone(),
                timeline: args.timeline.config("drop", "received"),
                series_svg: args.timeline.series_svg.clone(),
            },
            listen: args.listen.clone(),
            config: AsGiven::new(args),
        }
    }
}

/// The flags as given, for the record's `config`: written, never read.
pub(crate) type AsGiven<'a> = records::AsGiven<'a, Args>;

fn receiver_config(args: &Args) -> ReceiverConfig {
    ReceiverConfig {
        ports: args.port.clone(),
        max_queues: args.queues,
        max_size: args.max_size,
        rx_ring: args.rx_ring,
        burst: args.burst,
        stream_capacity: args.streams,
        cost_per_frame: args.rx_cost,
        count_only: args.count_only,
        reflect: args.reflect,
        interval_us: if args.count_only { 0 } else { args.arrival_interval_us },
        one_way: args.one_way,
        arrival_clock: args.arrival_clock.into(),
        mbufs: args.rx_mbufs,
        watch_xstats: args.watch_xstat.clone(),
        xstats_interval: args.xstats_interval,
    }
}
