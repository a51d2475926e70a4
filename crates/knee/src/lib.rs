//! Knee search, in the spirit of RFC 2544 and MLRsearch: the highest rate
//! at which loss (and, when asked, a latency percentile) stays within a
//! limit, for a fixed traffic shape. Two goals are searched at once, NDR
//! (no drop: loss <= the NDR limit, normally 0) and PDR (partial drop: loss
//! <= e.g. 0.5%); every trial informs both. Short trials narrow the
//! interval; a full-length trial confirms each result, and a confirmation
//! that fails reopens the search below it. No EAL here: the caller runs
//! the trials.

use serde::Serialize;

/// One goal's search: the highest passing and the lowest failing rate seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bounds {
    /// The loss limit in percent.
    pub loss_pct: f64,
    pub pass: Option<f64>,
    pub fail: Option<f64>,
    /// The rate a full-length trial confirmed, once one has.
    pub confirmed: Option<f64>,
}

impl Bounds {
    fn new(loss_pct: f64) -> Bounds {
        Bounds { loss_pct, pass: None, fail: None, confirmed: None }
    }

    fn record(&mut self, rate: f64, passed: bool) {
        if passed {
            if !self.pass.is_some_and(|p| rate <= p) {
                self.pass = Some(rate);
            }
        } else if !self.fail.is_some_and(|f| rate >= f) {
            self.fail = Some(rate);
        }
        // A pass above a fail (noise): the fail wins, the pass goes.
        if let (Some(p), Some(f)) = (self.pass, self.fail) {
            if p >= f {
                self.pass = None;
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    Ndr,
    Pdr,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrialKind {
    /// A short trial while narrowing.
    Search,
    /// A full-length trial confirming a result.
    Confirm,
}

/// What the search asks for next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Next {
    pub rate: f64,
    pub kind: TrialKind,
    /// For a confirmation: which goal it confirms.
    pub goal: Option<Goal>,
    /// Run at full length even while searching: a confirmation of this goal
    /// failed, so short trials are not to be trusted near it.
    pub full_length: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchConfig {
    /// The highest rate to try (frames/s): the sender's unpaced rate, or --rate.
    pub max_rate: f64,
    /// Below this, give up: nothing passes (frames/s).
    pub min_rate: f64,
    /// Stop narrowing when (fail - pass) / fail is at most this.
    pub precision: f64,
    pub ndr_loss_pct: f64,
    pub pdr_loss_pct: f64,
    /// Failed confirmations allowed per goal before its result is given up.
    pub max_confirm_failures: u32,
}

#[derive(Debug, Clone)]
pub struct Search {
    cfg: SearchConfig,
    pub ndr: Bounds,
    pub pdr: Bounds,
    confirm_failures: [u32; 2],
}

impl Search {
    fn long(&self, g: Goal) -> bool {
        self.confirm_failures[g as usize] > 0
    }

    pub fn new(cfg: SearchConfig) -> Search {
        assert!(cfg.max_rate > 0.0 && cfg.min_rate > 0.0 && cfg.precision > 0.0);
        Search { cfg, ndr: Bounds::new(cfg.ndr_loss_pct), pdr: Bounds::new(cfg.pdr_loss_pct), confirm_failures: [0; 2] }
    }

    fn bounds(&self, g: Goal) -> &Bounds {
        match g {
            Goal::Ndr => &self.ndr,
            Goal::Pdr => &self.pdr,
        }
    }

    fn bounds_mut(&mut self, g: Goal) -> &mut Bounds {
        match g {
            Goal::Ndr => &mut self.ndr,
            Goal::Pdr => &mut self.pdr,
        }
    }

    fn narrowed(&self, b: &Bounds) -> bool {
        match (b.pass, b.fail) {
            (_, None) => b.pass.is_some(), // passed at the maximum
            (Some(p), Some(f)) => (f - p) / f <= self.cfg.precision,
            (None, Some(f)) => f <= self.cfg.min_rate,
        }
    }

    fn given_up(&self, g: Goal) -> bool {
        self.confirm_failures[g as usize] > self.cfg.max_confirm_failures
    }

    /// The next trial, or None when both goals are settled. PDR first: its
    /// fails bound NDR too (a rate that loses more than the PDR limit loses
    /// more than the NDR limit).
    pub fn next(&self) -> Option<Next> {
        for g in [Goal::Pdr, Goal::Ndr] {
            let b = self.bounds(g);
            if b.confirmed.is_some() || self.given_up(g) {
                continue;
            }
            if !self.narrowed(b) {
                let rate = match (b.pass, b.fail) {
                    (None, None) => self.cfg.max_rate,
                    (Some(p), Some(f)) => (p + f) / 2.0,
                    // Nothing passed yet: halve towards the floor; after a
                    // failed confirmation, step down from it more gently.
                    (None, Some(f)) if self.long(g) => (f * 0.9).max(self.cfg.min_rate),
                    (None, Some(f)) => (f / 2.0).max(self.cfg.min_rate),
                    (Some(_), None) => unreachable!("narrowed"),
                };
                return Some(Next { rate, kind: TrialKind::Search, goal: None, full_length: self.long(g) });
            }
            match b.pass {
                Some(p) => return Some(Next { rate: p, kind: TrialKind::Confirm, goal: Some(g), full_length: true }),
                None => continue, // nothing passes above the floor
            }
        }
        None
    }

    /// Records a trial at `rate` with `loss_pct` (and whether the latency
    /// limit held, true when there is none).
    pub fn record(&mut self, next: &Next, rate: f64, loss_pct: f64, latency_ok: bool) {
        let ndr_pass = loss_pct <= self.cfg.ndr_loss_pct && latency_ok;
        let pdr_pass = loss_pct <= self.cfg.pdr_loss_pct && latency_ok;
        match (next.kind, next.goal) {
            (TrialKind::Confirm, Some(g)) => {
                let passed = if g == Goal::Ndr { ndr_pass } else { pdr_pass };
                if passed {
                    self.bounds_mut(g).confirmed = Some(rate);
                } else {
                    self.confirm_failures[g as usize] += 1;
                    let b = self.bounds_mut(g);
                    b.pass = None;
                    b.record(rate, false);
                }
                // The other goal learns from it as from a short trial.
                let (o, op) = if g == Goal::Ndr { (Goal::Pdr, pdr_pass) } else { (Goal::Ndr, ndr_pass) };
                if self.bounds(o).confirmed.is_none() {
                    self.bounds_mut(o).record(rate, op);
                }
            }
            _ => {
                self.ndr.record(rate, ndr_pass);
                self.pdr.record(rate, pdr_pass);
            }
        }
        // NDR <= PDR always: a PDR fail is an NDR fail.
        if let Some(f) = self.pdr.fail {
            if self.ndr.confirmed.is_none() && !self.ndr.fail.is_some_and(|nf| f >= nf) {
                self.ndr.record(f, false);
            }
        }
    }

    /// The confirmed result per goal (None: nothing passed, or confirmations kept failing).
    pub fn result(&self, g: Goal) -> Option<f64> {
        self.bounds(g).confirmed
    }

    /// Whether the sender's maximum itself passed: the path was not the limit.
    pub fn passed_at_max(&self, g: Goal) -> bool {
        self.bounds(g).confirmed.is_some_and(|r| r >= self.cfg.max_rate)
    }
}

/// Conditions a figure holds under.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Qualifiers {
    pub queues: u16,
    /// Frame size in bytes, FCS included.
    pub size: u32,
    pub flows: u32,
    pub mtu: u32,
    /// "even", "burst:16", "poisson", "open".
    pub shape: String,
}

impl Qualifiers {
    /// "64 B frames, MTU 1500, even arrivals, 8 queues, 16 flows".
    pub fn text(&self) -> String {
        format!(
            "{} B frames, MTU {}, {} arrivals, {} queue{}, {} flow{}",
            self.size,
            self.mtu,
            self.shape,
            self.queues,
            if self.queues == 1 { "" } else { "s" },
            self.flows,
            if self.flows == 1 { "" } else { "s" }
        )
    }
}

/// One committable sentence: "P99.9 < 41.2 us at 1.250 Mpps, loss <= 0.5%,
/// 64 B frames, MTU 1500, even arrivals, 8 queues, 16 flows (receiver-side)".
pub fn sentence(q: &Qualifiers, mpps: f64, loss_pct: f64, latency: Option<(&str, f64)>) -> String {
    let lat = latency.map(|(p, us)| format!("{} < {us:.1} us at ", pretty_percentile(p))).unwrap_or_default();
    format!("{lat}{mpps:.3} Mpps, loss <= {}%, {} (receiver-side)", trim_float(loss_pct), q.text())
}

fn pretty_percentile(p: &str) -> String {
    if p.eq_ignore_ascii_case("max") {
        "Max".into()
    } else {
        p.to_uppercase()
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The share of a knee that is safe to commit to.
pub const COMMIT_SHARE: f64 = 0.7;

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> SearchConfig {
        SearchConfig {
            max_rate: 1_000_000.0,
            min_rate: 1_000.0,
            precision: 0.01,
            ndr_loss_pct: 0.0,
            pdr_loss_pct: 0.5,
            max_confirm_failures: 2,
        }
    }

    /// A path that loses nothing up to `ndr`, then loss grows linearly to
    /// 0.5% at `pdr`, and more above.
    fn path(ndr: f64, pdr: f64) -> impl Fn(f64) -> f64 {
        move |r| if r <= ndr { 0.0 } else { (r - ndr) / (pdr - ndr) * 0.5 }
    }

    fn run(s: &mut Search, loss: impl Fn(f64) -> f64) -> Vec<Next> {
        let mut trials = Vec::new();
        while let Some(n) = s.next() {
            s.record(&n, n.rate, loss(n.rate), true);
            trials.push(n);
            assert!(trials.len() < 100, "the search converges");
        }
        trials
    }

    #[test]
    fn finds_ndr_and_pdr_within_precision_and_confirms_both() {
        let mut s = Search::new(cfg());
        let trials = run(&mut s, path(400_000.0, 600_000.0));
        let ndr = s.result(Goal::Ndr).unwrap();
        let pdr = s.result(Goal::Pdr).unwrap();
        assert!((400_000.0 * 0.99..=400_000.0).contains(&ndr), "{ndr}");
        assert!((600_000.0 * 0.99..=600_000.0).contains(&pdr), "{pdr}");
        let confirms = trials.iter().filter(|t| t.kind == TrialKind::Confirm).count();
        assert_eq!(confirms, 2);
        assert!(trials.len() < 30, "{} trials", trials.len());
    }

    #[test]
    fn a_path_that_carries_the_maximum_is_settled_in_two_trials() {
        let mut s = Search::new(cfg());
        let trials = run(&mut s, |_| 0.0);
        assert_eq!(trials.len(), 3, "one search trial, then a confirmation per goal");
        assert!(s.passed_at_max(Goal::Ndr) && s.passed_at_max(Goal::Pdr));
    }

    #[test]
    fn a_failed_confirmation_reopens_the_search_below_it() {
        let mut s = Search::new(cfg());
        // Short trials see a path that holds to 500k; full trials lose above 450k.
        let mut full = false;
        let mut n_confirm = 0;
        while let Some(n) = s.next() {
            full = n.full_length;
            n_confirm += usize::from(full);
            let limit = if full { 450_000.0 } else { 500_000.0 };
            let loss = if n.rate <= limit { 0.0 } else { 5.0 };
            s.record(&n, n.rate, loss, true);
        }
        let _ = full;
        let ndr = s.result(Goal::Ndr).unwrap();
        assert!(ndr <= 450_000.0, "the confirmed NDR is what full trials carry: {ndr}");
        assert!(n_confirm >= 3);
    }

    #[test]
    fn nothing_passes_above_the_floor() {
        let mut s = Search::new(cfg());
        run(&mut s, |_| 100.0);
        assert_eq!(s.result(Goal::Ndr), None);
        assert_eq!(s.result(Goal::Pdr), None);
    }

    #[test]
    fn a_latency_limit_caps_the_knee() {
        let mut s = Search::new(cfg());
        while let Some(n) = s.next() {
            // No loss anywhere, but the tail breaks the limit above 300k.
            s.record(&n, n.rate, 0.0, n.rate <= 300_000.0);
        }
        let pdr = s.result(Goal::Pdr).unwrap();
        assert!(pdr <= 300_000.0 && pdr > 297_000.0, "{pdr}");
    }

    #[test]
    fn the_sentence_carries_every_qualifier() {
        let q = Qualifiers { queues: 8, size: 64, flows: 16, mtu: 1500, shape: "even".into() };
        assert_eq!(
            sentence(&q, 1.25, 0.5, Some(("p99.9", 41.23))),
            "P99.9 < 41.2 us at 1.250 Mpps, loss <= 0.5%, 64 B frames, MTU 1500, even arrivals, 8 queues, 16 flows (receiver-side)"
        );
        let q1 = Qualifiers { queues: 1, flows: 1, ..q };
        assert_eq!(
            sentence(&q1, 0.5, 0.0, None),
            "0.500 Mpps, loss <= 0%, 64 B frames, MTU 1500, even arrivals, 1 queue, 1 flow (receiver-side)"
        );
    }
}
