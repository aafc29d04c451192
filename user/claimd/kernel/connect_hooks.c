// SPDX-License-Identifier: GPL-2.0
/* The cgroup hooks on connects; see connect_hooks.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "log.h"
#include "host/sysprobe.h"
#include "kernel/connect_hooks.h"

void connect_hooks_prepare(const struct connect_hooks *h, bool have_unix)
{
	if (!have_unix) {
		bpf_program__set_autoload(h->unix_prog, false);
		return;
	}
	bpf_program__set_expected_attach_type(h->unix_prog, SYSPROBE_UNIX_CONNECT);
}

void connect_hooks_attach(const struct connect_hooks *h, struct bpf_link *links[3])
{
	struct bpf_program *progs[3] = { h->unix_prog, h->inet4_prog, h->inet6_prog };
	static const char *const what[3] = { "to a socket file", "over IPv4", "over IPv6" };
	char root[256];
	int fd, i;

	for (i = 0; i < 3; i++)
		links[i] = NULL;
	if (cgroupfs_v2_mount(root, sizeof(root))) {
		pr_warn("cgroup v2 is not mounted: connects that fail before anything leaves (to a "
			"socket file, over TCP before the SYN) go unseen, and a request one failed "
			"is judged as if it had made no call");
		return;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		pr_warn("cannot open the cgroup v2 root %s (%s): connects that fail before "
			"anything "
			"leaves go unseen",
			root, strerror(errno));
		return;
	}
	for (i = 0; i < 3; i++) {
		if (!bpf_program__autoload(progs[i]))
			continue;
		links[i] = bpf_program__attach_cgroup(progs[i], fd);
		if (!links[i])
			pr_warn("cannot hook connects %s at %s (%s): one that fails before "
				"anything "
				"leaves goes unseen",
				what[i], root, strerror(errno));
	}
	close(fd);
}
