//! Readying the frames a probe will be stamped into, once, before the
//! replay: the replay lane then writes only the probe, per send, at
//! wire::PROBE_OFFSET. The probe changes the payload on every send, so no
//! UDP checksum computed here would hold: it is set to 0, "no checksum",
//! which IPv4 allows (RFC 768) and a probe frame always is (`probe_room`:
//! UDP over IPv4, no VLAN tag, no options). The IPv4 identification gets
//! the run id, as blast's own frames carry it (wire::run_id), so drop
//! tells this run's probes from an earlier run's.

use wire::{ETHERNET_HEADER_LEN, IPV4_HEADER_LEN};

use crate::rewrite::set_ipv4_checksum;
use crate::Capture;

/// What readying the probe frames did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeStats {
    /// Frames readied: each carries a probe when sent.
    pub frames: u64,
    /// Of them, UDP checksums that were not 0 and are now (the rest were
    /// captured with none).
    pub udp_checksums_zeroed: u64,
}

/// Where a probe frame's UDP checksum is (no tag, no IPv4 options).
const UDP_CHECKSUM_AT: usize = ETHERNET_HEADER_LEN + IPV4_HEADER_LEN + 6;

impl Capture {
    /// Readies every frame with room for a probe: run id in the IPv4
    /// identification (its header checksum computed again), UDP checksum 0.
    pub fn ready_for_probes(&mut self, run_id: u16) -> ProbeStats {
        let mut s = ProbeStats::default();
        for i in 0..self.len() {
            if !self.info(i).probe_room {
                continue;
            }
            let f = self.frame_mut(i);
            let ip = ETHERNET_HEADER_LEN;
            f[ip + 4..ip + 6].copy_from_slice(&run_id.to_be_bytes());
            set_ipv4_checksum(f, ip);
            let c = &mut f[UDP_CHECKSUM_AT..UDP_CHECKSUM_AT + 2];
            s.udp_checksums_zeroed += u64::from(c != [0, 0]);
            c.fill(0);
            s.frames += 1;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::tests::udp_frame;
    use crate::read::tests::pcap;

    #[test]
    fn probe_frames_get_the_run_id_a_right_header_and_no_udp_checksum() {
        let mut with_sum = udp_frame(64, 1, 2);
        with_sum[UDP_CHECKSUM_AT..UDP_CHECKSUM_AT + 2].copy_from_slice(&[0x12, 0x34]);
        let mut tcp = udp_frame(128, 1, 2);
        tcp[23] = 6;
        tcp[50..52].copy_from_slice(&[0xab, 0xcd]);
        let frames = vec![(0, with_sum), (1, udp_frame(100, 3, 4)), (2, tcp.clone())];
        let mut c = Capture::parse(pcap(&frames)).unwrap();
        let s = c.ready_for_probes(0x4242);
        // Two probe frames, one of which had a checksum (wire writes 0 for its own).
        let had = u64::from(frames[1].1[UDP_CHECKSUM_AT..UDP_CHECKSUM_AT + 2] != [0, 0]);
        assert_eq!(s, ProbeStats { frames: 2, udp_checksums_zeroed: 1 + had });
        for i in 0..2 {
            let f = c.frame(i);
            assert_eq!(wire::run_id(f), 0x4242);
            assert_eq!(wire::checksum(&f[14..34]), 0, "frame {i}'s IPv4 header checksum");
            assert_eq!(&f[UDP_CHECKSUM_AT..UDP_CHECKSUM_AT + 2], &[0, 0]);
        }
        // The TCP frame has no probe room: untouched.
        assert_eq!(c.frame(2), &tcp[..]);
    }
}
