//! What blast was asked to do, validated once: the flags (`Args`, as clap
//! parsed them) checked against each other, then resolved into a `Mode`
//! that `main` dispatches on. Nothing after this reaches back into the
//! raw lists to decide what kind of run it is.

use std::time::Duration;

use blastdrop::fail::Failure;
use blastdrop::session;
use ladder::Ladder;
use layout::StepLayout;

use crate::args::Args;

/// The length of a measured window when --duration is not given.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// One kind of run, with the values it runs with already resolved.
pub enum Mode {
    /// One step, no receiver: a line a second and a sender-side summary.
    Single(Single),
    /// Several steps, or any run against a --peer: one measured step each.
    Ladder(LadderRun),
    /// --find-knee: the NDR/PDR search at one traffic.
    Knee(Knee),
    /// --pcap: a capture replayed at its timing.
    Replay(ReplayRun),
}

/// A capture, read and scheduled over the queues (its addresses are
/// rewritten once the port's own MAC is known).
pub struct ReplayRun {
    pub queues: u16,
    pub file: std::path::PathBuf,
    pub capture: capture::Capture,
    pub schedule: capture::Schedule,
    /// Cut short after this long; None: until the capture is sent.
    pub duration: Option<Duration>,
}

/// A single step.
pub struct Single {
    pub queues: u16,
    pub size: u32,
    pub flows: u32,
    /// Ports, queues and streams, as the sender will run them.
    pub layout: StepLayout,
    /// None only when --count ends the run.
    pub duration: Option<Duration>,
    pub count: Option<u64>,
    pub shape: pace::Shape,
    pub mix: Option<wire::SizeMix>,
}

/// A ladder of steps (each with its own rate and shape).
pub struct LadderRun {
    pub ladder: Ladder,
    /// Each step's measured window.
    pub duration: Duration,
    /// Every step's frames are this mix (its largest size is the step's size).
    pub mix: Option<wire::SizeMix>,
}

/// A knee search at fixed queues, size and shape.
pub struct Knee {
    pub queues: u16,
    pub size: u32,
    pub flows: u32,
    pub shape: pace::Shape,
    /// Each confirmation's length (search trials use --search-duration).
    pub duration: Duration,
    /// drop's RX queues.
    pub rx_queues: u16,
    pub mix: Option<wire::SizeMix>,
}

impl Mode {
    /// The record's `mode`.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Single(_) => "single",
            Mode::Ladder(_) => "ladder",
            Mode::Knee(_) => "knee",
            Mode::Replay(_) => "replay",
        }
    }

    /// Checks the flags against each other (in the order the errors have
    /// always been reported) and the output files, then resolves the mode.
    pub fn from_args(args: &Args) -> Result<Mode, Failure> {
        if args.pcap.is_some() {
            check_replay(args)?;
            return Ok(Mode::Replay(replay(args)?));
        }
        check(args)?;
        Ok(if args.find_knee {
            Mode::Knee(knee(args))
        } else if is_ladder(args) {
            Mode::Ladder(LadderRun {
                ladder: Ladder::new(args.queues.0.clone(), args.sizes(), args.order).with_traffic(args.rates(), args.shapes()),
                duration: args.duration.unwrap_or(DEFAULT_DURATION),
                mix: args.size_mix.clone(),
            })
        } else {
            Mode::Single(single(args)?)
        })
    }
}

/// A ladder: several steps, or a receiver to measure against.
fn is_ladder(args: &Args) -> bool {
    !args.find_knee && (args.queues.len() > 1 || args.size.len() > 1 || args.varies_traffic() || args.repeat > 1 || args.peer.is_some())
}

fn single(args: &Args) -> Result<Single, Failure> {
    let queues = args.queues[0];
    let flows = args.flows.unwrap_or(u32::from(queues));
    Ok(Single {
        queues,
        size: args.sizes()[0],
        flows,
        layout: StepLayout::new(queues, args.port.len() as u16, flows, args.src_port).map_err(session::layout_failure)?,
        duration: args.duration.or(if args.count.is_none() { Some(DEFAULT_DURATION) } else { None }),
        count: args.count,
        shape: args.arrival_shape(),
        mix: args.size_mix.clone(),
    })
}

fn knee(args: &Args) -> Knee {
    let queues = args.queues[0];
    Knee {
        queues,
        size: args.sizes()[0],
        flows: args.flows.unwrap_or(u32::from(queues)),
        shape: args.shape.as_ref().map_or(pace::Shape::Burst(args.burst as u32), |s| s[0]),
        duration: args.duration.unwrap_or(DEFAULT_DURATION),
        rx_queues: args.rx_queues.unwrap_or(queues),
        mix: args.size_mix.clone(),
    }
}

/// Every check clap cannot make alone, before anything starts.
fn check(args: &Args) -> Result<(), Failure> {
    if args.src_mac.iter().any(|m| m.is_multicast()) {
        return Err(Failure::usage("--src-mac must be a unicast address (its first byte even)"));
    }
    if is_ladder(args) && args.count.is_some() {
        return Err(Failure::usage("--count is for a single step; a ladder measures each step over --duration"));
    }
    check_shape(args)?;
    if args.size_mix.is_some() && args.size.as_slice() != [64] {
        return Err(Failure::usage("--size-mix replaces --size (each frame's size is the mix's): give one of them"));
    }
    if args.find_knee {
        check_knee(args)?;
    }
    if (args.csv.is_some() || args.plot.is_some()) && !is_ladder(args) && !args.find_knee {
        return Err(Failure::usage(
            "--csv and --plot draw a ladder's steps or a knee's trials, and a single step writes its summary with --json: leave them out, or run a ladder (a --queues or --size list, --repeat, or --peer)",
        ));
    }
    if args.group.is_some() {
        if args.peer.is_none() {
            return Err(Failure::usage("--group joins a group trial at drop: give --peer ADDR:PORT (drop --listen)"));
        }
        if args.find_knee {
            return Err(Failure::usage("--group runs a ladder with the other senders; --find-knee is for one sender: drop one of them"));
        }
        if args.reflect {
            return Err(Failure::usage(
                "--reflect times one sender's probes; in a --group drop would send every member's back: drop --reflect",
            ));
        }
    }
    if args.sla.is_some() && !(args.find_knee && args.reflect) {
        return Err(Failure::usage(
            "--sla limits the knee's latency: use it with --find-knee and --reflect (drop --reflect on the other end)",
        ));
    }
    if args.sentence && !args.find_knee {
        return Err(Failure::usage("--sentence renders a knee: use it with --find-knee"));
    }
    // Every step's flow plan must be possible before anything starts.
    for &q in args.queues.iter() {
        StepLayout::new(q, args.port.len() as u16, args.flows.unwrap_or(u32::from(q)), args.src_port).map_err(session::layout_failure)?;
    }
    // Output files are checked now, not after the whole run.
    session::check_outputs(&[
        ("--json", args.json.as_deref()),
        ("--events", args.events.as_deref()),
        ("--csv", args.csv.as_deref()),
        ("--plot", args.plot.as_deref()),
    ])
}

/// --shape against --rate.
fn check_shape(args: &Args) -> Result<(), Failure> {
    let shapes = args.shape.as_ref().map_or(&[][..], |s| s.as_slice());
    for &s in shapes {
        match (s, &args.rate) {
            (s, None) if s.is_paced() && !args.find_knee => {
                return Err(Failure::usage(format!("--shape {s} paces frames: give the rate with --rate (frames per second, e.g. 1M)")));
            }
            (pace::Shape::Open, Some(_)) => {
                return Err(Failure::usage("--shape open is unpaced: drop --rate, or pick even, burst:N or poisson"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// What --find-knee needs of the other flags.
fn check_knee(args: &Args) -> Result<(), Failure> {
    if args.peer.is_none() {
        return Err(Failure::usage("--find-knee measures loss at the receiver: run drop --listen ADDR:PORT and give --peer ADDR:PORT"));
    }
    if args.queues.len() > 1 || args.size.len() > 1 || args.varies_traffic() || args.repeat > 1 || args.count.is_some() {
        return Err(Failure::usage(
            "--find-knee searches one traffic: give one --queues and one --size, one --shape and at most one --rate (the top), and no --repeat or --count",
        ));
    }
    if args.shape.as_ref().is_some_and(|s| s[0] == pace::Shape::Open) {
        return Err(Failure::usage("--find-knee paces its trials: pick --shape even, burst:N or poisson"));
    }
    if !(0.0..100.0).contains(&args.loss) || !(0.0..100.0).contains(&args.pdr_loss) || args.pdr_loss < args.loss {
        return Err(Failure::usage("--loss and --pdr-loss are percentages from 0 to 100, with --pdr-loss at least --loss"));
    }
    if !(args.knee_precision > 0.0 && args.knee_precision < 50.0) {
        return Err(Failure::usage("--knee-precision is a percentage above 0 and below 50 (e.g. 2)"));
    }
    Ok(())
}

/// What --pcap allows of the other flags: the capture sets the sizes, the
/// flows and the timing.
fn check_replay(args: &Args) -> Result<(), Failure> {
    let given = |on: bool, flag: &'static str| on.then_some(flag);
    let conflicts: Vec<&str> = [
        given(args.size.as_slice() != [64] || args.size_mix.is_some(), "--size/--size-mix"),
        given(args.flows.is_some(), "--flows"),
        given(args.shape.is_some(), "--shape"),
        given(args.count.is_some(), "--count"),
        given(args.find_knee, "--find-knee"),
        given(args.reflect, "--reflect"),
        given(args.repeat > 1, "--repeat"),
        given(args.queues.len() > 1, "a --queues list"),
        given(args.csv.is_some() || args.plot.is_some(), "--csv/--plot"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !conflicts.is_empty() {
        return Err(Failure::usage(format!(
            "--pcap sends the capture's own frames, flows and timing at one queue count: leave out {} (--pcap-loop repeats the capture, --duration cuts it short, --json records the run)",
            conflicts.join(", ")
        )));
    }
    if args.group.is_some() {
        return Err(Failure::usage("--pcap replays from one sender: leave out --group (a group runs a ladder of built frames)"));
    }
    if args.rx_queues.is_some() {
        return Err(Failure::usage("--pcap uses as many RX queues at drop as --queues: leave out --rx-queues"));
    }
    match (args.pcap_timing, args.rate.as_ref().map(|r| r.len())) {
        (capture::Timing::Rate, Some(1)) | (capture::Timing::Original | capture::Timing::Scaled(_) | capture::Timing::Fast, None) => {}
        (capture::Timing::Rate, _) => {
            return Err(Failure::usage("--pcap-timing rate replays evenly at one --rate (frames per second over all queues, e.g. 1M)"));
        }
        (_, Some(_)) => {
            return Err(Failure::usage("--rate paces a replay only with --pcap-timing rate: leave it out, or give --pcap-timing rate"));
        }
    }
    // Output files are checked now, whatever the timing, not after the replay.
    session::check_outputs(&[("--json", args.json.as_deref()), ("--events", args.events.as_deref())])
}

fn replay(args: &Args) -> Result<ReplayRun, Failure> {
    let file = args.pcap.clone().expect("--pcap given");
    let capture = capture::Capture::read(&file, args.pcap_memory).map_err(|e| capture_failure(&file, e))?;
    let queues = args.queues[0];
    let schedule = capture::Schedule::new(&capture, args.pcap_timing, args.paced_rate(), queues, args.pcap_loop);
    Ok(ReplayRun { queues, file, capture, schedule, duration: args.duration })
}

/// A capture blast cannot replay: what is wrong, and what to do.
fn capture_failure(file: &std::path::Path, e: capture::CaptureError) -> Failure {
    use capture::CaptureError as E;
    let fix = match &e {
        E::Io(_) => "check the path and its permissions",
        E::Empty | E::NoFrames => "capture some traffic into it first (tcpdump -w FILE)",
        E::NotACapture(_) => "give a pcap or pcapng file (tcpdump -w, dumpcap, Wireshark)",
        E::Truncated { .. } => "copy the file again, or keep its whole frames (editcap -r FILE OUT 1-N)",
        E::Malformed { .. } => "check it with capinfos; rewrite it with editcap -F pcap",
        E::LinkType(_) => "capture on an Ethernet interface (tcpdump -i any writes Linux cooked frames)",
        E::Snapped { .. } => "capture whole frames (tcpdump -s 0)",
        E::Runt { .. } => "leave that frame out (editcap FILE OUT N)",
        E::Untimed { .. } => "save it with timestamps (editcap -F pcap)",
        E::TooBig { .. } => "raise --pcap-memory, or replay a part of it (editcap -c N)",
    };
    let msg = format!("--pcap {}: {e}: {fix}", file.display());
    if matches!(e, E::Io(_)) {
        Failure::runtime(msg)
    } else {
        Failure::usage(msg)
    }
}
