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
/// Exit code for a device that did not answer a call within
/// --device-timeout (dpdk::deadline): the run ends without touching it again.
pub const DEVICE_STALLED: u8 = 3;

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
        let code = match &e {
            dpdk::Error::Stalled { .. } | dpdk::Error::Wedged { .. } => DEVICE_STALLED,
            dpdk::Error::Interrupted { .. } => crate::signals::EXIT_INTERRUPTED,
            _ => RUNTIME,
        };
        Failure { message: e.to_string(), code }
    }
}

/// Prints `tool: error: message` as one line and returns the exit code.
pub fn report(tool: &str, f: &Failure) -> std::process::ExitCode {
    let one_line = f.message.replace('\n', "; ");
    eprintln!("{tool}: error: {one_line}");
    std::process::ExitCode::from(f.code)
}
