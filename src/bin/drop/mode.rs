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
    match &args.socket {
        Some(spec) => check_socket(args, spec)?,
        None if args.socket_rcvbuf.is_some() || args.no_gro => {
            return Err(Failure::usage("--socket-rcvbuf and --no-gro set drop's UDP sockets: add --socket ADDR:PORT, or leave them out"));
        }
        None => {}
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

/// --socket's address, and the flags that mean nothing on sockets (yet):
/// refused by name rather than ignored.
fn check_socket(args: &Args, spec: &str) -> Result<(), Failure> {
    let addr = socket_addr(spec)?;
    if addr.is_ipv6() {
        // The frame sizes are Ethernet + IPv4 + UDP (udpsock::frame_len), as blast builds them.
        return Err(Failure::usage(format!(
            "--socket {spec}: IPv6 is not supported yet (blast's frames are IPv4, and frame sizes are counted for IPv4 headers): give an IPv4 address"
        )));
    }
    if addr.port() == 0 {
        return Err(Failure::usage(format!(
            "--socket {spec}: port 0 is no port blast can send to: give the UDP port, e.g. {}:9000",
            addr.ip()
        )));
    }
    let given = [
        ("--port", args.port != ["0"]),
        (
            "--arrival-clock nic (a socket sees no NIC timestamp: arrivals are read when recvmmsg returns)",
            args.arrival_clock == args::ArrivalClockArg::Nic,
        ),
        ("--count-only", args.count_only),
        ("--rx-mbufs", args.rx_mbufs.is_some()),
        ("EAL arguments after --", !args.eal.is_empty()),
    ];
    crate::fail::not_supported_yet("--socket receives on the kernel's UDP sockets", &given, "")
}

/// --socket's ADDR:PORT.
pub fn socket_addr(spec: &str) -> Result<std::net::SocketAddr, Failure> {
    spec.parse()
        .map_err(|_| Failure::usage(format!("--socket {spec}: not an address and UDP port: write e.g. 10.0.0.2:9000 or [fd00::2]:9000")))
}
