//! Where the human lines go: stdout, or stderr when stdout carries a
//! machine-readable record (`--json -`) or stream (`--events -`), so that
//! what a script reads from stdout parses with nothing else in it.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The schema version every --json record carries: the records crate's.
pub use records::SCHEMA_VERSION;

static TO_STDERR: AtomicBool = AtomicBool::new(false);

/// From now on human lines go to stderr.
pub fn human_to_stderr() {
    TO_STDERR.store(true, Relaxed);
}

/// Whether human lines go to stderr.
pub fn to_stderr() -> bool {
    TO_STDERR.load(Relaxed)
}

/// Writes `text` as it is (no newline added) where human lines go.
pub fn say_str(text: &str) {
    use std::io::Write;
    if to_stderr() {
        let _ = std::io::stderr().write_all(text.as_bytes());
    } else {
        let _ = std::io::stdout().write_all(text.as_bytes());
    }
}

/// `println!` for human lines: to stdout, or to stderr under `--json -`.
#[macro_export]
macro_rules! say {
    () => {
        $crate::out::say(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::say(format_args!($($arg)*))
    };
}

/// Writes one human line where `say!` sends them. A closed stdout or stderr
/// (`blast ... | head -3`) loses the line and nothing else: the run goes on
/// and writes its record, where `println!` would end it with a panic.
pub fn say(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = if to_stderr() { writeln!(std::io::stderr().lock(), "{line}") } else { writeln!(std::io::stdout().lock(), "{line}") };
}

/// The path that means stdout.
pub fn is_stdout(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}
