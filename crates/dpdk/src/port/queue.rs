//! One queue of a configured port, in one direction. `configure` hands out
//! exactly one handle per queue and direction, and the burst calls take
//! `&mut self`, so no two lcores can ever poll or send on the same queue
//! (DPDK's burst functions are not thread-safe per queue).

use std::marker::PhantomData;

use dpdk_ffi as ffi;

use crate::Mbuf;

/// The receive direction.
#[derive(Debug)]
pub enum Rx {}

/// The send direction.
#[derive(Debug)]
pub enum Tx {}

/// Queue `queue` of port `port` in direction `D` ([`Rx`] or [`Tx`]).
#[derive(Debug)]
pub struct Queue<D> {
    port: u16,
    queue: u16,
    /// The device may unmap this queue's ring under a burst (memif):
    /// bursts run guarded, and a fault ends them instead of the process.
    guarded: bool,
    faulted: bool,
    direction: PhantomData<D>,
}

/// The receive side of one queue.
pub type RxQueue = Queue<Rx>;

/// The send side of one queue.
pub type TxQueue = Queue<Tx>;

impl<D> Queue<D> {
    /// Only `Port::configure` makes queues, once per queue set up.
    pub(super) fn new(port: u16, queue: u16, guarded: bool) -> Queue<D> {
        Queue { port, queue, guarded, faulted: false, direction: PhantomData }
    }

    pub fn id(&self) -> u16 {
        self.queue
    }

    /// The port this queue belongs to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether bursts on this queue must run guarded (the device may unmap its ring).
    pub fn guarded(&self) -> bool {
        self.guarded
    }

    /// A burst made outside this handle (blast's C lanes) faulted.
    pub fn mark_faulted(&mut self) {
        self.faulted = true;
    }

    /// A burst faulted: the device unmapped the ring (its peer left).
    pub fn faulted(&self) -> bool {
        self.faulted
    }

    /// Bursts may go on: the ring is mapped again (the peer is back).
    pub fn rearm(&mut self) {
        self.faulted = false;
    }
}

impl Queue<Rx> {
    /// Receives up to `bufs.len()` packets; returns how many. On a guarded
    /// queue whose ring vanished under the burst, returns 0 and from then
    /// on [`Queue::faulted`] is true: stop polling it.
    #[inline(always)]
    pub fn rx_burst(&mut self, bufs: &mut [*mut Mbuf]) -> usize {
        // Bursts are at most BURST_MAX (512) long: the cast is exact.
        let n = bufs.len() as u16;
        if self.guarded {
            let mut faulted = 0;
            // SAFETY: as below; a fault inside the burst returns here with `faulted` set.
            let got = unsafe { ffi::bd_rx_burst_guarded(self.port, self.queue, bufs.as_mut_ptr(), n, &mut faulted) };
            self.faulted |= faulted != 0;
            return usize::from(got);
        }
        // SAFETY: the queue is set up and started, only this handle polls it
        // (&mut self), and `bufs` has room for the `n` pointers it may write.
        usize::from(unsafe { ffi::bd_rx_burst(self.port, self.queue, bufs.as_mut_ptr(), n) })
    }
}

impl Queue<Tx> {
    /// Offers `pkts` to the device; returns how many it took. The ones not
    /// taken stay the caller's. On a guarded queue whose ring vanished under
    /// the burst, every frame counts as taken (none may be freed: the device
    /// may hold some) and from then on [`Queue::faulted`] is true.
    #[inline(always)]
    pub fn tx_burst(&mut self, pkts: &mut [*mut Mbuf]) -> usize {
        let n = pkts.len() as u16;
        if self.guarded {
            let mut faulted = 0;
            // SAFETY: as below; a fault inside the burst returns here with `faulted` set.
            let sent = unsafe { ffi::bd_tx_burst_guarded(self.port, self.queue, pkts.as_mut_ptr(), n, &mut faulted) };
            self.faulted |= faulted != 0;
            return usize::from(sent);
        }
        // SAFETY: the queue is set up and started, only this handle sends on
        // it (&mut self), and `pkts` holds `n` mbufs the caller owns; those
        // the device takes are its own from here on.
        usize::from(unsafe { ffi::bd_tx_burst(self.port, self.queue, pkts.as_mut_ptr(), n) })
    }
}
