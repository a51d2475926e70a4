//! What ENA's TX path really runs with, from the two places that tell:
//! the PMD's own log at probe (LLQ, "low latency queue", or the regular
//! host-memory placement), and the kernel's PAT list (whether the LLQ
//! memory BAR is mapped write-combining; without it LLQ runs far below
//! its rate). Both are read as text; no EAL here.

use serde::Serialize;

/// ENA's TX placement for one port, as its PMD logged it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "state", content = "reason")]
pub enum Llq {
    /// "Placement policy: Low latency".
    On,
    /// "Placement policy: Regular", with the PMD's reason when it gave one.
    Off(Option<String>),
}

impl Llq {
    pub fn describe(&self) -> String {
        match self {
            Llq::On => "LLQ on".into(),
            Llq::Off(Some(why)) => format!("LLQ off ({why})"),
            Llq::Off(None) => "LLQ off".into(),
        }
    }
}

/// Why the PMD fell back to regular placement, by the words it logs
/// (22.11 to 24.11).
const FALLBACKS: [(&str, &str); 5] = [
    ("LLQ has been disabled as per user's request", "disabled by a devarg"),
    ("LLQ is not supported", "the device does not offer it"),
    ("doesn't expose mem bar", "the device's memory BAR is not mapped"),
    ("Failed to config dev mode", "the device refused the LLQ configuration"),
    ("Forcing large headers failed", "large LLQ headers refused"),
];

/// One entry per ENA port probed, in probe order (the order of their port ids).
pub fn llq_from_log(log: &str) -> Vec<Llq> {
    let mut out = Vec::new();
    let mut reason: Option<String> = None;
    for line in log.lines() {
        if let Some((_, why)) = FALLBACKS.iter().find(|(needle, _)| line.contains(needle)) {
            reason = Some((*why).to_string());
        }
        if let Some(rest) = line.split("Placement policy:").nth(1) {
            let rest = rest.trim();
            out.push(if rest.starts_with("Low latency") { Llq::On } else { Llq::Off(reason.take()) });
            reason = None;
        }
    }
    out
}

/// The start address of BAR `bar` in a PCI device's sysfs `resource`
/// file (one "start end flags" line per BAR, in hex).
pub fn bar_start(resource: &str, bar: usize) -> Option<u64> {
    let line = resource.lines().nth(bar)?;
    let start = line.split_whitespace().next()?;
    let v = u64::from_str_radix(start.trim_start_matches("0x"), 16).ok()?;
    (v != 0).then_some(v)
}

/// ENA's LLQ memory is BAR 2.
pub const ENA_LLQ_BAR: usize = 2;

/// Whether the kernel's PAT list (debugfs x86/pat_memtype_list) has a
/// write-combining mapping that holds `addr`.
pub fn write_combining_at(pat_list: &str, addr: u64) -> bool {
    pat_list.lines().filter(|l| l.contains("write-combining")).any(|l| {
        let Some(range) = l.split("[mem ").nth(1).and_then(|r| r.split(']').next()) else { return false };
        let mut ends = range.split('-').map(|x| u64::from_str_radix(x.trim().trim_start_matches("0x"), 16));
        match (ends.next(), ends.next()) {
            (Some(Ok(a)), Some(Ok(b))) => a <= addr && addr < b,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // As the 22.11 PMD logs at INFO (pmd.net.ena.driver), one port each.
    const LOG_22: &str = "EAL: Probe PCI driver: net_ena (1d0f:ec20) device: 0000:00:06.0 (socket 0)\n\
        ena_set_queues_placement_policy(): LLQ is not supported. Fallback to host mode policy.\n\
        ena_device_init(): Placement policy: Regular\n\
        EAL: Probe PCI driver: net_ena (1d0f:ec20) device: 0000:00:07.0 (socket 0)\n\
        ena_device_init(): Placement policy: Low latency\n";

    #[test]
    fn placement_per_port_in_probe_order_with_the_reason() {
        assert_eq!(llq_from_log(LOG_22), [Llq::Off(Some("the device does not offer it".into())), Llq::On]);
        assert_eq!(llq_from_log(""), []);
        let by_request = "ENA_DRIVER: ena_set_queues_placement_policy(): NOTE: LLQ has been disabled as per user's request. \
            This may lead to a huge performance degradation!\nENA_DRIVER: ena_device_init(): Placement policy: Regular\n";
        assert_eq!(llq_from_log(by_request)[0].describe(), "LLQ off (disabled by a devarg)");
        assert_eq!(llq_from_log("ena_device_init(): Placement policy: Regular\n"), [Llq::Off(None)]);
    }

    #[test]
    fn the_llq_bar_and_its_write_combining_mapping() {
        let resource = "0x00000000c0500000 0x00000000c0503fff 0x0000000000040200\n\
                        0x0000000000000000 0x0000000000000000 0x0000000000000000\n\
                        0x00000000c0400000 0x00000000c04fffff 0x000000000014220c\n";
        let bar = bar_start(resource, ENA_LLQ_BAR).unwrap();
        assert_eq!(bar, 0xc040_0000);
        assert_eq!(bar_start(resource, 1), None, "an unused BAR reads as zero");
        let pat = "PAT memtype list:\nPAT: [mem 0x00000000c0500000-0x00000000c0504000] uncached-minus\n\
                   PAT: [mem 0x00000000c0400000-0x00000000c0500000] write-combining\n";
        assert!(write_combining_at(pat, bar));
        assert!(!write_combining_at(pat, 0xc050_0000), "the register BAR is uncached");
        assert!(!write_combining_at("PAT: [mem 0x00000000c0400000-0x00000000c0500000] uncached-minus\n", bar));
    }
}
