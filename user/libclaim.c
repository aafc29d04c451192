// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libclaim's reader: maps claimd's frozen verdict map read-only and reads
 * the calling thread's slot with a sequence-number check. See headers/claim.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "claim.h"

struct claim {
	const volatile struct claim_slot *slots; /* slot 0: the header */
	size_t len;
};

static __thread pid_t cached_tid;

static void forget_tid(void)
{
	cached_tid = 0; /* the child of a fork is a new thread */
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forget_tid);
}

static pid_t my_tid(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!cached_tid) {
		pthread_once(&once, watch_forks);
		cached_tid = syscall(SYS_gettid);
	}
	return cached_tid;
}

/* BPF_OBJ_GET, without libbpf: libclaim links against nothing but libc. */
static int obj_get(const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	return syscall(__NR_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
}

struct claim *claim_open(const char *path)
{
	struct claim *c = calloc(1, sizeof(*c));
	const struct claim_map_header *h;
	size_t len = (size_t)CLAIM_SLOTS * sizeof(struct claim_slot);
	void *p;
	int fd;

	if (!c)
		return NULL;
	if (!path)
		path = getenv(CLAIM_ENV_PATH);
	if (!path || !*path)
		path = CLAIM_DEFAULT_PATH;
	fd = obj_get(path);
	if (fd < 0)
		return c; /* no claimd: answers unknown */
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return c;
	h = p;
	if (h->magic != CLAIM_MAP_MAGIC || h->version != CLAIM_MAP_VERSION ||
	    h->slots != CLAIM_SLOTS || h->slot_size != sizeof(struct claim_slot)) {
		munmap(p, len);
		return c; /* another layout: do not guess */
	}
	c->slots = p;
	c->len = len;
	return c;
}

void claim_close(struct claim *c)
{
	if (!c)
		return;
	if (c->slots)
		munmap((void *)c->slots, c->len);
	free(c);
}

int claim_connected(const struct claim *c)
{
	const volatile struct claim_map_header *h;

	if (!c || !c->slots)
		return 0;
	h = (const volatile struct claim_map_header *)c->slots;
	return h->alive == 1;
}

enum claim_verdict claim_current(const struct claim *c, struct claim_result *out)
{
	struct claim_result r = { .verdict = CLAIM_UNKNOWN };
	const volatile struct claim_slot *s;
	pid_t tid;
	int tries;

	if (!claim_connected(c))
		goto done;
	tid = my_tid();
	s = &c->slots[1 + (uint32_t)tid % (CLAIM_SLOTS - 1)];
	for (tries = 0; tries < 4; tries++) {
		uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		struct claim_slot copy;

		if (seq & 1)
			continue; /* being written right now */
		memcpy(&copy, (const void *)s, sizeof(copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != seq)
			continue;
		/* Another thread's slot (same index), or no request being served. */
		if (copy.tid != (uint32_t)tid || !copy.active)
			break;
		if (copy.verdict == CLAIM_CLAIMED || copy.verdict == CLAIM_UNCLAIMED)
			r.verdict = copy.verdict;
		r.rule = copy.rule;
		r.cause_port = copy.cause_port;
		r.cause_known = copy.cause_port != 0;
		memcpy(r.cause_addr, copy.cause_addr, sizeof(r.cause_addr));
		break;
	}
done:
	if (out)
		*out = r;
	return r.verdict;
}

const char *claim_verdict_name(enum claim_verdict v)
{
	switch (v) {
	case CLAIM_CLAIMED:
		return "claimed";
	case CLAIM_UNCLAIMED:
		return "unclaimed";
	default:
		return "unknown";
	}
}
