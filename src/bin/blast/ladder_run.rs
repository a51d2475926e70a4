//! A ladder: one measured step per (queue count, frame size), each with
//! drop's figures for the same window when there is a --peer; then the
//! table, the ceiling per frame size, and the JSON, CSV and SVG files.

use std::time::{Duration, Instant};

use serde::Serialize;

use blastdrop::attribution;
use blastdrop::fail::Failure;
use blastdrop::report::{self, cycles_per_packet, Environment, Rates};
use blastdrop::sender::{Sender, StepParams, WindowHooks};
use blastdrop::session::Started;
use blastdrop::signals;
use control::{Client, PeerInfo, Request, Response, WindowFigures};
use ladder::{crossover, find_ceiling, Aggregate, Ceiling, Crossover, Ladder, StepRecord};

use crate::args::Args;

/// The control connection to drop.
struct Peer {
    client: Client,
    timeout: Duration,
}

impl Peer {
    fn call(&mut self, req: Request) -> Result<Response, String> {
        self.client.call(req, self.timeout).map_err(|e| e.to_string())
    }
}

/// Opens and closes drop's window as blast's window opens and closes.
struct PeerHooks<'a> {
    peer: Option<&'a mut Peer>,
    window: Option<u64>,
    figures: Option<WindowFigures>,
}

impl WindowHooks for PeerHooks<'_> {
    fn start(&mut self) -> Result<(), String> {
        let Some(p) = self.peer.as_deref_mut() else { return Ok(()) };
        match p.call(Request::StartWindow)? {
            Response::WindowStarted { window } => {
                self.window = Some(window);
                Ok(())
            }
            other => Err(format!("drop answered {other:?} to start_window")),
        }
    }

    fn end(&mut self) -> Result<(), String> {
        let Some(p) = self.peer.as_deref_mut() else { return Ok(()) };
        let window = self.window.ok_or("no window open at drop")?;
        match p.call(Request::EndWindow { window })? {
            Response::WindowFigures(f) => {
                self.figures = Some(f);
                Ok(())
            }
            other => Err(format!("drop answered {other:?} to end_window")),
        }
    }
}

#[derive(Serialize)]
struct SizeCeiling {
    size: u32,
    ceiling: Ceiling,
    limit: String,
}

#[derive(Serialize)]
struct Analysis {
    /// Whether the figures analysed are the receiver's.
    receiver_side: bool,
    ceiling_threshold_pct: f64,
    ceilings: Vec<SizeCeiling>,
    crossover: Option<Crossover>,
}

#[derive(Serialize)]
struct Environments {
    sender: Environment,
    receiver: Option<PeerInfo>,
}

#[derive(Serialize)]
struct LadderRecord<'a> {
    tool: &'static str,
    mode: &'static str,
    schema_version: u32,
    version: &'static str,
    config: &'a Args,
    src_mac: String,
    environment: Environments,
    ladder: &'a Ladder,
    interrupted: bool,
    steps: &'a [StepRecord],
    aggregates: Vec<Aggregate>,
    analysis: Analysis,
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

pub fn run(args: &Args, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    let ladder = Ladder::new(args.queues.0.clone(), args.size.0.clone(), args.order);
    let duration = args.duration.unwrap_or(Duration::from_secs(10));
    let mut peer = match &args.peer {
        Some(addr) => Some(Peer {
            client: Client::connect(addr, args.token.clone(), args.control_timeout)
                .map_err(|e| Failure::runtime(format!("{e}: is drop running with --listen {addr}?")))?,
            timeout: args.control_timeout,
        }),
        None => None,
    };
    let peer_info = match peer.as_mut() {
        Some(p) => match p.call(Request::Hello).map_err(Failure::runtime)? {
            Response::Hello { info } => Some(info),
            other => return Err(Failure::runtime(format!("drop answered {other:?} to hello"))),
        },
        None => None,
    };
    // Refuse what the receiver cannot do before anything is sent.
    if let Some(info) = &peer_info {
        let rx = args.rx_queues.unwrap_or(ladder.max_queues());
        if rx > info.max_rx_queues {
            return Err(Failure::usage(format!(
                "the ladder needs {rx} RX queues but drop's port {} ({}) has at most {}: lower --queues or set --rx-queues",
                info.port_name, info.driver, info.max_rx_queues
            )));
        }
        if rx > info.worker_lcores {
            return Err(Failure::usage(format!(
                "the ladder needs {rx} RX queues but drop has {} worker lcores: restart drop with more lcores (-l) or set --rx-queues",
                info.worker_lcores
            )));
        }
        if ladder.max_size() > info.max_size {
            return Err(Failure::usage(format!(
                "the ladder sends {} B frames but drop takes frames up to {} B: restart drop with --max-size {}",
                ladder.max_size(),
                info.max_size,
                ladder.max_size()
            )));
        }
    }
    let receiver_side = peer.is_some();
    let shape = if args.rate.is_some() { format!("burst:{}", args.burst) } else { "open".into() };
    println!(
        "blast: ladder of {}, {} run(s) each; {:.1?} warm-up then a {:.1?} window per step; {} arrivals{}; {}",
        ladder.describe(),
        args.repeat,
        args.warmup,
        duration,
        shape,
        args.rate.map_or(String::new(), |r| format!(" at {:.3} Mpps", r / 1e6)),
        match &peer_info {
            Some(i) => format!("receiver: drop on {} ({}, {}); receiver-side figures", i.hostname, i.port_name, i.driver),
            None => "no --peer: sender-side figures only".into(),
        }
    );

    let total_steps = ladder.steps.len() * args.repeat as usize;
    let per_step = args.warmup + duration + args.drain;
    let began = Instant::now();
    let mut records: Vec<StepRecord> = Vec::new();
    let mut failure: Option<String> = None;
    'runs: for run in 1..=args.repeat {
        for (i, step) in ladder.steps.iter().enumerate() {
            if signals::stopping() {
                break 'runs;
            }
            let done = records.len();
            let left =
                if done == 0 { per_step * (total_steps as u32) } else { began.elapsed() / done as u32 * (total_steps - done) as u32 };
            eprintln!(
                "blast: step {}/{}: {} queue(s), {} B frames, run {}/{}; about {} left",
                done + 1,
                total_steps,
                step.queues,
                step.size,
                run,
                args.repeat,
                fmt_secs(left)
            );
            let flows = args.flows.unwrap_or(u32::from(step.queues));
            if let Some(p) = peer.as_mut() {
                let rx = args.rx_queues.unwrap_or(step.queues);
                match p.call(Request::Prepare { rx_queues: rx, max_size: step.size }) {
                    Ok(Response::Prepared(_)) => {}
                    Ok(other) => failure = Some(format!("drop answered {other:?} to prepare")),
                    Err(e) => failure = Some(e),
                }
                if let Some(e) = &failure {
                    records.push(StepRecord {
                        step: i,
                        run,
                        queues: step.queues,
                        size: step.size,
                        flows,
                        error: Some(e.clone()),
                        ..Default::default()
                    });
                    break 'runs;
                }
            }
            let params = StepParams {
                queues: step.queues,
                size: step.size,
                flows,
                rate: args.rate,
                count: None,
                duration: Some(duration),
                warmup: args.warmup,
                window: true,
                live: args.live,
            };
            let mut hooks = PeerHooks { peer: peer.as_mut(), window: None, figures: None };
            let outcome = sender.run_step(&params, &mut hooks)?;
            let figures = hooks.figures.take();
            let mut rec = StepRecord {
                step: i,
                run,
                queues: step.queues,
                size: step.size,
                flows,
                mtu: sender.mtu(),
                shape: shape.clone(),
                offered_mpps: args.rate.map(|r| r / 1e6),
                limit: "n/a".into(),
                ..Default::default()
            };
            match (&outcome.failure, outcome.window) {
                (None, Some(w)) => {
                    rec.sent = w.sent();
                    rec.sender_cycles_per_packet = cycles_per_packet(w.total.busy_cycles, w.total.packets);
                    rec.ring_full_retries = w.total.retries;
                    rec.sender_opackets = w.port.opackets;
                    rec.sender_oerrors = w.port.oerrors;
                    rec.sender_xstats = w.xstats.deltas.clone();
                    rec.sender_levels = w.xstats.levels.clone();
                    let v =
                        limits::verdict(&attribution::window_counters(&w, figures.as_ref(), attribution::offered(args.rate, w.seconds)));
                    rec.limit = v.label();
                    rec.verdict = Some(v);
                    if let Some(f) = figures {
                        // Frames of the trial that arrived, over the trial's length
                        // (RFC 2544's throughput); drop's own window is longer by the drains.
                        rec.received = Some(Rates::over(f.packets, f.bytes, w.seconds));
                        rec.loss_pct = Some(StepRecord::loss_from(w.total.packets, f.packets));
                        rec.receiver = Some(f);
                    }
                }
                (Some(e), _) => {
                    rec.error = Some(e.clone());
                    failure = Some(e.clone());
                }
                (None, None) => rec.error = Some("interrupted before the window closed".into()),
            }
            print_row(&rec);
            records.push(rec);
            if failure.is_some() || outcome.interrupted {
                break 'runs;
            }
        }
    }

    println!();
    print!("{}", ladder::render_table(&records));
    let aggregates = Aggregate::from_records(&records);
    if args.repeat > 1 {
        println!("\nrepeats ({} runs per step): {} Mpps min / median / max", args.repeat, if receiver_side { "received" } else { "sent" });
        for a in &aggregates {
            println!(
                "  {:>4} queue(s) {:>6} B: {:.3} / {:.3} / {:.3} Mpps  ({} runs)",
                a.queues, a.size, a.mpps.min, a.mpps.median, a.mpps.max, a.runs
            );
        }
    }
    let analysis = analyse(args, &ladder, &records, &aggregates, receiver_side);
    // The pace only caps steps that delivered it.
    let pace_capped = records.iter().any(|r| r.limit == "none");
    print_analysis(&analysis, args.rate.filter(|_| pace_capped));

    let mut sizes_seen = aggregates.clone();
    sizes_seen.sort_by_key(|a| (a.size, a.queues));
    if let Some(path) = &args.plot {
        let title = format!(
            "blastdrop ladder: {} ({}), flows {}, {} arrivals",
            sender.info().name,
            sender.info().driver,
            args.flows.map_or("= queues".into(), |f| f.to_string()),
            shape
        );
        let svg =
            ladder::render_svg(&sizes_seen, receiver_side, &title).map_err(|e| Failure::runtime(format!("cannot draw --plot: {e}")))?;
        std::fs::write(path, svg).map_err(|e| Failure::runtime(format!("cannot write --plot {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, ladder::render_csv(&records))
            .map_err(|e| Failure::runtime(format!("cannot write --csv {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.json {
        let record = LadderRecord {
            tool: "blast",
            mode: "ladder",
            schema_version: 1,
            version: env!("CARGO_PKG_VERSION"),
            config: args,
            src_mac: sender.src_mac().to_string(),
            environment: Environments { sender: crate::environment(started, sender, ladder.max_queues()), receiver: peer_info.clone() },
            ladder: &ladder,
            interrupted: signals::interrupted(),
            steps: &records,
            aggregates,
            analysis,
        };
        report::write_json(path, &record).map_err(Failure::runtime)?;
    }
    if let Some(p) = peer.as_mut() {
        let _ = p.call(Request::Bye);
    }
    match failure {
        Some(e) => Err(Failure::runtime(format!("ladder stopped after {} step(s): {e}", records.len()))),
        None => Ok(()),
    }
}

fn analyse(args: &Args, ladder: &Ladder, records: &[StepRecord], aggs: &[Aggregate], receiver_side: bool) -> Analysis {
    let mut ceilings = Vec::new();
    for &size in &ladder.sizes {
        let mut pts: Vec<(u16, f64)> = aggs.iter().filter(|a| a.size == size).map(|a| (a.queues, a.mpps.median)).collect();
        pts.sort_by_key(|p| p.0);
        if pts.len() < 2 {
            continue;
        }
        if let Some(c) = find_ceiling(&pts, args.ceiling_threshold / 100.0) {
            // The limit at the ceiling: what the step there hit.
            let limit = records
                .iter()
                .find(|r| r.size == size && r.queues == c.queues && r.error.is_none())
                .map_or_else(|| "n/a".to_string(), |r| r.limit.clone());
            ceilings.push(SizeCeiling { size, ceiling: c, limit });
        }
    }
    let crossover = args.published_gbps.map(|g| {
        let best: Vec<(u32, f64)> = ladder
            .sizes
            .iter()
            .map(|&s| (s, aggs.iter().filter(|a| a.size == s).map(|a| a.frame_gbps.median).fold(0.0, f64::max)))
            .collect();
        crossover(&best, g)
    });
    Analysis { receiver_side, ceiling_threshold_pct: args.ceiling_threshold, ceilings, crossover }
}

fn print_analysis(a: &Analysis, paced: Option<f64>) {
    let side = if a.receiver_side { "receiver-side" } else { "sender-side" };
    if let Some(r) = paced {
        println!("note: every step was paced at {:.3} Mpps: steps with limit `none` delivered it: their rate is the pace, not a limit of the path", r / 1e6);
    }
    for c in &a.ceilings {
        let x = &c.ceiling;
        let growth = if x.linear_before {
            format!("linear per queue before it ({:.3} Mpps/queue)", x.mpps_per_queue_first)
        } else {
            format!("sub-linear before it (first step {:.3} Mpps/queue)", x.mpps_per_queue_first)
        };
        if x.reached {
            println!(
                "ceiling ({} B frames): {:.3} Mpps at {} queues, limit: {}; growth {growth} [{side}]",
                c.size, x.mpps, x.queues, c.limit
            );
        } else {
            println!(
                "no ceiling ({} B frames): still growing {}%+ per step up to {} queues ({:.3} Mpps, limit there: {}); growth {growth} [{side}]",
                c.size, a.ceiling_threshold_pct, x.queues, x.mpps, c.limit
            );
        }
    }
    if let Some(x) = &a.crossover {
        match x.first_size {
            Some(s) => {
                println!("bandwidth: {} B frames are the smallest to reach {:.1} Gb/s of frames (within 3%) [{side}]", s, x.published_gbps)
            }
            None => println!("bandwidth: no frame size reached {:.1} Gb/s of frames (within 3%) [{side}]", x.published_gbps),
        }
        for v in &x.sizes {
            println!("  {:>6} B: best {:.3} Gb/s of frames, held back by the {}", v.size, v.gbps, v.held_by);
        }
    }
}

fn print_row(r: &StepRecord) {
    match (&r.error, r.received) {
        (Some(e), _) => println!("  step {} ({} queue(s), {} B): failed: {e}", r.step + 1, r.queues, r.size),
        (None, Some(rx)) => println!(
            "  step {} ({} queue(s), {} B, run {}): sent {:.3} Mpps, received {:.3} Mpps ({:.3} Gb/s wire), loss {:.3}%; limit: {}",
            r.step + 1,
            r.queues,
            r.size,
            r.run,
            r.sent.mpps,
            rx.mpps,
            rx.wire_gbps,
            r.loss_pct.unwrap_or(0.0),
            r.limit
        ),
        (None, None) => println!(
            "  step {} ({} queue(s), {} B, run {}): sent {:.3} Mpps (sender-side; no receiver); limit: {}",
            r.step + 1,
            r.queues,
            r.size,
            r.run,
            r.sent.mpps,
            r.limit
        ),
    }
}
