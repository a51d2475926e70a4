//! What a verdict is made of: the kinds of limit, the side they were
//! seen on, each limit with its evidence, and the verdict that orders them.
//! Below every module that judges a window (`verdict`, `socket`,
//! `receiver_only`), so that they share these without importing each other.

use serde::{Deserialize, Serialize};

/// What held a step back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimitKind {
    PpsAllowance,
    BwOutAllowance,
    BwInAllowance,
    ConntrackAllowance,
    LinklocalAllowance,
    /// imissed or rx_nombuf moved on the receiver, or frames went missing
    /// while its polls never came back empty: it could not keep up.
    Receiver,
    /// The sender could not send what was offered (tx_burst short, ring
    /// full), or sent unpaced as fast as its queue took frames; no allowance moved.
    Sender,
    /// Frames vanished between the ports and no counter explains it.
    Network,
    /// The two ends were not connected through: the sender's queue stayed
    /// full while the receiver's polls came back empty (memif rings not
    /// shared after a reconnect, a link that went down).
    Path,
    /// A counter the user asked to watch moved.
    Other,
    /// The offered rate was delivered and nothing moved.
    None,
}

impl LimitKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            LimitKind::PpsAllowance => "pps-allowance",
            LimitKind::BwOutAllowance => "bw-out-allowance",
            LimitKind::BwInAllowance => "bw-in-allowance",
            LimitKind::ConntrackAllowance => "conntrack-allowance",
            LimitKind::LinklocalAllowance => "linklocal-allowance",
            LimitKind::Receiver => "receiver",
            LimitKind::Sender => "sender",
            LimitKind::Network => "network",
            LimitKind::Path => "path",
            LimitKind::Other => "other",
            LimitKind::None => "none",
        }
    }

    /// The verdict an ENA allowance counter stands for.
    pub fn of_allowance(counter: &str) -> Option<LimitKind> {
        Some(match counter {
            "pps_allowance_exceeded" => LimitKind::PpsAllowance,
            "bw_out_allowance_exceeded" => LimitKind::BwOutAllowance,
            "bw_in_allowance_exceeded" => LimitKind::BwInAllowance,
            "conntrack_allowance_exceeded" => LimitKind::ConntrackAllowance,
            "linklocal_allowance_exceeded" => LimitKind::LinklocalAllowance,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Sender,
    Receiver,
    Both,
}

impl Side {
    /// Its name as the record writes it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Side::Sender => "sender",
            Side::Receiver => "receiver",
            Side::Both => "both",
        }
    }
}

/// One limit with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limit {
    pub kind: LimitKind,
    /// Which end's counters show it.
    pub side: Side,
    /// The counter(s) that moved.
    pub counters: Vec<String>,
    /// By how much, summed.
    pub delta: u64,
    /// Frames this limit accounts for (held back, dropped or not sent): the order of a mixed verdict.
    pub frames: u64,
    pub evidence: String,
}

/// The limits a step hit, the one accounting for most frames first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub limits: Vec<Limit>,
    /// Set when a counter sample was invalid, the counts did not add up, or
    /// (drop's own verdict) the host held the receiver back so that no
    /// limit can be told: the verdict is then unknown, and this says why.
    pub invalid: Option<String>,
}

/// What a verdict is grouped and coloured by: the kind of its first
/// limit (the one accounting for most frames), or why there is none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VerdictClass {
    Limit(LimitKind),
    /// The counters could not say (an invalid sample, counts that did not add up).
    Unknown,
    /// No verdict: the step failed or was not judged.
    #[default]
    NotJudged,
    /// Runs of one step were judged differently.
    Mixed,
}

impl VerdictClass {
    pub fn as_str(&self) -> &'static str {
        match self {
            VerdictClass::Limit(k) => k.as_str(),
            VerdictClass::Unknown => "unknown",
            VerdictClass::NotJudged => "n/a",
            VerdictClass::Mixed => "mixed",
        }
    }

    /// The class of `verdict`, NotJudged when there is none.
    pub fn of(verdict: Option<&Verdict>) -> VerdictClass {
        verdict.map_or(VerdictClass::NotJudged, Verdict::class)
    }

    /// The classes of several runs of one step: theirs when they agree.
    pub fn agreed(classes: impl IntoIterator<Item = VerdictClass>) -> VerdictClass {
        let mut it = classes.into_iter();
        let Some(first) = it.next() else { return VerdictClass::NotJudged };
        if it.all(|c| c == first) {
            first
        } else {
            VerdictClass::Mixed
        }
    }
}

impl std::fmt::Display for VerdictClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Verdict {
    /// Its first limit's kind; Unknown when its sample was invalid or it names none.
    pub fn class(&self) -> VerdictClass {
        match (&self.invalid, self.limits.first()) {
            (None, Some(l)) => VerdictClass::Limit(l.kind),
            _ => VerdictClass::Unknown,
        }
    }

    /// "pps-allowance (sender) + receiver", "none", or "unknown (...)".
    pub fn label(&self) -> String {
        if let Some(why) = &self.invalid {
            return format!("unknown ({why})");
        }
        self.limits
            .iter()
            .map(|l| match (l.kind, l.side) {
                (LimitKind::Receiver | LimitKind::Sender | LimitKind::Network | LimitKind::Path | LimitKind::None, _) => {
                    l.kind.as_str().to_string()
                }
                (LimitKind::Other, side) => format!("other: {} ({})", l.counters.join(","), side_str(side)),
                (k, side) => format!("{} ({})", k.as_str(), side_str(side)),
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }

    pub fn primary(&self) -> Option<&Limit> {
        self.limits.first()
    }

    /// Adds a sender-side limit found outside the counters (a replay that
    /// fell behind its capture's timing): it replaces "none", joins an
    /// existing sender limit's evidence, and the limits stay ordered by frames.
    pub fn add_sender_limit(&mut self, frames: u64, evidence: String) {
        if self.invalid.is_some() {
            return;
        }
        self.limits.retain(|l| l.kind != LimitKind::None);
        match self.limits.iter_mut().find(|l| l.kind == LimitKind::Sender) {
            Some(l) => {
                l.evidence = format!("{}; {evidence}", l.evidence);
                l.frames = l.frames.max(frames);
            }
            None => self.limits.push(Limit {
                kind: LimitKind::Sender,
                side: Side::Sender,
                counters: Vec::new(),
                delta: frames,
                frames,
                evidence,
            }),
        }
        self.limits.sort_by_key(|l| std::cmp::Reverse(l.frames));
    }
}

pub(crate) fn side_str(s: Side) -> &'static str {
    match s {
        Side::Sender => "sender",
        Side::Receiver => "receiver",
        Side::Both => "both",
    }
}
