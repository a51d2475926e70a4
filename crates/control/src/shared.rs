//! What every connection's thread shares: the server's settings, who
//! holds drop and since when (and so who is told busy), the group being
//! formed or run, and the backend behind them.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use crate::auth::Secret;
use crate::backend::Backend;
use crate::group_run::GroupRun;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The shared secret clients must prove; None: any client (loopback only).
    pub secret: Option<Secret>,
    /// How long a session may stay silent with no window open.
    pub idle_timeout: Duration,
    /// How long a session may stay silent with a window open (a step's
    /// warm-up and duration must fit).
    pub window_timeout: Duration,
    /// From accept to the first complete line.
    pub first_line_deadline: Duration,
    /// From accept to a verified proof.
    pub auth_deadline: Duration,
    /// Connections not yet authenticated, at most; more are refused at once.
    pub max_pending: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            secret: None,
            idle_timeout: Duration::from_secs(60),
            window_timeout: Duration::from_secs(3600),
            first_line_deadline: Duration::from_secs(3),
            auth_deadline: Duration::from_secs(5),
            max_pending: 16,
        }
    }
}

/// Who holds the session, and since when.
pub(crate) struct Holder {
    pub(crate) client: String,
    pub(crate) since: SystemTime,
    pub(crate) state: HolderState,
}

/// What the holder does with drop.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HolderState {
    /// A run of its own: nobody else is served until it ends.
    Single,
    /// Group trial `0`: its members are served (until it is full), nobody else.
    Group(String),
}

impl Holder {
    pub(crate) fn busy(&self) -> String {
        format!("busy: serving {} since {} UTC; try again when its run ends", self.client, utc(self.since))
    }
}

pub(crate) struct Shared {
    backend: Arc<Mutex<dyn Backend>>,
    pub(crate) cfg: ServerConfig,
    session: Mutex<Option<Holder>>,
    /// Connections not yet authenticated.
    pub(crate) pending: AtomicUsize,
    pub(crate) stop: &'static AtomicBool,
    /// The group trial being formed or run, if any; its members wait on `group_moved`.
    group: Mutex<Option<GroupRun>>,
    pub(crate) group_moved: Condvar,
}

impl Shared {
    pub(crate) fn new(backend: Arc<Mutex<dyn Backend>>, cfg: ServerConfig, stop: &'static AtomicBool) -> Shared {
        Shared {
            backend,
            cfg,
            session: Mutex::new(None),
            pending: AtomicUsize::new(0),
            stop,
            group: Mutex::new(None),
            group_moved: Condvar::new(),
        }
    }

    pub(crate) fn backend(&self) -> MutexGuard<'_, dyn Backend + 'static> {
        self.backend.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn holder(&self) -> MutexGuard<'_, Option<Holder>> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Why a client coming for `group` (None: a run of its own) cannot be served now.
    pub(crate) fn busy_for(&self, group: Option<&str>) -> Option<String> {
        let holder = self.holder();
        let h = holder.as_ref()?;
        match (&h.state, group) {
            (HolderState::Group(g), Some(want)) if g == want && self.group_joinable() => None,
            (HolderState::Group(_), _) => Some(match self.group_text() {
                Some(g) => format!("busy: serving {g} since {} UTC; try again when its run ends", utc(h.since)),
                None => h.busy(),
            }),
            (HolderState::Single, _) => Some(h.busy()),
        }
    }

    /// The busy answer for a connection not yet authenticated: none while a
    /// group is forming (its members must get through to say so).
    pub(crate) fn busy_text(&self) -> Option<String> {
        let forming = matches!(self.holder().as_ref().map(|h| &h.state), Some(HolderState::Group(_))) && self.group_joinable();
        if forming {
            return None;
        }
        self.busy_for(None)
    }

    /// The group being formed or run, if any.
    pub(crate) fn group(&self) -> MutexGuard<'_, Option<GroupRun>> {
        self.group.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The group may take a member: formed with room, or not formed yet.
    fn group_joinable(&self) -> bool {
        self.group().as_ref().is_none_or(GroupRun::joinable)
    }

    fn group_text(&self) -> Option<String> {
        self.group().as_ref().map(GroupRun::describe)
    }
}

/// "2026-11-30 17:20:01" for a time.
fn utc(t: SystemTime) -> String {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_is_a_civil_date() {
        assert_eq!(utc(SystemTime::UNIX_EPOCH), "1970-01-01 00:00:00");
        assert_eq!(utc(SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_055_201)), "2026-11-30 16:13:21");
    }
}
