//! Telling a good counter sample from garbage. On ENA every xstats read is
//! an admin command, and a failed one can hand back uninitialised values
//! (23.11+): a counter that goes backwards, or moves more than any NIC can
//! in the time between two reads, marks the sample invalid.

use serde::{Deserialize, Serialize};

/// No counter of packets or events moves faster than this per second
/// (well above any NIC's packet rate; far below uninitialised garbage).
pub const MAX_PLAUSIBLE_PER_SECOND: f64 = 1e10;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "state", content = "reason")]
pub enum SampleCheck {
    Valid,
    Invalid(String),
}

/// Checks the step from `before` to `after` over `seconds` for counters
/// named `names` (levels excluded by the caller).
pub fn check_step(names: &[String], before: &[u64], after: &[u64], seconds: f64) -> SampleCheck {
    let limit = MAX_PLAUSIBLE_PER_SECOND * seconds.max(1e-3);
    for ((name, &a), &b) in names.iter().zip(before).zip(after) {
        if b < a {
            return SampleCheck::Invalid(format!("{name} went backwards ({a} to {b})"));
        }
        if (b - a) as f64 > limit {
            return SampleCheck::Invalid(format!("{name} jumped by {} in {seconds:.3} s", b - a));
        }
    }
    SampleCheck::Valid
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn steady_counters_are_valid() {
        assert_eq!(check_step(&n(&["a", "b"]), &[10, 0], &[5_000_010, 0], 1.0), SampleCheck::Valid);
    }

    #[test]
    fn a_backwards_counter_marks_the_sample_invalid() {
        match check_step(&n(&["pps_allowance_exceeded"]), &[500], &[20], 1.0) {
            SampleCheck::Invalid(r) => assert!(r.contains("pps_allowance_exceeded went backwards")),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn an_absurd_jump_marks_the_sample_invalid() {
        // Uninitialised memory read as a counter.
        let garbage = 0xdead_beef_dead_beef;
        assert!(matches!(check_step(&n(&["x"]), &[1], &[garbage], 1.0), SampleCheck::Invalid(r) if r.contains("jumped")));
        assert_eq!(check_step(&n(&["x"]), &[1], &[9_000_000_001], 1.0), SampleCheck::Valid);
    }
}
