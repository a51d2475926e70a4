//! Lanes on their lcores, launched, told to stop and joined the same way by
//! both tools, and the queue handles they borrow: a lane takes its queues
//! by value onto its lcore and hands them back in its outcome, so between
//! runs the handles wait in a `QueueHome`, never in a slot that may be empty.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dpdk::{LcoreJob, RxQueue, TxQueue};
use layout::Spread;

use crate::counters::LaneCounters;
use crate::error::Error;

/// The queue handles of the configured ports that no lane holds now, each
/// kind in global queue order.
#[derive(Default)]
pub struct QueueHome {
    rx: Vec<RxQueue>,
    tx: Vec<TxQueue>,
}

impl QueueHome {
    /// The handles `configure` gave each port (its local queues), by
    /// global queue id. Global queues go round robin over the ports, so
    /// each port's local queues come up in order.
    pub fn by_global_queue(spread: Spread, per_port: Vec<(Vec<RxQueue>, Vec<TxQueue>)>) -> QueueHome {
        let mut ports: Vec<_> = per_port.into_iter().map(|(rx, tx)| (rx.into_iter(), tx.into_iter())).collect();
        let mut home = QueueHome::default();
        for q in 0..spread.queues {
            let (rx, tx) = &mut ports[usize::from(spread.port_of(q).0)];
            home.rx.extend(rx.next());
            home.tx.extend(tx.next());
        }
        home
    }

    /// RX handles at home.
    pub fn rx_count(&self) -> usize {
        self.rx.len()
    }

    /// Hands out every RX handle (a lane per queue takes one), in queue order.
    pub fn take_rx(&mut self) -> Vec<RxQueue> {
        std::mem::take(&mut self.rx)
    }

    /// Hands out every TX handle, in queue order.
    pub fn take_tx(&mut self) -> Vec<TxQueue> {
        std::mem::take(&mut self.tx)
    }

    /// A lane's handles back; lanes come back in queue order.
    pub fn give_back(&mut self, rx: Option<RxQueue>, tx: Option<TxQueue>) {
        self.rx.extend(rx);
        self.tx.extend(tx);
    }

    /// The handles of `queues` queues, or why not: a lane that panicked
    /// kept its own, and the ports must be configured again.
    pub fn check(&self, queues: u16, rx_too: bool) -> Result<(), Error> {
        let want = usize::from(queues);
        if self.tx.len() < want || (rx_too && self.rx.len() < want) {
            return Err(Error::HandlesNotBack { want, tx: self.tx.len(), rx: self.rx.len() });
        }
        Ok(())
    }
}

/// One lane running on its lcore.
pub struct Running<O> {
    pub queue: u16,
    /// Index of its port in --port order.
    pub port: u16,
    pub lcore: u32,
    pub counters: Arc<LaneCounters>,
    job: LcoreJob<O>,
}

/// A lane that ended, and what it handed back.
pub struct Joined<O> {
    pub queue: u16,
    pub port: u16,
    pub lcore: u32,
    pub outcome: O,
}

/// The lanes of one run, sharing a stop flag.
pub struct Lanes<O> {
    stop: Arc<AtomicBool>,
    running: Vec<Running<O>>,
}

impl<O: Send + 'static> Default for Lanes<O> {
    fn default() -> Self {
        Lanes { stop: Arc::new(AtomicBool::new(false)), running: Vec::new() }
    }
}

impl<O: Send + 'static> Lanes<O> {
    /// Runs `work` on `lcore` for queue `queue` of port `port`; `work` polls
    /// the stop flag it is given.
    pub fn launch(
        &mut self,
        (queue, port, lcore): (u16, u16, u32),
        counters: Arc<LaneCounters>,
        work: impl FnOnce(&AtomicBool) -> O + Send + 'static,
    ) -> Result<(), Error> {
        let stop = self.stop.clone();
        let job = dpdk::launch(lcore, move || work(&stop))?;
        self.running.push(Running { queue, port, lcore, counters, job });
        Ok(())
    }

    pub fn running(&self) -> &[Running<O>] {
        &self.running
    }

    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Every running lane's counters, in queue order.
    pub fn counters(&self) -> Vec<Arc<LaneCounters>> {
        self.running.iter().map(|l| l.counters.clone()).collect()
    }

    /// Tells every lane to stop and waits for each. Returns what they
    /// handed back, in launch order, and the first panic: a panicked lane
    /// is joined like the rest, so the others' figures are not lost. The
    /// next launch starts on a fresh stop flag.
    pub fn join(&mut self) -> (Vec<Joined<O>>, Result<(), Error>) {
        self.stop.store(true, Ordering::SeqCst);
        let mut joined = Vec::with_capacity(self.running.len());
        let mut panicked = Ok(());
        for Running { queue, port, lcore, job, .. } in self.running.drain(..) {
            match job.join() {
                Ok(outcome) => joined.push(Joined { queue, port, lcore, outcome }),
                Err(e) if panicked.is_ok() => panicked = Err(e.into()),
                Err(_) => {}
            }
        }
        self.stop = Arc::new(AtomicBool::new(false));
        (joined, panicked)
    }
}

impl<O> Drop for Lanes<O> {
    /// Lanes left running (a launch failed halfway, an early return) are
    /// told to stop: each job's own drop then waits for its lcore.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}
