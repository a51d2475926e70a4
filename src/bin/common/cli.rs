//! The command line, in the flags' terms: parsing it into one line per
//! problem, the generated completions and man page, and the output files
//! checked before anything runs.

use std::path::Path;

use blastdrop::eal_args;
use clap::Parser;
use nix::unistd::AccessFlags;

use super::fail::Failure;

/// Parses the command line; help and version print as usual, any other
/// problem becomes one line (clap's own report spans several).
pub fn parse_args<T: Parser>() -> Result<T, Failure> {
    parse_args_from(std::env::args_os())
}

/// [`parse_args`] over given arguments (the program's name first).
pub fn parse_args_from<T: Parser>(argv: impl IntoIterator<Item = std::ffi::OsString>) -> Result<T, Failure> {
    T::try_parse_from(argv).map_err(|e| {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
            e.exit();
        }
        if e.kind() == ErrorKind::UnknownArgument {
            if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) {
                if let Some(name) = eal_args::eal_option(arg) {
                    let tool = T::command().get_name().to_owned();
                    return Failure::usage(format!(
                        "{name} is a DPDK EAL argument: put DPDK EAL arguments after -- (e.g. {tool} --queues 2 -- --no-huge -m 512)"
                    ));
                }
            }
        }
        if e.kind() == ErrorKind::MissingRequiredArgument {
            // clap lists the missing flags on the lines after the first.
            if let Some(ContextValue::Strings(missing)) = e.get(ContextKind::InvalidArg) {
                return Failure::usage(format!(
                    "a flag given needs {} too: add it, or leave that flag out (see --help)",
                    missing.join(", ")
                ));
            }
        }
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_owned();
        Failure::usage(format!("{first} (see --help)"))
    })
}

/// `--generate-completions SHELL` or `--generate-man`: prints them for
/// the tool's flags and says so (the caller exits); nothing else runs.
pub fn generated_docs<T: clap::CommandFactory>(completions: Option<clap_complete::Shell>, man: bool) -> Result<bool, Failure> {
    let mut cmd = T::command();
    let name = cmd.get_name().to_owned();
    let mut out = std::io::stdout();
    if let Some(shell) = completions {
        clap_complete::generate(shell, &mut cmd, name, &mut out);
        return Ok(true);
    }
    if man {
        clap_mangen::Man::new(cmd).render(&mut out).map_err(|e| Failure::runtime(format!("cannot write the man page: {e}")))?;
        return Ok(true);
    }
    Ok(false)
}

/// Checks, before anything runs, that every output file can be written:
/// its folder exists, is a folder and is writable, and the path itself is
/// not a folder (nor a file this user may not write). Creates nothing.
/// `outputs`: (flag, path given) pairs, e.g. `("--json", args.json.as_deref())`.
/// `-` (stdout) is for --json and --events, one of them at a time.
pub fn check_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<(), Failure> {
    let given: Vec<(&str, &Path)> = outputs.iter().filter_map(|&(f, p)| p.map(|p| (f, p))).collect();
    for (i, &(flag, path)) in given.iter().enumerate() {
        if let Some((other, _)) = given[..i].iter().find(|(_, p)| *p == path) {
            let target = if blastdrop::out::is_stdout(path) { "stdout (-)".to_string() } else { path.display().to_string() };
            return Err(Failure::usage(format!("{other} and {flag} both write {target}: give each its own file")));
        }
        if blastdrop::out::is_stdout(path) {
            if !matches!(flag, "--json" | "--events") {
                return Err(Failure::usage(format!("{flag} - is not supported: give a file (only --json and --events write to stdout)")));
            }
            continue;
        }
        check_output(flag, path)?;
    }
    Ok(())
}

fn check_output(flag: &str, path: &Path) -> Result<(), Failure> {
    let shown = path.display();
    let example = match flag {
        "--plot" => "out.svg",
        "--csv" => "out.csv",
        _ => "out.json",
    };
    if path.as_os_str().is_empty() {
        return Err(Failure::usage(format!("{flag} needs a file name, e.g. {flag} {example}")));
    }
    if path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/') {
        return Err(Failure::usage(format!("{flag} {shown} is a folder: give a file in it, e.g. {flag} {}", path.join(example).display())));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let where_ = folder.display();
    match std::fs::metadata(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::usage(format!("{flag} {shown}: folder {where_} does not exist: create it or give another path")));
        }
        Err(e) => return Err(Failure::usage(format!("{flag} {shown}: cannot reach folder {where_} ({e}): give another path"))),
        Ok(m) if !m.is_dir() => {
            return Err(Failure::usage(format!("{flag} {shown}: {where_} is not a folder: give a path in an existing folder")));
        }
        Ok(_) => {}
    }
    if let Err(e) = access(folder, AccessFlags::W_OK | AccessFlags::X_OK) {
        return Err(Failure::usage(format!(
            "{flag} {shown}: folder {where_} is not writable ({e}): give a path in a folder you can write to"
        )));
    }
    if path.exists() {
        if let Err(e) = access(path, AccessFlags::W_OK) {
            return Err(Failure::usage(format!("{flag} {shown} exists and cannot be overwritten ({e}): give another path")));
        }
    }
    Ok(())
}

/// access(2), for the real user (root passes unless the file system is
/// read-only); its error as std's, so the sentence reads as before.
fn access(path: &Path, mode: AccessFlags) -> std::io::Result<()> {
    nix::unistd::access(path, mode).map_err(std::io::Error::from)
}
