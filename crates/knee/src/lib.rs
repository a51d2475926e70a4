//! Knee search, in the spirit of RFC 2544 and MLRsearch: the highest rate
//! at which loss (and, when asked, a latency percentile) stays within a
//! limit, for a fixed traffic shape. Two goals are searched at once, NDR
//! (no drop: loss <= the NDR limit, normally 0) and PDR (partial drop: loss
//! <= e.g. 0.5%); every trial informs both. Short trials narrow the
//! interval; a full-length trial confirms each result, and a confirmation
//! that fails reopens the search below it. No EAL here: the caller runs
//! the trials.
//!
//! A trial counts only at the load it carried. When the sender delivers
//! less than the offered rate (beyond [`DELIVERY_TOLERANCE`]), the offered
//! rate is not a pass: it becomes the sender's cap, which bounds the search
//! from above like a fail, and the trial's loss counts at the rate it did
//! deliver. A confirmation the sender fell short on is a failed
//! confirmation, and a confirmed figure is always the rate its confirming
//! trial delivered. A result bounded by the sender rather than by loss is
//! a lower bound on the path's knee ("at least").
//!
//! A shortfall is the sender's own only while the sender has never
//! delivered the offered rate: once a trial has carried a rate, a later
//! trial that falls short of it at or below that rate was held back by
//! something else (the path pushing back, the receiver, or the host
//! standing the sender's lanes still; the trial's verdict says which).
//! Such a trial bounds the search from above as the sender's cap does, but
//! a result below it is bounded by [`Bound::HeldBack`], never "at least
//! ...: the sender delivered no more".

use serde::{Deserialize, Serialize};

/// The share of the offered rate a sender may fall short by and still be
/// taken to have carried it: 1%. A trial that delivered less is counted at
/// the rate it delivered, never at the offered one.
pub const DELIVERY_TOLERANCE: f64 = 0.01;

/// Whether a trial that `delivered` frames/s when `offered` were asked for
/// fell short of the offered load (beyond [`DELIVERY_TOLERANCE`]).
pub fn sender_short(offered: f64, delivered: f64) -> bool {
    // NaN (nothing measured) is short too.
    delivered.is_nan() || delivered < offered * (1.0 - DELIVERY_TOLERANCE)
}

/// What bounds a confirmed result from above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// A trial above it lost too much (or broke the latency limit): the
    /// result is the path's knee, within the search's precision.
    Path,
    /// The sender could not deliver the rates above it: the path carries at
    /// least this, its knee may be higher.
    Sender,
    /// The top of the search itself passed: the path carries at least this.
    Top,
    /// A trial above it fell short of a rate the sender had delivered in an
    /// earlier trial: held back by the path, the receiver or the host (that
    /// trial's verdict says which). The result is what this run carried.
    #[serde(rename = "held-back")]
    #[schemars(rename = "held-back")]
    HeldBack,
}

/// One goal's search: the highest passing and the lowest failing rate seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bounds {
    /// The loss limit in percent.
    pub loss_pct: f64,
    pub pass: Option<f64>,
    pub fail: Option<f64>,
    /// The rate a full-length trial confirmed, once one has: the rate that
    /// trial delivered (never more than it was offered).
    pub confirmed: Option<f64>,
    /// What bounded the confirmed result from above.
    pub bounded_by: Option<Bound>,
    /// Confirmations that failed, of them those the sender fell short on,
    /// and of those the ones held back (below a rate it had delivered).
    pub failed_confirms: u32,
    pub short_confirms: u32,
    pub held_back_confirms: u32,
}

impl Bounds {
    fn new(loss_pct: f64) -> Bounds {
        Bounds {
            loss_pct,
            pass: None,
            fail: None,
            confirmed: None,
            bounded_by: None,
            failed_confirms: 0,
            short_confirms: 0,
            held_back_confirms: 0,
        }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    Ndr,
    Pdr,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// How the search counted one trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Counted {
    /// The sender delivered less than the offered rate beyond
    /// [`DELIVERY_TOLERANCE`]: the trial is no pass at the offered rate.
    pub sender_short: bool,
    /// The delivered rate as a share of the offered one (1.0: all of it).
    pub delivered_share: f64,
    /// The trial fell short of a rate the sender had already delivered in
    /// an earlier trial: held back by the path, the receiver or the host,
    /// its offered rate bounds the search as `held_cap`, not as the sender's cap.
    pub held_back: bool,
    /// The rate the trial's loss result counted at: the offered rate, or
    /// the delivered one when the sender fell short. None: the trial carried
    /// less than the search's floor and counted for nothing but the cap.
    pub at: Option<f64>,
    /// For a confirmation: whether it confirmed its goal.
    pub confirmed: Option<bool>,
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
    /// The lowest offered rate the sender could not deliver: it bounds both
    /// goals from above like a fail.
    sender_cap: Option<f64>,
    /// The most any trial has delivered (frames/s): what the sender has
    /// shown it can send.
    most_delivered: f64,
    /// The lowest offered rate a trial was held back from (below what the
    /// sender had delivered): it bounds both goals from above like a fail.
    held_cap: Option<f64>,
}

impl Search {
    fn long(&self, g: Goal) -> bool {
        self.bounds(g).failed_confirms > 0
    }

    pub fn new(cfg: SearchConfig) -> Search {
        assert!(cfg.max_rate > 0.0 && cfg.min_rate > 0.0 && cfg.precision > 0.0);
        Search {
            cfg,
            ndr: Bounds::new(cfg.ndr_loss_pct),
            pdr: Bounds::new(cfg.pdr_loss_pct),
            sender_cap: None,
            most_delivered: 0.0,
            held_cap: None,
        }
    }

    pub fn bounds(&self, g: Goal) -> &Bounds {
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

    /// The lowest offered rate the sender fell short of, if any.
    pub fn sender_cap(&self) -> Option<f64> {
        self.sender_cap
    }

    /// The lowest offered rate a trial was held back from, if any.
    pub fn held_cap(&self) -> Option<f64> {
        self.held_cap
    }

    /// The lowest rate known not to pass: a fail, the sender's cap, or a
    /// rate the sender was held back from.
    fn upper(&self, b: &Bounds) -> Option<f64> {
        [b.fail, self.sender_cap, self.held_cap].into_iter().flatten().reduce(f64::min)
    }

    /// What bounds `b` from above now.
    /// What bounds a result at `rate` from above: a fail within the
    /// precision of it locates the path's knee whatever the sender's cap.
    fn bound_of(&self, b: &Bounds, rate: f64) -> Bound {
        if b.fail.is_some_and(|f| (f - rate) / f <= self.cfg.precision) {
            return Bound::Path;
        }
        // The lowest of what stops the search above; on a tie the sender's
        // cap first, then a held-back trial, then a fail.
        [(self.sender_cap, Bound::Sender), (self.held_cap, Bound::HeldBack), (b.fail, Bound::Path)]
            .into_iter()
            .filter_map(|(at, bound)| at.map(|at| (at, bound)))
            .reduce(|low, next| if next.0 < low.0 { next } else { low })
            .map_or(Bound::Top, |(_, bound)| bound)
    }

    fn narrowed(&self, b: &Bounds) -> bool {
        match (b.pass, self.upper(b)) {
            (_, None) => b.pass.is_some(), // passed at the maximum
            (Some(p), Some(u)) => (u - p) / u <= self.cfg.precision,
            (None, Some(u)) => u <= self.cfg.min_rate,
        }
    }

    fn given_up(&self, g: Goal) -> bool {
        self.bounds(g).failed_confirms > self.cfg.max_confirm_failures
    }

    /// Whether the goal's result was given up after too many failed confirmations.
    pub fn gave_up(&self, g: Goal) -> bool {
        self.given_up(g)
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
                let rate = match (b.pass, self.upper(b)) {
                    (None, None) => self.cfg.max_rate,
                    (Some(p), Some(u)) => (p + u) / 2.0,
                    // Nothing passed yet: halve towards the floor; after a
                    // failed confirmation, step down from it more gently.
                    (None, Some(u)) if self.long(g) => (u * 0.9).max(self.cfg.min_rate),
                    (None, Some(u)) => (u / 2.0).max(self.cfg.min_rate),
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

    /// Records a trial offered at `offered` frames/s whose sender delivered
    /// `delivered` frames/s, with `loss_pct` (and whether the latency limit
    /// held, true when there is none). A trial the sender fell short on
    /// counts at the delivered rate and caps the search at the offered one.
    pub fn record(&mut self, next: &Next, offered: f64, delivered: f64, loss_pct: f64, latency_ok: bool) -> Counted {
        let delivered = if delivered.is_finite() { delivered.max(0.0) } else { 0.0 };
        let short = sender_short(offered, delivered);
        // A rate the sender has delivered before is one it can send: falling
        // short of it now is the path's, the receiver's or the host's doing.
        let held_back = short && !sender_short(offered, self.most_delivered);
        self.most_delivered = self.most_delivered.max(delivered);
        let carried = offered.min(delivered);
        // Within the tolerance the trial carried the offered load; beyond
        // it, only what it delivered.
        let at = if short { carried } else { offered };
        // A trial that carried less than the floor says nothing about the
        // path within the search's range.
        let at = (at >= self.cfg.min_rate).then_some(at);
        let cap = if held_back { &mut self.held_cap } else { &mut self.sender_cap };
        if short && !cap.is_some_and(|c| c <= offered) {
            *cap = Some(offered);
        }
        let ndr_pass = loss_pct <= self.cfg.ndr_loss_pct && latency_ok;
        let pdr_pass = loss_pct <= self.cfg.pdr_loss_pct && latency_ok;
        let confirmed = match (next.kind, next.goal) {
            (TrialKind::Confirm, Some(g)) => Some(self.confirm(g, offered, carried, at, (short, held_back), (ndr_pass, pdr_pass))),
            _ => {
                if let Some(at) = at {
                    self.ndr.record(at, ndr_pass);
                    self.pdr.record(at, pdr_pass);
                }
                None
            }
        };
        self.keep_consistent();
        let delivered_share = if offered > 0.0 { delivered / offered } else { 0.0 };
        Counted { sender_short: short, delivered_share, held_back, at, confirmed }
    }

    /// A confirmation of goal `g` at `offered` (counted `at`, carried
    /// `carried`), the trial having kept the NDR's and the PDR's limits or
    /// not: whether it confirmed; a failed one takes the goal's pass back.
    /// `short`: the sender fell short, and whether it was held back (not its own cap).
    fn confirm(
        &mut self,
        g: Goal,
        offered: f64,
        carried: f64,
        at: Option<f64>,
        (short, held_back): (bool, bool),
        (ndr_pass, pdr_pass): (bool, bool),
    ) -> bool {
        let passed = if g == Goal::Ndr { ndr_pass } else { pdr_pass };
        let confirmed = if passed && !short && at.is_some() {
            let bound = self.bound_of(self.bounds(g), offered);
            let b = self.bounds_mut(g);
            b.confirmed = Some(carried);
            b.bounded_by = Some(bound);
            true
        } else {
            let b = self.bounds_mut(g);
            b.failed_confirms += 1;
            b.short_confirms += u32::from(short);
            b.held_back_confirms += u32::from(held_back);
            b.pass = None;
            if let Some(at) = at {
                b.record(at, passed);
            }
            false
        };
        // The other goal learns from it as from a short trial.
        let (o, op) = if g == Goal::Ndr { (Goal::Pdr, pdr_pass) } else { (Goal::Ndr, ndr_pass) };
        if let (None, Some(at)) = (self.bounds(o).confirmed, at) {
            self.bounds_mut(o).record(at, op);
        }
        confirmed
    }

    /// What holds between the goals and the sender's cap after each trial.
    fn keep_consistent(&mut self) {
        // NDR <= PDR always. Two confirmations at one offered rate deliver
        // slightly different rates: the NDR claims no more than the PDR (less
        // than its own trial delivered, never more).
        if let (Some(n), Some(p)) = (self.ndr.confirmed, self.pdr.confirmed) {
            if n > p {
                self.ndr.confirmed = Some(p);
            }
        }
        // A PDR fail is an NDR fail.
        if let Some(f) = self.pdr.fail {
            if self.ndr.confirmed.is_none() && !self.ndr.fail.is_some_and(|nf| f >= nf) {
                self.ndr.record(f, false);
            }
        }
        // A pass at or above the sender's cap (or a rate it was held back
        // from) is not one it can repeat (only a confirmation can put a cap
        // below a pass).
        if let Some(c) = [self.sender_cap, self.held_cap].into_iter().flatten().reduce(f64::min) {
            for b in [&mut self.ndr, &mut self.pdr] {
                if b.confirmed.is_none() && b.pass.is_some_and(|p| p >= c) {
                    b.pass = None;
                }
            }
        }
    }

    /// The confirmed result per goal (None: nothing passed, or confirmations
    /// kept failing): a rate its confirming trial delivered.
    pub fn result(&self, g: Goal) -> Option<f64> {
        self.bounds(g).confirmed
    }

    /// What bounds the goal's confirmed result (None until one is confirmed).
    pub fn bounded_by(&self, g: Goal) -> Option<Bound> {
        self.bounds(g).bounded_by
    }

    /// Whether the goal's confirmed result is a lower bound on the path's
    /// knee: the sender delivered no more, or the top of the search passed.
    pub fn sender_limited(&self, g: Goal) -> bool {
        matches!(self.bounded_by(g), Some(Bound::Sender | Bound::Top))
    }

    /// Whether the top of the search itself passed: the path was not the limit.
    pub fn passed_at_max(&self, g: Goal) -> bool {
        self.bounded_by(g) == Some(Bound::Top)
    }
}

/// Conditions a figure holds under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
/// `latency` is None when no percentile was measured (no samples): the
/// sentence then quotes none.
pub fn sentence(q: &Qualifiers, mpps: f64, loss_pct: f64, latency: Option<(&str, f64)>) -> String {
    let lat = latency.map(|(p, us)| format!("{} < {us:.1} us at ", pretty_percentile(p))).unwrap_or_default();
    format!("{lat}{} Mpps, loss <= {}%, {} (receiver-side)", mpps_floor(mpps), trim_float(loss_pct), q.text())
}

/// A rate (Mpps) that a result claims the path carries, as it is written
/// everywhere: never rounded up, since a capacity or an "at least" must not
/// claim more than a trial delivered. Three decimals, and below 0.1 Mpps
/// three significant figures (0.0067 Mpps is "0.00670", not "0.007").
pub fn mpps_floor(mpps: f64) -> String {
    if !mpps.is_finite() || mpps < 0.0 {
        return "unknown".to_string();
    }
    let decimals = if mpps >= 0.1 || mpps == 0.0 { 3 } else { (2 - mpps.log10().floor() as i32).clamp(3, 9) as usize };
    let scale = 10f64.powi(decimals as i32);
    // The relative nudge keeps 6.55 (6.549999... in binary) at 6.550.
    let floored = (mpps * scale * (1.0 + 1e-12)).floor() / scale;
    format!("{floored:.decimals$}")
}

/// The sentence for a result that is a lower bound on the path's knee (the
/// sender delivered no more, or the top of the search passed): it claims
/// the rate a confirming trial delivered, and says the knee is at least that.
pub fn sentence_at_least(q: &Qualifiers, mpps: f64, loss_pct: f64, latency: Option<(&str, f64)>) -> String {
    let s = sentence(q, mpps, loss_pct, latency);
    let s = s.strip_suffix(" (receiver-side)").unwrap_or(&s);
    format!("{s} (receiver-side; sender-limited: the path's knee is at least {} Mpps)", mpps_floor(mpps))
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
            s.record(&n, n.rate, n.rate, loss(n.rate), true);
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
        assert!(s.sender_limited(Goal::Ndr) && s.sender_limited(Goal::Pdr));
        assert_eq!(s.result(Goal::Pdr), Some(1_000_000.0));
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
            s.record(&n, n.rate, n.rate, loss, true);
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
            s.record(&n, n.rate, n.rate, 0.0, n.rate <= 300_000.0);
        }
        let pdr = s.result(Goal::Pdr).unwrap();
        assert!(pdr <= 300_000.0 && pdr > 297_000.0, "{pdr}");
    }

    /// One trial as run: what was offered, what the sender delivered, how it counted.
    struct Ran {
        next: Next,
        delivered: f64,
        counted: Counted,
    }

    /// Runs the search against a sender that delivers `sender(offered,
    /// next)` and a path whose loss depends on the rate it carries.
    fn run_with(s: &mut Search, loss: impl Fn(f64) -> f64, mut sender: impl FnMut(f64, &Next) -> f64) -> Vec<Ran> {
        let mut trials = Vec::new();
        while let Some(n) = s.next() {
            let delivered = sender(n.rate, &n);
            let counted = s.record(&n, n.rate, delivered, loss(n.rate.min(delivered)), true);
            trials.push(Ran { next: n, delivered, counted });
            assert!(trials.len() < 100, "the search converges");
        }
        trials
    }

    /// Every confirmed figure is a rate its confirming trial delivered.
    fn assert_results_were_delivered(s: &Search, trials: &[Ran]) {
        for g in [Goal::Ndr, Goal::Pdr] {
            if let Some(r) = s.result(g) {
                let by =
                    trials.iter().rev().find(|t| t.next.goal == Some(g) && t.counted.confirmed == Some(true)).expect("a confirming trial");
                assert!(!by.counted.sender_short);
                assert!(
                    r <= by.delivered && r <= by.next.rate,
                    "{g:?} {r} from a trial offered {} that delivered {}",
                    by.next.rate,
                    by.delivered
                );
            }
        }
    }

    #[test]
    fn a_short_search_trial_counts_at_the_delivered_rate_and_caps_the_search() {
        let mut s = Search::new(cfg());
        let n = s.next().unwrap();
        assert_eq!(n.rate, 1_000_000.0);
        let c = s.record(&n, n.rate, 600_000.0, 0.0, true);
        assert!(c.sender_short);
        assert_eq!(c.at, Some(600_000.0), "the loss result counts at the delivered rate");
        assert!((c.delivered_share - 0.6).abs() < 1e-9);
        assert_eq!(s.ndr.pass, Some(600_000.0), "a pass at what was delivered, not at what was offered");
        assert_eq!(s.pdr.pass, Some(600_000.0));
        assert_eq!(s.sender_cap(), Some(1_000_000.0));
        let n = s.next().unwrap();
        assert_eq!((n.kind, n.rate), (TrialKind::Search, 800_000.0), "the cap bounds the search like a fail");

        // Loss at the delivered rate is a fail there, and the cap stays.
        let c = s.record(&n, n.rate, 700_000.0, 2.0, true);
        assert_eq!(c.at, Some(700_000.0));
        assert_eq!(s.ndr.fail, Some(700_000.0));
        assert_eq!(s.pdr.fail, Some(700_000.0));
        assert_eq!(s.sender_cap(), Some(800_000.0));

        // Within the tolerance the offered rate counts.
        let mut s = Search::new(cfg());
        let n = s.next().unwrap();
        let c = s.record(&n, n.rate, n.rate * (1.0 - DELIVERY_TOLERANCE / 2.0), 0.0, true);
        assert!(!c.sender_short);
        assert_eq!(c.at, Some(1_000_000.0));
        assert_eq!(s.sender_cap(), None);
    }

    #[test]
    fn a_short_confirmation_is_a_failed_confirmation() {
        let mut s = Search::new(cfg());
        // A perfect path; the sender keeps up in short trials but falls 5%
        // short on the first confirmation of each goal.
        let mut shorted = [false; 2];
        let trials = run_with(
            &mut s,
            |_| 0.0,
            |r, n| match n.goal {
                Some(g) if !shorted[g as usize] => {
                    shorted[g as usize] = true;
                    r * 0.95
                }
                _ => r,
            },
        );
        let first = trials.iter().find(|t| t.next.kind == TrialKind::Confirm).unwrap();
        assert_eq!(first.counted.confirmed, Some(false), "a short confirmation does not confirm");
        assert!(first.counted.sender_short);
        assert_eq!(s.pdr.short_confirms, 1);
        assert_eq!(s.pdr.failed_confirms, 1);
        let pdr = s.result(Goal::Pdr).expect("confirmed below what the sender fell short of");
        assert!(pdr < first.next.rate, "below the rate the sender fell short of: {pdr}");
        // The sender had delivered that rate in a search trial: held back
        // (the host, the path), not the sender's own cap.
        assert!(first.counted.held_back);
        assert_eq!(s.pdr.held_back_confirms, 1);
        assert!(s.held_cap().is_some_and(|c| c <= first.next.rate) && s.sender_cap().is_none());
        assert_eq!(s.bounded_by(Goal::Pdr), Some(Bound::HeldBack));
        assert!(!s.sender_limited(Goal::Pdr), "bounded by a trial held back, neither the sender's cap nor loss");
        assert_eq!((s.ndr.short_confirms, s.ndr.failed_confirms), (1, 1));
        assert!(s.result(Goal::Ndr).is_some_and(|n| n <= pdr));
        assert_results_were_delivered(&s, &trials);
    }

    #[test]
    fn a_sender_that_cannot_reach_the_knee_gives_an_at_least_result() {
        let mut s = Search::new(cfg());
        // The path loses nothing; the sender delivers at most 600k.
        let trials = run_with(&mut s, |_| 0.0, |r, _| r.min(600_000.0));
        for g in [Goal::Ndr, Goal::Pdr] {
            let r = s.result(g).unwrap();
            assert!((600_000.0 * 0.99..=600_000.0).contains(&r), "{g:?} {r}");
            assert_eq!(s.bounded_by(g), Some(Bound::Sender));
            assert!(s.sender_limited(g) && !s.passed_at_max(g));
        }
        assert!(trials.iter().filter(|t| t.counted.sender_short).all(|t| t.counted.at == Some(t.delivered)));
        assert_results_were_delivered(&s, &trials);
        assert!(trials.len() < 30, "{} trials", trials.len());
    }

    #[test]
    fn a_knee_below_the_sender_cap_is_found_as_before() {
        let mut s = Search::new(cfg());
        // The sender tops out at 800k; the path's NDR is 400k and PDR 600k.
        let trials = run_with(&mut s, path(400_000.0, 600_000.0), |r, _| r.min(800_000.0));
        let ndr = s.result(Goal::Ndr).unwrap();
        let pdr = s.result(Goal::Pdr).unwrap();
        assert!((400_000.0 * 0.99..=400_000.0).contains(&ndr), "{ndr}");
        assert!((600_000.0 * 0.99..=600_000.0).contains(&pdr), "{pdr}");
        assert_eq!(s.bounded_by(Goal::Ndr), Some(Bound::Path));
        assert_eq!(s.bounded_by(Goal::Pdr), Some(Bound::Path));
        assert!(!s.sender_limited(Goal::Pdr) && !s.sender_limited(Goal::Ndr));
        assert_eq!(s.sender_cap(), Some(1_000_000.0), "only the first trial fell short");
        assert_results_were_delivered(&s, &trials);
    }

    /// The case: the first trial delivered 135k (the sender can send
    /// that much), the receiver loses above 6.7k, and the host stalls the
    /// sender's lanes on trials between 6.8k and 20k. Falling short of a rate
    /// it has already delivered is not the sender's limit: the NDR is the
    /// path's knee (bounded by the path), never "at least ...: the sender
    /// delivered no more".
    #[test]
    fn a_shortfall_below_what_the_sender_delivered_is_held_back_not_its_cap() {
        let mut s = Search::new(cfg());
        let receiver = |r: f64| if r <= 6_700.0 { 0.0 } else { (r - 6_700.0) / 100.0 };
        let mut first = true;
        let trials = run_with(&mut s, receiver, |r, _| {
            if std::mem::take(&mut first) {
                r.min(135_000.0)
            } else if (6_800.0..20_000.0).contains(&r) {
                r * 0.9
            } else {
                r
            }
        });
        assert!(trials.iter().any(|t| t.counted.held_back), "a stalled trial below 135k is held back");
        assert!(trials.iter().filter(|t| t.counted.held_back).all(|t| t.next.rate <= 135_000.0 && t.counted.sender_short));
        assert_eq!(s.sender_cap(), Some(1_000_000.0), "only the first trial, above anything delivered, caps the search");
        let ndr = s.result(Goal::Ndr).expect("an NDR");
        assert!((6_700.0 * 0.98..=6_700.0).contains(&ndr), "{ndr}");
        assert!(matches!(s.bounded_by(Goal::Ndr), Some(Bound::Path | Bound::HeldBack)), "{:?}", s.bounded_by(Goal::Ndr));
        assert!(!s.sender_limited(Goal::Ndr) && !s.sender_limited(Goal::Pdr));
        assert_eq!(
            s.bounds(Goal::Ndr).short_confirms,
            s.bounds(Goal::Ndr).held_back_confirms,
            "no confirmation failed for the sender's own cap"
        );
        assert_results_were_delivered(&s, &trials);
    }

    /// Capacities are never rounded up, and small ones keep three
    /// significant figures.
    #[test]
    fn a_capacity_is_never_rounded_up() {
        assert_eq!(mpps_floor(0.0067), "0.00670");
        assert_eq!(mpps_floor(0.00679), "0.00679");
        assert_eq!(mpps_floor(0.006799), "0.00679");
        assert_eq!(mpps_floor(0.0499), "0.0499");
        assert_eq!(mpps_floor(6.55), "6.550");
        assert_eq!(mpps_floor(6.5509), "6.550");
        assert_eq!(mpps_floor(0.1249999), "0.124");
        assert_eq!(mpps_floor(36.6), "36.600");
        assert_eq!(mpps_floor(0.0), "0.000");
        assert_eq!(mpps_floor(f64::NAN), "unknown");
        for x in [0.0067, 0.00123456, 0.098765, 1.23456789, 123.4567] {
            let shown: f64 = mpps_floor(x).parse().unwrap();
            assert!(shown <= x && shown >= x * 0.99, "{x} shown as {shown}");
        }
        let q = Qualifiers { queues: 1, size: 64, flows: 1, mtu: 1500, shape: "even".into() };
        assert!(sentence_at_least(&q, 0.0067, 0.0, None).ends_with("at least 0.00670 Mpps)"));
    }

    #[test]
    fn a_confirmed_figure_is_what_its_trial_delivered() {
        let mut s = Search::new(cfg());
        // Within the tolerance everywhere: 0.5% short.
        let trials = run_with(&mut s, |_| 0.0, |r, _| r * 0.995);
        assert!(trials.iter().all(|t| !t.counted.sender_short));
        let pdr = s.result(Goal::Pdr).unwrap();
        assert_eq!(pdr, 1_000_000.0 * 0.995, "min(offered, delivered), not the offered rate");
        assert!(s.passed_at_max(Goal::Pdr) && s.sender_limited(Goal::Pdr));
        assert_results_were_delivered(&s, &trials);
    }

    #[test]
    fn a_sender_that_keeps_falling_short_confirms_nothing_and_the_search_ends() {
        let mut s = Search::new(cfg());
        let trials = run_with(&mut s, |_| 0.0, |r, _| r * 0.95);
        assert_eq!(s.result(Goal::Ndr), None);
        assert_eq!(s.result(Goal::Pdr), None);
        for g in [Goal::Ndr, Goal::Pdr] {
            assert!(s.gave_up(g));
            assert_eq!(s.bounds(g).short_confirms, s.bounds(g).failed_confirms, "every confirmation fell short");
        }
        assert!(trials.len() < 60, "{} trials", trials.len());
    }

    #[test]
    fn an_erratic_sender_still_converges_and_never_confirms_more_than_it_delivered() {
        for seed in 1..50u64 {
            let mut x = seed;
            let mut s = Search::new(cfg());
            // Delivers 50 to 100% of the offered rate, at random; the path
            // holds 700k without loss and loses above.
            let trials = run_with(
                &mut s,
                |r| if r <= 700_000.0 { 0.0 } else { 1.0 },
                |r, _| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let f = 0.5 + (x % 1000) as f64 / 2000.0;
                    r * if x % 3 == 0 { 1.0 } else { f }
                },
            );
            assert_results_were_delivered(&s, &trials);
            for g in [Goal::Ndr, Goal::Pdr] {
                if let Some(r) = s.result(g) {
                    assert!(r <= 700_000.0, "seed {seed}: {g:?} {r} above the path's knee");
                }
            }
        }
    }

    #[test]
    fn the_ndr_never_exceeds_the_pdr_when_confirmations_deliver_differently() {
        let mut s = Search::new(cfg());
        // The path's NDR and PDR coincide; the NDR's confirmation happens to
        // deliver a little more than the PDR's (both within the tolerance).
        let trials = run_with(&mut s, path(500_000.0, 500_001.0), |r, n| match n.goal {
            Some(Goal::Pdr) => r * 0.996,
            _ => r * 0.999,
        });
        let (ndr, pdr) = (s.result(Goal::Ndr).unwrap(), s.result(Goal::Pdr).unwrap());
        assert!(ndr <= pdr, "NDR {ndr} <= PDR {pdr}");
        assert_results_were_delivered(&s, &trials);
    }

    #[test]
    fn a_fail_within_the_precision_locates_the_knee_whatever_the_cap() {
        let mut s = Search::new(cfg());
        let search = |rate| Next { rate, kind: TrialKind::Search, goal: None, full_length: false };
        // The path loses at 500k; the sender falls short at 499k (after
        // delivering 500k: held back); 496k passes.
        s.record(&search(500_000.0), 500_000.0, 500_000.0, 5.0, true);
        s.record(&search(499_000.0), 499_000.0, 450_000.0, 0.0, true);
        s.record(&search(496_000.0), 496_000.0, 496_000.0, 0.0, true);
        assert_eq!((s.sender_cap(), s.held_cap()), (None, Some(499_000.0)));
        let n = s.next().unwrap();
        assert_eq!((n.kind, n.goal, n.rate), (TrialKind::Confirm, Some(Goal::Pdr), 496_000.0));
        let c = s.record(&n, n.rate, n.rate, 0.0, true);
        assert_eq!(c.confirmed, Some(true));
        assert_eq!(s.bounded_by(Goal::Pdr), Some(Bound::Path), "a fail within 1% above it: the path's knee, not a lower bound");
        assert!(!s.sender_limited(Goal::Pdr));
    }

    #[test]
    fn a_trial_that_delivered_nothing_only_caps_the_search() {
        let mut s = Search::new(cfg());
        let n = s.next().unwrap();
        let c = s.record(&n, n.rate, 0.0, 0.0, true);
        assert!(c.sender_short);
        assert_eq!(c.at, None);
        assert_eq!((s.ndr.pass, s.ndr.fail), (None, None));
        assert_eq!(s.sender_cap(), Some(1_000_000.0));
        assert_eq!(s.next().unwrap().rate, 500_000.0);
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
        assert_eq!(
            sentence_at_least(&q1, 6.55, 0.5, None),
            "6.550 Mpps, loss <= 0.5%, 64 B frames, MTU 1500, even arrivals, 1 queue, 1 flow (receiver-side; sender-limited: the path's knee is at least 6.550 Mpps)"
        );
    }
}
