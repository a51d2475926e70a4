//! drop's side of a group trial: the members' sessions meet at barriers
//! (crate::group holds the rules) and the last to arrive does the work
//! for all: prepares the port, opens the window, closes it and hands every
//! member the same figures with what each sent.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::Instant;

use crate::group::{stream_range, Arrival, Group, Stage, StepPlan};
use crate::message::{GroupFigures, MemberFigures, Response};
use crate::server::{error, Shared, TICK};

/// A group being formed or running, shared by its members' sessions.
pub(crate) struct GroupRun {
    group: Group,
    /// Member sessions still connected.
    sessions: usize,
    /// Bumped whenever a barrier opens: a waiting member sees the change.
    opened: u64,
    /// What the last opened barrier answered, for every member.
    answer: Option<Response>,
    /// The group's open window, and the next window's number.
    window: Option<u64>,
    next_window: u64,
    /// What each member said of its sending in the open window.
    sent: Vec<MemberSending>,
    /// Where each member's streams stood when it asked for the window.
    starts: Vec<Option<seqtrack::StreamEdge>>,
    /// The edges the open window was started with: every member's, or none.
    counted: bool,
}

/// What a member says of its own sending at group_end.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemberSending {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) cycles_per_packet: Option<f64>,
    pub(crate) sender_limit: Option<String>,
    /// Where its streams stood at the window's end.
    pub(crate) streams: Option<seqtrack::StreamEdge>,
}

impl GroupRun {
    /// A member may still join.
    pub(crate) fn joinable(&self) -> bool {
        !self.group.is_complete() && self.group.broken().is_none()
    }

    pub(crate) fn describe(&self) -> String {
        format!("group {} ({} of {} senders joined)", self.group.name, self.group.members.len(), self.group.senders)
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, Option<GroupRun>> {
    shared.group.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates group `name` or joins it (drop admitted this client for this
/// group at its handshake). Returns the member index and the answer.
pub(crate) fn join(shared: &Shared, client: &str, name: &str, senders: u16, plan: StepPlan) -> Result<(u16, Response), String> {
    let mut g = lock(shared);
    let member = match g.as_mut() {
        Some(run) => {
            let m = run.group.join(name, senders, &plan, client).map_err(|e| e.to_string())?;
            run.sessions += 1;
            run.sent.push(MemberSending::default());
            run.starts.push(None);
            m
        }
        None => {
            let group = Group::new(name, senders, plan, client).map_err(|e| e.to_string())?;
            *g = Some(GroupRun {
                group,
                sessions: 1,
                opened: 0,
                answer: None,
                window: None,
                next_window: 1,
                sent: vec![MemberSending::default()],
                starts: vec![None],
                counted: false,
            });
            0
        }
    };
    shared.group_moved.notify_all();
    let r = stream_range(member, senders);
    tracing::info!("control: {client} joined group {name} as member {member} of {senders}");
    Ok((member, Response::Joined { member, senders, stream_base: r.start, stream_count: r.end - r.start }))
}

/// Member `member` reached `stage`. The last to arrive runs `open` (with
/// the group held, so nobody moves meanwhile) and every member gets its
/// answer; the others wait for it, or for the group to break, or for the
/// window timeout.
pub(crate) fn barrier(shared: &Shared, member: u16, stage: Stage, open: impl FnOnce(&mut GroupRun, &Shared) -> Response) -> Response {
    let mut g = lock(shared);
    let Some(run) = g.as_mut() else { return error("the group is gone") };
    match run.group.arrive(member, stage) {
        Err(e) => error(e.to_string()),
        Ok(Arrival::Open) => {
            let answer = open(run, shared);
            run.answer = Some(answer.clone());
            run.opened += 1;
            shared.group_moved.notify_all();
            answer
        }
        Ok(Arrival::Wait) => {
            let opened = run.opened;
            let deadline = Instant::now() + shared.cfg.window_timeout;
            loop {
                g = shared.group_moved.wait_timeout(g, TICK).unwrap_or_else(|e| e.into_inner()).0;
                let Some(run) = g.as_ref() else { return error("the group is gone") };
                if run.opened != opened {
                    return run.answer.clone().unwrap_or_else(|| error("the group moved on without an answer"));
                }
                if let Some(e) = run.group.broken() {
                    return error(e.to_string());
                }
                if shared.stop.load(Ordering::Relaxed) {
                    return error("server stopping");
                }
                if Instant::now() >= deadline {
                    return error(format!(
                        "the group's other members did not reach {stage:?} within {:?}: the step ends",
                        shared.cfg.window_timeout
                    ));
                }
            }
        }
    }
}

/// Prepares the port once, for every member.
pub(crate) fn prepare(shared: &Shared, member: u16, rx_queues: u16, max_size: u32) -> Response {
    barrier(shared, member, Stage::Ready, |run, shared| {
        let mut b = shared.backend();
        if let Some(w) = run.window.take() {
            b.abandon_window(w, "the group prepared the next step with this window open");
        }
        match b.prepare(rx_queues, max_size) {
            Ok(p) => Response::Prepared(p),
            Err(e) => error(e.to_string()),
        }
    })
}

/// Opens the window once every member is warmed up and drained, its
/// trial frames those of every member's streams from where each stands
/// (`streams`); if a member gave none, no exact account is kept.
pub(crate) fn start_window(shared: &Shared, member: u16, streams: Option<seqtrack::StreamEdge>) -> Response {
    if let Some(run) = lock(shared).as_mut() {
        if let Some(s) = run.starts.get_mut(usize::from(member)) {
            *s = streams;
        }
    }
    barrier(shared, member, Stage::InWindow, |run, shared| {
        let edges: Option<Vec<seqtrack::StreamEdge>> = run.starts.iter().cloned().collect();
        run.counted = edges.is_some();
        start_group_window(run, shared, &edges.unwrap_or_default())
    })
}

fn start_group_window(run: &mut GroupRun, shared: &Shared, edges: &[seqtrack::StreamEdge]) -> Response {
    match shared.backend().start_window(edges) {
        Ok(()) => {
            let w = run.next_window;
            (run.window, run.next_window) = (Some(w), w + 1);
            run.sent.iter_mut().for_each(|s| *s = MemberSending::default());
            Response::WindowStarted { window: w }
        }
        Err(e) => error(e.to_string()),
    }
}

/// Closes the window once every member has stopped and drained; every
/// member gets the receiver's figures and what each member sent.
pub(crate) fn end_window(shared: &Shared, member: u16, window: u64, sent: MemberSending) -> Response {
    {
        let mut g = lock(shared);
        let Some(run) = g.as_mut() else { return error("the group is gone") };
        if let Some(e) = run.group.broken() {
            return error(e.to_string());
        }
        if run.window != Some(window) {
            return error(format!("window {window} is not the group's open window ({:?})", run.window));
        }
        run.sent[usize::from(member)] = sent;
    }
    barrier(shared, member, Stage::Done, |run, shared| {
        run.window = None;
        let ends: Vec<seqtrack::StreamEdge> =
            if run.counted { run.sent.iter().filter_map(|s| s.streams.clone()).collect() } else { Vec::new() };
        let mut b = shared.backend();
        match b.end_window(window, &ends) {
            Ok(mut f) => {
                let group = figures(run, &f);
                b.window_group(window, &group);
                f.window = window;
                f.group = Some(Box::new(group));
                Response::WindowFigures(Box::new(f))
            }
            Err(e) => error(e.to_string()),
        }
    })
}

fn figures(run: &GroupRun, f: &crate::WindowFigures) -> GroupFigures {
    let blocks = &f.stream_blocks;
    // Exact per member where every member's account came back (in member order).
    let exact = (f.trial.is_some() && f.trial_parts.len() == run.group.members.len()).then_some(&f.trial_parts);
    let senders = run.group.senders;
    let members = run
        .group
        .members
        .iter()
        .enumerate()
        .map(|(m, client)| {
            let r = stream_range(m as u16, senders);
            let sent = &run.sent[m];
            // Per member only where drop counted per block of streams.
            let account = exact.map(|parts| parts[m].clone());
            let arrivals = match &account {
                Some(a) => Some((a.received, a.lost)),
                None => (!blocks.is_empty()).then(|| crate::member_arrivals(blocks, m as u16, senders)),
            };
            MemberFigures {
                member: m as u16,
                client: client.clone(),
                stream_base: r.start,
                stream_count: r.end - r.start,
                sent_packets: sent.packets,
                sent_bytes: sent.bytes,
                received: arrivals.map(|a| a.0),
                lost: arrivals.map(|a| a.1),
                exact: account.is_some(),
                trial: account,
                cycles_per_packet: sent.cycles_per_packet,
                sender_limit: sent.sender_limit.clone(),
            }
        })
        .collect();
    GroupFigures { name: run.group.name.clone(), members }
}

/// Member `member`'s session ended (`why`): the group cannot go on (a
/// member waiting at a barrier is told), an open window is recorded as
/// incomplete, and when no member is left the group is gone. True then.
pub(crate) fn leave(shared: &Shared, member: u16, why: &str) -> bool {
    let mut g = lock(shared);
    let Some(run) = g.as_mut() else { return true };
    let e = run.group.leave(member, why);
    if let Some(w) = run.window.take() {
        shared.backend().abandon_window(w, &e.to_string());
        tracing::warn!("control: group {}: {e}; measured window {w} is recorded as incomplete", run.group.name);
    }
    run.sessions -= 1;
    shared.group_moved.notify_all();
    if run.sessions == 0 {
        tracing::info!("control: group {} is over", run.group.name);
        *g = None;
        return true;
    }
    false
}
