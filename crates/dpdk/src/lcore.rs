//! Work on EAL lcores: a closure launched on a worker lcore, joined for its
//! result, with a panic caught at the `extern "C"` boundary and returned as
//! an error naming the lcore (never unwound into DPDK).

use std::any::Any;
use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use dpdk_ffi as ffi;

use crate::{Error, Result};

struct Slot<T> {
    work: Option<Box<dyn FnOnce() -> T + Send>>,
    outcome: Option<std::thread::Result<T>>,
}

/// Work running on an EAL worker lcore. `join` waits for it; dropping it
/// without joining waits too, so the lcore never outlives its closure.
pub struct LcoreJob<T> {
    lcore: u32,
    slot: *mut Slot<T>,
}

// SAFETY: the slot is handed to exactly one lcore and read back only after
// rte_eal_wait_lcore says that lcore is done with it.
unsafe impl<T: Send> Send for LcoreJob<T> {}

extern "C" fn trampoline<T>(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the Slot<T> that `launch` leaked for this lcore alone.
    let slot = unsafe { &mut *(arg as *mut Slot<T>) };
    let work = slot.work.take().expect("work runs once");
    // A panic must not unwind across extern "C": catch it here and hand it back.
    let outcome = catch_unwind(AssertUnwindSafe(work));
    let rc = if outcome.is_ok() { 0 } else { -1 };
    slot.outcome = Some(outcome);
    rc
}

/// Runs `work` on worker lcore `lcore`.
pub fn launch<T, F>(lcore: u32, work: F) -> Result<LcoreJob<T>>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let slot = Box::into_raw(Box::new(Slot::<T> { work: Some(Box::new(work)), outcome: None }));
    // SAFETY: the trampoline matches lcore_function_t; the slot lives until join.
    let rc = unsafe { ffi::rte_eal_remote_launch(Some(trampoline::<T>), slot as *mut c_void, lcore) };
    if rc != 0 {
        // SAFETY: the lcore never got the slot.
        drop(unsafe { Box::from_raw(slot) });
        return Err(Error::Other(format!(
            "cannot launch work on lcore {lcore}: {} (is it a worker lcore, and idle?)",
            crate::errno_message(rc)
        )));
    }
    Ok(LcoreJob { lcore, slot })
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with no message".into()
    }
}

impl<T> LcoreJob<T> {
    pub fn lcore(&self) -> u32 {
        self.lcore
    }

    fn wait(&mut self) -> Option<Box<Slot<T>>> {
        if self.slot.is_null() {
            return None;
        }
        // SAFETY: blocks until the lcore returned from the trampoline. What
        // it returns is the trampoline's 0: the outcome is in the slot.
        let _ = unsafe { ffi::rte_eal_wait_lcore(self.lcore) };
        let slot = std::mem::replace(&mut self.slot, std::ptr::null_mut());
        // SAFETY: the lcore is done; the slot is ours again.
        Some(unsafe { Box::from_raw(slot) })
    }

    /// Waits for the work and returns its value, or its panic as an error.
    pub fn join(mut self) -> Result<T> {
        let slot = self.wait().expect("joined once");
        match slot.outcome {
            Some(Ok(v)) => Ok(v),
            Some(Err(p)) => Err(Error::WorkerPanicked { lcore: self.lcore, message: panic_message(&*p) }),
            None => Err(Error::WorkerPanicked { lcore: self.lcore, message: "the work never ran".into() }),
        }
    }
}

impl<T> Drop for LcoreJob<T> {
    fn drop(&mut self) {
        self.wait();
    }
}
