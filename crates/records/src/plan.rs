//! A ladder's plan: every step (queue count x frame size x offered
//! traffic) in the order it runs, as blast plans it from its lists and as
//! the ladder's record keeps it; the lists' parsing.

use serde::{Deserialize, Serialize};

/// Why a ladder list or order was refused. `what` names the quantity
/// ("queue count", "frame size").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("{0:?} is not an order: use size-major or queue-major")]
    NotAnOrder(String),
    #[error("{what} must be at least 1")]
    Zero { what: String },
    #[error("{what} {value} is above {max}")]
    AboveMax { what: String, value: u64, max: u64 },
    #[error("{text:?} is not a {what}: write a number, a list like 1,2,4 or a doubling range like 1..32")]
    NotANumber { what: String, text: String },
    #[error("{what} range {range:?} runs backwards")]
    Backwards { what: String, range: String },
    #[error("{what} list {list:?} repeats a value")]
    Repeats { what: String, list: String },
}

/// The order steps run in when both lists have several entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// For each frame size, every queue count: one queue curve per size.
    #[default]
    SizeMajor,
    /// For each queue count, every frame size.
    QueueMajor,
}

impl std::str::FromStr for Order {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Order, PlanError> {
        match s {
            "size-major" => Ok(Order::SizeMajor),
            "queue-major" => Ok(Order::QueueMajor),
            _ => Err(PlanError::NotAnOrder(s.to_string())),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepSpec {
    pub queues: u16,
    pub size: u32,
    /// Frames per second over all queues (None: unpaced), and their arrival shape.
    pub rate: Option<f64>,
    pub shape: pace::Shape,
}

/// Every step of a run, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ladder {
    pub queues: Vec<u16>,
    pub sizes: Vec<u32>,
    /// The offered rates (empty: unpaced) and shapes every (queues, size) runs at.
    pub rates: Vec<f64>,
    pub shapes: Vec<pace::Shape>,
    pub order: Order,
    pub steps: Vec<StepSpec>,
    /// Queue counts asked for that a device cannot take, left out before
    /// the first step (empty when every count fits).
    pub dropped: Vec<DroppedQueues>,
}

/// Queue counts left out of a ladder: beyond what a port can take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DroppedQueues {
    /// The queue counts not run.
    pub queues: Vec<u16>,
    /// The port whose limit they pass, as it names itself ("drop's port
    /// net_memif0 (net_memif)").
    pub port: String,
    /// The most that port takes.
    pub limit: u16,
    /// What the limit is ("RX queues", "worker lcores").
    pub what: String,
}

impl DroppedQueues {
    /// One line saying what was left out and why.
    pub fn line(&self) -> String {
        let counts: Vec<String> = self.queues.iter().map(|q| q.to_string()).collect();
        format!(
            "queue count(s) {} left out of the ladder: {} has at most {} {}; the other steps run",
            counts.join(", "),
            self.port,
            self.limit,
            self.what
        )
    }
}

/// What became of a ladder fitted to a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// Every queue count fits.
    Whole,
    /// Some counts were left out; the rest run.
    Pruned(DroppedQueues),
    /// None would fit, or only one count was asked for: refuse as before.
    Refused,
}

impl Ladder {
    /// Unpaced steps: queues x sizes in `order`.
    pub fn new(queues: Vec<u16>, sizes: Vec<u32>, order: Order) -> Ladder {
        let open = pace::Shape::Open;
        let mut steps = Vec::with_capacity(queues.len() * sizes.len());
        let step = |q: u16, size: u32| StepSpec { queues: q, size, rate: None, shape: open };
        match order {
            Order::SizeMajor => {
                for &size in &sizes {
                    steps.extend(queues.iter().map(|&q| step(q, size)));
                }
            }
            Order::QueueMajor => {
                for &q in &queues {
                    steps.extend(sizes.iter().map(|&size| step(q, size)));
                }
            }
        }
        Ladder { queues, sizes, rates: Vec::new(), shapes: vec![open], order, steps, dropped: Vec::new() }
    }

    /// Every (queues, size) at each rate (empty: unpaced), and at each rate
    /// every shape: the shapes of one rate run back to back, so a rate's
    /// even and bursty results sit side by side.
    pub fn with_traffic(mut self, rates: Vec<f64>, shapes: Vec<pace::Shape>) -> Ladder {
        let paced: Vec<Option<f64>> = if rates.is_empty() { vec![None] } else { rates.iter().copied().map(Some).collect() };
        let mut steps = Vec::with_capacity(self.steps.len() * paced.len() * shapes.len());
        for s in &self.steps {
            for &rate in &paced {
                steps.extend(shapes.iter().map(|&shape| StepSpec { rate, shape, ..*s }));
            }
        }
        self.steps = steps;
        (self.rates, self.shapes) = (rates, shapes);
        self
    }

    /// The steps' traffic in words: "burst:32 arrivals at 0.100 Mpps",
    /// "open arrivals", or the lists when they vary.
    pub fn traffic(&self) -> String {
        let shapes: Vec<String> = self.shapes.iter().map(|s| s.to_string()).collect();
        let rates: Vec<String> = self.rates.iter().map(|r| format!("{:.3}", r / 1e6)).collect();
        match (shapes.as_slice(), rates.as_slice()) {
            ([one], []) => format!("{one} arrivals"),
            ([one], [rate]) => format!("{one} arrivals at {rate} Mpps"),
            _ => format!("arrivals {} at {} Mpps", shapes.join(", "), rates.join(", ")),
        }
    }

    /// Several rates or shapes: each step's traffic is its own.
    pub fn varies_traffic(&self) -> bool {
        self.rates.len() > 1 || self.shapes.len() > 1
    }

    /// Leaves out the queue counts above `limit` (the most `port` takes of
    /// `what`), with their steps, when some counts fit; a single count, or
    /// a list none of which fits, is `Refused` (the caller's own check
    /// says why), and the ladder is left as it was.
    pub fn fit_queues(&mut self, limit: u16, port: &str, what: &str) -> Fit {
        let over: Vec<u16> = self.queues.iter().copied().filter(|&q| q > limit).collect();
        if over.is_empty() {
            return Fit::Whole;
        }
        if over.len() == self.queues.len() {
            return Fit::Refused;
        }
        self.queues.retain(|&q| q <= limit);
        self.steps.retain(|s| s.queues <= limit);
        let d = DroppedQueues { queues: over, port: port.to_string(), limit, what: what.to_string() };
        self.dropped.push(d.clone());
        Fit::Pruned(d)
    }

    pub fn max_queues(&self) -> u16 {
        self.queues.iter().copied().max().unwrap_or(1)
    }

    pub fn max_size(&self) -> u32 {
        self.sizes.iter().copied().max().unwrap_or(64)
    }

    /// One sentence saying what will run.
    pub fn describe(&self) -> String {
        let order = match self.order {
            Order::SizeMajor => "for each frame size, every queue count",
            Order::QueueMajor => "for each queue count, every frame size",
        };
        let mut traffic = String::new();
        if self.rates.len() > 1 {
            let mpps: Vec<String> = self.rates.iter().map(|r| format!("{:.3}", r / 1e6)).collect();
            traffic += &format!(" x rates [{}] Mpps", mpps.join(", "));
        }
        if self.shapes.len() > 1 {
            let shapes: Vec<String> = self.shapes.iter().map(|s| s.to_string()).collect();
            traffic += &format!(" x shapes [{}]", shapes.join(", "));
        }
        format!("{} step(s): queues {:?} x sizes {:?}{traffic}, {order}", self.steps.len(), self.queues, self.sizes)
    }
}

/// Parses "1,2,4,8", a single "8", or the doubling shorthand "1..32"
/// (1, 2, 4, 8, 16, 32; an end that is not a doubling is kept: "1..24" ends
/// 16, 24). Values must be positive and within `max`, in increasing order
/// once sorted; duplicates are refused.
pub fn parse_list(s: &str, what: &str, max: u64) -> Result<Vec<u64>, PlanError> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if let Some((a, b)) = part.split_once("..") {
            let a = parse_one(a, what, max)?;
            let b = parse_one(b, what, max)?;
            if a > b {
                return Err(PlanError::Backwards { what: what.into(), range: part.into() });
            }
            let mut v = a;
            while v < b {
                out.push(v);
                v *= 2;
            }
            out.push(b);
        } else {
            out.push(parse_one(part, what, max)?);
        }
    }
    let mut sorted = out.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != out.len() {
        return Err(PlanError::Repeats { what: what.into(), list: s.into() });
    }
    Ok(out)
}

fn parse_one(s: &str, what: &str, max: u64) -> Result<u64, PlanError> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err(PlanError::Zero { what: what.into() }),
        Ok(v) if v <= max => Ok(v),
        Ok(value) => Err(PlanError::AboveMax { what: what.into(), value, max }),
        Err(_) => Err(PlanError::NotANumber { what: what.into(), text: s.into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_counts_beyond_a_limit_are_left_out_with_their_steps() {
        let mut l = Ladder::new(vec![1, 2, 4], vec![64, 1500], Order::SizeMajor).with_traffic(vec![1e5], vec![pace::Shape::Even]);
        assert_eq!(l.fit_queues(4, "p", "RX queues"), Fit::Whole);
        let Fit::Pruned(d) = l.fit_queues(1, "drop's port m0 (net_memif)", "RX queues") else { panic!("pruned") };
        assert_eq!(d.queues, [2, 4]);
        assert_eq!(l.queues, [1]);
        assert_eq!(l.steps.iter().map(|s| (s.queues, s.size)).collect::<Vec<_>>(), [(1, 64), (1, 1500)]);
        assert_eq!(l.max_queues(), 1);
        assert_eq!(l.dropped, std::slice::from_ref(&d));
        assert_eq!(
            d.line(),
            "queue count(s) 2, 4 left out of the ladder: drop's port m0 (net_memif) has at most 1 RX queues; the other steps run"
        );
        assert!(l.describe().starts_with("2 step(s): queues [1]"), "{}", l.describe());
    }

    #[test]
    fn a_single_count_or_none_fitting_is_refused_unchanged() {
        let mut one = Ladder::new(vec![4], vec![64], Order::SizeMajor);
        assert_eq!(one.fit_queues(2, "p", "RX queues"), Fit::Refused);
        assert_eq!((one.queues.as_slice(), one.steps.len(), one.dropped.len()), (&[4][..], 1, 0));
        let mut none = Ladder::new(vec![4, 8], vec![64], Order::SizeMajor);
        assert_eq!(none.fit_queues(2, "p", "RX queues"), Fit::Refused);
        assert_eq!(none.queues, [4, 8]);
    }

    #[test]
    fn lists_and_doubling_ranges() {
        assert_eq!(parse_list("1,2,4,8,16,24,32", "queues", 1024).unwrap(), [1, 2, 4, 8, 16, 24, 32]);
        assert_eq!(parse_list("1..32", "queues", 1024).unwrap(), [1, 2, 4, 8, 16, 32]);
        assert_eq!(parse_list("1..24", "queues", 1024).unwrap(), [1, 2, 4, 8, 16, 24]);
        assert_eq!(parse_list("3..3", "queues", 1024).unwrap(), [3]);
        assert_eq!(parse_list("64,128,1500,9000", "size", 65535).unwrap(), [64, 128, 1500, 9000]);
        assert_eq!(parse_list("8", "queues", 1024).unwrap(), [8]);
    }

    #[test]
    fn bad_lists_are_refused() {
        assert!(parse_list("0,1", "queues", 1024).unwrap_err().to_string().contains("at least 1"));
        assert!(parse_list("4..2", "queues", 1024).unwrap_err().to_string().contains("backwards"));
        assert!(parse_list("1,1", "queues", 1024).unwrap_err().to_string().contains("repeats"));
        assert!(parse_list("1..4,2", "queues", 1024).unwrap_err().to_string().contains("repeats"));
        assert!(parse_list("2000", "queues", 1024).unwrap_err().to_string().contains("above"));
        assert!(parse_list("x", "queues", 1024).unwrap_err().to_string().contains("doubling range"));
    }

    #[test]
    fn product_in_the_stated_order() {
        let l = Ladder::new(vec![1, 2], vec![64, 1500], Order::SizeMajor);
        let s: Vec<(u16, u32)> = l.steps.iter().map(|s| (s.queues, s.size)).collect();
        assert_eq!(s, [(1, 64), (2, 64), (1, 1500), (2, 1500)]);
        let l = Ladder::new(vec![1, 2], vec![64, 1500], Order::QueueMajor);
        let s: Vec<(u16, u32)> = l.steps.iter().map(|s| (s.queues, s.size)).collect();
        assert_eq!(s, [(1, 64), (1, 1500), (2, 64), (2, 1500)]);
        assert_eq!(l.max_queues(), 2);
        assert_eq!(l.max_size(), 1500);
        assert!(l.describe().starts_with("4 step(s)"));
    }

    #[test]
    fn rates_and_shapes_join_the_product_innermost() {
        use pace::Shape::{Burst, Even};
        let l = Ladder::new(vec![1, 2], vec![64], Order::SizeMajor).with_traffic(vec![1e5, 3e5], vec![Even, Burst(8)]);
        let s: Vec<(u16, Option<f64>, String)> = l.steps.iter().map(|s| (s.queues, s.rate, s.shape.to_string())).collect();
        let want = [
            (1, Some(1e5), "even"),
            (1, Some(1e5), "burst:8"),
            (1, Some(3e5), "even"),
            (1, Some(3e5), "burst:8"),
            (2, Some(1e5), "even"),
            (2, Some(1e5), "burst:8"),
            (2, Some(3e5), "even"),
            (2, Some(3e5), "burst:8"),
        ];
        assert_eq!(s, want.map(|(q, r, sh)| (q, r, sh.to_string())));
        assert!(l.varies_traffic());
        assert_eq!(l.traffic(), "arrivals even, burst:8 at 0.100, 0.300 Mpps");
        assert!(l.describe().contains("x rates [0.100, 0.300] Mpps x shapes [even, burst:8]"), "{}", l.describe());
        let unpaced = Ladder::new(vec![1], vec![64], Order::SizeMajor).with_traffic(vec![], vec![pace::Shape::Open]);
        assert_eq!((unpaced.steps.len(), unpaced.steps[0].rate, unpaced.varies_traffic()), (1, None, false));
        assert_eq!(unpaced.traffic(), "open arrivals");
        let one = Ladder::new(vec![1], vec![64], Order::SizeMajor).with_traffic(vec![2e4], vec![Burst(32)]);
        assert_eq!(one.traffic(), "burst:32 arrivals at 0.020 Mpps");
    }
}
