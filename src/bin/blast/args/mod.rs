//! blast's flags as clap parses them (`Args`); values.rs says what they come
//! to, serialize.rs how they are written into a record, shorthand.rs reads
//! `--size imix` before clap does.

pub mod goal;
mod serialize;
mod shorthand;
mod values;

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;

use blastdrop::session::parse::{self, List};
use wire::MacAddr;

pub use goal::SearchMethod;
use serialize::{ser_display, ser_mix, ser_one_or_list, ser_sla, OneOrList};
pub use shorthand::size_mix_shorthand;

/// Send UDP-over-IPv4 frames from N TX queues (one worker lcore each) and
/// report what the port accepted (sender-side figures). With --peer, drive
/// a `drop --listen` receiver over a control connection and report, step
/// by step, what really arrived (receiver-side figures) beside what was sent.
#[derive(Parser, Debug, Serialize, schemars::JsonSchema)]
#[command(
    name = "blast",
    version,
    allow_negative_numbers = true,
    after_help = "A single step (one queue count, one size, no --peer) prints a line a second and a summary.\n\
                  Lists in --queues or --size, --repeat, or --peer make a ladder: one measured step per entry,\n\
                  then a table, the ceiling per frame size, and --json/--csv/--plot files.\n\n\
                  DPDK EAL arguments go after --, passed through unchanged, for example:\n  \
                  blast --queues 2 --size 64 -- -l 0-2 -a 0000:00:06.0\n  \
                  blast --peer 10.0.0.2:7700 --queues 1..16 --size 64,1500 --flows 64 -- -l 0-16 -a 0000:00:06.0\n  \
                  blast --peer 10.0.0.2:7700 --find-knee --shape even --reflect --sla 'P99.9<=50us' --sentence -- -a 0000:00:06.0\n\
                  (--find-knee and --reflect: drop runs with --listen, and --reflect for latency; docs/methodology.md)\n  \
                  blast --pcap trace.pcapng --queues 4 --dst-mac 0a:1b:2c:3d:4e:5f --dst-ip 10.0.0.2 --peer 10.0.0.2:7700 -- -a 0000:00:06.0\n\
                  (--pcap replays a capture at its own timing, addresses rewritten; docs/methodology.md, \"Captures\")\n\
                  Without -l/--lcores, lcores are placed from the machine's topology (sysfs): the NIC's NUMA node first,\n\
                  one worker per physical core before any hyperthread sibling, the main lcore apart; the placement is printed.\n\n\
                  blast report RUN.json... --html FILE --markdown FILE: the records of earlier runs as one report,\n\
                  and the atlas of several (blast report --help; docs/report.md).\n\
                  blast paths --path NAME=FLAGS --path NAME=FLAGS --rate LIST -- FLAGS: one plan over several paths\n\
                  (DPDK, AF_XDP, sockets), interleaved, compared only where both are below their knee (docs/paths.md).\n\n\
                  Ctrl-C or SIGTERM ends the run with its report and record; repeated signals are waited out (as\n\
                  `timeout` sends two) until 10 s after the first, when one more exits at once. Exit codes: 0 done,\n\
                  1 the run failed, 2 bad input, 3 a device did not answer a call within --device-timeout,\n\
                  130 interrupted by a signal (report and record written)."
)]
pub struct Args {
    /// Port to send on: a port id (0), a PCI address (0000:00:06.0) or a device name (net_memif0).
    /// Repeat it to send on several ports at once (an EC2 48xlarge needs one per network card):
    /// queues are spread over them round robin, and each port gets its own rows and verdict
    #[arg(long, default_value = "0")]
    pub port: Vec<String>,
    /// Send on the kernel's UDP sockets instead of a DPDK port, with no EAL: one connected socket
    /// and one thread per queue, from --src-ip (an address of this host) and --src-port + queue to
    /// --dst-ip:--dst-port, with sendmmsg and UDP GSO, each thread pinned to a CPU blast may run on
    /// (taskset chooses them); each queue is one flow. The frames carry the same probes, so drop
    /// (on a port or on sockets) counts them exactly (docs/sockets.md)
    #[arg(long)]
    pub socket: bool,
    /// With --socket: each socket's send buffer in bytes (SO_SNDBUF, forced past
    /// net.core.wmem_max where blast may) [default: the kernel's]
    #[arg(long, value_parser = parse::bytes, value_name = "BYTES", requires = "socket")]
    pub socket_sndbuf: Option<u64>,
    /// With --socket: send one datagram per buffer, without UDP GSO (as most socket programs do)
    #[arg(long, requires = "socket")]
    pub no_gso: bool,
    /// TX queues, each driven by its own worker lcore: a number, a list (1,2,4,8) or a doubling range (1..32)
    /// (a list's counts beyond what a port takes are left out, with a line saying so; a single one is refused)
    #[arg(long, default_value = "1", value_parser = parse::queue_list)]
    pub queues: List<u16>,
    /// Frame size in bytes, including the 4-byte FCS, 64 up to the port's largest frame: a number or a list (64,128,1500)
    #[arg(long, default_value = "64B", value_parser = parse::size_list, value_name = "BYTES")]
    pub size: List<u32>,
    /// Frames of several sizes in a fixed proportion, sent as a repeating cycle (exact over every
    /// whole cycle): imix (7 x 64, 4 x 594, 1 x 1518 B, FCS included) or SIZE:WEIGHT pairs like
    /// 64:7,576:4,1500:1; replaces --size (--size imix is the same as --size-mix imix)
    #[arg(long, value_parser = parse::size_mix, value_name = "MIX")]
    #[serde(serialize_with = "ser_mix")]
    #[schemars(with = "Option<String>")]
    pub size_mix: Option<wire::SizeMix>,
    /// Flows (distinct UDP source ports), split across queues so the receiver's RSS spreads them [default: one per queue]
    #[arg(long, value_parser = parse::flows)]
    pub flows: Option<u32>,
    /// Source MAC [default: the port's own MAC; EC2 drops frames from any other].
    /// With several --port: once for all, or once per port in the same order (as are the three below)
    #[arg(long)]
    pub src_mac: Vec<MacAddr>,
    /// Destination MAC: the receiver's (or, across a VPC subnet, the gateway's)
    #[arg(long, default_value = "02:00:00:00:00:02")]
    pub dst_mac: Vec<MacAddr>,
    /// Source IPv4 address (on EC2: the sending interface's own)
    #[arg(long, default_value = "198.18.0.1")]
    pub src_ip: Vec<Ipv4Addr>,
    /// Destination IPv4 address
    #[arg(long, default_value = "198.18.0.2")]
    pub dst_ip: Vec<Ipv4Addr>,
    /// UDP source port of the first flow; flow i uses this + i
    #[arg(long, default_value_t = 1024, value_parser = parse::udp_port)]
    pub src_port: u16,
    /// UDP destination port
    #[arg(long, default_value_t = 9, value_parser = parse::udp_port)]
    pub dst_port: u16,
    /// How long to send (10, 2.5s, 500ms, 1m); in a ladder, each step's measured window [default: 10s, unless --count]
    #[arg(long, value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_opt_secs")]
    #[schemars(with = "Option<f64>")]
    pub duration: Option<Duration>,
    /// Frames to send in all, split over the queues (1000, 10M); the run ends when all are accepted (single step only)
    #[arg(long, value_parser = parse::count)]
    pub count: Option<u64>,
    /// Total frames per second over all queues (1M, 250k; at most 5G), paced per queue on the TSC;
    /// a list (100k,1M,4M) runs each rate as its own ladder step [default: unpaced]
    #[arg(long, value_parser = parse::rate_list, value_name = "RATE[,RATE...]")]
    #[serde(serialize_with = "ser_one_or_list")]
    #[schemars(with = "Option<OneOrList<f64>>")]
    pub rate: Option<List<f64>>,
    /// Frames per tx_burst call unpaced; paced, the most sent together (a burst:N shape sends N)
    #[arg(long, default_value = "32", value_parser = parse::burst)]
    pub burst: usize,
    /// Arrival shape when paced: even (one frame per tick), burst:N (N back to back, then a
    /// wait), poisson (exponential gaps at the mean rate), or open (unpaced); a list (even,burst:8)
    /// runs each rate in each shape, side by side [default: burst:<--burst> with --rate, open without]
    #[arg(long, value_parser = parse::shape_list, value_name = "SHAPE[,SHAPE...]")]
    #[serde(serialize_with = "ser_one_or_list")]
    #[schemars(with = "Option<OneOrList<pace::Shape>>")]
    pub shape: Option<List<pace::Shape>>,
    /// Time the round trip of every probe: drop must run with --reflect, and blast receives the
    /// reflections on its own RX queues (on --socket: its own sockets; latency needs no clock
    /// sync: both stamps are this host's)
    #[arg(long)]
    pub reflect: bool,
    /// Measure every unpaced step, and every step whose verdict is `sender`, a second time at once
    /// with the plain C send loop of blast-ref linked in (its C lanes: same port, queues, pools,
    /// frames and counters, unpaced) and give blast's figure over the C loop's: whether the
    /// ceiling is blast's own loop (ladders and single runs of built frames on a DPDK port)
    #[arg(long)]
    pub cross_check: bool,
    /// Search the knee at fixed queues, size and shape (needs --peer): the no-drop rate (NDR, loss
    /// <= --loss) and the partial-drop rate (PDR, loss <= --pdr-loss), short trials while searching,
    /// full --duration trials to confirm, then latency at 10, 50 and 90% of the knee with --reflect
    #[arg(long)]
    pub find_knee: bool,
    /// Loss allowed at the NDR, in percent
    #[arg(long, default_value = "0%", value_name = "PCT", value_parser = parse::percent)]
    pub loss: f64,
    /// Loss allowed at the PDR, in percent
    #[arg(long, default_value = "0.5%", value_name = "PCT", value_parser = parse::percent)]
    pub pdr_loss: f64,
    /// A latency limit the knee must also keep, e.g. P99.9<=50us (needs --reflect)
    #[arg(long, value_parser = parse_sla)]
    #[serde(serialize_with = "ser_sla")]
    #[schemars(with = "Option<String>")]
    pub sla: Option<latency::Sla>,
    /// Length of each search trial (confirmations use --duration); --search mlr's trials last what
    /// its goals say, and it uses this only to measure the unpaced top
    #[arg(long, default_value = "1s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub search_duration: Duration,
    /// Stop narrowing when the interval is within this many percent of its top (blast's own search;
    /// --search mlr narrows to each goal's width)
    #[arg(long, default_value = "2%", value_name = "PCT", value_parser = parse::percent)]
    pub knee_precision: f64,
    /// The knee's method: knee (blast's own: NDR and PDR, each confirmed by a full --duration
    /// trial) or mlr (RFC 9971 MLRsearch: the --goal Search Goals, every load classified from all
    /// its trials, docs/methodology.md) [default: knee]
    #[arg(long, value_enum, value_name = "METHOD")]
    pub search: Option<SearchMethod>,
    /// An RFC 9971 Search Goal for --search mlr, once per goal:
    /// NAME[:loss=PCT,exceed=RATIO,final=SECONDS,sum=SECONDS,initial=SECONDS,width=PCT]
    /// [default: NDR (loss --loss) and PDR (loss --pdr-loss); each goal exceed 0.5, final 30s,
    /// sum 60s (twice a final given alone), initial 1s, width 0.5%]
    #[arg(long, value_parser = goal::goal_text, value_name = "GOAL")]
    pub goal: Vec<String>,
    /// After the knee search, the back-to-back frame test (RFC 2544 26.4, RFC 9004) this many
    /// times: the longest burst at the sender's unpaced rate that crosses with no loss, searched
    /// whole each time, averaged, with the buffer time corrected by the search's zero-loss result
    #[arg(long, value_name = "REPETITIONS", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub back_to_back: Option<u32>,
    /// The longest burst the back-to-back test sends, as time at the unpaced rate (RFC 9004 asks
    /// for up to 30s; a burst that passes at this limit makes the result a lower bound)
    #[arg(long, default_value = "2s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub burst_limit: Duration,
    /// Print the result as one committable sentence with every qualifier
    #[arg(long)]
    pub sentence: bool,
    /// Replay this capture (pcap or pcapng, Ethernet) instead of building frames: held in memory,
    /// its MACs and IPv4 addresses rewritten to --src-mac/--dst-mac/--src-ip/--dst-ip (checksums
    /// computed again), its flows spread over --queues (one flow keeps its order on one queue), a
    /// probe stamped into every UDP frame with room for one; ends when the capture is sent
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// The replay's timing: original (the capture's gaps, on the TSC), scaled:X (X times as
    /// fast), rate (evenly at --rate over all queues) or fast (unpaced)
    #[arg(long, default_value = "original", value_name = "TIMING", requires = "pcap")]
    #[serde(serialize_with = "ser_display")]
    #[schemars(with = "String")]
    pub pcap_timing: capture::Timing,
    /// Passes over the capture (each starts one mean gap after the last frame of the one before)
    #[arg(long, default_value_t = 1, value_name = "N", requires = "pcap", value_parser = clap::value_parser!(u64).range(1..))]
    pub pcap_loop: u64,
    /// Send the capture's addresses as they are (only where the path delivers them: not on EC2)
    #[arg(long, requires = "pcap")]
    pub pcap_keep_addresses: bool,
    /// Stamp no probe: every payload as captured (drop then counts the frames as non-probe)
    #[arg(long, requires = "pcap")]
    pub pcap_keep_payload: bool,
    /// IPv6 source address a replay's IPv6 frames get (with --pcap-dst-ip6; without, they keep theirs)
    #[arg(long, value_name = "ADDR", requires_all = ["pcap", "pcap_dst_ip6"], conflicts_with = "pcap_keep_addresses")]
    pub pcap_src_ip6: Option<Ipv6Addr>,
    /// IPv6 destination address a replay's IPv6 frames get (with --pcap-src-ip6)
    #[arg(long, value_name = "ADDR", requires_all = ["pcap", "pcap_src_ip6"], conflicts_with = "pcap_keep_addresses")]
    pub pcap_dst_ip6: Option<Ipv6Addr>,
    /// The most memory the capture may take (bytes: 512MB, 4GB)
    #[arg(long, default_value = "1GB", value_name = "BYTES", value_parser = parse::bytes, requires = "pcap")]
    pub pcap_memory: u64,
    /// TX ring size per queue, in descriptors
    #[arg(long, default_value = "1024", value_parser = parse::ring)]
    pub tx_ring: u16,
    /// How long to wait for the link to come up before sending, and for progress while sending
    #[arg(long, default_value = "10s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub link_timeout: Duration,
    /// How long the port keeps running after the last frame, so frames still in the TX ring (or a
    /// memif ring the peer has not read yet) leave before the port stops
    #[arg(long, default_value = "0.5s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub drain: Duration,
    /// drop's control address (drop --listen), on the management network, never the port under test
    #[arg(long, value_name = "ADDR:PORT")]
    pub peer: Option<String>,
    /// File whose first line is the shared secret drop was started with (proved to drop, never sent);
    /// or set BLASTDROP_TOKEN
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The shared secret on the command line (visible in ps: prefer --token-file or BLASTDROP_TOKEN)
    #[arg(long)]
    #[serde(skip)]
    pub token: Option<String>,
    /// Join group trial NAME at drop with the other senders of the group: drop opens each step's
    /// window when all are ready and closes it when all have stopped (every member gives the same
    /// ladder, --group and --senders)
    #[arg(long, value_name = "NAME", requires = "senders")]
    pub group: Option<String>,
    /// How many senders the --group has, this one included (2 to 64)
    #[arg(long, value_name = "N", requires = "group", value_parser = clap::value_parser!(u16).range(2..=64))]
    pub senders: Option<u16>,
    /// How long to wait for each answer from drop
    #[arg(long, default_value = "15s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub control_timeout: Duration,
    /// RX queues drop uses in every step [default: as many as the step's TX queues]
    #[arg(long, value_parser = parse::queues)]
    pub rx_queues: Option<u16>,
    /// In a ladder, how long each step sends before its measured window opens
    #[arg(long, default_value = "2s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub warmup: Duration,
    /// Run every ladder step this many times and report min / median / max
    #[arg(long, default_value_t = 1, value_parser = parse::repeat)]
    pub repeat: u32,
    /// Order of a ladder with several queue counts and sizes: size-major (every queue count for each size) or queue-major
    #[arg(long, default_value = "size-major")]
    pub order: ladder::Order,
    /// Adding queues "stops helping" when the next step adds less than this many percent of Mpps
    #[arg(long, default_value = "5%", value_name = "PCT", value_parser = parse::percent)]
    pub ceiling_threshold: f64,
    /// The interface's published bandwidth in Gb/s: report the smallest frame size that reaches it (within 3%)
    #[arg(long, value_name = "GBPS", value_parser = parse::gbps)]
    pub published_gbps: Option<f64>,
    /// Watch this extended stat too (repeatable): its movement joins the record and the verdict as
    /// "other" (e.g. a mlx5 or ice drop counter). net_ena's allowance counters are always watched.
    /// On net_af_xdp and net_af_packet: a statistic of the kernel driver under the port, as
    /// `ethtool -S IFACE` lists it (there the kernel ena driver's allowance counters are watched)
    #[arg(long = "watch-xstat", value_name = "NAME")]
    pub watch_xstat: Vec<String>,
    /// How often the watched counters are read for the live view (on ENA each read is an admin command)
    #[arg(long, default_value = "1s", value_parser = parse::duration)]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub xstats_interval: Duration,
    #[command(flatten)]
    #[serde(flatten)]
    pub timeline: blastdrop::timeline::TimelineArgs,
    /// Print a line a second during ladder steps too
    #[arg(long)]
    pub live: bool,
    /// Write the summary (or the whole ladder) with its configuration and environment as JSON to
    /// this file; - writes it to stdout, and every other line goes to stderr
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<PathBuf>,
    /// Write the run as JSON lines while it goes (start, a tick a second, each step or trial,
    /// end; docs/json.md, "Events") to this file; - writes them to stdout (other lines to stderr)
    #[arg(long, value_name = "FILE|-")]
    pub events: Option<PathBuf>,
    /// Write the ladder as CSV, one row per step, to this file
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Draw received Mpps against queues and Gb/s against frame size to this SVG file
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Print shell completions (bash, zsh, fish, elvish, powershell) for this tool and exit
    #[arg(long, value_name = "SHELL", hide = true)]
    #[serde(skip)]
    pub generate_completions: Option<clap_complete::Shell>,
    /// Print the JSON schema of a record (single, ladder, knee, replay), of the record of a run a device
    /// call ended (not-started), or of an --events line (events) and exit
    #[arg(long, value_name = "KIND", hide = true, value_parser = ["single", "ladder", "knee", "mlr", "replay", "not-started", "events", "paths"])]
    #[serde(skip)]
    pub generate_schema: Option<String>,
    /// Print this tool's man page (roff) and exit
    #[arg(long, hide = true)]
    #[serde(skip)]
    pub generate_man: bool,
    /// How long a call to the device (configure, start, link, counters, stop) may take before the
    /// run ends with one line naming the device and the call (exit 3), e.g. a virtio NIC behind
    /// vfio-pci that never answers
    #[arg(long, default_value = "20s", value_parser = parse::device_timeout, value_name = "DURATION")]
    #[serde(serialize_with = "blastdrop::units::ser_secs")]
    #[schemars(with = "f64")]
    pub device_timeout: Duration,
    /// More log output (-v debug, -vv trace)
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// DPDK EAL arguments, after --
    #[arg(last = true, value_name = "EAL ARGS")]
    pub eal: Vec<String>,
}

fn parse_sla(s: &str) -> Result<latency::Sla, latency::NotAnSla> {
    s.parse()
}
