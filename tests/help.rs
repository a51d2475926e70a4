//! `--help` as a person reads it: every duration, size, rate and share
//! printed with its unit, and every default it prints taken back as input.
//! It runs the real binaries with --help only: no EAL starts.
//!
//! The rule, read from the help text and the binaries (no list of flags):
//! - A default is *bare* when it is a number alone ("2", "0.5", "1024");
//!   "2s", "64B", "0.5%", "1GB" and "100us" carry their unit.
//! - A bare default must be a count or a name, which the test asks the
//!   binary itself: offered that number with each unit the tools' parsers
//!   read (s, ms, us, B, GB, %, pps), the flag refuses them all (a count takes no
//!   unit), or it takes any text at all (a device name, --port's "0").
//!   And neither its placeholder nor its help may name a unit of time,
//!   size, rate or share (seconds, bytes, percent, per second ...), which
//!   catches a duration whose parser takes bare numbers only. So queues,
//!   bursts, ring descriptors, repeats, passes, streams, CPU cycles and
//!   UDP port numbers may print bare; a duration, size, rate or
//!   percentage may not.
//! - Every default that is a number, with its unit or without, is valid
//!   input: `TOOL --FLAG DEFAULT --help` exits 0 (clap runs a value's
//!   parser when it reads the value, before it reaches --help), so what
//!   the help prints can be typed back. (A default in prose, "[default:
//!   unpaced]" or "[default: 10s, unless --count]", is the doc comment's
//!   and is not input.)

use std::process::{Command, Output};

const BLAST: &str = env!("CARGO_BIN_EXE_blast");
const DROP: &str = env!("CARGO_BIN_EXE_drop");

/// The units the tools' parsers read after a number (src/units.rs,
/// src/session/parse.rs).
const UNITS: [&str; 7] = ["s", "ms", "us", "B", "GB", "%", "pps"];

/// Words in a placeholder or a help text that say the value is a time, a
/// size, a rate or a share: such a flag's default needs its unit.
const UNIT_WORDS: [&str; 12] = [
    "second",
    "millisecond",
    "microsecond",
    "how long",
    "how often",
    "byte",
    "percent",
    "per second",
    "gb/s",
    "mpps",
    "timeout",
    "interval",
];

/// The placeholders that name a unit outright.
const UNIT_PLACEHOLDERS: [&str; 9] = ["SECONDS", "DURATION", "US", "MS", "BYTES", "PCT", "PPS", "GBPS", "RATE"];

/// One flag as --help shows it.
#[derive(Debug)]
struct Entry {
    flag: String,
    placeholder: Option<String>,
    /// The help text, lines joined by spaces.
    text: String,
    default: Option<String>,
}

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin).args(args).output().unwrap_or_else(|e| panic!("cannot run {bin}: {e}"))
}

fn help(bin: &str, prefix: &[&str]) -> String {
    let args: Vec<&str> = prefix.iter().copied().chain(["--help"]).collect();
    let out = run(bin, &args);
    assert!(out.status.success(), "{bin} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// A line that opens a flag's entry: clap indents it 2 (with a short
/// form) or 6 spaces, its help text 10.
fn flag_line(line: &str) -> Option<(String, Option<String>)> {
    let indent = line.len() - line.trim_start().len();
    let t = line.trim_start();
    if !(2..=6).contains(&indent) || !t.starts_with('-') {
        return None;
    }
    let long = t.split([' ', ',']).find(|w| w.starts_with("--"))?;
    let placeholder = t.split_once('<').and_then(|(_, r)| r.split_once('>')).map(|(p, _)| p.to_owned());
    Some((long.trim_end_matches("...").to_owned(), placeholder))
}

/// The help's flags, each with its text and its `[default: ...]`.
fn entries(help: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for line in help.lines() {
        if let Some((flag, placeholder)) = flag_line(line) {
            let inline = line.trim_start().split_once("  ").map(|(_, r)| r.trim().to_owned()).unwrap_or_default();
            out.push(Entry { flag, placeholder, text: inline, default: None });
        } else if let Some(e) = out.last_mut() {
            if line.starts_with("          ") {
                e.text = format!("{} {}", e.text, line.trim());
            } else if !line.trim().is_empty() {
                // A heading or the after-help: the entry ended.
                out.push(Entry { flag: String::new(), placeholder: None, text: String::new(), default: None });
            }
        }
    }
    out.retain(|e| !e.flag.is_empty());
    for e in &mut out {
        // clap's own "[default: X]" comes last; a "[default: ...]" in the
        // doc text (e.g. "10s, unless --count") is prose and stays in text.
        if let Some(start) = e.text.rfind("[default: ") {
            let rest = &e.text[start + "[default: ".len()..];
            if let Some(end) = rest.find(']') {
                e.default = Some(rest[..end].to_owned());
            }
        }
    }
    out
}

fn is_bare_number(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') && v.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// Whether `bin PREFIX FLAG VALUE --help` gets as far as the help.
fn accepts(bin: &str, prefix: &[&str], flag: &str, value: &str) -> bool {
    let args: Vec<&str> = prefix.iter().copied().chain([flag, value, "--help"]).collect();
    run(bin, &args).status.success()
}

/// The flag's placeholder or help names a unit of time, size, rate or share.
fn names_a_unit(e: &Entry) -> Option<String> {
    if let Some(p) = e.placeholder.as_deref().filter(|p| UNIT_PLACEHOLDERS.contains(p)) {
        return Some(format!("its placeholder <{p}>"));
    }
    let text = e.text.to_lowercase();
    UNIT_WORDS.iter().find(|w| text.contains(*w)).map(|w| format!("its help says {w:?}"))
}

/// Every problem with `bin PREFIX --help`'s defaults, one line each; and
/// how many defaults were checked.
fn problems(bin: &str, prefix: &[&str]) -> (Vec<String>, usize) {
    let name = bin.rsplit('/').next().unwrap_or(bin);
    let tool = std::iter::once(name).chain(prefix.iter().copied()).collect::<Vec<_>>().join(" ");
    let mut found = Vec::new();
    let mut checked = 0;
    for e in entries(&help(bin, prefix)) {
        let Some(default) = e.default.as_deref() else { continue };
        checked += 1;
        let numeric = default.starts_with(|c: char| c.is_ascii_digit()) && !default.contains([' ', ',']);
        if numeric && !accepts(bin, prefix, &e.flag, default) {
            found.push(format!("{tool} {}: prints [default: {default}], which it refuses as input", e.flag));
        }
        if !is_bare_number(default) {
            continue;
        }
        if let Some(why) = names_a_unit(&e) {
            found.push(format!("{tool} {}: [default: {default}] has no unit, but {why}", e.flag));
        }
        let takes_any_text = accepts(bin, prefix, &e.flag, "no-number");
        if !takes_any_text {
            if let Some(u) = UNITS.iter().find(|u| accepts(bin, prefix, &e.flag, &format!("{default}{u}"))) {
                found.push(format!("{tool} {}: [default: {default}] has no unit, but the flag takes {default}{u}", e.flag));
            }
        }
    }
    (found, checked)
}

#[test]
fn the_help_parser_reads_flags_placeholders_and_defaults() {
    let sample = "Options:\n      --warmup <WARMUP>\n          In a ladder, how long\n          each step sends\n          \n          [default: 2s]\n\n  -v, --verbose...\n          More log output\n\nAfter help text\n";
    let e = entries(sample);
    assert_eq!(e.len(), 2, "{e:?}");
    assert_eq!((e[0].flag.as_str(), e[0].placeholder.as_deref(), e[0].default.as_deref()), ("--warmup", Some("WARMUP"), Some("2s")));
    assert!(names_a_unit(&e[0]).is_some(), "\"how long\" names a time");
    assert_eq!((e[1].flag.as_str(), e[1].default.as_deref()), ("--verbose", None));
    assert!(is_bare_number("0.5") && is_bare_number("1024") && !is_bare_number("2s") && !is_bare_number("0.5%"));
}

#[test]
fn every_default_in_help_carries_its_unit_and_reads_back() {
    let mut all = Vec::new();
    for (bin, prefix, least) in [(BLAST, &[][..], 20), (DROP, &[][..], 12), (BLAST, &["report"][..], 0), (BLAST, &["paths"][..], 3)] {
        let (found, checked) = problems(bin, prefix);
        assert!(checked >= least, "{bin} {prefix:?} --help: only {checked} defaults found: has its layout changed?");
        all.extend(found);
    }
    assert!(all.is_empty(), "defaults without their unit, or not valid input:\n{}", all.join("\n"));
}
