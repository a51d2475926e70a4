//! The address drop listens on, parsed and resolved rather than matched as
//! text: "0:7700", "0x0:7700", "[::0]:7700" and "[::ffff:0.0.0.0]:7700" all
//! mean every interface, and each is refused by what it resolves to.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// Why drop must not listen where it was asked to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenError {
    #[error("{spec} is not ADDR:PORT ({reason}): give the management interface's own address, e.g. 10.0.0.2:7700")]
    NotAnAddress { spec: String, reason: String },
    #[error("{spec} resolves to no address: give the management interface's own address, e.g. 10.0.0.2:7700")]
    NoAddress { spec: String },
    #[error("{spec} means {ip} (every interface): give the management interface's own address, e.g. 10.0.0.2:7700")]
    EveryInterface { spec: String, ip: IpAddr },
}

/// The addresses `spec` (ADDR:PORT) names, or why drop must not listen there.
pub fn listen_addrs(spec: &str) -> Result<Vec<SocketAddr>, ListenError> {
    let addrs: Vec<SocketAddr> =
        spec.to_socket_addrs().map_err(|e| ListenError::NotAnAddress { spec: spec.into(), reason: e.to_string() })?.collect();
    if addrs.is_empty() {
        return Err(ListenError::NoAddress { spec: spec.into() });
    }
    if let Some(a) = addrs.iter().find(|a| unspecified(a.ip())) {
        return Err(ListenError::EveryInterface { spec: spec.into(), ip: a.ip() });
    }
    Ok(addrs)
}

/// Every interface, in any spelling (IPv4-mapped IPv6 included).
pub fn unspecified(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_unspecified(),
        IpAddr::V6(v6) => v6.is_unspecified() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_unspecified()),
    }
}

/// Loopback only: nobody off this host can reach it.
pub fn all_loopback(addrs: &[SocketAddr]) -> bool {
    addrs.iter().all(|a| match a.ip() {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    })
}

/// The fix for a failed bind of ADDR:PORT, by its cause: a port another
/// process holds wants a free port, an address that is not this host's
/// wants one that is.
pub fn bind_fix(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::AddrInUse => "another process listens there: give a free port",
        std::io::ErrorKind::AddrNotAvailable => "that address is not this host's: give ADDR:PORT of this host",
        std::io::ErrorKind::PermissionDenied => "ports below 1024 need root: give a port above 1023 or run as root",
        _ => "give ADDR:PORT of this host",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_every_interface_is_refused() {
        for spec in [
            "0.0.0.0:7700",
            "0:7700",
            "0x0:7700",
            "0.0:7700",
            "[::]:7700",
            "[::0]:7700",
            "[0:0:0:0:0:0:0:0]:7700",
            "[::ffff:0.0.0.0]:7700",
            "[::ffff:0:0]:7700",
        ] {
            let e = listen_addrs(spec).expect_err(spec).to_string();
            assert!(e.contains("every interface") && e.contains("management interface"), "{spec}: {e}");
        }
    }

    #[test]
    fn explicit_addresses_pass_and_loopback_is_told_apart() {
        let a = listen_addrs("127.0.0.1:7700").unwrap();
        assert!(all_loopback(&a));
        assert!(all_loopback(&listen_addrs("[::1]:7700").unwrap()));
        assert!(all_loopback(&listen_addrs("[::ffff:127.0.0.1]:7700").unwrap()));
        let a = listen_addrs("10.0.0.2:7700").unwrap();
        assert!(!all_loopback(&a));
    }

    #[test]
    fn nonsense_says_what_to_give() {
        for spec in ["7700", "nohost.invalid.:7700", "1.2.3.4"] {
            let e = listen_addrs(spec).expect_err(spec).to_string();
            assert!(e.contains("ADDR:PORT") || e.contains("no address"), "{spec}: {e}");
        }
    }
}
