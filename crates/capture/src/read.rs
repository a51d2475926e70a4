//! Reading a capture file whole into memory. The file's own buffer holds
//! the frames (they are contiguous in it), so the memory a replay needs is
//! the file's size plus a few words per frame, known before it starts.

use std::collections::BTreeMap;
use std::path::Path;

use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, PcapError, TsResolution};

use crate::frame::{FlowKind, FrameInfo};

/// The container the frames came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap,
    PcapNg,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Pcap => "pcap",
            Format::PcapNg => "pcapng",
        }
    }
}

/// Why a capture cannot be replayed. Frames are numbered from 1, as
/// Wireshark numbers them.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    #[error("it is empty")]
    Empty,
    #[error("it holds no frames")]
    NoFrames,
    #[error("it is not a pcap or pcapng file (it starts with {0})")]
    NotACapture(String),
    #[error("it is truncated: {what} ends past the end of the file (the capture was cut short)")]
    Truncated { what: String },
    #[error("it is malformed at byte {at} ({what}): {why}")]
    Malformed { at: usize, what: String, why: String },
    #[error("it holds {0} frames; only Ethernet captures can be replayed")]
    LinkType(String),
    #[error("frame {frame} was captured with {captured} of its {original} bytes (the capture's snap length): replaying it would send another frame")]
    Snapped { frame: usize, captured: u32, original: u32 },
    #[error("frame {frame} is {len} B, too short for an Ethernet header")]
    Runt { frame: usize, len: usize },
    #[error("frame {frame} is a pcapng {block} block, which carries no timestamp")]
    Untimed { frame: usize, block: &'static str },
    #[error("it needs {needed} B in memory, above the limit of {limit} B")]
    TooBig { needed: u64, limit: u64 },
}

/// Where a frame's bytes are in the buffer, and when it was captured.
#[derive(Debug, Clone, Copy)]
struct Stored {
    at: usize,
    len: u32,
    ts_ns: u64,
}

/// Every frame of a capture, in the file's order.
#[derive(Debug, Clone)]
pub struct Capture {
    pub format: Format,
    bytes: Vec<u8>,
    frames: Vec<Stored>,
    infos: Vec<FrameInfo>,
}

/// Bytes of bookkeeping a frame costs beyond its own bytes.
pub const PER_FRAME_BYTES: u64 = (std::mem::size_of::<Stored>() + std::mem::size_of::<FrameInfo>()) as u64;

impl Capture {
    /// Reads the file at `path` whole, refusing one whose bytes exceed `limit`.
    pub fn read(path: &Path, limit: u64) -> Result<Capture, CaptureError> {
        let size = std::fs::metadata(path)?.len();
        if size > limit {
            return Err(CaptureError::TooBig { needed: size, limit });
        }
        let c = Capture::parse(std::fs::read(path)?)?;
        match c.memory() {
            needed if needed > limit => Err(CaptureError::TooBig { needed, limit }),
            _ => Ok(c),
        }
    }

    /// Parses a whole pcap or pcapng file.
    pub fn parse(bytes: Vec<u8>) -> Result<Capture, CaptureError> {
        let magic = bytes.get(..4).map(|m| u32::from_be_bytes([m[0], m[1], m[2], m[3]]));
        let (format, frames) = match magic {
            _ if bytes.is_empty() => return Err(CaptureError::Empty),
            Some(0x0a0d_0d0a) => (Format::PcapNg, pcapng_frames(&bytes)?),
            Some(0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1) => (Format::Pcap, pcap_frames(&bytes)?),
            _ if bytes.len() < 4 => return Err(CaptureError::Truncated { what: "its file header".into() }),
            _ => return Err(CaptureError::NotACapture(bytes[..4].iter().map(|b| format!("{b:02x}")).collect())),
        };
        if frames.is_empty() {
            return Err(CaptureError::NoFrames);
        }
        let infos = frames.iter().map(|f| FrameInfo::of(&bytes[f.at..f.at + f.len as usize])).collect();
        Ok(Capture { format, bytes, frames, infos })
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Frame `i`'s bytes (FCS not included).
    #[inline(always)]
    pub fn frame(&self, i: usize) -> &[u8] {
        let f = self.frames[i];
        &self.bytes[f.at..f.at + f.len as usize]
    }

    pub(crate) fn frame_mut(&mut self, i: usize) -> &mut [u8] {
        let f = self.frames[i];
        &mut self.bytes[f.at..f.at + f.len as usize]
    }

    pub fn info(&self, i: usize) -> &FrameInfo {
        &self.infos[i]
    }

    /// When frame `i` was captured, nanoseconds on the capture's clock.
    pub fn ts_ns(&self, i: usize) -> u64 {
        self.frames[i].ts_ns
    }

    /// The largest frame, FCS included.
    pub fn largest(&self) -> usize {
        self.frames.iter().map(|f| f.len as usize).max().unwrap_or(0) + wire::FCS_LEN
    }

    /// Frames' bytes in all, FCS included.
    pub fn frame_bytes(&self) -> u64 {
        self.frames.iter().map(|f| u64::from(f.len) + wire::FCS_LEN as u64).sum()
    }

    /// What holding the capture takes: the file and each frame's bookkeeping.
    pub fn memory(&self) -> u64 {
        self.bytes.len() as u64 + self.frames.len() as u64 * PER_FRAME_BYTES
    }

    /// From the first frame's time to the last's (0 for one frame).
    pub fn span_ns(&self) -> u64 {
        let first = self.frames[0].ts_ns;
        self.frames.iter().map(|f| f.ts_ns.saturating_sub(first)).max().unwrap_or(0)
    }

    /// Frames whose time is before the frame ahead of them in the file.
    pub fn out_of_order(&self) -> usize {
        self.frames.windows(2).filter(|w| w[1].ts_ns < w[0].ts_ns).count()
    }

    /// Frames by kind.
    pub fn kinds(&self) -> BTreeMap<FlowKind, u64> {
        let mut m = BTreeMap::new();
        for i in &self.infos {
            *m.entry(i.kind).or_insert(0) += 1;
        }
        m
    }

    /// Distinct flows (both directions of a conversation count once).
    pub fn flows(&self) -> usize {
        self.infos.iter().map(|i| i.flow).collect::<std::collections::HashSet<_>>().len()
    }

    /// Frames with room for a probe.
    pub fn probe_room(&self) -> u64 {
        self.infos.iter().filter(|i| i.probe_room).count() as u64
    }
}

/// Where `data` starts in `buf` (the parsers hand out slices of it).
fn offset_in(buf: &[u8], data: &[u8]) -> usize {
    let at = (data.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
    assert!(at <= buf.len() && at + data.len() <= buf.len(), "the parser returned bytes outside the file's buffer");
    at
}

fn check_frame(n: usize, captured: usize, original: u32) -> Result<(), CaptureError> {
    if (captured as u64) < u64::from(original) {
        return Err(CaptureError::Snapped { frame: n, captured: captured as u32, original });
    }
    if captured < wire::ETHERNET_HEADER_LEN {
        return Err(CaptureError::Runt { frame: n, len: captured });
    }
    Ok(())
}

fn malformed(buf: &[u8], rest: &[u8], what: String, e: PcapError) -> CaptureError {
    let at = buf.len() - rest.len();
    match e {
        PcapError::IncompleteBuffer => CaptureError::Truncated { what },
        e => CaptureError::Malformed { at, what, why: e.to_string() },
    }
}

fn pcap_frames(buf: &[u8]) -> Result<Vec<Stored>, CaptureError> {
    let (mut rest, parser) = PcapParser::new(buf).map_err(|e| malformed(buf, buf, "its file header".into(), e))?;
    let header = parser.header();
    if header.datalink != DataLink::ETHERNET {
        return Err(CaptureError::LinkType(format!("{:?}", header.datalink)));
    }
    let frac_ns = if header.ts_resolution == TsResolution::MicroSecond { 1000 } else { 1 };
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let n = frames.len() + 1;
        let (next, p) = parser.next_raw_packet(rest).map_err(|e| malformed(buf, rest, format!("frame {n}"), e))?;
        check_frame(n, p.data.len(), p.orig_len)?;
        let ts_ns = u64::from(p.ts_sec) * 1_000_000_000 + u64::from(p.ts_frac) * frac_ns;
        frames.push(Stored { at: offset_in(buf, &p.data), len: p.data.len() as u32, ts_ns });
        rest = next;
    }
    Ok(frames)
}

fn pcapng_frames(buf: &[u8]) -> Result<Vec<Stored>, CaptureError> {
    let (mut rest, mut parser) = PcapNgParser::new(buf).map_err(|e| malformed(buf, buf, "its section header".into(), e))?;
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let n = frames.len() + 1;
        let (next, block) = parser.next_block(rest).map_err(|e| malformed(buf, rest, format!("the block after frame {}", n - 1), e))?;
        match block {
            Block::InterfaceDescription(i) if i.linktype != DataLink::ETHERNET => {
                return Err(CaptureError::LinkType(format!("{:?}", i.linktype)));
            }
            Block::EnhancedPacket(p) => {
                let iface = parser.interfaces().get(p.interface_id as usize).ok_or_else(|| CaptureError::Malformed {
                    at: buf.len() - rest.len(),
                    what: format!("frame {n}"),
                    why: format!("interface {} was never described", p.interface_id),
                })?;
                let resol = iface
                    .options
                    .iter()
                    .find_map(|o| match o {
                        InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                        _ => None,
                    })
                    .unwrap_or(6);
                check_frame(n, p.data.len(), p.original_len)?;
                // The crate hands the raw timestamp units over as nanoseconds.
                let ts_ns = units_to_ns(p.timestamp.as_nanos() as u64, resol);
                frames.push(Stored { at: offset_in(buf, &p.data), len: p.data.len() as u32, ts_ns });
            }
            Block::SimplePacket(_) => return Err(CaptureError::Untimed { frame: n, block: "simple packet" }),
            Block::Packet(_) => return Err(CaptureError::Untimed { frame: n, block: "(obsolete) packet" }),
            _ => {}
        }
        rest = next;
    }
    Ok(frames)
}

/// pcapng's if_tsresol: units of 10^-r s, or 2^-r s with the top bit set.
fn units_to_ns(units: u64, resol: u8) -> u64 {
    let r = u32::from(resol & 0x7f);
    if resol & 0x80 != 0 {
        ((u128::from(units) * 1_000_000_000) >> r.min(127)) as u64
    } else if r <= 9 {
        units.saturating_mul(10u64.pow(9 - r))
    } else {
        units / 10u64.pow((r - 9).min(19))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::frame::tests::udp_frame;

    /// A little-endian microsecond pcap of `frames` at the given times (us).
    pub fn pcap(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&65535u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        for (us, f) in frames {
            b.extend_from_slice(&((us / 1_000_000) as u32).to_le_bytes());
            b.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
            b.extend_from_slice(&(f.len() as u32).to_le_bytes());
            b.extend_from_slice(&(f.len() as u32).to_le_bytes());
            b.extend_from_slice(f);
        }
        b
    }

    #[test]
    fn a_pcap_is_read_whole_with_its_times() {
        let frames = vec![(1_000_000, udp_frame(64, 1, 2)), (1_000_250, udp_frame(128, 3, 4)), (1_001_000, udp_frame(1518, 1, 2))];
        let c = Capture::parse(pcap(&frames)).unwrap();
        assert_eq!(c.format, Format::Pcap);
        assert_eq!(c.len(), 3);
        assert_eq!(c.frame(1), &frames[1].1[..]);
        assert_eq!((c.ts_ns(0), c.ts_ns(1)), (1_000_000_000, 1_000_250_000));
        assert_eq!(c.span_ns(), 1_000_000);
        assert_eq!(c.largest(), 1518);
        assert_eq!(c.frame_bytes(), 64 + 128 + 1518);
        assert_eq!(c.flows(), 2);
        assert_eq!(c.probe_room(), 3);
        assert_eq!(c.kinds()[&FlowKind::Ipv4Udp], 3);
        assert_eq!(c.out_of_order(), 0);
    }

    #[test]
    fn bad_files_are_refused_with_what_is_wrong() {
        let good = pcap(&[(0, udp_frame(64, 1, 2)), (10, udp_frame(64, 1, 2))]);
        let err = |b: Vec<u8>| Capture::parse(b).unwrap_err().to_string();
        assert_eq!(err(Vec::new()), "it is empty");
        assert_eq!(err(good[..24].to_vec()), "it holds no frames");
        assert!(err(good[..good.len() - 5].to_vec()).contains("truncated: frame 2 ends past"), "{}", err(good[..good.len() - 5].to_vec()));
        assert!(err(good[..30].to_vec()).contains("truncated: frame 1"));
        assert!(err(good[..10].to_vec()).contains("truncated: its file header"));
        assert!(err(b"hello, world".to_vec()).contains("not a pcap or pcapng file (it starts with 68656c6c)"));
        let mut raw_ip = good.clone();
        raw_ip[20] = 101;
        assert!(err(raw_ip).contains("only Ethernet captures"));
        // The second frame captured with 40 of its 60 bytes.
        let mut snapped = pcap(&[(0, udp_frame(64, 1, 2)), (10, udp_frame(64, 1, 2)[..40].to_vec())]);
        let at = snapped.len() - 40 - 4;
        snapped[at..at + 4].copy_from_slice(&60u32.to_le_bytes());
        assert!(err(snapped).contains("frame 2 was captured with 40 of its 60 bytes"));
        let runt = pcap(&[(0, vec![0u8; 10])]);
        assert!(err(runt).contains("frame 1 is 10 B"));
    }

    #[test]
    fn pcapng_resolutions() {
        assert_eq!(units_to_ns(1_500, 6), 1_500_000);
        assert_eq!(units_to_ns(7, 9), 7);
        assert_eq!(units_to_ns(10_000, 12), 10);
        // 2^-10 s units: 1024 of them are one second.
        assert_eq!(units_to_ns(1024, 0x80 | 10), 1_000_000_000);
    }

    #[test]
    fn a_pcapng_is_read_with_its_interface_resolution() {
        use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
        use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
        use pcap_file::pcapng::PcapNgWriter;
        let mut w = PcapNgWriter::new(Vec::new()).unwrap();
        let mut idb = InterfaceDescriptionBlock::new(DataLink::ETHERNET, 0);
        idb.options.push(InterfaceDescriptionOption::IfTsResol(9));
        w.write_pcapng_block(idb).unwrap();
        for (t, size) in [(5_000u64, 64), (5_777, 100)] {
            let f = udp_frame(size, 1, 2);
            let epb = EnhancedPacketBlock {
                interface_id: 0,
                timestamp: std::time::Duration::from_nanos(t),
                original_len: f.len() as u32,
                data: f.into(),
                options: vec![],
            };
            w.write_pcapng_block(epb).unwrap();
        }
        let c = Capture::parse(w.into_inner()).unwrap();
        assert_eq!(c.format, Format::PcapNg);
        assert_eq!((c.len(), c.span_ns()), (2, 777));
        assert_eq!(c.frame(1).len(), 96);
    }

    #[test]
    fn a_file_over_the_memory_limit_is_refused_before_it_is_read() {
        let dir = std::env::temp_dir().join(format!("capture-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.pcap");
        std::fs::write(&p, pcap(&[(0, udp_frame(1518, 1, 2))])).unwrap();
        assert!(matches!(Capture::read(&p, 100), Err(CaptureError::TooBig { limit: 100, .. })));
        let c = Capture::read(&p, 1 << 20).unwrap();
        assert_eq!(c.memory(), std::fs::metadata(&p).unwrap().len() + PER_FRAME_BYTES);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
