/*
 * blastdrop's C shim over DPDK.
 *
 * DPDK implements its data-path entry points (rx/tx burst, mbuf alloc and
 * free, rte_lcore_id, rte_errno, rte_rdtsc) as static inline functions, which
 * bindgen cannot link against. This file gives each of them an exported
 * symbol. It also hides the layout of struct rte_mbuf: 24.11 moved data_off,
 * refcnt and the lengths into anonymous unions, so Rust reads mbuf fields
 * only through these functions, or through the byte offsets that
 * bd_mbuf_layout() reports for the hot path.
 */
#ifndef BLASTDROP_SHIM_H
#define BLASTDROP_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <rte_config.h>
#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_launch.h>
#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mbuf_dyn.h>
#include <rte_ethdev.h>
#include <rte_dev.h>
#include <rte_version.h>
#include <rte_log.h>

/* Byte offsets of the struct rte_mbuf fields the hot path touches, and the
 * size of each length field, as compiled against this DPDK. */
struct bd_mbuf_layout {
	uint16_t buf_addr;
	uint16_t data_off;
	uint16_t pkt_len;
	uint16_t data_len;
	uint16_t nb_segs;
	uint16_t mbuf_size;
	uint16_t headroom;
	uint16_t buf_len;
};

void bd_mbuf_layout(struct bd_mbuf_layout *out);

/* The same offsets as compile-time constants (bindgen evaluates the
 * enumerators): the hot loops index mbufs with immediates, where offsets
 * read at run time would each hold a register through the per-frame loop. */
enum bd_mbuf_offset {
	BD_MBUF_BUF_ADDR = offsetof(struct rte_mbuf, buf_addr),
	BD_MBUF_DATA_OFF = offsetof(struct rte_mbuf, data_off),
	BD_MBUF_PKT_LEN = offsetof(struct rte_mbuf, pkt_len),
	BD_MBUF_DATA_LEN = offsetof(struct rte_mbuf, data_len),
	BD_MBUF_BUF_LEN = offsetof(struct rte_mbuf, buf_len),
	BD_MBUF_SIZE = sizeof(struct rte_mbuf),
	BD_MBUF_HEADROOM = RTE_PKTMBUF_HEADROOM,
	BD_MBUF_NEXT = offsetof(struct rte_mbuf, next),
	BD_MBUF_TX_OFFLOAD = offsetof(struct rte_mbuf, tx_offload),
	BD_MBUF_VLAN_TCI = offsetof(struct rte_mbuf, vlan_tci),
	BD_MBUF_VLAN_TCI_OUTER = offsetof(struct rte_mbuf, vlan_tci_outer),
	BD_MBUF_NB_SEGS = offsetof(struct rte_mbuf, nb_segs),
	BD_MBUF_PORT = offsetof(struct rte_mbuf, port),
	BD_MBUF_OL_FLAGS = offsetof(struct rte_mbuf, ol_flags),
	BD_MBUF_PACKET_TYPE = offsetof(struct rte_mbuf, packet_type),
};

/* DPDK builds these flags from RTE_BIT64(), which bindgen (without a recent
 * libclang's macro fallback) does not emit; the shim exports their values. */
extern const uint64_t bd_rss_ip;
extern const uint64_t bd_rss_udp;
extern const uint64_t bd_rss_tcp;
extern const uint64_t bd_tx_offload_mbuf_fast_free;
extern const uint64_t bd_rx_offload_timestamp;
extern const uint64_t bd_tx_offload_ipv4_cksum;
extern const uint64_t bd_tx_offload_multi_segs;

uint16_t bd_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t bd_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);

int bd_pktmbuf_alloc_bulk(struct rte_mempool *pool, struct rte_mbuf **mbufs, unsigned int n);
/* The mempool half of rte_pktmbuf_alloc_bulk: mbufs as the pool keeps
 * them, for a caller that resets each one in its own pass over them. */
int bd_mempool_get_bulk(struct rte_mempool *pool, struct rte_mbuf **mbufs, unsigned int n);
void bd_pktmbuf_reset(struct rte_mbuf *m);
extern const uint64_t bd_mbuf_f_external;
/* rte_pktmbuf_free_bulk's work, built here with DPDK's inline functions:
 * no call into librte_mbuf, whose shared-object TLS reads (the mempool
 * cache lookup) go through __tls_get_addr. */
void bd_pktmbuf_free_bulk(struct rte_mbuf **mbufs, unsigned int n);
struct rte_mbuf *bd_pktmbuf_alloc(struct rte_mempool *pool);
void bd_pktmbuf_free(struct rte_mbuf *m);
uint16_t bd_mbuf_refcnt_read(const struct rte_mbuf *m);
uint16_t bd_mbuf_refcnt_update(struct rte_mbuf *m, int16_t delta);

void *bd_mbuf_data(struct rte_mbuf *m);
uint16_t bd_mbuf_data_len(const struct rte_mbuf *m);
uint32_t bd_mbuf_pkt_len(const struct rte_mbuf *m);
uint16_t bd_mbuf_nb_segs(const struct rte_mbuf *m);
/* Sets a single-segment mbuf's data and packet length. */
void bd_mbuf_set_len(struct rte_mbuf *m, uint16_t len);

/* Bursts that survive a device unmapping its rings under them. net_memif
 * unmaps the shared rings on the EAL interrupt thread when its peer leaves
 * (memif_disconnect -> memif_free_regions), with no guard against an lcore
 * that is inside a burst at that moment. A SIGSEGV or SIGBUS raised inside a
 * guarded burst returns 0 with *faulted set instead of killing the process;
 * a fault anywhere else goes to the handler that was there before. Costs a
 * sigsetjmp (no system call) per burst: used for memif ports only. */
int bd_fault_guard_install(void);
uint16_t bd_rx_burst_guarded(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, int *faulted);
uint16_t bd_tx_burst_guarded(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, int *faulted);

/* Runs fn(arg) on the EAL interrupt thread and waits for it (up to
 * timeout_ms, then runs it here). memif connects and disconnects on that
 * thread; stopping, starting or closing a memif port there too means the
 * two never overlap (they free the same regions: "Invalid memory").
 * Returns 0 when it ran there, 1 when it ran on the calling thread. */
int bd_run_on_intr_thread(void (*fn)(void *), void *arg, unsigned int timeout_ms);

/* The link's state without waiting. 24.11 moved struct rte_eth_link's
 * fields into an anonymous union (with a 64-bit view for atomic reads):
 * reading them here keeps Rust off the layout. Returns rte_eth_link_get_nowait's. */
struct bd_link {
	uint32_t speed_mbps;
	uint8_t up;
	uint8_t full_duplex;
};
int bd_link_get(uint16_t port, struct bd_link *out);

/* Whether a mempool driver (ops) named `name` is registered: the EAL
 * loads them from its plugin folder (librte_mempool_ring: "ring_mp_mc"). */
int bd_mempool_ops_registered(const char *name);
/* The ops name rte_pktmbuf_pool_create uses. */
const char *bd_mbuf_best_mempool_ops(void);
/* A packet pool whose every object (header, mbuf, data room) is exactly
 * `chunk` bytes, without DPDK's channel-spreading pad, in one memzone
 * aligned to the chunk, the first object at its first byte: what
 * net_af_xdp can register as its UMEM with no object outside it (a chunk
 * that divides the page size never straddles a page, so the objects lie
 * evenly spaced). Writes the data room it gave each mbuf to *data_room.
 * NULL with rte_errno set on failure: EINVAL (chunk too small or not
 * reachable), EFBIG (no memory for the pool in one piece), or what DPDK's
 * calls set. */
struct rte_mempool *bd_pktmbuf_pool_create_chunked(const char *name, unsigned int n, unsigned int cache_size,
						   unsigned int chunk, int socket_id, uint16_t *data_room);
/* The Rx timestamp's mbuf dynamic field and flag (registered once per
 * process; a PMD that offers the offload registers the same pair). */
int bd_rx_timestamp_register(int *field_offset, uint64_t *rx_flag);

unsigned int bd_lcore_id(void);

/* The CPUs in lcore `lcore`'s cpuset (rte_lcore_cpuset, declared only under
 * _GNU_SOURCE, which bindgen does not see), the first `cap` into `out`;
 * returns how many there are (0 for an lcore out of range). */
unsigned int bd_lcore_cpus(unsigned int lcore, uint32_t *out, unsigned int cap);
int bd_errno(void);
uint64_t bd_rdtsc(void);


/* DPDK's log, teed: to stderr as usual, and into a buffer (the first
 * 64 KiB) that bd_log_copy reads back. Start it before rte_eal_init. */
int bd_log_tee_start(void);
size_t bd_log_copy(char *out, size_t cap);
#endif
