//! Frame sizes and UDP payload lengths, as DPDK's frames count them.

use wire::{FCS_LEN, HEADERS_LEN, PROBE_LEN};

/// The smallest frame: Ethernet, IPv4 and UDP headers, a probe and the FCS
/// (64 B, as on every other path).
pub const MIN_FRAME: usize = HEADERS_LEN + PROBE_LEN + FCS_LEN;

/// The UDP payload a frame of `frame` bytes (FCS included) carries over
/// IPv4 without options; None below [`MIN_FRAME`].
pub fn payload_len(frame: usize) -> Option<usize> {
    (frame >= MIN_FRAME).then(|| frame - HEADERS_LEN - FCS_LEN)
}

/// The frame (FCS included) a UDP payload of `payload` bytes travels in.
pub fn frame_len(payload: usize) -> usize {
    payload + HEADERS_LEN + FCS_LEN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_64_byte_frame_carries_exactly_a_probe_and_1518_carries_1472() {
        assert_eq!(payload_len(64), Some(PROBE_LEN));
        assert_eq!(payload_len(1518), Some(1472));
        assert_eq!(payload_len(63), None);
        assert_eq!(frame_len(1472), 1518);
    }
}
