/*
 * The plain C send loop of blast-ref, one lane per TX queue: the same loop
 * the standalone blast-ref runs (examples/ref_sender.c), and the one blast
 * links in as its C lanes for --cross-check (src/tx/c_lane.rs), so the two
 * are one source.
 *
 * The caller owns everything the lane points to and fills the inputs; the
 * lane fills the outputs once it returns. Every mbuf of the pool already
 * holds the frame (the caller wrote the template): per frame the loop
 * writes the lengths, the UDP source port (several flows on the queue), and
 * the probe's stream, sequence number and send time (one TSC read per burst).
 *
 * The layout is mirrored by hand in src/tx/c_lane.rs: ref_lane_size and
 * ref_lane_offsets, checked by a unit test there, keep the two equal.
 */
#ifndef BLASTDROP_REF_LANE_H
#define BLASTDROP_REF_LANE_H

#include <stdint.h>

struct rte_mempool;
struct rte_mbuf;

/* A guarded tx_burst (blast's, for rings a memif peer may unmap): sets
 * *faulted and counts the burst as taken when the ring vanished. */
typedef uint16_t (*ref_guarded_tx)(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, int *faulted);

struct ref_lane {
	/* ---- in ---- */
	struct rte_mempool *pool;
	/* Nonzero: stop (read once per burst). */
	const volatile uint8_t *stop;
	/* The probes' streams, taken round robin from the first: ids, UDP
	 * source ports (host order) and next sequence numbers (advanced as
	 * frames are built; the caller derives the accepted prefix). */
	const uint16_t *ids;
	const uint16_t *ports;
	uint32_t *seqs;
	/* Where the lane publishes its frames and bytes sent once per burst
	 * (relaxed stores; NULL: not published). */
	uint64_t *live_packets;
	uint64_t *live_bytes;
	/* NULL: rte_eth_tx_burst itself. */
	ref_guarded_tx guarded_tx;
	/* Frames to send before returning (UINT64_MAX: until *stop). */
	uint64_t quota;
	/* CLOCK_REALTIME ns at anchor_tsc, and ns per TSC tick. */
	uint64_t anchor_tsc;
	uint64_t anchor_ns;
	double ns_per_cycle;
	/* A gap between two TSC reads longer than this is a stall. */
	uint64_t stall_cycles;
	uint32_t nstreams;
	uint16_t port;
	uint16_t queue;
	uint16_t burst;
	/* Frame length in the mbuf, FCS excluded. */
	uint16_t len;
	/* Nonzero: the streams have different source ports. */
	uint8_t multi_flow;
	/* Nonzero: mbufs moved as they are, nothing written (blast-ref --bare). */
	uint8_t bare;
	uint8_t pad_[2];

	/* ---- out ---- */
	uint64_t sent;        /* frames tx_burst took */
	uint64_t built;       /* frames built (allocated and stamped) */
	uint64_t sends;       /* bursts of new frames */
	uint64_t retries;     /* tx_burst calls that left frames (ring full) */
	uint64_t alloc_failures;
	uint64_t stalls;
	uint64_t stalled_cycles;
	uint64_t longest_stall;
	uint64_t t0, t1;      /* TSC at the loop's start and end */
	uint32_t max_burst;   /* the most frames one burst built */
	int32_t faulted;      /* the ring vanished under a guarded burst */
};

/* The size of struct ref_lane and the offsets of its fields in order
 * (REF_LANE_FIELDS of them), for the Rust mirror's check. */
#define REF_LANE_FIELDS 33
extern const uint64_t ref_lane_size;
extern const uint64_t ref_lane_offsets[REF_LANE_FIELDS];

/* Runs the lane until its quota is sent or *stop; an lcore function. */
int ref_lane_run(void *lane);

#endif
