//! The UDP counters of a network namespace, as the kernel keeps them for
//! every socket in it (`/proc/net/snmp`'s `Udp:` lines, what `netstat -su`
//! prints): where datagrams the stack dropped are counted when no socket
//! was there (`NoPorts`), its buffer was full (`RcvbufErrors`,
//! `SndbufErrors`) or the checksum failed (`InCsumErrors`).

/// The namespace's UDP counters, summed since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpCounters {
    pub in_datagrams: u64,
    pub no_ports: u64,
    pub in_errors: u64,
    pub out_datagrams: u64,
    pub rcvbuf_errors: u64,
    pub sndbuf_errors: u64,
    pub in_csum_errors: u64,
    pub mem_errors: u64,
}

impl UdpCounters {
    /// Each counter's growth since `earlier`.
    pub fn since(&self, earlier: &UdpCounters) -> UdpCounters {
        let d = |a: u64, b: u64| a.wrapping_sub(b);
        UdpCounters {
            in_datagrams: d(self.in_datagrams, earlier.in_datagrams),
            no_ports: d(self.no_ports, earlier.no_ports),
            in_errors: d(self.in_errors, earlier.in_errors),
            out_datagrams: d(self.out_datagrams, earlier.out_datagrams),
            rcvbuf_errors: d(self.rcvbuf_errors, earlier.rcvbuf_errors),
            sndbuf_errors: d(self.sndbuf_errors, earlier.sndbuf_errors),
            in_csum_errors: d(self.in_csum_errors, earlier.in_csum_errors),
            mem_errors: d(self.mem_errors, earlier.mem_errors),
        }
    }
}

/// What stopped a read of the counters.
#[derive(Debug, thiserror::Error)]
pub enum SnmpError {
    #[error("reading /proc/thread-self/net/snmp failed: {0}")]
    Read(std::io::Error),
    #[error("/proc/net/snmp has no Udp: header and value lines in the kernel's layout")]
    Layout,
}

/// The UDP counters of the reading thread's network namespace now.
pub fn udp_counters() -> Result<UdpCounters, SnmpError> {
    parse(&std::fs::read_to_string("/proc/thread-self/net/snmp").map_err(SnmpError::Read)?)
}

/// The `Udp:` header line names the columns, the next `Udp:` line holds
/// the values; columns are taken by name (kernels have added some).
fn parse(text: &str) -> Result<UdpCounters, SnmpError> {
    let mut udp = text.lines().filter(|l| l.starts_with("Udp: "));
    let (names, values) = (udp.next().ok_or(SnmpError::Layout)?, udp.next().ok_or(SnmpError::Layout)?);
    let names: Vec<&str> = names.split_whitespace().skip(1).collect();
    let values: Vec<u64> = values.split_whitespace().skip(1).map(str::parse).collect::<Result<_, _>>().map_err(|_| SnmpError::Layout)?;
    if names.len() != values.len() {
        return Err(SnmpError::Layout);
    }
    let column = |name: &str| names.iter().position(|n| *n == name).map(|i| values[i]);
    Ok(UdpCounters {
        in_datagrams: column("InDatagrams").ok_or(SnmpError::Layout)?,
        no_ports: column("NoPorts").ok_or(SnmpError::Layout)?,
        in_errors: column("InErrors").ok_or(SnmpError::Layout)?,
        out_datagrams: column("OutDatagrams").ok_or(SnmpError::Layout)?,
        rcvbuf_errors: column("RcvbufErrors").ok_or(SnmpError::Layout)?,
        sndbuf_errors: column("SndbufErrors").ok_or(SnmpError::Layout)?,
        in_csum_errors: column("InCsumErrors").unwrap_or(0),
        mem_errors: column("MemErrors").unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_counters_are_read_by_column_name_and_udplite_is_left_alone() {
        let text = "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
            Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
            Udp: 5092780 3 41212 18 41200 0 12 0 0\n\
            UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
            UdpLite: 9 9 9 9 9 9 9 9 9\n";
        let c = parse(text).unwrap();
        assert_eq!((c.in_datagrams, c.no_ports, c.in_errors, c.rcvbuf_errors, c.in_csum_errors), (5_092_780, 3, 41_212, 41_200, 12));
        // An older kernel's line has neither InCsumErrors nor MemErrors.
        let old = "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\nUdp: 1 2 3 4 5 6\n";
        assert_eq!(parse(old).unwrap().sndbuf_errors, 6);
        assert!(parse("Udp: InDatagrams NoPorts\nUdp: 1\n").is_err());
        assert!(parse("Ip: 1\n").is_err());
    }

    #[test]
    fn this_kernels_file_reads() {
        let c = udp_counters().unwrap();
        assert!(c.since(&c) == UdpCounters::default());
    }
}
