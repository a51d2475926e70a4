//! The control connection to drop, and one measured step: blast's window
//! and drop's window over the same trial, merged into a step record.

use std::time::Duration;

use blastdrop::attribution;
use blastdrop::fail::Failure;
use blastdrop::report::{PerPacket, Rates};
use blastdrop::sender::{Sender, SenderWindow, StepFailure, StepParams, WindowHooks};
use control::{Client, PeerInfo, Request, Response, WindowFigures};
use ladder::{AchievedShape, StepRecord};

use crate::args::Args;

/// Both ends' environments, for a record of runs against drop.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Environments {
    pub sender: blastdrop::report::Environment,
    pub receiver: Option<PeerInfo>,
}

/// The control connection to drop.
pub struct Peer {
    client: Client,
    timeout: Duration,
    /// In a group trial: this sender's place in it.
    pub member: Option<Membership>,
}

/// A group member's place: its index, the group's size and its stream ids.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Membership {
    pub group: String,
    pub member: u16,
    pub senders: u16,
    pub stream_base: u32,
    pub stream_count: u32,
}

impl Peer {
    pub fn call(&mut self, req: Request) -> Result<Response, control::ClientError> {
        self.client.call(req, self.timeout)
    }

    /// Whether drop is still there (its end of the control connection).
    pub fn gone(&self) -> Option<String> {
        self.client.peer_gone()
    }
}

/// Connects to --peer (when given) and says hello.
pub fn connect(args: &Args) -> Result<(Option<Peer>, Option<PeerInfo>), Failure> {
    let Some(addr) = &args.peer else { return Ok((None, None)) };
    let secret = control::Secret::load(args.token_file.as_deref(), std::env::var(control::SECRET_ENV).ok(), args.token.as_deref())
        .map_err(blastdrop::session::secret_failure)?;
    if let Some((_, control::SecretSource::CommandLine)) = &secret {
        tracing::warn!("--token shows in ps and /proc/PID/cmdline: prefer --token-file FILE or BLASTDROP_TOKEN");
    }
    let mut p = Peer {
        client: Client::connect(addr, args.control_timeout)
            .map_err(|e| Failure::runtime(format!("{e}: is drop running with --listen {addr}?")))?,
        timeout: args.control_timeout,
        member: None,
    };
    let info = p
        .client
        .handshake_for(secret.as_ref().map(|(s, _)| s), args.group.as_deref(), args.control_timeout)
        .map_err(|e| Failure::runtime(e.to_string()))?;
    Ok((Some(p), Some(info)))
}

/// Joins the --group with this sender's whole plan, and numbers this
/// sender's streams from its share of the group's ids.
pub fn join(p: &mut Peer, args: &Args, plan: control::StepPlan, sender: &mut Sender) -> Result<(), Failure> {
    let (Some(group), Some(senders)) = (args.group.clone(), args.senders) else { return Ok(()) };
    let req = Request::Join { group: group.clone(), senders, plan };
    match p.call(req).map_err(|e| Failure::runtime(format!("--group {group}: {e}")))? {
        Response::Joined { member, senders, stream_base, stream_count } => {
            blastdrop::say!(
                "blast: member {member} of group {group} ({senders} senders); stream ids {stream_base} to {}",
                stream_base + stream_count - 1
            );
            sender.own_streams(stream_base as u16, stream_count);
            p.member = Some(Membership { group, member, senders, stream_base, stream_count });
            Ok(())
        }
        other => Err(Failure::runtime(format!("drop answered {other:?} to join"))),
    }
}

/// Refuses, before anything is sent, what the receiver cannot do.
pub fn check_receiver(info: &PeerInfo, rx: u16, max_size: u32, reflect: bool, what: &str) -> Result<(), Failure> {
    if reflect && !info.reflect {
        return Err(Failure::usage(format!(
            "--reflect times probes that drop sends back, but drop on {} does not reflect: restart drop with --reflect, or run blast without --reflect",
            info.hostname
        )));
    }
    if rx > info.max_rx_queues {
        return Err(Failure::usage(format!(
            "{what} needs {rx} RX queues but drop's port {} ({}) has at most {}: lower --queues or set --rx-queues",
            info.port_name, info.driver, info.max_rx_queues
        )));
    }
    if rx > info.worker_lcores {
        return Err(Failure::usage(format!(
            "{what} needs {rx} RX queues but drop has {} worker lcores: restart drop with more lcores (-l) or set --rx-queues",
            info.worker_lcores
        )));
    }
    if max_size > info.max_size {
        return Err(Failure::usage(format!(
            "{what} sends {max_size} B frames but drop takes frames up to {} B: restart drop with --max-size {max_size}",
            info.max_size
        )));
    }
    Ok(())
}

/// Per-port receiver figures pair blast's port i with drop's port i: say
/// so when the counts differ (the totals still compare).
pub fn check_port_pairing(info: &PeerInfo, sender_ports: usize) {
    if usize::from(info.ports) != sender_ports && sender_ports > 1 {
        tracing::warn!(
            "blast sends on {sender_ports} ports but drop receives on {} ({}): per-port rows are sender-side only; give drop as many --port to pair them",
            info.ports,
            info.port_name
        );
    }
}

/// Opens and closes drop's window as blast's window opens and closes.
pub struct PeerHooks<'a> {
    peer: Option<&'a mut Peer>,
    /// The step's paced rate (a member's own verdict reads it).
    rate: Option<f64>,
    window: Option<u64>,
    figures: Option<WindowFigures>,
}

impl<'a> PeerHooks<'a> {
    /// `rate`: the step's paced rate (a group member's own verdict reads it).
    pub fn new(peer: Option<&'a mut Peer>, rate: Option<f64>) -> PeerHooks<'a> {
        PeerHooks { peer, rate, window: None, figures: None }
    }

    /// drop's figures for the window, once it closed.
    pub fn take_figures(&mut self) -> Option<WindowFigures> {
        self.figures.take()
    }
}

/// Asks drop for the step's RX queues and frame size; a drop that
/// restarted its port has the sender connect again (a memif client does
/// not by itself).
pub fn prepare_step(p: &mut Peer, sender: &mut Sender, rx_queues: u16, max_size: u32) -> Result<(), StepFailure> {
    match p.call(Request::Prepare { rx_queues, max_size })? {
        Response::Prepared(prepared) if prepared.restarted => {
            sender.reconnect_next_step();
            Ok(())
        }
        Response::Prepared(_) => Ok(()),
        other => Err(StepFailure::Unexpected { answer: format!("{other:?}"), request: "prepare" }),
    }
}

impl WindowHooks for PeerHooks<'_> {
    fn start(&mut self, streams: Option<&seqtrack::StreamEdge>) -> Result<(), StepFailure> {
        let Some(p) = self.peer.as_deref_mut() else { return Ok(()) };
        match p.call(Request::StartWindow { streams: streams.cloned() })? {
            Response::WindowStarted { window } => {
                self.window = Some(window);
                Ok(())
            }
            other => Err(StepFailure::Unexpected { answer: format!("{other:?}"), request: "start_window" }),
        }
    }

    fn end(&mut self, w: &SenderWindow) -> Result<(), StepFailure> {
        let Some(p) = self.peer.as_deref_mut() else { return Ok(()) };
        let window = self.window.ok_or(StepFailure::NoWindow)?;
        let req = match p.member {
            // A member's own sending, judged on its own counters alone: the
            // group's row for it says whether it held back the group.
            Some(_) => Request::GroupEnd {
                window,
                sent_packets: w.total.packets,
                sent_bytes: w.total.bytes,
                cycles_per_packet: PerPacket::of(w.total.busy_cycles, w.total.packets).cycles_per_packet,
                sender_limit: Some(attribution::verdict(w, None, self.rate).label()),
                streams: w.streams_at_end.clone(),
            },
            None => Request::EndWindow { window, streams: w.streams_at_end.clone() },
        };
        match p.call(req)? {
            Response::WindowFigures(f) => {
                self.figures = Some(*f);
                Ok(())
            }
            other => Err(StepFailure::Unexpected { answer: format!("{other:?}"), request: "end_window" }),
        }
    }

    fn peer_alive(&mut self) -> Result<(), StepFailure> {
        match self.peer.as_deref().and_then(Peer::gone) {
            Some(why) => Err(StepFailure::PeerGone(why)),
            None => Ok(()),
        }
    }
}

/// A measured step: its record, why the run must stop (if it must), and
/// whether it was interrupted.
pub type Measured = (StepRecord, Option<StepFailure>, bool);

/// Runs one step as a trial and merges both ends' figures.
pub fn measure(sender: &mut Sender, peer: Option<&mut Peer>, params: &StepParams, step: usize, run: u32) -> Result<Measured, Failure> {
    let group_member = peer.as_deref().and_then(|p| p.member.clone());
    let mut hooks = PeerHooks::new(peer, params.rate);
    let outcome = sender.run_step(params, &mut hooks)?;
    let figures = hooks.figures.take();
    let mut rec = StepRecord {
        step,
        run,
        queues: params.queues,
        // With a mix, its mean frame size (rates and Gb/s count each frame's own bytes).
        size: params.mix.as_ref().map_or(params.size, |m| m.mean_size().round() as u32),
        size_mix: params.mix.as_ref().map(|m| m.label()),
        flows: params.flows,
        mtu: sender.mtu(),
        shape: params.shape.to_string(),
        offered_mpps: params.rate.map(|r| r / 1e6),
        ..Default::default()
    };
    let mut failure = None;
    match (&outcome.failure, outcome.window) {
        (None, Some(w)) => {
            rec.sent = w.sent();
            let busy = PerPacket::of(w.total.busy_cycles, w.total.packets);
            (rec.sender_cycles_per_packet, rec.sender_ns_per_packet) = (busy.cycles_per_packet, busy.ns_per_packet);
            rec.ring_full_retries = w.total.ring_full_retries;
            rec.sender_opackets = w.port.opackets;
            rec.sender_oerrors = w.port.oerrors;
            rec.sender_xstats = w.xstats.counters.deltas();
            rec.sender_levels = w.xstats.counters.levels.clone();
            rec.achieved_shape = Some(achieved_shape(&w.shape, sender.tsc_hz(), w.seconds));
            if let Some(h) = &w.latency {
                rec.latency = Some(h.summary());
                rec.latency_clock = Some(latency::LatencyClock::SenderRoundTrip);
                rec.latency_histogram = h.buckets();
                rec.reflected = Some(w.reflected);
                rec.reflected_stale = Some(w.reflected_stale);
            }
            if let Some(a) = &rec.achieved_shape {
                rec.shape_bunched = ladder::bunched(params.shape, a, w.total.ring_full_retries, &w.stalls, w.host_steal_pct);
            }
            rec.stalls = Some(ladder::StepStalls {
                sender: w.stalls,
                receiver: figures.as_ref().and_then(|f| f.stalls),
                sender_host_steal_pct: w.host_steal_pct,
                receiver_host_steal_pct: figures.as_ref().and_then(|f| f.host_steal_pct),
            });
            if let Some(member) = group_member {
                group_step(&mut rec, member, figures.as_ref(), w.seconds);
            } else {
                let v = attribution::verdict(&w, figures.as_ref(), params.rate);
                rec.verdict = Some(v);
                rec.ports = attribution::port_steps(&w, figures.as_ref(), params.rate, &sender.port_names(), params.queues);
                if let Some(f) = &figures {
                    rec.loss_pct = Some(StepRecord::loss_from(w.total.packets, f.packets));
                }
            }
            if let Some(f) = figures {
                // Frames of the trial that arrived, over the trial's length
                // (RFC 2544's throughput); drop's own window is longer by the drains.
                rec.received = Some(Rates::over(f.packets, f.bytes, w.seconds));
                let exact = match rec.group.as_ref() {
                    Some(_) => f.trial.as_ref(),
                    None => attribution::exact_account(&w, &f),
                };
                if let Some(t) = exact {
                    let sent = if rec.group.is_some() { t.sent } else { w.total.packets };
                    rec.received = Some(Rates::over(t.received, t.received_bytes, w.seconds));
                    rec.loss_pct = Some(StepRecord::loss_from(t.sent, t.received));
                    rec.lost = Some(t.lost);
                    rec.accounting_error = t.error(Some(sent));
                    if let Some(e) = &rec.accounting_error {
                        blastdrop::say!("blast: step {step}: {e} (the figures are kept as counted)");
                    }
                }
                rec.receiver = Some(f);
            }
            name_the_tail(&mut rec);
        }
        (Some(e), _) => {
            rec.error = Some(e.clone());
            failure = Some(e.clone());
        }
        (None, None) => rec.error = Some(StepFailure::Interrupted),
    }
    // Every measured step, a knee's trials too, as it ends.
    blastdrop::events::emit("step", &rec);
    Ok((rec, failure, outcome.interrupted))
}

/// A latency tail of a millisecond or more says whether a lane's stall
/// explains it, in the record and in the verdict's evidence (a tail the
/// host caused is a fact about the host, not the path).
fn name_the_tail(rec: &mut StepRecord) {
    let (Some(l), Some(s)) = (&rec.latency, &rec.stalls) else { return };
    rec.tail_cause = s.tail_cause(l);
    if let (Some(cause), Some(v)) = (&rec.tail_cause, rec.verdict.as_mut()) {
        if let Some(first) = v.limits.first_mut() {
            first.evidence = format!("{}; latency: {cause}", first.evidence);
        }
    }
}

/// A group trial's step: the loss is drop's count against what every
/// member sent, and the verdict drop's own (receiver-side): this sender's
/// counters are one member's, so a both-ends verdict would compare one
/// member's sending with everybody's arrivals.
fn group_step(rec: &mut StepRecord, m: Membership, figures: Option<&WindowFigures>, seconds: f64) {
    let Some(f) = figures else { return };
    let Some(g) = f.group.as_deref() else {
        rec.error = Some(StepFailure::NoGroupFigures);
        return;
    };
    let (packets, bytes) = g.members.iter().fold((0, 0), |(p, b), x| (p + x.sent_packets, b + x.sent_bytes));
    rec.loss_pct = Some(StepRecord::loss_from(packets, f.packets));
    let busy_pct = (f.seconds > 0.0).then(|| 100.0 * f.busy_seconds / f.seconds);
    let accounting_error = f.trial.as_ref().and_then(|t| t.error(Some(packets)));
    let mut verdict = limits::receiver_verdict(&limits::ReceiverCounters {
        received: f.trial.as_ref().map_or(f.packets, |t| t.received),
        imissed: f.imissed,
        rx_nombuf: f.rx_nombuf,
        ierrors: f.ierrors,
        xstats: limits::XstatsByKind::from_wire(&f.xstats, &f.levels),
        probe_lost: f.trial.as_ref().map_or(f.probe.lost, |t| t.lost),
        probes_read: f.no_probe < f.packets,
        busy_pct,
        invalid: f.xstats_invalid.clone(),
    });
    if accounting_error.is_some() {
        (verdict.limits, verdict.invalid) = (Vec::new(), accounting_error);
    }
    rec.verdict = Some(verdict);
    rec.group =
        Some(ladder::GroupStep { name: m.group, senders: m.senders, member: m.member, own_sent: rec.sent, members: g.members.clone() });
    rec.sent = Rates::over(packets, bytes, seconds);
}

/// The shape a trial achieved, from its send times.
pub fn achieved_shape(s: &pace::ShapeStats, hz: u64, seconds: f64) -> AchievedShape {
    AchievedShape {
        sends: s.sends,
        frames_per_send: s.frames_per_send(),
        max_frames_per_send: s.max_frames,
        mean_gap_us: s.mean_gap_us(hz),
        median_gap_us: s.gap_percentile(50.0) / hz as f64 * 1e6,
        gap_spread: s.gap_spread(),
        achieved_mpps: if seconds > 0.0 { s.frames as f64 / seconds / 1e6 } else { 0.0 },
    }
}
