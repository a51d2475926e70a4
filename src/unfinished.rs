//! The record of a run a device call ended: when a DPDK call waited on a
//! device past --device-timeout, or a signal came while it waited
//! (`dpdk::deadline`), the run ends without its figures, and --json gets
//! this record instead, saying whether measuring had begun, why it ended
//! and which call on which device did not return (docs/json.md,
//! docs/schema/not-started.schema.json).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use records::not_started::{DeviceCall, NotStarted, NotStartedRecord as Record};

use crate::error::Error;

static MEASURING: AtomicBool = AtomicBool::new(false);

/// Says that the run began measuring (drop counting, blast's first phase
/// sending): a record written after this does not say "never started".
pub fn began_measuring() {
    MEASURING.store(true, Ordering::Relaxed);
}

/// Writes the record to `json` when the run's failure (`why`, the line the
/// user reads, and its `exit_code`) is a device call given up (nothing else
/// wrote one); any other failure writes nothing, as before.
pub fn write_if_device_call(tool: &str, json: Option<&Path>, config: serde_json::Value, why: &str, exit_code: u8) -> Result<(), Error> {
    let (Some(path), Some(given_up)) = (json, dpdk::deadline::given_up()) else { return Ok(()) };
    let body = NotStarted {
        started: MEASURING.load(Ordering::Relaxed),
        why: why.to_owned(),
        exit_code,
        device_call: Some(DeviceCall {
            device: given_up.device,
            call: given_up.call.to_owned(),
            waited_s: (given_up.waited.as_secs_f64() * 10.0).round() / 10.0,
            interrupted: given_up.interrupted,
        }),
        config,
    };
    let record = Record::new(tool, records::NoMode {}, records::ConfigBelow {}, body);
    crate::record_file::write_json(path, &record)
}

/// The record's JSON schema (`blast --generate-schema not-started`).
pub fn schema() -> schemars::Schema {
    records::schema_of::<Record>()
}
