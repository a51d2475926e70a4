//! Ctrl-C and SIGTERM end a run with its final report: the handler only
//! sets a flag the loops poll. A second Ctrl-C kills at once.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only async-signal-safe work here: two atomic stores.
    INTERRUPTED.store(true, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handlers for SIGINT and SIGTERM.
pub fn install() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    // SA_RESETHAND: the second signal gets the default action and ends the process.
    let action = SigAction::new(SigHandler::Handler(on_signal), SaFlags::SA_RESETHAND, SigSet::empty());
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to atomics.
        unsafe { sigaction(sig, &action) }.expect("install signal handler");
    }
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
