//! A run's figures over time, for both tools: each tick's row into the
//! bounded series (`series::Series`), the `--series` CSV written as it goes
//! (a killed run leaves a usable file), and the `--metrics` endpoint's
//! figures. Fed by the main thread once a tick, never by a lane.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use openmetrics::{Metrics, MetricsServer, StepAccount, StepLabels};
use series::{Analysis, CounterKind, CsvSink, Row, Series, Thresholds};

use crate::counters::Tally;
use crate::error::Error;
use crate::live_latency::LatencyCounts;
use crate::xstats::{Watch, WindowXstats};

/// The series' counter columns: every watched counter that is a count (an
/// allowance, a --watch-xstat name, ENA Express's), not a level.
pub fn counter_columns(watches: &[&Watch]) -> Vec<(String, CounterKind)> {
    let mut cols: Vec<(String, CounterKind)> = Vec::new();
    for name in watches.iter().flat_map(|w| w.names()) {
        let kind = match limits::counter_kind(&name) {
            limits::CounterKind::Allowance => CounterKind::Allowance,
            limits::CounterKind::Level => continue,
            _ => CounterKind::Watched,
        };
        if !cols.iter().any(|(n, _)| *n == name) {
            cols.push((name, kind));
        }
    }
    cols
}

/// Each column's delta in a window of watched counters (0 where a port
/// did not report it).
pub fn counter_deltas(xs: &WindowXstats, columns: &[(String, CounterKind)]) -> Vec<u64> {
    let c = &xs.counters;
    columns
        .iter()
        .map(|(name, _)| c.allowances.get(name).or_else(|| c.watched.get(name)).or_else(|| c.express.get(name)).copied().unwrap_or(0))
        .collect()
}

/// A sending lane whose loop stood still (net of its time inside tx_burst)
/// for at least this share of the interval was held back by its host.
pub const HOST_STALL_PCT: f64 = 10.0;

/// What held a sender's rate in an interval, as the label its series row
/// carries (the analysis reads a fall in the sent rate as a credit bucket
/// only where the queue pushed back, docs/metrics.md): its lanes stood
/// still, net of the time inside tx_burst (a driver that keeps the lane
/// inside tx_burst is the path's doing, not the host's), for
/// [`HOST_STALL_PCT`] of the lanes' time: the host (that outweighs a full
/// queue: a lane that was descheduled catches up into it); else a tx_burst
/// that came back short, or lanes inside tx_burst for
/// `limits::PUSHED_BACK_TX_PCT` of their time: the path pushed back.
pub fn sender_row_label(d: &Tally, secs: f64, lanes: usize, tsc_hz: u64) -> &'static str {
    let lane_ticks = secs * tsc_hz as f64 * lanes.max(1) as f64;
    if lane_ticks <= 0.0 {
        return series::SENDER_UNHINDERED;
    }
    let pct = |ticks: u64| ticks as f64 / lane_ticks * 100.0;
    if pct(d.stalled_ticks.saturating_sub(d.tx_cycles)) >= HOST_STALL_PCT {
        series::SENDER_HOST_STALL
    } else if d.ring_full_retries > 0 || pct(d.tx_cycles) >= limits::PUSHED_BACK_TX_PCT {
        series::SENDER_PUSHED_BACK
    } else {
        series::SENDER_UNHINDERED
    }
}

/// The flags both tools take for their figures over time.
#[derive(clap::Args, Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct TimelineArgs {
    /// The series' interval, and the live line's: the record, --series and --series-svg keep a row
    /// per interval (10ms to 1h, e.g. 1, 100ms, 10s)
    #[arg(long, default_value = "1s", value_parser = crate::session::parse::interval)]
    #[serde(serialize_with = "crate::units::ser_secs")]
    #[schemars(with = "f64")]
    pub interval: Duration,
    /// Write the series as CSV to this file, a line per interval as it ends (a killed run leaves
    /// every line it had)
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
    /// Plot the series as SVG to this file: rates, loss, latency, counter onsets and the changes
    /// found
    #[arg(long, value_name = "FILE")]
    pub series_svg: Option<PathBuf>,
    /// Serve /metrics in the Prometheus text format on ADDR:PORT while the run goes (e.g.
    /// 127.0.0.1:9477); an every-interface address is refused, as for drop --listen
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
    /// With --metrics: after a run that ended on its own, keep serving its final figures (equal to
    /// the record's) for this long, so a Prometheus scrape sees them (default 30s: two 15 s
    /// scrape intervals; 0 ends at once). A run a signal ended does not linger; a signal during
    /// the linger ends it and the exit code stays 0
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::session::parse::duration)]
    #[serde(serialize_with = "crate::units::ser_secs")]
    #[schemars(with = "f64")]
    pub metrics_linger: Duration,
}

impl TimelineArgs {
    /// The timeline these flags ask for, for `tool` (its direction: what it counts).
    pub fn config(&self, tool: &'static str, direction: &'static str) -> TimelineConfig {
        TimelineConfig {
            interval: self.interval,
            csv: self.series.clone(),
            metrics: self.metrics.clone(),
            linger: self.metrics_linger,
            tool,
            direction,
        }
    }

    /// --metrics' address, checked before anything starts: the control
    /// port's rules (no every-interface address).
    pub fn check(&self) -> Result<(), Error> {
        match &self.metrics {
            Some(spec) => {
                control::listen_addrs(spec).map(|_| ()).map_err(|e| Error::MetricsAddress { spec: spec.clone(), reason: e.to_string() })
            }
            None => Ok(()),
        }
    }

    /// The output flags, for the start-up check that each can be written.
    pub fn outputs(&self) -> [(&'static str, Option<&Path>); 2] {
        [("--series", self.series.as_deref()), ("--series-svg", self.series_svg.as_deref())]
    }
}

/// Whether the watched counters, last read at `last`, are due a read at a
/// tick of period `interval`: one read per `xstats_interval` at most (on ENA
/// each is an admin command), with half a tick's slack, so that ticks as
/// long as the xstats interval read at every tick despite their jitter.
pub fn xstats_due(last: std::time::Instant, xstats_interval: Duration, interval: Duration) -> bool {
    last.elapsed() + interval / 2 >= xstats_interval
}

/// Where a run's series goes besides the record.
#[derive(Debug, Clone, Default)]
pub struct TimelineConfig {
    pub interval: Duration,
    /// --series FILE: the rows as CSV, one line per interval as it ends.
    pub csv: Option<PathBuf>,
    /// --metrics ADDR:PORT, and the tool's name and direction for its labels.
    pub metrics: Option<String>,
    /// How long the endpoint serves the final figures after the run (--metrics-linger).
    pub linger: Duration,
    pub tool: &'static str,
    pub direction: &'static str,
}

/// The metrics endpoint. When it is dropped (the run's figures are
/// final: its timeline finished or went with the sender), its server is
/// handed to [`linger`], which the tool's `main` calls once the record is
/// written; so every path out of a run leaves it serving, whoever owned it.
struct Endpoint {
    metrics: Arc<Metrics>,
    server: Option<MetricsServer>,
    linger: Duration,
    tool: &'static str,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            *LINGERING.lock().unwrap_or_else(PoisonError::into_inner) = Some((server, self.linger, self.tool));
        }
    }
}

/// The endpoint of a finished run, waiting for [`linger`].
static LINGERING: Mutex<Option<(MetricsServer, Duration, &'static str)>> = Mutex::new(None);

/// After a run that ended on its own: serves its final figures for
/// --metrics-linger, or until a signal, then closes the endpoint. A run
/// a signal ended closes it at once (the user asked to stop). Call it
/// after the record is written, from `main`.
pub fn linger() {
    let Some((server, linger, tool)) = LINGERING.lock().unwrap_or_else(PoisonError::into_inner).take() else { return };
    if crate::signals::interrupted() || linger.is_zero() {
        return;
    }
    crate::say!(
        "{tool}: serving the final figures at http://{}/metrics for {} s more (--metrics-linger; Ctrl-C ends it)",
        server.local_addr(),
        linger.as_secs_f64()
    );
    let (until, signals) = (Instant::now() + linger, crate::signals::received());
    while Instant::now() < until && crate::signals::received() == signals {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A run's series, its CSV and its metrics endpoint.
pub struct Timeline {
    series: Series,
    csv: Option<(CsvSink<BufWriter<File>>, PathBuf)>,
    metrics: Option<Endpoint>,
    /// Each queue's totals of the phases (a ladder step's warm-up, its
    /// trial; drop's lanes before a restart) that ended: the endpoint
    /// serves these plus the live phase's, so a queue's counter runs on
    /// across phases whose lanes count from zero.
    queue_carried: Vec<Tally>,
    /// The exact losses of the measured steps so far.
    exact_lost: u64,
    /// Running totals of each counter column, for the endpoint (it serves totals).
    counter_totals: Vec<u64>,
    lost: u64,
    /// Timed probes over the run, for the endpoint's histogram, and their kind.
    latency: LatencyCounts,
    latency_kind: &'static str,
    began: std::time::Instant,
    /// The configured interval (the series' own doubles as it merges).
    interval_s: f64,
    max_rows: usize,
}

/// The `--metrics` endpoint, bound (or not asked for).
pub struct MetricsEndpoint(Option<Endpoint>);

/// Binds `--metrics` (refused by the control port's rules, or an address in
/// use) before the EAL and the ports start, so a refusal is the tool's one
/// line with nothing of DPDK's before it.
pub fn bind_metrics(cfg: &TimelineConfig) -> Result<MetricsEndpoint, Error> {
    let Some(spec) = &cfg.metrics else { return Ok(MetricsEndpoint(None)) };
    let m = Arc::new(Metrics::new(cfg.tool, cfg.direction));
    let server = openmetrics::serve(spec, m.clone()).map_err(|e| Error::MetricsAddress { spec: spec.clone(), reason: e.to_string() })?;
    crate::say!("{}: metrics at http://{}/metrics", cfg.tool, server.local_addr());
    Ok(MetricsEndpoint(Some(Endpoint { metrics: m, server: Some(server), linger: cfg.linger, tool: cfg.tool })))
}

impl Timeline {
    /// Opens the CSV (refused at once if it cannot be written) and takes
    /// the endpoint bound before the EAL started ([`bind_metrics`]).
    pub fn new(cfg: &TimelineConfig, counters: Vec<(String, CounterKind)>, endpoint: MetricsEndpoint) -> Result<Timeline, Error> {
        let csv = match &cfg.csv {
            None => None,
            Some(path) => {
                let file = File::create(path).map_err(|source| Error::SeriesCreate { path: path.clone(), source })?;
                let sink =
                    CsvSink::new(BufWriter::new(file), &counters).map_err(|source| Error::SeriesWrite { path: path.clone(), source })?;
                Some((sink, path.clone()))
            }
        };
        let metrics = endpoint.0;
        let n = counters.len();
        Ok(Timeline {
            series: Series::new(cfg.interval.as_secs_f64(), counters, Series::DEFAULT_MAX_ROWS),
            csv,
            metrics,
            counter_totals: vec![0; n],
            queue_carried: Vec::new(),
            exact_lost: 0,
            lost: 0,
            latency: LatencyCounts::default(),
            latency_kind: if cfg.tool == "drop" { "one_way" } else { "round_trip" },
            began: std::time::Instant::now(),
            interval_s: cfg.interval.as_secs_f64(),
            max_rows: Series::DEFAULT_MAX_ROWS,
        })
    }

    /// Seconds since the timeline began (the run's clock for rows: it runs
    /// on across a ladder's steps, as the CSV does).
    pub fn elapsed_s(&self) -> f64 {
        self.began.elapsed().as_secs_f64()
    }

    /// The series so far and what was found in it; a new one starts (a
    /// ladder's next step), while the CSV and the endpoint go on.
    pub fn cut(&mut self) -> (Series, Analysis) {
        let fresh = Series::new(self.interval_s, self.series.counters().to_vec(), self.max_rows);
        let done = std::mem::replace(&mut self.series, fresh);
        let analysis = series::analyse(&done, &Thresholds::default());
        (done, analysis)
    }

    pub fn counters(&self) -> &[(String, CounterKind)] {
        self.series.counters()
    }

    /// The trial's own frames were seen moving at `t_s` (on the rows'
    /// clock): the analysis runs from the first such time to the last.
    pub fn trial_frames_at(&mut self, t_s: f64) {
        self.series.trial_frames_at(t_s);
    }

    /// One interval's row, into the series, the CSV and the endpoint; `queues`
    /// are each queue's totals in the live phase (indexed by queue),
    /// `exact`: whether `row.lost` is exact.
    pub fn push(&mut self, row: Row, queues: &[Tally], exact: bool) {
        if let Some((sink, path)) = &mut self.csv {
            if let Err(e) = sink.write(&row) {
                tracing::warn!("--series {}: {e}: the file stops here, the record keeps the series", path.display());
                self.csv = None;
            }
        }
        for (t, d) in self.counter_totals.iter_mut().zip(&row.counters) {
            *t += d;
        }
        self.lost += row.lost.unwrap_or(0);
        if let Some(e) = &self.metrics {
            let m = &e.metrics;
            self.publish_queues(m, queues);
            for ((name, kind), total) in self.series.counters().iter().zip(&self.counter_totals) {
                m.set_nic_counter(name, *kind == CounterKind::Allowance, *total);
            }
            publish_row(m, &row, self.lost, exact);
        }
        self.series.push(row);
    }

    /// A phase's lanes ended with these totals (queue, totals): they are
    /// carried into every later figure, and served now (the phase's last
    /// frames, after its last row, included).
    pub fn phase_done(&mut self, finals: impl IntoIterator<Item = (u16, Tally)>) {
        for (q, t) in finals {
            let q = usize::from(q);
            if self.queue_carried.len() <= q {
                self.queue_carried.resize(q + 1, Tally::default());
            }
            self.queue_carried[q].add(&t);
        }
        if let Some(e) = &self.metrics {
            self.publish_queues(&e.metrics, &[]);
        }
    }

    /// The run's final totals per queue (queue, totals), as its record has
    /// them, and its estimated losses (None: not counted): the endpoint's
    /// last figures, served through the linger.
    pub fn final_totals(&mut self, queues: impl IntoIterator<Item = (u16, Tally)>, lost_estimate: Option<u64>) {
        let Some(e) = &self.metrics else { return };
        for (q, t) in queues {
            e.metrics.set_queue(q, t.packets, t.bytes, t.lost, t.faults);
        }
        if let Some(lost) = lost_estimate {
            e.metrics.set_lost(lost, false);
        }
    }

    /// Each queue's carried totals plus the live phase's.
    fn publish_queues(&self, m: &Metrics, live: &[Tally]) {
        for q in 0..self.queue_carried.len().max(live.len()) {
            let mut t = self.queue_carried.get(q).copied().unwrap_or_default();
            t.add(&live.get(q).copied().unwrap_or_default());
            m.set_queue(q as u16, t.packets, t.bytes, t.lost, t.faults);
        }
    }

    /// A measured ladder step's record (one that ran to its end): its
    /// exact account under its qualifiers, the run's exact losses so far, and its verdict (as
    /// the record labels it), onto the endpoint.
    pub fn step_done(&mut self, rec: &ladder::StepRecord) {
        let Some(e) = &self.metrics else { return };
        // A step that failed or was cut short has no account to give (its
        // record's sent may be 0 though frames went out): nothing is said.
        if rec.error.is_some() {
            return;
        }
        let m = &e.metrics;
        let labels = StepLabels {
            tool: String::new(),
            step: rec.step as u32,
            run: rec.run,
            queues: rec.queues,
            size: rec.size,
            shape: rec.shape.clone(),
            offered_mpps: rec.offered_mpps.map_or_else(|| "max".to_string(), |r| format!("{r}")),
        };
        let received = rec.receiver.as_ref().and_then(|r| r.trial.as_ref()).map(|t| t.received);
        m.set_step(&labels, &StepAccount { sent: rec.sent.packets, received, lost: rec.lost, loss_pct: rec.loss_pct });
        if let Some(lost) = rec.lost {
            self.exact_lost += lost;
            m.set_lost(self.exact_lost, true);
        }
        if rec.verdict.is_some() {
            m.set_verdict(&rec.limit());
        }
    }

    /// An interval's timed probes, for the endpoint's histogram; their
    /// percentiles for the interval's row.
    pub fn latency(&mut self, d: &LatencyCounts) -> Option<[u64; 4]> {
        let p = d.percentiles()?;
        self.latency.add(d);
        if let Some(e) = &self.metrics {
            let (buckets, sum) = self.latency.prometheus_buckets();
            e.metrics.set_latency(self.latency_kind, &buckets, sum, self.latency.total());
        }
        Some(p)
    }

    /// The series and what was found in it; the endpoint closes.
    pub fn finish(self) -> (Series, Analysis) {
        let analysis = series::analyse(&self.series, &Thresholds::default());
        (self.series, analysis)
    }
}

/// One row's loss and verdict onto the endpoint. A row without a loss
/// figure (blast's: a sender cannot see an interval's loss) exports none,
/// rather than a 0 that says nothing was lost.
fn publish_row(m: &Metrics, row: &Row, lost: u64, exact: bool) {
    if let Some(lost_now) = row.lost {
        let frames = row.received_frames.or(row.sent_frames).unwrap_or(0);
        let pct = if frames + lost_now > 0 { lost_now as f64 * 100.0 / (frames + lost_now) as f64 } else { 0.0 };
        m.set_loss(lost, exact, pct);
    }
    if let Some(v) = &row.verdict {
        m.set_verdict(v);
    }
}

/// The series' plot, written where --series-svg asked.
pub fn write_plot(path: &Path, series: &Series, analysis: &Analysis, title: &str) -> Result<(), Error> {
    std::fs::write(path, series::svg(series, analysis, title)).map_err(|source| Error::SeriesPlotWrite { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_senders_row_names_its_host_or_its_path() {
        let hz = 1_000_000_000;
        let t = |stalled_ticks, tx_cycles, ring_full_retries| Tally { stalled_ticks, tx_cycles, ring_full_retries, ..Tally::default() };
        // Two lanes over 1 s: 2e9 lane ticks.
        assert_eq!(sender_row_label(&t(600_000_000, 0, 0), 1.0, 2, hz), series::SENDER_HOST_STALL);
        assert_eq!(sender_row_label(&t(600_000_000, 0, 40), 1.0, 2, hz), series::SENDER_HOST_STALL);
        // A lane kept inside tx_burst reads as stood still too: the path's, not the host's.
        assert_eq!(sender_row_label(&t(1_300_000_000, 1_200_000_000, 0), 1.0, 2, hz), series::SENDER_PUSHED_BACK);
        assert_eq!(sender_row_label(&t(0, 0, 3), 1.0, 2, hz), series::SENDER_PUSHED_BACK);
        assert_eq!(sender_row_label(&t(100_000_000, 0, 0), 1.0, 2, hz), series::SENDER_UNHINDERED);
        assert_eq!(sender_row_label(&t(0, 0, 0), 0.0, 2, hz), series::SENDER_UNHINDERED);
    }
}
