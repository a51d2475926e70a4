//! Both ends' counters over one window, as the limit verdict reads them.

use control::WindowFigures;
use limits::{WindowCounters, XstatsByKind};

use crate::sender::SenderWindow;

/// `offered`: frames the pacer scheduled in the window (None when unpaced).
pub fn window_counters(w: &SenderWindow, receiver: Option<&WindowFigures>, offered: Option<u64>) -> WindowCounters {
    let mut c = WindowCounters {
        offered,
        accepted: w.total.packets,
        ring_full_retries: w.total.ring_full_retries,
        sender_sockets: w.on_sockets,
        sender_gso_segments: w.udp.as_ref().map_or(0, |u| u.gso_segments),
        sender_opackets: w.port.opackets,
        sender_oerrors: w.port.oerrors,
        sender_xstats: w.xstats.counters.clone(),
        invalid: w.xstats.invalid.as_ref().map(|why| format!("sender: {why}")),
        sender_stalls: w.stalls.count,
        sender_stalled_ms: w.stalls.total_ms,
        // Only paced lanes time their tx_burst calls.
        sender_tx_pct: offered.and(w.tx_wall_pct),
        ..Default::default()
    };
    if let Some(f) = receiver {
        let exact = exact_account(w, f);
        // The trial's own frames where drop counted them per stream; else every frame that arrived.
        c.received = Some(exact.map_or(f.trial_received.unwrap_or(f.packets), |t| t.received));
        c.accounting_error = exact.and_then(|t| t.error(Some(w.total.packets))).map(|e| e.to_string());
        c.receiver_imissed = f.imissed;
        c.receiver_rx_nombuf = f.rx_nombuf;
        c.receiver_ierrors = f.ierrors;
        c.receiver_socket_drops = f.socket_drops;
        c.receiver_interface_drops = f.interface_drops;
        c.receiver_udp = f.udp.as_ref().map(|u| u.receiver());
        (c.receiver_polls, c.receiver_empty_polls) = (f.polls, f.empty_polls);
        // blast's end of the control link: drop's flat map, by kind again.
        c.receiver_xstats = XstatsByKind::from_wire(&f.xstats, &f.levels);
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

/// drop's exact account of the trial, when it is one of this window's
/// frames: every frame the sender's lanes sent carried a probe of its
/// streams (a replay's frames without room for one are not in it: its
/// loss is then the frame counts').
pub fn exact_account<'a>(w: &SenderWindow, f: &'a WindowFigures) -> Option<&'a seqtrack::TrialAccount> {
    f.trial.as_ref().filter(|t| w.all_probed || t.sent == w.total.packets)
}

/// The verdict on one window: the sender's counters, and the receiver's
/// when there are figures from it; `rate` the pace (None: unpaced).
pub fn verdict(w: &SenderWindow, receiver: Option<&WindowFigures>, rate: Option<f64>) -> limits::Verdict {
    limits::verdict(&window_counters(w, receiver, offered(rate, w.seconds)))
}

/// Frames a pacer at `rate` per second schedules in `seconds`.
pub fn offered(rate: Option<f64>, seconds: f64) -> Option<u64> {
    rate.map(|r| (r * seconds).round() as u64)
}

/// What arrived on one of drop's ports: the trial's own frames where it
/// counted them, else every frame.
fn port_received(f: &WindowFigures) -> u64 {
    f.trial_received.unwrap_or(f.packets)
}

/// Each port's share of a step when blast sends on several: its own
/// figures and verdict, against drop's port of the same index when drop
/// reports as many ports (otherwise sender-side only). `names`: blast's
/// ports in --port order; `queues`: the step's queue count.
pub fn port_steps(
    w: &SenderWindow,
    receiver: Option<&WindowFigures>,
    rate: Option<f64>,
    names: &[String],
    queues: u16,
) -> Vec<ladder::PortStep> {
    if w.ports.is_empty() {
        return Vec::new();
    }
    let nports = w.ports.len() as u16;
    let paired = receiver.filter(|f| f.ports.len() == w.ports.len());
    w.ports
        .iter()
        .enumerate()
        .map(|(i, pw)| {
            let share = layout::Spread::new(queues, nports).queues_on(i as u16);
            let port_rate = rate.map(|r| r * f64::from(share) / f64::from(queues.max(1)));
            let rx = paired.map(|f| &f.ports[i]);
            // No queue of this step ran here: nothing to judge ("idle").
            let verdict = (share > 0).then(|| limits::verdict(&window_counters(pw, rx, offered(port_rate, w.seconds))));
            ladder::PortStep {
                port: i as u16,
                name: names.get(i).cloned().unwrap_or_default(),
                queues: share,
                sent: ladder::Rates::over(pw.total.packets, pw.total.bytes, w.seconds),
                sender_opackets: pw.port.opackets,
                sender_oerrors: pw.port.oerrors,
                sender_xstats: pw.xstats.counters.deltas(),
                // The trial's own frames that arrived on the paired port, where drop counted them.
                received: rx.map(|f| ladder::Rates::over(port_received(f), f.trial_received_bytes.unwrap_or(f.bytes), w.seconds)),
                receiver_port: rx.and_then(|f| f.port_name.clone()),
                receiver_imissed: rx.map(|f| f.imissed),
                loss_pct: rx.filter(|_| share > 0).map(|f| ladder::StepRecord::loss_from(pw.total.packets, port_received(f))),
                verdict,
            }
        })
        .collect()
}
