//! The figures a tool publishes, held in `prometheus-client` families.
//!
//! Totals are set, not counted: the main thread reads the lanes' and the
//! NIC's totals once a tick and hands them over whole. A family's counter
//! keeps the largest total it was given (`fetch_max` on the counter's own
//! atomic), so it is the last total and never goes back; a total below it
//! (a queue restarted under a new step, a counter read twice out of order)
//! is ignored. This keeps the library's own `Counter` and `Family` types,
//! their label handling and their encoding, where a custom collector with
//! `ConstCounter`s would re-implement the families by hand; only latency
//! needs a collector (see `latency.rs`), as a `Histogram` takes single
//! observations, not the buckets a tool already has.
//!
//! Every series is made by the first set that names it and lives to the
//! end of the run: queues, NIC counters and verdict labels come from the
//! tool itself, so their number is bounded by the ports and the code.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::latency::{Latency, LatencyCollector};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    tool: String,
    direction: String,
    queue: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NicLabels {
    tool: String,
    counter: String,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LostLabels {
    tool: String,
    exact: bool,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
}

/// A ladder step's qualifiers: which step of which repeat, and the
/// traffic it measured (the record's `steps[]` fields of the same names;
/// `offered_mpps` is "max" for a step at full rate).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepLabels {
    pub tool: String,
    pub step: u32,
    pub run: u32,
    pub queues: u16,
    pub size: u32,
    pub shape: String,
    pub offered_mpps: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StepFrameLabels {
    #[prometheus(flatten)]
    step: StepLabels,
    account: &'static str,
}

/// A measured step's exact account, as its record has it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepAccount {
    pub sent: u64,
    /// None: the receiver gave no count of the step's frames.
    pub received: Option<u64>,
    /// None: no exact account (the record's `lost` is absent).
    pub lost: Option<u64>,
    pub loss_pct: Option<f64>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    tool: String,
    verdict: String,
}

/// The figures a tool publishes; the main thread sets them about once a
/// second (never a lane). `Send + Sync`: share it with [`crate::serve`]
/// through an `Arc`.
#[derive(Debug)]
pub struct Metrics {
    tool: String,
    direction: String,
    registry: Registry,
    frames: Family<QueueLabels, Counter>,
    bytes: Family<QueueLabels, Counter>,
    drops: Family<QueueLabels, Counter>,
    faults: Family<QueueLabels, Counter>,
    nic: Family<NicLabels, Counter>,
    lost: Family<LostLabels, Counter>,
    interval_loss: Family<ToolLabels, Gauge<f64, AtomicU64>>,
    verdict: Family<VerdictLabels, Gauge>,
    step_frames: Family<StepFrameLabels, Gauge>,
    step_loss: Family<StepLabels, Gauge<f64, AtomicU64>>,
    /// Every verdict label set so far, so that exactly one series is 1.
    verdicts_seen: Mutex<Vec<String>>,
    latency: Arc<Mutex<Latency>>,
}

/// Raises a counter to `total`; a lower total leaves it where it is.
fn raise(counter: &Counter, total: u64) {
    counter.inner().fetch_max(total, Ordering::Relaxed);
}

impl Metrics {
    /// `tool`: "blast" or "drop"; `direction`: "sent" (blast) or "received" (drop).
    /// Kept whole (over 60 lines): one registration per family with its
    /// help text, read top to bottom as the list of what /metrics serves.
    pub fn new(tool: &str, direction: &str) -> Metrics {
        let frames = Family::default();
        let bytes = Family::default();
        let drops = Family::default();
        let faults = Family::default();
        let nic = Family::default();
        let lost = Family::default();
        let interval_loss = Family::default();
        let verdict = Family::default();
        let step_frames = Family::default();
        let step_loss = Family::default();
        let latency = Arc::new(Mutex::new(Latency::default()));

        let mut registry = Registry::with_prefix("blastdrop");
        registry.register(
            "frames",
            "Frames per queue since the run began: handed to the NIC by blast's lane on that queue (direction=\"sent\") \
             or received by drop's (direction=\"received\"), as the lanes count them",
            frames.clone(),
        );
        registry.register(
            "bytes",
            "Bytes of blastdrop_frames_total per queue since the run began (Ethernet frames, FCS included), as the lanes count them",
            bytes.clone(),
        );
        registry.register(
            "queue_drops",
            "Frames a queue lost since the run began, as the tool counts them per queue (drop: the losses its probes' \
             sequence gaps show on that queue); the NIC's own drop counters are in blastdrop_nic_xstat_total",
            drops.clone(),
        );
        registry.register(
            "queue_faults",
            "Bursts that faulted on a queue since the run began (the device unmapped the ring under the lane, \
             e.g. a memif peer that left), as the lane counts them",
            faults.clone(),
        );
        registry.register(
            "nic_xstat",
            "A NIC extended statistic's total, read from the port's xstats by the main thread: kind=\"allowance\" for \
             the ENA allowance counters (frames the instance's allowance held back, e.g. pps_allowance_exceeded), \
             kind=\"watched\" for the other counters the tool watches",
            nic.clone(),
        );
        registry.register(
            "lost_frames",
            "Frames lost so far by the tool's account: exact=\"true\" the sum of the measured steps' exact accounts \
             (sent - received of each trial's own frames, as the record's steps[].lost), exact=\"false\" estimated \
             from gaps in the probes' sequence numbers; each keeps its own last total",
            lost.clone(),
        );
        registry.register(
            "interval_loss_percent",
            "Frames lost in the last interval (about a second) as a percentage of the frames expected in it, \
             where the tool sees them (drop); a sender cannot, and exports a step's loss in blastdrop_step_loss_percent",
            interval_loss.clone(),
        );
        registry.register(
            "step_frames",
            "A measured ladder step's exact account, set when its window closes: account=\"sent\" the trial's frames \
             blast sent, \"received\" those drop counted of them, \"lost\" sent - received (the record's steps[] \
             sent.packets, receiver.trial.received, lost)",
            step_frames.clone(),
        );
        registry.register(
            "step_loss_percent",
            "A measured ladder step's loss as a percentage of the frames it sent (the record's steps[].loss_pct)",
            step_loss.clone(),
        );
        registry.register(
            "verdict",
            "The current verdict on what limits the rate: 1 for the series whose verdict label holds now, 0 for every \
             other verdict given before in this run",
            verdict.clone(),
        );
        registry.register_collector(Box::new(LatencyCollector { tool: tool.to_string(), latency: Arc::clone(&latency) }));

        Metrics {
            tool: tool.to_string(),
            direction: direction.to_string(),
            registry,
            frames,
            bytes,
            drops,
            faults,
            nic,
            lost,
            interval_loss,
            verdict,
            step_frames,
            step_loss,
            verdicts_seen: Mutex::new(Vec::new()),
            latency,
        }
    }

    /// A queue's totals since the run began (monotonic; a value below the
    /// last one is ignored, never a counter going back).
    pub fn set_queue(&self, queue: u16, frames: u64, bytes: u64, drops: u64, faults: u64) {
        let labels = QueueLabels { tool: self.tool.clone(), direction: self.direction.clone(), queue };
        raise(&self.frames.get_or_create(&labels), frames);
        raise(&self.bytes.get_or_create(&labels), bytes);
        raise(&self.drops.get_or_create(&labels), drops);
        raise(&self.faults.get_or_create(&labels), faults);
    }

    /// A NIC counter's total (ENA allowance counters such as
    /// pps_allowance_exceeded, or a watched xstat): `allowance` says which
    /// kind. Monotonic like [`Metrics::set_queue`].
    pub fn set_nic_counter(&self, name: &str, allowance: bool, total: u64) {
        let kind = if allowance { "allowance" } else { "watched" };
        let labels = NicLabels { tool: self.tool.clone(), counter: name.to_string(), kind };
        raise(&self.nic.get_or_create(&labels), total);
    }

    /// Frames lost so far (exact or estimated, `exact` says which) and the
    /// loss of the last interval in %. The exact and the estimated totals
    /// are two series, each monotonic.
    pub fn set_loss(&self, lost: u64, exact: bool, interval_loss_pct: f64) {
        self.set_lost(lost, exact);
        self.interval_loss.get_or_create(&ToolLabels { tool: self.tool.clone() }).set(interval_loss_pct);
    }

    /// Frames lost so far (exact or estimated), without an interval's loss:
    /// for a tool that learns its losses only as each step's account arrives.
    pub fn set_lost(&self, lost: u64, exact: bool) {
        raise(&self.lost.get_or_create(&LostLabels { tool: self.tool.clone(), exact }), lost);
    }

    /// A measured step's account under its qualifiers (`step.tool` is
    /// replaced by this tool's name); a figure the account lacks is not
    /// exported.
    pub fn set_step(&self, step: &StepLabels, account: &StepAccount) {
        let step = StepLabels { tool: self.tool.clone(), ..step.clone() };
        let frames = [("sent", Some(account.sent)), ("received", account.received), ("lost", account.lost)];
        for (name, value) in frames {
            if let Some(v) = value {
                let labels = StepFrameLabels { step: step.clone(), account: name };
                self.step_frames.get_or_create(&labels).set(i64::try_from(v).unwrap_or(i64::MAX));
            }
        }
        if let Some(pct) = account.loss_pct {
            self.step_loss.get_or_create(&step).set(pct);
        }
    }

    /// The current verdict's label (e.g. "pps_allowance", "receiver_cpu",
    /// "none", "unknown"): exactly one label series is 1, the others 0.
    pub fn set_verdict(&self, label: &str) {
        let mut seen = self.verdicts_seen.lock().unwrap_or_else(PoisonError::into_inner);
        if !seen.iter().any(|s| s == label) {
            seen.push(label.to_string());
        }
        for s in seen.iter() {
            let labels = VerdictLabels { tool: self.tool.clone(), verdict: s.clone() };
            self.verdict.get_or_create(&labels).set(i64::from(s == label));
        }
    }

    /// One-way or round-trip latency as a histogram: cumulative counts at
    /// upper bounds in seconds (ascending, the last may be +Inf), the sum in
    /// seconds and the count; `kind`: "one_way" or "round_trip".
    ///
    /// The figures are the run's so far (Prometheus reads `_count` and each
    /// `_bucket` as counters): a set whose count is below the last one is
    /// ignored. Keep the bounds the same from one set to the next. A bound
    /// that is NaN or not above the one before is skipped, a count below
    /// the one before it is raised to it, and the +Inf bucket is the count
    /// (added when the buckets do not end with it).
    pub fn set_latency(&self, kind: &str, buckets: &[(f64, u64)], sum_s: f64, count: u64) {
        self.latency.lock().unwrap_or_else(PoisonError::into_inner).set(kind, buckets, sum_s, count);
    }

    /// The text a scrape gets (OpenMetrics text format, ending with "# EOF"):
    /// what Prometheus asks for.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail, nor can the latency collector
        // but through it; should it ever, a scrape gets an empty exposition
        // rather than a torn one.
        match prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            Ok(()) => text,
            Err(_) => "# EOF\n".to_string(),
        }
    }

    /// The same figures in the Prometheus text format 0.0.4: what a scrape
    /// that does not ask for OpenMetrics gets (curl, a browser), and what
    /// `promtool check metrics` reads. Its linter parses only this format:
    /// on OpenMetrics text it finds no HELP for every counter, as an
    /// OpenMetrics counter's HELP names the family (`blastdrop_frames`)
    /// and its samples `blastdrop_frames_total`.
    pub fn encode_prometheus_text(&self) -> String {
        let mut text = String::new();
        match prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry) {
            Ok(()) => text,
            Err(_) => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(text: &str, series: &str) -> Option<String> {
        text.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')).map(str::to_string))
    }

    fn filled() -> Metrics {
        let m = Metrics::new("drop", "received");
        m.set_queue(0, 1000, 64000, 3, 0);
        m.set_queue(1, 2000, 128000, 0, 1);
        m.set_nic_counter("pps_allowance_exceeded", true, 42);
        m.set_nic_counter("rx_missed_errors", false, 7);
        m.set_loss(12, false, 0.5);
        m.set_verdict("pps_allowance");
        m.set_latency("one_way", &[(0.000_01, 5), (0.000_1, 90), (0.001, 100)], 0.004, 100);
        m
    }

    #[test]
    fn a_step_exports_its_account_under_its_qualifiers_and_only_what_it_has() {
        let m = Metrics::new("blast", "sent");
        let step =
            StepLabels { tool: "ignored".into(), step: 1, run: 2, queues: 4, size: 64, shape: "open".into(), offered_mpps: "max".into() };
        m.set_step(&step, &StepAccount { sent: 1000, received: Some(282), lost: Some(718), loss_pct: Some(71.8) });
        let other = StepLabels { step: 2, ..step.clone() };
        m.set_step(&other, &StepAccount { sent: 5, received: None, lost: None, loss_pct: None });
        m.set_lost(718, true);
        let text = m.encode();
        let q = r#"tool="blast",step="1",run="2",queues="4",size="64",shape="open",offered_mpps="max""#;
        for (account, value) in [("sent", "1000"), ("received", "282"), ("lost", "718")] {
            let series = format!("blastdrop_step_frames{{{q},account=\"{account}\"}}");
            assert_eq!(sample(&text, &series).as_deref(), Some(value), "{series} in\n{text}");
        }
        assert_eq!(sample(&text, &format!("blastdrop_step_loss_percent{{{q}}}")).as_deref(), Some("71.8"), "{text}");
        assert_eq!(sample(&text, r#"blastdrop_lost_frames_total{tool="blast",exact="true"}"#).as_deref(), Some("718"), "{text}");
        // No account, no figure: the second step has only what it sent.
        assert_eq!(text.matches(r#"step="2""#).count(), 1, "{text}");
        // set_lost exports no interval loss (a sender has none to give).
        assert!(!text.contains("blastdrop_interval_loss_percent{"), "{text}");
    }

    #[test]
    fn metrics_are_send_and_sync() {
        fn both<T: Send + Sync + 'static>() {}
        both::<Metrics>();
    }

    #[test]
    fn encoding_carries_every_family_and_its_labels() {
        let text = filled().encode();
        assert!(text.ends_with("# EOF\n"), "{text}");
        for (series, value) in [
            (r#"blastdrop_frames_total{tool="drop",direction="received",queue="0"}"#, "1000"),
            (r#"blastdrop_frames_total{tool="drop",direction="received",queue="1"}"#, "2000"),
            (r#"blastdrop_bytes_total{tool="drop",direction="received",queue="1"}"#, "128000"),
            (r#"blastdrop_queue_drops_total{tool="drop",direction="received",queue="0"}"#, "3"),
            (r#"blastdrop_queue_faults_total{tool="drop",direction="received",queue="1"}"#, "1"),
            (r#"blastdrop_nic_xstat_total{tool="drop",counter="pps_allowance_exceeded",kind="allowance"}"#, "42"),
            (r#"blastdrop_nic_xstat_total{tool="drop",counter="rx_missed_errors",kind="watched"}"#, "7"),
            (r#"blastdrop_lost_frames_total{tool="drop",exact="false"}"#, "12"),
            (r#"blastdrop_interval_loss_percent{tool="drop"}"#, "0.5"),
            (r#"blastdrop_verdict{tool="drop",verdict="pps_allowance"}"#, "1"),
            (r#"blastdrop_latency_seconds_count{tool="drop",kind="one_way"}"#, "100"),
            (r#"blastdrop_latency_seconds_sum{tool="drop",kind="one_way"}"#, "0.004"),
        ] {
            assert_eq!(sample(&text, series).as_deref(), Some(value), "{series} in\n{text}");
        }
        for family in [
            "blastdrop_frames counter",
            "blastdrop_bytes counter",
            "blastdrop_queue_drops counter",
            "blastdrop_queue_faults counter",
            "blastdrop_nic_xstat counter",
            "blastdrop_lost_frames counter",
            "blastdrop_interval_loss_percent gauge",
            "blastdrop_verdict gauge",
            "blastdrop_latency_seconds histogram",
        ] {
            assert!(text.contains(&format!("# TYPE {family}\n")), "{family} in\n{text}");
            let name = family.split(' ').next().unwrap_or_default();
            assert!(text.contains(&format!("# HELP {name} ")), "HELP for {name} in\n{text}");
        }
        assert!(text.contains("# UNIT blastdrop_latency_seconds seconds\n"), "{text}");
    }

    #[test]
    fn nothing_set_is_an_empty_exposition() {
        assert_eq!(Metrics::new("blast", "sent").encode(), "# EOF\n");
    }

    #[test]
    fn counters_never_go_back() {
        let m = Metrics::new("blast", "sent");
        let frames = r#"blastdrop_frames_total{tool="blast",direction="sent",queue="2"}"#;
        let nic = r#"blastdrop_nic_xstat_total{tool="blast",counter="bw_out_allowance_exceeded",kind="allowance"}"#;
        let lost = r#"blastdrop_lost_frames_total{tool="blast",exact="true"}"#;
        m.set_queue(2, 100, 6400, 0, 0);
        m.set_nic_counter("bw_out_allowance_exceeded", true, 10);
        m.set_loss(5, true, 1.0);
        m.set_queue(2, 50, 3200, 0, 0);
        m.set_nic_counter("bw_out_allowance_exceeded", true, 3);
        m.set_loss(4, true, 0.0);
        let text = m.encode();
        assert_eq!(sample(&text, frames).as_deref(), Some("100"), "{text}");
        assert_eq!(sample(&text, nic).as_deref(), Some("10"), "{text}");
        assert_eq!(sample(&text, lost).as_deref(), Some("5"), "{text}");
        // The gauge is not a total: it follows.
        assert_eq!(sample(&text, r#"blastdrop_interval_loss_percent{tool="blast"}"#).as_deref(), Some("0.0"), "{text}");
        m.set_queue(2, 150, 9600, 0, 0);
        m.set_loss(9, true, 2.5);
        let text = m.encode();
        assert_eq!(sample(&text, frames).as_deref(), Some("150"), "{text}");
        assert_eq!(sample(&text, lost).as_deref(), Some("9"), "{text}");
        // An estimate is its own series, and does not move the exact one.
        m.set_loss(20, false, 2.5);
        let text = m.encode();
        assert_eq!(sample(&text, lost).as_deref(), Some("9"), "{text}");
        assert_eq!(sample(&text, r#"blastdrop_lost_frames_total{tool="blast",exact="false"}"#).as_deref(), Some("20"), "{text}");
    }

    #[test]
    fn the_verdict_switches_and_exactly_one_is_set() {
        let m = Metrics::new("drop", "received");
        let series = |v: &str| format!(r#"blastdrop_verdict{{tool="drop",verdict="{v}"}}"#);
        for (now, all) in [
            ("unknown", vec!["unknown"]),
            ("receiver_cpu", vec!["unknown", "receiver_cpu"]),
            ("pps_allowance", vec!["unknown", "receiver_cpu", "pps_allowance"]),
            ("receiver_cpu", vec!["unknown", "receiver_cpu", "pps_allowance"]),
            ("none", vec!["unknown", "receiver_cpu", "pps_allowance", "none"]),
        ] {
            m.set_verdict(now);
            let text = m.encode();
            for v in &all {
                let want = if *v == now { "1" } else { "0" };
                assert_eq!(sample(&text, &series(v)).as_deref(), Some(want), "{v} after {now}:\n{text}");
            }
            assert_eq!(text.lines().filter(|l| l.starts_with("blastdrop_verdict{")).count(), all.len(), "{text}");
        }
    }

    #[test]
    fn latency_buckets_are_cumulative_and_end_at_inf() {
        let m = Metrics::new("blast", "sent");
        m.set_latency("round_trip", &[(0.000_01, 5), (0.000_1, 90), (0.001, 100)], 0.004, 104);
        let text = m.encode();
        let b = |le: &str| format!(r#"blastdrop_latency_seconds_bucket{{le="{le}",tool="blast",kind="round_trip"}}"#);
        assert_eq!(sample(&text, &b("0.00001")).as_deref(), Some("5"), "{text}");
        assert_eq!(sample(&text, &b("0.0001")).as_deref(), Some("90"), "{text}");
        assert_eq!(sample(&text, &b("0.001")).as_deref(), Some("100"), "{text}");
        assert_eq!(sample(&text, &b("+Inf")).as_deref(), Some("104"), "{text}");

        // Given with +Inf; a bound out of order and a count that falls are mended.
        m.set_latency("one_way", &[(0.001, 3), (0.0005, 9), (0.002, 2), (f64::NAN, 1), (f64::INFINITY, 8)], 0.01, 8);
        let text = m.encode();
        let o = |le: &str| format!(r#"blastdrop_latency_seconds_bucket{{le="{le}",tool="blast",kind="one_way"}}"#);
        assert_eq!(sample(&text, &o("0.001")).as_deref(), Some("3"), "{text}");
        assert!(sample(&text, &o("0.0005")).is_none(), "{text}");
        assert_eq!(sample(&text, &o("0.002")).as_deref(), Some("3"), "{text}");
        assert_eq!(sample(&text, &o("+Inf")).as_deref(), Some("8"), "{text}");
        assert_eq!(text.matches(r#"le="+Inf",tool="blast",kind="one_way""#).count(), 1, "{text}");

        // A histogram that would go back is ignored.
        m.set_latency("round_trip", &[(0.000_01, 1), (0.000_1, 2), (0.001, 3)], 0.001, 3);
        let text = m.encode();
        assert_eq!(sample(&text, &b("+Inf")).as_deref(), Some("104"), "{text}");
        m.set_latency("round_trip", &[(0.000_01, 6), (0.000_1, 95), (0.001, 110)], 0.005, 110);
        let text = m.encode();
        assert_eq!(sample(&text, &b("0.0001")).as_deref(), Some("95"), "{text}");
        assert_eq!(sample(&text, &b("+Inf")).as_deref(), Some("110"), "{text}");
    }

    #[test]
    fn label_values_are_escaped() {
        let m = Metrics::new("drop", "received");
        m.set_nic_counter("odd\"name\\with\nbreak", false, 1);
        let text = m.encode();
        assert!(text.contains(r#"counter="odd\"name\\with\nbreak""#), "{text}");
    }

    /// `promtool check metrics` on `text`: None when promtool is not on PATH,
    /// else whether it passed and what it said.
    fn promtool(text: &str) -> Option<(bool, String)> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        // A promtool that cannot run here (the host's, seen from an emulated
        // arm64 root) fails even to say its version: that is no promtool.
        match Command::new("promtool").arg("--version").output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                println!("promtool does not run here ({}): skipped", String::from_utf8_lossy(&o.stderr).trim());
                return None;
            }
            Err(_) => return None,
        }
        let spawned =
            Command::new("promtool").args(["check", "metrics"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => panic!("promtool: {e}"),
        };
        // A promtool that cannot run here (the host's, seen from an emulated
        // arm64 root) exits before reading: that is no promtool, not a failed check.
        if let Err(e) = child.stdin.take().expect("stdin").write_all(text.as_bytes()) {
            let out = child.wait_with_output().expect("promtool ended");
            println!("promtool did not read its input ({e}; it said {}): skipped", String::from_utf8_lossy(&out.stderr).trim());
            return None;
        }
        let out = child.wait_with_output().expect("promtool ran");
        Some((out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))))
    }

    /// `promtool check metrics` over a full exposition. CI installs
    /// Debian's `prometheus`; without promtool the check is skipped here
    /// (the integration suite requires it).
    #[test]
    fn promtool_accepts_the_exposition() {
        let m = filled();
        m.set_queue(7, 1, 64, 0, 0);
        m.set_loss(3, true, 0.0);
        m.set_verdict("receiver_cpu");
        m.set_latency("round_trip", &[(0.000_05, 1), (f64::INFINITY, 2)], 0.0002, 2);
        let text = m.encode_prometheus_text();
        let Some((passed, said)) = promtool(&text) else {
            // CI runs every test (tests/common::skip_or_fail's rule): there a
            // missing promtool is a failure; the emulated roots leave this
            // test out by name (scripts/test).
            assert!(
                std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                "promtool_accepts_the_exposition cannot run here, and CI (CI is set) runs every test: promtool is not on PATH (install Debian's prometheus package)"
            );
            println!("promtool not on PATH: `promtool check metrics` skipped (install Debian's prometheus package)");
            return;
        };
        assert!(passed, "promtool check metrics on the Prometheus text:\n{said}\n{text}");
        // Its linter reads the Prometheus text format only: on OpenMetrics
        // text its one complaint may be the counters' HELP, which names the
        // family without `_total`. Anything else is a fault.
        let open = m.encode();
        let Some((_, said)) = promtool(&open) else { return };
        for line in said.lines().filter(|l| !l.trim().is_empty()) {
            let family = line.strip_suffix("_total no help text").unwrap_or_else(|| panic!("promtool on OpenMetrics: {line}\n{open}"));
            assert!(open.contains(&format!("# TYPE {family} counter\n")), "{line}\n{open}");
        }
    }

    #[test]
    fn the_prometheus_text_carries_the_same_figures() {
        let text = filled().encode_prometheus_text();
        assert!(!text.contains("# EOF"), "{text}");
        for line in [
            "# TYPE blastdrop_frames_total counter",
            r#"blastdrop_frames_total{tool="drop",direction="received",queue="1"} 2000"#,
            r#"blastdrop_nic_xstat_total{tool="drop",counter="pps_allowance_exceeded",kind="allowance"} 42"#,
            r#"blastdrop_verdict{tool="drop",verdict="pps_allowance"} 1"#,
            "# TYPE blastdrop_latency_seconds histogram",
            r#"blastdrop_latency_seconds_count{tool="drop",kind="one_way"} 100"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
