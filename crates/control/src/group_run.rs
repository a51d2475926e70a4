//! A group trial being formed or run: its members, where they stand at
//! its barriers, its windows and what each member sent. Held by the
//! server's shared state; moved on by the members' sessions
//! (group_session.rs).

use crate::group::Group;
use crate::message::Response;
use crate::window::Windows;

/// A group being formed or running, shared by its members' sessions.
pub(crate) struct GroupRun {
    pub(crate) group: Group,
    /// Member sessions still connected.
    pub(crate) sessions: usize,
    /// Bumped whenever a barrier opens: a waiting member sees the change.
    pub(crate) opened: u64,
    /// What the last opened barrier answered, for every member.
    pub(crate) answer: Option<Response>,
    /// The group's measured windows: the open one, the next one's number.
    pub(crate) windows: Windows,
    /// What each member said of its sending in the open window.
    pub(crate) sent: Vec<MemberSending>,
    /// Where each member's streams stood when it asked for the window.
    pub(crate) starts: Vec<Option<seqtrack::StreamEdge>>,
    /// The edges the open window was started with: every member's, or none.
    pub(crate) counted: bool,
}

/// What a member says of its own sending at group_end.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemberSending {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) cycles_per_packet: Option<f64>,
    pub(crate) sender_limit: Option<String>,
    /// Where its streams stood at the window's end.
    pub(crate) streams: Option<seqtrack::StreamEdge>,
}

impl GroupRun {
    /// A member may still join.
    pub(crate) fn joinable(&self) -> bool {
        !self.group.is_complete() && self.group.broken().is_none()
    }

    pub(crate) fn describe(&self) -> String {
        format!("group {} ({} of {} senders joined)", self.group.name, self.group.members.len(), self.group.senders)
    }
}
