//! The host's own counters around the socket path, kept per CPU and not
//! per network namespace: the input backlog's drops (`/proc/net/softnet_stat`)
//! and the CPUs' time in user, system and softirq work (`/proc/stat`),
//! where the kernel's share of receiving is spent.

/// `/proc/net/softnet_stat` summed over the CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Softnet {
    pub processed: u64,
    /// Frames dropped because a CPU's input backlog was full (net.core.netdev_max_backlog).
    pub dropped: u64,
    /// Times the receive softirq ran out of budget or time with work left.
    pub time_squeeze: u64,
}

impl Softnet {
    pub fn since(&self, earlier: &Softnet) -> Softnet {
        Softnet {
            processed: self.processed.wrapping_sub(earlier.processed),
            dropped: self.dropped.wrapping_sub(earlier.dropped),
            time_squeeze: self.time_squeeze.wrapping_sub(earlier.time_squeeze),
        }
    }
}

/// The softnet counters now (32-bit per CPU in the kernel: a window's
/// growth is right while no CPU's count wraps within it).
pub fn softnet() -> std::io::Result<Softnet> {
    parse_softnet(&std::fs::read_to_string("/proc/net/softnet_stat")?)
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "/proc/net/softnet_stat is not in the kernel's layout"))
}

fn parse_softnet(text: &str) -> Option<Softnet> {
    let mut sum = Softnet::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut cols = line.split_whitespace().map(|c| u64::from_str_radix(c, 16).ok());
        let (p, d, s) = (cols.next()??, cols.next()??, cols.next()??);
        (sum.processed, sum.dropped, sum.time_squeeze) = (sum.processed + p, sum.dropped + d, sum.time_squeeze + s);
    }
    Some(sum)
}

/// CPU time in clock ticks (`/proc/stat`'s USER_HZ).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    pub user: u64,
    pub system: u64,
    pub softirq: u64,
}

impl CpuTime {
    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            softirq: self.softirq.saturating_sub(earlier.softirq),
        }
    }
}

/// The time of the CPUs in `cpus` (each line `cpuN`), and of the whole
/// host (the `cpu` line), in clock ticks.
pub fn cpu_time(cpus: &[usize]) -> std::io::Result<(CpuTime, CpuTime)> {
    parse_stat(&std::fs::read_to_string("/proc/stat")?, cpus)
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "/proc/stat is not in the kernel's layout"))
}

/// Seconds per clock tick of [`CpuTime`].
pub fn seconds_per_tick() -> f64 {
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1.0 / if hz > 0 { hz as f64 } else { 100.0 }
}

/// `cpuN user nice system idle iowait irq softirq ...`
fn parse_stat(text: &str, cpus: &[usize]) -> Option<(CpuTime, CpuTime)> {
    let (mut these, mut host) = (CpuTime::default(), None);
    for line in text.lines().filter(|l| l.starts_with("cpu")) {
        let mut f = line.split_whitespace();
        let name = f.next()?;
        let v: Vec<u64> = f.map(|x| x.parse().ok()).collect::<Option<_>>()?;
        let t = CpuTime { user: *v.first()? + *v.get(1)?, system: *v.get(2)?, softirq: *v.get(6)? };
        match name.strip_prefix("cpu").filter(|n| !n.is_empty()) {
            None => host = Some(t),
            Some(n) if cpus.contains(&n.parse().ok()?) => {
                (these.user, these.system, these.softirq) = (these.user + t.user, these.system + t.system, these.softirq + t.softirq)
            }
            Some(_) => {}
        }
    }
    Some((these, host?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softnet_columns_are_hex_per_cpu_and_summed() {
        let t = "067e319f 00000002 00000000 00000000\n002fd046 00000010 00000001 00000000\n";
        assert_eq!(parse_softnet(t), Some(Softnet { processed: 0x067e319f + 0x002fd046, dropped: 18, time_squeeze: 1 }));
        assert_eq!(parse_softnet("zz 1 2\n"), None);
    }

    #[test]
    fn cpu_lines_give_user_with_nice_system_and_softirq() {
        let t = "cpu  100 5 50 1000 3 0 20 0 0 0\ncpu0 60 5 30 500 1 0 15 0 0 0\ncpu1 40 0 20 500 2 0 5 0 0 0\nintr 1\n";
        let (one, host) = parse_stat(t, &[1]).unwrap();
        assert_eq!(one, CpuTime { user: 40, system: 20, softirq: 5 });
        assert_eq!(host, CpuTime { user: 105, system: 50, softirq: 20 });
    }
}
