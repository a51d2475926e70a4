use std::ffi::{c_char, c_int, CString};
use std::sync::atomic::{AtomicBool, Ordering};

use dpdk_ffi as ffi;

use crate::{Error, Result};

static STARTED: AtomicBool = AtomicBool::new(false);

/// The running EAL. Dropping it waits for every lcore and cleans the EAL up;
/// nothing DPDK may be used after that.
pub struct Eal {
    _private: (),
}

impl Eal {
    /// Starts the EAL with `args` (without the program name). A second call
    /// in the same process is an error, not a crash.
    pub fn init<I, S>(program: &str, args: I) -> Result<Eal>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        if STARTED.swap(true, Ordering::SeqCst) {
            return Err(Error::EalAlreadyStarted);
        }
        let owned: Vec<CString> = std::iter::once(program.to_owned())
            .chain(args.into_iter().map(|s| s.as_ref().to_owned()))
            .map(|s| CString::new(s).map_err(|_| Error::EalInit { reason: "an EAL argument contains a NUL byte".into() }))
            .collect::<Result<_>>()?;
        // rte_eal_init may permute argv; it gets its own array of pointers.
        let mut argv: Vec<*mut c_char> = owned.iter().map(|s| s.as_ptr() as *mut c_char).collect();
        // Some facts only the PMDs' logs tell (ENA's LLQ placement): keep a
        // copy of what they log at start. A failure only loses the copy.
        // SAFETY: sets DPDK's log stream before any logging thread exists.
        unsafe { ffi::bd_log_tee_start() };
        // SAFETY: argv points at NUL-terminated strings that outlive the call.
        let rc = unsafe { ffi::rte_eal_init(argv.len() as c_int, argv.as_mut_ptr()) };
        if rc < 0 {
            // SAFETY: plain read of the thread's rte_errno.
            let code = unsafe { ffi::bd_errno() };
            return Err(Error::EalInit { reason: crate::errno_message(code) });
        }
        Ok(Eal { _private: () })
    }

    /// Worker lcores (every enabled lcore except the main one), in order.
    pub fn worker_lcores(&self) -> Vec<u32> {
        let mut out = Vec::new();
        // SAFETY: EAL is initialised; rte_get_next_lcore walks its lcore table.
        let mut id = unsafe { ffi::rte_get_next_lcore(u32::MAX, 1, 0) };
        while id < ffi::RTE_MAX_LCORE {
            out.push(id);
            id = unsafe { ffi::rte_get_next_lcore(id, 1, 0) };
        }
        out
    }

    pub fn main_lcore(&self) -> u32 {
        unsafe { ffi::rte_get_main_lcore() }
    }

    /// The CPU an lcore runs on, when pinned to exactly one.
    pub fn lcore_cpu(&self, lcore: u32) -> Option<u32> {
        let cpu = unsafe { ffi::rte_lcore_to_cpu_id(lcore as c_int) };
        (cpu >= 0).then_some(cpu as u32)
    }

    pub fn lcore_socket(&self, lcore: u32) -> u32 {
        unsafe { ffi::rte_lcore_to_socket_id(lcore) }
    }

    pub fn has_hugepages(&self) -> bool {
        unsafe { ffi::rte_eal_has_hugepages() != 0 }
    }
}

impl Drop for Eal {
    fn drop(&mut self) {
        // SAFETY: the EAL is running; waiting then cleaning up is its documented shutdown.
        unsafe {
            ffi::rte_eal_mp_wait_lcore();
            ffi::rte_eal_cleanup();
        }
    }
}

/// Cycles per second of the counter `rdtsc` reads (on arm64, the generic timer).
pub fn tsc_hz() -> u64 {
    unsafe { ffi::rte_get_tsc_hz() }
}

/// DPDK's cycle counter, read inline: the hot loops read it once per burst,
/// and a call into the C shim for it costs more than the read.
/// On x86_64 the TSC (as `rte_rdtsc`); on aarch64 the generic timer's
/// virtual count (as `rte_rdtsc` without the PMU option), whose frequency is
/// what `rte_get_tsc_hz` reports there; elsewhere the shim.
#[inline(always)]
pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading CNTVCT_EL0 is allowed at EL0 on Linux.
        unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack, preserves_flags)) };
        v
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        // SAFETY: a plain read of the cycle counter.
        unsafe { ffi::bd_rdtsc() }
    }
}

/// What DPDK has logged so far (its first 64 KiB), as text.
pub fn logged() -> String {
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: bd_log_copy writes at most `cap` bytes into `buf`.
    let n = unsafe { ffi::bd_log_copy(buf.as_mut_ptr().cast(), buf.len()) };
    buf.truncate(n);
    String::from_utf8_lossy(&buf).into_owned()
}
