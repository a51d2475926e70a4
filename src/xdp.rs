//! An AF_XDP port's path as the kernel runs it (docs/af-xdp.md): the
//! interface its vdev names, how the XDP program is attached there
//! (rtnetlink), and whether this process's XDP sockets run zero-copy or
//! copy (`dpdk::af_xdp::sockets`). DPDK's net_af_xdp says none of this.

use records::environment::XdpState;

/// The state of `port_name`'s XDP path, read now (once its queues are set
/// up: the sockets exist from then on). `eal_args` are the EAL's
/// arguments, where the vdev names the interface.
pub fn state(port_name: &str, eal_args: &[String]) -> XdpState {
    let devargs = vdev_args(port_name, eal_args);
    let interface = devargs.as_deref().and_then(|a| devarg(a, "iface"));
    let forced_copy = devargs.as_deref().and_then(|a| devarg(a, "force_copy")).is_some_and(|v| v == "1");
    let attach = match &interface {
        Some(i) => attach_mode(i).unwrap_or_else(|why| format!("unknown ({why})")),
        None => "unknown (no iface= for this port in the EAL arguments)".into(),
    };
    let (sockets, zero_copy_sockets, copy_mode) = match dpdk::af_xdp::sockets() {
        None => (0, 0, "unknown (/proc/self/fd cannot be read)".into()),
        Some(found) => (found.sockets, found.zero_copy, copy_mode(found, forced_copy)),
    };
    let program = Some(program(devargs.as_deref().and_then(|a| devarg(a, "xdp_prog"))));
    XdpState { interface, attach, sockets, zero_copy_sockets, copy_mode, program }
}

/// The XDP program in words, from the vdev's `xdp_prog=` (if any).
fn program(xdp_prog: Option<String>) -> String {
    match xdp_prog {
        None => "DPDK's default (every frame on a served queue goes to its socket: no other traffic reaches the kernel there)".into(),
        Some(path) => format!("{path} (xdp_prog=: frames it does not redirect go on to the kernel)"),
    }
}

/// The sockets' mode in words, with why where the kernel chose copy.
fn copy_mode(found: dpdk::af_xdp::XdpSockets, forced_copy: bool) -> String {
    match (found.sockets, found.zero_copy) {
        (0, _) => "unknown (no AF_XDP socket open in this process)".into(),
        (n, z) if z == n => "zero-copy".into(),
        (_, 0) if forced_copy => "copy (forced: force_copy=1)".into(),
        (_, 0) => "copy (the kernel fell back: the driver offers no AF_XDP zero-copy)".into(),
        (n, z) => format!("mixed ({z} of {n} sockets zero-copy)"),
    }
}

/// The arguments after the name in the `--vdev` that makes `port_name`
/// ("iface=eth1,start_queue=0"), if the EAL arguments have one.
fn vdev_args(port_name: &str, eal_args: &[String]) -> Option<String> {
    crate::eal_args::vdev_specs(eal_args).into_iter().find_map(|spec| {
        let (name, rest) = spec.split_once(',').unwrap_or((&spec, ""));
        (name.trim() == port_name).then(|| rest.to_owned())
    })
}

/// One `key=value` of a vdev's arguments.
fn devarg(devargs: &str, key: &str) -> Option<String> {
    devargs.split(',').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v.to_owned()))
}

/// How an XDP program is attached to `interface`, from the kernel's link
/// message (IFLA_XDP_ATTACHED). The kernel answers RTM_GETLINK before
/// `send` returns, so the `recv` does not wait.
fn attach_mode(interface: &str) -> Result<String, String> {
    use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_REQUEST};
    use netlink_packet_route::link::{LinkAttribute, LinkMessage, LinkXdp, XdpAttached};
    use netlink_packet_route::RouteNetlinkMessage;
    use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

    let index = nix::net::if_::if_nametoindex(interface).map_err(|e| format!("no interface {interface}: {e}"))?;
    let mut link = LinkMessage::default();
    link.header.index = index;
    let mut request = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(RouteNetlinkMessage::GetLink(link)));
    request.header.flags = NLM_F_REQUEST;
    request.finalize();
    let mut bytes = vec![0u8; request.buffer_len()];
    request.serialize(&mut bytes);
    let mut socket = Socket::new(NETLINK_ROUTE).map_err(|e| format!("rtnetlink: {e}"))?;
    socket.bind_auto().map_err(|e| format!("rtnetlink: {e}"))?;
    socket.connect(&SocketAddr::new(0, 0)).map_err(|e| format!("rtnetlink: {e}"))?;
    socket.send(&bytes, 0).map_err(|e| format!("rtnetlink: {e}"))?;
    let mut reply = Vec::with_capacity(1 << 16);
    socket.recv(&mut reply, libc::MSG_DONTWAIT).map_err(|e| format!("rtnetlink: {e}"))?;
    let message = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&reply).map_err(|e| format!("rtnetlink reply: {e}"))?;
    let NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewLink(link)) = message.payload else {
        return Err(format!("rtnetlink answered {:?} for {interface}", message.payload.message_type()));
    };
    let attached = link.attributes.iter().find_map(|a| match a {
        LinkAttribute::Xdp(xdp) => xdp.iter().find_map(|x| match x {
            LinkXdp::Attached(mode) => Some(*mode),
            _ => None,
        }),
        _ => None,
    });
    Ok(match attached {
        None | Some(XdpAttached::None) => "none",
        Some(XdpAttached::Driver) => "native",
        Some(XdpAttached::SocketBuffer) => "generic",
        Some(XdpAttached::Hardware) => "offload",
        Some(XdpAttached::Multiple) => "several",
        Some(other) => return Ok(format!("unknown (IFLA_XDP_ATTACHED {other:?})")),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_interface_and_force_copy_come_from_the_ports_own_vdev() {
        let eal = args(&["--no-huge", "--vdev=net_af_xdp1,iface=other", "--vdev", "net_af_xdp0,iface=bd-b,force_copy=1", "-l", "0,1"]);
        let own = vdev_args("net_af_xdp0", &eal).unwrap();
        assert_eq!(devarg(&own, "iface").as_deref(), Some("bd-b"));
        assert_eq!(devarg(&own, "force_copy").as_deref(), Some("1"));
        assert_eq!(vdev_args("net_af_xdp2", &eal), None);
        let filtered = args(&["--vdev=net_af_xdp0,iface=eth0,xdp_prog=/var/lib/blastdrop/xdp/udp-ports-9.o"]);
        let own = vdev_args("net_af_xdp0", &filtered).unwrap();
        assert!(program(devarg(&own, "xdp_prog")).starts_with("/var/lib/blastdrop/xdp/udp-ports-9.o (xdp_prog="));
        assert!(program(None).starts_with("DPDK's default"));
    }

    #[test]
    fn the_copy_mode_says_why_the_kernel_copies() {
        use dpdk::af_xdp::XdpSockets;
        let m = |sockets, zero_copy, forced| copy_mode(XdpSockets { sockets, zero_copy }, forced);
        assert_eq!(m(2, 2, false), "zero-copy");
        assert_eq!(m(1, 0, true), "copy (forced: force_copy=1)");
        assert!(m(1, 0, false).contains("fell back"));
        assert_eq!(m(4, 1, false), "mixed (1 of 4 sockets zero-copy)");
        assert!(m(0, 0, false).starts_with("unknown"));
    }
}
