use serde::{Deserialize, Serialize};

/// Min, median and max of repeated measurements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

pub fn spread(values: &[f64]) -> Spread {
    if values.is_empty() {
        return Spread::default();
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    Spread { min: v[0], median, max: v[n - 1] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_odd_and_even_counts() {
        assert_eq!(spread(&[3.0, 1.0, 2.0]), Spread { min: 1.0, median: 2.0, max: 3.0 });
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        assert_eq!(spread(&[]), Spread::default());
    }
}
