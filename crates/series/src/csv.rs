//! The series as CSV, written a row at a time as the run goes, each line
//! flushed at once so a killed run leaves a usable file.
//!
//! Columns: `t_s,secs,sent_frames,sent_bytes,received_frames,received_bytes,lost,`
//! each named counter's delta, `latency_p50_ns,latency_p99_ns,latency_p999_ns,latency_max_ns,verdict`;
//! an empty cell where a figure is missing.

use std::io::Write;

use crate::store::{Count, CounterKind, Row};

/// The columns before the counters'.
pub const LEADING_COLUMNS: [&str; 7] = ["t_s", "secs", "sent_frames", "sent_bytes", "received_frames", "received_bytes", "lost"];
/// The columns after the counters'.
pub const TRAILING_COLUMNS: [&str; 5] = ["latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "verdict"];

/// Writes rows as CSV lines to `W`.
pub struct CsvSink<W: Write> {
    w: ::csv::Writer<W>,
    counters: usize,
    cells: Vec<String>,
}

fn io(e: ::csv::Error) -> std::io::Error {
    match e.into_kind() {
        ::csv::ErrorKind::Io(e) => e,
        other => std::io::Error::other(format!("{other:?}")),
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

impl<W: Write> CsvSink<W> {
    /// Writes the header line (flushed).
    pub fn new(w: W, counters: &[(String, CounterKind)]) -> std::io::Result<Self> {
        let mut w = ::csv::WriterBuilder::new().flexible(false).from_writer(w);
        let header = LEADING_COLUMNS.iter().copied().chain(counters.iter().map(|c| c.0.as_str())).chain(TRAILING_COLUMNS);
        w.write_record(header).map_err(io)?;
        w.flush()?;
        Ok(CsvSink { w, counters: counters.len(), cells: Vec::new() })
    }

    /// One line for `row`, flushed at once.
    pub fn write(&mut self, row: &Row) -> std::io::Result<()> {
        self.cells.clear();
        self.cells.push(row.t_s.to_string());
        self.cells.push(row.secs.to_string());
        self.cells.extend(Count::ALL.iter().map(|c| opt(c.of(row))));
        self.cells.extend((0..self.counters).map(|i| opt(row.counters.get(i).copied())));
        self.cells.extend((0..4).map(|k| opt(row.latency_ns.map(|l| l[k]))));
        self.cells.push(row.verdict.clone().unwrap_or_default());
        self.w.write_record(&self.cells).map_err(io)?;
        self.w.flush()
    }

    /// The writer back (flushed).
    pub fn into_inner(self) -> std::io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_a_row() {
        let counters = vec![("pps_allowance_exceeded".to_string(), CounterKind::Allowance), ("rx_missed".into(), CounterKind::Watched)];
        let mut sink = CsvSink::new(Vec::new(), &counters).unwrap();
        sink.write(&Row {
            t_s: 2.0,
            secs: 1.0,
            sent_frames: Some(40000),
            sent_bytes: Some(20_480_000),
            received_frames: Some(39990),
            received_bytes: None,
            lost: Some(10),
            counters: vec![3],
            latency_ns: Some([1500, 9000, 20000, 41000]),
            verdict: Some("pps-allowance".into()),
        })
        .unwrap();
        sink.write(&Row { t_s: 2.5, secs: 0.5, ..Row::default() }).unwrap();
        let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "t_s,secs,sent_frames,sent_bytes,received_frames,received_bytes,lost,pps_allowance_exceeded,rx_missed,\
                 latency_p50_ns,latency_p99_ns,latency_p999_ns,latency_max_ns,verdict",
                "2,1,40000,20480000,39990,,10,3,,1500,9000,20000,41000,pps-allowance",
                "2.5,0.5,,,,,,,,,,,,",
            ]
        );
    }

    #[test]
    fn each_line_is_on_disk_as_soon_as_it_is_written() {
        let path = std::env::temp_dir().join(format!("series-csv-test-{}.csv", std::process::id()));
        let mut sink = CsvSink::new(std::fs::File::create(&path).unwrap(), &[]).unwrap();
        sink.write(&Row { t_s: 1.0, secs: 1.0, received_frames: Some(5), ..Row::default() }).unwrap();
        // Not dropped, not flushed by hand: the line is there already.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert_eq!(text.lines().nth(1), Some("1,1,,,5,,,,,,,"));
        drop(sink);
        std::fs::remove_file(path).unwrap();
    }
}
