//! Which ladder records are members of one group trial (`blast --group`:
//! one record per member, each carrying the whole group's figures), so the
//! report shows the trial once.
//!
//! The rule: two ladder records whose every step is a group step are of
//! the same trial when they name the same group and number of senders,
//! have as many steps, each step was counted in the same drop window (the
//! window's number: drop serves a group one window per step), by the same
//! receiver (host and port); and they are different members. They are
//! then merged only when every step's group figures agree: what the group
//! sent, what drop received and counted lost, the loss, the verdict and
//! drop's list of members. Records that are of the same trial but disagree
//! are shown apart, with the field that differs; a record of a trial whose
//! windows were not recorded stands alone.

use records::ladder::LadderBody;
use records::step::StepRecord;

use crate::record::{Body, Record};

/// One group trial: the members whose records were given, in member order.
pub struct GroupTrial {
    pub name: String,
    pub senders: u16,
    pub members: Vec<Member>,
    /// Why a record that seemed to be of this trial was not merged into it.
    pub notes: Vec<String>,
}

/// A member's record: its index among the records given, and its body.
pub struct Member {
    pub index: usize,
    pub member: u16,
    pub body: LadderBody,
}

impl GroupTrial {
    /// The first member's steps: the group's figures (every member's agree
    /// on its counts; its rates, see `range`).
    pub fn steps(&self) -> &[StepRecord] {
        &self.members[0].body.steps
    }

    /// "runs 1, 2, 3 a.json, b.json, c.json": its members' records in the report's order.
    pub fn runs_named(&self, records: &[Record]) -> String {
        let mut given: Vec<usize> = self.members.iter().map(|m| m.index).collect();
        given.sort();
        let numbers: Vec<String> = given.iter().map(|i| (i + 1).to_string()).collect();
        let names: Vec<String> = given.iter().map(|&i| records[i].file_name()).collect();
        let runs = if given.len() > 1 { "runs" } else { "run" };
        format!("{runs} {} {}", numbers.join(", "), names.join(", "))
    }

    /// The lowest and highest of a figure over the members' records at step
    /// `i`. A group step's rates are the group's frames over each member's
    /// own trial length, so the records agree on the frames but their Mpps
    /// differ a little (a real trio: 0.0592, 0.0594 and 0.0596 Mpps sent).
    pub fn range(&self, i: usize, f: impl Fn(&StepRecord) -> Option<f64>) -> Option<(f64, f64)> {
        let all: Vec<f64> = self.members.iter().filter_map(|m| m.body.steps.get(i).and_then(&f)).collect();
        Some((all.iter().copied().reduce(f64::min)?, all.iter().copied().reduce(f64::max)?))
    }
}

/// What the report shows, in the records' order: a run, or a group trial at its first member.
pub enum Part {
    Run(usize),
    Group(GroupTrial),
}

/// The records as runs and group trials.
pub fn parts(records: &[Record]) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let Some(body) = group_body(r) else {
            out.push(Part::Run(i));
            continue;
        };
        let member = Member { index: i, member: body.steps[0].group.as_ref().map_or(0, |g| g.member), body };
        let mut notes = Vec::new();
        let mut home = None;
        for (k, part) in out.iter().enumerate() {
            let Part::Group(g) = part else { continue };
            match joins(records, g, &member) {
                Ok(()) => {
                    home = Some(k);
                    break;
                }
                Err(Some(why)) => notes.push(why),
                Err(None) => {}
            }
        }
        match home.map(|k| &mut out[k]) {
            Some(Part::Group(g)) => g.members.push(member),
            _ => {
                let g0 = member.body.steps[0].group.clone().unwrap_or_default();
                out.push(Part::Group(GroupTrial { name: g0.name, senders: g0.senders, members: vec![member], notes }));
            }
        }
    }
    for p in &mut out {
        if let Part::Group(g) = p {
            g.members.sort_by_key(|m| m.member);
        }
    }
    out
}

/// The record's body when it is a ladder of group steps only.
fn group_body(r: &Record) -> Option<LadderBody> {
    let Ok(Body::Ladder(l)) = r.body() else { return None };
    (!l.steps.is_empty() && l.steps.iter().all(|s| s.group.is_some())).then_some(*l)
}

/// Whether `m` joins trial `g`: Ok, not of it (None), or of it but not
/// mergeable (why, in words).
fn joins(records: &[Record], g: &GroupTrial, m: &Member) -> Result<(), Option<String>> {
    let first = &g.members[0];
    if identity(&first.body) != identity(&m.body) || identity(&m.body).is_none() {
        return Err(None);
    }
    let name = |x: &Member| format!("run {} {}", x.index + 1, records[x.index].file_name());
    if let Some(same) = g.members.iter().find(|x| x.member == m.member) {
        return Err(Some(format!(
            "{} and {} are both member {} of group {}: shown apart (the same record given twice, or two trials that share drop's windows)",
            name(same),
            name(m),
            m.member,
            g.name
        )));
    }
    for (a, b) in first.body.steps.iter().zip(&m.body.steps) {
        if let Some(field) = disagreement(a, b) {
            return Err(Some(format!(
                "{} and {} are of group {}'s trial but disagree on step {}'s {field}: shown apart",
                name(first),
                name(m),
                g.name,
                a.step + 1
            )));
        }
    }
    Ok(())
}

/// What makes records one trial's: the group, its senders, drop's window
/// per step and the receiver; None where a step's window is not recorded.
fn identity(l: &LadderBody) -> Option<(String, u16, Vec<u64>, String, String)> {
    let g = l.steps.first()?.group.as_ref()?;
    let windows: Option<Vec<u64>> = l.steps.iter().map(|s| s.receiver.as_ref().map(|w| w.window)).collect();
    let receiver = l.environment.receiver.as_ref().map_or((String::new(), String::new()), |p| (p.hostname.clone(), p.port_name.clone()));
    Some((g.name.clone(), g.senders, windows?, receiver.0, receiver.1))
}

/// The first of a step's group figures two members' records disagree on, with both values.
fn disagreement(a: &StepRecord, b: &StepRecord) -> Option<String> {
    let differ = |what: &str, x: String, y: String| (x != y).then(|| format!("{what} ({x} against {y})"));
    let text = |v: Option<String>| v.unwrap_or_else(|| "none".to_string());
    let count = |v: Option<u64>| text(v.map(|v| v.to_string()));
    let (ga, gb) = (a.group.as_ref()?, b.group.as_ref()?);
    differ("frames sent by the group", a.sent.packets.to_string(), b.sent.packets.to_string())
        .or_else(|| differ("frames received", count(a.received.map(|r| r.packets)), count(b.received.map(|r| r.packets))))
        .or_else(|| differ("frames lost", count(a.lost), count(b.lost)))
        // The loss as the record writes it: the same frames give the same share.
        .or_else(|| differ("loss", text(a.loss_pct.map(|l| l.to_string())), text(b.loss_pct.map(|l| l.to_string()))))
        .or_else(|| differ("limit", a.limit(), b.limit()))
        .or_else(|| differ("accounting error", text(a.accounting_error.clone()), text(b.accounting_error.clone())))
        .or_else(|| (ga.members != gb.members).then(|| "members' figures (drop's list of what each sent and lost)".to_string()))
        .or_else(|| differ("frame size", a.size.to_string(), b.size.to_string()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::Path;

    /// The real records of a group trial. tests/group.rs (three blasts in
    /// group "trio" of 3 senders, 1 queue, 64 and 128 B paced at 20k
    /// frames/s each, 2 flows, against one drop --listen on af_packet
    /// through a kernel bridge in a network namespace) was run once and its
    /// scratch folder kept (/tmp/blastdrop-PID-group): blast0.json,
    /// blast1.json, blast2.json and drop.json, copied whole (29 KB each,
    /// nothing worth trimming) as testdata/group-blast{0,1,2}.json and
    /// group-drop.json. blast0.json is member 1: members are numbered in the
    /// order drop took them.
    pub(crate) fn trio_json() -> Vec<Value> {
        [
            include_str!("../testdata/group-blast0.json"),
            include_str!("../testdata/group-blast1.json"),
            include_str!("../testdata/group-blast2.json"),
            include_str!("../testdata/group-drop.json"),
        ]
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect()
    }

    pub(crate) fn records(values: Vec<Value>) -> Vec<Record> {
        let names = ["trio/blast0.json", "trio/blast1.json", "trio/blast2.json", "trio/drop.json", "x/blast.json"];
        values.into_iter().zip(names).map(|(v, n)| Record::from_json(Path::new(n), v, None).unwrap()).collect()
    }

    fn groups(parts: &[Part]) -> Vec<&GroupTrial> {
        parts.iter().filter_map(|p| if let Part::Group(g) = p { Some(g) } else { None }).collect()
    }

    #[test]
    fn three_members_records_are_one_trial_in_member_order() {
        let parts = parts(&records(trio_json()));
        assert_eq!(parts.len(), 2, "the trial and drop");
        let Part::Group(g) = &parts[0] else { panic!("the trial first, where its first record stands") };
        assert!(matches!(parts[1], Part::Run(3)));
        assert_eq!((g.name.as_str(), g.senders), ("trio", 3));
        assert_eq!(g.members.iter().map(|m| m.member).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(g.members.iter().map(|m| m.index).collect::<Vec<_>>(), [2, 0, 1], "blast2.json is member 0, blast0.json member 1");
        assert!(g.notes.is_empty(), "{:?}", g.notes);
        // The counts agree across the records; their rates are over each member's own trial length.
        let sent: Vec<f64> = g.members.iter().map(|m| m.body.steps[0].sent.mpps).collect();
        let (lo, hi) = g.range(0, |s| Some(s.sent.mpps)).unwrap();
        assert_eq!((lo, hi), (sent.iter().copied().fold(f64::MAX, f64::min), sent.iter().copied().fold(f64::MIN, f64::max)));
        assert!(lo < hi, "the real records' rates differ: {sent:?}");
    }

    #[test]
    fn records_that_disagree_or_repeat_a_member_are_shown_apart_with_why() {
        let mut v = trio_json();
        let rx = v[1]["steps"][1]["received"]["packets"].as_u64().unwrap();
        v[1]["steps"][1]["received"]["packets"] = (rx + 1).into();
        let p = parts(&records(v));
        let g = groups(&p);
        assert_eq!(g.iter().map(|g| g.members.len()).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(
            g[1].notes,
            [format!("run 1 blast0.json and run 2 blast1.json are of group trio's trial but disagree on step 2's frames received ({rx} against {}): shown apart", rx + 1)]
        );
        // The same member's record twice.
        let mut v = trio_json();
        v.push(v[0].clone());
        let p = parts(&records(v));
        let g = groups(&p);
        assert_eq!(g.iter().map(|g| g.members.len()).collect::<Vec<_>>(), [3, 1]);
        assert!(g[1].notes[0].starts_with("run 1 blast0.json and run 5 blast.json are both member 1 of group trio"), "{:?}", g[1].notes);
        // Another trial (drop's windows differ): its own group, and nothing to explain.
        let mut v = trio_json();
        v[2]["steps"][0]["receiver"]["window"] = 7.into();
        let p = parts(&records(v));
        let g = groups(&p);
        assert_eq!(g.iter().map(|g| (g.members.len(), g.notes.len())).collect::<Vec<_>>(), [(2, 0), (1, 0)]);
    }
}
