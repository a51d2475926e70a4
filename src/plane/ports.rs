//! The ports of one tool, opened and (re)configured the same way for the
//! sender and the receiver: each opened by its spec, checked against the
//! device's limits for the most queues it will carry, its watched counters
//! resolved and its ENA state read; then configured for a step's share of
//! the queues and started. What differs (pools, addresses, promiscuity,
//! waiting for links) stays with each tool.

use std::ops::DerefMut;
use std::time::Duration;

use dpdk::{DeviceInfo, Mempool, Port, PortConfig};
use layout::Spread;

use super::lanes::QueueHome;
use crate::environment_record::{ena_tx_state, EnaTxState};
use crate::error::Error;
use crate::session;
use crate::xstats::Watch;

/// One port as both tools hold it; each tool's side adds its own parts
/// and derefs to this.
pub struct PlanePort {
    pub port: Port,
    pub info: DeviceInfo,
    /// Allowance counters on ENA, and the --watch-xstat names.
    pub watch: Watch,
    /// net_ena only: LLQ and write-combining, as found when the port opened.
    pub ena: Option<EnaTxState>,
}

/// Opens every port of `specs` for up to `max_queues` queues spread over
/// them; `config(n)` is the configuration a port with `n` queues gets;
/// `size_from_capture`: the largest frame is a capture's (said when a frame
/// is too large for a device, [`Error::Limit`]).
pub fn open_ports(
    specs: &[String],
    max_queues: u16,
    watch_xstats: &[String],
    config: impl Fn(u16) -> PortConfig,
    size_from_capture: bool,
) -> Result<Vec<PlanePort>, Error> {
    let spread = Spread::new(max_queues, specs.len() as u16);
    let mut opened = Vec::new();
    for (p, spec) in specs.iter().enumerate() {
        let port = session::open_port(spec)?;
        port.check(&config(spread.queues_on(p as u16))).map_err(|e| Error::limit(e, size_from_capture))?;
        let info = port.info().clone();
        let watch = Watch::new(&port, watch_xstats)?;
        let ena = ena_tx_state(&port);
        opened.push(PlanePort { port, info, watch, ena });
    }
    Ok(opened)
}

/// Stops every port, configures it for its share of `queues` (at least
/// one: a port cannot have none, and a share of 0 gets a queue no lane
/// uses), starts it and resolves its watched counters again (per-queue
/// stats ahead of them shift with the queue count). `config(n)` is a
/// port's configuration for `n` queues, `rx_pool(p, local)` the pool of
/// port `p`'s RX queue `local`; `poll_from_now`: start polling the watched
/// counters at this interval (the first configuration). Returns the queue
/// handles, by global queue id.
pub fn configure<'p, S: DerefMut<Target = PlanePort>>(
    sides: &mut [S],
    queues: u16,
    config: impl Fn(u16) -> PortConfig,
    rx_pool: impl Fn(u16, u16) -> &'p Mempool,
    size_from_capture: bool,
    poll_from_now: Option<Duration>,
) -> Result<QueueHome, Error> {
    let spread = Spread::new(queues, sides.len() as u16);
    let mut per_port = Vec::with_capacity(sides.len());
    for (p, side) in sides.iter_mut().enumerate() {
        let side: &mut PlanePort = side;
        let p = p as u16;
        side.port.stop()?;
        let n = spread.queues_on(p).max(1);
        let pools: Vec<&Mempool> = (0..n).map(|local| rx_pool(p, local)).collect();
        let handles = side.port.configure(&config(n), &pools).map_err(|e| Error::limit(e, size_from_capture))?;
        side.port.start().map_err(|e| session::start_failure(&side.port, e))?;
        side.watch.resolve(&side.port)?;
        if let Some(every) = poll_from_now {
            side.watch.start_polling(every);
        }
        per_port.push(handles);
    }
    Ok(QueueHome::by_global_queue(spread, per_port))
}

/// The allowance counters that moved lately on any port, for a live line.
pub fn watch_text<S: std::ops::Deref<Target = PlanePort>>(sides: &[S]) -> Option<String> {
    let watches: Vec<(&str, &Watch)> = sides.iter().map(|s| (s.info.name.as_str(), &s.watch)).collect();
    crate::xstats::live_text_of(&watches)
}
