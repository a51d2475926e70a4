//! Checks before the first frame on net_ena, where mistakes do not fail:
//! the VPC silently drops frames whose source MAC or IP is not the
//! interface's own, and frames with a bad IPv4 header checksum; and a flow
//! is capped at 5 Gbps (10 inside a cluster placement group).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Said before the run, not a problem.
    Info,
    Warning,
    /// The frames would be dropped silently: refuse to send.
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    pub severity: Severity,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PreflightInput {
    pub driver: String,
    pub src_mac_is_own: bool,
    /// The source IP is blastdrop's default (198.18.0.1), not one the user gave.
    pub src_ip_is_default: bool,
    pub ipv4_checksum_ok: bool,
    pub queues: u16,
    pub flows: u32,
    /// The largest frame size sent (FCS included).
    pub frame_size: u32,
    /// Total frames per second, when paced.
    pub rate: Option<f64>,
    /// ENA Express as `ena_srd_mode` reads; None where the PMD lists none (before 23.11).
    pub express: Option<crate::ExpressMode>,
}

/// AWS caps one 5-tuple flow at this many Gb/s (10 inside a cluster placement group).
pub const PER_FLOW_GBPS: f64 = 5.0;

pub fn preflight(i: &PreflightInput) -> Vec<Finding> {
    let mut out = Vec::new();
    if i.driver != "net_ena" {
        return out;
    }
    let err = |m: String| Finding { severity: Severity::Error, message: m };
    let warn = |m: String| Finding { severity: Severity::Warning, message: m };
    if !i.src_mac_is_own {
        out.push(err("--src-mac is not the interface's own MAC: the VPC drops such frames silently; leave --src-mac out".into()));
    }
    if i.src_ip_is_default {
        out.push(err(
            "on ENA the source IP must be the interface's own private address (the VPC drops any other silently): set --src-ip".into()
        ));
    }
    if !i.ipv4_checksum_ok {
        out.push(err("the frames' IPv4 header checksum is wrong: the VPC would drop every one".into()));
    }
    match i.express {
        Some(m) if m.enabled && !m.udp => out.push(warn(m.describe().to_string())),
        Some(m) => out.push(Finding { severity: Severity::Info, message: m.describe().to_string() }),
        None => out.push(Finding {
            severity: Severity::Info,
            message: "ENA Express: unknown (this DPDK's ENA PMD reads no ena_srd_* counters; 23.11 and later do)".into(),
        }),
    }
    match i.rate {
        Some(rate) => {
            let gbps_per_flow = rate * f64::from(i.frame_size) * 8.0 / 1e9 / f64::from(i.flows.max(1));
            if gbps_per_flow > PER_FLOW_GBPS {
                out.push(warn(format!(
                    "{gbps_per_flow:.1} Gb/s per flow passes AWS's {PER_FLOW_GBPS} Gb/s per-flow limit (10 in a cluster placement group): raise --flows"
                )));
            }
        }
        None => {
            if i.flows <= u32::from(i.queues) {
                out.push(warn(format!(
                    "unpaced with {} flow(s) on {} queue(s): one flow can pass AWS's {PER_FLOW_GBPS} Gb/s per-flow limit; give several flows per queue (--flows {})",
                    i.flows,
                    i.queues,
                    u32::from(i.queues) * 4
                )));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> PreflightInput {
        PreflightInput {
            driver: "net_ena".into(),
            src_mac_is_own: true,
            src_ip_is_default: false,
            ipv4_checksum_ok: true,
            queues: 4,
            flows: 64,
            frame_size: 64,
            rate: Some(10e6),
            express: Some(crate::ExpressMode { enabled: true, udp: true, udp_ordering_bypass: false }),
        }
    }

    fn problems(f: &[Finding]) -> Vec<&Finding> {
        f.iter().filter(|x| x.severity != Severity::Info).collect()
    }

    #[test]
    fn a_good_ena_setup_passes() {
        let f = preflight(&ok());
        assert!(problems(&f).is_empty(), "{f:?}");
        assert!(f[0].message.starts_with("ENA Express on, UDP included"));
    }

    #[test]
    fn ena_express_is_said_and_udp_off_warned() {
        let tcp_only = crate::ExpressMode { enabled: true, udp: false, udp_ordering_bypass: false };
        let f = preflight(&PreflightInput { express: Some(tcp_only), ..ok() });
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("EnaSrdUdpEnabled=true"));
        let f = preflight(&PreflightInput { express: None, ..ok() });
        assert_eq!((f[0].severity, f[0].message.starts_with("ENA Express: unknown")), (Severity::Info, true));
    }

    #[test]
    fn silent_drops_are_errors() {
        let f = preflight(&PreflightInput { src_mac_is_own: false, src_ip_is_default: true, ipv4_checksum_ok: false, ..ok() });
        let f: Vec<Finding> = problems(&f).into_iter().cloned().collect();
        assert_eq!(f.len(), 3);
        assert!(f.iter().all(|x| x.severity == Severity::Error));
        assert!(f[0].message.contains("--src-mac") && f[1].message.contains("--src-ip") && f[2].message.contains("checksum"));
    }

    #[test]
    fn per_flow_limit_warns() {
        // 1 flow of 1500-byte frames at 1 Mpps = 12 Gb/s.
        let f = preflight(&PreflightInput { flows: 1, frame_size: 1500, rate: Some(1e6), ..ok() });
        let f: Vec<Finding> = problems(&f).into_iter().cloned().collect();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("12.0 Gb/s per flow"));
        let f = preflight(&PreflightInput { flows: 4, rate: None, ..ok() });
        assert!(problems(&f)[0].message.contains("--flows 16"));
    }

    #[test]
    fn other_drivers_are_not_checked() {
        assert!(preflight(&PreflightInput { driver: "net_memif".into(), src_ip_is_default: true, ..ok() }).is_empty());
    }
}
