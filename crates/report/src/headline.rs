//! The answer first: one line per run (or group trial) with its headline
//! figure, the conditions it holds for and the limit that held it. Every
//! figure is the typed record's own field, written by the same helpers as
//! the tables (`fmt`); a run whose figure cannot be stated honestly (no
//! step measured, counts that do not add up) says "no figure" and why.

use ladder::StepRecord;
use records::drop::DropBody;
use records::knee::KneeBody;
use records::ladder::{LadderBody, SizeCeiling};
use records::replay::ReplayBody;
use records::single::SingleBody;

use crate::doc::Headline;
use crate::fmt::{capacity, mpps, mpps_range, opt, pct};
use crate::group::GroupTrial;
use crate::record::{Body, Record};

/// A run's headline (a group member's is its trial's: see `of_group`).
pub fn of_run(number: usize, r: &Record) -> Headline {
    let text = match r.body() {
        Err(e) => format!("no figure: {e}"),
        Ok(Body::Ladder(l)) => ladder(&l),
        Ok(Body::Knee(k)) => knee(&k),
        Ok(Body::Mlr(k)) => crate::mlr_part::headline(&k),
        Ok(Body::Single(b)) => single(r, &b),
        Ok(Body::Replay(b)) => replay(&b),
        Ok(Body::Drop(d)) => drop(r, &d),
    };
    Headline { runs: format!("run {number} {}{}", r.file_name(), label(r)), text }
}

fn label(r: &Record) -> String {
    r.label.as_deref().map_or(String::new(), |l| format!(" [{l}]"))
}

/// What a figure is: the receiver's, or the sender's only.
fn side(receiver: bool) -> &'static str {
    if receiver {
        "receiver-side"
    } else {
        "sender-side only (what tx_burst accepted, not what arrived)"
    }
}

/// Why a step's figure cannot stand, if it cannot.
fn unusable(s: &StepRecord) -> Option<String> {
    let n = s.step + 1;
    if let Some(e) = &s.error {
        return Some(format!("step {n} was not measured ({e})"));
    }
    if let Some(e) = &s.accounting_error {
        return Some(format!("the counts of step {n} do not add up ({e})"));
    }
    s.verdict.as_ref().and_then(|v| v.invalid.as_ref()).map(|e| format!("the verdict of step {n} is unknown ({e})"))
}

/// "1 queue, 64 B, 2 flows, MTU 1500, even" of a step, paced or not.
fn conditions(s: &StepRecord) -> String {
    let paced = s.offered_mpps.map_or(String::new(), |o| format!(", paced at {} Mpps", mpps(o)));
    let size = match &s.size_mix {
        Some(mix) => format!("{} B (mix {mix}: mean)", s.size),
        None => format!("{} B", s.size),
    };
    format!("{} queue(s), {size}, {} flow(s), MTU {}, {}{paced}", s.queues, s.flows, s.mtu, s.shape)
}

/// The ceiling the headline states: at the smallest frame size, unpaced where there is one.
fn headline_ceiling(l: &LadderBody) -> Option<&SizeCeiling> {
    let open = l.analysis.ceilings.iter().filter(|c| c.offered_mpps.is_none()).min_by_key(|c| c.size);
    open.or_else(|| l.analysis.ceilings.iter().min_by_key(|c| c.size))
}

fn ladder(l: &LadderBody) -> String {
    let Some(c) = headline_ceiling(l) else { return best_step(l) };
    let at: Vec<&StepRecord> = l
        .steps
        .iter()
        .filter(|s| s.size == c.size && s.shape == c.shape && s.offered_mpps == c.offered_mpps && s.queues == c.ceiling.queues)
        .collect();
    if let Some(why) = at.iter().find_map(|s| unusable(s)) {
        return format!("no figure: {why}");
    }
    let Some(step) = at.first() else { return "no figure: the ceiling's step is not in the record".to_string() };
    let counts: std::collections::BTreeSet<u16> =
        l.steps.iter().filter(|s| s.size == c.size && s.shape == c.shape && s.offered_mpps == c.offered_mpps).map(|s| s.queues).collect();
    let wall = match (c.ceiling.reached, counts.len()) {
        (true, _) => " (the wall: more queues did not add more)",
        (false, n) if n > 1 => " (still rising at the most queues run)",
        _ => "",
    };
    let more = match l.analysis.ceilings.len() {
        1 => String::new(),
        n => format!("; {} more size(s) or rate(s) in the ceilings table", n - 1),
    };
    format!(
        "{}: {} Mpps at {}{wall}, {}; limit: {}{more}",
        path_of(&l.environment),
        mpps(c.ceiling.mpps),
        conditions(step),
        side(l.analysis.receiver_side),
        c.limit
    )
}

/// A ladder without a ceiling (no analysis of it): its best step at the
/// smallest frame size, where any step can be read.
fn best_step(l: &LadderBody) -> String {
    let usable: Vec<&StepRecord> = l.steps.iter().filter(|s| unusable(s).is_none()).collect();
    let Some(smallest) = usable.iter().map(|s| s.size).min() else { return no_figure_of_steps(&l.steps) };
    let Some(best) = usable.iter().filter(|s| s.size == smallest).max_by(|a, b| a.headline_mpps().total_cmp(&b.headline_mpps())) else {
        return no_figure_of_steps(&l.steps);
    };
    let sizes: std::collections::BTreeSet<u32> = usable.iter().map(|s| s.size).collect();
    let more = match sizes.len() {
        1 => String::new(),
        n => format!("; {} more size(s) in the steps table", n - 1),
    };
    format!(
        "{}: {} Mpps at {} (its best step at the smallest size), {}; limit: {}{more}",
        path_of(&l.environment),
        mpps(best.headline_mpps()),
        conditions(best),
        side(best.received.is_some()),
        best.limit()
    )
}

/// The path a ladder measured, as its headline names it: the sending port
/// ("0000:00:06.0 (net_ena)"), and the receiving end too where either end
/// is the kernel's UDP sockets, whose figures are the kernel's, not a port's
/// ("udp:10.0.0.1 (udp-socket) to udp:10.0.0.2:9 (udp-socket)").
fn path_of(e: &records::environment::Environments) -> String {
    let port = &e.sender.port;
    let sender = format!("{} ({})", port.name, port.driver);
    match &e.receiver {
        Some(r) if r.driver == SOCKET_DRIVER || port.driver == SOCKET_DRIVER => format!("{sender} to {} ({})", r.port_name, r.driver),
        _ => sender,
    }
}

/// The driver name both tools give the kernel's UDP sockets.
const SOCKET_DRIVER: &str = "udp-socket";

/// "no figure: no step was measured (step 1: ...)".
fn no_figure_of_steps(steps: &[StepRecord]) -> String {
    match steps.iter().find_map(unusable) {
        Some(first) => format!("no figure: no step can be read ({first})"),
        None => "no figure: no step was run".to_string(),
    }
}

fn knee(k: &KneeBody) -> String {
    let (res, q) = (&k.result, &k.qualifiers);
    let cond = format!("{} queue(s), {} B, {} flow(s), MTU {}, {}", q.queues, q.size, q.flows, q.mtu, q.shape);
    let Some(x) = res.knee_mpps else { return format!("no figure: no knee found ({cond}; PDR: {})", res.pdr) };
    let (least, held) = match (&res.limit_above, res.sender_limited) {
        (_, true) => ("at least ", "sender (the knee is a lower bound)".to_string()),
        (Some(l), false) => ("", format!("{l} (the first failing trial above it)")),
        (None, false) => ("", "unknown".to_string()),
    };
    format!("knee {least}{} Mpps (NDR {} Mpps), {cond}, receiver-side; limit: {held}", capacity(x), opt(res.ndr_mpps, capacity))
}

fn single(r: &Record, b: &SingleBody) -> String {
    let (m, port) = (&b.summary, &b.environment.port);
    if m.sent.packets == 0 {
        return "no figure: nothing was sent".to_string();
    }
    // The flags are read by path: the record keeps them as given (docs/json.md).
    let size = r.j().text("config/size");
    let size = if size.is_empty() { String::new() } else { format!("{size} B, ") };
    let paced = m.offered_mpps.map_or(String::new(), |o| format!(", paced at {} Mpps", mpps(o)));
    format!(
        "{} ({}): {} Mpps at {} queue(s), {size}{} flow(s), {}{paced}, {}; limit: {}",
        port.name,
        port.driver,
        mpps(m.sent.mpps),
        m.queues.len(),
        b.flows,
        m.shape,
        side(false),
        m.limit
    )
}

fn replay(b: &ReplayBody) -> String {
    let (c, m, port) = (&b.capture, &b.summary, &b.environment.port);
    if m.sent.packets == 0 {
        return "no figure: nothing was sent".to_string();
    }
    let received = match (m.received, m.loss_pct) {
        (Some(rx), Some(loss)) => format!(", {} Mpps received, loss {} (receiver-side)", mpps(rx.mpps), pct(loss)),
        (Some(rx), None) => format!(", {} Mpps received (receiver-side)", mpps(rx.mpps)),
        _ => String::new(),
    };
    format!(
        "{} ({}): replay of {} ({} frames, {} flows), {} queue(s): {} Mpps sent (sender-side){received}; timing {} held: {}; limit: {}",
        port.name,
        port.driver,
        c.file,
        c.frames,
        c.flows,
        m.queues.len(),
        mpps(m.sent.mpps),
        m.timing.timing,
        m.timing.held,
        m.limit
    )
}

fn drop(r: &Record, d: &DropBody) -> String {
    let (m, port) = (&d.summary, &d.environment.port);
    if m.received.packets == 0 {
        return "no figure: drop received nothing".to_string();
    }
    let rate = format!("{} Mpps received on {} queue(s) (receiver-side, first to last arrival)", mpps(m.received.mpps), m.queues.len());
    // The flags are read by path: the record keeps them as given (docs/json.md).
    if !r.j().at("config/listen").is_null() {
        return format!(
            "{} ({}): served {} measured window(s) to blast (their figures are in the senders' runs); over the whole run {rate}; limit: {}",
            port.name, port.driver, d.history.windows_served, m.limit
        );
    }
    format!("{} ({}): {rate}, lost: an estimate of {} (gaps in sequence numbers); limit: {}", port.name, port.driver, m.probe.lost, m.limit)
}

/// A group trial's one line: the group's loss over its steps, and what
/// it sent and drop received at the step that received most.
pub fn of_group(records: &[Record], g: &GroupTrial) -> Headline {
    Headline { runs: g.runs_named(records), text: group_text(g) }
}

fn group_text(g: &GroupTrial) -> String {
    let steps = g.steps();
    let given = if g.members.len() == usize::from(g.senders) {
        String::new()
    } else {
        format!(", {} of its {} members' records given", g.members.len(), g.senders)
    };
    let who = format!("group {} of {} senders{given}", g.name, g.senders);
    let usable: Vec<&StepRecord> = steps.iter().filter(|s| unusable(s).is_none()).collect();
    let left_out: Vec<String> = steps.iter().filter_map(unusable).collect();
    let Some(best) = usable.iter().copied().max_by(|a, b| a.headline_mpps().total_cmp(&b.headline_mpps())) else {
        return format!("{who}: {}", no_figure_of_steps(steps));
    };
    let losses: Vec<f64> = usable.iter().filter_map(|s| s.loss_pct).collect();
    let loss = match (losses.iter().copied().reduce(f64::min), losses.iter().copied().reduce(f64::max)) {
        (Some(lo), Some(hi)) if pct(lo) == pct(hi) => format!("loss {} over {} step(s)", pct(lo), usable.len()),
        (Some(lo), Some(hi)) => format!("loss {}-{} over {} steps", pct(lo), pct(hi), usable.len()),
        _ => "loss unknown (no receiver count)".to_string(),
    };
    // Each member's record has its own pace: "each" holds when they agree.
    let i = steps.iter().position(|s| std::ptr::eq(s, best)).unwrap_or(0);
    let paces_agree = g.members.iter().all(|m| m.body.steps.get(i).map(|s| s.offered_mpps) == Some(best.offered_mpps));
    let each = if paces_agree { "each" } else { "each; member paces differ: this is the first member's" };
    let mut limits: Vec<String> = usable.iter().map(|s| s.limit()).collect();
    limits.sort();
    limits.dedup();
    let skipped = if left_out.is_empty() { String::new() } else { format!(" (left out: {})", left_out.join("; ")) };
    format!(
        "{who}: {loss}{skipped}; at best {} Mpps received of {} Mpps the group sent (step {}: {} {each}), receiver-side; limit: {}",
        g.range(i, |s| s.received.map(|r| r.mpps)).map_or_else(|| "-".to_string(), mpps_range),
        g.range(i, |s| Some(s.sent.mpps)).map_or_else(|| mpps(best.sent.mpps), mpps_range),
        best.step + 1,
        conditions(best),
        limits.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::path::Path;

    fn real(name: &str, v: Value) -> Record {
        Record::from_json(Path::new(name), v, None).unwrap()
    }

    fn testdata(file: &str) -> Value {
        let text = match file {
            "ladder" => include_str!("../testdata/ladder.json"),
            "knee" => include_str!("../testdata/knee.json"),
            "single" => include_str!("../testdata/single.json"),
            "replay" => include_str!("../testdata/replay.json"),
            _ => include_str!("../testdata/drop.json"),
        };
        serde_json::from_str(text).unwrap()
    }

    /// Each kind's headline states its record's own figure, written as the tables write it.
    #[test]
    fn a_socket_at_either_end_names_both_ends() {
        let r = real("ladder.json", testdata("ladder"));
        let mut e = r.ladder().unwrap().environment.clone();
        assert!(!path_of(&e).contains(" to "), "two ports: the sender's alone");
        let mut rx = records::window::PeerInfo { port_name: "udp:198.18.0.2:9".into(), driver: "udp-socket".into(), ..Default::default() };
        e.receiver = Some(rx.clone());
        assert_eq!(path_of(&e), format!("{} ({}) to udp:198.18.0.2:9 (udp-socket)", e.sender.port.name, e.sender.port.driver));
        (e.sender.port.name, e.sender.port.driver) = ("udp:198.18.0.1".into(), "udp-socket".into());
        (rx.port_name, rx.driver) = ("net_af_packet0".into(), "net_af_packet".into());
        e.receiver = Some(rx);
        assert_eq!(path_of(&e), "udp:198.18.0.1 (udp-socket) to net_af_packet0 (net_af_packet)");
    }

    #[test]
    fn each_headline_is_its_records_own_figure() {
        let r = real("ladder.json", testdata("ladder"));
        let l = r.ladder().unwrap();
        // No ceiling in this sender-side ladder: its best step at the smallest size.
        assert!(l.analysis.ceilings.is_empty());
        let best = l.steps.iter().filter(|s| s.size == 64).max_by(|a, b| a.sent.mpps.total_cmp(&b.sent.mpps)).unwrap();
        let h = of_run(1, &r);
        assert_eq!(h.runs, "run 1 ladder.json");
        assert!(
            h.text.starts_with(&format!(
                "{} ({}): {} Mpps at 1 queue(s), 64 B, 1 flow(s), MTU {}, open",
                l.environment.sender.port.name,
                l.environment.sender.port.driver,
                mpps(best.sent.mpps),
                best.mtu
            )),
            "{}",
            h.text
        );
        assert!(h.text.contains("sender-side only") && h.text.contains(&format!("limit: {}", best.limit())), "{}", h.text);

        let r = real("knee.json", testdata("knee"));
        let k = r.knee().unwrap();
        let h = of_run(2, &r).text;
        assert!(k.result.sender_limited);
        assert!(
            h.starts_with(&format!(
                "knee at least {} Mpps (NDR {} Mpps)",
                capacity(k.result.knee_mpps.unwrap()),
                capacity(k.result.ndr_mpps.unwrap())
            )),
            "{h}"
        );
        assert!(
            h.contains(&format!(
                "{} queue(s), {} B, {} flow(s), MTU {}, {}",
                k.qualifiers.queues, k.qualifiers.size, k.qualifiers.flows, k.qualifiers.mtu, k.qualifiers.shape
            )),
            "{h}"
        );
        assert!(h.ends_with("limit: sender (the knee is a lower bound)"), "{h}");

        let r = real("single.json", testdata("single"));
        let b = r.single().unwrap();
        let h = of_run(3, &r).text;
        assert!(
            h.contains(&format!(
                ": {} Mpps at {} queue(s), 64 B, {} flow(s), {}, paced at {} Mpps",
                mpps(b.summary.sent.mpps),
                b.summary.queues.len(),
                b.flows,
                b.summary.shape,
                mpps(b.summary.offered_mpps.unwrap())
            )),
            "{h}"
        );
        assert!(h.contains("sender-side only") && h.ends_with(&format!("limit: {}", b.summary.limit)), "{h}");

        let r = real("replay.json", testdata("replay"));
        let b = r.replay().unwrap();
        let h = of_run(4, &r).text;
        assert!(
            h.contains(&format!(
                "{} Mpps sent (sender-side); timing {} held: {}",
                mpps(b.summary.sent.mpps),
                b.summary.timing.timing,
                b.summary.timing.held
            )),
            "{h}"
        );
        assert!(b.summary.received.is_none() && !h.contains("received"), "no receiver, no receiver's clause: {h}");

        let r = real("drop.json", testdata("drop"));
        let d = r.drop().unwrap();
        let h = of_run(5, &r).text;
        assert!(h.contains(&format!("served {} measured window(s)", d.history.windows_served)), "{h}");
        assert!(h.contains(&format!("{} Mpps received on {} queue(s)", mpps(d.summary.received.mpps), d.summary.queues.len())), "{h}");
    }

    /// A ladder's ceiling is its headline: the wall's figure at the smallest
    /// unpaced size, with the step's conditions and the ceiling's limit.
    #[test]
    fn a_ladders_headline_is_its_ceiling_or_no_figure() {
        let mut v = testdata("ladder");
        let mpps0 = v["steps"][0]["sent"]["mpps"].as_f64().unwrap();
        v["analysis"]["ceilings"] = json!([{"size": 64, "offered_mpps": null, "shape": "open", "limit": "sender",
            "ceiling": {"reached": false, "mpps": mpps0, "mpps_per_queue_first": mpps0, "queues": 1, "linear_before": true}}]);
        let r = real("l.json", v.clone());
        let c = &r.ladder().unwrap().analysis.ceilings[0];
        let h = of_run(1, &r).text;
        assert!(h.contains(&format!(": {} Mpps at 1 queue(s), 64 B,", mpps(c.ceiling.mpps))) && h.contains("limit: sender"), "{h}");
        assert!(!h.contains("wall") && !h.contains("rising"), "one queue count: no wall to speak of: {h}");
        // The ceiling's step whose counts do not add up: no figure, and why.
        v["steps"][0]["accounting_error"] = json!("received 5 + lost 1 != sent 7");
        let h = of_run(1, &real("l.json", v.clone())).text;
        assert_eq!(h, "no figure: the counts of step 1 do not add up (received 5 + lost 1 != sent 7)");
        // No step measured at all.
        for s in v["steps"].as_array_mut().unwrap() {
            s["error"] = json!("drop did not answer");
        }
        v["analysis"]["ceilings"] = json!([]);
        let h = of_run(1, &real("l.json", v)).text;
        assert_eq!(h, "no figure: no step can be read (step 1 was not measured (drop did not answer))");
    }

    #[test]
    fn a_knee_search_that_found_no_knee_says_so() {
        let mut v = testdata("knee");
        v["result"]["knee_mpps"] = json!(null);
        let r = real("k.json", v);
        let h = of_run(1, &r).text;
        assert!(
            h.starts_with("no figure: no knee found (1 queue(s), 64 B") && h.contains(&format!("PDR: {}", r.knee().unwrap().result.pdr)),
            "{h}"
        );
    }

    /// A group trial's headline: the loss over its steps, lowest to highest,
    /// from the typed steps, and the group's rates as its records give them.
    #[test]
    fn a_group_trials_headline_is_its_loss_over_its_steps() {
        let records = crate::group::tests::records(crate::group::tests::trio_json());
        let Some(crate::group::Part::Group(g)) = crate::group::parts(&records).into_iter().next() else { panic!("a group trial") };
        let h = of_group(&records, &g);
        assert_eq!(h.runs, "runs 1, 2, 3 blast0.json, blast1.json, blast2.json");
        let losses: Vec<f64> = g.steps().iter().map(|s| s.loss_pct.unwrap()).collect();
        let (lo, hi) = (losses.iter().copied().fold(f64::MAX, f64::min), losses.iter().copied().fold(f64::MIN, f64::max));
        assert!(h.text.starts_with(&format!("group trio of 3 senders: loss {}-{} over 2 steps; at best ", pct(lo), pct(hi))), "{}", h.text);
        let best = g.steps().iter().position(|s| s.received.is_some()).unwrap();
        let rx = mpps_range(g.range(best, |s| s.received.map(|r| r.mpps)).unwrap());
        assert!(h.text.contains(&format!("at best {rx} Mpps received of ")), "{}", h.text);
        assert!(h.text.ends_with(&format!("receiver-side; limit: {}", g.steps()[0].limit())), "{}", h.text);
        // Two of the three: said.
        let mut v = crate::group::tests::trio_json();
        v.remove(0);
        let records = crate::group::tests::records(v);
        let Some(crate::group::Part::Group(g)) = crate::group::parts(&records).into_iter().next() else { panic!("a group trial") };
        assert!(of_group(&records, &g).text.starts_with("group trio of 3 senders, 2 of its 3 members' records given: "));
    }
}
