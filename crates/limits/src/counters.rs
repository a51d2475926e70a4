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

/// Hardware PMDs' own receive-side drop and error counters beyond the basic
/// stats, watched on every port of that driver (as if named with
/// --watch-xstat, but not required: a DPDK line, NIC or firmware that lacks
/// one only warns). A rise in one joins the verdict as `other: NAME
/// (receiver)`: the receiving device said it dropped them.
///
/// Only counters DPDK does NOT already fold into `imissed`, `ierrors` or
/// `rx_nombuf` are here: the verdict reads those three from the basic stats
/// on every driver, so a folded-in counter would count its frames twice
/// (igb `rx_missed_packets` = imissed, ixgbe `rx_priorityP_dropped` sum to
/// imissed, mlx5 `rx_out_of_buffer` = imissed, iavf/ice `rx_dropped_packets`
/// in imissed; the CRC/length/size error counters each PMD sums into
/// ierrors). Counters that always read 0 on a line are left out too.
/// `{n}` in a name stands for a queue or priority number: every name of that
/// form the port lists is watched. Checked against each PMD's xstats table in
/// DPDK v22.11, v23.11, v24.11 and v25.11 (docs/limits.md has the lines):
///
/// - `net_virtio`: nothing. The device has no drop counter (imissed is
///   always 0); the PMD's `rx_q{n}_errors` sum to ierrors and
///   `rx_mbuf_allocation_errors` is rx_nombuf.
/// - `net_e1000_em`: nothing. The PMD exposes no xstats of its own; MPC is
///   imissed, its error registers ierrors.
pub const PMD_DROP_COUNTERS: &[(&str, &[&str])] = &[
    ("net_virtio", &[]),
    ("net_e1000_em", &[]),
    (
        "net_e1000_igb",
        &[
            "rx_symbol_errors",
            "rx_undersize_errors",
            "rx_fragment_errors",
            "rx_oversize_errors",
            "rx_jabber_errors",
            "rx_management_dropped",
        ],
    ),
    // rx_q{n}_errors is ethdev's per-queue-stat-counter slot, which ixgbe
    // fills from QPRDC (queue drops; not in imissed). Queues map to slot 0
    // unless remapped, so rx_q0_errors carries them all.
    ("net_ixgbe", &["rx_q{n}_errors", "rx_jabber_errors", "rx_management_dropped", "rx_fcoe_dropped"]),
    ("net_iavf", &["rx_unknown_protocol_packets"]),
    ("net_ice", &["rx_illegal_byte_errors", "rx_len_errors", "rx_unknown_protocol_packets"]),
    // DPDK's names (dpdk_name), not the kernel's ethtool ones. Listed only
    // where the kernel lists the counter; the last three are 24.11+.
    // rx_prio{n}_buf_discard_packets is left out: it likely overlaps
    // rx_phy_discard_packets (both port-buffer drops).
    (
        "mlx5_pci",
        &[
            "rx_phy_discard_packets",
            "rx_prio{n}_cong_discard_packets",
            "rx_phy_crc_errors",
            "rx_phy_in_range_len_errors",
            "rx_phy_symbol_errors",
            "outbound_pci_buffer_overflow",
            "dev_out_of_buffer",
            "dev_internal_queue_oob",
        ],
    ),
];

/// Whether `name` is `pattern` with its `{n}` (if any) a decimal number.
fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once("{n}") {
        None => pattern == name,
        Some((head, tail)) => name
            .strip_prefix(head)
            .and_then(|rest| rest.strip_suffix(tail))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
    }
}

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

/// The counter set read from a kernel driver's own statistics (the
/// interface under a port on net_af_xdp or net_af_packet, whose PMD passes
/// none of them on). The kernel's `ena` driver lists the allowance, level
/// and ENA Express counters under the names the ENA PMD uses, so they are
/// watched as on net_ena; other drivers' drop counters go by other names in
/// the kernel than in their PMDs and are not mapped: only `watch`, the
/// user's names, which must then be the kernel driver's.
pub fn kernel_counter_set(kernel_driver: &str, watch: &[String]) -> Vec<CounterSpec> {
    counter_set(if kernel_driver == "ena" { "net_ena" } else { "" }, watch)
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
/// twice); a wanted name that repeats takes its first id and is reported
/// (virtio 22.11.0-.4 and 23.11.0 list `rx_qN_errors` twice: the first is
/// ethdev's, always 0). A pattern (`{n}`) resolves to every name of its form,
/// each once, and is missing only when none is listed.
pub fn resolve(names: &[String], wanted: &[CounterSpec]) -> Resolved {
    let mut r = Resolved::default();
    for spec in wanted {
        let mut found = false;
        for (i, name) in names.iter().enumerate() {
            if !name_matches(&spec.name, name) {
                continue;
            }
            found = true;
            // Already resolved (a pattern's match also named alone, or a repeat).
            if r.specs.iter().any(|s| &s.name == name) {
                continue;
            }
            if names[i + 1..].contains(name) {
                r.duplicated.push(name.clone());
            }
            r.specs.push(CounterSpec { name: name.clone(), ..spec.clone() });
            r.ids.push(i as u64);
        }
        if !found {
            r.missing.push(spec.name.clone());
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hardware_pmd_gets_its_drop_counters_watched_unless_required() {
        let igb = counter_set("net_e1000_igb", &["rx_management_dropped".to_string()]);
        let symbol = igb.iter().find(|s| s.name == "rx_symbol_errors").expect("igb's symbol errors watched");
        assert_eq!((symbol.kind, symbol.required), (CounterKind::Watched, false));
        let mgmt = igb.iter().find(|s| s.name == "rx_management_dropped").unwrap();
        assert!(mgmt.required, "named by the user: required");
        assert_eq!(igb.iter().filter(|s| s.name == "rx_management_dropped").count(), 1);
        assert!(counter_set("net_memif", &[]).is_empty());
        assert!(counter_set("net_ena", &[]).iter().all(|s| s.kind != CounterKind::Watched));
        // The kernel's ena driver: the same set; veth: only what is named.
        assert_eq!(kernel_counter_set("ena", &[]), counter_set("net_ena", &[]));
        let veth = kernel_counter_set("veth", &["rx_queue_0_xdp_redirect".into()]);
        assert_eq!(veth, vec![CounterSpec { name: "rx_queue_0_xdp_redirect".into(), kind: CounterKind::Watched, required: true }]);
    }

    fn watched(driver: &str) -> Vec<String> {
        counter_set(driver, &[]).into_iter().map(|s| s.name).collect()
    }

    #[test]
    fn each_pmd_watches_its_receive_drop_counters() {
        assert!(watched("net_virtio").is_empty(), "virtio has no drop counter beyond the basic stats");
        assert!(watched("net_e1000_em").is_empty(), "em has no xstats of its own");
        assert_eq!(
            watched("net_e1000_igb"),
            [
                "rx_symbol_errors",
                "rx_undersize_errors",
                "rx_fragment_errors",
                "rx_oversize_errors",
                "rx_jabber_errors",
                "rx_management_dropped"
            ]
        );
        assert_eq!(watched("net_ixgbe"), ["rx_q{n}_errors", "rx_jabber_errors", "rx_management_dropped", "rx_fcoe_dropped"]);
        assert_eq!(watched("net_iavf"), ["rx_unknown_protocol_packets"]);
        assert_eq!(watched("net_ice"), ["rx_illegal_byte_errors", "rx_len_errors", "rx_unknown_protocol_packets"]);
        let mlx5 = watched("mlx5_pci");
        assert!(mlx5.contains(&"rx_phy_discard_packets".to_string()), "DPDK's name, not ethtool's rx_discards_phy");
        assert!(!mlx5.contains(&"rx_discards_phy".to_string()));
    }

    /// What each PMD already folds into imissed, ierrors or rx_nombuf (which
    /// the verdict reads from the basic stats): never watched again.
    const FOLDED: &[(&str, &[&str])] = &[
        ("net_virtio", &["rx_q{n}_errors", "rx_q0_errors", "rx_mbuf_allocation_errors", "rx_missed_errors", "rx_errors"]),
        ("net_e1000_em", &["rx_missed_errors", "rx_errors", "rx_mbuf_allocation_errors"]),
        ("net_e1000_igb", &["rx_missed_packets", "rx_crc_errors", "rx_align_errors", "rx_length_errors", "rx_carrier_ext_errors"]),
        (
            "net_ixgbe",
            &[
                "rx_missed_errors",
                "rx_priority{n}_dropped",
                "rx_priority0_dropped",
                "rx_total_missed_packets",
                "rx_crc_errors",
                "rx_illegal_byte_errors",
                "rx_error_bytes",
                "rx_length_errors",
                "rx_fragment_errors",
                "rx_undersize_errors",
                "rx_oversize_errors",
                "rx_mac_short_packet_dropped",
                "rx_l3_l4_xsum_error",
                "rx_fcoe_crc_errors",
                "rx_fcoe_mbuf_allocation_errors",
            ],
        ),
        ("net_iavf", &["rx_dropped_packets"]),
        (
            "net_ice",
            &[
                "rx_dropped_packets",
                "rx_crc_errors",
                "rx_undersized_errors",
                "rx_oversize_errors",
                "rx_fragmented_errors",
                "rx_jabber_errors",
            ],
        ),
        ("mlx5_pci", &["rx_out_of_buffer", "rx_q{n}_errors", "rx_q0_errors", "rx_prio{n}_buf_discard_packets"]),
    ];

    #[test]
    fn counters_folded_into_the_basic_stats_are_not_watched_again() {
        for (driver, folded) in FOLDED {
            let set = watched(driver);
            for name in *folded {
                assert!(!set.iter().any(|w| name_matches(w, name) || w == name), "{driver}: {name} is in the basic stats already");
            }
        }
    }

    #[test]
    fn per_queue_patterns_resolve_each_listed_queue_once() {
        // ixgbe with two RX queues: ethdev lists rx_q0_errors and
        // rx_q1_errors (its AUTOFILL slots, QPRDC) among the basic stats.
        let list = names(&[
            "rx_good_packets",
            "rx_missed_errors",
            "rx_errors",
            "rx_mbuf_allocation_errors",
            "rx_q0_packets",
            "rx_q0_errors",
            "rx_q1_packets",
            "rx_q1_errors",
            "rx_crc_errors",
            "rx_jabber_errors",
            "rx_management_dropped",
            "rx_fcoe_dropped",
            "rx_priority0_dropped",
            "rx_qx_errors",
        ]);
        let r = resolve(&list, &counter_set("net_ixgbe", &["rx_q0_errors".into()]));
        let got: Vec<&str> = r.specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(got, ["rx_q0_errors", "rx_q1_errors", "rx_jabber_errors", "rx_management_dropped", "rx_fcoe_dropped"]);
        assert_eq!(r.ids, [5, 7, 9, 10, 11]);
        assert!(r.missing.is_empty(), "a user's name a pattern matched already is found: {:?}", r.missing);
        // mlx5 on 22.11 with no per-priority counters: the pattern and the
        // 24.11 names are missing (warned), the rest resolve.
        let r = resolve(&names(&["rx_out_of_buffer", "rx_phy_discard_packets", "rx_phy_crc_errors"]), &counter_set("mlx5_pci", &[]));
        assert_eq!(r.ids, [1, 2]);
        assert!(r.missing.contains(&"rx_prio{n}_cong_discard_packets".to_string()));
    }

    #[test]
    fn virtio_s_duplicated_queue_errors_resolve_the_first_and_say_so() {
        // virtio 22.11.0-.4 and 23.11.0: ethdev's always-0 rx_q0_errors
        // first, the PMD's real one later. Found only when asked by name.
        let list = names(&["rx_good_packets", "rx_errors", "rx_q0_packets", "rx_q0_errors", "rx_q0_good_packets", "rx_q0_errors"]);
        assert!(resolve(&list, &counter_set("net_virtio", &[])).specs.is_empty());
        let r = resolve(&list, &counter_set("net_virtio", &["rx_q0_errors".into()]));
        assert_eq!((r.ids.as_slice(), r.duplicated.as_slice()), (&[3][..], &["rx_q0_errors".to_string()][..]));
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
        let s = counter_set("net_af_packet", &["rx_dropped_packets".into()]);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].kind, s[0].required), (CounterKind::Watched, true));
    }
}
