//! The series itself: one row per interval, kept as columns.
//!
//! # Memory
//!
//! Every column is a flat vector of 8-byte values (a missing count is
//! `u64::MAX`, the verdict an index into the few distinct labels), so a row
//! costs **92 bytes plus 8 bytes per named counter**
//! ([`Series::bytes_per_row`]): `t_s` and `secs` (8 each), five counts (40),
//! four latency percentiles (32) and the verdict's index (4). No column ever
//! holds more than `max_rows` values (its capacity is grown exactly, never
//! past `max_rows`), so a series takes at most `max_rows` x that, plus one
//! row being gathered and the distinct verdict labels, whatever the run's
//! length: at the default 86 400 rows that is 7.9 MB, plus 0.7 MB per
//! counter (12.8 MB with 7 counters). [`Series::heap_bytes`] says what one
//! holds now. Serializing streams the columns (no copy); `analyse` borrows
//! about 100 bytes a row more while it runs (its working columns), the
//! plot a few thousand points.
//!
//! # Bounded for any run length
//!
//! When a row arrives and `max_rows` complete rows are held, adjacent pairs
//! merge ([`Row::merge`]): the interval doubles and `merges` counts how
//! often that happened. Rows arriving afterwards are gathered 2^merges at a
//! time into one row, so every stored row covers the same interval; the row
//! being gathered is visible as the last row (its `secs` says how much it
//! covers). A day at 1 s fits the default without a merge.

use std::collections::BTreeMap;

use serde::ser::{SerializeMap, SerializeSeq};

/// One interval's figures. What one end does not see is None.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// End of the interval, seconds since the run began.
    pub t_s: f64,
    /// The interval's length in seconds.
    pub secs: f64,
    pub sent_frames: Option<u64>,
    pub sent_bytes: Option<u64>,
    pub received_frames: Option<u64>,
    pub received_bytes: Option<u64>,
    /// Frames lost in the interval, where known.
    pub lost: Option<u64>,
    /// Each named counter's delta over the interval, in Series order.
    pub counters: Vec<u64>,
    /// p50, p99, p99.9 and max of the interval's timed probes, in ns.
    pub latency_ns: Option<[u64; 4]>,
    /// The receiver's verdict label for the interval.
    pub verdict: Option<String>,
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

impl Row {
    /// This row and the one after it as one row: `t_s` the later's, `secs`
    /// summed, counts and counter deltas summed (None + x = x), latency each
    /// percentile's **max** of the two (percentiles cannot be added; the max
    /// is an upper bound of the merged interval's percentile, exact for
    /// `max`), the verdict the later's (the earlier's where the later has
    /// none).
    pub fn merge(&self, later: &Row) -> Row {
        let n = self.counters.len().max(later.counters.len());
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        Row {
            t_s: later.t_s,
            secs: self.secs + later.secs,
            sent_frames: add(self.sent_frames, later.sent_frames),
            sent_bytes: add(self.sent_bytes, later.sent_bytes),
            received_frames: add(self.received_frames, later.received_frames),
            received_bytes: add(self.received_bytes, later.received_bytes),
            lost: add(self.lost, later.lost),
            counters: (0..n).map(|i| at(&self.counters, i).saturating_add(at(&later.counters, i))).collect(),
            latency_ns: match (self.latency_ns, later.latency_ns) {
                (Some(a), Some(b)) => Some(std::array::from_fn(|i| a[i].max(b[i]))),
                (a, b) => a.or(b),
            },
            verdict: later.verdict.clone().or_else(|| self.verdict.clone()),
        }
    }
}

/// What a named counter is: an allowance (the cloud's shaper said no) or
/// another watched xstat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CounterKind {
    Allowance,
    Watched,
}

/// One of the five count columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    SentFrames,
    SentBytes,
    ReceivedFrames,
    ReceivedBytes,
    Lost,
}

impl Count {
    pub const ALL: [Count; 5] = [Count::SentFrames, Count::SentBytes, Count::ReceivedFrames, Count::ReceivedBytes, Count::Lost];

    /// Its name in the JSON and the CSV header.
    pub fn name(self) -> &'static str {
        match self {
            Count::SentFrames => "sent_frames",
            Count::SentBytes => "sent_bytes",
            Count::ReceivedFrames => "received_frames",
            Count::ReceivedBytes => "received_bytes",
            Count::Lost => "lost",
        }
    }

    /// Its value in a row.
    pub fn of(self, row: &Row) -> Option<u64> {
        match self {
            Count::SentFrames => row.sent_frames,
            Count::SentBytes => row.sent_bytes,
            Count::ReceivedFrames => row.received_frames,
            Count::ReceivedBytes => row.received_bytes,
            Count::Lost => row.lost,
        }
    }
}

/// A missing value in a count column.
const MISSING: u64 = u64::MAX;
/// A missing verdict.
const NO_LABEL: u32 = u32::MAX;

fn enc(v: Option<u64>) -> u64 {
    v.map_or(MISSING, |x| x.min(MISSING - 1))
}

fn dec(v: u64) -> Option<u64> {
    (v != MISSING).then_some(v)
}

/// Room for one more value, never past `max` values.
fn grow<T>(v: &mut Vec<T>, max: usize) {
    if v.len() == v.capacity() {
        let extra = v.len().max(64).min(max.saturating_sub(v.len())).max(1);
        v.reserve_exact(extra);
    }
}

/// A run's rows as columns, bounded to `max_rows` (see the module doc).
#[derive(Debug, Clone)]
pub struct Series {
    base_interval_s: f64,
    merges: u32,
    max_rows: usize,
    counters: Vec<(String, CounterKind)>,
    t_s: Vec<f64>,
    secs: Vec<f64>,
    /// In `Count::ALL` order.
    counts: [Vec<u64>; 5],
    /// One column per named counter.
    deltas: Vec<Vec<u64>>,
    /// p50, p99, p99.9, max.
    latency: [Vec<u64>; 4],
    verdict: Vec<u32>,
    labels: Vec<String>,
    /// The row being gathered since the last complete one, and how many
    /// pushed rows it holds (fewer than 2^merges).
    pending: Option<(Row, u64)>,
    /// When the trial's own first and last frames were seen, seconds since
    /// the run began (see [`Series::trial_frames_at`]).
    trial: Option<(f64, f64)>,
}

impl Series {
    /// A day at 1 s.
    pub const DEFAULT_MAX_ROWS: usize = 86_400;

    /// An empty series of `interval_s` rows with these named counters,
    /// holding at most `max_rows` rows (at least 2).
    pub fn new(interval_s: f64, counters: Vec<(String, CounterKind)>, max_rows: usize) -> Series {
        let n = counters.len();
        Series {
            base_interval_s: interval_s,
            merges: 0,
            max_rows: max_rows.max(2),
            counters,
            t_s: Vec::new(),
            secs: Vec::new(),
            counts: Default::default(),
            deltas: vec![Vec::new(); n],
            latency: Default::default(),
            verdict: Vec::new(),
            labels: Vec::new(),
            pending: None,
            trial: None,
        }
    }

    /// The trial's own frames (the sender's: drop's probed frames, not a
    /// stray kernel frame) were seen moving at `t_s`: the first call marks
    /// where the trial's traffic began, the latest where it ended. The
    /// analysis starts and ends there, not at the first and last interval
    /// with any frame (an idle lead-in's stray frames are not the trial).
    pub fn trial_frames_at(&mut self, t_s: f64) {
        self.trial = Some(match self.trial {
            Some((first, _)) => (first, t_s),
            None => (t_s, t_s),
        });
    }

    /// When the trial's first and last frames were seen, if the tool said.
    pub fn trial_span(&self) -> Option<(f64, f64)> {
        self.trial
    }

    /// Bytes a stored row takes with `counters` named counters.
    pub const fn bytes_per_row(counters: usize) -> usize {
        92 + 8 * counters
    }

    /// The heap this series holds now (columns at their capacity, the
    /// labels, the row being gathered), in bytes.
    pub fn heap_bytes(&self) -> usize {
        let cols = self.t_s.capacity() * 8
            + self.secs.capacity() * 8
            + self.counts.iter().chain(&self.deltas).chain(&self.latency).map(|c| c.capacity() * 8).sum::<usize>()
            + self.verdict.capacity() * 4;
        let labels = self.labels.iter().map(|l| l.capacity() + 24).sum::<usize>();
        let pending = self.pending.as_ref().map_or(0, |(r, _)| r.counters.capacity() * 8 + r.verdict.as_ref().map_or(0, |v| v.capacity()));
        cols + labels + pending
    }

    /// Takes in the next interval's row. When `max_rows` complete rows are
    /// held, adjacent pairs merge first (the interval doubles), so memory
    /// stays bounded for any run length.
    pub fn push(&mut self, mut row: Row) {
        row.counters.resize(self.counters.len(), 0);
        if self.pending.is_none() && self.t_s.len() >= self.max_rows {
            self.halve();
        }
        let span = 1u64.checked_shl(self.merges).unwrap_or(u64::MAX);
        let (row, n) = match self.pending.take() {
            Some((p, n)) => (p.merge(&row), n + 1),
            None => (row, 1),
        };
        if n < span {
            self.pending = Some((row, n));
        } else {
            self.append(row);
        }
    }

    fn append(&mut self, row: Row) {
        let max = self.max_rows;
        grow(&mut self.t_s, max);
        self.t_s.push(row.t_s);
        grow(&mut self.secs, max);
        self.secs.push(row.secs);
        for (col, c) in self.counts.iter_mut().zip(Count::ALL) {
            grow(col, max);
            col.push(enc(c.of(&row)));
        }
        for (col, d) in self.deltas.iter_mut().zip(&row.counters) {
            grow(col, max);
            col.push((*d).min(MISSING - 1));
        }
        for (i, col) in self.latency.iter_mut().enumerate() {
            grow(col, max);
            col.push(enc(row.latency_ns.map(|l| l[i])));
        }
        let label = match row.verdict {
            None => NO_LABEL,
            Some(v) => match self.labels.iter().position(|l| *l == v) {
                Some(i) => i as u32,
                None => {
                    self.labels.push(v);
                    (self.labels.len() - 1) as u32
                }
            },
        };
        grow(&mut self.verdict, max);
        self.verdict.push(label);
    }

    /// Adjacent pairs of complete rows merge in place; an odd one out
    /// becomes the row being gathered.
    fn halve(&mut self) {
        let len = self.t_s.len();
        let odd = (len % 2 == 1).then(|| self.full_row(len - 1));
        let half = len / 2;
        for i in 0..half {
            let merged = self.full_row(2 * i).merge(&self.full_row(2 * i + 1));
            self.set(i, merged);
        }
        self.truncate(half);
        let old_span = 1u64.checked_shl(self.merges).unwrap_or(u64::MAX);
        self.merges += 1;
        self.pending = odd.map(|r| (r, old_span));
    }

    fn set(&mut self, i: usize, row: Row) {
        self.t_s[i] = row.t_s;
        self.secs[i] = row.secs;
        for (col, c) in self.counts.iter_mut().zip(Count::ALL) {
            col[i] = enc(c.of(&row));
        }
        for (col, d) in self.deltas.iter_mut().zip(&row.counters) {
            col[i] = (*d).min(MISSING - 1);
        }
        for (k, col) in self.latency.iter_mut().enumerate() {
            col[i] = enc(row.latency_ns.map(|l| l[k]));
        }
        // The merged verdict is one of the two rows' labels: already known.
        self.verdict[i] = row.verdict.and_then(|v| self.labels.iter().position(|l| *l == v)).map_or(NO_LABEL, |p| p as u32);
    }

    fn truncate(&mut self, n: usize) {
        self.t_s.truncate(n);
        self.secs.truncate(n);
        self.counts.iter_mut().chain(&mut self.deltas).chain(&mut self.latency).for_each(|c| c.truncate(n));
        self.verdict.truncate(n);
    }

    fn full_row(&self, i: usize) -> Row {
        let lat: [Option<u64>; 4] = std::array::from_fn(|k| dec(self.latency[k][i]));
        Row {
            t_s: self.t_s[i],
            secs: self.secs[i],
            sent_frames: dec(self.counts[0][i]),
            sent_bytes: dec(self.counts[1][i]),
            received_frames: dec(self.counts[2][i]),
            received_bytes: dec(self.counts[3][i]),
            lost: dec(self.counts[4][i]),
            counters: self.deltas.iter().map(|c| c[i]).collect(),
            latency_ns: lat[0].map(|_| lat.map(|v| v.unwrap_or(0))),
            verdict: self.label(self.verdict[i]).map(str::to_string),
        }
    }

    fn label(&self, i: u32) -> Option<&str> {
        self.labels.get(i as usize).map(String::as_str)
    }

    /// Rows held, the one being gathered included.
    pub fn len(&self) -> usize {
        self.t_s.len() + usize::from(self.pending.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The interval a stored row covers now (the first interval doubled at
    /// each merge).
    pub fn interval_s(&self) -> f64 {
        self.base_interval_s * 2f64.powi(self.merges as i32)
    }

    /// How many times adjacent rows were merged.
    pub fn merges(&self) -> u32 {
        self.merges
    }

    /// The most rows this series holds.
    pub fn max_rows(&self) -> usize {
        self.max_rows
    }

    /// Row `i` (the last may be the one being gathered). Panics past `len()`.
    pub fn row(&self, i: usize) -> Row {
        if i < self.t_s.len() {
            return self.full_row(i);
        }
        match &self.pending {
            Some((r, _)) if i == self.t_s.len() => r.clone(),
            _ => panic!("row {i} of a series of {} rows", self.len()),
        }
    }

    pub fn rows(&self) -> impl Iterator<Item = Row> + '_ {
        (0..self.len()).map(|i| self.row(i))
    }

    pub fn counters(&self) -> &[(String, CounterKind)] {
        &self.counters
    }

    fn last(&self) -> Option<&Row> {
        self.pending.as_ref().map(|(r, _)| r)
    }

    /// (t_s, secs) of each row.
    pub fn times(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.t_s.iter().copied().zip(self.secs.iter().copied()).chain(self.last().map(|r| (r.t_s, r.secs)))
    }

    /// One count column, row by row.
    pub fn count(&self, c: Count) -> impl Iterator<Item = Option<u64>> + '_ {
        self.counts[c as usize].iter().map(|&v| dec(v)).chain(self.last().map(|r| c.of(r)))
    }

    /// Whether any row has this count.
    pub fn has(&self, c: Count) -> bool {
        self.count(c).any(|v| v.is_some())
    }

    /// Counter `i`'s deltas (Series order), row by row.
    pub fn deltas(&self, i: usize) -> impl Iterator<Item = u64> + '_ {
        self.deltas[i].iter().copied().chain(self.last().map(move |r| r.counters[i]))
    }

    /// The latency percentiles (p50, p99, p99.9, max in ns), row by row.
    pub fn latency(&self) -> impl Iterator<Item = Option<[u64; 4]>> + '_ {
        (0..self.t_s.len())
            .map(|i| dec(self.latency[0][i]).map(|_| std::array::from_fn(|k| dec(self.latency[k][i]).unwrap_or(0))))
            .chain(self.last().map(|r| r.latency_ns))
    }

    /// The verdicts, row by row.
    pub fn verdicts(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        self.verdict.iter().map(|&v| self.label(v)).chain(self.last().map(|r| r.verdict.as_deref()))
    }
}

/// A column as a JSON array (null where a value is missing), from a
/// function that walks it.
struct Opt<F>(F);

impl<T: serde::Serialize, I: Iterator<Item = T>, F: Fn() -> I> serde::Serialize for Opt<F> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for v in (self.0)() {
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

/// Columns: `{"interval_s":1.0,"merges":0,"t_s":[..],"secs":[..],
/// "sent_frames":[..],..,"counters":{"NAME":{"kind":"allowance","deltas":[..]}},
/// "latency_ns":{"p50":[..],"p99":[..],"p999":[..],"max":[..]},"verdict":[..]}`.
/// A column nobody filled is left out; inside one, a missing value is null.
impl serde::Serialize for Series {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("interval_s", &self.interval_s())?;
        m.serialize_entry("merges", &self.merges)?;
        if let Some((first, last)) = self.trial {
            m.serialize_entry("trial_first_frame_s", &first)?;
            m.serialize_entry("trial_last_frame_s", &last)?;
        }
        m.serialize_entry("t_s", &Opt(|| self.times().map(|t| t.0)))?;
        m.serialize_entry("secs", &Opt(|| self.times().map(|t| t.1)))?;
        for c in Count::ALL {
            if self.has(c) {
                m.serialize_entry(c.name(), &Opt(|| self.count(c)))?;
            }
        }
        if !self.counters.is_empty() {
            struct Counter<'a>(&'a Series, usize);
            impl serde::Serialize for Counter<'_> {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    let mut m = s.serialize_map(Some(2))?;
                    m.serialize_entry("kind", &self.0.counters[self.1].1)?;
                    m.serialize_entry("deltas", &Opt(|| self.0.deltas(self.1)))?;
                    m.end()
                }
            }
            struct Counters<'a>(&'a Series);
            impl serde::Serialize for Counters<'_> {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    let mut m = s.serialize_map(Some(self.0.counters.len()))?;
                    for (i, (name, _)) in self.0.counters.iter().enumerate() {
                        m.serialize_entry(name, &Counter(self.0, i))?;
                    }
                    m.end()
                }
            }
            m.serialize_entry("counters", &Counters(self))?;
        }
        if self.latency().any(|l| l.is_some()) {
            struct Latency<'a>(&'a Series);
            impl serde::Serialize for Latency<'_> {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    let mut m = s.serialize_map(Some(4))?;
                    for (k, name) in ["p50", "p99", "p999", "max"].into_iter().enumerate() {
                        m.serialize_entry(name, &Opt(|| self.0.latency().map(move |l| l.map(|l| l[k]))))?;
                    }
                    m.end()
                }
            }
            m.serialize_entry("latency_ns", &Latency(self))?;
        }
        if self.verdicts().any(|v| v.is_some()) {
            m.serialize_entry("verdict", &Opt(|| self.verdicts()))?;
        }
        m.end()
    }
}

/// The JSON's shape: the schema's, and what a written series is read back
/// through (serializing streams the columns without building this).
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SeriesColumns {
    /// The interval one row covers now, seconds (doubled at each merge).
    interval_s: f64,
    /// How many times adjacent rows were merged to keep the series bounded.
    merges: u32,
    /// When the trial's own first frame was seen (drop: its first probed
    /// frame), seconds since the run began; the analysis starts there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trial_first_frame_s: Option<f64>,
    /// When the trial's own last frame was seen; the analysis ends there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trial_last_frame_s: Option<f64>,
    /// End of each interval, seconds since the run began.
    t_s: Vec<f64>,
    /// Each interval's length, seconds (the last row may be shorter).
    secs: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sent_frames: Option<Vec<Option<u64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sent_bytes: Option<Vec<Option<u64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    received_frames: Option<Vec<Option<u64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    received_bytes: Option<Vec<Option<u64>>>,
    /// Frames lost in each interval, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lost: Option<Vec<Option<u64>>>,
    /// Each named counter's delta per interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<BTreeMap<String, CounterColumn>>")]
    counters: Option<InOrder>,
    /// The interval's timed probes, ns; merged rows keep each percentile's max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    latency_ns: Option<LatencyColumns>,
    /// The receiver's verdict label per interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    verdict: Option<Vec<Option<String>>>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CounterColumn {
    kind: CounterKind,
    deltas: Vec<u64>,
}

/// The named counters in the order they were written (the series' order,
/// which a map sorted by name would lose).
struct InOrder(Vec<(String, CounterColumn)>);

impl<'de> serde::Deserialize<'de> for InOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<InOrder, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = InOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of counter names to their columns")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<InOrder, A::Error> {
                let mut named = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    named.push(entry);
                }
                Ok(InOrder(named))
            }
        }
        d.deserialize_map(Visit)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LatencyColumns {
    p50: Vec<Option<u64>>,
    p99: Vec<Option<u64>>,
    p999: Vec<Option<u64>>,
    max: Vec<Option<u64>>,
}

impl SeriesColumns {
    /// The series these columns hold, every row complete (none being
    /// gathered), or why they are not one: columns of different lengths.
    fn into_series(self) -> Result<Series, String> {
        let n = self.t_s.len();
        let counts = [self.sent_frames, self.sent_bytes, self.received_frames, self.received_bytes, self.lost];
        let counters = self.counters.map_or_else(Vec::new, |c| c.0);
        let latency = self.latency_ns.map(|l| [l.p50, l.p99, l.p999, l.max]);
        let mut lengths = std::iter::once(self.secs.len())
            .chain(counts.iter().flatten().map(Vec::len))
            .chain(counters.iter().map(|(_, c)| c.deltas.len()))
            .chain(latency.iter().flatten().map(Vec::len))
            .chain(self.verdict.iter().map(Vec::len));
        if let Some(len) = lengths.find(|&len| len != n) {
            return Err(format!("a series column has {len} rows where t_s has {n}"));
        }
        let named = counters.iter().map(|(name, c)| (name.clone(), c.kind)).collect();
        let base = self.interval_s / 2f64.powi(self.merges as i32);
        let mut series = Series::new(base, named, n.max(Series::DEFAULT_MAX_ROWS));
        series.merges = self.merges;
        series.trial = self.trial_first_frame_s.zip(self.trial_last_frame_s);
        let at = |col: &Option<Vec<Option<u64>>>, i: usize| col.as_ref().and_then(|c| c[i]);
        for i in 0..n {
            let lat = latency.as_ref().map(|l| [l[0][i], l[1][i], l[2][i], l[3][i]]);
            series.append(Row {
                t_s: self.t_s[i],
                secs: self.secs[i],
                sent_frames: at(&counts[0], i),
                sent_bytes: at(&counts[1], i),
                received_frames: at(&counts[2], i),
                received_bytes: at(&counts[3], i),
                lost: at(&counts[4], i),
                counters: counters.iter().map(|(_, c)| c.deltas[i]).collect(),
                latency_ns: lat.and_then(|l| l[0].map(|_| l.map(|v| v.unwrap_or(0)))),
                verdict: self.verdict.as_ref().and_then(|v| v[i].clone()),
            });
        }
        Ok(series)
    }
}

/// The inverse of `Serialize`: the columns read back into a series that
/// writes the same JSON.
impl<'de> serde::Deserialize<'de> for Series {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Series, D::Error> {
        SeriesColumns::deserialize(d)?.into_series().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Series {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Series".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut s = SeriesColumns::json_schema(g);
        s.insert(
            "description".into(),
            "A run's figures per interval, as columns (a column nobody filled is left out; a missing value is null)".into(),
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: f64, frames: u64) -> Row {
        Row { t_s: t, secs: 1.0, received_frames: Some(frames), counters: vec![t as u64], ..Row::default() }
    }

    #[test]
    fn merging_two_rows() {
        let a = Row {
            t_s: 1.0,
            secs: 1.0,
            sent_frames: Some(10),
            received_frames: None,
            lost: Some(1),
            counters: vec![1, 2],
            latency_ns: Some([10, 20, 30, 40]),
            verdict: Some("none".into()),
            ..Row::default()
        };
        let b = Row {
            t_s: 2.0,
            secs: 1.0,
            sent_frames: Some(5),
            received_frames: Some(4),
            counters: vec![3],
            latency_ns: Some([15, 5, 35, 30]),
            verdict: None,
            ..Row::default()
        };
        let m = a.merge(&b);
        assert_eq!(m.t_s, 2.0);
        assert_eq!(m.secs, 2.0);
        assert_eq!(m.sent_frames, Some(15));
        assert_eq!(m.received_frames, Some(4));
        assert_eq!(m.lost, Some(1));
        assert_eq!(m.sent_bytes, None);
        assert_eq!(m.counters, vec![4, 2]);
        assert_eq!(m.latency_ns, Some([15, 20, 35, 40]));
        assert_eq!(m.verdict.as_deref(), Some("none"));
    }

    #[test]
    fn rows_come_back_as_pushed() {
        let mut s = Series::new(1.0, vec![("c".into(), CounterKind::Allowance)], 10);
        let r = Row {
            t_s: 1.0,
            secs: 1.0,
            sent_frames: Some(7),
            latency_ns: Some([1, 2, 3, 4]),
            verdict: Some("pps-allowance".into()),
            counters: vec![9],
            ..Row::default()
        };
        s.push(r.clone());
        s.push(Row { t_s: 2.0, secs: 1.0, ..Row::default() });
        assert_eq!(s.len(), 2);
        assert_eq!(s.row(0), r);
        assert_eq!(s.row(1), Row { t_s: 2.0, secs: 1.0, counters: vec![0], ..Row::default() });
    }

    #[test]
    fn a_full_series_merges_pairs_and_keeps_intervals_even() {
        let mut s = Series::new(1.0, vec![("c".into(), CounterKind::Watched)], 4);
        for t in 1..=4 {
            s.push(row(t as f64, 10));
        }
        assert_eq!((s.len(), s.merges()), (4, 0));
        s.push(row(5.0, 10));
        // Pairs merged, the fifth row gathering towards the next 2 s row.
        assert_eq!((s.len(), s.merges(), s.interval_s()), (3, 1, 2.0));
        assert_eq!(s.row(0).t_s, 2.0);
        assert_eq!(s.row(0).secs, 2.0);
        assert_eq!(s.row(0).received_frames, Some(20));
        assert_eq!(s.row(0).counters, vec![3]);
        assert_eq!(s.row(2).secs, 1.0);
        s.push(row(6.0, 10));
        assert_eq!(s.len(), 3);
        assert_eq!(s.row(2).secs, 2.0);
        let total: u64 = s.count(Count::ReceivedFrames).flatten().sum();
        assert_eq!(total, 60);
        let secs: f64 = s.times().map(|t| t.1).sum();
        assert_eq!(secs, 6.0);
    }

    #[test]
    fn an_odd_maximum_keeps_the_odd_row_gathering() {
        let mut s = Series::new(1.0, vec![], 5);
        for t in 1..=100 {
            s.push(row(t as f64, 1));
            assert!(s.len() <= 5, "{} rows", s.len());
            let secs: f64 = s.times().map(|t| t.1).sum();
            assert_eq!(secs, t as f64);
            let n = s.len();
            // Every complete row covers the current interval.
            for (i, (_, secs)) in s.times().enumerate() {
                if i + 1 < n {
                    assert_eq!(secs, s.interval_s(), "row {i} after {t}");
                }
            }
        }
        assert_eq!(s.count(Count::ReceivedFrames).flatten().sum::<u64>(), 100);
    }

    #[test]
    fn json_is_columns_and_leaves_out_empty_ones() {
        let mut s = Series::new(1.0, vec![("pps_allowance_exceeded".into(), CounterKind::Allowance)], 100);
        s.push(Row { t_s: 1.0, secs: 1.0, received_frames: Some(5), counters: vec![0], ..Row::default() });
        s.push(Row {
            t_s: 2.0,
            secs: 1.0,
            received_frames: None,
            counters: vec![3],
            latency_ns: Some([1, 2, 3, 4]),
            verdict: Some("pps-allowance".into()),
            ..Row::default()
        });
        let v = serde_json::to_value(&s).unwrap();
        let want = serde_json::json!({
            "interval_s": 1.0, "merges": 0, "t_s": [1.0, 2.0], "secs": [1.0, 1.0],
            "received_frames": [5, null],
            "counters": {"pps_allowance_exceeded": {"kind": "allowance", "deltas": [0, 3]}},
            "latency_ns": {"p50": [null, 1], "p99": [null, 2], "p999": [null, 3], "max": [null, 4]},
            "verdict": [null, "pps-allowance"],
        });
        assert_eq!(v, want);
        let empty = serde_json::to_value(Series::new(1.0, vec![], 10)).unwrap();
        assert_eq!(empty, serde_json::json!({"interval_s": 1.0, "merges": 0, "t_s": [], "secs": []}));
    }

    #[test]
    fn a_series_reads_back_from_its_json_into_one_that_writes_the_same() {
        // Two counters out of name order, merged rows, a trial span and a
        // row still being gathered: the text (its key order included) is
        // written again from what was read.
        let counters = vec![("zz_watched".into(), CounterKind::Watched), ("aa_allowance".into(), CounterKind::Allowance)];
        let mut s = Series::new(0.5, counters, 4);
        s.trial_frames_at(0.7);
        for t in 1..=11 {
            let latency_ns = (t % 3 == 0).then_some([t, t + 1, t + 2, t + 3]);
            let verdict = (t % 4 == 0).then(|| "host-stall".to_string());
            s.push(Row {
                t_s: t as f64 / 2.0,
                secs: 0.5,
                sent_frames: Some(t * 10),
                lost: (t > 5).then_some(1),
                counters: vec![t, 0],
                latency_ns,
                verdict,
                ..Row::default()
            });
        }
        s.trial_frames_at(5.2);
        assert!(s.merges() > 0);
        let text = serde_json::to_string(&s).unwrap();
        let back: Series = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        assert_eq!(
            (back.interval_s(), back.merges(), back.trial_span(), back.len()),
            (s.interval_s(), s.merges(), s.trial_span(), s.len())
        );
        assert_eq!(back.rows().collect::<Vec<_>>(), s.rows().collect::<Vec<_>>());
        let empty = Series::new(1.0, vec![], 10);
        let text = serde_json::to_string(&empty).unwrap();
        assert_eq!(serde_json::to_string(&serde_json::from_str::<Series>(&text).unwrap()).unwrap(), text);
    }

    #[test]
    fn a_series_whose_columns_differ_in_length_is_refused() {
        let bad = r#"{"interval_s":1.0,"merges":0,"t_s":[1.0,2.0],"secs":[1.0],"sent_frames":[1,2]}"#;
        let e = serde_json::from_str::<Series>(bad).unwrap_err().to_string();
        assert!(e.contains("a series column has 1 rows where t_s has 2"), "{e}");
    }

    #[test]
    fn the_schema_names_the_columns() {
        let schema = serde_json::to_value(schemars::schema_for!(Series)).unwrap();
        let props = schema["properties"].as_object().unwrap();
        for key in ["interval_s", "merges", "t_s", "secs", "sent_frames", "received_bytes", "lost", "counters", "latency_ns", "verdict"] {
            assert!(props.contains_key(key), "{key} missing from {schema}");
        }
        let required: Vec<&str> = schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(required, ["interval_s", "merges", "t_s", "secs"]);
    }

    #[test]
    fn memory_stays_within_the_stated_bound() {
        let counters = vec![("a".into(), CounterKind::Allowance), ("b".into(), CounterKind::Watched)];
        let mut s = Series::new(1.0, counters, 1000);
        let bound = 1000 * Series::bytes_per_row(2) + 4096;
        for t in 1..=20_000 {
            s.push(Row { t_s: t as f64, secs: 1.0, received_frames: Some(1), counters: vec![1, 2], ..Row::default() });
            if t % 997 == 0 {
                assert!(s.heap_bytes() <= bound, "{} > {bound} after {t}", s.heap_bytes());
            }
        }
        assert!(s.heap_bytes() <= bound);
    }
}
