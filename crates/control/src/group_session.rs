//! drop's side of a group trial: the members' sessions meet at barriers
//! (crate::group holds the rules) and the last to arrive does the work
//! for all: prepares the port, opens the window, closes it and hands every
//! member the same figures with what each sent.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::backend::ClientLink;
use crate::group::{stream_range, Arrival, Group, GroupError, Stage, StepPlan};
use crate::group_run::{GroupRun, MemberSending};
use crate::lines::TICK;
use crate::message::{error, GroupFigures, MemberFigures, Response};
use crate::shared::Shared;
use crate::window::Windows;

/// Creates group `name` or joins it (drop admitted this client for this
/// group at its handshake). Returns the member index and the answer.
pub(crate) fn join(shared: &Shared, client: &str, name: &str, senders: u16, plan: StepPlan) -> Result<(u16, Response), GroupError> {
    let mut g = shared.group();
    let member = match g.as_mut() {
        Some(run) => {
            let m = run.group.join(name, senders, &plan, client)?;
            run.sessions += 1;
            run.sent.push(MemberSending::default());
            run.starts.push(None);
            m
        }
        None => {
            let group = Group::new(name, senders, plan, client)?;
            *g = Some(GroupRun {
                group,
                sessions: 1,
                opened: 0,
                answer: None,
                windows: Windows::default(),
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
    let mut g = shared.group();
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
    barrier(shared, member, Stage::Ready, |run, shared| run.windows.prepare(&mut *shared.backend(), rx_queues, max_size, "the group"))
}

/// Opens the window once every member is warmed up and drained, its
/// trial frames those of every member's streams from where each stands
/// (`streams`); if a member gave none, no exact account is kept.
/// The member that opens it is the one whose going away stops the wait
/// for the port (the others' departures break the group).
pub(crate) fn start_window(shared: &Shared, member: u16, streams: Option<seqtrack::StreamEdge>, client: ClientLink<'_>) -> Response {
    if let Some(run) = shared.group().as_mut() {
        if let Some(s) = run.starts.get_mut(usize::from(member)) {
            *s = streams;
        }
    }
    barrier(shared, member, Stage::InWindow, |run, shared| {
        let edges: Option<Vec<seqtrack::StreamEdge>> = run.starts.iter().cloned().collect();
        run.counted = edges.is_some();
        let started = run.windows.start(&mut *shared.backend(), &edges.unwrap_or_default(), client);
        if matches!(started, Response::WindowStarted { .. }) {
            run.sent.iter_mut().for_each(|s| *s = MemberSending::default());
        }
        started
    })
}

/// Closes the window once every member has stopped and drained; every
/// member gets the receiver's figures and what each member sent.
pub(crate) fn end_window(shared: &Shared, member: u16, window: u64, sent: MemberSending) -> Response {
    {
        let mut g = shared.group();
        let Some(run) = g.as_mut() else { return error("the group is gone") };
        if let Some(e) = run.group.broken() {
            return error(e.to_string());
        }
        if run.windows.open() != Some(window) {
            return error(format!("window {window} is not the group's open window ({:?})", run.windows.open()));
        }
        run.sent[usize::from(member)] = sent;
    }
    barrier(shared, member, Stage::Done, |run, shared| {
        let ends: Vec<seqtrack::StreamEdge> =
            if run.counted { run.sent.iter().filter_map(|s| s.streams.clone()).collect() } else { Vec::new() };
        let mut b = shared.backend();
        match run.windows.end(&mut *b, window, &ends) {
            Response::WindowFigures(mut f) => {
                let group = figures(run, &f);
                b.window_group(window, &group);
                f.group = Some(Box::new(group));
                Response::WindowFigures(f)
            }
            refused => refused,
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
    let mut g = shared.group();
    let Some(run) = g.as_mut() else { return true };
    let e = run.group.leave(member, why);
    if let Some(w) = run.windows.abandon(&mut *shared.backend(), &e.to_string()) {
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
