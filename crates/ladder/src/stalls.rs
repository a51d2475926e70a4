//! A shape that bunched: the lanes fell behind an even or Poisson
//! schedule and caught up (what a stall says about a latency tail is the
//! step record's: `records::step::StepStalls`).

use records::step::ms_text;
use records::window::LaneStalls;

use crate::AchievedShape;

/// The share of an even or Poisson shape's frames that may go out bunched
/// with an earlier one before blast says the shape did not hold.
pub const BUNCHED_SHARE_NOTED: f64 = 0.05;

/// Why an even or Poisson shape did not hold, when more than
/// `BUNCHED_SHARE_NOTED` of its frames went out together with an earlier
/// one: the lane fell behind its schedule and caught up in one send, so
/// those frames arrived as a burst, not as the shape asked. Names what the
/// lane saw hold it back: a full queue (the device or receiver), its own
/// stalls, the hypervisor's steal, or nothing it could see (held up for
/// under a stall's 1 ms at a time). None when the shape held, and for
/// burst and open shapes (a burst is always whole).
pub fn bunched(
    shape: pace::Shape,
    a: &AchievedShape,
    ring_full_retries: u64,
    stalls: &LaneStalls,
    steal_pct: Option<f64>,
) -> Option<String> {
    if !matches!(shape, pace::Shape::Even | pace::Shape::Poisson) || a.frames_per_send <= 1.0 {
        return None;
    }
    // Every send carries at least one frame: the rest went out early-due.
    let share = 1.0 - 1.0 / a.frames_per_send;
    if share <= BUNCHED_SHARE_NOTED {
        return None;
    }
    let mut causes = Vec::new();
    if ring_full_retries > 0 {
        causes.push(format!("the queue was full {ring_full_retries} time(s) (the device or the receiver held frames back)"));
    }
    if stalls.count > 0 {
        let queue = stalls.longest_queue.map_or(String::new(), |q| format!(", queue {q}"));
        causes.push(format!(
            "the lanes stood still {} time(s), {} in all (longest {}{queue})",
            stalls.count,
            ms_text(stalls.total_ms),
            ms_text(stalls.longest_ms)
        ));
    }
    if let Some(p) = steal_pct.filter(|&p| p >= 1.0) {
        causes.push(format!("the hypervisor took {p:.1}% of the host's CPU time (steal)"));
    }
    if causes.is_empty() {
        causes.push("nothing the lanes saw: held up for under 1 ms at a time (another process or the kernel on their CPU)".into());
    }
    Some(format!(
        "{:.1}% of the frames went out bunched with an earlier one (max {} in one send): the lanes fell behind the {shape} schedule and caught up, so those arrived as bursts; held back by {}",
        share * 100.0,
        a.max_frames_per_send,
        causes.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(frames_per_send: f64) -> AchievedShape {
        AchievedShape { sends: 1000, frames_per_send, max_frames_per_send: 32, ..Default::default() }
    }

    #[test]
    fn a_shape_that_bunched_says_so_and_names_what_held_it_back() {
        use pace::Shape;
        let none = LaneStalls::default();
        // The failed CI run's figures: 1.116 frames per send at even 200k.
        let n = bunched(Shape::Even, &shape(1.1157689855177388), 0, &none, Some(0.0)).unwrap();
        assert!(n.starts_with("10.4% of the frames went out bunched with an earlier one (max 32 in one send)"), "{n}");
        assert!(
            n.ends_with(
                "held back by nothing the lanes saw: held up for under 1 ms at a time (another process or the kernel on their CPU)"
            ),
            "{n}"
        );
        let stalled = LaneStalls { count: 3, longest_ms: 40.0, total_ms: 61.5, longest_queue: Some(0) };
        let n = bunched(Shape::Poisson, &shape(1.5), 12, &stalled, Some(7.25)).unwrap();
        assert!(n.contains("33.3% of the frames") && n.contains("poisson schedule"), "{n}");
        assert!(n.contains("the queue was full 12 time(s)"), "{n}");
        assert!(n.contains("the lanes stood still 3 time(s), 61.5 ms in all (longest 40.0 ms, queue 0)"), "{n}");
        assert!(n.contains("the hypervisor took 7.2% of the host's CPU time (steal)") && !n.contains("nothing the lanes saw"), "{n}");
        // Within the noted share, and shapes that are never bunched this way.
        assert_eq!(bunched(Shape::Even, &shape(1.05), 0, &none, None), None);
        assert_eq!(bunched(Shape::Even, &shape(1.0), 5, &stalled, None), None);
        assert_eq!(bunched(Shape::Burst(16), &shape(16.0), 0, &none, None), None);
        assert_eq!(bunched(Shape::Open, &shape(31.0), 0, &none, None), None);
    }
}
