//! A group trial's part: one section for all its members' records. The
//! members (who sent what, drop's count of each, each one's own sender
//! verdict), then the group's figures one row per step, with offered and
//! sent both the group's: the sum of the members' own paced rates, and
//! what all members sent (the step's `sent`, as blast writes it for a group).

use ladder::StepRecord;

use crate::doc::{Block, Cell, Section, Table};
use crate::fmt::{mpps, mpps_range, opt, pct, step_limit_cell};
use crate::group::GroupTrial;
use crate::record::Record;

/// The members' table, the group's steps, each member's share per step.
pub fn blocks(records: &[Record], g: &GroupTrial, s: &mut Section) {
    s.push(Block::Para(rule(records, g)));
    if !g.notes.is_empty() {
        s.push(Block::Warnings(g.notes.clone()));
    }
    s.push(Block::Table(member_table(records, g)));
    s.push(Block::Table(step_table(g)));
    s.push(Block::Table(share_table(g)));
}

/// What was merged, and on what footing the figures stand.
fn rule(records: &[Record], g: &GroupTrial) -> String {
    let given: Vec<String> =
        g.members.iter().map(|m| format!("member {} (run {} {})", m.member, m.index + 1, records[m.index].file_name())).collect();
    let windows: Vec<String> = g.steps().iter().filter_map(|s| s.receiver.as_ref().map(|w| w.window.to_string())).collect();
    let missing = if g.members.len() < usize::from(g.senders) {
        format!(
            " Only {} of the {} members' records were given: the others' own rates are not known, so the group's offered rate is not either; drop's count of every member stands in the table of shares.",
            g.members.len(),
            g.senders
        )
    } else {
        String::new()
    };
    format!(
        "One group trial of {} senders: {}, counted by drop in the same windows ({}), each record holding the same group figures. \
         Sent, received, lost and the limit are the group's (all members' frames, drop's counts, drop's receiver-side verdict); \
         offered is the sum of the members' own paced rates.{missing}",
        g.senders,
        given.join(", "),
        windows.join(", ")
    )
}

/// Who the members are: their hosts and ports, their control address.
fn member_table(records: &[Record], g: &GroupTrial) -> Table {
    let mut t =
        Table::new(format!("Group {}: its members' records", g.name), &["member", "run", "host", "port", "client (as drop saw it)"]);
    for m in &g.members {
        let e = &m.body.environment.sender;
        let client = g.steps().first().and_then(|s| s.group.as_ref()).and_then(|gs| gs.members.iter().find(|x| x.member == m.member));
        t.row(vec![
            m.member.to_string().into(),
            format!("run {} {}", m.index + 1, records[m.index].file_name()).into(),
            e.hostname.clone().into(),
            format!("{} ({})", e.port.name, e.port.driver).into(),
            client.map_or_else(String::new, |c| c.client.clone()).into(),
        ]);
    }
    t
}

/// The group's offered rate at step `i`: the members' own paced rates
/// summed, "-" when none paced, unknown when a member's record is missing.
fn group_offered(g: &GroupTrial, i: usize) -> String {
    let own: Vec<Option<f64>> = g.members.iter().map(|m| m.body.steps.get(i).and_then(|s| s.offered_mpps)).collect();
    if own.iter().all(Option::is_none) {
        return "-".to_string();
    }
    if g.members.len() < usize::from(g.senders) || own.iter().any(Option::is_none) {
        return "unknown".to_string();
    }
    mpps(own.iter().flatten().sum())
}

fn step_table(g: &GroupTrial) -> Table {
    let mut t = Table::new(
        format!("Group {}: every step, the group's figures (offered: the members' paced rates summed; sent: all members' frames; received: drop's count of the trial's frames)", g.name),
        &[
            "step",
            "queues each",
            "size B",
            "flows each",
            "MTU",
            "shape",
            "offered Mpps (group)",
            "sent frames (group)",
            "sent Mpps (group)",
            "received Mpps (drop)",
            "loss",
            "lost",
            "limit (group, receiver-side)",
        ],
    );
    for (i, v) in g.steps().iter().enumerate() {
        t.row(vec![
            step_name(v).into(),
            v.queues.to_string().into(),
            v.size.to_string().into(),
            v.flows.to_string().into(),
            v.mtu.to_string().into(),
            v.shape.clone().into(),
            group_offered(g, i).into(),
            v.sent.packets.to_string().into(),
            rate_cell(g.range(i, |s| Some(s.sent.mpps))),
            rate_cell(g.range(i, |s| s.received.map(|r| r.mpps))),
            opt(v.loss_pct, pct).into(),
            v.lost.map_or_else(|| "unknown".to_string(), |l| l.to_string()).into(),
            step_limit_cell(v),
        ]);
    }
    t
}

/// A group rate: one figure, or the members' records' range with why they differ.
fn rate_cell(range: Option<(f64, f64)>) -> Cell {
    match range {
        None => Cell::new("-"),
        Some((lo, hi)) if mpps(lo) == mpps(hi) => Cell::new(mpps(lo)),
        Some(r) => Cell::noted(mpps_range(r), "the group's frames over each member's own trial length: the members' records differ"),
    }
}

fn step_name(v: &StepRecord) -> String {
    let step = v.step + 1;
    if v.run > 1 {
        format!("{step}.{}", v.run)
    } else {
        step.to_string()
    }
}

/// Each member's share per step: its own paced and sent rates (from its
/// record, where given), drop's count of its frames, its own sender verdict.
fn share_table(g: &GroupTrial) -> Table {
    let mut t = Table::new(
        format!("Group {}: each member's share, per step (offered and sent Mpps: the member's own, from its record; frames: drop's count of its streams)", g.name),
        &["step", "member", "offered Mpps (own)", "sent Mpps (own)", "sent frames", "received", "lost", "loss", "exact", "member's sender limit"],
    );
    let text = |v: Option<u64>| v.map_or_else(|| "unknown".to_string(), |v| v.to_string());
    for (i, v) in g.steps().iter().enumerate() {
        let Some(gs) = &v.group else { continue };
        for m in &gs.members {
            let own = g.members.iter().find(|x| x.member == m.member).and_then(|x| x.body.steps.get(i));
            let loss = m.lost.filter(|_| m.sent_packets > 0).map(|l| 100.0 * l as f64 / m.sent_packets as f64);
            t.row(vec![
                step_name(v).into(),
                m.member.to_string().into(),
                own.map_or_else(|| "no record".to_string(), |s| opt(s.offered_mpps, mpps)).into(),
                own.and_then(|s| s.group.as_ref()).map_or_else(|| "no record".to_string(), |o| mpps(o.own_sent.mpps)).into(),
                m.sent_packets.to_string().into(),
                text(m.received).into(),
                text(m.lost).into(),
                opt(loss, pct).into(),
                if m.exact { "exact" } else { "estimate" }.into(),
                Cell::new(m.sender_limit.clone().unwrap_or_else(|| "unknown".to_string())),
            ]);
        }
    }
    t
}

/// The group's sentences to paste: per step, what it sent and drop received, every qualifier included.
pub fn sentences(g: &GroupTrial) -> Vec<String> {
    g.steps()
        .iter()
        .enumerate()
        .filter(|(_, v)| v.error.is_none() && v.accounting_error.is_none())
        .map(|(i, v)| {
            let offered = match group_offered(g, i).as_str() {
                "-" | "unknown" => String::new(),
                o => format!(", paced at {o} Mpps together"),
            };
            let received = match (g.range(i, |s| s.received.map(|r| r.mpps)), v.loss_pct) {
                (Some(r), Some(l)) => format!(", drop received {} Mpps (receiver-side), loss {}", mpps_range(r), pct(l)),
                (Some(r), None) => format!(", drop received {} Mpps (receiver-side)", mpps_range(r)),
                _ => String::new(),
            };
            let sent = g.range(i, |s| Some(s.sent.mpps)).map_or_else(|| mpps(v.sent.mpps), mpps_range);
            format!(
                "Group {} of {} senders, step {}: {} queue(s) and {} flow(s) each, {} B frames, MTU {}, {} arrivals{offered}: the group sent {sent} Mpps{received}; limit: {}.",
                g.name,
                g.senders,
                step_name(v),
                v.queues,
                v.flows,
                v.size,
                v.mtu,
                v.shape,
                v.limit()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::{parts, tests as real, Part};

    fn trio(values: Vec<serde_json::Value>) -> (Vec<Record>, GroupTrial) {
        let records = real::records(values);
        let Some(Part::Group(g)) = parts(&records).into_iter().next() else { panic!("a group trial") };
        (records, g)
    }

    /// The group's table: offered and sent both the group's, each from the
    /// typed records; each member's share from drop's list and its own record.
    #[test]
    fn the_group_is_one_table_with_offered_and_sent_on_one_footing() {
        let (_, g) = trio(real::trio_json());
        let t = step_table(&g);
        assert_eq!(t.rows.len(), g.steps().len());
        let col = |row: &Vec<Cell>, name: &str| row[t.header.iter().position(|h| h == name).unwrap()].text.clone();
        for (i, (row, s)) in t.rows.iter().zip(g.steps()).enumerate() {
            let offered: f64 = g.members.iter().map(|m| m.body.steps[i].offered_mpps.unwrap()).sum();
            assert_eq!(col(row, "offered Mpps (group)"), mpps(offered));
            assert_eq!(col(row, "offered Mpps (group)"), "0.0600", "three members paced at 20k frames/s");
            assert_eq!(col(row, "sent frames (group)"), s.sent.packets.to_string());
            let members: u64 = s.group.as_ref().unwrap().members.iter().map(|m| m.sent_packets).sum();
            assert_eq!(s.sent.packets, members, "the group's sent is its members' sum");
            assert_eq!(col(row, "sent Mpps (group)"), mpps_range(g.range(i, |s| Some(s.sent.mpps)).unwrap()));
            assert_eq!(col(row, "loss"), pct(s.loss_pct.unwrap()));
            assert_eq!(col(row, "lost"), s.lost.unwrap().to_string());
            assert_eq!(col(row, "limit (group, receiver-side)"), s.limit());
        }
        let shares = share_table(&g);
        assert_eq!(shares.rows.len(), 2 * 3);
        for (k, row) in shares.rows.iter().enumerate() {
            let (i, m) = (k / 3, &g.steps()[k / 3].group.as_ref().unwrap().members[k % 3]);
            let own = g.members.iter().find(|x| x.member == m.member).unwrap();
            assert_eq!(row[1].text, m.member.to_string());
            assert_eq!(row[3].text, mpps(own.body.steps[i].group.as_ref().unwrap().own_sent.mpps), "its own sent, from its own record");
            assert_eq!(row[4].text, m.sent_packets.to_string());
            assert_eq!((row[5].text.clone(), row[6].text.clone()), (m.received.unwrap().to_string(), m.lost.unwrap().to_string()));
            assert_eq!(row[9].text, m.sender_limit.clone().unwrap());
        }
    }

    /// With a member's record missing, the group's offered rate is unknown, and the section says so.
    #[test]
    fn a_group_with_a_members_record_missing_says_what_is_unknown() {
        let mut v = real::trio_json();
        v.remove(1);
        let (records, g) = trio(v);
        assert_eq!(g.members.len(), 2);
        assert!(step_table(&g).rows.iter().all(|row| row[6].text == "unknown"));
        assert!(rule(&records, &g).contains("Only 2 of the 3 members' records were given"), "{}", rule(&records, &g));
        let shares = share_table(&g);
        assert_eq!(shares.rows.len(), 6, "drop's count of every member stands");
        assert_eq!(shares.rows.iter().filter(|row| row[2].text == "no record").count(), 2);
    }
}
