/* A plain C sendmmsg sender, the yardstick for the socket path's send
 * lane (scripts/bench --sockets): one connected UDP socket, 64 datagrams
 * a call, each with blastdrop's probe ("BDPK", stream 0, sequence, no
 * time), no GSO. Prints what the kernel took.
 *
 *   sendmmsg_sender IPV4 PORT FRAME_SIZE SECONDS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define HEADERS_AND_FCS 46 /* Ethernet 14 + IPv4 20 + UDP 8 + FCS 4 */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "sendmmsg_sender: error: usage: sendmmsg_sender IPV4 PORT FRAME_SIZE SECONDS\n");
		return 2;
	}
	int size = atoi(argv[3]), secs = atoi(argv[4]);
	int payload = size - HEADERS_AND_FCS;
	if (payload < 18 || payload > 9000 || secs < 1) {
		fprintf(stderr, "sendmmsg_sender: error: frame size 64..9046 and seconds >= 1\n");
		return 2;
	}
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
	if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "sendmmsg_sender: error: %s is no IPv4 address\n", argv[1]);
		return 2;
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		perror("sendmmsg_sender: error: socket");
		return 1;
	}
	static char bufs[BATCH][9000];
	struct iovec iov[BATCH];
	struct mmsghdr msgs[BATCH];
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		memcpy(bufs[i], "BDPK", 4);
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = payload;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	uint32_t seq = 0;
	uint64_t sent = 0;
	double start = now(), end = start + secs;
	while (now() < end) {
		for (int i = 0; i < BATCH; i++) {
			uint32_t s = htonl(seq + i);
			memcpy(bufs[i] + 6, &s, 4);
		}
		int n = sendmmsg(fd, msgs, BATCH, 0);
		if (n > 0) {
			seq += n;
			sent += n;
		}
	}
	double s = now() - start;
	printf("send: %llu datagrams in %.2f s: %.3f Mpps, C sendmmsg, no GSO\n", (unsigned long long)sent, s, sent / s / 1e6);
	return 0;
}
