//! The checks clap cannot make alone: the flags against each other, for
//! built frames and for a capture, and the output files, before anything starts.

use crate::fail::Failure;
use layout::StepLayout;

use crate::args::{Args, SearchMethod};

/// A ladder: several steps, or a receiver to measure against.
pub fn is_ladder(args: &Args) -> bool {
    !args.find_knee && (args.queues.len() > 1 || args.size.len() > 1 || args.varies_traffic() || args.repeat > 1 || args.peer.is_some())
}

/// Every check clap cannot make alone, before anything starts.
pub fn check(args: &Args) -> Result<(), Failure> {
    if args.socket {
        check_socket(args)?;
    }
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
    check_search(args)?;
    if args.cross_check {
        check_cross_check(args)?;
    }
    if args.back_to_back.is_some() && !args.find_knee {
        return Err(Failure::usage(
            "--back-to-back runs after a knee search, whose zero-loss result corrects it: add --find-knee (and --peer)",
        ));
    }
    if args.sentence && !args.find_knee {
        return Err(Failure::usage("--sentence renders a knee: use it with --find-knee"));
    }
    // Every step's flow plan must be possible before anything starts.
    for &q in args.queues.iter() {
        StepLayout::new(q, args.port.len() as u16, args.flows.unwrap_or(u32::from(q)), args.src_port).map_err(crate::fail::layout)?;
    }
    args.timeline.check()?;
    // Output files are checked now, not after the whole run.
    crate::cli::check_outputs(&[
        ("--json", args.json.as_deref()),
        ("--events", args.events.as_deref()),
        ("--csv", args.csv.as_deref()),
        ("--plot", args.plot.as_deref()),
        args.timeline.outputs()[0],
        args.timeline.outputs()[1],
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

/// --search and --goal against the rest.
fn check_search(args: &Args) -> Result<(), Failure> {
    let mlr = args.search == Some(SearchMethod::Mlr);
    if args.search.is_some() && !args.find_knee {
        return Err(Failure::usage("--search picks the knee's method: use it with --find-knee (--find-knee --search mlr)"));
    }
    if !args.goal.is_empty() && !mlr {
        return Err(Failure::usage("--goal is a Search Goal of RFC 9971's search: add --find-knee --search mlr"));
    }
    if !mlr {
        return Ok(());
    }
    if args.sla.is_some() {
        return Err(Failure::usage(
            "--sla limits blast's own knee search; RFC 9971's goals are loss goals: leave out --sla or --search mlr",
        ));
    }
    if args.plot.is_some() {
        return Err(Failure::usage("--plot draws blast's own knee search; an RFC 9971 search has no plot yet: leave out --plot (--csv and --json keep every trial)"));
    }
    if args.duration.is_some() {
        return Err(Failure::usage(
            "--search mlr's trials last what its goals say: give their durations in --goal (NAME:final=SECONDS,sum=SECONDS,initial=SECONDS), not --duration",
        ));
    }
    let mut names: Vec<String> = args.goal.iter().map(|g| g.split(':').next().unwrap_or("").trim().to_string()).collect();
    names.sort();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(Failure::usage(format!("--goal {} is given twice: give each goal a name of its own", w[0])));
    }
    Ok(())
}

/// What --pcap allows of the other flags: the capture sets the sizes, the
/// flows and the timing.
pub fn check_replay(args: &Args) -> Result<(), Failure> {
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
    crate::cli::check_outputs(&[("--json", args.json.as_deref()), ("--events", args.events.as_deref())])
}

/// --cross-check: what the C lanes cannot send, each named. They are the
/// plain loop: unpaced, one frame size, built frames on a DPDK port.
fn check_cross_check(args: &Args) -> Result<(), Failure> {
    let given = [
        ("--socket", args.socket),
        ("--pcap", args.pcap.is_some()),
        ("--size-mix", args.size_mix.is_some()),
        ("--reflect", args.reflect),
        ("--find-knee", args.find_knee),
        ("--group", args.group.is_some()),
    ];
    crate::fail::not_supported_yet(
        "--cross-check runs steps again with the plain C send loop, which sends built frames of one size, unpaced, and times no probes",
        &given,
        "",
    )
}

/// blast --socket: what the socket lanes cannot do (yet), each named.
fn check_socket(args: &Args) -> Result<(), Failure> {
    let given = [
        ("--port", args.port != ["0"]),
        ("--pcap", args.pcap.is_some()),
        ("--size-mix", args.size_mix.is_some()),
        ("--flows (each queue is one flow: its own socket and source port)", args.flows.is_some()),
        ("--src-mac", !args.src_mac.is_empty()),
        ("--dst-mac (the kernel resolves it)", args.dst_mac_given()),
        ("--group", args.group.is_some()),
        ("--rx-queues", args.rx_queues.is_some()),
        ("EAL arguments after --", !args.eal.is_empty()),
    ];
    crate::fail::not_supported_yet("--socket sends on the kernel's UDP sockets", &given, "")?;
    if args.src_ip.len() > 1 || args.dst_ip.len() > 1 {
        return Err(Failure::usage("--socket sends from one address to one: give --src-ip and --dst-ip once each"));
    }
    Ok(())
}
