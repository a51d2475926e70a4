/* A plain C recvmmsg receiver, the yardstick for drop --socket's receive
 * lanes (scripts/bench --sockets): one UDP socket, 32 buffers of 64 KiB
 * a call, UDP GRO on (each buffer cut back into its datagrams by the
 * segment size the kernel gives), every datagram counted and its probe's
 * sequence number read; nothing else. Ends SECONDS after it starts, or
 * 300 ms after the last datagram. Prints what it received.
 *
 *   recvmmsg_receiver IPV4 PORT SECONDS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#define BATCH 32
#define BUFFER 65536
#define HEADERS_AND_FCS 46 /* Ethernet 14 + IPv4 20 + UDP 8 + FCS 4 */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "recvmmsg_receiver: error: usage: recvmmsg_receiver IPV4 PORT SECONDS\n");
		return 2;
	}
	struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
	if (inet_pton(AF_INET, argv[1], &at.sin_addr) != 1) {
		fprintf(stderr, "recvmmsg_receiver: error: %s is no IPv4 address\n", argv[1]);
		return 2;
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0), on = 1, rcvbuf = 32 << 20;
	struct timeval wait = { .tv_sec = 0, .tv_usec = 50000 };
	if (fd < 0 || setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) < 0 || bind(fd, (struct sockaddr *)&at, sizeof(at)) < 0) {
		perror("recvmmsg_receiver: error: socket");
		return 1;
	}
	static char bufs[BATCH][BUFFER];
	static char controls[BATCH][64];
	struct iovec iov[BATCH];
	struct mmsghdr msgs[BATCH];
	uint64_t got = 0, bytes = 0, seqsum = 0;
	double start = now(), end = start + atoi(argv[3]), first = 0, last = 0;
	while (now() < end && !(last > 0 && now() - last > 0.3)) {
		memset(msgs, 0, sizeof(msgs));
		for (int i = 0; i < BATCH; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = BUFFER;
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_control = controls[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(controls[i]);
		}
		int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		last = now();
		if (first == 0)
			first = last;
		for (int i = 0; i < n; i++) {
			int len = msgs[i].msg_len, segment = len;
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c))
				if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
					memcpy(&segment, CMSG_DATA(c), sizeof(segment));
			if (segment <= 0 || segment > len)
				segment = len;
			for (int off = 0; off < len; off += segment) {
				int d = len - off < segment ? len - off : segment;
				uint32_t seq = 0;
				if (d >= 10)
					memcpy(&seq, bufs[i] + off + 6, 4);
				seqsum += ntohl(seq);
				got++;
				bytes += d + HEADERS_AND_FCS;
			}
		}
	}
	double s = last > first ? last - first : 1e-9;
	printf("recv: %llu datagrams in %.2f s: %.3f Mpps, C recvmmsg with GRO (%llu frame bytes, seq sum %llu)\n", (unsigned long long)got, s,
	       got / s / 1e6, (unsigned long long)bytes, (unsigned long long)seqsum);
	return 0;
}
