//! What the host did to this machine's CPUs over a window: the time a
//! hypervisor took from them (steal, from /proc/stat). A lane stopped by
//! the host shows as a stall in its own loop (counters::StallWatch); steal
//! says whether the hypervisor, not another process here, took the time.

/// The CPU time counters of /proc/stat's first line, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub total: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// From /proc/stat's text: the "cpu" line (all CPUs), None without one.
    pub fn parse(stat: &str) -> Option<CpuTimes> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line.split_whitespace().skip(1).map(|x| x.parse().ok()).collect::<Option<_>>()?;
        // user nice system idle iowait irq softirq steal [guest guest_nice]:
        // guest time is already in user, so the total is the first eight.
        let steal = *v.get(7)?;
        Some(CpuTimes { total: v.iter().take(8).sum(), steal })
    }

    /// This machine's, now (None where /proc/stat cannot be read).
    pub fn now() -> Option<CpuTimes> {
        std::fs::read_to_string("/proc/stat").ok().and_then(|s| CpuTimes::parse(&s))
    }

    /// Steal between two readings, as a share of all CPU time (percent).
    pub fn steal_pct(a: Option<CpuTimes>, b: Option<CpuTimes>) -> Option<f64> {
        let (a, b) = (a?, b?);
        let total = b.total.checked_sub(a.total).filter(|&t| t > 0)?;
        Some(b.steal.saturating_sub(a.steal) as f64 / total as f64 * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_read_from_the_all_cpus_line() {
        let a = "cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 50 0 25 400 5 0 2 18 0 0\nintr 1\n";
        let b = "cpu  150 0 60 900 10 0 5 75 20 0\n";
        let (x, y) = (CpuTimes::parse(a).unwrap(), CpuTimes::parse(b).unwrap());
        assert_eq!(x, CpuTimes { total: 1000, steal: 35 });
        assert_eq!(y.total, 1200, "guest time is inside user: not counted twice");
        assert_eq!(CpuTimes::steal_pct(Some(x), Some(y)), Some(20.0));
        assert_eq!(CpuTimes::parse("cpu  1 2 3\n"), None, "a kernel too old for steal: unknown");
        assert_eq!(CpuTimes::steal_pct(Some(x), None), None);
    }
}
