//! The record of a run a device call ended: when a DPDK call waited on a
//! device past --device-timeout, or a signal came while it waited
//! (`dpdk::deadline`), the run ends without its figures, and --json gets
//! this record instead, saying whether measuring had begun, why it ended
//! and which call on which device did not return (docs/json.md,
//! docs/schema/not-started.schema.json).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::fail::Failure;

static MEASURING: AtomicBool = AtomicBool::new(false);

/// Says that the run began measuring (drop counting, blast's first phase
/// sending): a record written after this does not say "never started".
pub fn began_measuring() {
    MEASURING.store(true, Ordering::Relaxed);
}

/// The --json record of a run that ended on a device call that did not
/// return: no figures, only what happened.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "NotStartedRecord")]
pub struct NotStarted {
    /// Whether the run had begun measuring (false: it never started, and
    /// nothing was measured; true: it ended before its record was written).
    pub started: bool,
    /// The line the run ended with.
    pub why: String,
    /// The exit code: 3 (the device did not answer in time) or 130 (a
    /// signal came while it waited).
    pub exit_code: u8,
    /// The device call that did not return.
    pub device_call: Option<DeviceCall>,
    /// The flags, as the tool's full record writes them.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub config: serde_json::Value,
}

/// The record: the header every record begins with (its flags kept last,
/// among its own fields), then what happened.
pub type Record = records::Record<records::NoMode, records::ConfigBelow, NotStarted>;

/// A DPDK call the run gave up waiting for.
#[derive(Serialize, schemars::JsonSchema)]
pub struct DeviceCall {
    /// The port's name: its PCI address, or the virtual device's name.
    pub device: String,
    /// The DPDK function, e.g. rte_eth_dev_start.
    pub call: String,
    /// Seconds it had waited when the run gave up on it.
    pub waited_s: f64,
    /// A signal, not --device-timeout, ended the wait.
    pub interrupted: bool,
}

/// Writes the record to `json` when `failure` is a device call given up
/// (nothing else wrote one); any other failure writes nothing, as before.
/// A failure to write is said on stderr: the run's own line says why it ended.
pub fn write_if_device_call(tool: &str, json: Option<&Path>, config: serde_json::Value, failure: &Failure) {
    let (Some(path), Some(given_up)) = (json, dpdk::deadline::given_up()) else { return };
    let body = NotStarted {
        started: MEASURING.load(Ordering::Relaxed),
        why: failure.message.clone(),
        exit_code: failure.code,
        device_call: Some(DeviceCall {
            device: given_up.device,
            call: given_up.call.to_owned(),
            waited_s: (given_up.waited.as_secs_f64() * 10.0).round() / 10.0,
            interrupted: given_up.interrupted,
        }),
        config,
    };
    let record = Record::new(tool, records::NoMode {}, records::ConfigBelow {}, body);
    if let Err(e) = crate::report::write_json(path, &record) {
        eprintln!("{tool}: {}", e.message);
    }
}

/// The record's JSON schema (`blast --generate-schema not-started`).
pub fn schema() -> schemars::Schema {
    records::schema_of::<Record>()
}
