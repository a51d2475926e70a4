/* Exported wrappers over DPDK's static inline functions; see shim.h for why. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include "shim.h"

const uint64_t bd_rss_ip = RTE_ETH_RSS_IP;
const uint64_t bd_rss_udp = RTE_ETH_RSS_UDP;
const uint64_t bd_rss_tcp = RTE_ETH_RSS_TCP;
const uint64_t bd_tx_offload_mbuf_fast_free = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
const uint64_t bd_rx_offload_timestamp = RTE_ETH_RX_OFFLOAD_TIMESTAMP;
const uint64_t bd_tx_offload_ipv4_cksum = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
const uint64_t bd_tx_offload_multi_segs = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;

void bd_mbuf_layout(struct bd_mbuf_layout *out)
{
	out->buf_addr = offsetof(struct rte_mbuf, buf_addr);
	out->data_off = offsetof(struct rte_mbuf, data_off);
	out->pkt_len = offsetof(struct rte_mbuf, pkt_len);
	out->data_len = offsetof(struct rte_mbuf, data_len);
	out->nb_segs = offsetof(struct rte_mbuf, nb_segs);
	out->mbuf_size = sizeof(struct rte_mbuf);
	out->headroom = RTE_PKTMBUF_HEADROOM;
	out->buf_len = offsetof(struct rte_mbuf, buf_len);
}

int bd_link_get(uint16_t port, struct bd_link *out)
{
	struct rte_eth_link l;
	int rc;

	memset(&l, 0, sizeof(l));
	rc = rte_eth_link_get_nowait(port, &l);
	out->speed_mbps = l.link_speed;
	out->up = l.link_status == RTE_ETH_LINK_UP;
	out->full_duplex = l.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
	return rc;
}

uint16_t bd_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, queue, pkts, n);
}

uint16_t bd_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, queue, pkts, n);
}

void bd_pktmbuf_free_bulk(struct rte_mbuf **mbufs, unsigned int n)
{
	struct rte_mbuf *pending[64];
	struct rte_mempool *mp = NULL;
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = mbufs[i];
		if (unlikely(m->nb_segs > 1)) {
			rte_pktmbuf_free(m);
			continue;
		}
		m = rte_pktmbuf_prefree_seg(m);
		if (m == NULL)
			continue;
		if (m->pool != mp || k == RTE_DIM(pending)) {
			if (k > 0)
				rte_mempool_put_bulk(mp, (void **)pending, k);
			mp = m->pool;
			k = 0;
		}
		pending[k++] = m;
	}
	if (k > 0)
		rte_mempool_put_bulk(mp, (void **)pending, k);
}

int bd_pktmbuf_alloc_bulk(struct rte_mempool *pool, struct rte_mbuf **mbufs, unsigned int n)
{
	return rte_pktmbuf_alloc_bulk(pool, mbufs, n);
}

int bd_mempool_get_bulk(struct rte_mempool *pool, struct rte_mbuf **mbufs, unsigned int n)
{
	return rte_mempool_get_bulk(pool, (void **)mbufs, n);
}

const uint64_t bd_mbuf_f_external = RTE_MBUF_F_EXTERNAL;

void bd_pktmbuf_reset(struct rte_mbuf *m)
{
	rte_pktmbuf_reset(m);
}

struct rte_mbuf *bd_pktmbuf_alloc(struct rte_mempool *pool)
{
	return rte_pktmbuf_alloc(pool);
}

void bd_pktmbuf_free(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

uint16_t bd_mbuf_refcnt_read(const struct rte_mbuf *m)
{
	return rte_mbuf_refcnt_read(m);
}

uint16_t bd_mbuf_refcnt_update(struct rte_mbuf *m, int16_t delta)
{
	return rte_mbuf_refcnt_update(m, delta);
}

void *bd_mbuf_data(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, void *);
}

uint16_t bd_mbuf_data_len(const struct rte_mbuf *m)
{
	return m->data_len;
}

uint32_t bd_mbuf_pkt_len(const struct rte_mbuf *m)
{
	return m->pkt_len;
}

uint16_t bd_mbuf_nb_segs(const struct rte_mbuf *m)
{
	return m->nb_segs;
}

void bd_mbuf_set_len(struct rte_mbuf *m, uint16_t len)
{
	m->data_len = len;
	m->pkt_len = len;
}

int bd_mempool_ops_registered(const char *name)
{
	unsigned int i;

	for (i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, name) == 0)
			return 1;
	return 0;
}

const char *bd_mbuf_best_mempool_ops(void)
{
	return rte_mbuf_best_mempool_ops();
}

/* Frees a chunked pool's memzone when the pool goes. */
static void bd_free_memzone(struct rte_mempool_memhdr *memhdr, void *opaque)
{
	(void)memhdr;
	rte_memzone_free((const struct rte_memzone *)opaque);
}

struct rte_mempool *bd_pktmbuf_pool_create_chunked(const char *name, unsigned int n, unsigned int cache_size,
						   unsigned int chunk, int socket_id, uint16_t *data_room)
{
	const unsigned int flags = RTE_MEMPOOL_F_NO_SPREAD;
	struct rte_mempool_objsz sz;
	rte_mempool_calc_obj_size(sizeof(struct rte_mbuf), flags, &sz);
	unsigned int around = sz.header_size + sz.trailer_size + sizeof(struct rte_mbuf);
	if (chunk <= around + RTE_PKTMBUF_HEADROOM || chunk - around > UINT16_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	uint16_t room = (uint16_t)(chunk - around);
	unsigned int elt = sizeof(struct rte_mbuf) + room;
	if (rte_mempool_calc_obj_size(elt, flags, NULL) != chunk) {
		rte_errno = EINVAL;
		return NULL;
	}
	struct rte_pktmbuf_pool_private priv = { .mbuf_data_room_size = room, .mbuf_priv_size = 0 };
	struct rte_mempool *mp = rte_mempool_create_empty(name, n, elt, cache_size, sizeof(priv), socket_id, flags);
	if (mp == NULL)
		return NULL;
	int ret = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (ret != 0) {
		rte_mempool_free(mp);
		rte_errno = -ret;
		return NULL;
	}
	rte_pktmbuf_pool_init(mp, &priv);
	/* One memzone aligned to the chunk: the first object starts at the
	 * memory's first byte. DPDK's default populate may begin the objects a
	 * partial page in (an object may not straddle a page), and net_af_xdp
	 * on 22.11 registers count x chunk bytes from the page below the
	 * memory's start: the last object's tail then lies outside the UMEM
	 * and the kernel drops, without a count, every frame that reaches it. */
	char mz_name[RTE_MEMZONE_NAMESIZE];
	snprintf(mz_name, sizeof(mz_name), "mz_%s", name);
	const struct rte_memzone *mz = rte_memzone_reserve_aligned(mz_name, (size_t)n * chunk, socket_id, 0, chunk);
	if (mz == NULL) {
		int err = rte_errno;
		rte_mempool_free(mp);
		rte_errno = err == ENOMEM || err == ENOSPC ? EFBIG : err;
		return NULL;
	}
	ret = rte_mempool_populate_virt(mp, mz->addr, mz->len, chunk, bd_free_memzone, (void *)(uintptr_t)mz);
	if (ret < 0 || (unsigned int)ret != n) {
		if (ret < 0)
			rte_memzone_free(mz);
		rte_mempool_free(mp);
		rte_errno = ret < 0 ? -ret : EFBIG;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	*data_room = room;
	return mp;
}

int bd_rx_timestamp_register(int *field_offset, uint64_t *rx_flag)
{
	return rte_mbuf_dyn_rx_timestamp_register(field_offset, rx_flag);
}

unsigned int bd_lcore_id(void)
{
	return rte_lcore_id();
}

int bd_errno(void)
{
	return rte_errno;
}

uint64_t bd_rdtsc(void)
{
	return rte_rdtsc();
}

/* A copy of what DPDK logs, for facts only its logs tell (ENA's TX
 * placement: LLQ or not). Everything still goes to stderr. Writes come
 * under the FILE's own lock, so lines from several threads do not mix. */
static char bd_log_buf[1 << 16];
static size_t bd_log_len;

static ssize_t bd_log_write(void *cookie, const char *buf, size_t size)
{
	size_t room = sizeof(bd_log_buf) - 1 - bd_log_len;
	size_t n = size < room ? size : room;

	(void)cookie;
	memcpy(bd_log_buf + bd_log_len, buf, n);
	bd_log_len += n;
	bd_log_buf[bd_log_len] = '\0';
	fwrite(buf, 1, size, stderr);
	fflush(stderr);
	return (ssize_t)size;
}

int bd_log_tee_start(void)
{
	cookie_io_functions_t io = { .read = NULL, .write = bd_log_write, .seek = NULL, .close = NULL };
	FILE *f = fopencookie(NULL, "w", io);

	if (f == NULL)
		return -1;
	setvbuf(f, NULL, _IOLBF, 0);
	return rte_openlog_stream(f);
}

size_t bd_log_copy(char *out, size_t cap)
{
	size_t n = bd_log_len < cap ? bd_log_len : cap;

	memcpy(out, bd_log_buf, n);
	return n;
}

/* ---- Guarded bursts (see shim.h) ---- */

#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <rte_alarm.h>

/* Set only while this thread is inside a guarded burst. */
static __thread sigjmp_buf *bd_guard;
static struct sigaction bd_prev_segv, bd_prev_bus;
static int bd_guard_installed;

static void bd_fault_handler(int sig, siginfo_t *si, void *ctx)
{
	sigjmp_buf *env = bd_guard;
	struct sigaction *prev;

	if (env != NULL) {
		bd_guard = NULL;
		siglongjmp(*env, 1);
	}
	/* Not ours: whoever handled it before (Rust's stack-overflow report),
	 * or the default action once this handler returns and the access
	 * faults again. */
	prev = sig == SIGSEGV ? &bd_prev_segv : &bd_prev_bus;
	if ((prev->sa_flags & SA_SIGINFO) && prev->sa_sigaction != NULL) {
		prev->sa_sigaction(sig, si, ctx);
		return;
	}
	if (prev->sa_handler == SIG_IGN)
		return;
	if (prev->sa_handler != SIG_DFL && prev->sa_handler != NULL) {
		prev->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
}

int bd_fault_guard_install(void)
{
	struct sigaction sa;

	if (__atomic_exchange_n(&bd_guard_installed, 1, __ATOMIC_SEQ_CST))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bd_fault_handler;
	/* SA_NODEFER: the signal is not left blocked after the jump out.
	 * SA_ONSTACK: a stack overflow still gets an alternate stack. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &bd_prev_segv) != 0)
		return -1;
	if (sigaction(SIGBUS, &sa, &bd_prev_bus) != 0)
		return -1;
	return 0;
}

uint16_t bd_rx_burst_guarded(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, int *faulted)
{
	sigjmp_buf env;
	uint16_t got;
	/* Read after the jump back: volatile, so it is not a register the burst
	 * reused (aarch64's gcc warned that it may be clobbered). */
	int *volatile fault_flag = faulted;

	if (sigsetjmp(env, 0) != 0) {
		/* Whatever the burst had taken before the fault is lost with it. */
		*fault_flag = 1;
		return 0;
	}
	bd_guard = &env;
	got = rte_eth_rx_burst(port, queue, pkts, n);
	bd_guard = NULL;
	return got;
}

uint16_t bd_tx_burst_guarded(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, int *faulted)
{
	sigjmp_buf env;
	uint16_t sent;
	/* Read after the jump back: volatile, so they are not registers the
	 * burst reused (aarch64's gcc warned that n may be clobbered: the
	 * caller would then have been told a wrong number of frames taken). */
	volatile uint16_t offered = n;
	int *volatile fault_flag = faulted;

	if (sigsetjmp(env, 0) != 0) {
		/* Frames the device may or may not have taken: the caller frees
		 * none of them (a leak of at most one burst beats a double free). */
		*fault_flag = 1;
		return offered;
	}
	bd_guard = &env;
	sent = rte_eth_tx_burst(port, queue, pkts, n);
	bd_guard = NULL;
	return sent;
}

/* ---- Work on the interrupt thread (see shim.h) ---- */

enum { BD_JOB_PENDING, BD_JOB_RUNNING, BD_JOB_DONE, BD_JOB_TAKEN_BACK };

struct bd_intr_job {
	void (*fn)(void *);
	void *arg;
	int state;
};

static void bd_intr_job_run(void *p)
{
	struct bd_intr_job *job = p;
	int expected = BD_JOB_PENDING;

	if (!__atomic_compare_exchange_n(&job->state, &expected, BD_JOB_RUNNING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* The caller gave up waiting and ran it itself: the job is ours to free. */
		free(job);
		return;
	}
	job->fn(job->arg);
	__atomic_store_n(&job->state, BD_JOB_DONE, __ATOMIC_RELEASE);
}

int bd_run_on_intr_thread(void (*fn)(void *), void *arg, unsigned int timeout_ms)
{
	struct bd_intr_job *job = malloc(sizeof(*job));
	uint64_t hz = rte_get_tsc_hz(), until;
	int expected = BD_JOB_PENDING;

	if (job == NULL) {
		fn(arg);
		return 1;
	}
	job->fn = fn;
	job->arg = arg;
	job->state = BD_JOB_PENDING;
	if (rte_eal_alarm_set(1, bd_intr_job_run, job) != 0) {
		free(job);
		fn(arg);
		return 1;
	}
	until = rte_rdtsc() + hz / 1000 * timeout_ms;
	while (rte_rdtsc() < until) {
		if (__atomic_load_n(&job->state, __ATOMIC_ACQUIRE) == BD_JOB_DONE) {
			free(job);
			return 0;
		}
		rte_delay_us_sleep(200);
	}
	if (__atomic_compare_exchange_n(&job->state, &expected, BD_JOB_TAKEN_BACK, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* Never started there: cancel it, or let the alarm free it. */
		if (rte_eal_alarm_cancel(bd_intr_job_run, job) > 0)
			free(job);
		fn(arg);
		return 1;
	}
	/* Running there now: wait for it to finish. */
	while (__atomic_load_n(&job->state, __ATOMIC_ACQUIRE) != BD_JOB_DONE)
		rte_delay_us_sleep(200);
	free(job);
	return 0;
}

unsigned int bd_lcore_cpus(unsigned int lcore, uint32_t *out, unsigned int cap)
{
	if (lcore >= RTE_MAX_LCORE)
		return 0;
	rte_cpuset_t set = rte_lcore_cpuset(lcore);
	unsigned int n = 0;
	for (unsigned int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &set)) {
			if (n < cap)
				out[n] = c;
			n++;
		}
	}
	return n;
}
