//! A replay's summary worked out from the lanes' outcomes: each queue's
//! figures, how closely the timing was kept, drop's window and the verdict.

use blastdrop::attribution;
use blastdrop::figures::{per_packet, Rates};
use blastdrop::sender::{Reading, Sender, SenderWindow, StepOutcome};
use blastdrop::tx::replay::Replay;
use blastdrop::tx::ReplayTiming;
use capture::Timing;

use super::record::{QueueRow, Summary, TimingRecord, HELD_PCT, LATE_US};

pub fn summarize(r: &Replay, sender: &Sender, outcome: &StepOutcome, before: &Reading, figures: Option<control::WindowFigures>) -> Summary {
    let total = outcome.total();
    let (queues, timing) = queue_rows(sender, outcome);
    // The measured window's counters with --peer (run_step read them around
    // it); the run's without, read now, only then.
    let window = outcome.window.clone().unwrap_or_else(|| {
        let (port, xstats, _) = sender.counters_between(before, &sender.read_counters());
        SenderWindow { seconds: outcome.seconds, total, port, xstats, ..Default::default() }
    });
    // The schedule's frames due by the end are what a perfect sender sent; fast has no schedule.
    let offered = (r.schedule.timing != Timing::Fast).then_some(timing.due);
    let mut verdict = limits::verdict(&attribution::window_counters(&window, figures.as_ref(), offered));
    let timing_record = timing_record(r, &timing, offered.is_none());
    if !timing_record.held {
        verdict.add_sender_limit(timing_record.late_frames, fell_behind(&timing, timing_record.late_frames));
    }
    Summary {
        side: "sender".to_owned(),
        interrupted: outcome.interrupted,
        sent: Rates::over(total.packets, total.bytes, outcome.seconds),
        stamped: timing.stamped,
        unstamped: timing.unstamped,
        timing: timing_record,
        ring_full_retries: total.ring_full_retries,
        alloc_failures: total.alloc_failures,
        unsent: outcome.lanes.iter().map(|l| l.outcome.unsent).sum(),
        received: figures.as_ref().map(|f| received(&window, f)),
        loss_pct: figures.as_ref().map(|f| {
            let got = attribution::exact_account(&window, f).map_or(f.packets, |t| t.received);
            ladder::StepRecord::loss_from(window.total.packets, got)
        }),
        receiver: figures,
        limit: verdict.label(),
        verdict,
        queues,
    }
}

/// Each queue's row, and the lanes' timing merged into one.
fn queue_rows(sender: &Sender, outcome: &StepOutcome) -> (Vec<QueueRow>, ReplayTiming) {
    let mut timing = ReplayTiming::default();
    let mut queues = Vec::new();
    for l in &outcome.lanes {
        let o = &l.outcome;
        let t = o.replay.clone().unwrap_or_default();
        let secs = o.end_tsc.saturating_sub(o.start_tsc) as f64 / sender.tsc_hz() as f64;
        queues.push(QueueRow {
            queue: l.queue,
            lcore: l.lcore,
            sent: Rates::over(o.tally.packets, o.tally.bytes, secs),
            stamped: t.stamped,
            unstamped: t.unstamped,
            busy: per_packet(o.tally.busy_cycles, o.tally.packets),
            ring_full_retries: o.tally.ring_full_retries,
        });
        timing.merge(&t);
    }
    (queues, timing)
}

/// How closely the schedule was kept; `unscheduled` (fast timing) holds whatever the lateness.
fn timing_record(r: &Replay, timing: &ReplayTiming, unscheduled: bool) -> TimingRecord {
    let late_frames = timing.lateness.count_above_ns(LATE_US * 1000);
    let sent = timing.lateness.count().max(1);
    TimingRecord {
        timing: r.schedule.timing.to_string(),
        passes: r.schedule.loops,
        due: timing.due,
        gap_error: timing.gap_error.summary(),
        lateness: timing.lateness.summary(),
        late_frames,
        held: unscheduled || late_frames as f64 <= sent as f64 * HELD_PCT / 100.0,
    }
}

/// The verdict's evidence when the replay did not hold the capture's timing.
fn fell_behind(timing: &ReplayTiming, late_frames: u64) -> String {
    let sent = timing.lateness.count().max(1);
    let l = timing.lateness.summary();
    format!(
        "the replay fell behind the capture's timing: {late_frames} of {sent} frames ({:.1}%) left more than {LATE_US} us after their time (P99 {:.1} us, max {:.1} us): the sending core was busy elsewhere or too slow for the capture's gaps",
        late_frames as f64 / sent as f64 * 100.0,
        l.p99_us,
        l.max_us
    )
}

/// What drop counted over the trial: when every frame sent carried a probe,
/// the exact account of them; else drop's frame count (other frames
/// included), as the verdict reads it.
fn received(window: &SenderWindow, f: &control::WindowFigures) -> Rates {
    match attribution::exact_account(window, f) {
        Some(t) => Rates::over(t.received, t.received_bytes, window.seconds),
        None => Rates::over(f.packets, f.bytes, window.seconds),
    }
}
