// SPDX-License-Identifier: GPL-2.0
/*
 * An untraced process for the benchmark: N one-byte writes and reads on a
 * pipe, so the read/write tracepoints run N times each for a process claimd
 * does not follow. Prints the time per write+read pair.
 *
 *   pipe_hammer N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	struct timespec a, b;
	int p[2];
	char c = 'x';

	if (n <= 0 || pipe(p))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("{\"pairs\":%ld,\"ns_per_pair\":%.1f}\n", n,
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
