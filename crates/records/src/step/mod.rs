//! One step as measured, as the record keeps it: both ends' figures over
//! the same window (`StepRecord`, its ports' and group's shares), the
//! repetitions aggregated, the stalls, and why a step failed, in words.
//! Their pure methods come with them; the tables and plots over them are
//! crates/ladder's.

use std::fmt;

mod cross_check;
mod rates;
mod record;
mod spread;
mod stalls;

pub use cross_check::{Basis, CrossCheck, Finding, BLAST_BELOW, NOT_BLAST_FROM};
pub use rates::Rates;
pub use record::{AchievedShape, Aggregate, GroupStep, PortStep, StepRecord};
pub use spread::{spread, Spread};
pub use stalls::{ms_text, StepStalls};

/// Why a step could not be measured, as the record keeps it: its sentence.
/// The typed reasons are the sender's (`blastdrop::sender::StepFailure`);
/// a record, written or read back, holds the words they were written as.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct StepFailure(pub String);

impl fmt::Display for StepFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl schemars::JsonSchema for StepFailure {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StepFailure".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "description": "Why the step could not be measured, in words", "type": "string" })
    }
    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_written_and_read_back_as_its_sentence() {
        let f = StepFailure("drop answered Bye to start_window".into());
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(json, r#""drop answered Bye to start_window""#);
        assert_eq!(serde_json::from_str::<StepFailure>(&json).unwrap(), f);
        assert_eq!(f.to_string(), "drop answered Bye to start_window");
    }
}
