//! Per-block counts of stream ids: drop's lanes count what arrived and
//! what was lost per block of ids, so a group trial can give each member
//! (whose share of the ids is whole blocks) its own figures. Here, below
//! both the lanes and the control channel, because both use them.

/// The stream ids a group shares out: drop tracks ids below its --streams
/// (4096 by default) one by one, so a group's ids stay below that.
pub const GROUP_STREAM_SPACE: u32 = 4096;

/// drop counts arrivals and losses per block of this many stream ids
/// (ids at or past the last block count in the last): a member's share is
/// whole blocks, so its arrivals are its blocks' sum.
pub const STREAM_BLOCK: u32 = 64;
pub const STREAM_BLOCKS: usize = (GROUP_STREAM_SPACE / STREAM_BLOCK) as usize;

/// Frames that arrived in a block of stream ids, and the net frames lost
/// there (gaps in the sequence numbers, less the ones that came late):
/// `lost` is a wrapping sum, exact over a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockCounts {
    pub received: u64,
    pub lost: u64,
}

/// The block of stream ids `stream` is counted in.
#[inline(always)]
pub fn block_of(stream: u16) -> usize {
    (u32::from(stream) / STREAM_BLOCK).min(STREAM_BLOCKS as u32 - 1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_fall_in_their_block_and_past_the_space_in_the_last() {
        assert_eq!((block_of(0), block_of(63), block_of(64)), (0, 0, 1));
        assert_eq!(block_of((GROUP_STREAM_SPACE - 1) as u16), STREAM_BLOCKS - 1);
        assert_eq!((block_of(GROUP_STREAM_SPACE as u16), block_of(u16::MAX)), (STREAM_BLOCKS - 1, STREAM_BLOCKS - 1));
    }
}
