//! Packet mempools: one per queue, sized from ring, burst and cache
//! (docs/memory.md), made on the port's NUMA node, with an error that says
//! whether memory or a mempool driver was missing; freed when dropped.

use std::ffi::{c_uint, c_void, CString};
use std::ptr::NonNull;

use dpdk_ffi as ffi;

use crate::{Error, Mbuf, MbufLayout, Result};

/// How many mbufs a queue's pool holds, derived from what can be in flight:
///
/// ```text
/// mbufs = 2^k - 1  >=  ring + 2 x burst + 2 x cache
/// ```
///
/// `ring` mbufs can sit in the device ring, a burst in the hands of the
/// lcore (and one more being retried), and up to 1.5 x `cache` in the lcore's
/// mempool cache (rounded up to 2 x for slack). A power of two less one is
/// what the ring-based mempool stores most compactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSizing {
    pub ring: u32,
    pub burst: u32,
    pub cache: u32,
    /// Bytes of packet room per mbuf, headroom included (with `chunk`: what
    /// the chunk leaves, known once the pool is made).
    pub data_room: u32,
    /// Mbufs the driver keeps to itself beyond the ring (net_af_xdp's fill
    /// ring: crate::af_xdp).
    pub held: u32,
    /// Every object exactly this many bytes, unpadded, in one memory chunk
    /// (net_af_xdp's UMEM chunks); None: DPDK's default packet pool.
    pub chunk: Option<u32>,
}

impl PoolSizing {
    pub fn mbufs(&self) -> u32 {
        let need = self.ring + 2 * self.burst + 2 * self.cache + self.held;
        (need + 1).next_power_of_two() - 1
    }

    /// Bytes one mbuf takes in the pool: its mempool object header, struct
    /// rte_mbuf and data room, each rounded to a cache line.
    pub fn bytes_per_mbuf(&self, mbuf_struct: u32) -> u64 {
        if let Some(chunk) = self.chunk {
            return u64::from(chunk);
        }
        let line = u64::from(ffi::RTE_CACHE_LINE_SIZE);
        let round = |n: u64| n.div_ceil(line) * line;
        // rte_mempool_objhdr is one cache line once aligned.
        line + round(u64::from(mbuf_struct)) + round(u64::from(self.data_room))
    }

    /// Total bytes of the pool's objects (the ring that indexes them is extra and small).
    pub fn bytes(&self, mbuf_struct: u32) -> u64 {
        u64::from(self.mbufs()) * self.bytes_per_mbuf(mbuf_struct)
    }
}

/// Why no packet pool can be made at all, if that is so: the mempool
/// driver the mbuf library picks is not registered (the EAL found no
/// librte_mempool_ring in its plugin folder), which DPDK reports as an
/// invalid argument and would read as a memory shortage.
pub fn missing_mempool_driver() -> Option<String> {
    // SAFETY: returns a static string.
    let ops = unsafe { std::ffi::CStr::from_ptr(ffi::bd_mbuf_best_mempool_ops()) };
    // SAFETY: reads the EAL's ops table, filled by constructors before main.
    if unsafe { ffi::bd_mempool_ops_registered(ops.as_ptr()) } == 1 {
        return None;
    }
    let ops = ops.to_string_lossy();
    // An LTS line's ABI is its year plus one (22.11: 23), as in its package names.
    let abi = ffi::BUILT_AGAINST.split('.').next().and_then(|y| y.parse::<u32>().ok()).map_or(String::new(), |y| (y + 1).to_string());
    let dir = std::ffi::CStr::from_bytes_until_nul(ffi::RTE_EAL_PMD_PATH).map_or("unknown".into(), |d| d.to_string_lossy().into_owned());
    Some(format!(
        "no mempool driver {ops:?} is loaded: the EAL found no librte_mempool_ring in its plugin folder ({}); \
         install the package that holds it (Debian and Ubuntu: librte-mempool-ring{abi}) or load it with the EAL option -d PATH",
        dir
    ))
}

/// A packet mbuf pool, freed when dropped.
pub struct Mempool {
    ptr: NonNull<ffi::rte_mempool>,
    name: String,
    mbufs: u32,
    data_room: u32,
}

// SAFETY: DPDK mempools are built for concurrent get/put from many lcores,
// and the handle is freed only when dropped, by its one owner.
unsafe impl Send for Mempool {}
// SAFETY: as above: every operation through &Mempool is one DPDK makes thread-safe.
unsafe impl Sync for Mempool {}

impl Mempool {
    /// Creates a pool sized by `sizing` on NUMA `socket`.
    pub fn create(name: &str, sizing: &PoolSizing, socket: i32) -> Result<Mempool> {
        let cname = CString::new(name).map_err(|_| Error::Other("mempool name contains NUL".into()))?;
        if sizing.data_room > u32::from(u16::MAX) {
            return Err(Error::Other(format!("mbuf data room {} is above DPDK's 65535-byte limit for one segment", sizing.data_room)));
        }
        let cache = sizing.cache.min(ffi::RTE_MEMPOOL_CACHE_MAX_SIZE);
        let n = sizing.mbufs();
        let mut data_room = sizing.data_room as u16;
        let ptr = match sizing.chunk {
            // SAFETY: plain call; returns NULL with rte_errno set on failure.
            None => unsafe { ffi::rte_pktmbuf_pool_create(cname.as_ptr(), n, cache, 0, data_room, socket) },
            // SAFETY: as above; writes the data room through the pointer on success only.
            Some(chunk) => unsafe { ffi::bd_pktmbuf_pool_create_chunked(cname.as_ptr(), n, cache, chunk, socket, &mut data_room) },
        };
        match NonNull::new(ptr) {
            Some(ptr) => Ok(Mempool { ptr, name: name.to_owned(), mbufs: n, data_room: u32::from(data_room) }),
            None => {
                // SAFETY: reads this thread's rte_errno, which the failed call set.
                let code = unsafe { ffi::bd_errno() };
                if let (Some(chunk), libc::EFBIG) = (sizing.chunk, code) {
                    return Err(Error::Other(format!(
                        "cannot create mempool {name} ({n} objects of {chunk} B) in one piece of memory, as net_af_xdp's UMEM needs: \
                         give the EAL more memory (-m, or more hugepages)"
                    )));
                }
                if let Some(missing) = missing_mempool_driver() {
                    return Err(Error::Other(format!("cannot create mempool {name}: {missing}")));
                }
                let mb = sizing.bytes(u32::from(MbufLayout::get().mbuf_size)) as f64 / (1 << 20) as f64;
                Err(Error::Other(format!(
                    "cannot create mempool {name} ({n} mbufs of {} B, about {mb:.1} MiB) on socket {socket}: {}; \
                     give the EAL more memory (-m, or more hugepages)",
                    sizing.data_room,
                    crate::errno_message(code)
                )))
            }
        }
    }

    pub fn as_ptr(&self) -> *mut ffi::rte_mempool {
        self.ptr.as_ptr()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn mbufs(&self) -> u32 {
        self.mbufs
    }

    pub fn data_room(&self) -> u32 {
        self.data_room
    }

    /// Mbufs currently free in the pool (caches included).
    pub fn available(&self) -> u32 {
        // SAFETY: the pool is alive (self borrows it); a read of its counts.
        unsafe { ffi::rte_mempool_avail_count(self.ptr.as_ptr()) }
    }

    /// Calls `f` on every mbuf of the pool, free or not: used to write frame
    /// templates once, so the send path only stamps per-packet fields.
    pub fn for_each_mbuf<F: FnMut(*mut Mbuf)>(&self, mut f: F) {
        extern "C" fn visit<F: FnMut(*mut Mbuf)>(_mp: *mut ffi::rte_mempool, arg: *mut c_void, obj: *mut c_void, _i: c_uint) {
            // SAFETY: `arg` is the &mut F passed below, alive for the whole iteration.
            let f = unsafe { &mut *(arg as *mut F) };
            f(obj as *mut Mbuf);
        }
        // SAFETY: the pool is alive; the callback only touches mbufs of this
        // pool. It returns how many it visited: every one, by definition.
        let _ = unsafe { ffi::rte_mempool_obj_iter(self.ptr.as_ptr(), Some(visit::<F>), &mut f as *mut F as *mut c_void) };
    }
}

impl Drop for Mempool {
    fn drop(&mut self) {
        // A device call given up may still fill a queue from this pool.
        if crate::deadline::wedged() {
            return;
        }
        // SAFETY: no queue uses the pool any more: ports are stopped and closed before pools drop.
        unsafe { ffi::rte_mempool_free(self.ptr.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_rounds_to_power_of_two_less_one() {
        let s = PoolSizing { ring: 1024, burst: 32, cache: 256, data_room: 2176, held: 0, chunk: None };
        assert_eq!(s.mbufs(), 2047);
        let s = PoolSizing { ring: 512, burst: 32, cache: 0, data_room: 2176, held: 0, chunk: None };
        assert_eq!(s.mbufs(), 1023, "576 needed");
        let s = PoolSizing { ring: 1023 - 64 - 512, burst: 32, cache: 256, data_room: 2176, held: 0, chunk: None };
        assert_eq!(s.mbufs(), 1023, "exactly 1023 needed");
    }

    #[test]
    fn bytes_count_header_struct_and_room() {
        let s = PoolSizing { ring: 1024, burst: 32, cache: 256, data_room: 2176, held: 0, chunk: None };
        let line = u64::from(ffi::RTE_CACHE_LINE_SIZE);
        let per = s.bytes_per_mbuf(128);
        assert_eq!(per, line + 128u64.div_ceil(line) * line + 2176u64.div_ceil(line) * line);
        assert_eq!(s.bytes(128), 2047 * per);
    }
}
