//! What blast was asked to do, validated once: the flags (`Args`, as clap
//! parsed them) checked against each other, then resolved into a `Mode`
//! that `main` dispatches on. Nothing after this reaches back into the
//! raw lists to decide what kind of run it is.

mod checks;
mod pcap;

use std::time::Duration;

use crate::fail::Failure;
use ladder::Ladder;
use layout::StepLayout;

use crate::args::{goal, Args, SearchMethod};
use checks::{check, check_replay, is_ladder};

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
    /// Each confirmation's length (search trials use --search-duration); for
    /// --search mlr, each latency trial's: the last goal's final trial duration.
    pub duration: Duration,
    /// drop's RX queues.
    pub rx_queues: u16,
    pub mix: Option<wire::SizeMix>,
    pub method: Method,
    /// --back-to-back: repetitions, and the longest burst as time at the unpaced rate.
    pub back_to_back: Option<(u32, Duration)>,
}

/// How the knee is searched.
pub enum Method {
    /// blast's own search (crates/knee).
    Knee,
    /// RFC 9971's, for these Search Goals (crates/mlr).
    Mlr(Vec<mlr::Goal>),
}

impl Mode {
    /// The record's `mode`.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Single(_) => "single",
            Mode::Ladder(_) => "ladder",
            Mode::Knee(k) if matches!(k.method, Method::Mlr(_)) => "mlr",
            Mode::Knee(_) => "knee",
            Mode::Replay(_) => "replay",
        }
    }

    /// Checks the flags against each other (in the order the errors have
    /// always been reported) and the output files, then resolves the mode.
    pub fn from_args(args: &Args) -> Result<Mode, Failure> {
        if args.pcap.is_some() {
            check_replay(args)?;
            return Ok(Mode::Replay(pcap::replay(args)?));
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

fn single(args: &Args) -> Result<Single, Failure> {
    let queues = args.queues[0];
    let flows = args.flows.unwrap_or(u32::from(queues));
    Ok(Single {
        queues,
        size: args.sizes()[0],
        flows,
        layout: StepLayout::new(queues, args.port.len() as u16, flows, args.src_port).map_err(crate::fail::layout)?,
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
        // An RFC 9971 search's latency runs last its final goal's final trials.
        duration: match args.search {
            Some(SearchMethod::Mlr) => goals(args).last().map_or(DEFAULT_DURATION, |g| Duration::from_secs_f64(g.final_trial_duration)),
            _ => args.duration.unwrap_or(DEFAULT_DURATION),
        },
        rx_queues: args.rx_queues.unwrap_or(queues),
        mix: args.size_mix.clone(),
        back_to_back: args.back_to_back.map(|n| (n, args.burst_limit)),
        method: match args.search {
            Some(SearchMethod::Mlr) => Method::Mlr(goals(args)),
            _ => Method::Knee,
        },
    }
}

/// --search mlr's goals: those given, or NDR and PDR at --loss and --pdr-loss.
fn goals(args: &Args) -> Vec<mlr::Goal> {
    if args.goal.is_empty() {
        let named = |name: &str, pct: f64| mlr::Goal { loss_ratio: pct / 100.0, ..goal::goal(name).expect("a bare name is a goal") };
        return vec![named("NDR", args.loss), named("PDR", args.pdr_loss)];
    }
    args.goal.iter().map(|g| goal::goal(g).expect("clap checked each --goal")).collect()
}
