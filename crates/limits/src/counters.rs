use serde::{Deserialize, Serialize};

/// ENA's allowance counters: packets the platform's shaper queued or
/// dropped because an allowance was exceeded. Exact names, no prefix.
pub const ENA_ALLOWANCES: &[&str] = &[
    "bw_in_allowance_exceeded",
    "bw_out_allowance_exceeded",
    "pps_allowance_exceeded",
    "conntrack_allowance_exceeded",
    "linklocal_allowance_exceeded",
];

/// ENA levels (not counters): reported as read, never differenced. 23.11+.
pub const ENA_LEVELS: &[&str] = &["conntrack_allowance_available"];

/// ENA Express (SRD) packet counters, 23.11+: what went over SRD and what
/// was eligible to. Listed by every 23.11+ PMD whether or not the device
/// reports the capability (then they read 0).
pub const ENA_EXPRESS_COUNTERS: &[&str] = &["ena_srd_tx_pkts", "ena_srd_eligible_tx_pkts", "ena_srd_rx_pkts"];

/// ENA Express levels, 23.11+: `ena_srd_mode` is a bit set (ENA_EXPRESS_*
/// bits), `ena_srd_resource_utilization` the percentage of the SRD
/// resources in use.
pub const ENA_EXPRESS_LEVELS: &[&str] = &["ena_srd_mode", "ena_srd_resource_utilization"];

/// Bits of `ena_srd_mode` (the PMD's enum ena_admin_ena_srd_flags).
pub const ENA_EXPRESS_ENABLED: u64 = 1 << 0;
pub const ENA_EXPRESS_UDP_ENABLED: u64 = 1 << 1;
pub const ENA_EXPRESS_UDP_ORDERING_BYPASS: u64 = 1 << 2;

/// Hardware PMDs' own drop and error counters beyond the basic stats,
/// watched on every port of that driver (as if named with --watch-xstat,
/// but not required: a DPDK line that lacks one only warns). Names from
/// each PMD's xstats table; igb's are read in the QEMU guest test.
pub const PMD_DROP_COUNTERS: &[(&str, &[&str])] = &[
    (
        "net_e1000_igb",
        &["rx_missed_packets", "rx_crc_errors", "rx_length_errors", "rx_undersize_errors", "rx_oversize_errors", "rx_management_dropped"],
    ),
    ("net_ixgbe", &["rx_missed_errors"]),
    ("mlx5_pci", &["rx_out_of_buffer"]),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CounterKind {
    /// A platform allowance counter (differenced; feeds the allowance verdicts).
    Allowance,
    /// A level, reported as read.
    Level,
    /// A counter the user asked to watch (feeds the verdict as "other").
    Watched,
    /// An ENA Express (SRD) packet counter (differenced; evidence, not a limit of its own).
    Express,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CounterSpec {
    pub name: String,
    pub kind: CounterKind,
    /// Whether the device must have it (ENA's levels exist only from 23.11,
    /// and only when the device reports the capability).
    pub required: bool,
}

/// The extended stats to watch on a port with driver `driver`, plus the
/// user's `--watch-xstat` names. (imissed, rx_nombuf, ierrors and oerrors
/// come from the basic stats on every driver and need no entry here.)
pub fn counter_set(driver: &str, watch: &[String]) -> Vec<CounterSpec> {
    let mut set = Vec::new();
    if driver == "net_ena" {
        // 23.11+ lists the allowances only when the device reports the capability.
        set.extend(ENA_ALLOWANCES.iter().map(|n| CounterSpec { name: n.to_string(), kind: CounterKind::Allowance, required: false }));
        set.extend(ENA_LEVELS.iter().map(|n| CounterSpec { name: n.to_string(), kind: CounterKind::Level, required: false }));
        set.extend(ENA_EXPRESS_COUNTERS.iter().map(|n| CounterSpec { name: n.to_string(), kind: CounterKind::Express, required: false }));
        set.extend(ENA_EXPRESS_LEVELS.iter().map(|n| CounterSpec { name: n.to_string(), kind: CounterKind::Level, required: false }));
    }
    for (_, names) in PMD_DROP_COUNTERS.iter().filter(|(d, _)| *d == driver) {
        set.extend(names.iter().map(|n| CounterSpec { name: n.to_string(), kind: CounterKind::Watched, required: false }));
    }
    for w in watch {
        match set.iter_mut().find(|s| &s.name == w) {
            // Named by the user: now the device must have it.
            Some(s) if s.kind == CounterKind::Watched => s.required = true,
            Some(_) => {}
            None => set.push(CounterSpec { name: w.clone(), kind: CounterKind::Watched, required: true }),
        }
    }
    set
}

/// How a port's watched counters are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReadPath {
    /// `rte_eth_xstats_get_by_id` with the resolved ids: one admin command
    /// per group of counters on ENA.
    #[default]
    ById,
    /// The whole list with `rte_eth_xstats_get`, then the resolved ids
    /// picked out of it. ENA's by-id read returns its ENA Express counters
    /// from a buffer only a secondary process's requests fill (the PMD
    /// fetches them into a local copy, then reads the other: 23.11 to
    /// 25.11), so a primary reads zeros there; the full read returns the
    /// fetched values. It costs one more admin command per read.
    Full,
}

/// The read path for a resolved counter set.
pub fn read_path(driver: &str, specs: &[CounterSpec]) -> ReadPath {
    let express = specs.iter().any(|s| ENA_EXPRESS_COUNTERS.contains(&s.name.as_str()) || ENA_EXPRESS_LEVELS.contains(&s.name.as_str()));
    if driver == "net_ena" && express {
        ReadPath::Full
    } else {
        ReadPath::ById
    }
}

/// Counters found in a port's xstats name list, with their ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub specs: Vec<CounterSpec>,
    pub ids: Vec<u64>,
    /// Names asked for that the device does not have.
    pub missing: Vec<String>,
    /// Names that appear more than once (the first is used).
    pub duplicated: Vec<String>,
}

/// Finds each wanted counter in `names` (the port's xstats names in id
/// order). Names elsewhere in the list may repeat (ENA lists `rx_qN_bytes`
/// twice); a wanted name that repeats takes its first id and is reported.
pub fn resolve(names: &[String], wanted: &[CounterSpec]) -> Resolved {
    let mut r = Resolved::default();
    for spec in wanted {
        let mut hits = names.iter().enumerate().filter(|(_, n)| **n == spec.name).map(|(i, _)| i as u64);
        match hits.next() {
            Some(id) => {
                if hits.next().is_some() {
                    r.duplicated.push(spec.name.clone());
                }
                r.specs.push(spec.clone());
                r.ids.push(id);
            }
            None => r.missing.push(spec.name.clone()),
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hardware_pmd_gets_its_drop_counters_watched_unless_required() {
        let igb = counter_set("net_e1000_igb", &["rx_crc_errors".to_string()]);
        let missed = igb.iter().find(|s| s.name == "rx_missed_packets").expect("igb's missed counter watched");
        assert_eq!((missed.kind, missed.required), (CounterKind::Watched, false));
        let crc = igb.iter().find(|s| s.name == "rx_crc_errors").unwrap();
        assert!(crc.required, "named by the user: required");
        assert_eq!(igb.iter().filter(|s| s.name == "rx_crc_errors").count(), 1);
        assert!(counter_set("net_memif", &[]).is_empty());
        assert!(counter_set("net_ena", &[]).iter().all(|s| s.kind != CounterKind::Watched));
    }

    #[test]
    fn ena_express_counters_are_read_whole_on_ena_only() {
        let set = counter_set("net_ena", &[]);
        let kind = |n: &str| set.iter().find(|s| s.name == n).map(|s| s.kind);
        assert_eq!(kind("ena_srd_eligible_tx_pkts"), Some(CounterKind::Express));
        assert_eq!(kind("ena_srd_mode"), Some(CounterKind::Level));
        assert_eq!(kind("ena_srd_resource_utilization"), Some(CounterKind::Level));
        assert_eq!(read_path("net_ena", &set), ReadPath::Full);
        // 22.11's PMD has no SRD counters: they do not resolve, by id it is.
        let r = resolve(&ena_22_11(), &set);
        assert_eq!(read_path("net_ena", &r.specs), ReadPath::ById);
        assert_eq!(read_path("net_e1000_igb", &counter_set("net_e1000_igb", &[])), ReadPath::ById);
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// net_ena's xstats names on 22.11 for one queue pair, in id order,
    /// reconstructed from the PMD's stat tables (drivers/net/ena/ena_ethdev.c):
    /// ethdev's basic stats with their per-queue entries, then the PMD's
    /// global stats, the five ENI allowance counters, and its own per-queue
    /// stats -- where rx_q0_bytes and tx_q0_bytes appear a second time.
    fn ena_22_11() -> Vec<String> {
        names(&[
            "rx_good_packets",
            "tx_good_packets",
            "rx_good_bytes",
            "tx_good_bytes",
            "rx_missed_errors",
            "rx_errors",
            "tx_errors",
            "rx_mbuf_allocation_errors",
            "rx_q0_packets",
            "rx_q0_bytes",
            "rx_q0_errors",
            "tx_q0_packets",
            "tx_q0_bytes",
            "wd_expired",
            "dev_start",
            "dev_stop",
            "tx_drops",
            "bw_in_allowance_exceeded",
            "bw_out_allowance_exceeded",
            "pps_allowance_exceeded",
            "conntrack_allowance_exceeded",
            "linklocal_allowance_exceeded",
            "rx_q0_cnt",
            "rx_q0_bytes",
            "rx_q0_refill_partial",
            "rx_q0_bad_csum",
            "rx_q0_mbuf_alloc_fail",
            "rx_q0_bad_desc_num",
            "rx_q0_bad_req_id",
            "tx_q0_cnt",
            "tx_q0_bytes",
            "tx_q0_prepare_ctx_err",
            "tx_q0_linearize",
            "tx_q0_linearize_failed",
            "tx_q0_tx_poll",
            "tx_q0_doorbells",
            "tx_q0_bad_req_id",
            "tx_q0_available_desc",
            "tx_q0_missed_tx",
        ])
    }

    /// 23.11+ on a device with the customer-metrics capability: the
    /// metrics table adds conntrack_allowance_available after the five, and
    /// a second queue pair repeats its byte counters the same way.
    fn ena_23_11() -> Vec<String> {
        let mut v = ena_22_11();
        let at = v.iter().position(|n| n == "linklocal_allowance_exceeded").unwrap() + 1;
        v.insert(at, "conntrack_allowance_available".into());
        // Then the ENA Express table (ena_stats_srd_strings), listed always.
        for (i, n) in ["ena_srd_mode", "ena_srd_tx_pkts", "ena_srd_eligible_tx_pkts", "ena_srd_rx_pkts", "ena_srd_resource_utilization"]
            .iter()
            .enumerate()
        {
            v.insert(at + 1 + i, n.to_string());
        }
        v.extend(names(&["rx_q1_cnt", "rx_q1_bytes", "tx_q1_cnt", "tx_q1_bytes"]));
        v
    }

    #[test]
    fn ena_22_11_resolves_five_allowances_and_lacks_the_level() {
        let r = resolve(&ena_22_11(), &counter_set("net_ena", &[]));
        let got: Vec<&str> = r.specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(got, ENA_ALLOWANCES);
        assert_eq!(r.ids, [17, 18, 19, 20, 21]);
        assert_eq!(
            r.missing,
            [
                "conntrack_allowance_available",
                "ena_srd_tx_pkts",
                "ena_srd_eligible_tx_pkts",
                "ena_srd_rx_pkts",
                "ena_srd_mode",
                "ena_srd_resource_utilization"
            ]
        );
        assert!(r.duplicated.is_empty(), "allowance names are unique even where others repeat");
    }

    #[test]
    fn ena_23_11_resolves_six_among_duplicated_per_queue_names() {
        let list = ena_23_11();
        assert!(list.iter().filter(|n| *n == "rx_q0_bytes").count() == 2, "the recorded list repeats names");
        let r = resolve(&list, &counter_set("net_ena", &[]));
        assert_eq!(r.specs.len(), 11);
        assert_eq!(r.specs[5].kind, CounterKind::Level);
        assert_eq!(r.ids[5], 22);
        // ena_srd_tx_pkts, ena_srd_eligible_tx_pkts, ena_srd_rx_pkts, then the two levels.
        assert_eq!(&r.ids[6..], [24, 25, 26, 23, 27]);
        assert!(r.missing.is_empty());
    }

    #[test]
    fn watched_names_resolve_first_of_duplicates_and_report_it() {
        let r = resolve(&ena_23_11(), &counter_set("net_ena", &["rx_q0_bytes".into(), "no_such".into()]));
        let w = r.specs.iter().position(|s| s.name == "rx_q0_bytes").unwrap();
        assert_eq!(r.ids[w], 9);
        assert_eq!(r.duplicated, ["rx_q0_bytes"]);
        assert_eq!(r.missing, ["no_such"]);
    }

    #[test]
    fn other_drivers_watch_only_what_is_asked() {
        assert!(counter_set("net_mlx5", &[]).is_empty());
        let s = counter_set("net_ice", &["rx_dropped_packets".into()]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].kind, CounterKind::Watched);
    }
}
