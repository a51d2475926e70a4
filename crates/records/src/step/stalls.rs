//! Lanes that stood still during a trial, and what that says about a
//! latency tail: a probe whose lane was stopped by the host for 1.5 s waited
//! 1.5 s, which is a fact about the host, not the path.

use serde::{Deserialize, Serialize};

use crate::window::LaneStalls;

/// Both ends' stalls over one trial, and each host's steal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepStalls {
    pub sender: LaneStalls,
    /// None: drop did not say (no --peer, or an older drop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<LaneStalls>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_host_steal_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_host_steal_pct: Option<f64>,
}

/// A tail shorter than this is no lane stall's doing (a stall is at least
/// counters' STALL_MS, 1 ms, long).
const TAIL_US: f64 = 1000.0;

impl StepStalls {
    /// The longest stall on either end, in words ("a sender lane (queue 0)
    /// stood still for 1.52 s"), with its length in microseconds.
    pub fn longest(&self) -> Option<(f64, String)> {
        let ends = [
            ("sender", Some(&self.sender), self.sender_host_steal_pct),
            ("receiver", self.receiver.as_ref(), self.receiver_host_steal_pct),
        ];
        ends.into_iter()
            .filter_map(|(end, s, steal)| s.filter(|s| s.count > 0).map(|s| (end, s, steal)))
            .max_by(|a, b| a.1.longest_ms.total_cmp(&b.1.longest_ms))
            .map(|(end, s, steal)| {
                let queue = s.longest_queue.map_or(String::new(), |q| format!(" (queue {q})"));
                let by = match steal {
                    Some(p) if p >= 1.0 => format!("the hypervisor took {p:.1}% of the host's CPU time (steal)"),
                    _ => "descheduled on its host (another process or the kernel took its CPU)".to_string(),
                };
                let what = format!(
                    "a {end} lane{queue} stood still for {} ({} stall(s) in the trial, {} in all): {by}",
                    ms_text(s.longest_ms),
                    s.count,
                    ms_text(s.total_ms)
                );
                (s.longest_ms * 1e3, what)
            })
    }

    /// What the latency tail (P99.9 and the maximum) says, when it is long
    /// enough to say anything: caused by a stall (it is about as long as
    /// the longest, or longer), or the path's own (no lane stood still on
    /// either end). None for a short tail.
    pub fn tail_cause(&self, l: &latency::LatencySummary) -> Option<String> {
        if l.count == 0 || l.max_us < TAIL_US {
            return None;
        }
        let tail = format!("P99.9 {} us, max {} us", l.p99_9_us.round(), l.max_us.round());
        Some(match self.longest() {
            // A probe waits out the stall, then the backlog it built: up to
            // about twice the stall, and never much less than half of it
            // for the frames that were in flight when it began.
            Some((stall_us, what)) if l.max_us >= stall_us * 0.5 && l.max_us <= self.worst_wait_us() + TAIL_US => {
                format!("{tail}: {what}; the tail is the host's, not the path's")
            }
            Some((stall_us, what)) if l.max_us < stall_us * 0.5 => {
                format!("{tail}: {what}, yet no probe waited that long (the stall fell where no probe was in flight)")
            }
            Some((_, what)) => format!("{tail}: longer than any stall ({what}), so the path's own"),
            None if self.receiver.is_some() => format!("{tail} with no lane standing still on either end: the path's own"),
            None => format!("{tail}; no sender lane stood still (the receiver's lanes were not watched)"),
        })
    }

    /// The longest a probe could wait on stalls: out the longest on each
    /// end (a probe can meet one at the sender and one at the receiver),
    /// then the backlog each built, about as long again.
    fn worst_wait_us(&self) -> f64 {
        let longest = |s: Option<&LaneStalls>| s.map_or(0.0, |s| s.longest_ms * 1e3);
        2.0 * (longest(Some(&self.sender)) + longest(self.receiver.as_ref()))
    }

    /// Whether the tail is put down to a stall.
    pub fn explains(cause: &str) -> bool {
        cause.contains("the tail is the host's")
    }
}

/// A length of time in milliseconds, in words: "1.52 s" or "40.0 ms".
pub fn ms_text(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else {
        format!("{ms:.1} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(p99_9: f64, max: f64) -> latency::LatencySummary {
        latency::LatencySummary { count: 1_000_000, p99_9_us: p99_9, max_us: max, p50_us: 5.0, ..Default::default() }
    }

    #[test]
    fn a_tail_as_long_as_a_stall_is_the_hosts() {
        let s = StepStalls {
            sender: LaneStalls { count: 2, longest_ms: 1520.0, total_ms: 1523.0, longest_queue: Some(0) },
            receiver: Some(LaneStalls::default()),
            sender_host_steal_pct: Some(0.0),
            receiver_host_steal_pct: Some(0.0),
        };
        let c = s.tail_cause(&tail(1_563_427.0, 1_565_524.0)).unwrap();
        assert!(
            c.starts_with(
                "P99.9 1563427 us, max 1565524 us: a sender lane (queue 0) stood still for 1.52 s (2 stall(s) in the trial, 1.52 s in all)"
            ),
            "{c}"
        );
        assert!(StepStalls::explains(&c) && c.contains("descheduled"), "{c}");
        // One stall on each end: a probe may wait out both.
        let both =
            StepStalls { receiver: Some(LaneStalls { count: 1, longest_ms: 8.0, total_ms: 8.0, longest_queue: Some(0) }), ..s.clone() };
        let both = StepStalls { sender: LaneStalls { longest_ms: 8.1, ..both.sender }, ..both };
        assert!(StepStalls::explains(&both.tail_cause(&tail(20_087.0, 20_300.0)).unwrap()));
        // A tail far longer than the stall is the path's.
        let c = s.tail_cause(&tail(9_000_000.0, 9_500_000.0)).unwrap();
        assert!(!StepStalls::explains(&c) && c.contains("path's own"), "{c}");
        // A short tail says nothing.
        assert_eq!(s.tail_cause(&tail(40.0, 300.0)), None);
    }

    #[test]
    fn a_long_tail_with_no_stall_is_the_paths_and_steal_is_named() {
        let quiet = StepStalls { receiver: Some(LaneStalls::default()), ..Default::default() };
        let c = quiet.tail_cause(&tail(2000.0, 5000.0)).unwrap();
        assert!(c.contains("no lane standing still on either end: the path's own"), "{c}");
        let stolen = StepStalls {
            receiver: Some(LaneStalls { count: 1, longest_ms: 12.0, total_ms: 12.0, longest_queue: Some(1) }),
            receiver_host_steal_pct: Some(30.0),
            ..Default::default()
        };
        let c = stolen.tail_cause(&tail(9000.0, 11_000.0)).unwrap();
        assert!(c.contains("a receiver lane (queue 1) stood still for 12.0 ms") && c.contains("steal"), "{c}");
    }
}
