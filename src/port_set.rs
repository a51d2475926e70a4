//! The ports of one tool, opened the same way for the sender and the
//! receiver: each opened by its spec, checked against the device's limits
//! for the most queues it will carry, its watched counters resolved and its
//! ENA state read. What differs (pools, addresses, promiscuity) stays with
//! each tool.

use dpdk::{DeviceInfo, Port, PortConfig};
use layout::Spread;

use crate::fail::Failure;
use crate::report::EnaTxState;
use crate::session;
use crate::xstats::Watch;

/// One port as opened, before the tool adds its own parts.
pub struct OpenedPort {
    pub port: Port,
    pub info: DeviceInfo,
    pub watch: Watch,
    /// net_ena only: LLQ and write-combining, as found when the port opened.
    pub ena: Option<EnaTxState>,
}

/// Opens every port of `specs` for up to `max_queues` queues spread over
/// them; `config(n)` is the configuration a port with `n` queues gets, and
/// `size_flag` the flag that sets the frame size (named when a frame is too
/// large for a device).
pub fn open_ports(
    specs: &[String],
    max_queues: u16,
    watch_xstats: &[String],
    config: impl Fn(u16) -> PortConfig,
    size_flag: &str,
) -> Result<Vec<OpenedPort>, Failure> {
    let spread = Spread::new(max_queues, specs.len() as u16);
    let mut opened = Vec::new();
    for (p, spec) in specs.iter().enumerate() {
        let port = session::open_port(spec)?;
        port.check(&config(spread.queues_on(p as u16))).map_err(|e| session::limit_failure(e, size_flag))?;
        let info = port.info().clone();
        let watch = Watch::new(&port, watch_xstats)?;
        let ena = EnaTxState::read(&port);
        opened.push(OpenedPort { port, info, watch, ena });
    }
    Ok(opened)
}
