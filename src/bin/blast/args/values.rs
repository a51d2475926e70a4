//! What the flags come to beyond their own values: the largest queue
//! count and frame size, and the rates and shapes in force.

use super::Args;

impl Args {
    /// --dst-mac was given (its default is no choice of the user's).
    pub fn dst_mac_given(&self) -> bool {
        self.dst_mac.len() != 1 || self.dst_mac[0] != wire::MacAddr([2, 0, 0, 0, 0, 2])
    }

    pub fn max_queues(&self) -> u16 {
        self.queues.iter().copied().max().unwrap_or(1)
    }

    /// The largest frame any step sends (with a mix, its largest size).
    pub fn max_size(&self) -> u32 {
        match &self.size_mix {
            Some(m) => m.max_size(),
            None => self.size.iter().copied().max().unwrap_or(64),
        }
    }

    /// Each step's frame size: the list given, or with a mix its largest
    /// (the mix says what each frame really is).
    pub fn sizes(&self) -> Vec<u32> {
        match &self.size_mix {
            Some(m) => vec![m.max_size()],
            None => self.size.0.clone(),
        }
    }

    /// The paced rate of a run with one traffic (single step, knee): the
    /// rate given (Mode's checks allow one there), None when unpaced.
    pub fn paced_rate(&self) -> Option<f64> {
        self.rate.as_ref().map(|r| r[0])
    }

    /// Every rate given (empty: unpaced).
    pub fn rates(&self) -> Vec<f64> {
        self.rate.as_ref().map_or_else(Vec::new, |r| r.0.clone())
    }

    /// Every shape in force: as given, or burst:<--burst> when paced, open when not.
    pub fn shapes(&self) -> Vec<pace::Shape> {
        match (&self.shape, &self.rate) {
            (Some(s), _) => s.0.clone(),
            (None, Some(_)) => vec![pace::Shape::Burst(self.burst as u32)],
            (None, None) => vec![pace::Shape::Open],
        }
    }

    /// The arrival shape of a run with one traffic.
    pub fn arrival_shape(&self) -> pace::Shape {
        self.shapes()[0]
    }

    /// Several rates or shapes: a ladder whatever the queues and sizes.
    pub fn varies_traffic(&self) -> bool {
        self.rate.as_ref().is_some_and(|r| r.len() > 1) || self.shape.as_ref().is_some_and(|s| s.len() > 1)
    }
}
