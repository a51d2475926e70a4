//! Which clock a latency figure was read on, and how a NIC's receive
//! timestamps become this host's wall-clock time.
//!
//! A one-way figure is "arrival minus the sender's stamp". The arrival can
//! be read on this host's clock when the poll takes the frame (the time it
//! waited in the RX ring included), or taken from the device's own receive
//! timestamp (the Rx timestamp offload: an mbuf dynamic field). The
//! kernel's timestamp (net_af_packet) is already CLOCK_REALTIME; a device's
//! clock (net_ena's PHC, mlx5's) has its own epoch and rate, so
//! [`NicTimeMap`] maps it onto CLOCK_REALTIME from the polls themselves.

use serde::{Deserialize, Serialize};

/// The clock a latency figure's two ends were read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LatencyClock {
    /// Round trip: both stamps from the sender's own cycle counter, so no
    /// clock needs to agree with another.
    SenderRoundTrip,
    /// One way: this host's CLOCK_REALTIME read at the poll that took the
    /// frame, against the sender's CLOCK_REALTIME. Includes the time the
    /// frame waited in the RX ring.
    HostPoll,
    /// One way: the kernel's receive timestamp (CLOCK_REALTIME, net_af_packet's
    /// Rx timestamp offload), against the sender's CLOCK_REALTIME.
    NicKernel,
    /// One way: the device's receive timestamp (the Rx timestamp offload,
    /// its own clock), mapped onto this host's CLOCK_REALTIME by
    /// [`NicTimeMap`], against the sender's CLOCK_REALTIME.
    NicDevice,
}

impl LatencyClock {
    /// What the clock is, for a line a person reads.
    pub fn describe(self) -> &'static str {
        match self {
            LatencyClock::SenderRoundTrip => "round trip on the sender's own clock",
            LatencyClock::HostPoll => "arrival read on this host's CLOCK_REALTIME at the poll (RX ring wait included)",
            LatencyClock::NicKernel => "arrival from the kernel's receive timestamp (CLOCK_REALTIME)",
            LatencyClock::NicDevice => {
                "arrival from the NIC's receive timestamp, mapped onto this host's CLOCK_REALTIME by polls that drained the ring"
            }
        }
    }

    /// Whether the arrival comes from the NIC's receive timestamp.
    pub fn is_nic(self) -> bool {
        matches!(self, LatencyClock::NicKernel | LatencyClock::NicDevice)
    }

    /// Whether the figure compares two hosts' wall clocks.
    pub fn one_way(self) -> bool {
        self != LatencyClock::SenderRoundTrip
    }
}

/// How a driver's receive timestamps read, when it offers the offload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NicTimescale {
    /// Nanoseconds of CLOCK_REALTIME: no mapping needed.
    Realtime,
    /// Nanoseconds (or ticks) of the device's own clock: mapped.
    Device,
}

/// The timescale of `driver`'s Rx timestamps. net_af_packet stamps with the
/// kernel's receive time (TPACKET_V2's tp_sec/tp_nsec, CLOCK_REALTIME);
/// every other driver with its device's clock, whose epoch nothing here
/// can vouch for.
pub fn nic_timescale(driver: &str) -> NicTimescale {
    if driver == "net_af_packet" {
        NicTimescale::Realtime
    } else {
        NicTimescale::Device
    }
}

/// What the user asked for (--arrival-clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArrivalClockChoice {
    /// The NIC's where every port offers it, else this host's, saying why.
    #[default]
    Auto,
    Nic,
    Host,
}

/// A port as the choice sees it.
#[derive(Debug, Clone)]
pub struct PortTimestamps<'a> {
    pub name: &'a str,
    pub driver: &'a str,
    /// The device offers the Rx timestamp offload.
    pub offered: bool,
    /// How its stamps read ([`nic_timescale`] of its driver, as a rule).
    pub scale: NicTimescale,
}

/// The arrival clock a run uses, and why not the NIC's when it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrivalClock {
    pub clock: LatencyClock,
    /// Auto fell back to the host: the ports that offer no Rx timestamp.
    pub fallback: Option<String>,
}

/// --arrival-clock nic on a port that cannot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--arrival-clock nic: {ports} offer(s) no Rx timestamp offload: give --arrival-clock host (or auto, which says so in the record)")]
pub struct NoNicTimestamps {
    pub ports: String,
}

/// Chooses the arrival clock for a run over `ports`.
pub fn choose(asked: ArrivalClockChoice, ports: &[PortTimestamps]) -> Result<ArrivalClock, NoNicTimestamps> {
    let lacking: Vec<String> = ports.iter().filter(|p| !p.offered).map(|p| format!("{} ({})", p.name, p.driver)).collect();
    let nic = if ports.iter().all(|p| p.scale == NicTimescale::Realtime) { LatencyClock::NicKernel } else { LatencyClock::NicDevice };
    match asked {
        ArrivalClockChoice::Host => Ok(ArrivalClock { clock: LatencyClock::HostPoll, fallback: None }),
        ArrivalClockChoice::Nic if lacking.is_empty() => Ok(ArrivalClock { clock: nic, fallback: None }),
        ArrivalClockChoice::Nic => Err(NoNicTimestamps { ports: lacking.join(", ") }),
        ArrivalClockChoice::Auto if lacking.is_empty() => Ok(ArrivalClock { clock: nic, fallback: None }),
        ArrivalClockChoice::Auto => Ok(ArrivalClock {
            clock: LatencyClock::HostPoll,
            fallback: Some(format!(
                "{} offer(s) no Rx timestamp offload: arrivals read on this host's clock at the poll",
                lacking.join(", ")
            )),
        }),
    }
}

/// The most the two clocks' rates may differ before the mapping distrusts
/// its slope (and holds the offset): 500 ppm, far beyond any oscillator
/// (tens of ppm), so only a clock that was stepped gets there.
const MAX_SLOPE: f64 = 500e-6;

/// Maps a NIC's receive timestamps onto this host's CLOCK_REALTIME.
///
/// A poll that came back short emptied the ring, so its newest frame was
/// stamped at most one poll earlier than the poll read the host's clock:
/// `host - nic` there is the clocks' offset plus at most one poll's time.
/// The least such sample in each calibration window (of device time) is
/// that window's offset; the last two windows give the offset and the
/// rate difference (a line through both), extrapolated until the next
/// window closes. Until the first window closes nothing is mapped: those
/// probes are counted untimed, not timed on a guess.
#[derive(Debug, Clone)]
pub struct NicTimeMap {
    scale: NicTimescale,
    window_ns: u64,
    /// The window being filled: where it ends (device time) and its least
    /// sample (device time, offset).
    window_end: u64,
    least: Option<(u64, i128)>,
    /// The last two windows' least samples, older first.
    points: [Option<(u64, i128)>; 2],
    windows: u64,
}

impl NicTimeMap {
    /// The kernel's timestamps: already CLOCK_REALTIME.
    pub fn realtime() -> NicTimeMap {
        NicTimeMap { scale: NicTimescale::Realtime, window_ns: 0, window_end: 0, least: None, points: [None, None], windows: 0 }
    }

    /// A device clock, calibrated over windows of `window_ns` of its time.
    pub fn device(window_ns: u64) -> NicTimeMap {
        NicTimeMap { scale: NicTimescale::Device, window_ns: window_ns.max(1), ..NicTimeMap::realtime() }
    }

    pub fn for_timescale(scale: NicTimescale, window_ns: u64) -> NicTimeMap {
        match scale {
            NicTimescale::Realtime => NicTimeMap::realtime(),
            NicTimescale::Device => NicTimeMap::device(window_ns),
        }
    }

    /// Calibration windows closed so far (0 for the kernel's clock, which needs none).
    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// A poll that came back short (the ring drained) read the host's
    /// clock at `host_ns`; the newest frame it took was stamped `nic_ns`.
    #[inline]
    pub fn drained_poll(&mut self, nic_ns: u64, host_ns: u64) {
        if self.scale == NicTimescale::Realtime {
            return;
        }
        let offset = i128::from(host_ns) - i128::from(nic_ns);
        match self.least {
            None => {
                self.least = Some((nic_ns, offset));
                self.window_end = nic_ns.saturating_add(self.window_ns);
            }
            Some(_) if nic_ns >= self.window_end => {
                self.points = [self.points[1], self.least];
                self.windows += 1;
                self.least = Some((nic_ns, offset));
                self.window_end = nic_ns.saturating_add(self.window_ns);
            }
            Some((_, least)) if offset < least => self.least = Some((nic_ns, offset)),
            Some(_) => {}
        }
    }

    /// The host's CLOCK_REALTIME for device timestamp `nic_ns`; None
    /// before the first calibration window closed.
    #[inline]
    pub fn host_ns(&self, nic_ns: u64) -> Option<u64> {
        if self.scale == NicTimescale::Realtime {
            return Some(nic_ns);
        }
        let offset = match self.points {
            [_, None] => return None,
            [None, Some((_, off))] => off,
            [Some((n0, o0)), Some((n1, o1))] => {
                let slope = if n1 > n0 { (o1 - o0) as f64 / (n1 - n0) as f64 } else { 0.0 };
                if slope.abs() > MAX_SLOPE {
                    o1
                } else {
                    o1 + (slope * (i128::from(nic_ns) - i128::from(n1)) as f64) as i128
                }
            }
        };
        u64::try_from(i128::from(nic_ns) + offset).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port<'a>(name: &'a str, driver: &'a str, offered: bool) -> PortTimestamps<'a> {
        PortTimestamps { name, driver, offered, scale: nic_timescale(driver) }
    }

    #[test]
    fn auto_takes_the_nic_where_every_port_offers_it() {
        let afp = [port("net_af_packet0", "net_af_packet", true)];
        assert_eq!(choose(ArrivalClockChoice::Auto, &afp).unwrap(), ArrivalClock { clock: LatencyClock::NicKernel, fallback: None });
        let ena = [port("0000:00:06.0", "net_ena", true), port("0000:00:07.0", "net_ena", true)];
        assert_eq!(choose(ArrivalClockChoice::Nic, &ena).unwrap().clock, LatencyClock::NicDevice);
        // A mix is only as good as its device clock.
        let mixed = [port("a", "net_af_packet", true), port("b", "net_ena", true)];
        assert_eq!(choose(ArrivalClockChoice::Auto, &mixed).unwrap().clock, LatencyClock::NicDevice);
    }

    #[test]
    fn auto_falls_back_and_says_which_port_lacks_it() {
        let ports = [port("net_memif0", "net_memif", false), port("x", "net_af_packet", true)];
        let c = choose(ArrivalClockChoice::Auto, &ports).unwrap();
        assert_eq!(c.clock, LatencyClock::HostPoll);
        let why = c.fallback.unwrap();
        assert!(why.contains("net_memif0 (net_memif)") && !why.contains("x (net_af_packet)"), "{why}");
        let e = choose(ArrivalClockChoice::Nic, &ports).unwrap_err();
        assert!(e.to_string().contains("net_memif0 (net_memif)") && e.to_string().contains("--arrival-clock host"), "{e}");
        assert_eq!(choose(ArrivalClockChoice::Host, &ports).unwrap(), ArrivalClock { clock: LatencyClock::HostPoll, fallback: None });
    }

    #[test]
    fn the_kernels_clock_maps_to_itself() {
        let mut m = NicTimeMap::for_timescale(nic_timescale("net_af_packet"), 10_000_000);
        assert_eq!(m.host_ns(1_700_000_000_123_456_789), Some(1_700_000_000_123_456_789));
        m.drained_poll(5, 100);
        assert_eq!(m.host_ns(5), Some(5));
        assert_eq!(m.windows(), 0);
    }

    /// A device clock `offset` ns behind the host's, running `ppm` fast,
    /// sampled by polls each `dwell(i)` ns after the newest stamp.
    fn calibrate(
        map: &mut NicTimeMap,
        polls: u64,
        every_ns: u64,
        offset: i64,
        ppm: f64,
        dwell: impl Fn(u64) -> u64,
    ) -> impl Fn(u64) -> u64 {
        let host_of = move |nic: u64| -> u64 { ((nic as i64 + offset) as f64 - (nic as f64 * ppm * 1e-6)) as u64 };
        for i in 0..polls {
            let nic = 1_000_000 + i * every_ns;
            map.drained_poll(nic, host_of(nic) + dwell(i));
        }
        host_of
    }

    #[test]
    fn nothing_is_mapped_before_a_window_closed() {
        let mut m = NicTimeMap::device(10_000_000);
        assert_eq!(m.host_ns(1), None);
        let _ = calibrate(&mut m, 9, 1_000_000, 5_000, 0.0, |_| 300);
        assert_eq!(m.host_ns(5_000_000), None, "9 ms of a 10 ms window: not yet");
        m.drained_poll(11_000_001, 11_005_300);
        assert_eq!(m.windows(), 1);
        assert_eq!(m.host_ns(5_000_000), Some(5_005_300), "the window's least offset");
    }

    #[test]
    fn the_least_dwell_sets_the_offset() {
        let mut m = NicTimeMap::device(10_000_000);
        // Polls mostly 2-5 us after the stamp, one of them 100 ns after.
        let host_of = calibrate(&mut m, 100, 250_000, 1_000_000_000, 0.0, |i| if i % 17 == 3 { 100 } else { 2_000 + (i % 5) * 700 });
        let nic = 30_000_000;
        let err = m.host_ns(nic).unwrap() as i64 - host_of(nic) as i64;
        assert_eq!(err, 100, "off by the least dwell, not the typical one");
    }

    #[test]
    fn two_windows_follow_a_rate_difference() {
        let mut m = NicTimeMap::device(10_000_000);
        // 20 ppm apart: over a second that is 20 us, far beyond the dwell.
        let host_of = calibrate(&mut m, 1_000, 1_000_000, 3_000_000_000, 20.0, |_| 50);
        assert!(m.windows() >= 90);
        for nic in [999_000_000u64, 1_005_000_000] {
            let err = m.host_ns(nic).unwrap() as i64 - host_of(nic) as i64;
            assert!((40..=60).contains(&err), "extrapolated along the rate: {err} ns at {nic}");
        }
        // Without the slope the error would be the drift since the last window.
        let far = 1_200_000_000u64;
        let err = m.host_ns(far).unwrap() as i64 - host_of(far) as i64;
        assert!((40..=60).contains(&err), "still on the line 200 ms on: {err}");
    }

    #[test]
    fn a_stepped_clock_is_not_a_rate() {
        let mut m = NicTimeMap::device(1_000);
        m.drained_poll(0, 10_000);
        m.drained_poll(1_000, 11_000);
        // The device clock steps back by a millisecond.
        m.drained_poll(2_000, 1_012_000);
        m.drained_poll(3_000, 1_013_000);
        assert_eq!(m.windows(), 3);
        // 1 ms over 1 us would be a slope of 1000: held at the newest offset.
        assert_eq!(m.host_ns(3_000), Some(3_000 + 1_010_000));
    }

    #[test]
    fn an_epoch_far_from_the_hosts_maps_without_overflow() {
        // A device counting from its boot while the host counts from 1970.
        let mut m = NicTimeMap::device(1_000_000);
        let host0 = 1_790_000_000_000_000_000u64;
        for i in 0..3u64 {
            m.drained_poll(5_000 + i * 1_000_000, host0 + i * 1_000_000 + 80);
        }
        assert_eq!(m.host_ns(2_005_000), Some(host0 + 2_000_080));
        // And one whose clock is ahead: a time before 1970 is no time.
        let mut m = NicTimeMap::device(1);
        m.drained_poll(u64::MAX - 10, 5);
        m.drained_poll(u64::MAX - 5, 10);
        assert_eq!(m.host_ns(0), None);
    }

    #[test]
    fn clocks_say_what_they_are() {
        assert!(!LatencyClock::SenderRoundTrip.one_way());
        assert!(LatencyClock::NicDevice.one_way());
        assert!(LatencyClock::HostPoll.describe().contains("RX ring"));
        let json = serde_json::to_string(&LatencyClock::NicKernel).unwrap();
        assert_eq!(json, "\"nic_kernel\"");
    }
}
