//! The receiver as drop sets it up: its configuration from the flags,
//! the start-up lines, and drop as blast's hello answer describes it.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::fail::Failure;
use blastdrop::environment;
use blastdrop::receiver::Receiver;
use control::PeerInfo;

use crate::settings::Settings;

/// drop as blast's hello answer describes it.
pub fn peer_info(receiver: &Receiver, settings: &Settings) -> PeerInfo {
    let cfg = &settings.receiver;
    let info = receiver.info();
    let nports = receiver.sides().len() as u16;
    let names: Vec<String> = receiver.sides().iter().map(|s| s.info.name.clone()).collect();
    PeerInfo {
        hostname: environment::hostname(),
        dpdk: dpdk::runtime_version(),
        port_name: names.join("+"),
        driver: info.driver.clone(),
        // A queue count is possible while each port's share fits that port.
        max_rx_queues: (1..=cfg.max_queues)
            .take_while(|&q| {
                receiver.sides().iter().enumerate().all(|(p, s)| layout::Spread::new(q, nports).queues_on(p as u16) <= s.info.max_rx_queues)
            })
            .last()
            .unwrap_or(1),
        ports: nports,
        worker_lcores: cfg.max_queues,
        max_size: cfg.max_size,
        rss: info.rss_offloads != 0,
        cpu_model: environment::cpu_model(),
        reflect: cfg.reflect,
        udp_socket: None,
    }
}

/// drop's control port while the receiver starts: a client that connects
/// is told what drop is doing (`control::answer_while_starting`), e.g. the
/// device call it waits on, instead of hearing nothing. Ends when dropped
/// (the server, or the exit, takes the port from there).
pub struct StartingAnswer {
    ready: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StartingAnswer {
    pub fn begin(listener: &TcpListener) -> Result<StartingAnswer, Failure> {
        let listener = listener.try_clone().map_err(|e| Failure::runtime(format!("cannot share the control port while starting: {e}")))?;
        let ready = Arc::new(AtomicBool::new(false));
        let done = ready.clone();
        let thread = std::thread::Builder::new()
            .name("bd-starting".into())
            .spawn(move || {
                let _ = control::answer_while_starting(listener, doing, &done, blastdrop::signals::stop_flag());
            })
            .map_err(|e| Failure::runtime(format!("cannot start the control port's thread: {e}")))?;
        Ok(StartingAnswer { ready, thread: Some(thread) })
    }
}

impl Drop for StartingAnswer {
    fn drop(&mut self) {
        self.ready.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What drop is doing while it starts: the device call it waits on, if any.
fn doing() -> String {
    match dpdk::deadline::in_flight() {
        Some(call) => call.describe(),
        None => "setting up the EAL, its ports and memory".into(),
    }
}

/// The start-up lines: ports, queues, what is measured.
pub fn announce(receiver: &Receiver, settings: &Settings, first: u16) {
    let cfg = &settings.receiver;
    let configured = receiver.port().configured().cloned().unwrap_or_default();
    if cfg.max_queues > 1 && !configured.rss {
        tracing::warn!(
            "{} has no RSS: each RX queue gets only what its peer queue sends (memif pairs queues one to one)",
            receiver.info().driver
        );
    }
    for side in receiver.sides() {
        if let Some(state) = &side.ena {
            blastdrop::say!("drop: {}: {}", side.info.name, state.describe());
        }
    }
    let nports = receiver.sides().len();
    let described: Vec<String> = receiver.sides().iter().map(|s| format!("{} ({}, {})", s.port.id(), s.info.name, s.info.driver)).collect();
    blastdrop::say!(
        "drop: port{} {}, {} queue(s), frames up to {} B, link {}{}{}; receiver-side figures",
        if nports > 1 { "s" } else { "" },
        described.join(" + "),
        first,
        cfg.max_size,
        if receiver.links_up() { "up" } else { "down (waiting for the peer)" },
        if cfg.count_only { ", counting only (no probe parsing: no loss or reorder figures)" } else { "" },
        match &settings.listen {
            Some(a) => format!(", control on {a} (up to {} queues)", cfg.max_queues),
            None => String::new(),
        }
    );
}
