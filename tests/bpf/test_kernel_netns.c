// SPDX-License-Identifier: GPL-2.0
/*
 * claimd --netns in the kernel (bpf/sockio.c, proc_wanted): loaded with
 * this process's own network namespace, its listener and connections are
 * followed; with another namespace's inode, none is, and the process is
 * never marked (its reads and writes stay on the untraced path).
 */
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_fixture.h"
#include "observer.skel.h"

/* This process's word in traced[] (proc.bpf.h): 0 for a process never followed. */
static __u32 traced_word(struct kfix *f)
{
	__u32 v = 0;

	bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.traced), &f->tgid, &v);
	return v;
}

/*
 * A listener, a client and the accepted socket, a request and its answer
 * between them: what the kernel followed of them (a socket is a connection
 * from its first bytes).
 */
static void run(__u64 netns, __u64 want_conns, const char *what)
{
	struct kfix f;
	struct svc s;

	if (!kfix_open_netns(&f, netns))
		return;
	kfix_begin(&f);
	/* The fixture marks this process ahead; here the kernel is to decide. */
	bpf_map_update_elem(bpf_map__fd(f.skel->maps.traced), &f.tgid, &(__u32){ 0 }, BPF_ANY);
	if (ASSERT_TRUE(svc_open(&s), "listener, client, accepted")) {
		ASSERT_TRUE(svc_request(&s, "GET / HTTP/1.1\r\n\r\n") &&
				    svc_answer(&s, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
			    "a request answered");
		kfix_drain(&f);
		ASSERT_EQ(kfix_stat(&f, CLAIMD_ST_CONNS), want_conns, what);
		if (want_conns)
			ASSERT_OK_PTR(kfix_listen(&f, s.port, false), "listen record");
		else
			ASSERT_FALSE(kfix_listen(&f, s.port, false), "no listen record");
		ASSERT_EQ(traced_word(&f) != 0, want_conns != 0, "marked only when followed");
		svc_close(&s);
	}
	kfix_close(&f);
}

void test_kernel_netns(void)
{
	struct stat st;

	if (!test__need_root())
		return;
	if (!ASSERT_OK(stat("/proc/self/ns/net", &st), "own network namespace"))
		return;
	if (test__start_subtest("own"))
		run(st.st_ino, 2, "its own namespace: both ends followed");
	if (test__start_subtest("other"))
		run(st.st_ino + 1, 0, "another namespace: nothing followed");
}
