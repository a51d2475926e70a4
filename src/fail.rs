//! One-line errors: every failure a user can cause ends with a single line
//! naming the problem and the fix, and a non-zero exit.

use std::fmt;

/// A failure to report to the user, with the exit code it deserves.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
}

/// Exit code for bad input (as clap uses).
pub const USAGE: u8 = 2;
/// Exit code for a run that could not be carried out.
pub const RUNTIME: u8 = 1;

impl Failure {
    pub fn usage(message: impl fmt::Display) -> Failure {
        Failure { message: message.to_string(), code: USAGE }
    }

    pub fn runtime(message: impl fmt::Display) -> Failure {
        Failure { message: message.to_string(), code: RUNTIME }
    }
}

impl From<dpdk::Error> for Failure {
    fn from(e: dpdk::Error) -> Failure {
        Failure::runtime(e)
    }
}

/// Prints `tool: error: message` as one line and returns the exit code.
pub fn report(tool: &str, f: &Failure) -> std::process::ExitCode {
    let one_line = f.message.replace('\n', "; ");
    eprintln!("{tool}: error: {one_line}");
    std::process::ExitCode::from(f.code)
}

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
