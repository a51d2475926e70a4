//! Ctrl-C, SIGTERM and SIGHUP end a run with its final report: the handler
//! only sets a flag the loops poll and counts the signals. SIGHUP is a
//! terminal or an ssh session going away (blast paths starts a remote drop
//! through `ssh -tt`): by default it would kill drop without closing its
//! port, and an AF_XDP port would leave its XDP program on the interface.
//!
//! A second signal does not kill: `timeout`, and a shell's Ctrl-C with a
//! process group, deliver the same signal twice (to the child and to its
//! group), and a run killed there lost its summary and its JSON record.
//! Every further signal is counted and, while the record is being written,
//! waited out; once [`GRACE`] has passed since the first one (the record
//! had its bounded chance), a further signal ends the process at once
//! with exit code [`EXIT_INTERRUPTED`] and a line saying so. After the
//! record is written, a further signal also ends the --metrics linger.
//! An interrupted run exits [`EXIT_INTERRUPTED`] (130 = 128 + SIGINT,
//! whichever of SIGINT or SIGTERM came), after its report and record.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Signals received so far.
static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// CLOCK_MONOTONIC seconds of the first signal (0: none yet).
static FIRST_AT_S: AtomicI64 = AtomicI64::new(0);

/// The exit code of a run a signal cut short (its report and record
/// written): 130, as shells report a command ended by SIGINT.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long after the first signal further ones are waited out, so the
/// report and the record get written (bounded: writing them takes well
/// under a second; a step's drain and the peer's answer a few).
pub const GRACE_S: i64 = 10;

/// Seconds on CLOCK_MONOTONIC (async-signal-safe: nix's clock_gettime is
/// the bare call into a timespec on the stack, errno read on failure, no
/// allocation). 0 if the clock cannot be read, which it always can.
fn monotonic_s() -> i64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).map_or(0, |t| t.tv_sec())
}

/// Writes `msg` to stderr with write(2), the only output a handler may do
/// (nix's write is the bare call: no allocation, no lock).
fn say_raw(msg: &[u8]) {
    // SAFETY: fd 2 is stderr, open for the whole process (nothing here closes it).
    let stderr = unsafe { std::os::fd::BorrowedFd::borrow_raw(2) };
    let _ = nix::unistd::write(stderr, msg);
}

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only async-signal-safe work here: atomics, clock_gettime, write, _exit.
    let n = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
    INTERRUPTED.store(true, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
    if n == 1 {
        FIRST_AT_S.store(monotonic_s().max(1), Ordering::SeqCst);
        return;
    }
    if monotonic_s() - FIRST_AT_S.load(Ordering::SeqCst) >= GRACE_S {
        say_raw(b"\ninterrupted again after the report's 10 s: exiting now, the record may be missing (exit 130)\n");
        // libc, not nix or std: nix has no _exit, and std::process::exit
        // runs atexit handlers and flushes stdout (locks: not async-signal-safe).
        // SAFETY: _exit is async-signal-safe and ends the process at once.
        unsafe { libc::_exit(i32::from(EXIT_INTERRUPTED)) };
    }
    say_raw(b"\nstopping: writing the report and the record first (another signal 10 s after the first exits at once)\n");
}

/// Installs the handlers for SIGINT and SIGTERM (they stay installed: a
/// repeated signal is counted, not fatal; see the module's text).
pub fn install() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    // No SA_RESETHAND (a second signal would get the default action and kill
    // the process before its record is written); no SA_RESTART, as before:
    // a blocking call a signal interrupts returns, and the loops see the flag.
    let action = SigAction::new(SigHandler::Handler(on_signal), SaFlags::empty(), SigSet::empty());
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler does only async-signal-safe work.
        unsafe { sigaction(sig, &action) }.expect("install signal handler");
    }
    // A device call that does not return is given up on a signal.
    dpdk::deadline::set_signal_count(received);
}

/// The flag every loop polls.
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// Asks every loop to stop.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

pub fn stopping() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// True when a signal, not the run's own end, stopped it.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// How many signals have arrived so far (a wait that a further signal
/// should end compares this with its count at the start).
pub fn received() -> u32 {
    SIGNALS.load(Ordering::SeqCst)
}
