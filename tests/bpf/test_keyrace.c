// SPDX-License-Identifier: GPL-2.0
/*
 * An event loop's requests counted by key (bpf/req_keys.bpf.h) against
 * races of CPUs: bpf/keyrace.bpf.c runs the counting as the observer
 * compiles it, with each window a race could open widened by a spin, and
 * one thread per CPU opens a request, makes a call carrying its key and
 * closes the request, over and over, through BPF_PROG_TEST_RUN. A call
 * tied to any request but its own would be a wrong verdict in claimd: none
 * may be. Each run shows it raced (calls left untied because the count was
 * not 1) and still tied calls when a request was alone, and ends with the
 * table empty and no stray left counted.
 *
 * one_key: every request under one key, as haproxy_ambiguous's (the count
 * going 1 -> 0 on one CPU while the other adds to it; a lone count naming
 * a request on its way out). full_table: a table of one entry, a key per
 * thread, so that requests go uncounted (strays) and no call is tied
 * while one is open.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "observer.h"
/* After the structs: the skeleton's .bss holds none, but its maps name them. */
#include "keyrace.skel.h"
#include "test_progs.h"

#define THREADS	   2
#define ITERATIONS 40000
#define SPINS	   32 /* bpf_loop turns at each window: a few hundred ns */

struct driver {
	struct keyrace_bpf *s;
	unsigned int slot;
	__u32 hash;
	int err;
	/* What its calls were tied to. */
	unsigned long own, none, wrong, strays;
	unsigned long counts[3]; /* the count a call found: 0, 1, 2 or more */
};

static int run(const struct bpf_program *prog, __u64 slot, __u64 hash, __u64 seq, __u32 *ret)
{
	__u64 args[3] = { slot, hash, seq };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);

	*ret = o.retval;
	return err;
}

static void *drive(void *arg)
{
	struct driver *d = arg;
	struct keyrace_bpf *s = d->s;
	cpu_set_t cpus;
	__u32 ret;
	long n;

	CPU_ZERO(&cpus);
	CPU_SET(d->slot % sysconf(_SC_NPROCESSORS_ONLN), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	for (n = 1; n <= ITERATIONS && !d->err; n++) {
		__u64 seq = (__u64)n << 8 | (d->slot + 1), tied;

		d->err = run(s->progs.key_open, d->slot, d->hash, seq, &ret);
		d->strays += ret;
		d->err = d->err ?: run(s->progs.key_call, d->slot, d->hash, seq, &ret);
		d->counts[ret < 2 ? ret : 2]++;
		tied = s->bss->tied[d->slot];
		if (!tied)
			d->none++;
		else if (tied == seq)
			d->own++;
		else
			d->wrong++;
		d->err = d->err ?: run(s->progs.key_forget, d->slot, d->hash, seq, &ret);
		d->err = d->err ?: run(s->progs.key_clear, d->slot, d->hash, seq, &ret);
	}
	return NULL;
}

/* The entries left in the table. */
static unsigned int entries_left(struct keyrace_bpf *s)
{
	struct claimd_req_key k;
	unsigned int n = 0;
	int fd = bpf_map__fd(s->maps.req_keys);

	if (bpf_map_get_next_key(fd, NULL, &k))
		return 0;
	for (n = 1; !bpf_map_get_next_key(fd, &k, &k); n++)
		;
	return n;
}

/* THREADS drivers on one table of max_entries, with keys hash[slot]; the table too small for them: full. */
static void race(unsigned int max_entries, const __u32 *hash, bool full)
{
	struct driver d[THREADS] = {};
	pthread_t th[THREADS];
	struct keyrace_bpf *s;
	unsigned long own = 0, none = 0, wrong = 0, strays = 0, counts[3] = { 0 };
	unsigned int i;

	s = keyrace_bpf__open();
	if (!ASSERT_OK_PTR(s, "keyrace opens"))
		return;
	bpf_map__set_max_entries(s->maps.req_keys, max_entries);
	if (!ASSERT_OK(keyrace_bpf__load(s), "keyrace loads (the verifier accepts req_keys.bpf.h)"))
		goto out;
	s->bss->window_spins = SPINS;
	for (i = 0; i < THREADS; i++) {
		d[i] = (struct driver){ .s = s, .slot = i, .hash = hash[i] };
		pthread_create(&th[i], NULL, drive, &d[i]);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		ASSERT_OK(d[i].err, "BPF_PROG_TEST_RUN runs every step");
		own += d[i].own;
		none += d[i].none;
		wrong += d[i].wrong;
		strays += d[i].strays;
		counts[0] += d[i].counts[0];
		counts[1] += d[i].counts[1];
		counts[2] += d[i].counts[2];
	}
	printf("%u threads x %d requests, %u spins a window: calls tied to their own request %lu, "
	       "to none %lu, to another %lu; count found 0: %lu, 1: %lu, 2+: %lu; strays %lu\n",
	       THREADS, ITERATIONS, SPINS, own, none, wrong, counts[0], counts[1], counts[2],
	       strays);
	ASSERT_EQ(wrong, 0, "no call tied to a request not its own");
	ASSERT_GT(own, 0, "a call of a request alone under its key is tied to it");
	ASSERT_GT(none, 0, "the drivers raced: some calls found their request not alone");
	if (full)
		ASSERT_GT(strays, 0, "requests the full table refused are strays");
	ASSERT_EQ(s->bss->strays, 0, "no stray left counted");
	ASSERT_EQ(entries_left(s), 0, "the table is empty once every request closed");
out:
	keyrace_bpf__destroy(s);
}

/* One step of request slot (key hash, seq) by prog: its return. */
static __u32 step(const struct bpf_program *prog, __u64 slot, __u64 seq)
{
	__u32 ret = ~0u;

	ASSERT_OK(run(prog, slot, 0x5eed, seq, &ret), bpf_program__name(prog));
	return ret;
}

/*
 * The steps of two requests A and B under one key, in one thread, in the
 * order a race of two CPUs interleaves them: A, alone first, ends while B
 * is open, and B's call comes between A's key dropped and A's connection
 * let go.
 */
static void interleaved(void)
{
	struct keyrace_bpf *s = keyrace_bpf__open_and_load();
	const __u64 a = 0x100, b = 0x200;

	if (!ASSERT_OK_PTR(s, "keyrace loads"))
		return;
	ASSERT_EQ(step(s->progs.key_open, 0, a), 0, "A is counted");
	ASSERT_EQ(step(s->progs.key_call, 0, a), 1, "A alone: one open under the key");
	ASSERT_EQ(s->bss->tied[0], a, "A's call, A alone, is tied to A");
	ASSERT_EQ(step(s->progs.key_open, 1, b), 0, "B is counted");
	step(s->progs.key_call, 1, b);
	ASSERT_EQ(s->bss->tied[1], 0, "B's call, A and B open, is tied to none");
	step(s->progs.key_forget, 0, a);
	ASSERT_EQ(step(s->progs.key_call, 1, b), 1, "A's key dropped: one open under the key");
	ASSERT_EQ(s->bss->tied[1], 0, "B's call is not tied to A, leaving but still held");
	step(s->progs.key_clear, 0, a);
	step(s->progs.key_call, 1, b);
	ASSERT_EQ(s->bss->tied[1], 0, "B's call is tied to none: the lone one is not known");
	step(s->progs.key_forget, 1, b);
	step(s->progs.key_clear, 1, b);
	ASSERT_EQ(entries_left(s), 0, "the table is empty once both closed");
	ASSERT_EQ(step(s->progs.key_open, 1, b + 1), 0, "B's next request is counted");
	step(s->progs.key_call, 1, b + 1);
	ASSERT_EQ(s->bss->tied[1], b + 1, "alone under a new entry: its call is tied to it");
	keyrace_bpf__destroy(s);
}

void test_keyrace(void)
{
	static const __u32 one_key[THREADS] = { 0x5eed, 0x5eed };
	static const __u32 two_keys[THREADS] = { 0x5eed, 0xfeed };

	if (!test__need_root())
		return;
	if (test__start_subtest("interleaved"))
		interleaved();
	if (test__start_subtest("one_key"))
		race(64, one_key, false);
	if (test__start_subtest("full_table"))
		race(1, two_keys, true);
}
