/*
 * blast-ref: a plain C reference sender, to cross-check blast's figures.
 *
 * It sends the same frames as blast (Ethernet/IPv4/UDP, UDP source port
 * per flow, flows split over queues the same way, blastdrop's 18-byte probe
 * header stamped per packet: stream, sequence, and the wall-clock time of
 * the burst from one TSC read per burst), so drop counts it
 * exactly like blast, and it prints the same summary fields. DPDK only.
 * Its send loop is ref_lane.c, the one blast links in as its C lanes
 * (blast --cross-check): one source for both.
 *
 *   blast-ref [EAL args] -- [--port ID] [--queues N] [--size B] [--flows K]
 *             [--count N | --duration S] [--burst B] [--dst-mac M]
 *             [--src-ip A] [--dst-ip A] [--src-port P] [--dst-port P] [--bare]
 *
 * --bare is the benchmark's ceiling of the PMD itself: mbufs taken from the
 * pool in bulk as they are (no reset, nothing written) and handed to
 * tx_burst. Its frames are whatever the pool holds: for net_null only.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "ref_lane.h"

#define PROBE_MAGIC 0x42445031u /* "BDP1" */
#define HDRS (14 + 20 + 8)
#define MAX_Q 128
#define MAX_STREAMS_PER_Q 4096

static volatile uint8_t stop;
/* This run's id, in every frame's IPv4 identification (as blast does), so
 * a receiver that outlives the run starts its streams afresh for the next. */
static uint16_t run_id;
static struct {
	uint16_t port, queues, burst, src_port, dst_port;
	uint32_t size, flows;
	int bare;
	uint64_t count;
	double duration;
	struct rte_ether_addr src_mac, dst_mac;
	uint32_t src_ip, dst_ip;
} cfg = { 0, 1, 32, 1024, 9, 64, 0, 0, 0, 0, {{0}}, {{2, 0, 0, 0, 0, 2}}, 0, 0 };

/* A lane and its streams' ids, source ports and sequence numbers. */
struct ref_queue {
	struct ref_lane lane;
	uint16_t ids[MAX_STREAMS_PER_Q], ports[MAX_STREAMS_PER_Q];
	uint32_t seqs[MAX_STREAMS_PER_Q];
} __rte_cache_aligned;
static struct ref_queue lanes[MAX_Q];

static void on_signal(int sig) { (void)sig; stop = 1; }

static void die(const char *msg) { fprintf(stderr, "blast-ref: error: %s\n", msg); exit(2); }

/* Writes the frame template for a queue's first stream into every mbuf. */
static void write_template(struct rte_mempool *mp, void *arg, void *obj, unsigned i)
{
	struct ref_queue *l = arg;
	struct rte_mbuf *m = obj;
	uint8_t *p = (uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM;
	uint16_t len = cfg.size - 4;
	struct rte_ether_hdr *eth = (void *)p;
	struct rte_ipv4_hdr *ip = (void *)(p + 14);
	struct rte_udp_hdr *udp = (void *)(p + 34);
	uint32_t magic = htonl(PROBE_MAGIC);
	(void)mp; (void)i;
	memset(p, 0, len);
	eth->dst_addr = cfg.dst_mac;
	eth->src_addr = cfg.src_mac;
	eth->ether_type = htons(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = htons(len - 14);
	ip->packet_id = htons(run_id);
	ip->fragment_offset = htons(0x4000);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = cfg.src_ip;
	ip->dst_addr = cfg.dst_ip;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = htons(l->ports[0]);
	udp->dst_port = htons(cfg.dst_port);
	udp->dgram_len = htons(len - 34);
	memcpy(p + HDRS, &magic, 4);
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", 1, 0, 'p'}, {"queues", 1, 0, 'q'}, {"size", 1, 0, 's'}, {"flows", 1, 0, 'f'},
		{"count", 1, 0, 'c'}, {"duration", 1, 0, 'd'}, {"burst", 1, 0, 'b'}, {"dst-mac", 1, 0, 'm'},
		{"src-ip", 1, 0, 'i'}, {"dst-ip", 1, 0, 'j'}, {"src-port", 1, 0, 'r'}, {"dst-port", 1, 0, 't'},
		{"bare", 0, 0, 'x'}, {0, 0, 0, 0}};
	int c;
	struct in_addr a;
	inet_pton(AF_INET, "198.18.0.1", &a); cfg.src_ip = a.s_addr;
	inet_pton(AF_INET, "198.18.0.2", &a); cfg.dst_ip = a.s_addr;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': cfg.port = atoi(optarg); break;
		case 'q': cfg.queues = atoi(optarg); break;
		case 's': cfg.size = atoi(optarg); break;
		case 'f': cfg.flows = atoi(optarg); if (cfg.flows == 0) die("--flows must be at least 1"); break;
		case 'c': cfg.count = strtoull(optarg, NULL, 10); break;
		case 'd': cfg.duration = atof(optarg); break;
		case 'b': cfg.burst = atoi(optarg); break;
		case 'm': if (rte_ether_unformat_addr(optarg, &cfg.dst_mac)) die("bad --dst-mac"); break;
		case 'i': if (inet_pton(AF_INET, optarg, &a) != 1) die("bad --src-ip"); cfg.src_ip = a.s_addr; break;
		case 'j': if (inet_pton(AF_INET, optarg, &a) != 1) die("bad --dst-ip"); cfg.dst_ip = a.s_addr; break;
		case 'r': cfg.src_port = atoi(optarg); break;
		case 't': cfg.dst_port = atoi(optarg); break;
		case 'x': cfg.bare = 1; break;
		default: die("unknown option (see the comment at the top of examples/ref_sender.c)");
		}
	}
	if (cfg.size < 64) die("--size is below the Ethernet minimum of 64 bytes (FCS included)");
	if (cfg.queues == 0 || cfg.queues > MAX_Q) die("--queues must be from 1 to 128");
	if (cfg.burst == 0 || cfg.burst > 512) die("--burst must be from 1 to 512");
	if (cfg.flows == 0) cfg.flows = cfg.queues;
	if (cfg.count == 0 && cfg.duration <= 0) cfg.duration = 10;
}

int main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv);
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	struct rte_mempool *rxpool;
	unsigned lcore;
	uint64_t hz, sent = 0, retries = 0, busy = 0, t0 = UINT64_MAX, t1 = 0;
	uint32_t streams;
	char name[32];

	if (n < 0) die("the DPDK EAL failed to start (see above)");
	parse(argc - n, argv + n);
	run_id = (uint16_t)((rte_rdtsc() ^ ((uint64_t)getpid() << 7)) * 0x9e3779b97f4a7c15ULL >> 48);
	if (run_id == 0)
		run_id = 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!rte_eth_dev_is_valid_port(cfg.port)) die("no such --port");
	if (rte_lcore_count() < (unsigned)cfg.queues + 1u) die("give one more lcore than --queues (-l)");
	rte_eth_dev_info_get(cfg.port, &info);
	if (cfg.queues > info.max_tx_queues) die("more --queues than the device has");
	rte_eth_macaddr_get(cfg.port, &cfg.src_mac);
	if (cfg.size - 18 > 1500) conf.rxmode.mtu = cfg.size - 18;
	if (rte_eth_dev_configure(cfg.port, cfg.queues, cfg.queues, &conf) < 0) die("cannot configure the port");
	rxpool = rte_pktmbuf_pool_create("ref_rx", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_eth_dev_socket_id(cfg.port));
	streams = cfg.flows > cfg.queues ? cfg.flows : cfg.queues;
	for (uint16_t q = 0; q < cfg.queues; q++) {
		struct ref_queue *l = &lanes[q];
		struct ref_lane *lane = &l->lane;
		lane->port = cfg.port;
		lane->queue = q;
		lane->burst = cfg.burst;
		lane->len = cfg.size - 4;
		lane->bare = cfg.bare;
		lane->stop = &stop;
		lane->ids = l->ids;
		lane->ports = l->ports;
		lane->seqs = l->seqs;
		for (uint32_t id = q; id < streams && lane->nstreams < MAX_STREAMS_PER_Q; id += cfg.queues) {
			l->ids[lane->nstreams] = id;
			l->ports[lane->nstreams++] = cfg.src_port + id % cfg.flows;
		}
		lane->multi_flow = lane->nstreams > 1 && cfg.flows > 1;
		lane->quota = cfg.count ? cfg.count / cfg.queues + (q < cfg.count % cfg.queues) : UINT64_MAX;
		snprintf(name, sizeof(name), "ref_tx_%u", q);
		lane->pool = rte_pktmbuf_pool_create(name, 2047, 256, 0,
				RTE_ALIGN_CEIL(RTE_PKTMBUF_HEADROOM + cfg.size - 4, 64), rte_eth_dev_socket_id(cfg.port));
		if (!lane->pool || !rxpool) die("cannot create mempools: give the EAL more memory (-m)");
		rte_mempool_obj_iter(lane->pool, write_template, l);
		if (rte_eth_tx_queue_setup(cfg.port, q, 1024, rte_eth_dev_socket_id(cfg.port), NULL) < 0 ||
		    rte_eth_rx_queue_setup(cfg.port, q, 1024, rte_eth_dev_socket_id(cfg.port), NULL, rxpool) < 0)
			die("cannot set up queues");
	}
	if (rte_eth_dev_start(cfg.port) < 0) die("cannot start the port");
	for (int i = 0; i < 1000; i++) {
		struct rte_eth_link link;
		rte_eth_link_get_nowait(cfg.port, &link);
		if (link.link_status) break;
		rte_delay_ms(10);
	}
	printf("blast-ref: port %u, %u queue(s), %u B frames (FCS incl.), %u flow(s), unpaced%s; sender-side figures\n",
	       cfg.port, cfg.queues, cfg.size, cfg.flows, cfg.bare ? ", bare (mbufs moved, nothing written)" : "");
	fflush(stdout);
	hz = rte_get_tsc_hz();
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		for (uint16_t q = 0; q < cfg.queues; q++) {
			lanes[q].lane.anchor_tsc = rte_rdtsc();
			lanes[q].lane.anchor_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
			lanes[q].lane.ns_per_cycle = 1e9 / (double)hz;
			lanes[q].lane.stall_cycles = hz / 1000;
		}
	}
	lcore = rte_get_next_lcore(-1, 1, 0);
	for (uint16_t q = 0; q < cfg.queues; q++, lcore = rte_get_next_lcore(lcore, 1, 0))
		rte_eal_remote_launch(ref_lane_run, &lanes[q].lane, lcore);
	if (cfg.duration > 0) {
		uint64_t end = rte_rdtsc() + (uint64_t)(cfg.duration * hz);
		while (!stop && rte_rdtsc() < end) rte_delay_us_sleep(10000); /* sleep: the main lcore may share a core with a worker */
		stop = 1;
	}
	rte_eal_mp_wait_lcore();
	for (uint16_t q = 0; q < cfg.queues; q++) {
		const struct ref_lane *l = &lanes[q].lane;
		sent += l->sent; retries += l->retries; busy += l->t1 - l->t0;
		if (l->t0 < t0) t0 = l->t0;
		if (l->t1 > t1) t1 = l->t1;
	}
	double secs = (double)(t1 - t0) / hz;
	printf("--- blast-ref summary (sender-side: frames accepted by tx_burst) ---\n");
	printf("sent %" PRIu64 " frames, %" PRIu64 " bytes in %.3f s: %.3f Mpps, %.3f Gb/s of frames, %.3f Gb/s on the wire (+20 B/frame)\n",
	       sent, sent * cfg.size, secs, sent / secs / 1e6, sent * cfg.size * 8 / secs / 1e9,
	       sent * (cfg.size + 20) * 8 / secs / 1e9);
	printf("cycles/pkt %.1f  ring-full retries %" PRIu64 "\n", sent ? (double)busy / sent : 0.0, retries);
	rte_delay_ms(500); /* let frames still in the rings leave, as blast's --drain does */
	/* A memif peer unmaps the rings under its own polling lanes when we
	 * leave: give one that stops by itself (drop --count) a second first. */
	if (strcmp(info.driver_name, "net_memif") == 0) {
		struct rte_eth_link link;
		for (int i = 0; i < 100; i++) {
			if (rte_eth_link_get_nowait(cfg.port, &link) != 0 || !link.link_status) break;
			rte_delay_ms(10);
		}
	}
	rte_eth_dev_stop(cfg.port);
	rte_eth_dev_close(cfg.port);
	rte_eal_cleanup();
	return 0;
}
