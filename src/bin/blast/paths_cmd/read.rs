//! Each path's figures, read back from the records of its runs (the same
//! typed records `blast report` reads): the table's points and the knees.

use std::path::Path;

use paths::{CpuCost, Knee, Latency, PathFigures, Point, SideCpu};
use records::knee::KneeRecord;
use records::ladder::LadderRecord;
use records::paths::PathRun;
use records::step::StepRecord;
use records::window::KernelCpu;

/// Path `name`'s figures from its runs in `runs` (records under `dir`).
pub fn figures(name: &str, runs: &[PathRun], dir: &Path) -> PathFigures {
    let mine = runs.iter().filter(|r| r.path == name);
    let mut f = PathFigures { name: name.to_string(), ..Default::default() };
    for r in mine {
        match r.what.as_str() {
            "table" => f.points.push(point(r, dir)),
            _ => f.knees.push(knee(r, dir)),
        }
    }
    f
}

fn read<T: serde::de::DeserializeOwned>(r: &PathRun, dir: &Path) -> Result<T, String> {
    let path = dir.join(&r.record);
    let text = std::fs::read_to_string(&path).map_err(|e| match &r.error {
        Some(err) => err.clone(),
        None => format!("no record at {} ({e})", path.display()),
    })?;
    serde_json::from_str(&text).map_err(|e| format!("its record {} does not read as one: {e}", path.display()))
}

fn point(r: &PathRun, dir: &Path) -> Point {
    let mut p = Point {
        rate_mpps: r.rate_mpps.unwrap_or_default(),
        shape: r.shape.clone(),
        round: r.round,
        record: r.record.clone(),
        ..Default::default()
    };
    let step =
        read::<LadderRecord>(r, dir).and_then(|rec| rec.body.steps.into_iter().next().ok_or_else(|| "its record has no step".to_string()));
    let step = match (step, &r.error) {
        (Ok(s), None) if s.error.is_none() => s,
        (Ok(s), err) => {
            p.error = Some(s.error.as_ref().map(|e| e.to_string()).or_else(|| err.clone()).unwrap_or_else(|| "the run failed".into()));
            return p;
        }
        (Err(e), err) => {
            p.error = Some(err.clone().unwrap_or(e));
            return p;
        }
    };
    // Counts that do not add up give no figure here, as in the report's headline.
    if let Some(e) = &step.accounting_error {
        p.error = Some(format!("its counts do not add up: {e}"));
        return p;
    }
    p.sent_mpps = step.sent.mpps;
    p.delivered_mpps = step.received.as_ref().map(|r| r.mpps);
    p.loss_pct = step.loss_pct;
    p.lost = step.lost;
    p.limit = step.verdict.as_ref().map(|v| v.label());
    p.latency = step.latency.as_ref().filter(|l| l.count > 0).map(|l| Latency {
        samples: l.count,
        p50_us: l.p50_us,
        p99_us: l.p99_us,
        p99_9_us: l.p99_9_us,
        max_us: l.max_us,
        clock: step.latency_clock.map_or("unknown clock".into(), |c| c.describe().to_string()),
    });
    p.cpu = Some(cpu(&step));
    p
}

/// One end's time from the kernel's counters (a socket path).
fn kernel(c: &KernelCpu) -> SideCpu {
    SideCpu {
        user_seconds: c.user_seconds,
        system_seconds: c.system_seconds,
        softirq_seconds: c.softirq_seconds,
        counted: format!("user, system and softirq time of the lanes' CPUs {:?} (/proc/stat, the kernel's included)", c.cpus),
        known: c.user_seconds + c.system_seconds + c.softirq_seconds > 0.0,
    }
}

/// One end's busy-polling lcores, counted whole over its window.
fn whole(lcores: usize, seconds: f64) -> SideCpu {
    SideCpu {
        user_seconds: lcores as f64 * seconds,
        counted: format!("{lcores} busy-polling lcore(s) counted whole over {seconds:.3} s (kernel time on other CPUs not counted)"),
        known: lcores > 0 && seconds > 0.0,
        ..Default::default()
    }
}

fn cpu(step: &StepRecord) -> CpuCost {
    let sender = match step.sender_udp.as_ref().and_then(|u| u.cpu.as_ref()) {
        Some(c) => kernel(c),
        None if step.sender_udp.is_some() => SideCpu { counted: "the sockets' CPU time was not read".into(), ..Default::default() },
        None => whole(usize::from(step.queues), step.sent.seconds),
    };
    let (receiver, delivered) = match &step.receiver {
        Some(w) => (
            match w.udp.as_ref() {
                Some(u) => {
                    u.cpu.as_ref().map_or(SideCpu { counted: "the sockets' CPU time was not read".into(), ..Default::default() }, kernel)
                }
                None => whole(w.queues.len(), w.seconds),
            },
            w.packets,
        ),
        None => (SideCpu { counted: "no receiver".into(), ..Default::default() }, 0),
    };
    CpuCost::new(sender, receiver, delivered)
}

fn knee(r: &PathRun, dir: &Path) -> Knee {
    let mut k = Knee { shape: r.shape.clone(), record: r.record.clone(), ..Default::default() };
    match read::<KneeRecord>(r, dir) {
        Ok(rec) => {
            let res = rec.body.result;
            if rec.body.interrupted {
                k.error = Some("the search was interrupted".into());
            } else if r.error.is_some() && res.knee_mpps.is_none() {
                k.error = r.error.clone();
            }
            k.ndr_mpps = res.ndr_mpps;
            k.pdr_mpps = res.pdr_mpps;
            k.knee_mpps = res.knee_mpps;
            k.at_least = res.sender_limited || matches!(res.pdr_bounded_by, Some(knee::Bound::Top | knee::Bound::Sender));
            k.ndr = res.ndr;
            k.pdr = res.pdr;
            k.tolerance_pct = res.delivery_tolerance_pct;
            let trials = &rec.body.trials;
            if res.knee_mpps.is_none() && !trials.is_empty() && trials.iter().all(|t| !t.pdr_pass && t.step.error.is_none()) {
                k.fails_from_mpps = trials.iter().filter_map(|t| t.step.offered_mpps).reduce(f64::min);
            }
        }
        Err(e) => k.error = Some(r.error.clone().unwrap_or(e)),
    }
    k
}
