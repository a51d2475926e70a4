//! DPDK calls that wait on a device, run under a deadline.
//!
//! A PMD's control path can wait forever on a device that never answers:
//! virtio's `virtio_send_command` polls its control queue with `usleep`
//! and no limit (a virtio device without `iommu_platform` behind vfio-pci
//! and a translating IOMMU never writes the answer). The thread inside
//! such a call never sees a flag, so Ctrl-C went unanswered and nothing
//! was written. Every such call here ([`guarded`]) runs on a helper thread
//! while its caller waits, for at most [`device_timeout`]: past it the
//! caller gets [`Error::Stalled`], on a signal [`Error::Interrupted`], and
//! the call is left running. From then on the process is *wedged*: the
//! device (and the lock the stuck call may hold) is not touched again, so
//! further guarded calls are refused at once and the teardown (`Port`,
//! `Mempool`, `Eal` drops) does nothing: the process exits and the kernel
//! takes back what the device held.
//!
//! `BLASTDROP_FAULT_STALL=<call>[,<call>...]` makes the named calls block
//! forever inside the deadline instead of running: a test-only hook, so a
//! device that does not answer is reproduced without one.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// How long a device call may take before it counts as stalled, unless
/// set otherwise: generous for NICs that take seconds to start (mlx5, ice).
pub const DEFAULT_DEVICE_TIMEOUT: Duration = Duration::from_secs(20);

/// After a signal, how long a call already running when it came may still
/// take before it is given up (a call started after the signal, e.g. a
/// stop at the end of an interrupted run, finishes normally in far less).
const AFTER_SIGNAL: Duration = Duration::from_secs(1);

/// How often the waiting caller looks at the clock and the signals.
const TICK: Duration = Duration::from_millis(20);

/// The environment variable of the test-only stall hook.
pub const FAULT_STALL_ENV: &str = "BLASTDROP_FAULT_STALL";

static TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_DEVICE_TIMEOUT.as_millis() as u64);
static WEDGED: AtomicBool = AtomicBool::new(false);
static SIGNALS: OnceLock<fn() -> u32> = OnceLock::new();
static IN_FLIGHT: Mutex<Vec<(u64, InFlight)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static GIVEN_UP: Mutex<Option<GivenUp>> = Mutex::new(None);

/// The device call the process gave up on (the first): what a record of
/// the run says instead of figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenUp {
    pub device: String,
    pub call: &'static str,
    /// How long it had waited when it was given up.
    pub waited: Duration,
    /// A signal, not the deadline, ended the wait.
    pub interrupted: bool,
}

/// The device call given up, if any (see [`wedged`]).
pub fn given_up() -> Option<GivenUp> {
    GIVEN_UP.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Sets how long a device call may take (`--device-timeout`).
pub fn set_device_timeout(d: Duration) {
    TIMEOUT_MS.store(d.as_millis().max(1) as u64, Ordering::Relaxed);
}

pub fn device_timeout() -> Duration {
    Duration::from_millis(TIMEOUT_MS.load(Ordering::Relaxed))
}

/// Tells the layer how many signals the process has received so far (it
/// cannot import the binaries' handler): a signal during a call gives it up.
pub fn set_signal_count(count: fn() -> u32) {
    let _ = SIGNALS.set(count);
}

fn signals() -> u32 {
    SIGNALS.get().map_or(0, |f| f())
}

/// Whether a device call was given up and may still be running: nothing
/// may touch DPDK's devices again (the drops skip their teardown).
pub fn wedged() -> bool {
    WEDGED.load(Ordering::SeqCst)
}

/// A device call under way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    /// The port's name (its PCI address, or the vdev's name).
    pub device: String,
    pub call: &'static str,
    pub since: Instant,
}

impl InFlight {
    /// "rte_eth_dev_start on 0000:00:05.0 for 12 s".
    pub fn describe(&self) -> String {
        format!("{} on {} for {} s", self.call, self.device, self.since.elapsed().as_secs())
    }
}

/// The oldest device call under way, if any (what the process is waiting
/// on, for a peer that asks while it starts).
pub fn in_flight() -> Option<InFlight> {
    let calls = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
    calls.iter().map(|(_, c)| c).min_by_key(|c| c.since).cloned()
}

/// Whether the stall hook names `call`.
fn stall_injected(call: &str) -> bool {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES
        .get_or_init(|| std::env::var(FAULT_STALL_ENV).map(|v| v.split(',').map(|s| s.trim().to_owned()).collect()).unwrap_or_default())
        .iter()
        .any(|n| n == call)
}

/// A value moved to the helper thread that is not `Send` only because it
/// holds raw pointers (a device configuration, a mempool's address).
pub(crate) struct Sendable<T>(T);

// SAFETY: used only for DPDK structures and pointers that DPDK's control
// calls take from any thread; the caller's thread does not touch the value
// after handing it over.
unsafe impl<T> Send for Sendable<T> {}

impl<T> Sendable<T> {
    pub(crate) fn new(v: T) -> Sendable<T> {
        Sendable(v)
    }

    /// The value (a method, so a closure captures the whole wrapper).
    pub(crate) fn into_inner(self) -> T {
        self.0
    }
}

/// Removes its call from the in-flight list when the wait ends, however.
struct Registered(u64);

impl Drop for Registered {
    fn drop(&mut self) {
        IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner()).retain(|(id, _)| *id != self.0);
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// Helper threads waiting for a job: a call takes one (or starts one), and
/// the thread comes back when its call returns, so the link and counter
/// reads made every 100 ms start no thread, and calls from several threads
/// (drop's main and control threads) still run side by side.
static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

fn on_helper(job: Job) -> std::io::Result<()> {
    let idle = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let job = match idle {
        Some(helper) => match helper.send(job) {
            Ok(()) => return Ok(()),
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (tx, rx) = mpsc::channel::<Job>();
    tx.send(job).expect("the receiver is here");
    std::thread::Builder::new().name("bd-devcall".into()).spawn(move || {
        while let Ok(job) = rx.recv() {
            job();
            IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(tx.clone());
        }
    })?;
    Ok(())
}

/// Runs `f`, a DPDK call `call` on `device`, on a helper thread and waits
/// for it until the device timeout or a signal (see the module's text).
/// `f` owns everything it touches: it may outlive this wait.
pub fn guarded<T: Send + 'static>(device: &str, call: &'static str, f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    if wedged() {
        return Err(Error::Wedged { device: device.to_owned(), call });
    }
    let since = Instant::now();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner()).push((id, InFlight { device: device.to_owned(), call, since }));
    let _registered = Registered(id);
    let (tx, rx) = mpsc::sync_channel(1);
    let stall = stall_injected(call);
    on_helper(Box::new(move || {
        if stall {
            // The test-only hook: a call that never returns.
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        let _ = tx.send(f());
    }))
    .map_err(|e| Error::Other(format!("{call} on {device}: cannot start the thread that runs it: {e}")))?;
    match wait_for(&rx, since, device_timeout(), signals) {
        Waited::Answered(v) => Ok(v),
        Waited::Panicked => Err(Error::Other(format!("{call} on {device} panicked"))),
        Waited::GaveUp { waited, interrupted } => {
            WEDGED.store(true, Ordering::SeqCst);
            let device = device.to_owned();
            GIVEN_UP.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(GivenUp { device: device.clone(), call, waited, interrupted });
            Err(if interrupted { Error::Interrupted { device, call, waited } } else { Error::Stalled { device, call, waited } })
        }
    }
}

/// How the wait for a device call ended.
#[derive(Debug, PartialEq)]
enum Waited<T> {
    Answered(T),
    /// The call panicked on its helper thread (its answer will never come).
    Panicked,
    /// Past the timeout, or a signal came (`interrupted`): the call is left running.
    GaveUp {
        waited: Duration,
        interrupted: bool,
    },
}

/// Waits for the answer on `rx` of a call begun at `since`, until
/// `timeout` has passed or `signals()` (the count so far) says a signal
/// came since the wait began, or came before and the call has taken
/// [`AFTER_SIGNAL`] already.
fn wait_for<T>(rx: &mpsc::Receiver<T>, since: Instant, timeout: Duration, signals: impl Fn() -> u32) -> Waited<T> {
    let before = signals();
    loop {
        match rx.recv_timeout(TICK) {
            Ok(v) => return Waited::Answered(v),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Waited::Panicked,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let waited = since.elapsed();
        let now = signals();
        let interrupted = now > before || (now > 0 && waited >= AFTER_SIGNAL);
        if interrupted || waited >= timeout {
            return Waited::GaveUp { waited, interrupted };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_answers_gives_its_value_and_leaves_nothing_in_flight() {
        assert_eq!(guarded("dev", "answers", || 7).unwrap(), 7);
        assert!(in_flight().is_none_or(|c| c.call != "answers"));
    }

    /// A call answering `after` (never: None) on its own thread.
    fn call_answering(after: Option<Duration>) -> (mpsc::Receiver<u32>, mpsc::SyncSender<u32>) {
        let (tx, rx) = mpsc::sync_channel(1);
        if let Some(after) = after {
            let tx = tx.clone();
            std::thread::spawn(move || {
                std::thread::sleep(after);
                let _ = tx.send(7);
            });
        }
        (rx, tx)
    }

    #[test]
    fn a_wait_ends_with_the_answer_at_the_timeout_or_on_a_signal() {
        let (rx, _tx) = call_answering(Some(Duration::from_millis(30)));
        assert_eq!(wait_for(&rx, Instant::now(), Duration::from_secs(5), || 0), Waited::Answered(7));

        let (rx, _tx) = call_answering(None);
        let t0 = Instant::now();
        match wait_for(&rx, t0, Duration::from_millis(200), || 0) {
            Waited::GaveUp { waited, interrupted: false } => {
                assert!(waited >= Duration::from_millis(200) && waited < Duration::from_secs(2))
            }
            other => panic!("{other:?}"),
        }

        // A signal during the wait ends it at once, whatever the timeout.
        let (rx, _tx) = call_answering(None);
        let count = std::sync::atomic::AtomicU32::new(0);
        let t0 = Instant::now();
        let w = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                count.store(1, Ordering::SeqCst);
            });
            wait_for(&rx, t0, Duration::from_secs(60), || count.load(Ordering::SeqCst))
        });
        assert!(matches!(w, Waited::GaveUp { interrupted: true, .. }), "{w:?}");
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());

        // The helper panicked: its answer is never coming.
        let (rx, tx) = call_answering(None);
        drop(tx);
        assert_eq!(wait_for(&rx, Instant::now(), Duration::from_secs(5), || 0), Waited::Panicked);
    }

    #[test]
    fn a_call_begun_after_a_signal_gets_a_second_then_is_given_up() {
        // The stop of an interrupted run's end: it answers in time.
        let (rx, _tx) = call_answering(Some(Duration::from_millis(200)));
        assert_eq!(wait_for(&rx, Instant::now(), Duration::from_secs(60), || 1), Waited::Answered(7));
        // One that does not answer is not waited for the whole timeout.
        let (rx, _tx) = call_answering(None);
        let t0 = Instant::now();
        assert!(matches!(wait_for(&rx, t0, Duration::from_secs(60), || 1), Waited::GaveUp { interrupted: true, .. }));
        assert!(t0.elapsed() >= AFTER_SIGNAL && t0.elapsed() < AFTER_SIGNAL * 3, "{:?}", t0.elapsed());
    }

    #[test]
    fn describe_names_the_call_the_device_and_the_wait() {
        let c = InFlight { device: "0000:00:05.0".into(), call: "rte_eth_dev_start", since: Instant::now() - Duration::from_secs(12) };
        assert_eq!(c.describe(), "rte_eth_dev_start on 0000:00:05.0 for 12 s");
    }
}
