// SPDX-License-Identifier: GPL-2.0
/*
 * The socket filter's slot (claimd_sock_slot, headers/observer.h), which
 * the kernel's programs and claimd's seeding both compute: the two ends of
 * a connection, (l, r) and (r, l), share a slot only when r is l or its
 * complement, for every local port; a server's connections, their client
 * ports in a run, take as many slots as there are connections.
 */
#include <stdbool.h>

#include "observer.h"
#include "test_progs.h"

void test_sock_slot(void)
{
	if (test__start_subtest("ends_apart")) {
		static const __u16 peers[] = { 1, 80, 443, 8080, 9464, 32768, 45105, 60999, 65535 };
		unsigned long met = 0, meant = 0;

		for (__u32 l = 0; l < 65536; l++)
			for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
				__u16 r = peers[i];
				bool same = claimd_sock_slot(l, r) == claimd_sock_slot(r, l);
				bool allowed = r == l || r == (__u16)~l;

				met += same;
				meant += allowed;
				if (same && !allowed) {
					ASSERT_TRUE(false, "two ends in one slot");
					return;
				}
			}
		ASSERT_EQ(met, meant, "only a port and its complement meet");
	}
	if (test__start_subtest("server_run")) {
		static bool seen[CLAIMD_SOCK_MARKS];
		unsigned int distinct = 0;

		for (__u32 r = 32768; r < 32768 + 4096; r++) {
			__u32 s = claimd_sock_slot(8080, r);

			if (!ASSERT_LT(s, CLAIMD_SOCK_MARKS, "slot in range"))
				return;
			distinct += !seen[s];
			seen[s] = true;
		}
		ASSERT_EQ(distinct, 4096, "4,096 clients of one port, 4,096 slots");
	}
}
