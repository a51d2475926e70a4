//! What drop was asked to do, validated once: the flags checked against
//! each other, and with --listen the control port bound and its secret
//! read, before the EAL starts. `main` runs the `Mode`.

use std::net::TcpListener;

use crate::fail::Failure;

use crate::args::{self, Args};

/// One kind of run.
pub enum Mode {
    /// Count what arrives on every queue until stopped (Ctrl-C, --duration).
    Standalone,
    /// --listen: serve blast's steps over the control port.
    Served(Served),
}

/// The control port, bound, and the secret its clients must prove.
pub struct Served {
    pub listener: TcpListener,
    pub secret: Option<control::Secret>,
}

impl Mode {
    /// The mode of flags that passed `check`: the secret read and the
    /// control port bound (after --events opened, so its failure is an event too).
    pub fn of(args: &Args) -> Result<Mode, Failure> {
        let secret = secret(args)?;
        Ok(match listener(args, secret.is_some())? {
            Some(listener) => Mode::Served(Served { listener, secret: secret.map(|(s, _)| s) }),
            None => Mode::Standalone,
        })
    }

    /// The control port, when served.
    pub fn listener(&self) -> Option<&TcpListener> {
        match self {
            Mode::Served(s) => Some(&s.listener),
            Mode::Standalone => None,
        }
    }

    /// The queues to start with: all of them, or, served, one (each step
    /// of blast's ladder says how many it wants).
    pub fn first_queues(&self, max_queues: u16) -> u16 {
        match self {
            Mode::Standalone => max_queues,
            Mode::Served(_) => 1,
        }
    }
}

/// What clap cannot check alone, before anything starts.
pub fn check(args: &Args) -> Result<(), Failure> {
    if args.one_way && args.count_only {
        return Err(Failure::usage("--one-way reads every probe and --count-only reads none: drop one of them"));
    }
    if !args.one_way && args.arrival_clock != args::ArrivalClockArg::Auto {
        return Err(Failure::usage("--arrival-clock says where --one-way reads arrivals: add --one-way, or leave --arrival-clock out"));
    }
    if args.streams == 0 || args.streams > 65536 {
        return Err(Failure::usage("--streams must be from 1 to 65536"));
    }
    args.timeline.check()?;
    let [series, svg] = args.timeline.outputs();
    crate::cli::check_outputs(&[("--json", args.json.as_deref()), ("--events", args.events.as_deref()), series, svg])
}

/// The shared secret, from --token-file, BLASTDROP_TOKEN or --token.
fn secret(args: &Args) -> Result<Option<(control::Secret, control::SecretSource)>, Failure> {
    let secret = control::Secret::load(args.token_file.as_deref(), std::env::var(control::SECRET_ENV).ok(), args.token.as_deref())
        .map_err(crate::fail::secret)?;
    if let Some((_, control::SecretSource::CommandLine)) = &secret {
        tracing::warn!("--token shows in ps and /proc/PID/cmdline: prefer --token-file FILE or BLASTDROP_TOKEN");
    }
    Ok(secret)
}

/// The control port, when --listen asks for one: an explicit address, and
/// a secret unless only this host can reach it.
fn listener(args: &Args, has_secret: bool) -> Result<Option<TcpListener>, Failure> {
    let Some(addr) = &args.listen else { return Ok(None) };
    let addrs = control::listen_addrs(addr).map_err(crate::fail::listen)?;
    if !has_secret && !control::all_loopback(&addrs) {
        return Err(Failure::usage(format!(
            "--listen {addr} is reachable from other hosts: give a shared secret (--token-file FILE or BLASTDROP_TOKEN), or listen on 127.0.0.1"
        )));
    }
    TcpListener::bind(&addrs[..]).map(Some).map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}; {}", control::bind_fix(&e))))
}
