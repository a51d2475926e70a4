use serde::{Deserialize, Serialize};

/// Rates over a window. `frame_gbps` counts frame bytes (FCS included);
/// `wire_gbps` adds the 20 bytes of preamble and inter-frame gap per frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rates {
    pub packets: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub mpps: f64,
    pub frame_gbps: f64,
    pub wire_gbps: f64,
}

impl Rates {
    pub fn over(packets: u64, bytes: u64, seconds: f64) -> Rates {
        if seconds <= 0.0 {
            return Rates { packets, bytes, seconds, ..Rates::default() };
        }
        Rates {
            packets,
            bytes,
            seconds,
            mpps: packets as f64 / seconds / 1e6,
            frame_gbps: bytes as f64 * 8.0 / seconds / 1e9,
            wire_gbps: (bytes + packets * 20) as f64 * 8.0 / seconds / 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_label_wire_and_frame() {
        let r = Rates::over(1_000_000, 64_000_000, 1.0);
        assert_eq!(r.mpps, 1.0);
        assert!((r.frame_gbps - 0.512).abs() < 1e-9);
        assert!((r.wire_gbps - 0.672).abs() < 1e-9);
        assert_eq!(Rates::over(5, 320, 0.0).mpps, 0.0);
    }
}
