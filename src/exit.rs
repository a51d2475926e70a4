//! How a run ends: the --metrics linger, then the exit code, after the
//! record is written. Above `fail`, `signals` and `timeline`, which it
//! ties together, so none of them imports another for it.

use crate::fail::{report, Failure};

/// A run's exit: a failure's code (its line printed); for a run a signal
/// cut short, once its report and record are written,
/// [`crate::signals::EXIT_INTERRUPTED`] (130) with a line saying so, so a
/// script tells it from a run that went to its end; else 0. The
/// --metrics endpoint lingers first where the run ended on its own.
pub fn exit(tool: &str, result: Result<(), Failure>) -> std::process::ExitCode {
    let interrupted = crate::signals::interrupted();
    crate::timeline::linger();
    match result {
        Err(f) => report(tool, &f),
        Ok(()) if interrupted => {
            eprintln!(
                "{tool}: interrupted: the report and record above cover the run up to the signal (exit {})",
                crate::signals::EXIT_INTERRUPTED
            );
            std::process::ExitCode::from(crate::signals::EXIT_INTERRUPTED)
        }
        Ok(()) => std::process::ExitCode::SUCCESS,
    }
}
