//! The record of a run a device call ended before its figures were in
//! (`blastdrop::unfinished` writes it; docs/json.md,
//! docs/schema/not-started.schema.json).

use serde::{Deserialize, Serialize};

/// The --json record of a run that ended on a device call that did not
/// return: no figures, only what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
pub type NotStartedRecord = crate::Record<crate::NoMode, crate::ConfigBelow, NotStarted>;

/// A DPDK call the run gave up waiting for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_not_started_record_reads_back_as_written() {
        let body = NotStarted {
            started: false,
            why: "drop: rte_eth_dev_start on net_null0 did not return within --device-timeout 1 s".into(),
            exit_code: 3,
            device_call: Some(DeviceCall {
                device: "net_null0".into(),
                call: "rte_eth_dev_start".into(),
                waited_s: 1.0,
                interrupted: false,
            }),
            config: serde_json::json!({ "port": ["net_null0"] }),
        };
        let r = NotStartedRecord::new("drop", crate::NoMode {}, crate::ConfigBelow {}, body);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.starts_with(r#"{"tool":"drop","schema_version":"#) && json.ends_with(r#""config":{"port":["net_null0"]}}"#), "{json}");
        assert_eq!(serde_json::from_str::<NotStartedRecord>(&json).unwrap(), r);
    }
}
