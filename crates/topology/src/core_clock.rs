//! Cycles that are the core's cycles. The lanes time their busy work with
//! the counter `rte_rdtsc` reads. On x86 that is the TSC, which counts at
//! the core's nominal frequency, so a count of it is a count of cycles.
//! On arm64 it is the generic timer (CNTVCT_EL0), which ticks at a fixed
//! platform rate (1 GHz on Armv8.6 and later parts, ~122 MHz on some older ones) that has
//! nothing to do with the core's clock (2.8 GHz on Graviton4), so ticks
//! are turned into cycles with the core's frequency: from sysfs cpufreq
//! when the kernel has it, else the nominal frequency of a Graviton part
//! (by its MIDR part number, only on a machine whose DMI says Amazon EC2:
//! other vendors use the same Neoverse cores at other clocks), else
//! unknown, and then only nanoseconds per packet are given.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What the lanes' cycle counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    /// x86's TSC: the core's nominal frequency (invariant TSC).
    Tsc,
    /// arm64's generic timer (CNTVCT_EL0): a fixed platform rate, not the core's clock.
    ArmGenericTimer,
    /// Another architecture's counter: its rate is not known to be the core's.
    Other,
}

impl TimerKind {
    /// The counter this build's lanes read.
    pub const fn of_this_build() -> TimerKind {
        if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
            TimerKind::Tsc
        } else if cfg!(target_arch = "aarch64") {
            TimerKind::ArmGenericTimer
        } else {
            TimerKind::Other
        }
    }
}

/// The lanes' counter and the core clock its ticks are converted with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoreClock {
    /// Ticks per second of the counter the lanes read (`rte_get_tsc_hz`; on arm64 CNTFRQ_EL0).
    pub timer_hz: u64,
    pub timer: TimerKind,
    /// The core's frequency that ticks are converted to cycles with, Hz; null when unknown:
    /// then every cycles figure is null and only ns per packet is given.
    pub core_hz: Option<u64>,
    /// Where `core_hz` came from, or why it is unknown.
    pub core_hz_source: String,
}

/// Nominal core frequencies of Graviton parts, by MIDR part number
/// (implementer 0x41, Arm): AWS's published figures.
const GRAVITON: &[(u32, &str, u64)] = &[
    (0xd0c, "Graviton2 (Neoverse N1)", 2_500_000_000),
    (0xd40, "Graviton3 (Neoverse V1)", 2_600_000_000),
    (0xd4f, "Graviton4 (Neoverse V2)", 2_800_000_000),
];

impl CoreClock {
    /// The clock of this machine, read under `sys` (`/sys`) and `cpuinfo`
    /// (`/proc/cpuinfo`) for CPU `cpu`, whose lanes' counter ticks
    /// `timer_hz` times a second.
    pub fn detect(timer_hz: u64, timer: TimerKind, sys: &Path, cpuinfo: &Path, cpu: u32) -> CoreClock {
        let (core_hz, core_hz_source) = match timer {
            TimerKind::Tsc => (Some(timer_hz), "tsc: x86's invariant TSC counts at the core's nominal frequency".to_owned()),
            TimerKind::ArmGenericTimer | TimerKind::Other => core_frequency(sys, cpuinfo, cpu),
        };
        CoreClock { timer_hz, timer, core_hz, core_hz_source }
    }

    /// Core cycles in `ticks` of the counter, or None when the core's clock is unknown.
    pub fn cycles(&self, ticks: f64) -> Option<f64> {
        self.core_hz.map(|hz| ticks * hz as f64 / self.timer_hz.max(1) as f64)
    }

    /// Core cycles per packet for a lane busy `ticks` over `packets`
    /// (0 when nothing moved), or None when the core's clock is unknown.
    pub fn cycles_per_packet(&self, ticks: u64, packets: u64) -> Option<f64> {
        if packets == 0 {
            self.core_hz.map(|_| 0.0)
        } else {
            self.cycles(ticks as f64 / packets as f64)
        }
    }

    /// Nanoseconds per packet for a lane busy `ticks` over `packets` (0 when nothing moved).
    pub fn ns_per_packet(&self, ticks: u64, packets: u64) -> f64 {
        if packets == 0 {
            0.0
        } else {
            ticks as f64 / packets as f64 * 1e9 / self.timer_hz.max(1) as f64
        }
    }

    /// The counter's ticks that `cycles` core cycles take, or None when the
    /// core's clock is unknown.
    pub fn ticks_of_cycles(&self, cycles: u64) -> Option<u64> {
        self.core_hz.map(|hz| (cycles as u128 * u128::from(self.timer_hz) / u128::from(hz.max(1))) as u64)
    }
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// The core's frequency and where it came from, or None and why not.
fn core_frequency(sys: &Path, cpuinfo: &Path, cpu: u32) -> (Option<u64>, String) {
    let cpufreq = sys.join(format!("devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq"));
    if let Some(khz) = read_trimmed(&cpufreq).and_then(|s| s.parse::<u64>().ok()).filter(|&k| k > 0) {
        return (
            Some(khz * 1000),
            format!("sysfs: cpu{cpu}'s cpufreq cpuinfo_max_freq ({khz} kHz; a busy-polling core runs at its top frequency)"),
        );
    }
    let Some((implementer, part)) = midr(sys, cpuinfo, cpu) else {
        return (None, "unknown: no cpufreq in sysfs and no arm64 CPU part (MIDR) to look up".to_owned());
    };
    let vendor = read_trimmed(&sys.join("class/dmi/id/sys_vendor")).unwrap_or_default();
    match GRAVITON.iter().find(|(p, _, _)| implementer == 0x41 && *p == part) {
        Some((_, name, hz)) if vendor == "Amazon EC2" => (
            Some(*hz),
            format!("{name}, CPU part {part:#x} on Amazon EC2: AWS's nominal {:.1} GHz (no cpufreq in sysfs)", *hz as f64 / 1e9),
        ),
        Some((_, name, _)) => (
            None,
            format!(
                "unknown: CPU part {part:#x} is the core of {name}, but this machine's DMI vendor is {:?}, not Amazon EC2, and other vendors clock that core differently; no cpufreq in sysfs",
                vendor
            ),
        ),
        None => (None, format!("unknown: no cpufreq in sysfs, and CPU implementer {implementer:#x} part {part:#x} is not a part whose clock is known")),
    }
}

/// (implementer, part number) of CPU `cpu`: sysfs's midr_el1 first, then /proc/cpuinfo.
fn midr(sys: &Path, cpuinfo: &Path, cpu: u32) -> Option<(u32, u32)> {
    let reg = sys.join(format!("devices/system/cpu/cpu{cpu}/regs/identification/midr_el1"));
    if let Some(v) = read_trimmed(&reg).and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()) {
        return Some((((v >> 24) & 0xff) as u32, ((v >> 4) & 0xfff) as u32));
    }
    let text = std::fs::read_to_string(cpuinfo).ok()?;
    let field = |key: &str| {
        text.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
            .and_then(|l| l.split_once(':'))
            .and_then(|(_, v)| u32::from_str_radix(v.trim().trim_start_matches("0x"), 16).ok())
    };
    Some((field("CPU implementer")?, field("CPU part")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A scratch sysfs/cpuinfo pair; `files` are (path under it, contents).
    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("blastdrop-{}-clock-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        root
    }

    fn detect(root: &Path, timer: TimerKind, timer_hz: u64) -> CoreClock {
        CoreClock::detect(timer_hz, timer, &root.join("sys"), &root.join("cpuinfo"), 0)
    }

    const GRAVITON4_CPUINFO: &str = "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\nCPU revision\t: 1\n";

    #[test]
    fn on_x86_the_tsc_is_the_cycle_count() {
        let root = tree("x86", &[]);
        let c = detect(&root, TimerKind::Tsc, 2_900_000_000);
        assert_eq!(c.core_hz, Some(2_900_000_000));
        assert!(c.core_hz_source.starts_with("tsc"), "{}", c.core_hz_source);
        assert_eq!(c.cycles_per_packet(1450, 1), Some(1450.0));
        assert_eq!(c.ticks_of_cycles(20_000), Some(20_000));
    }

    #[test]
    fn graviton4_on_ec2_converts_a_1ghz_timer_to_its_2_8ghz_core() {
        let root = tree("g4", &[("cpuinfo", GRAVITON4_CPUINFO), ("sys/class/dmi/id/sys_vendor", "Amazon EC2\n")]);
        let c = detect(&root, TimerKind::ArmGenericTimer, 1_000_000_000);
        assert_eq!(c.core_hz, Some(2_800_000_000));
        assert!(c.core_hz_source.contains("Graviton4") && c.core_hz_source.contains("0xd4f"), "{}", c.core_hz_source);
        // The field figure: 2 Mpps on one core at 2.8 GHz is about 1,400 cycles a packet;
        // the timer counts 500 ticks (ns) a packet at 2 Mpps.
        let cpp = c.cycles_per_packet(500 * 2_000_000, 2_000_000).unwrap();
        assert!((cpp - 1400.0).abs() < 1e-6, "{cpp}");
        assert!((c.ns_per_packet(500 * 2_000_000, 2_000_000) - 500.0).abs() < 1e-9);
        // --rx-cost: 2,800 core cycles are 1,000 timer ticks.
        assert_eq!(c.ticks_of_cycles(2_800), Some(1_000));
    }

    #[test]
    fn a_slow_platform_timer_is_scaled_by_its_own_rate() {
        // Some arm64 parts run the generic timer at ~122 MHz (here with cpufreq present).
        let root = tree("slow", &[("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3000000\n")]);
        let c = detect(&root, TimerKind::ArmGenericTimer, 122_070_000);
        assert_eq!(c.core_hz, Some(3_000_000_000));
        assert!(c.core_hz_source.starts_with("sysfs: cpu0's cpufreq"), "{}", c.core_hz_source);
        let cpp = c.cycles_per_packet(122_070, 1000).unwrap(); // 1 ms for 1000 packets: 1 us each
        assert!((cpp - 3000.0).abs() < 1e-6, "{cpp}");
    }

    #[test]
    fn cpufreq_wins_over_the_part_number() {
        let root = tree(
            "both",
            &[
                ("cpuinfo", GRAVITON4_CPUINFO),
                ("sys/class/dmi/id/sys_vendor", "Amazon EC2\n"),
                ("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "2700000\n"),
            ],
        );
        assert_eq!(detect(&root, TimerKind::ArmGenericTimer, 1_000_000_000).core_hz, Some(2_700_000_000));
    }

    #[test]
    fn midr_in_sysfs_names_the_part() {
        // Graviton3: implementer 0x41, part 0xd40.
        let root = tree(
            "midr",
            &[
                ("sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "0x00000000411fd401\n"),
                ("sys/class/dmi/id/sys_vendor", "Amazon EC2\n"),
            ],
        );
        let c = detect(&root, TimerKind::ArmGenericTimer, 1_000_000_000);
        assert_eq!(c.core_hz, Some(2_600_000_000), "{}", c.core_hz_source);
    }

    #[test]
    fn the_same_core_elsewhere_is_unknown_and_cycles_are_not_made_up() {
        // Neoverse V2 also runs in other vendors' servers at other clocks.
        let root = tree("v2-elsewhere", &[("cpuinfo", GRAVITON4_CPUINFO), ("sys/class/dmi/id/sys_vendor", "Some Cloud\n")]);
        let c = detect(&root, TimerKind::ArmGenericTimer, 1_000_000_000);
        assert_eq!(c.core_hz, None);
        assert!(c.core_hz_source.starts_with("unknown") && c.core_hz_source.contains("Some Cloud"), "{}", c.core_hz_source);
        assert_eq!(c.cycles_per_packet(1_000, 10), None);
        assert_eq!(c.ticks_of_cycles(100), None);
        assert!((c.ns_per_packet(1_000, 10) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn nothing_to_go_on_is_unknown() {
        let root = tree("bare", &[("cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\n")]);
        let c = detect(&root, TimerKind::ArmGenericTimer, 1_000_000_000);
        assert_eq!(c.core_hz, None);
        assert!(c.core_hz_source.starts_with("unknown"), "{}", c.core_hz_source);
        let unknown_part = tree("other-part", &[("cpuinfo", "CPU implementer\t: 0x41\nCPU part\t: 0xd0b\n")]);
        let c = detect(&unknown_part, TimerKind::ArmGenericTimer, 1_000_000_000);
        assert_eq!(c.core_hz, None);
        assert!(c.core_hz_source.contains("0xd0b"), "{}", c.core_hz_source);
        // Nothing moved: no cycles are known either way, and 0 ns.
        assert_eq!(c.cycles_per_packet(0, 0), None);
        assert_eq!(c.ns_per_packet(0, 0), 0.0);
    }
}
