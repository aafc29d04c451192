// SPDX-License-Identifier: GPL-2.0
/* The cgroup hook on Unix connects; see unix_connect.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "log.h"
#include "host/sysprobe.h"
#include "kernel/unix_connect.h"

void unix_connect_prepare(struct bpf_program *prog, bool have)
{
	if (!have) {
		bpf_program__set_autoload(prog, false);
		return;
	}
	bpf_program__set_expected_attach_type(prog, SYSPROBE_UNIX_CONNECT);
}

struct bpf_link *unix_connect_attach(struct bpf_program *prog)
{
	struct bpf_link *link;
	char root[256];
	int fd, err;

	if (!bpf_program__autoload(prog))
		return NULL;
	if (cgroupfs_v2_mount(root, sizeof(root))) {
		pr_warn("cgroup v2 is not mounted: a connect to a socket file that fails goes "
			"unseen, and a request it failed is judged as if it had made no call");
		return NULL;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		pr_warn("cannot open the cgroup v2 root %s (%s): a connect to a socket file that "
			"fails goes unseen",
			root, strerror(errno));
		return NULL;
	}
	link = bpf_program__attach_cgroup(prog, fd);
	err = link ? 0 : errno;
	close(fd);
	if (!link)
		pr_warn("cannot hook Unix connects at %s (%s): a connect to a socket file that "
			"fails goes unseen",
			root, strerror(err));
	return link;
}
