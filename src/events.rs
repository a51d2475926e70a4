//! `--events FILE|-`: the run as JSON lines while it goes, for scripts
//! that watch a long ladder or knee. Every line is one object with
//! `event` (start, tick, step, trial, window, end), `tool`, and `time`
//! (seconds since the Unix epoch), then the event's own fields
//! (docs/json.md, "Events"). The last line is always `end`.
//!
//! Written from the main thread only (never from a lane), flushed per line.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;

use crate::error::Error;

struct Sink {
    tool: &'static str,
    out: Box<dyn Write + Send>,
}

static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Opens the stream: a file (created or truncated), or stdout for `-`
/// (human lines then go to stderr).
pub fn open(tool: &'static str, path: &Path) -> Result<(), Error> {
    let out: Box<dyn Write + Send> = if crate::out::is_stdout(path) {
        crate::out::human_to_stderr();
        Box::new(std::io::stdout())
    } else {
        Box::new(std::fs::File::create(path).map_err(|source| Error::EventsWrite { path: path.to_path_buf(), source })?)
    };
    *SINK.lock().unwrap_or_else(|e| e.into_inner()) = Some(Sink { tool, out });
    Ok(())
}

/// Whether a stream is open (callers skip building an event otherwise).
pub fn enabled() -> bool {
    SINK.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Writes one line: `event`, `tool`, `time`, then `body`'s fields (an
/// object; anything else goes under `data`).
pub fn emit<T: Serialize>(event: &str, body: &T) {
    let mut guard = SINK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sink) = guard.as_mut() else { return };
    let time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    let mut line = serde_json::Map::new();
    line.insert("event".into(), event.into());
    line.insert("tool".into(), sink.tool.into());
    line.insert("time".into(), time.into());
    match serde_json::to_value(body) {
        Ok(serde_json::Value::Object(m)) => line.extend(m),
        Ok(serde_json::Value::Null) => {}
        Ok(v) => {
            line.insert("data".into(), v);
        }
        Err(e) => {
            line.insert("error".into(), format!("cannot encode the event: {e}").into());
        }
    }
    let text = serde_json::Value::Object(line).to_string();
    // A reader that went away must not stop the run.
    let _ = writeln!(sink.out, "{text}").and_then(|_| sink.out.flush());
}

/// The last line: how the run ended. Closes the stream.
pub fn end(ok: bool, error: Option<&str>) {
    #[derive(Serialize, schemars::JsonSchema)]
    struct End<'a> {
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    }
    emit("end", &End { ok, error });
    *SINK.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

impl TickEvent {
    pub fn new(
        tick: &crate::live::Tick,
        side: &'static str,
        r: &crate::figures::Rates,
        queues: Vec<f64>,
        limit: Option<String>,
    ) -> TickEvent {
        TickEvent { elapsed: tick.elapsed.as_secs_f64(), side, mpps: r.mpps, wire_gbps: r.wire_gbps, queues, limit }
    }
}

/// A live second's figures, as both tools tick.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TickEvent {
    /// Seconds since the run (or phase) began.
    pub elapsed: f64,
    /// "sent" (blast, sender-side) or "received" (drop, receiver-side).
    pub side: &'static str,
    pub mpps: f64,
    pub wire_gbps: f64,
    /// Each queue's Mpps over the second.
    pub queues: Vec<f64>,
    /// The second's verdict where the tool has one (drop), else null.
    pub limit: Option<String>,
}

/// One line of `--events`, as its JSON schema describes it.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Event")]
#[allow(dead_code)] // describes the JSON only
struct EventLine {
    /// "blast" or "drop".
    tool: String,
    /// Seconds since the Unix epoch.
    time: f64,
    #[serde(flatten)]
    event: EventKind,
}

#[derive(Serialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "lowercase")]
#[allow(dead_code)] // describes the JSON only
enum EventKind {
    /// Once, before the EAL starts.
    Start {
        version: String,
        /// blast's mode: single, ladder, knee or replay.
        #[serde(skip_serializing_if = "Option::is_none")]
        mode: Option<String>,
        /// The flags, as in the record's `config`.
        config: serde_json::Value,
    },
    /// Once a second while frames move.
    Tick(TickEvent),
    /// blast: each measured ladder step and knee trial.
    Step(Box<ladder::StepRecord>),
    /// blast --cross-check: each C lanes' window, measured as its step was,
    /// after that step's own `step` event (written as the step ended,
    /// before the cross-check: the record's step has the finding).
    #[serde(rename = "cross_check_window")]
    CrossCheckWindow(Box<ladder::StepRecord>),
    /// drop --listen: each window served.
    Window(Box<control::WindowFigures>),
    /// Always last.
    End {
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// The JSON schema of one `--events` line.
pub fn schema() -> schemars::Schema {
    records::schema_of::<EventLine>()
}
