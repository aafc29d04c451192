// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of a libclaim lookup: N calls of claim_current() on a handle
 * mapping claimd's verdict map ($CLAIMD_VERDICTS). Prints the time per call
 * and whether the map was live (a handle without claimd answers at once and
 * would measure nothing).
 *
 * With --context, the cost of the explicit context instead: N pairs of
 * claim_context_enter() and claim_context_leave(), each a uprobe's hit
 * where claimd probes them. The process listens on a loopback port first
 * (claimd follows a service's libclaim), then reads one byte from its
 * standard input before it starts: the caller's word that the probes are
 * in place.
 *
 *   claim_bench [N]
 *   claim_bench --context N
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "claim.h"

static double elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e9 + (b->tv_nsec - a->tv_nsec);
}

/* --context N: N enter/leave pairs once the caller says go; 0, or 2. */
static int context_pairs(long n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct timespec a, b;
	char go;
	long i;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (n <= 0 || l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    read(STDIN_FILENO, &go, 1) != 1)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		claim_context_enter(l);
		claim_context_leave();
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("{\"pairs\":%ld,\"ns_per_pair\":%.1f}\n", n, elapsed_ns(&a, &b) / n);
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000, i, unknown = 0;
	struct claim_result r;
	struct timespec a, b;
	struct claim *c;

	if (argc > 2 && !strcmp(argv[1], "--context"))
		return context_pairs(atol(argv[2]));
	c = claim_open(NULL);
	if (!c || n <= 0)
		return 2;
	claim_current(c, &r); /* the one gettid() */
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		unknown += claim_current(c, &r) == CLAIM_UNKNOWN;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("{\"calls\":%ld,\"ns_per_call\":%.2f,\"connected\":%d,\"unknown\":%ld}\n", n,
	       elapsed_ns(&a, &b) / n, claim_connected(c), unknown);
	claim_close(c);
	return 0;
}
