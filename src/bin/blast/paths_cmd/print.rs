//! What `blast paths` prints: a line per run as it ends, then the
//! comparison's table, a block per shape.

use std::path::Path;

use paths::{mpps, times, Comparison, PathFigures, Standing};
use records::paths::PathRun;

/// "paths: dpdk, 0.100 Mpps even (round 1): ... " for a run that ended.
pub fn progress(r: &PathRun, dir: &Path) -> String {
    let what = match r.rate_mpps {
        Some(rate) => format!("{} Mpps {} (round {})", mpps(rate), r.shape, r.round),
        None => format!("knee search, {}", r.shape),
    };
    match &r.error {
        Some(e) => format!("paths: {}, {what}: failed after {:.1} s: {e} (log: {})", r.path, r.seconds, dir.join(&r.log).display()),
        None => format!("paths: {}, {what}: done in {:.1} s ({})", r.path, r.seconds, dir.join(&r.record).display()),
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("-".into(), f)
}

/// The comparison as a table per shape, then each path's knees and how latency and CPU were counted.
pub fn table(c: &Comparison, figures: &[PathFigures]) {
    blastdrop::say!("");
    blastdrop::say!("paths: ratios against {} (the highest knee); receiver-side Mpps, exact loss, latency percentiles", c.reference);
    for f in figures {
        for k in &f.knees {
            let knee = match (&k.error, k.knee_mpps) {
                (Some(e), _) => format!("unknown (search failed: {e})"),
                (None, Some(v)) => format!("{}{} Mpps (NDR {}, PDR {})", if k.at_least { "at least " } else { "" }, mpps(v), k.ndr, k.pdr),
                (None, None) => format!("none found (NDR {}, PDR {})", k.ndr, k.pdr),
            };
            blastdrop::say!("  {} knee, {}: {knee}", f.name, k.shape);
        }
    }
    let mut shape = String::new();
    for row in &c.rows {
        if row.shape != shape {
            shape = row.shape.clone();
            blastdrop::say!("");
            blastdrop::say!("shape {shape}:");
            blastdrop::say!(
                "{:>9}  {:<10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>15} {:>9}  reading",
                "rate Mpps",
                "path",
                "delivered",
                "loss %",
                "P50 us",
                "P99 us",
                "P99.9 us",
                "max us",
                "CPU s/M",
                "knee",
                "P99 x"
            );
        }
        for cell in &row.cells {
            let p = cell.point.as_ref();
            let failed = p.and_then(|p| p.error.as_ref());
            let lat = |f: fn(&paths::Latency) -> f64| opt(p.and_then(|p| p.latency.as_ref()).map(f), |v| format!("{v:.1}"));
            let standing = match &cell.standing {
                Standing::Below => "below",
                Standing::Past => "PAST",
                Standing::Unknown(_) => "?",
            };
            let line = format!(
                "{:>9}  {:<10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>15} {:>9}  {}",
                mpps(row.rate_mpps),
                cell.path,
                opt(p.and_then(|p| p.delivered_mpps), mpps),
                opt(p.and_then(|p| p.loss_pct), |v| format!("{v:.3}")),
                lat(|l| l.p50_us),
                lat(|l| l.p99_us),
                lat(|l| l.p99_9_us),
                lat(|l| l.max_us),
                opt(p.and_then(|p| p.cpu.as_ref()).and_then(|c| c.seconds_per_million), |v| format!("{v:.2}")),
                format!("{}:{}{}", standing, if cell.knee_at_least { ">=" } else { "" }, opt(cell.knee_mpps, mpps)),
                opt(cell.ratios.p99, times),
                match failed {
                    Some(e) => format!("failed: {e}"),
                    None if cell.path == c.reference => cell.reading.text(),
                    None => format!("{} ({})", cell.reading.text(), cell.ratios.text()),
                }
            );
            blastdrop::say!("{line}");
        }
    }
    blastdrop::say!("");
    blastdrop::say!("CPU s/M: both ends' CPU seconds per million frames delivered (busy-polling lcores counted whole; sockets: their CPUs' user, system and softirq time)");
    if let Some(clock) =
        c.rows.iter().flat_map(|r| r.cells.iter()).find_map(|c| c.point.as_ref()?.latency.as_ref().map(|l| l.clock.clone()))
    {
        blastdrop::say!("latency: {clock}");
    }
    for f in &c.failures {
        blastdrop::say!("paths: {} failed: {}: {}", f.path, f.what, f.error);
    }
}
