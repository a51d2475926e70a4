//! The NIC counters a verdict needs, read off the data path.
//!
//! Counter ids are resolved by name once per port configuration (per-queue
//! stats ahead of them shift with the queue count), then read with one
//! `rte_eth_xstats_get_by_id` call: on ENA every read is an admin command
//! to the device, so a thread polls about once a second for the live view,
//! and a window's edges take one read each. A sample where a counter went
//! backwards or jumped beyond any NIC's rate is not believed, and a window
//! that saw one says so instead of reporting a verdict.
//!
//! A port on net_af_xdp or net_af_packet sits on a kernel interface, and
//! its PMD passes none of the interface's driver counters on: there the
//! counters are the kernel driver's own statistics (what `ethtool -S`
//! prints, read by the ethtool ioctl: crate nicstats), on ENA the same
//! allowance counters under the same names.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use dpdk::Port;
use limits::{CounterKind, CounterSpec, ReadPath, SampleCheck, XstatsByKind};

use crate::error::Error;

/// Where a port's counters are read.
#[derive(Debug, Default)]
enum Source {
    /// The DPDK port's extended stats.
    #[default]
    Port,
    /// The kernel driver's statistics of the interface under the port;
    /// `listed`: how many the driver listed when the names were resolved
    /// (a read that finds another count is not believed).
    Kernel { interface: nicstats::Interface, driver: String, listed: usize },
}

impl Source {
    /// The kernel interface under `port` when its PMD is one that sits on
    /// one (and the PMD says which: dev_info's if_index), else the port's
    /// own stats. An interface whose driver cannot be asked is said in the
    /// log, and the port's own stats are read as before.
    fn of(port: &Port) -> Source {
        let info = port.info();
        let Some(index) = info.kernel_interface() else {
            return Source::Port;
        };
        let kernel = nicstats::Interface::by_index(index).and_then(|interface| {
            let driver = interface.driver()?;
            Ok(Source::Kernel { interface, driver, listed: 0 })
        });
        kernel.unwrap_or_else(|e| {
            tracing::warn!(
                "{}: the kernel interface's driver statistics cannot be read ({e}); only the port's own counters are watched",
                info.name
            );
            Source::Port
        })
    }
}

#[derive(Default)]
struct Inner {
    port: u16,
    source: Source,
    /// By id, or the whole list where the PMD's by-id read is wrong (ENA Express).
    path: ReadPath,
    wanted: Vec<CounterSpec>,
    specs: Vec<CounterSpec>,
    ids: Vec<u64>,
    last_good: Option<(Instant, Vec<u64>)>,
    invalid_events: u64,
    last_invalid: Option<String>,
    /// Counters that moved over the last poll interval, and the levels then.
    recent: XstatsByKind,
}

impl Inner {
    /// Reads once, checks against the last good sample, keeps it if good.
    fn read(&mut self) -> Sample {
        let at = Instant::now();
        let read = match (&self.source, self.path) {
            // Nothing watched: no read (the driver's list may not even be resolved).
            (Source::Kernel { .. }, _) if self.ids.is_empty() => Ok(Vec::new()),
            (Source::Kernel { interface, listed, .. }, _) => interface.read(*listed).map_err(|e| e.to_string()).and_then(|all| {
                self.ids
                    .iter()
                    .map(|&id| all.get(id as usize).copied().ok_or_else(|| format!("statistic {id} is past the driver's {}", all.len())))
                    .collect()
            }),
            (Source::Port, ReadPath::Full) => dpdk::xstats_all(self.port)
                .and_then(|all| {
                    self.ids
                        .iter()
                        .map(|&id| {
                            all.get(id as usize)
                                .copied()
                                .ok_or_else(|| dpdk::Error::Other(format!("xstat id {id} is past the port's {} stats", all.len())))
                        })
                        .collect()
                })
                .map_err(|e| e.to_string()),
            (Source::Port, ReadPath::ById) => dpdk::xstats_by_id(self.port, &self.ids).map_err(|e| e.to_string()),
        };
        let values = match read {
            Ok(v) => v,
            Err(e) => {
                self.invalid_events += 1;
                let why = format!("reading the counters failed: {e}");
                self.last_invalid = Some(why.clone());
                return Sample { at, values: Vec::new(), invalid: Some(why), invalid_events: self.invalid_events };
            }
        };
        if let Some((t, prev)) = &self.last_good {
            let (names, a, b) = counters_only(&self.specs, prev, &values);
            if let SampleCheck::Invalid(why) = limits::check_step(&names, &a, &b, at.duration_since(*t).as_secs_f64()) {
                self.invalid_events += 1;
                self.last_invalid = Some(why.clone());
                return Sample { at, values, invalid: Some(why), invalid_events: self.invalid_events };
            }
        }
        self.last_good = Some((at, values.clone()));
        Sample { at, values, invalid: None, invalid_events: self.invalid_events }
    }
}

/// The counters among `specs` (levels left out), with their values in `a` and `b`.
fn counters_only(specs: &[CounterSpec], a: &[u64], b: &[u64]) -> (Vec<String>, Vec<u64>, Vec<u64>) {
    let mut names = Vec::new();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for ((s, &va), &vb) in specs.iter().zip(a).zip(b) {
        if s.kind != CounterKind::Level {
            names.push(s.name.clone());
            x.push(va);
            y.push(vb);
        }
    }
    (names, x, y)
}

/// The port id of a watch on a kernel interface alone (it has none).
const NO_PORT: u16 = u16::MAX;

/// One read of the watched counters.
#[derive(Debug, Clone)]
pub struct Sample {
    pub at: Instant,
    pub values: Vec<u64>,
    pub invalid: Option<String>,
    /// Invalid samples seen so far (any between two edges spoils the window).
    pub invalid_events: u64,
}

/// The watched counters over one window, by kind (the watch knows each
/// counter's kind from its spec: no name is matched again downstream).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowXstats {
    /// Allowance and `--watch-xstat` counter deltas, levels as read at the window's end.
    pub counters: XstatsByKind,
    pub invalid: Option<String>,
}

impl WindowXstats {
    /// Several ports' windows as one: counters add up, a level is the
    /// lowest port's (the one nearest its limit), and one port's invalid
    /// sample makes the whole invalid.
    pub fn merge(&mut self, port: &str, o: &WindowXstats) {
        self.counters.merge(&o.counters);
        if self.invalid.is_none() {
            self.invalid = o.invalid.as_ref().map(|why| format!("{port}: {why}"));
        }
    }
}

/// The live allowance text of several ports' watches, each named when
/// there is more than one.
pub fn live_text_of<'a>(watches: &[(&'a str, &'a Watch)]) -> Option<String> {
    let parts: Vec<String> =
        watches.iter().filter_map(|(name, w)| w.live_text().map(|t| if watches.len() > 1 { format!("{name}: {t}") } else { t })).collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Watches a port's allowance and user-named counters.
#[derive(Clone)]
pub struct Watch {
    inner: Arc<Mutex<Inner>>,
    stop: Arc<AtomicBool>,
    poller: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
}

impl Watch {
    /// The counter set for this port's driver plus `extra` names. A named
    /// counter the device lacks is an error; a missing allowance (the device
    /// does not report the capability) is a warning in the log.
    pub fn new(port: &Port, extra: &[String]) -> Result<Watch, Error> {
        let source = Source::of(port);
        let wanted = match &source {
            Source::Kernel { driver, .. } => limits::kernel_counter_set(driver, extra),
            Source::Port => limits::counter_set(&port.info().driver, extra),
        };
        let w = Watch {
            inner: Arc::new(Mutex::new(Inner { port: port.id(), source, wanted, ..Default::default() })),
            stop: Arc::default(),
            poller: Arc::default(),
        };
        w.resolve(port)?;
        Ok(w)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kernel driver's statistics of `interface` alone, no DPDK port
    /// (drop --socket): its driver's counter set (on ENA the allowance
    /// counters) plus `extra` names.
    pub fn of_interface(interface: &str, extra: &[String]) -> Result<Watch, Error> {
        let opened = nicstats::Interface::open(interface)?;
        let driver = opened.driver()?;
        let wanted = limits::kernel_counter_set(&driver, extra);
        let w = Watch {
            inner: Arc::new(Mutex::new(Inner {
                port: NO_PORT,
                source: Source::Kernel { interface: opened, driver, listed: 0 },
                wanted,
                ..Default::default()
            })),
            stop: Arc::default(),
            poller: Arc::default(),
        };
        w.resolve_on(None)?;
        Ok(w)
    }

    /// Finds the counters' ids again (after the port was configured anew).
    pub fn resolve(&self, port: &Port) -> Result<(), Error> {
        self.resolve_on(Some(port))
    }

    /// As `resolve`; `port` None for a watch on a kernel interface alone.
    fn resolve_on(&self, port: Option<&Port>) -> Result<(), Error> {
        let mut inner = self.lock();
        if inner.wanted.is_empty() {
            return Ok(());
        }
        let names = match (&mut inner.source, port) {
            (Source::Port, Some(port)) => port.xstat_names()?,
            (Source::Port, None) => return Ok(()),
            (Source::Kernel { interface, listed, .. }, _) => {
                let names = interface.names()?;
                *listed = names.len();
                names
            }
        };
        let r = limits::resolve(&names, &inner.wanted);
        let port_id = port.map_or(NO_PORT, |p| p.id());
        for name in &r.missing {
            let spec = inner.wanted.iter().find(|s| &s.name == name).expect("missing names come from wanted");
            match (&inner.source, spec.required) {
                (Source::Port, true) => {
                    let driver = port.map_or_else(String::new, |p| p.info().driver.clone());
                    return Err(Error::NoSuchXstat { port: port_id, driver, name: name.clone() });
                }
                (Source::Kernel { interface, driver, .. }, true) => {
                    return Err(Error::NoSuchKernelStat {
                        port: port_id,
                        interface: interface.name().into(),
                        driver: driver.clone(),
                        name: name.clone(),
                    })
                }
                (Source::Port, false) => {
                    tracing::warn!(
                        "{} reports no {name}: the device does not offer it (older DPDK, or the capability is off)",
                        port.map_or("the port", |p| p.info().driver.as_str())
                    )
                }
                (Source::Kernel { interface, driver, .. }, false) => {
                    tracing::warn!(
                        "{} (kernel driver {driver}) lists no {name}: an older driver, or the capability is off",
                        interface.name()
                    )
                }
            }
        }
        for name in &r.duplicated {
            tracing::warn!("{name} appears more than once in the port's extended stats; the first is read");
        }
        inner.path = match port {
            Some(port) => limits::read_path(&port.info().driver, &r.specs),
            None => ReadPath::ById,
        };
        inner.specs = r.specs;
        inner.ids = r.ids;
        inner.last_good = None;
        // The first read of their values runs under the device deadline (a
        // device that answers it answers the poller's reads too); its values
        // are not kept: the poller's first read is the baseline as before.
        match (&inner.source, port) {
            (Source::Port, Some(port)) => drop(port.xstats(&dpdk::XstatIds { names: Vec::new(), ids: inner.ids.clone() })?),
            (Source::Port, None) => {}
            (Source::Kernel { interface, listed, .. }, _) => drop(interface.read(*listed)?),
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.lock().ids.is_empty()
    }

    /// Where the counters are read, in words, when not from the port
    /// itself ("the kernel driver veth's statistics of bd-b").
    pub fn kernel_source(&self) -> Option<String> {
        match &self.lock().source {
            Source::Port => None,
            Source::Kernel { interface, driver, .. } => Some(format!("the kernel driver {driver}'s statistics of {}", interface.name())),
        }
    }

    /// The names watched, in order.
    pub fn names(&self) -> Vec<String> {
        self.lock().specs.iter().map(|s| s.name.clone()).collect()
    }

    /// Reads now (on ENA one admin command per group of counters read, and
    /// one more where its ENA Express counters make it read the whole list).
    pub fn sample(&self) -> Sample {
        self.lock().read()
    }

    /// The counters from `a` to `b`: deltas, levels at `b`, and whether to believe them.
    pub fn window(&self, a: &Sample, b: &Sample) -> WindowXstats {
        let inner = self.lock();
        let mut w = WindowXstats::default();
        let invalid = a.invalid.clone().or_else(|| b.invalid.clone()).or_else(|| {
            (b.invalid_events > a.invalid_events)
                .then(|| inner.last_invalid.clone().unwrap_or_else(|| "an invalid sample during the window".into()))
        });
        if let Some(why) = invalid {
            w.invalid = Some(why);
            return w;
        }
        if a.values.len() != inner.specs.len() || b.values.len() != inner.specs.len() {
            return w;
        }
        let (names, x, y) = counters_only(&inner.specs, &a.values, &b.values);
        if let SampleCheck::Invalid(why) = limits::check_step(&names, &x, &y, b.at.duration_since(a.at).as_secs_f64()) {
            w.invalid = Some(why);
            return w;
        }
        for (s, (va, vb)) in inner.specs.iter().zip(a.values.iter().zip(&b.values)) {
            // A counter's delta; a level as read at the window's end.
            let value = if s.kind == CounterKind::Level { *vb } else { vb - va };
            w.counters.insert(s.kind, s.name.clone(), value);
        }
        w
    }

    /// Polls every `interval` on a thread of its own, for the live view.
    pub fn start_polling(&self, interval: Duration) {
        if self.is_empty() {
            return;
        }
        let me = Watch { inner: self.inner.clone(), stop: self.stop.clone(), poller: Arc::default() };
        let handle = std::thread::spawn(move || {
            let mut prev: Option<Sample> = None;
            while !me.stop.load(Ordering::Relaxed) {
                let s = me.sample();
                if let Some(p) = &prev {
                    let mut w = me.window(p, &s).counters;
                    w.allowances.retain(|_, d| *d > 0);
                    w.watched.retain(|_, d| *d > 0);
                    me.lock().recent = w;
                }
                if s.invalid.is_none() {
                    prev = Some(s);
                }
                let until = Instant::now() + interval;
                while Instant::now() < until && !me.stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        *self.poller.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
    }

    /// For a live line: allowance counters that moved ("allowances: none
    /// exceeded" when none did, on a device that has them) and watched ones.
    pub fn live_text(&self) -> Option<String> {
        let inner = self.lock();
        if inner.ids.is_empty() {
            return None;
        }
        let has_allowances = inner.specs.iter().any(|s| s.kind == CounterKind::Allowance);
        let (allow, other) = (&inner.recent.allowances, &inner.recent.watched);
        let mut parts = Vec::new();
        if has_allowances {
            if allow.is_empty() {
                parts.push("allowances: none exceeded".to_string());
            } else {
                parts.push(format!("exceeded: {}", allow.iter().map(|(n, d)| format!("{n} +{d}")).collect::<Vec<_>>().join(", ")));
            }
        }
        if !other.is_empty() {
            parts.push(format!("moved: {}", other.iter().map(|(n, d)| format!("{n} +{d}")).collect::<Vec<_>>().join(", ")));
        }
        for (n, v) in &inner.recent.levels {
            parts.push(format!("{n} {v}"));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// Stops the poller and waits for it: no read may outlive the port.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.poller.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = h.join();
        }
    }
}
