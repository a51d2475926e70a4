//! A ladder: one measured step per (queue count, frame size), each with
//! drop's figures for the same window when there is a --peer; then the
//! table, the ceiling per frame size, and the JSON, CSV and SVG files.

use std::time::{Duration, Instant};

use serde::Serialize;

use blastdrop::fail::Failure;
use blastdrop::report;
use blastdrop::sender::{Sender, StepParams};
use blastdrop::session::Started;
use blastdrop::signals;
use control::{Request, Response};
use ladder::{crossover, find_ceiling, Aggregate, Ceiling, Crossover, Ladder, StepRecord};

use crate::args::Args;
use crate::peer;

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
struct LadderRecord<'a> {
    tool: &'static str,
    mode: &'static str,
    schema_version: u32,
    version: &'static str,
    config: &'a Args,
    src_mac: String,
    environment: peer::Environments,
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
    let (mut peer, peer_info) = peer::connect(args)?;
    if let Some(rx) = args.rx_queues.filter(|_| sender.sides().iter().any(|s| s.port.peer_managed())) {
        if ladder.queues.iter().any(|&q| q != rx) {
            return Err(Failure::usage(format!(
                "--rx-queues {rx} on memif: memif pairs queues one to one, and drop would poll rings blast never made: leave --rx-queues out"
            )));
        }
    }
    if let Some(info) = &peer_info {
        peer::check_receiver(info, args.rx_queues.unwrap_or(ladder.max_queues()), ladder.max_size(), args.reflect, "the ladder")?;
        peer::check_port_pairing(info, sender.sides().len());
    }
    let receiver_side = peer.is_some();
    let shape = args.arrival_shape().to_string();
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
                    // drop restarted its port: a memif client must connect again.
                    Ok(Response::Prepared(prepared)) if prepared.restarted => sender.reconnect_next_step(),
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
                shape: args.arrival_shape(),
                reflect: args.reflect,
            };
            // A step that cannot run (a port that will not start, a link that
            // stays down when the receiver is gone) ends the ladder, and the
            // steps before it are still written.
            let (rec, step_failure, interrupted) = match peer::measure(sender, peer.as_mut(), &params, i, run) {
                Ok(measured) => measured,
                Err(f) => {
                    let rec = StepRecord {
                        step: i,
                        run,
                        queues: step.queues,
                        size: step.size,
                        flows,
                        error: Some(f.message.clone()),
                        ..Default::default()
                    };
                    (rec, Some(f.message), signals::interrupted())
                }
            };
            if step_failure.is_some() {
                failure = step_failure;
            }
            print_row(&rec);
            records.push(rec);
            if failure.is_some() || interrupted {
                break 'runs;
            }
        }
    }

    println!();
    let ena: Vec<String> =
        sender.sides().iter().filter_map(|s| s.ena.as_ref().map(|e| format!("; {}: {}", s.info.name, e.describe()))).collect();
    println!(
        "sender: {} on {}, {}, DPDK {}{}{}",
        report::hostname(),
        report::Machine::read().describe(),
        report::cpu_model(),
        dpdk::runtime_version(),
        ena.concat(),
        peer_info.as_ref().map_or(String::new(), |i| format!("; receiver: {} ({}, DPDK {})", i.hostname, i.cpu_model, i.dpdk))
    );
    if let Some(r) = records.iter().find(|r| r.error.is_none()) {
        println!(
            "every step: MTU {}, {} arrivals{}, {} (FCS incl.); recv figures are drop's (receiver-side) where there is a --peer",
            r.mtu,
            r.shape,
            args.rate.map_or(String::new(), |x| format!(" at {:.3} Mpps offered", x / 1e6)),
            if ladder.sizes.len() == 1 { format!("{} B frames", ladder.sizes[0]) } else { "frame sizes as in the size column".into() }
        );
    }
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
    let pace_capped = records.iter().any(|r| r.limit() == "none");
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
            environment: peer::Environments {
                sender: crate::environment(started, sender, ladder.max_queues()),
                receiver: peer_info.clone(),
            },
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
                .map_or_else(|| "n/a".to_string(), |r| r.limit());
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
    print_step(r);
    for p in &r.ports {
        println!(
            "    port {} ({}, {} queue(s)): sent {:.3} Mpps{}; limit: {}",
            p.port,
            p.name,
            p.queues,
            p.sent.mpps,
            match (p.received, &p.receiver_port) {
                (Some(rx), Some(name)) => format!(", received {:.3} Mpps on {name}, loss {:.3}%", rx.mpps, p.loss_pct.unwrap_or(0.0)),
                _ => String::new(),
            },
            p.limit()
        );
    }
}

fn print_step(r: &StepRecord) {
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
            r.limit()
        ),
        (None, None) => println!(
            "  step {} ({} queue(s), {} B, run {}): sent {:.3} Mpps (sender-side; no receiver); limit: {}",
            r.step + 1,
            r.queues,
            r.size,
            r.run,
            r.sent.mpps,
            r.limit()
        ),
    }
}
