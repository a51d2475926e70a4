//! Group trials: N senders, one receiver, one measured window per step.
//!
//! Pure logic, no sockets: the plan every member must share (and the first
//! difference when one does not), each member's share of the stream-id
//! space (so flows from different senders never alias in the receiver's
//! accounting), the barriers that keep the members in step (all ready
//! before the warm-up, all in before the window opens, all drained before
//! it closes). crate::arrivals estimates the backlog their superposed
//! arrivals build.

use std::collections::BTreeSet;
use std::ops::Range;

use seqtrack::{BlockCounts, STREAM_BLOCK, STREAM_BLOCKS};
use serde::{Deserialize, Serialize};

/// The most senders in one group (the stream-id space is split between them).
pub const MAX_SENDERS: u16 = 64;

/// (received, lost) of `member`'s share, from per-block counts.
pub fn member_arrivals(blocks: &[BlockCounts], member: u16, senders: u16) -> (u64, u64) {
    let r = stream_range(member, senders);
    let (first, end) = ((r.start / STREAM_BLOCK) as usize, (r.end / STREAM_BLOCK) as usize);
    blocks
        .get(first..end.min(blocks.len()))
        .unwrap_or(&[])
        .iter()
        .fold((0, 0), |(rx, lost), b| (rx + b.received, lost.wrapping_add(b.lost)))
}

/// One step as a member plans it: what must match across the group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedStep {
    pub queues: u16,
    pub size: u32,
    pub rx_queues: u16,
    /// Total frames per second of this member, None: unpaced.
    pub rate: Option<f64>,
    /// The arrival shape ("even", "burst:8", "open"); an older member sends none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// The frame size mix ("imix", pairs), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_mix: Option<String>,
    pub duration_ms: u64,
    pub warmup_ms: u64,
}

/// Every step of a member's run, in order (repeats included).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepPlan {
    pub steps: Vec<PlannedStep>,
}

impl StepPlan {
    /// The first way `other` differs from this plan, in words; None when they match.
    pub fn difference(&self, other: &StepPlan) -> Option<String> {
        if self.steps.len() != other.steps.len() {
            return Some(format!("{} steps, the group's plan has {}", other.steps.len(), self.steps.len()));
        }
        for (i, (a, b)) in self.steps.iter().zip(&other.steps).enumerate() {
            let step = i + 1;
            let differs = |what: &str, theirs: String, ours: String| Some(format!("step {step}: {what} {theirs}, the group's is {ours}"));
            if a.queues != b.queues {
                return differs("queues", b.queues.to_string(), a.queues.to_string());
            }
            if a.size != b.size {
                return differs("frame size", format!("{} B", b.size), format!("{} B", a.size));
            }
            if a.rx_queues != b.rx_queues {
                return differs("RX queues", b.rx_queues.to_string(), a.rx_queues.to_string());
            }
            if a.rate != b.rate {
                let r = |r: Option<f64>| r.map_or("unpaced".to_string(), |r| format!("{r} frames/s"));
                return differs("rate", r(b.rate), r(a.rate));
            }
            if a.size_mix != b.size_mix {
                let m = |m: &Option<String>| m.clone().unwrap_or_else(|| "none".into());
                return differs("size mix", m(&b.size_mix), m(&a.size_mix));
            }
            if a.shape != b.shape {
                let s = |s: &Option<String>| s.clone().unwrap_or_else(|| "unstated".into());
                return differs("arrival shape", s(&b.shape), s(&a.shape));
            }
            if a.duration_ms != b.duration_ms {
                return differs("duration", format!("{} ms", b.duration_ms), format!("{} ms", a.duration_ms));
            }
            if a.warmup_ms != b.warmup_ms {
                return differs("warm-up", format!("{} ms", b.warmup_ms), format!("{} ms", a.warmup_ms));
            }
        }
        None
    }
}

/// Member `member` of `senders` owns these stream ids: the group's stream
/// space split evenly, so every sender's streams are its own at the receiver.
pub fn stream_range(member: u16, senders: u16) -> Range<u32> {
    let width = STREAM_BLOCK * (STREAM_BLOCKS as u32 / u32::from(senders.max(1)));
    let start = u32::from(member) * width;
    start..start + width
}

/// Which member of `senders` sent stream `stream`.
pub fn member_of(stream: u16, senders: u16) -> u16 {
    let width = STREAM_BLOCK * (STREAM_BLOCKS as u32 / u32::from(senders.max(1)));
    (u32::from(stream) / width).min(u32::from(senders.max(1)) - 1) as u16
}

/// Where the members are in a step: each barrier opens when every member
/// has reached it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Prepared for the step: the warm-up starts when all are.
    Ready,
    /// Warmed up and drained: the window opens when all are.
    InWindow,
    /// Stopped and drained: the window closes when all are.
    Done,
}

/// Why a group cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    #[error("group {group} is full: it has its {senders} sender(s)")]
    Full { group: String, senders: u16 },
    #[error("group {group} expects {expected} senders, this member says {said}: give every member the same --senders")]
    SizeDiffers { group: String, expected: u16, said: u16 },
    #[error("group {group}: this member's plan differs: {difference}; give every member the same ladder")]
    PlanDiffers { group: String, difference: String },
    #[error("another group ({0}) is running: one group at a time")]
    OtherGroup(String),
    #[error("a group has 2 to {MAX_SENDERS} senders, not {0}")]
    BadSize(u16),
    #[error("member {member} left the group ({why}): the step ends for every member")]
    MemberLeft { member: u16, why: String },
    #[error("member {member} reached {got:?} while the group waits at {waiting:?}")]
    OutOfStep { member: u16, got: Stage, waiting: Stage },
}

/// A group being formed or running.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    pub senders: u16,
    pub plan: StepPlan,
    /// Members joined, by index (their join order).
    pub members: Vec<String>,
    /// The barrier the group waits at, and who has reached it.
    waiting: Stage,
    arrived: BTreeSet<u16>,
    /// Set when a member left mid-run: every later arrival is refused.
    broken: Option<GroupError>,
}

/// What an arrival at a barrier leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    /// Others are still to come: wait.
    Wait,
    /// This arrival completed the barrier: everybody goes on.
    Open,
}

impl Group {
    /// A new group with its first member (index 0).
    pub fn new(name: &str, senders: u16, plan: StepPlan, client: &str) -> Result<Group, GroupError> {
        if !(2..=MAX_SENDERS).contains(&senders) {
            return Err(GroupError::BadSize(senders));
        }
        Ok(Group {
            name: name.to_string(),
            senders,
            plan,
            members: vec![client.to_string()],
            waiting: Stage::Ready,
            arrived: BTreeSet::new(),
            broken: None,
        })
    }

    /// Adds a member; its index, or why not.
    pub fn join(&mut self, name: &str, senders: u16, plan: &StepPlan, client: &str) -> Result<u16, GroupError> {
        if name != self.name {
            return Err(GroupError::OtherGroup(self.name.clone()));
        }
        if senders != self.senders {
            return Err(GroupError::SizeDiffers { group: self.name.clone(), expected: self.senders, said: senders });
        }
        if self.is_complete() {
            return Err(GroupError::Full { group: self.name.clone(), senders: self.senders });
        }
        if let Some(difference) = self.plan.difference(plan) {
            return Err(GroupError::PlanDiffers { group: self.name.clone(), difference });
        }
        self.members.push(client.to_string());
        Ok(self.members.len() as u16 - 1)
    }

    pub fn is_complete(&self) -> bool {
        self.members.len() == usize::from(self.senders)
    }

    /// Member `member` reached `stage`. The last to arrive opens it; the
    /// group then waits at the next stage (after Done, Ready of the next step).
    pub fn arrive(&mut self, member: u16, stage: Stage) -> Result<Arrival, GroupError> {
        if let Some(e) = &self.broken {
            return Err(e.clone());
        }
        if stage != self.waiting {
            return Err(GroupError::OutOfStep { member, got: stage, waiting: self.waiting });
        }
        self.arrived.insert(member);
        if self.arrived.len() < usize::from(self.senders) || !self.is_complete() {
            return Ok(Arrival::Wait);
        }
        self.arrived.clear();
        self.waiting = match stage {
            Stage::Ready => Stage::InWindow,
            Stage::InWindow => Stage::Done,
            Stage::Done => Stage::Ready,
        };
        Ok(Arrival::Open)
    }

    /// The stage the group waits at.
    pub fn waiting_at(&self) -> Stage {
        self.waiting
    }

    /// Member `member` left (failed, vanished): the group is over, every
    /// member waiting or arriving later is told why.
    pub fn leave(&mut self, member: u16, why: &str) -> GroupError {
        let e = self.broken.get_or_insert(GroupError::MemberLeft { member, why: why.to_string() });
        e.clone()
    }

    pub fn broken(&self) -> Option<&GroupError> {
        self.broken.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seqtrack::{block_of, GROUP_STREAM_SPACE};

    fn plan(sizes: &[u32]) -> StepPlan {
        StepPlan {
            steps: sizes
                .iter()
                .map(|&size| PlannedStep {
                    queues: 1,
                    size,
                    rx_queues: 1,
                    rate: Some(1e5),
                    shape: Some("even".into()),
                    size_mix: None,
                    duration_ms: 1000,
                    warmup_ms: 200,
                })
                .collect(),
        }
    }

    #[test]
    fn plans_compare_and_name_the_first_difference() {
        assert_eq!(plan(&[64, 1500]).difference(&plan(&[64, 1500])), None);
        assert_eq!(plan(&[64, 1500]).difference(&plan(&[64])).unwrap(), "1 steps, the group's plan has 2");
        assert_eq!(plan(&[64, 1500]).difference(&plan(&[64, 9000])).unwrap(), "step 2: frame size 9000 B, the group's is 1500 B");
        let mut p = plan(&[64]);
        p.steps[0].rate = None;
        assert_eq!(plan(&[64]).difference(&p).unwrap(), "step 1: rate unpaced, the group's is 100000 frames/s");
        let mut p = plan(&[64]);
        p.steps[0].shape = Some("burst:8".into());
        assert_eq!(plan(&[64]).difference(&p).unwrap(), "step 1: arrival shape burst:8, the group's is even");
        let mut p = plan(&[1518]);
        p.steps[0].size_mix = Some("imix".into());
        assert_eq!(plan(&[1518]).difference(&p).unwrap(), "step 1: size mix imix, the group's is none");
    }

    #[test]
    fn stream_ranges_split_the_space_and_map_back() {
        // Whole blocks of 64 ids: 21 blocks each for 3 senders.
        assert_eq!(stream_range(0, 3), 0..1344);
        assert_eq!(stream_range(2, 3), 2688..4032);
        assert_eq!(stream_range(63, 64), 4032..4096);
        for senders in [2u16, 3, 7, 64] {
            for m in 0..senders {
                let r = stream_range(m, senders);
                assert!(r.end <= GROUP_STREAM_SPACE);
                assert_eq!(member_of(r.start as u16, senders), m);
                assert_eq!(member_of((r.end - 1) as u16, senders), m);
            }
        }
        // Ids past the last full range (4095 with 3 senders) belong to the last member.
        assert_eq!(member_of(4095, 3), 2);
    }

    #[test]
    fn a_members_arrivals_are_its_blocks_sum() {
        let mut blocks = [BlockCounts::default(); STREAM_BLOCKS];
        blocks[block_of(0)].received += 10;
        blocks[block_of(1343)].received += 5;
        blocks[block_of(1344)] = BlockCounts { received: 7, lost: 2 };
        // A reorder after a gap: +3 lost, then -1 (wrapping), net 2.
        blocks[block_of(2688)].lost = 3u64.wrapping_add(u64::MAX);
        blocks[block_of(60_000)].received += 1; // past the space: the last block
        assert_eq!(member_arrivals(&blocks, 0, 3), (15, 0));
        assert_eq!(member_arrivals(&blocks, 1, 3), (7, 2));
        assert_eq!(member_arrivals(&blocks, 2, 3), (0, 2));
        assert_eq!(block_of(60_000), STREAM_BLOCKS - 1);
    }

    #[test]
    fn joining_checks_size_plan_and_room() {
        let mut g = Group::new("g", 3, plan(&[64]), "a").unwrap();
        assert!(matches!(g.join("g", 2, &plan(&[64]), "b"), Err(GroupError::SizeDiffers { expected: 3, said: 2, .. })));
        assert!(matches!(g.join("g", 3, &plan(&[1500]), "b"), Err(GroupError::PlanDiffers { .. })));
        assert!(matches!(g.join("h", 3, &plan(&[64]), "b"), Err(GroupError::OtherGroup(_))));
        assert_eq!(g.join("g", 3, &plan(&[64]), "b"), Ok(1));
        assert_eq!(g.join("g", 3, &plan(&[64]), "c"), Ok(2));
        assert!(g.is_complete());
        assert!(matches!(g.join("g", 3, &plan(&[64]), "d"), Err(GroupError::Full { .. })));
        assert!(matches!(Group::new("g", 1, plan(&[64]), "a"), Err(GroupError::BadSize(1))));
    }

    #[test]
    fn barriers_open_on_the_last_arrival_in_order() {
        let mut g = Group::new("g", 2, plan(&[64]), "a").unwrap();
        // Not complete yet: an arrival waits even if every joined member is in.
        assert_eq!(g.arrive(0, Stage::Ready), Ok(Arrival::Wait));
        g.join("g", 2, &plan(&[64]), "b").unwrap();
        assert_eq!(g.arrive(1, Stage::Ready), Ok(Arrival::Open));
        assert_eq!(g.waiting_at(), Stage::InWindow);
        assert!(matches!(g.arrive(0, Stage::Done), Err(GroupError::OutOfStep { .. })));
        assert_eq!(g.arrive(1, Stage::InWindow), Ok(Arrival::Wait));
        // The same member twice does not open it.
        assert_eq!(g.arrive(1, Stage::InWindow), Ok(Arrival::Wait));
        assert_eq!(g.arrive(0, Stage::InWindow), Ok(Arrival::Open));
        assert_eq!(g.arrive(0, Stage::Done), Ok(Arrival::Wait));
        assert_eq!(g.arrive(1, Stage::Done), Ok(Arrival::Open));
        assert_eq!(g.waiting_at(), Stage::Ready);
    }

    #[test]
    fn a_member_leaving_ends_the_step_for_all() {
        let mut g = Group::new("g", 2, plan(&[64]), "a").unwrap();
        g.join("g", 2, &plan(&[64]), "b").unwrap();
        assert_eq!(g.arrive(0, Stage::Ready), Ok(Arrival::Wait));
        let e = g.leave(1, "killed");
        assert!(e.to_string().contains("member 1 left the group (killed)"), "{e}");
        assert_eq!(g.arrive(0, Stage::Ready), Err(e.clone()));
        // The first reason stays.
        assert_eq!(g.leave(0, "later"), e);
    }
}
