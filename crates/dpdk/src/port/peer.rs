//! Devices whose peer comes and goes (memif): they unmap a queue's ring on
//! the EAL interrupt thread while a lane may be in a burst on it, so their
//! bursts run guarded and their start and stop run on that thread.

use std::time::Duration;

use dpdk_ffi as ffi;

/// Drivers that unmap a queue's ring on another thread while an lcore may
/// be inside a burst on it, and connect or disconnect their peer on the
/// EAL interrupt thread.
pub(super) fn peer_managed(driver: &str) -> bool {
    driver == "net_memif"
}

/// Runs `f` on the EAL interrupt thread (where memif handles its peer) and
/// waits for it; after `timeout` it runs here instead.
pub(super) fn on_interrupt_thread<F: FnOnce()>(f: F, timeout: Duration) {
    unsafe extern "C" fn call<F: FnOnce()>(arg: *mut std::ffi::c_void) {
        // SAFETY: arg is the Option<F> below, alive until bd_run_on_intr_thread returns.
        let slot = unsafe { &mut *(arg as *mut Option<F>) };
        if let Some(f) = slot.take() {
            // A panic must not unwind into C.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        }
    }
    let mut slot = Some(f);
    let ms = timeout.as_millis().min(u128::from(u32::MAX)) as u32;
    // SAFETY: the callback runs exactly once, on one thread, before this
    // returns. Its return says where it ran (0 there, 1 here): it ran.
    let _ = unsafe { ffi::bd_run_on_intr_thread(Some(call::<F>), &mut slot as *mut Option<F> as *mut std::ffi::c_void, ms) };
}

/// Whether a peer-managed (memif) port was configured in this process.
pub(super) static PEER_MANAGED_USED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn peer_managed_used() -> bool {
    PEER_MANAGED_USED.load(std::sync::atomic::Ordering::Relaxed)
}

/// How long a memif port operation waits for the interrupt thread.
pub(super) const INTR_THREAD_WAIT: Duration = Duration::from_secs(5);
