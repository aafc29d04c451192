/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "Hosts" for end-to-end tests: network namespaces the test makes (named
 * claimd-test-<pid>-<x>, so that those of a killed run are found and
 * removed), each with its loopback up, joined by veth pairs with addresses
 * of their own, and processes started inside them (ip netns exec: the
 * process keeps the pid proc_spawn gives, and is stopped by it).
 */
#ifndef CLAIMD_TEST_NETNS_H
#define CLAIMD_TEST_NETNS_H

#include <stdbool.h>
#include <sys/types.h>

#include "harness.h"

struct netns_h {
	char name[64];
	char path[H_PATH]; /* /run/netns/<name>, for claimd --netns */
	bool made;
};

/* Makes the namespace claimd-test-<pid>-<suffix> with lo up. 0 or -1 (said). */
int netns_make(struct netns_h *ns, const char *suffix);
/* Removes it, and the veths in it (their peers go with them). */
void netns_remove(struct netns_h *ns);
/* Removes the namespaces of test runs that are gone. */
void netns_stale_remove(void);

/* A veth pair between a and b, addr_a ("10.1.2.1/24") on a's end, addr_b on b's. 0 or -1. */
int netns_link(const struct netns_h *a, const char *addr_a, const struct netns_h *b,
	       const char *addr_b);

/* proc_spawn / proc_run inside ns. */
pid_t netns_spawn(const struct netns_h *ns, const char *const argv[], const char *const env[],
		  const char *log);
int netns_run(const struct netns_h *ns, const char *const argv[], char *out, size_t outlen,
	      int timeout_ms);

#endif
