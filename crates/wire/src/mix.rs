//! Frame size mixes: several frame sizes in a fixed proportion, sent as a
//! repeating cycle so the mix is exact over every whole cycle, with no
//! random number per frame.
//!
//! Sizes include the FCS, as everywhere in this crate.

use crate::MIN_FRAME;

/// The simple IMIX: 7 frames of 64 B, 4 of 594 B, 1 of 1518 B in every 12.
/// These are the Ethernet frames (FCS included) that carry IPv4 packets of
/// 40 (padded to the 64 B minimum), 576 and 1500 bytes, the classic 7:4:1
/// mix of small, medium and large. Mean: 4342 / 12 = 361.83 B per frame.
pub const SIMPLE_IMIX: [(u32, u32); 3] = [(64, 7), (594, 4), (1518, 1)];

/// The most frames in one cycle of a mix (the weights' sum).
pub const MAX_CYCLE: u32 = 4096;

/// Why a size mix was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    #[error(
        "{0:?} is not a size mix: write SIZE:WEIGHT pairs like 64:7,594:4,1518:1 (sizes in bytes with the FCS, weights whole numbers)"
    )]
    NotAMix(String),
    #[error("{size} B in the size mix is below the Ethernet minimum of 64 bytes (FCS included)")]
    BelowMinimum { size: u32 },
    #[error("{size} B appears twice in the size mix: give each size once, with its whole weight")]
    Repeats { size: u32 },
    #[error("the size mix's weights add up to {sum} frames per cycle: at most {MAX_CYCLE}")]
    CycleTooLong { sum: u64 },
    #[error("a weight of 0 in the size mix sends no frame of {size} B: leave that size out")]
    ZeroWeight { size: u32 },
}

/// Frame sizes and how many of each in one cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeMix {
    /// (size in bytes with the FCS, frames of it per cycle), as given.
    parts: Vec<(u32, u32)>,
    /// "imix" for the simple IMIX, else None (the parts spell it).
    name: Option<&'static str>,
}

impl SizeMix {
    /// The simple IMIX ([`SIMPLE_IMIX`]).
    pub fn imix() -> SizeMix {
        SizeMix { parts: SIMPLE_IMIX.to_vec(), name: Some("imix") }
    }

    /// "imix", or SIZE:WEIGHT pairs: "64:7,576:4,1500:1".
    pub fn parse(s: &str) -> Result<SizeMix, MixError> {
        if s.trim() == "imix" {
            return Ok(SizeMix::imix());
        }
        let mut parts: Vec<(u32, u32)> = Vec::new();
        for part in s.split(',') {
            let not_a_mix = || MixError::NotAMix(s.to_string());
            let (size, weight) = part.trim().split_once(':').ok_or_else(not_a_mix)?;
            let size: u32 = size.trim().parse().map_err(|_| not_a_mix())?;
            let weight: u32 = weight.trim().parse().map_err(|_| not_a_mix())?;
            if (size as usize) < MIN_FRAME {
                return Err(MixError::BelowMinimum { size });
            }
            if weight == 0 {
                return Err(MixError::ZeroWeight { size });
            }
            if parts.iter().any(|&(s, _)| s == size) {
                return Err(MixError::Repeats { size });
            }
            parts.push((size, weight));
        }
        let sum: u64 = parts.iter().map(|&(_, w)| u64::from(w)).sum();
        if sum > u64::from(MAX_CYCLE) {
            return Err(MixError::CycleTooLong { sum });
        }
        Ok(SizeMix { parts, name: None })
    }

    /// (size, frames per cycle), as given.
    pub fn parts(&self) -> &[(u32, u32)] {
        &self.parts
    }

    /// Frames in one cycle.
    pub fn cycle_len(&self) -> u32 {
        self.parts.iter().map(|&(_, w)| w).sum()
    }

    /// Bytes (FCS included) in one cycle.
    pub fn cycle_bytes(&self) -> u64 {
        self.parts.iter().map(|&(s, w)| u64::from(s) * u64::from(w)).sum()
    }

    /// The mean frame size over a cycle, in bytes with the FCS.
    pub fn mean_size(&self) -> f64 {
        self.cycle_bytes() as f64 / f64::from(self.cycle_len())
    }

    pub fn max_size(&self) -> u32 {
        self.parts.iter().map(|&(s, _)| s).max().unwrap_or(MIN_FRAME as u32)
    }

    pub fn min_size(&self) -> u32 {
        self.parts.iter().map(|&(s, _)| s).min().unwrap_or(MIN_FRAME as u32)
    }

    /// How it is written: "imix", or the pairs.
    pub fn label(&self) -> String {
        match self.name {
            Some(n) => n.to_string(),
            None => self.parts.iter().map(|(s, w)| format!("{s}:{w}")).collect::<Vec<_>>().join(","),
        }
    }

    /// One cycle's frame sizes in sending order: every size as many times
    /// as its weight, spread evenly through the cycle (smooth weighted
    /// round robin: at each slot the size furthest behind its share goes),
    /// so no stretch of the cycle is all small or all large frames.
    pub fn cycle(&self) -> Vec<u32> {
        let total = i64::from(self.cycle_len());
        let mut credit: Vec<i64> = vec![0; self.parts.len()];
        let mut out = Vec::with_capacity(total as usize);
        for _ in 0..total {
            for (c, &(_, w)) in credit.iter_mut().zip(&self.parts) {
                *c += i64::from(w);
            }
            // The first of the largest credits: ties go to the size given first.
            let (pick, _) = credit.iter().enumerate().fold((0, i64::MIN), |best, (i, &c)| if c > best.1 { (i, c) } else { best });
            credit[pick] -= total;
            out.push(self.parts[pick].0);
        }
        out
    }
}

impl std::fmt::Display for SizeMix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simple_imix_is_7_4_1_of_64_594_1518() {
        let m = SizeMix::parse("imix").unwrap();
        assert_eq!(m.label(), "imix");
        assert_eq!(m.parts(), &[(64, 7), (594, 4), (1518, 1)]);
        assert_eq!((m.cycle_len(), m.cycle_bytes()), (12, 4342));
        assert!((m.mean_size() - 361.833).abs() < 1e-3);
        assert_eq!((m.min_size(), m.max_size()), (64, 1518));
    }

    #[test]
    fn a_cycle_holds_each_size_its_weight_spread_out() {
        let m = SizeMix::imix();
        let c = m.cycle();
        assert_eq!(c.len(), 12);
        for &(size, weight) in m.parts() {
            assert_eq!(c.iter().filter(|&&s| s == size).count() as u32, weight, "{size} in {c:?}");
        }
        // Spread out: the four 594 B frames never two in a row.
        let longest_594_run = c.split(|&s| s != 594).map(|r| r.len()).max().unwrap();
        assert_eq!(longest_594_run, 1, "{c:?}");
        assert_eq!(c, [64, 594, 64, 64, 594, 64, 1518, 64, 594, 64, 594, 64]);
        // The same mix, the same order, every time.
        assert_eq!(m.cycle(), c);
    }

    #[test]
    fn pairs_parse_and_bad_ones_say_why() {
        let m = SizeMix::parse("64:7, 576:4,1500:1").unwrap();
        assert_eq!(m.label(), "64:7,576:4,1500:1");
        assert_eq!(m.cycle().len(), 12);
        assert_eq!(SizeMix::parse("128:1").unwrap().cycle(), [128]);
        assert!(SizeMix::parse("64").unwrap_err().to_string().contains("SIZE:WEIGHT"));
        assert!(SizeMix::parse("64:x").unwrap_err().to_string().contains("SIZE:WEIGHT"));
        assert!(SizeMix::parse("60:1").unwrap_err().to_string().contains("Ethernet minimum"));
        assert!(SizeMix::parse("64:1,64:2").unwrap_err().to_string().contains("twice"));
        assert!(SizeMix::parse("64:0").unwrap_err().to_string().contains("weight of 0"));
        assert!(SizeMix::parse("64:4000,128:200").unwrap_err().to_string().contains("at most 4096"));
    }
}
