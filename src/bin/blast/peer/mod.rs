//! The control connection to drop: connecting and saying hello, joining a
//! group, checking what the receiver can do, and preparing each step.
//! hooks.rs opens and closes drop's window around blast's; measure.rs
//! merges both ends' figures into a step record.

mod hooks;
mod measure;

use std::time::Duration;

use crate::fail::Failure;
use blastdrop::sender::{Sender, StepFailure};
use control::{Client, PeerInfo, Request, Response};

use crate::settings::PeerSettings;
pub use hooks::PeerHooks;
pub use measure::{achieved_shape, measure, Measured};

pub use records::environment::Environments;

/// The control connection to drop.
pub struct Peer {
    client: Client,
    timeout: Duration,
    /// In a group trial: this sender's place in it.
    pub member: Option<Membership>,
}

/// A group member's place: its index, the group's size and its stream ids.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Membership {
    pub group: String,
    pub member: u16,
    pub senders: u16,
    pub stream_base: u32,
    pub stream_count: u32,
}

impl Peer {
    pub fn call(&mut self, req: Request) -> Result<Response, control::ClientError> {
        self.client.call(req, self.timeout)
    }

    /// Whether drop is still there (its end of the control connection).
    pub fn gone(&self) -> Option<control::ConnectionEnd> {
        self.client.peer_gone()
    }
}

/// Connects to --peer (when given) and says hello.
pub fn connect(settings: &PeerSettings) -> Result<(Option<Peer>, Option<PeerInfo>), Failure> {
    let Some(addr) = &settings.addr else { return Ok((None, None)) };
    let secret = control::Secret::load(settings.token_file.as_deref(), std::env::var(control::SECRET_ENV).ok(), settings.token.as_deref())
        .map_err(crate::fail::secret)?;
    if let Some((_, control::SecretSource::CommandLine)) = &secret {
        tracing::warn!("--token shows in ps and /proc/PID/cmdline: prefer --token-file FILE or BLASTDROP_TOKEN");
    }
    let (client, info) = Client::connect_when_ready(
        addr,
        secret.as_ref().map(|(s, _)| s),
        settings.group.as_ref().map(|(g, _)| g.as_str()),
        settings.control_timeout,
    )
    .map_err(|e| match e {
        control::ClientError::Connect(_) => Failure::runtime(format!("{e}: is drop running with --listen {addr}?")),
        e => Failure::runtime(e.to_string()),
    })?;
    check_socket_destination(&info, &settings.destinations)?;
    Ok((Some(Peer { client, timeout: settings.control_timeout, member: None }), Some(info)))
}

/// A drop on UDP sockets (its hello's `udp_socket`) counts only what is sent to its
/// address and port: frames sent elsewhere would all be "lost" (NoPorts).
fn check_socket_destination(info: &PeerInfo, destinations: &[(std::net::Ipv4Addr, u16)]) -> Result<(), Failure> {
    let Some(at) = info.udp_socket else { return Ok(()) };
    let ip_fits = |ip: std::net::Ipv4Addr| at.ip().is_unspecified() || at.ip() == std::net::IpAddr::V4(ip);
    match destinations.iter().find(|&&(ip, port)| !ip_fits(ip) || port != at.port()) {
        Some(&(ip, port)) => Err(Failure::usage(format!(
            "drop receives on UDP sockets at {at} but blast sends to {ip}:{port}: give --dst-ip {} --dst-port {}",
            if at.ip().is_unspecified() { ip.to_string() } else { at.ip().to_string() },
            at.port()
        ))),
        None => Ok(()),
    }
}

/// blast --socket over a veth to drop on a port, where a veth hands over
/// what a NIC would finish:
/// - with GSO, each GSO buffer whole (a NIC, or the kernel before a driver
///   without GSO, cuts it into frames), so a DPDK receiver (af_packet,
///   AF_XDP) would take one frame, holding one probe, for every buffer;
/// - with --reflect and the veth's checksum offload on, each frame with its
///   UDP checksum left partial (a NIC fills it in): drop's port sends it
///   back as it came, and this host's kernel drops every reflection as a
///   checksum error (UDP InCsumErrors), so no round trip would be timed.
pub fn check_veth_path(info: &PeerInfo, sender: &Sender, reflect: bool) -> Result<(), Failure> {
    let Some(side) = sender.socket_side() else { return Ok(()) };
    if side.driver != "veth" || info.udp_socket.is_some() {
        return Ok(());
    }
    if side.cfg.segments > 1 {
        return Err(Failure::usage(format!(
            "blast --socket over veth ({}) to drop on a DPDK port ({}): veth hands each GSO buffer to its peer whole, as one frame that drop's port counts once: give --no-gso",
            side.interface, info.driver
        )));
    }
    let offloaded = nicstats::Interface::open(&side.interface).and_then(|i| i.tx_checksumming());
    if reflect && !matches!(offloaded, Ok(false)) {
        return Err(Failure::usage(format!(
            "blast --socket --reflect over veth ({0}) to drop on a DPDK port ({1}): {0} leaves each UDP checksum to an offload that a veth never completes, drop sends the frames back as they came and this host's kernel would drop every one as a checksum error: turn it off with `ethtool -K {0} tx off` (tx-checksumming {2}), or leave out --reflect",
            side.interface,
            info.driver,
            match offloaded {
                Ok(_) => "is on".to_string(),
                Err(e) => format!("unknown: {e}"),
            }
        )));
    }
    Ok(())
}

/// Joins the --group with this sender's whole plan, and numbers this
/// sender's streams from its share of the group's ids.
pub fn join(p: &mut Peer, settings: &PeerSettings, plan: control::StepPlan, sender: &mut Sender) -> Result<(), Failure> {
    let Some((group, senders)) = settings.group.clone() else { return Ok(()) };
    let req = Request::Join { group: group.clone(), senders, plan };
    match p.call(req).map_err(|e| Failure::runtime(format!("--group {group}: {e}")))? {
        Response::Joined { member, senders, stream_base, stream_count } => {
            blastdrop::say!(
                "blast: member {member} of group {group} ({senders} senders); stream ids {stream_base} to {}",
                stream_base + stream_count - 1
            );
            sender.own_streams(stream_base as u16, stream_count);
            p.member = Some(Membership { group, member, senders, stream_base, stream_count });
            Ok(())
        }
        other => Err(Failure::runtime(format!("drop answered {other:?} to join"))),
    }
}

/// Refuses, before anything is sent, what the receiver cannot do.
pub fn check_receiver(info: &PeerInfo, rx: u16, max_size: u32, reflect: bool, what: &str) -> Result<(), Failure> {
    if reflect && !info.reflect {
        return Err(Failure::usage(format!(
            "--reflect times probes that drop sends back, but drop on {} does not reflect: restart drop with --reflect, or run blast without --reflect",
            info.hostname
        )));
    }
    if rx > info.max_rx_queues {
        return Err(Failure::usage(format!(
            "{what} needs {rx} RX queues but drop's port {} ({}) has at most {}: lower --queues or set --rx-queues",
            info.port_name, info.driver, info.max_rx_queues
        )));
    }
    if rx > info.worker_lcores {
        return Err(Failure::usage(format!(
            "{what} needs {rx} RX queues but drop has {} worker lcores: restart drop with more lcores (-l) or set --rx-queues",
            info.worker_lcores
        )));
    }
    if max_size > info.max_size {
        return Err(Failure::usage(format!(
            "{what} sends {max_size} B frames but drop takes frames up to {} B: restart drop with --max-size {max_size}",
            info.max_size
        )));
    }
    Ok(())
}

/// Per-port receiver figures pair blast's port i with drop's port i: say
/// so when the counts differ (the totals still compare).
pub fn check_port_pairing(info: &PeerInfo, sender_ports: usize) {
    if usize::from(info.ports) != sender_ports && sender_ports > 1 {
        tracing::warn!(
            "blast sends on {sender_ports} ports but drop receives on {} ({}): per-port rows are sender-side only; give drop as many --port to pair them",
            info.ports,
            info.port_name
        );
    }
}

/// Asks drop for the step's RX queues and frame size; a drop that
/// restarted its port has the sender connect again (a memif client does
/// not by itself).
pub fn prepare_step(p: &mut Peer, sender: &mut Sender, rx_queues: u16, max_size: u32) -> Result<(), StepFailure> {
    match p.call(Request::Prepare { rx_queues, max_size })? {
        Response::Prepared(prepared) if prepared.restarted => {
            sender.reconnect_next_step();
            Ok(())
        }
        Response::Prepared(_) => Ok(()),
        other => Err(StepFailure::Unexpected { answer: format!("{other:?}"), request: "prepare" }),
    }
}
