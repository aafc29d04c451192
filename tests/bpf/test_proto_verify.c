// SPDX-License-Identifier: GPL-2.0
/*
 * The database and cache framers in the kernel: bpf/protocheck.bpf.c
 * loads (the verifier accepts headers/resp_parse.h, pgwire_parse.h and
 * mysql_parse.h as compiled for BPF) and, run with BPF_PROG_TEST_RUN over conversations
 * recorded from real servers (tests/unit/vectors), a chunk of one
 * direction at a time, reports exactly the events the same framer
 * reports in user space over the same chunks. Prints each program's
 * verified and loaded instruction counts.
 */
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mysql_parse.h"
#include "pgwire_parse.h"
#include "resp_parse.h"
/* After the framers: the skeleton's .bss holds them. */
#include "protocheck.skel.h"
#include "test_progs.h"
#include "wire_trace.h"

#define SAMPLE_SIZE sizeof(((struct protocheck_bpf *)0)->bss->sample)

static void print_insns(const struct bpf_program *prog)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!ASSERT_OK(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len), "prog info"))
		return;
	printf("%s: %u instructions verified, %u loaded\n", bpf_program__name(prog),
	       info.verified_insns, info.xlated_prog_len / 8);
}

/* The vector through prog, a chunk (or SAMPLE_SIZE of it) a run; 0, or -1. */
static int kernel_run(struct protocheck_bpf *s, const struct bpf_program *prog,
		      const struct wire_vector *v)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1, .data_in = pkt, .data_size_in = sizeof(pkt));
	unsigned int i;

	for (i = 0; i < v->n; i++) {
		size_t off = 0;

		while (off < v->chunks[i].len) {
			size_t k = v->chunks[i].len - off;

			if (k > SAMPLE_SIZE)
				k = SAMPLE_SIZE;
			memcpy(s->bss->sample, v->chunks[i].data + off, k);
			s->bss->sample_len = k;
			s->bss->sample_dir = v->chunks[i].dir;
			if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o) || o.retval)
				return -1;
			off += k;
		}
	}
	return 0;
}

static struct wire_trace ref;

/* The kernel's events over file against user space's, fed in pieces of SAMPLE_SIZE. */
static void check_vector(struct protocheck_bpf *s, const struct bpf_program *prog,
			 const struct wire_subject *w, const char *file)
{
	struct wire_vector v;
	unsigned int i, n;

	if (!ASSERT_OK(wire_vector_load(file, &v), "vector"))
		return;
	w->init(w->framer);
	wire_trace_run(w->ops, w->framer, v.chunks, v.n, SAMPLE_SIZE, 0, &ref);
	memset(&s->bss->resp_fr, 0, sizeof(s->bss->resp_fr));
	memset(&s->bss->pg_fr, 0, sizeof(s->bss->pg_fr));
	memset(&s->bss->mysql_fr, 0, sizeof(s->bss->mysql_fr));
	s->bss->n_events = 0;
	if (!ASSERT_OK(kernel_run(s, prog, &v), "test runs")) {
		wire_vector_free(&v);
		return;
	}
	n = s->bss->n_events;
	ASSERT_EQ(n, ref.n, "as many events as in user space");
	ASSERT_GT(ref.n, 0, "events in the vector");
	for (i = 0; i < n && i < ref.n; i++) {
		__u64 e = s->bss->events[i];
		const struct wire_event *u = &ref.ev[i];

		if (!ASSERT_EQ(e,
			       u->ev | (__u64)u->dir << 8 | (__u64)u->outcome << 16 |
				       (__u64)u->pending << 32,
			       "the same event"))
			break;
	}
	wire_vector_free(&v);
}

static struct resp_framer resp_user;
static struct pg_framer pg_user;
static struct mysql_framer mysql_user;

static void resp_init(void *f)
{
	resp_framer_init(f);
}

static void pg_init(void *f)
{
	pg_framer_init(f);
}

static void mysql_init(void *f)
{
	mysql_framer_init(f);
}

void test_proto_verify(void)
{
	static const struct wire_subject resp = { &resp_ops, &resp_user, resp_init };
	static const struct wire_subject pg = { &pg_ops, &pg_user, pg_init };
	static const struct wire_subject my = { &mysql_ops, &mysql_user, mysql_init };
	static const char *const resp_files[] = { "redis_resp2.bin", "redis_resp3.bin",
						  "redis_pipe.bin", "redis_killed.bin" };
	static const char *const pg_files[] = {
		"pg_simple.bin",  "pg_extended.bin", "pg_pipeline_error.bin",
		"pg_badpass.bin", "pg_ssl.bin",	     "pg_terminated.bin"
	};
	static const char *const my_files[] = {
		"my_cli.bin",	  "my_pymysql.bin", "my_stmt.bin",
		"my_badpass.bin", "my_tls.bin",	    "my_killed.bin"
	};
	struct protocheck_bpf *s;
	unsigned int i;

	if (!test__need_root())
		return;
	s = protocheck_bpf__open_and_load();
	if (!ASSERT_OK_PTR(s, "the framers load (the verifier accepts them)"))
		return;
	print_insns(s->progs.resp_check);
	print_insns(s->progs.pg_check);
	print_insns(s->progs.mysql_check);
	for (i = 0; i < sizeof(resp_files) / sizeof(resp_files[0]); i++)
		if (test__start_subtest(resp_files[i]))
			check_vector(s, s->progs.resp_check, &resp, resp_files[i]);
	for (i = 0; i < sizeof(pg_files) / sizeof(pg_files[0]); i++)
		if (test__start_subtest(pg_files[i]))
			check_vector(s, s->progs.pg_check, &pg, pg_files[i]);
	for (i = 0; i < sizeof(my_files) / sizeof(my_files[0]); i++)
		if (test__start_subtest(my_files[i]))
			check_vector(s, s->progs.mysql_check, &my, my_files[i]);
	protocheck_bpf__destroy(s);
}
