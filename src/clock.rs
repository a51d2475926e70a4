//! Wall-clock time from the cycle counter: an anchor (CLOCK_REALTIME read
//! beside the TSC) renewed every millisecond, and a multiply per burst. Probes carry this
//! time, so the sender can time round trips (its own clock at both ends)
//! and a receiver whose clock is synchronised with the sender's can time
//! one way.

use nix::time::{clock_gettime, ClockId};

/// This process's lane counter and the core clock its ticks become cycles
/// with (topology::CoreClock: on arm64 the counter is a platform timer, not
/// the core's clock). Read once, after the EAL started, from /sys (or
/// $BLASTDROP_SYSFS) and /proc/cpuinfo for CPU 0.
pub fn core() -> &'static topology::CoreClock {
    static CORE: std::sync::OnceLock<topology::CoreClock> = std::sync::OnceLock::new();
    CORE.get_or_init(|| {
        topology::CoreClock::detect(
            tsc_hz(),
            topology::TimerKind::of_this_build(),
            &topology::sysfs_root(),
            std::path::Path::new("/proc/cpuinfo"),
            0,
        )
    })
}

/// Ticks per second of the lanes' counter: DPDK's figure once its EAL
/// runs; without one (the socket paths, on x86, where DPDK calibrates at
/// EAL start) measured once against CLOCK_MONOTONIC_RAW over 50 ms.
pub fn tsc_hz() -> u64 {
    match dpdk::tsc_hz() {
        0 => {
            static MEASURED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
            *MEASURED.get_or_init(|| {
                let (t0, n0) = pair(ClockId::CLOCK_MONOTONIC_RAW);
                std::thread::sleep(std::time::Duration::from_millis(50));
                let (t1, n1) = pair(ClockId::CLOCK_MONOTONIC_RAW);
                (t1.wrapping_sub(t0) as f64 * 1e9 / n1.saturating_sub(n0).max(1) as f64) as u64
            })
        }
        hz => hz,
    }
}

/// CLOCK_REALTIME in nanoseconds, as of a TSC value. The anchor is
/// renewed every millisecond of cycles (a clock read then, nothing per
/// packet), so neither the TSC rate's error nor the wall clock's own
/// adjustments can build up: the time is within about a microsecond.
#[derive(Debug, Clone, Copy)]
pub struct WallClock {
    anchor_tsc: u64,
    anchor_ns: u64,
    ns_per_cycle: f64,
    renew_cycles: u64,
}

/// The clock in nanoseconds (0 if it cannot be read: the clocks used here,
/// MONOTONIC_RAW and REALTIME, always can). No allocation, and no syscall
/// where the vDSO serves the clock: a lane renews its anchor with it.
fn clock_ns(id: ClockId) -> u64 {
    clock_gettime(id).map_or(0, |t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
}

/// (TSC, clock) read closest together of a few tries.
fn pair(id: ClockId) -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..4 {
        let a = dpdk::rdtsc();
        let ns = clock_ns(id);
        let b = dpdk::rdtsc();
        if b.wrapping_sub(a) < best.0 {
            best = (b.wrapping_sub(a), a + b.wrapping_sub(a) / 2, ns);
        }
    }
    (best.1, best.2)
}

impl WallClock {
    /// Measures the TSC's rate against CLOCK_MONOTONIC_RAW over 10 ms
    /// (`tsc_hz` is DPDK's estimate, used only if that fails) and anchors.
    pub fn new(tsc_hz: u64) -> WallClock {
        let (t0, n0) = pair(ClockId::CLOCK_MONOTONIC_RAW);
        std::thread::sleep(std::time::Duration::from_millis(10));
        let (t1, n1) = pair(ClockId::CLOCK_MONOTONIC_RAW);
        let measured = (n1.saturating_sub(n0)) as f64 / t1.wrapping_sub(t0).max(1) as f64;
        let estimate = 1e9 / tsc_hz.max(1) as f64;
        // Trust the measurement unless it is absurd (a migrated thread, a broken clock).
        let ns_per_cycle = if (measured / estimate - 1.0).abs() < 0.01 { measured } else { estimate };
        let (anchor_tsc, anchor_ns) = pair(ClockId::CLOCK_REALTIME);
        WallClock { anchor_tsc, anchor_ns, ns_per_cycle, renew_cycles: (1e6 / ns_per_cycle) as u64 }
    }

    /// The wall-clock time of cycle counter value `tsc` (a recent one:
    /// the anchor moves forward to it when a millisecond has passed).
    #[inline(always)]
    pub fn ns(&mut self, tsc: u64) -> u64 {
        if tsc.wrapping_sub(self.anchor_tsc) > self.renew_cycles {
            (self.anchor_tsc, self.anchor_ns) = pair(ClockId::CLOCK_REALTIME);
        }
        self.at(tsc)
    }

    /// A fresh anchor as of `tsc`: (TSC, its wall-clock ns, ns per tick),
    /// for a loop that converts on its own (blast's C lanes).
    pub fn anchor(&mut self, tsc: u64) -> (u64, u64, f64) {
        let ns = self.ns(tsc);
        (tsc, ns, self.ns_per_cycle)
    }

    /// The wall-clock time of `tsc` from the current anchor, without renewing it.
    #[inline(always)]
    pub fn at(&self, tsc: u64) -> u64 {
        let d = tsc.wrapping_sub(self.anchor_tsc) as i64 as f64 * self.ns_per_cycle;
        (self.anchor_ns as i64 + d as i64) as u64
    }
}

pub use records::environment::ClockSync;

/// What the kernel says now (adjtimex, read only), or None when it will not
/// say. Through libc: nix has no adjtimex.
pub fn clock_sync() -> Option<ClockSync> {
    // SAFETY: timex is plain integers, for which all zeroes is a valid value.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: adjtimex with modes 0 only reads the kernel's state into the struct we own.
    let state = unsafe { libc::adjtimex(&mut t) };
    if state < 0 {
        return None;
    }
    Some(ClockSync { synchronized: state != libc::TIME_ERROR && t.status & libc::STA_UNSYNC == 0, max_error_us: t.maxerror as i64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_follows_the_counter() {
        let c = WallClock { anchor_tsc: 1_000, anchor_ns: 5_000_000_000, ns_per_cycle: 0.5, renew_cycles: u64::MAX };
        assert_eq!(c.at(1_000), 5_000_000_000);
        assert_eq!(c.at(3_000), 5_000_001_000);
        assert_eq!(c.at(0), 4_999_999_500, "before the anchor");
    }
}
