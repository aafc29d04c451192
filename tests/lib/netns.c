// SPDX-License-Identifier: GPL-2.0
/* Network namespaces as hosts for end-to-end tests; see netns.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "netns.h"

#define NETNS_PREFIX "claimd-test-"
#define IP_TIMEOUT   10000

/* ip with argv[] after it; 0 when it exited 0, else -1 with its words printed. */
static int ip(const char *const args[])
{
	const char *argv[24] = { "ip" };
	char out[1024];
	int n = 1, i;

	for (i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (proc_run(argv, out, sizeof(out), IP_TIMEOUT) == 0)
		return 0;
	printf("ip");
	for (i = 1; i < n; i++)
		printf(" %s", argv[i]);
	printf(": %s\n", out);
	return -1;
}

int netns_make(struct netns_h *ns, const char *suffix)
{
	snprintf(ns->name, sizeof(ns->name), NETNS_PREFIX "%d-%s", getpid(), suffix);
	snprintf(ns->path, sizeof(ns->path), "/run/netns/%s", ns->name);
	if (ip((const char *const[]){ "netns", "add", ns->name, NULL }))
		return -1;
	ns->made = true;
	return ip((const char *const[]){ "-n", ns->name, "link", "set", "lo", "up", NULL });
}

void netns_remove(struct netns_h *ns)
{
	if (ns->made)
		ip((const char *const[]){ "netns", "delete", ns->name, NULL });
	ns->made = false;
}

void netns_stale_remove(void)
{
	DIR *d = opendir("/run/netns");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		long pid = left_by_gone_run(e->d_name);

		if (!pid)
			continue;
		if (!ip((const char *const[]){ "netns", "delete", e->d_name, NULL }))
			printf("removed network namespace %s, left by test run %ld, which is "
			       "gone\n",
			       e->d_name, pid);
	}
	closedir(d);
}

/* One end: its address and up. */
static int link_end(const struct netns_h *ns, const char *dev, const char *addr)
{
	if (ip((const char *const[]){ "-n", ns->name, "addr", "add", addr, "dev", dev, NULL }))
		return -1;
	return ip((const char *const[]){ "-n", ns->name, "link", "set", dev, "up", NULL });
}

int netns_link(const struct netns_h *a, const char *addr_a, const struct netns_h *b,
	       const char *addr_b)
{
	static int links;
	char dev_a[16], dev_b[16];

	/* Names of at most 15 bytes, unique on the host while the test runs. */
	snprintf(dev_a, sizeof(dev_a), "ct%d.%da", getpid() % 1000000, links);
	snprintf(dev_b, sizeof(dev_b), "ct%d.%db", getpid() % 1000000, links);
	links++;
	if (ip((const char *const[]){ "link", "add", dev_a, "netns", a->name, "type", "veth",
				      "peer", "name", dev_b, "netns", b->name, NULL }))
		return -1;
	if (link_end(a, dev_a, addr_a))
		return -1;
	return link_end(b, dev_b, addr_b);
}

/* "ip netns exec <name>" before argv. */
static void in_ns(const struct netns_h *ns, const char *const argv[], const char *out[], int max)
{
	int n = 0, i;

	out[n++] = "ip";
	out[n++] = "netns";
	out[n++] = "exec";
	out[n++] = ns->name;
	for (i = 0; argv[i] && n < max - 1; i++)
		out[n++] = argv[i];
	out[n] = NULL;
}

pid_t netns_spawn(const struct netns_h *ns, const char *const argv[], const char *const env[],
		  const char *log)
{
	const char *full[40];

	in_ns(ns, argv, full, 40);
	return proc_spawn(full, env, log);
}

int netns_run(const struct netns_h *ns, const char *const argv[], char *out, size_t outlen,
	      int timeout_ms)
{
	const char *full[40];

	in_ns(ns, argv, full, 40);
	return proc_run(full, out, outlen, timeout_ms);
}
