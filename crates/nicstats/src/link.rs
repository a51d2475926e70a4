//! An interface's standard counters as the kernel keeps them for every
//! driver (`struct rtnl_link_stats64`, what `ip -s link` prints), read from
//! `/proc/net/dev`: the file belongs to the reader's network namespace, as
//! the ethtool ioctl does, where `/sys/class/net` shows the namespace that
//! mounted sysfs. Its receive `drop` column is `rx_dropped + rx_missed_errors`
//! (net/core/net-procfs.c), `fifo` is `rx_fifo_errors`.
//!
//! These are where the kernel counts frames an interface took off the wire
//! or its peer and then dropped: on veth, frames over its MTU and frames
//! its XDP program redirected to a full socket; on a NIC, frames it had no
//! RX buffer for. DPDK's af_packet and AF_XDP PMDs pass none of them on.

use std::io;

/// The receive-side drop counters of one interface, summed since it came up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkDrops {
    /// `rx_dropped + rx_missed_errors` (the file's receive `drop` column).
    pub rx_dropped: u64,
    /// `rx_fifo_errors` (receive `fifo`).
    pub rx_fifo: u64,
}

impl LinkDrops {
    /// Every frame the interface received and dropped.
    pub fn total(&self) -> u64 {
        self.rx_dropped + self.rx_fifo
    }
}

/// What stopped a read of `/proc/net/dev`.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("reading /proc/net/dev failed: {0}")]
    Read(io::Error),
    #[error("no interface has index {0} in this network namespace: {1}")]
    NoIndex(u32, nix::Error),
    #[error("no interface {0} in /proc/net/dev (not in this network namespace)")]
    Missing(String),
    #[error("/proc/net/dev's line for {0} is not in the kernel's layout: {1:?}")]
    Layout(String, String),
}

/// `interface`'s receive drops now, from this namespace's `/proc/net/dev`.
pub fn link_drops(interface: &str) -> Result<LinkDrops, LinkError> {
    let text = std::fs::read_to_string("/proc/net/dev").map_err(LinkError::Read)?;
    parse_link_drops(&text, interface)
}

/// The receive drops of the interface whose index is `index` (a DPDK
/// port's `if_index`).
pub fn link_drops_of_index(index: u32) -> Result<LinkDrops, LinkError> {
    let name = nix::net::if_::if_indextoname(index).map_err(|e| LinkError::NoIndex(index, e))?;
    link_drops(&name.to_string_lossy())
}

/// `interface`'s line of a `/proc/net/dev` text: `name: ` then 8 receive
/// columns (bytes packets errs drop fifo frame compressed multicast) and 8
/// transmit columns.
fn parse_link_drops(text: &str, interface: &str) -> Result<LinkDrops, LinkError> {
    let line = text
        .lines()
        .find_map(|l| {
            let (name, rest) = l.split_once(':')?;
            (name.trim() == interface).then_some(rest)
        })
        .ok_or_else(|| LinkError::Missing(interface.into()))?;
    let columns: Vec<u64> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>().unwrap_or_default();
    if columns.len() != 16 {
        return Err(LinkError::Layout(interface.into(), line.trim().into()));
    }
    Ok(LinkDrops { rx_dropped: columns[3], rx_fifo: columns[4] })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two lines as a 6.18 kernel wrote them (bd-b's receive drop 5).
    const TEXT: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  bd-b:     222       3    0    5    2     0          0         0       42       1    0    7    0     0       0          0
";

    #[test]
    fn the_receive_drop_and_fifo_columns_are_read_by_name() {
        let d = parse_link_drops(TEXT, "bd-b").unwrap();
        assert_eq!(d, LinkDrops { rx_dropped: 5, rx_fifo: 2 });
        assert_eq!(d.total(), 7);
        assert_eq!(parse_link_drops(TEXT, "lo").unwrap().total(), 0);
    }

    #[test]
    fn a_missing_interface_or_a_strange_line_is_an_error_not_zero() {
        assert!(matches!(parse_link_drops(TEXT, "bd-a"), Err(LinkError::Missing(_))));
        // A prefix of a name is not the name.
        assert!(matches!(parse_link_drops(TEXT, "bd"), Err(LinkError::Missing(_))));
        let short = "  bd-c: 1 2 3\n";
        assert!(matches!(parse_link_drops(short, "bd-c"), Err(LinkError::Layout(..))));
        let words = "  bd-c: 1 2 3 x 5 6 7 8 9 10 11 12 13 14 15 16\n";
        assert!(matches!(parse_link_drops(words, "bd-c"), Err(LinkError::Layout(..))));
    }

    #[test]
    fn this_namespaces_loopback_reads() {
        assert!(link_drops("lo").is_ok());
    }
}
