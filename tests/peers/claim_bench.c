// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of a libclaim lookup: N calls of claim_current() on a handle
 * mapping claimd's verdict map ($CLAIMD_VERDICTS). Prints the time per call
 * and whether the map was live (a handle without claimd answers at once and
 * would measure nothing).
 *
 *   claim_bench [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "claim.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000, i, unknown = 0;
	struct claim *c = claim_open(NULL);
	struct claim_result r;
	struct timespec a, b;

	if (!c || n <= 0)
		return 2;
	claim_current(c, &r); /* the one gettid() */
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		unknown += claim_current(c, &r) == CLAIM_UNKNOWN;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("{\"calls\":%ld,\"ns_per_call\":%.2f,\"connected\":%d,\"unknown\":%ld}\n", n,
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n, claim_connected(c),
	       unknown);
	claim_close(c);
	return 0;
}
