//! ENA Express (SRD) in the verdicts. Inside a cluster placement group a
//! flow that goes over SRD gets 25 Gb/s instead of 10 (5 between
//! instances elsewhere). A flow can fall back silently: the instance's SRD
//! resources are used up, the peer is not ENA Express, or the traffic is
//! UDP and UDP is not enabled. Nothing is dropped for that and no
//! allowance moves; only the SRD counters tell. Their evidence joins the
//! step's verdict.

use serde::Serialize;

use crate::by_kind::XstatsByKind;
use crate::counters::{ENA_EXPRESS_ENABLED, ENA_EXPRESS_UDP_ENABLED, ENA_EXPRESS_UDP_ORDERING_BYPASS};

/// SRD resources at or above this use (percent) are near their limit;
/// at 100 new SRD connections fall back.
pub const SRD_RESOURCE_NEAR_PCT: u64 = 90;

/// `ena_srd_mode` read as words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ExpressMode {
    pub enabled: bool,
    pub udp: bool,
    pub udp_ordering_bypass: bool,
}

/// The mode's bits; None when the PMD lists no `ena_srd_mode` (before 23.11).
pub fn express_mode(levels: &XstatsByKind) -> Option<ExpressMode> {
    let m = *levels.levels.get("ena_srd_mode")?;
    Some(ExpressMode {
        enabled: m & ENA_EXPRESS_ENABLED != 0,
        udp: m & ENA_EXPRESS_UDP_ENABLED != 0,
        udp_ordering_bypass: m & ENA_EXPRESS_UDP_ORDERING_BYPASS != 0,
    })
}

impl ExpressMode {
    /// For the pre-flight, about blast's UDP frames.
    pub fn describe(&self) -> &'static str {
        match (self.enabled, self.udp) {
            (true, true) => "ENA Express on, UDP included: eligible flows go over SRD (25 Gb/s per flow in a cluster placement group)",
            (true, false) => {
                "ENA Express on for TCP only: blast's UDP frames will not go over SRD \
                 (aws ec2 modify-network-interface-attribute --ena-srd-specification \
                 'EnaSrdEnabled=true,EnaSrdUdpSpecification={EnaSrdUdpEnabled=true}')"
            }
            // The PMD lists the counters even where the device lacks the
            // capability; they then read 0, which is also "off".
            (false, _) => "ENA Express off (or not reported by this device): flows get 5 Gb/s, 10 in a cluster placement group",
        }
    }
}

/// What one end's ENA Express counters say about a window, if anything
/// worth a verdict: eligible packets that did not go over SRD, SRD
/// resources near or at their limit. `end` is "sender" or "receiver".
pub fn express_evidence(x: &XstatsByKind, end: &str) -> Vec<String> {
    let mut out = Vec::new();
    let get = |n: &str| x.express.get(n).copied();
    if let (Some(eligible), Some(srd)) = (get("ena_srd_eligible_tx_pkts"), get("ena_srd_tx_pkts")) {
        if eligible > srd {
            let fell = eligible - srd;
            out.push(format!(
                "ENA Express: {fell} of {eligible} eligible packets ({:.1}%) did not go over SRD on the {end} \
                 (ena_srd_eligible_tx_pkts +{eligible}, ena_srd_tx_pkts +{srd}): those flows fell back to \
                 ENA's ordinary path, 5 Gb/s per flow (10 in a cluster placement group) instead of 25",
                fell as f64 / eligible as f64 * 100.0
            ));
        }
    }
    if let Some(&used) = x.levels.get("ena_srd_resource_utilization") {
        if used >= 100 {
            out.push(format!(
                "ENA Express: the {end}'s SRD resources were used up (ena_srd_resource_utilization {used}%): \
                 new SRD connections fall back to the ordinary path"
            ));
        } else if used >= SRD_RESOURCE_NEAR_PCT {
            out.push(format!("ENA Express: the {end}'s SRD resources were near their limit (ena_srd_resource_utilization {used}%)"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::CounterKind;

    /// One end's window as the 23.11+ PMD reports it: SRD counter deltas and the two levels.
    fn window(eligible: u64, srd: u64, rx: u64, mode: u64, used: u64) -> XstatsByKind {
        let mut x = XstatsByKind::default();
        x.insert(CounterKind::Express, "ena_srd_eligible_tx_pkts".into(), eligible);
        x.insert(CounterKind::Express, "ena_srd_tx_pkts".into(), srd);
        x.insert(CounterKind::Express, "ena_srd_rx_pkts".into(), rx);
        x.insert(CounterKind::Level, "ena_srd_mode".into(), mode);
        x.insert(CounterKind::Level, "ena_srd_resource_utilization".into(), used);
        x
    }

    #[test]
    fn all_eligible_over_srd_says_nothing() {
        assert!(express_evidence(&window(1_000_000, 1_000_000, 0, 3, 12), "sender").is_empty());
        // ENA Express off: nothing eligible, nothing over SRD.
        assert!(express_evidence(&window(0, 0, 0, 0, 0), "sender").is_empty());
    }

    #[test]
    fn eligible_packets_that_fell_back_are_named() {
        let e = express_evidence(&window(1_000_000, 750_000, 0, 3, 40), "sender");
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("250000 of 1000000 eligible packets (25.0%) did not go over SRD on the sender"), "{}", e[0]);
    }

    #[test]
    fn resources_near_and_at_their_limit() {
        let e = express_evidence(&window(10, 10, 0, 3, 100), "receiver");
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("used up (ena_srd_resource_utilization 100%)"));
        assert!(express_evidence(&window(10, 10, 0, 3, 92), "sender")[0].contains("near their limit"));
        assert!(express_evidence(&window(10, 10, 0, 3, 89), "sender").is_empty());
    }

    #[test]
    fn the_mode_bits() {
        assert_eq!(express_mode(&window(0, 0, 0, 3, 0)), Some(ExpressMode { enabled: true, udp: true, udp_ordering_bypass: false }));
        assert!(express_mode(&window(0, 0, 0, 1, 0)).unwrap().describe().contains("TCP only"));
        assert!(express_mode(&window(0, 0, 0, 0, 0)).unwrap().describe().starts_with("ENA Express off"));
        assert_eq!(express_mode(&XstatsByKind::default()), None, "22.11: no ena_srd_mode");
    }
}
