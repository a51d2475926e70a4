/*
 * The plain C send loop (see ref_lane.h): DPDK's skeleton, plus the probe.
 */
#include <string.h>
#include <arpa/inet.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_byteorder.h>

#include "ref_lane.h"

#define HDRS (14 + 20 + 8)
#define BURST_MAX 512

#include <stddef.h>

const uint64_t ref_lane_size = sizeof(struct ref_lane);
#define OFF(f) offsetof(struct ref_lane, f)
const uint64_t ref_lane_offsets[REF_LANE_FIELDS] = {
	OFF(pool),
	OFF(stop),
	OFF(ids),
	OFF(ports),
	OFF(seqs),
	OFF(live_packets),
	OFF(live_bytes),
	OFF(guarded_tx),
	OFF(quota),
	OFF(anchor_tsc),
	OFF(anchor_ns),
	OFF(ns_per_cycle),
	OFF(stall_cycles),
	OFF(nstreams),
	OFF(port),
	OFF(queue),
	OFF(burst),
	OFF(len),
	OFF(multi_flow),
	OFF(bare),
	OFF(pad_),
	OFF(sent),
	OFF(built),
	OFF(sends),
	OFF(retries),
	OFF(alloc_failures),
	OFF(stalls),
	OFF(stalled_cycles),
	OFF(longest_stall),
	OFF(t0),
	OFF(t1),
	OFF(max_burst),
	OFF(faulted)
};

/* A stall: the loop stood still between two TSC reads (the host took the
 * CPU). Counted as blast's lanes count them. */
static inline void ref_watch(struct ref_lane *l, uint64_t *last, uint64_t now)
{
	uint64_t gap = now - *last;
	*last = now;
	if (gap > l->stall_cycles && gap < UINT64_MAX / 2) {
		l->stalls++;
		l->stalled_cycles += gap;
		if (gap > l->longest_stall)
			l->longest_stall = gap;
	}
}

static inline void ref_publish(struct ref_lane *l, uint64_t sent)
{
	if (l->live_packets != NULL) {
		__atomic_store_n(l->live_packets, sent, __ATOMIC_RELAXED);
		__atomic_store_n(l->live_bytes, sent * (uint64_t)(l->len + 4), __ATOMIC_RELAXED);
	}
}

int ref_lane_run(void *arg)
{
	struct ref_lane *l = arg;
	struct rte_mbuf *pkts[BURST_MAX];
	/* The loop's inputs in locals: the frames' bytes, written through
	 * char pointers, may alias anything in *l, so fields read per frame
	 * would be read again after every write. */
	const uint16_t *ids = l->ids, *ports = l->ports;
	uint32_t *seqs = l->seqs;
	const volatile uint8_t *stop = l->stop;
	struct rte_mempool *pool = l->pool;
	const uint32_t nstreams = l->nstreams;
	const int multi = l->multi_flow, bare = l->bare;
	const uint16_t port = l->port, queue = l->queue, len = l->len;
	const uint16_t burst = l->burst == 0 ? 1 : l->burst > BURST_MAX ? BURST_MAX : l->burst;
	const uint64_t anchor_tsc = l->anchor_tsc, anchor_ns = l->anchor_ns;
	const double ns_per_cycle = l->ns_per_cycle;
	const ref_guarded_tx guarded_tx = l->guarded_tx;
	uint16_t head = 0, tail = 0;
	uint32_t s = 0;
	uint64_t remaining = l->quota, last, sent = 0;

	l->t0 = last = rte_rdtsc();
	while (!*stop) {
		if (head == tail) {
			uint16_t n = remaining < burst ? (uint16_t)remaining : burst;
			uint64_t tsc;
			if (n == 0)
				break;
			if (bare) {
				if (rte_mempool_get_bulk(pool, (void **)pkts, n) != 0) {
					l->alloc_failures++;
					continue;
				}
				goto built;
			}
			if (rte_pktmbuf_alloc_bulk(pool, pkts, n) != 0) {
				l->alloc_failures++;
				continue;
			}
			tsc = rte_rdtsc();
			ref_watch(l, &last, tsc);
			tsc = rte_cpu_to_be_64(anchor_ns + (uint64_t)((double)(tsc - anchor_tsc) * ns_per_cycle));
			for (uint16_t i = 0; i < n; i++) {
				uint8_t *p = rte_pktmbuf_mtod(pkts[i], uint8_t *);
				uint16_t id = htons(ids[s]);
				uint32_t seq = htonl(seqs[s]++);
				pkts[i]->data_len = len;
				pkts[i]->pkt_len = len;
				if (multi) {
					uint16_t sport = htons(ports[s]);
					memcpy(p + 34, &sport, 2);
				}
				memcpy(p + HDRS + 4, &id, 2);
				memcpy(p + HDRS + 6, &seq, 4);
				memcpy(p + HDRS + 10, &tsc, 8);
				if (++s == nstreams)
					s = 0;
			}
built:
			head = 0;
			tail = n;
			remaining -= n;
			l->built += n;
			l->sends++;
			if (n > l->max_burst)
				l->max_burst = n;
			ref_publish(l, sent);
		}
		uint16_t took;
		if (guarded_tx != NULL) {
			int faulted = 0;
			took = guarded_tx(port, queue, pkts + head, tail - head, &faulted);
			if (faulted) {
				/* The device may hold any of them: none is freed or counted. */
				l->faulted = 1;
				head = tail;
				break;
			}
		} else {
			took = rte_eth_tx_burst(port, queue, pkts + head, tail - head);
		}
		head += took;
		sent += took;
		if (head < tail) {
			/* Ring full: waiting on the device, not a stall. */
			l->retries++;
			ref_watch(l, &last, rte_rdtsc());
		}
	}
	if (head < tail)
		rte_pktmbuf_free_bulk(pkts + head, tail - head);
	l->t1 = rte_rdtsc();
	l->sent = sent;
	ref_publish(l, sent);
	return 0;
}
