use serde::Serialize;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepSpec {
    pub queues: u16,
    pub size: u32,
}

/// Every step of a run, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ladder {
    pub queues: Vec<u16>,
    pub sizes: Vec<u32>,
    pub order: Order,
    pub steps: Vec<StepSpec>,
}

impl Ladder {
    pub fn new(queues: Vec<u16>, sizes: Vec<u32>, order: Order) -> Ladder {
        let mut steps = Vec::with_capacity(queues.len() * sizes.len());
        match order {
            Order::SizeMajor => {
                for &size in &sizes {
                    for &q in &queues {
                        steps.push(StepSpec { queues: q, size });
                    }
                }
            }
            Order::QueueMajor => {
                for &q in &queues {
                    for &size in &sizes {
                        steps.push(StepSpec { queues: q, size });
                    }
                }
            }
        }
        Ladder { queues, sizes, order, steps }
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
        format!("{} step(s): queues {:?} x sizes {:?}, {order}", self.steps.len(), self.queues, self.sizes)
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
}
