//! The ladder's analysis (ceilings per frame size, the bandwidth
//! crossover) and its files: the JSON record, the CSV and the SVG plot.

use crate::fail::Failure;
use blastdrop::record_file;
use blastdrop::sender::Sender;
use blastdrop::session::Started;
use blastdrop::signals;
use control::PeerInfo;
use ladder::{crossover, find_ceiling, Aggregate, StepRecord};
pub use records::ladder::{Analysis, LadderBody, SizeCeiling, StepSeries};

use crate::mode::LadderRun;
use crate::peer;
use crate::settings::{AsGiven, Settings};

pub fn analyse(settings: &Settings, records: &[StepRecord], aggs: &[Aggregate], receiver_side: bool) -> Analysis {
    let mut ceilings = Vec::new();
    // Each traffic (rate and shape) in the order it first ran.
    let mut traffics: Vec<&Aggregate> = Vec::new();
    for a in aggs {
        if !traffics.iter().any(|t| t.same_traffic(a)) {
            traffics.push(a);
        }
    }
    // The sizes the steps recorded (with a size mix, its mean, not the
    // largest frame the ladder was planned with).
    let mut sizes: Vec<u32> = Vec::new();
    for a in aggs {
        if !sizes.contains(&a.size) {
            sizes.push(a.size);
        }
    }
    for &size in &sizes {
        for t in &traffics {
            let same = |a: &&Aggregate| a.size == size && a.same_traffic(t);
            let mut pts: Vec<(u16, f64)> = aggs.iter().filter(same).map(|a| (a.queues, a.mpps.median)).collect();
            pts.sort_by_key(|p| p.0);
            if pts.len() < 2 {
                continue;
            }
            if let Some(c) = find_ceiling(&pts, settings.judging.ceiling_threshold_pct / 100.0) {
                // The limit at the ceiling: what the step there hit.
                let limit = records
                    .iter()
                    .find(|r| {
                        r.size == size
                            && r.queues == c.queues
                            && r.error.is_none()
                            && r.offered_mpps == t.offered_mpps
                            && r.shape == t.shape
                    })
                    .map_or_else(|| "n/a".to_string(), |r| r.limit());
                ceilings.push(SizeCeiling { size, offered_mpps: t.offered_mpps, shape: t.shape.clone(), ceiling: c, limit });
            }
        }
    }
    let crossover = settings.judging.published_gbps.map(|g| {
        let best: Vec<(u32, f64)> =
            sizes.iter().map(|&s| (s, aggs.iter().filter(|a| a.size == s).map(|a| a.frame_gbps.median).fold(0.0, f64::max))).collect();
        crossover(&best, g)
    });
    Analysis { receiver_side, ceiling_threshold_pct: settings.judging.ceiling_threshold_pct, ceilings, crossover }
}

/// The ladder's outcome, for its files.
pub struct Outcome<'a> {
    pub records: &'a [StepRecord],
    pub series: &'a [StepSeries],
    pub aggregates: Vec<Aggregate>,
    pub analysis: Analysis,
    pub peer_info: Option<PeerInfo>,
}

/// Writes --plot, --csv and --json, those asked for.
pub fn write_files(settings: &Settings, m: &LadderRun, started: &Started, sender: &Sender, out: Outcome) -> Result<(), Failure> {
    let receiver_side = out.analysis.receiver_side;
    let mut sizes_seen = out.aggregates.clone();
    sizes_seen.sort_by_key(|a| (a.size, a.queues));
    if let Some(path) = &settings.outputs.plot {
        let title = format!(
            "blastdrop ladder: {} ({}), flows {}, {}{}",
            sender.info().name,
            sender.info().driver,
            settings.traffic.flows.map_or("= queues".into(), |f| f.to_string()),
            m.ladder.traffic(),
            m.mix.as_ref().map_or(String::new(), |x| format!(", size mix {x}: sizes are its mean ({:.1} B)", x.mean_size()))
        );
        let opts = ladder::LadderPlot { receiver: receiver_side, title: &title, published_gbps: settings.judging.published_gbps };
        let latency = ladder::LatencyPoint::from_records(out.records);
        let plot = ladder::render_svg(&sizes_seen, &opts, &latency).map_err(|e| Failure::runtime(format!("cannot draw --plot: {e}")))?;
        std::fs::write(path, plot.into_svg(&title))
            .map_err(|e| Failure::runtime(format!("cannot write --plot {}: {e}", path.display())))?;
    }
    if let Some(path) = &settings.outputs.csv {
        std::fs::write(path, ladder::render_csv(out.records))
            .map_err(|e| Failure::runtime(format!("cannot write --csv {}: {e}", path.display())))?;
    }
    if let Some(path) = &settings.outputs.json {
        let body = LadderBody {
            src_mac: sender.src_mac().to_string(),
            environment: peer::Environments {
                sender: blastdrop::environment::of_sender(started, sender, m.ladder.max_queues()),
                receiver: out.peer_info,
            },
            ladder: m.ladder.clone(),
            interrupted: signals::interrupted(),
            steps: out.records.to_vec(),
            step_series: out.series.to_vec(),
            aggregates: out.aggregates,
            analysis: out.analysis,
        };
        record_file::write_json(path, &LadderRecord::blast("ladder", &settings.config, body))?;
    }
    Ok(())
}

/// The record as blast writes it: its flags as given.
type LadderRecord<'a> = records::ladder::LadderRecord<&'a AsGiven<'a>>;

/// The JSON schema of the ladder's record.
pub fn schema() -> schemars::Schema {
    records::schema_of::<LadderRecord<'static>>()
}
