//! drop's flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;

use blastdrop::session::parse;

/// Receive on N RX queues (one worker lcore each, RSS across them) and count
/// what arrived: rates, per-queue figures, and per-stream loss, reordering
/// and duplicates from blast's probe headers. All figures are receiver-side.
#[derive(Parser, Debug, Serialize, schemars::JsonSchema)]
#[command(
    name = "drop",
    version,
    allow_negative_numbers = true,
    after_help = "DPDK EAL arguments go after --, passed through unchanged, for example:\n  \
                  drop --queues 4 -- -l 0-4 -a 0000:00:07.0\n  \
                  drop --listen 10.0.0.2:7700 --queues 32 -- -l 0-32 -a 0000:00:07.0   (serves blast --peer ladders)\n  \
                  drop --port net_memif0 -- --vdev=net_memif0,role=server,socket=/tmp/bd.sock,socket-abstract=no --no-huge -m 512 --no-pci --no-shconf\n\
                  Without -l/--lcores, lcores are placed from the machine's topology (sysfs): the NIC's NUMA node first,\n\
                  one worker per physical core before any hyperthread sibling, the main lcore apart; the placement is printed.\n\n\
                  Ctrl-C or SIGTERM ends the run with its report and record; repeated signals are waited out (as\n\
                  `timeout` sends two) until 10 s after the first, when one more exits at once. Exit codes: 0 done,\n\
                  1 the run failed, 2 bad input, 3 a device did not answer a call within --device-timeout,\n\
                  130 interrupted by a signal (report and record written)."
)]
pub(crate) struct Args {
    /// Port to receive on: a port id (0), a PCI address (0000:00:07.0) or a device name (net_memif0).
    /// Repeat it to receive on several ports (blast's port i pairs with drop's port i); queues are
    /// spread over them round robin
    #[arg(long, default_value = "0")]
    pub(crate) port: Vec<String>,
    /// Receive on the kernel's UDP sockets instead of a DPDK port, with no EAL: bind ADDR:PORT, one
    /// socket and one thread per queue sharing it through SO_REUSEPORT (the kernel spreads flows over
    /// them), each thread pinned to a CPU drop may run on (taskset chooses them). blast's frames to
    /// this address and UDP port are counted as on a port; verdicts read the kernel's counters
    /// (docs/sockets.md)
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) socket: Option<String>,
    /// With --socket: each socket's receive buffer in bytes (SO_RCVBUF, forced past
    /// net.core.rmem_max where drop may) [default: the kernel's]
    #[arg(long, value_parser = parse::bytes, value_name = "BYTES")]
    pub(crate) socket_rcvbuf: Option<u64>,
    /// With --socket: receive without UDP GRO, one datagram per buffer (as most socket programs do)
    #[arg(long)]
    pub(crate) no_gro: bool,
    /// RX queues, each polled by its own worker lcore; RSS spreads flows over them where the device has it.
    /// With --listen: the most a ladder may ask for (it starts with 1; on an AF_XDP port with all of
    /// them, and keeps them: its PMD cannot remake its XDP sockets)
    #[arg(long, default_value = "1", value_parser = parse::queues)]
    pub(crate) queues: u16,
    /// Largest frame to receive, in bytes including FCS: sets the MTU and the mbuf size
    #[arg(long, default_value = "1518B", value_parser = parse::frame_size, value_name = "BYTES")]
    pub(crate) max_size: u32,
    /// How long to receive (10, 2.5s, 1m) [default: until Ctrl-C, --count or --idle-timeout]
    #[arg(long, value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_opt_secs")]
    #[schemars(with = "Option<f64>")]
    pub(crate) duration: Option<Duration>,
    /// Stop once this many frames have arrived (1000, 10M)
    #[arg(long, value_parser = parse::count)]
    pub(crate) count: Option<u64>,
    /// Stop when nothing has arrived for this long after the first frame (2s, 500ms)
    #[arg(long, value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_opt_secs")]
    #[schemars(with = "Option<f64>")]
    pub(crate) idle_timeout: Option<Duration>,
    /// Serve blast's control connection on this address (ADDR:PORT, an explicit address: the
    /// management network's, never the port under test); runs until Ctrl-C or --duration
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) listen: Option<String>,
    /// File whose first line is the shared secret blast must prove (never sent on the wire); or set
    /// BLASTDROP_TOKEN. Required when --listen is reachable from other hosts (not loopback)
    #[arg(long, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// The shared secret on the command line (visible in ps: prefer --token-file or BLASTDROP_TOKEN)
    #[arg(long)]
    #[serde(skip)]
    pub(crate) token: Option<String>,
    /// Frames per rx_burst call
    #[arg(long, default_value = "32", value_parser = parse::burst)]
    pub(crate) burst: usize,
    /// RX ring size per queue, in descriptors
    #[arg(long, default_value = "1024", value_parser = parse::ring)]
    pub(crate) rx_ring: u16,
    /// Busy work per frame, in CPU cycles, as an application behind drop would spend: shows
    /// where a receiver with that cost per packet stops keeping up
    #[arg(long, default_value_t = 0, value_name = "CYCLES", value_parser = parse::cycles)]
    pub(crate) rx_cost: u64,
    /// Count frames and bytes only, without parsing the probe header: the cheapest receive
    /// loop (no loss, reorder or duplicate figures; every frame counts as no-probe)
    #[arg(long)]
    pub(crate) count_only: bool,
    /// Send every frame back on the queue it came in on, source and destination swapped (MAC,
    /// IPv4, UDP ports), so blast can time the round trip of its probes (on --socket: each
    /// datagram back to where it came from, UDP GRO off)
    #[arg(long)]
    pub(crate) reflect: bool,
    /// Count arrivals per interval of this many microseconds, for the peak-to-mean ratio of
    /// micro-bursts (0: off; off with --count-only; timed by the busy-run clock, read every 8 polls at most)
    #[arg(long, default_value = "100us", value_name = "US", value_parser = parse::micros)]
    pub(crate) arrival_interval_us: u64,
    /// Time every probe one way: this host's wall clock at arrival against the sender's at
    /// sending (CLOCK_REALTIME on both; meaningful only when the two hosts' clocks are
    /// synchronised, e.g. by PTP; the run states the kernel's sync status; on --socket, read when
    /// recvmmsg returns)
    #[arg(long)]
    pub(crate) one_way: bool,
    /// Where --one-way reads each probe's arrival: `nic`, the device's receive timestamp (the Rx
    /// timestamp offload: net_af_packet's kernel stamp from DPDK 24.11, net_ena's from 25.11 on
    /// instances that have it), refused where a port lacks it; `host`, this host's clock at the poll
    /// (the RX ring's wait included); `auto`, the NIC's where every port offers it, else the host's,
    /// saying why in the record
    #[arg(long, value_enum, default_value_t = ArrivalClockArg::Auto, value_name = "CLOCK")]
    pub(crate) arrival_clock: ArrivalClockArg,
    /// Mbufs per RX pool, overriding the size derived from ring, burst and cache (docs/memory.md);
    /// a pool too small starves the device (rx_nombuf), as an undersized receiver would
    #[arg(long, value_name = "N", value_parser = parse::mbufs)]
    pub(crate) rx_mbufs: Option<u32>,
    /// Watch this extended stat too (repeatable): its movement joins the record and the verdict as
    /// "other" (e.g. a mlx5 or ice drop counter). net_ena's allowance counters are always watched.
    /// On net_af_xdp and net_af_packet: a statistic of the kernel driver under the port, as
    /// `ethtool -S IFACE` lists it (there the kernel ena driver's allowance counters are watched)
    #[arg(long = "watch-xstat", value_name = "NAME")]
    pub(crate) watch_xstat: Vec<String>,
    /// How often the watched counters are read for the live view (on ENA each read is an admin command)
    #[arg(long, default_value = "1s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub(crate) xstats_interval: Duration,
    #[command(flatten)]
    #[serde(flatten)]
    pub(crate) timeline: blastdrop::timeline::TimelineArgs,
    /// Streams sequence-checked per queue (stream ids at or above are counted as untracked)
    #[arg(long, default_value_t = 4096, value_parser = parse::streams)]
    pub(crate) streams: usize,
    /// Write the summary with its configuration and environment as JSON to this file; - writes
    /// it to stdout, and every other line goes to stderr
    #[arg(long, value_name = "FILE|-")]
    pub(crate) json: Option<PathBuf>,
    /// Write the run as JSON lines while it goes (start, a tick a second, each window served,
    /// end; docs/json.md, "Events") to this file; - writes them to stdout (other lines to stderr)
    #[arg(long, value_name = "FILE|-")]
    pub(crate) events: Option<PathBuf>,
    /// Print shell completions (bash, zsh, fish, elvish, powershell) for this tool and exit
    #[arg(long, value_name = "SHELL", hide = true)]
    #[serde(skip)]
    pub(crate) generate_completions: Option<clap_complete::Shell>,
    /// Print the JSON schema of drop's record and exit
    #[arg(long, hide = true)]
    #[serde(skip)]
    pub(crate) generate_schema: bool,
    /// Print this tool's man page (roff) and exit
    #[arg(long, hide = true)]
    #[serde(skip)]
    pub(crate) generate_man: bool,
    /// How long a call to the device (configure, start, link, counters, stop) may take before the
    /// run ends with one line naming the device and the call (exit 3), e.g. a virtio NIC behind
    /// vfio-pci that never answers
    #[arg(long, default_value = "20s", value_parser = parse::device_timeout, value_name = "DURATION")]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub(crate) device_timeout: Duration,
    /// More log output (-v debug, -vv trace)
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// DPDK EAL arguments, after --
    #[arg(last = true, value_name = "EAL ARGS")]
    pub(crate) eal: Vec<String>,
}

/// --arrival-clock's values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ArrivalClockArg {
    Auto,
    Nic,
    Host,
}

impl From<ArrivalClockArg> for latency::ArrivalClockChoice {
    fn from(a: ArrivalClockArg) -> Self {
        match a {
            ArrivalClockArg::Auto => latency::ArrivalClockChoice::Auto,
            ArrivalClockArg::Nic => latency::ArrivalClockChoice::Nic,
            ArrivalClockArg::Host => latency::ArrivalClockChoice::Host,
        }
    }
}
