// SPDX-License-Identifier: GPL-2.0
/*
 * blastdrop's XDP filter for a shared interface: IPv4 UDP frames whose
 * destination port is in [BD_PORT_LO, BD_PORT_HI] go to the AF_XDP socket
 * bound to the queue they came in on; everything else (SSH, DHCP, the
 * instance metadata, ARP, IPv6, fragments) goes on to the kernel as if no
 * program were attached. DPDK's own default program hands every frame on a
 * served queue to its socket, which cuts an instance with one interface
 * off: this one is for that case (`deploy/setup.sh --af-xdp
 * --xdp-udp-ports`, docs/af-xdp.md).
 *
 * DPDK's net_af_xdp loads it with its `xdp_prog=` option, finds the map
 * named `xsks_map` and puts each queue's socket at that queue's index. A
 * queue with no socket passes its frames (bpf_redirect_map's fallback).
 *
 * Build (clang's BPF target; the ports are fixed at build time):
 *   deploy/xdp/build-udp-ports 9 9 udp-ports.o
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef BD_PORT_LO
#error "define BD_PORT_LO and BD_PORT_HI: the UDP destination ports to take"
#endif
#ifndef BD_PORT_HI
#define BD_PORT_HI BD_PORT_LO
#endif

/* As many entries as a NIC has queues (ENA: 32; veth: 1 by default). */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* Whether the frame in [data, end) is IPv4 UDP to one of our ports. */
static __always_inline int ours(void *data, void *end)
{
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return 0;
	__u16 proto = eth->h_proto;
	void *l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		/* One VLAN tag: 2 bytes of tag control, then the inner type. */
		__u16 *vlan = l3;
		if ((void *)(vlan + 2) > end)
			return 0;
		proto = vlan[1];
		l3 = vlan + 2;
	}
	if (proto != bpf_htons(ETH_P_IP))
		return 0;
	struct iphdr *ip = l3;
	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5)
		return 0;
	/* A fragment after the first carries no UDP header. */
	if (ip->frag_off & bpf_htons(0x1fff))
		return 0;
	struct udphdr *udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end)
		return 0;
	__u16 port = bpf_ntohs(udp->dest);
	return port >= BD_PORT_LO && port <= BD_PORT_HI;
}

SEC("xdp")
int blastdrop_udp_ports(struct xdp_md *ctx)
{
	if (!ours((void *)(long)ctx->data, (void *)(long)ctx->data_end))
		return XDP_PASS;
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
