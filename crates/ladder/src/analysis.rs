use records::ladder::{Ceiling, Crossover, SizeVerdict, ABOVE_PUBLISHED};

/// `points` are (queues, Mpps) in increasing queue order. The ceiling is
/// the first step after which more queues no longer raise Mpps by at least
/// `threshold` (0.05 for 5%).
pub fn find_ceiling(points: &[(u16, f64)], threshold: f64) -> Option<Ceiling> {
    let first = points.first()?;
    let per_q0 = first.1 / f64::from(first.0.max(1));
    let stall = points.windows(2).position(|w| w[1].1 < w[0].1 * (1.0 + threshold));
    let (idx, reached) = match stall {
        Some(i) => (i, true),
        None => (points.len() - 1, false),
    };
    let linear_before = points[..=idx].iter().all(|&(q, m)| m / f64::from(q.max(1)) >= 0.9 * per_q0);
    Some(Ceiling { reached, queues: points[idx].0, mpps: points[idx].1, linear_before, mpps_per_queue_first: per_q0 })
}

/// `best` holds (frame size, best Gb/s at that size).
pub fn crossover(best: &[(u32, f64)], published_gbps: f64) -> Crossover {
    let mut sizes: Vec<SizeVerdict> = best
        .iter()
        .map(|&(size, gbps)| SizeVerdict {
            size,
            gbps,
            held_by: if gbps > published_gbps * ABOVE_PUBLISHED {
                "above published"
            } else if gbps >= published_gbps * 0.97 {
                "bandwidth"
            } else {
                "packet rate"
            }
            .into(),
        })
        .collect();
    sizes.sort_by_key(|s| s.size);
    let published_exceeded = sizes.iter().any(|s| s.held_by == "above published");
    let first_size = if published_exceeded { None } else { sizes.iter().find(|s| s.held_by == "bandwidth").map(|s| s.size) };
    Crossover { published_gbps, first_size, sizes, published_exceeded }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ladder_has_no_ceiling() {
        let pts: Vec<(u16, f64)> = [1u16, 2, 4, 8, 16].iter().map(|&q| (q, 2.0 * f64::from(q))).collect();
        let c = find_ceiling(&pts, 0.05).unwrap();
        assert!(!c.reached);
        assert_eq!(c.queues, 16);
        assert!(c.linear_before);
        assert_eq!(c.mpps_per_queue_first, 2.0);
    }

    #[test]
    fn plateau_ceiling_is_the_first_step_that_stops_paying() {
        // 36.6 Mpps at 24 queues, flat to 64 (the c8gn.12xlarge shape).
        let pts = [(1, 1.6), (2, 3.2), (4, 6.4), (8, 12.8), (16, 25.0), (24, 36.6), (32, 36.7), (64, 36.6)];
        let c = find_ceiling(&pts, 0.05).unwrap();
        assert!(c.reached);
        assert_eq!((c.queues, c.mpps), (24, 36.6));
        assert!(c.linear_before, "1.6 x 24 = 38.4, and 36.6 keeps 95% of it");
    }

    #[test]
    fn falling_ladder_ceiling_before_the_fall() {
        // c8gn.8xlarge: peak at 16 queues, worse beyond.
        let pts = [(1, 1.8), (2, 3.6), (4, 7.0), (8, 13.0), (16, 21.0), (24, 18.0), (32, 17.0)];
        let c = find_ceiling(&pts, 0.05).unwrap();
        assert_eq!((c.queues, c.mpps), (16, 21.0));
        assert!(!c.linear_before, "21/16 = 1.31 per queue is under 90% of 1.8");
    }

    #[test]
    fn growth_under_the_threshold_counts_as_a_stall() {
        let c = find_ceiling(&[(1, 10.0), (2, 10.4), (4, 20.0)], 0.05).unwrap();
        assert_eq!(c.queues, 1);
        assert!(find_ceiling(&[], 0.05).is_none());
    }

    #[test]
    fn size_crossover_at_the_first_size_meeting_published_bandwidth() {
        // 100G with a ~21 Mpps ceiling: 64 B -> 10.8 Gb/s, 512 B -> 86, 640 B -> 99, 1500 -> 99.5.
        let best = [(1500, 99.5), (64, 10.8), (512, 86.0), (640, 98.9), (9000, 99.8)];
        let x = crossover(&best, 100.0);
        assert_eq!(x.first_size, Some(640));
        let held: Vec<(u32, &str)> = x.sizes.iter().map(|s| (s.size, s.held_by.as_str())).collect();
        assert_eq!(held, [(64, "packet rate"), (512, "packet rate"), (640, "bandwidth"), (1500, "bandwidth"), (9000, "bandwidth")]);
        assert_eq!(crossover(&[(64, 10.0)], 100.0).first_size, None);
        // memif at 1500 B: 3.1 Gb/s against a published 1 Gb/s.
        let x = crossover(&[(64, 0.9), (1518, 3.1072)], 1.0);
        assert!(x.published_exceeded);
        assert_eq!(x.first_size, None, "no crossover against a figure the port exceeds");
        assert_eq!(x.sizes[1].held_by, "above published");
        assert_eq!(x.sizes[0].held_by, "packet rate");
        assert_eq!(
            x.exceeded_note().unwrap(),
            "1518 B carried 310.72% of the published 1 Gb/s: that figure does not bound this port (a software port, or the wrong --published-gbps); no crossover is claimed"
        );
        // 3% over is still within the figure.
        let x = crossover(&[(1518, 1.03)], 1.0);
        assert!(!x.published_exceeded && x.first_size == Some(1518) && x.exceeded_note().is_none());
    }
}
