//! The EAL, started once per process: its arguments passed through as the
//! user gave them (with a runtime folder of our own unless one is named),
//! its lcores and their CPUs and NUMA nodes, the cycle counter, a copy of
//! DPDK's log (ENA's LLQ line is read from it), and a clean-up at drop that
//! removes what the EAL left in its runtime folder.

use std::ffi::{c_char, c_int, CStr, CString};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use dpdk_ffi as ffi;

use crate::{Error, Result};

static STARTED: AtomicBool = AtomicBool::new(false);

extern "C" {
    // Public EAL API since 18.11; not among dpdk-ffi's generated bindings.
    fn rte_eal_get_runtime_dir() -> *const c_char;
}

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
        let _ = unsafe { ffi::bd_log_tee_start() };
        // The EAL's run folder is removed at exit when this process made it.
        let (init_lock, run_dir) = RunDir::before_init(&owned[1..]);
        // SAFETY: argv points at NUL-terminated strings that outlive the call.
        let rc = unsafe { ffi::rte_eal_init(argv.len() as c_int, argv.as_mut_ptr()) };
        if let Some(r) = run_dir {
            r.after_init(rc >= 0);
        }
        drop(init_lock);
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
            // SAFETY: as above.
            id = unsafe { ffi::rte_get_next_lcore(id, 1, 0) };
        }
        out
    }

    pub fn main_lcore(&self) -> u32 {
        // SAFETY: the EAL is initialised (an Eal exists); a plain read.
        unsafe { ffi::rte_get_main_lcore() }
    }

    /// The CPUs an lcore's thread may run on: its cpuset as the EAL set it
    /// (`--lcores=1@0` gives {0}; `1@(0-3)` gives {0..3}). Not
    /// `rte_lcore_to_cpu_id`, which is the physical core id of the CPU
    /// numbered like the lcore, whatever `@` mapped it to. Empty for an
    /// lcore out of range.
    pub fn lcore_cpus(&self, lcore: u32) -> Vec<u32> {
        let mut out = vec![0u32; 64];
        // SAFETY: the EAL is initialised; the shim writes at most `cap`
        // entries into the buffer and checks the lcore's range itself.
        let n = unsafe { ffi::bd_lcore_cpus(lcore, out.as_mut_ptr(), out.len() as u32) } as usize;
        if n > out.len() {
            out.resize(n, 0);
            // SAFETY: as above, with room for all of them now.
            unsafe { ffi::bd_lcore_cpus(lcore, out.as_mut_ptr(), out.len() as u32) };
        }
        out.truncate(n);
        out
    }

    pub fn lcore_socket(&self, lcore: u32) -> u32 {
        // SAFETY: the EAL is initialised; the callers pass lcores it enabled.
        unsafe { ffi::rte_lcore_to_socket_id(lcore) }
    }

    pub fn has_hugepages(&self) -> bool {
        // SAFETY: the EAL is initialised; a plain read.
        unsafe { ffi::rte_eal_has_hugepages() != 0 }
    }
}

impl Drop for Eal {
    fn drop(&mut self) {
        // A device call given up is still inside DPDK: cleaning up under it
        // could wait on it or pull memory from under it. The exit ends it.
        if crate::deadline::wedged() {
            return;
        }
        // SAFETY: the EAL is running; waiting then cleaning up is its documented shutdown.
        unsafe { ffi::rte_eal_mp_wait_lcore() };
        // A memif port stays registered on the EAL interrupt thread (its
        // listening socket; see Port's Drop), and rte_eal_cleanup unmaps the
        // memory its handle lives in while that thread still walks its
        // sources on the next event: a crash at exit. The process ends right
        // after this; the kernel reclaims what cleanup would have.
        if !crate::port::peer_managed_used() {
            // SAFETY: as above; nothing runs DPDK after this. A failure here
            // (at exit) leaves nothing to act on.
            let _ = unsafe { ffi::rte_eal_cleanup() };
        }
    }
}

/// The run folder the EAL makes for its files (DPDK 22.11's
/// `eal_create_runtime_dir`): `/var/run/dpdk/<file-prefix>` for root,
/// otherwise `$XDG_RUNTIME_DIR/dpdk/<file-prefix>` or `/tmp/dpdk/<file-prefix>`;
/// the prefix is `--file-prefix` (the last one given), "rte" by default.
pub fn runtime_dir(args: &[CString]) -> PathBuf {
    // SAFETY: getuid cannot fail.
    let base = if unsafe { libc::getuid() } == 0 {
        PathBuf::from("/var/run")
    } else {
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"))
    };
    base.join("dpdk").join(file_prefix(args))
}

fn file_prefix(args: &[CString]) -> String {
    let mut prefix = "rte".to_owned();
    let mut it = args.iter().map(|a| a.to_string_lossy());
    while let Some(a) = it.next() {
        if a == "--file-prefix" {
            if let Some(v) = it.next() {
                prefix = v.into_owned();
            }
        } else if let Some(v) = a.strip_prefix("--file-prefix=") {
            prefix = v.to_owned();
        } else if a == "--" {
            break;
        }
    }
    prefix
}

/// A run folder this process's EAL made, and what to remove of it at exit.
///
/// Several processes may share a prefix (blast and drop with --no-shconf,
/// both "rte" by default). Only the process that made the folder removes
/// it, only when empty, and never while another blastdrop process is in
/// `rte_eal_init` (which makes the folder, then binds its telemetry socket
/// in it): each holds a shared flock on the `dpdk` folder above across its
/// init, and the remover takes it exclusively. That folder stays.
struct RunDir {
    dir: PathBuf,
    /// Files the EAL left in it at start (its shared config and memory
    /// tables; never sockets: their owners unlink them).
    files: Vec<PathBuf>,
}

/// Set once the EAL has made its run folder; read by the exit handler.
static RUN_DIR: Mutex<Option<RunDir>> = Mutex::new(None);

/// A flock on the folder that holds the run folders, released on drop.
struct FolderLock(std::fs::File);

impl FolderLock {
    /// Waits up to 2 s for the lock (holders keep it for well under that);
    /// None when it cannot be had.
    fn take(folder: &Path, exclusive: bool) -> Option<FolderLock> {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(folder).ok()?;
        let op = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH } | libc::LOCK_NB;
        for _ in 0..200 {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
                return Some(FolderLock(f));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        None
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: unlocks a descriptor this value owns (closing would too).
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

impl RunDir {
    /// Takes the shared lock for the EAL's start, and tells whether this
    /// process's EAL will make the run folder: when it does, the exit
    /// handler is registered now, before `rte_eal_init`, so that it runs
    /// after the one the EAL's telemetry registers to unlink its socket
    /// (handlers run in reverse order): the folder is empty by then.
    fn before_init(args: &[CString]) -> (Option<FolderLock>, Option<RunDir>) {
        let dir = runtime_dir(args);
        let Some(parent) = dir.parent() else { return (None, None) };
        // As the EAL makes it (mkdir 0700), so that there is a folder to lock.
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new().mode(0o700).create(parent);
        let lock = FolderLock::take(parent, false);
        if lock.is_none() || dir.exists() {
            // Someone else's (another process with the same --file-prefix,
            // or left by one): not this process's to remove.
            return (lock, None);
        }
        // SAFETY: registers a plain function that neither panics nor blocks for long.
        if unsafe { libc::atexit(remove_run_dir) } != 0 {
            return (lock, None);
        }
        (lock, Some(RunDir { dir, files: Vec::new() }))
    }

    /// Notes what the EAL put in the folder (when it made the one expected).
    fn after_init(mut self, started: bool) {
        if started {
            // SAFETY: returns a pointer to the EAL's static runtime path.
            let actual = unsafe { rte_eal_get_runtime_dir() };
            // SAFETY: non-NULL, it is the EAL's NUL-terminated static string.
            if actual.is_null() || Path::new(&*unsafe { CStr::from_ptr(actual) }.to_string_lossy()) != self.dir {
                return;
            }
        }
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        self.files = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file() && !t.is_socket()))
            .map(|e| e.path())
            .collect();
        *RUN_DIR.lock().unwrap_or_else(|e| e.into_inner()) = Some(self);
    }
}

/// At exit: the EAL's files this process made, then its run folder if
/// empty (another process with the same prefix may still use it).
extern "C" fn remove_run_dir() {
    let Ok(mut guard) = RUN_DIR.try_lock() else { return };
    let Some(r) = guard.take() else { return };
    let Some(_lock) = r.dir.parent().and_then(|p| FolderLock::take(p, true)) else { return };
    for f in &r.files {
        let _ = std::fs::remove_file(f);
    }
    let _ = std::fs::remove_dir(&r.dir);
}

/// Ticks per second of the counter `rdtsc` reads. On aarch64 that is the
/// generic timer's CNTFRQ_EL0, read here rather than asked of DPDK: a DPDK
/// built with RTE_ARM_EAL_RDTSC_USE_PMU reports the PMU cycle counter's rate
/// instead, which is not the rate of the counter `rdtsc` reads.
pub fn tsc_hz() -> u64 {
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading CNTFRQ_EL0 is allowed at EL0 on Linux.
        unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) v, options(nomem, nostack, preserves_flags)) };
        v
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        // SAFETY: no preconditions; after rte_eal_init it is the calibrated rate.
        unsafe { ffi::rte_get_tsc_hz() }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: &[&str]) -> Vec<CString> {
        v.iter().map(|s| CString::new(*s).unwrap()).collect()
    }

    #[test]
    fn the_run_folder_follows_the_file_prefix() {
        assert_eq!(file_prefix(&c(&["--no-huge", "-l", "0,1"])), "rte");
        assert_eq!(file_prefix(&c(&["--file-prefix", "bd1", "--no-pci"])), "bd1");
        assert_eq!(file_prefix(&c(&["--file-prefix=bd2"])), "bd2");
        assert_eq!(file_prefix(&c(&["--file-prefix=a", "--file-prefix", "b"])), "b", "the last one counts, as in the EAL");
        assert!(runtime_dir(&c(&["--file-prefix=x"])).ends_with("dpdk/x"));
    }
}
