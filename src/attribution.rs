//! Both ends' counters over one window, as the limit verdict reads them.

use control::WindowFigures;
use limits::WindowCounters;

use crate::sender::SenderWindow;
use crate::xstats::split_allowances;

/// `offered`: frames the pacer scheduled in the window (None when unpaced).
pub fn window_counters(w: &SenderWindow, receiver: Option<&WindowFigures>, offered: Option<u64>) -> WindowCounters {
    let (sender_allowances, sender_watched) = split_allowances(&w.xstats.deltas);
    let mut c = WindowCounters {
        offered,
        accepted: w.total.packets,
        tx_short: w.total.retries,
        sender_opackets: w.port.opackets,
        sender_oerrors: w.port.oerrors,
        sender_allowances,
        sender_watched,
        invalid: w.xstats.invalid.as_ref().map(|why| format!("sender: {why}")),
        ..Default::default()
    };
    if let Some(f) = receiver {
        let (ra, rw) = split_allowances(&f.xstats);
        c.received = Some(f.packets);
        c.receiver_imissed = f.imissed;
        c.receiver_rx_nombuf = f.rx_nombuf;
        c.receiver_ierrors = f.ierrors;
        c.receiver_allowances = ra;
        c.receiver_watched = rw;
        // Against the sender's trial, not drop's window: the window also
        // spans the drains on either side, when little arrives.
        if f.polls > 0 && w.seconds > 0.0 {
            c.receiver_busy_pct = Some((f.busy_seconds / w.seconds * 100.0).min(100.0));
        }
        if c.invalid.is_none() {
            c.invalid = f.xstats_invalid.as_ref().map(|why| format!("receiver: {why}"));
        }
    }
    c
}

/// Frames a pacer at `rate` per second schedules in `seconds`.
pub fn offered(rate: Option<f64>, seconds: f64) -> Option<u64> {
    rate.map(|r| (r * seconds).round() as u64)
}
