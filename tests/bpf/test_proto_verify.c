// SPDX-License-Identifier: GPL-2.0
/*
 * The database and cache framers in the kernel: bpf/protocheck.bpf.c
 * loads (the verifier accepts headers/resp_parse.h, pgwire_parse.h and
 * mysql_parse.h as compiled for BPF) and, run with BPF_PROG_TEST_RUN over conversations
 * recorded from real servers (tests/unit/vectors), a chunk of one
 * direction at a time, reports exactly the events the same framer
 * reports in user space over the same chunks; so do hostile streams
 * (each loses framing there too) and a 1 MiB bulk skipped across runs.
 * Prints each program's verified and loaded instruction counts.
 */
#include <stdio.h>
#include <stdlib.h>
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

/* The chunks through prog, a chunk (or SAMPLE_SIZE of it) a run; 0, or -1. */
static int kernel_run(struct protocheck_bpf *s, const struct bpf_program *prog,
		      const struct wire_chunk *chunks, unsigned int nchunks)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1, .data_in = pkt, .data_size_in = sizeof(pkt));
	unsigned int i;

	for (i = 0; i < nchunks; i++) {
		size_t off = 0;

		while (off < chunks[i].len) {
			size_t k = chunks[i].len - off;

			if (k > SAMPLE_SIZE)
				k = SAMPLE_SIZE;
			memcpy(s->bss->sample, chunks[i].data + off, k);
			s->bss->sample_len = k;
			s->bss->sample_dir = chunks[i].dir;
			if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o) || o.retval)
				return -1;
			off += k;
		}
	}
	return 0;
}

static struct wire_trace ref;

/* The kernel's events over the chunks against user space's, fed in pieces of SAMPLE_SIZE. */
static void check_chunks(struct protocheck_bpf *s, const struct bpf_program *prog,
			 const struct wire_subject *w, const struct wire_chunk *chunks,
			 unsigned int nchunks)
{
	unsigned int i, n;

	w->init(w->framer);
	wire_trace_run(w->ops, w->framer, chunks, nchunks, SAMPLE_SIZE, 0, &ref);
	memset(&s->bss->resp_fr, 0, sizeof(s->bss->resp_fr));
	memset(&s->bss->pg_fr, 0, sizeof(s->bss->pg_fr));
	memset(&s->bss->mysql_fr, 0, sizeof(s->bss->mysql_fr));
	s->bss->n_events = 0;
	if (!ASSERT_OK(kernel_run(s, prog, chunks, nchunks), "test runs"))
		return;
	n = s->bss->n_events;
	ASSERT_EQ(n, ref.n, "as many events as in user space");
	ASSERT_GT(ref.n, 0, "events in the stream");
	for (i = 0; i < n && i < ref.n; i++) {
		__u64 e = s->bss->events[i];
		const struct wire_event *u = &ref.ev[i];

		if (!ASSERT_EQ(e,
			       u->ev | (__u64)u->dir << 8 | (__u64)u->outcome << 16 |
				       (__u64)u->pending << 32,
			       "the same event"))
			break;
	}
}

static void check_vector(struct protocheck_bpf *s, const struct bpf_program *prog,
			 const struct wire_subject *w, const char *file)
{
	struct wire_vector v;

	if (!ASSERT_OK(wire_vector_load(file, &v), "vector"))
		return;
	check_chunks(s, prog, w, v.chunks, v.n);
	wire_vector_free(&v);
}

#define CHUNK(dir, lit)                                     \
	{                                                   \
		(dir), sizeof(lit) - 1, (const __u8 *)(lit) \
	}
#define GET_K "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"

/*
 * Hostile streams in the kernel: each loses framing with an error event
 * there as in user space, never reads past its bytes (the verifier's
 * part); and a 1 MiB bulk skipped across 256 runs.
 */
static void check_hostile(struct protocheck_bpf *s, const struct wire_subject *resp,
			  const struct wire_subject *pg, const struct wire_subject *my)
{
	static const struct wire_chunk bulk_2_40[] = {
		CHUNK(WIRE_TO_SERVER, GET_K),
		CHUNK(WIRE_TO_CLIENT, "$1099511627776\r\nxxxx"),
	};
	static const struct wire_chunk too_deep[] = {
		CHUNK(WIRE_TO_SERVER, GET_K),
		CHUNK(WIRE_TO_CLIENT, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n"
				      "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"),
	};
	/* A startup message of no parameters, a query, then a DataRow of 4 GiB. */
	static const struct wire_chunk pg_length[] = {
		CHUNK(WIRE_TO_SERVER, "\0\0\0\x08\0\x03\0\0Q\0\0\0\x06x"),
		CHUNK(WIRE_TO_CLIENT, "R\0\0\0\x08\0\0\0\0Z\0\0\0\x05ID\xff\xff\xff\xff"),
	};
	static const struct wire_chunk my_greeting[] = {
		CHUNK(WIRE_TO_CLIENT, "\x01\0\0\0\x42"),
	};
	static const char hdr[] = "$1048576\r\n";
	struct wire_chunk big[2] = { CHUNK(WIRE_TO_SERVER, GET_K) };
	size_t len = sizeof(hdr) - 1 + (1u << 20) + 2;
	__u8 *buf;

	const struct {
		const char *name;
		const struct bpf_program *prog;
		const struct wire_subject *w;
		const struct wire_chunk *chunks;
		unsigned int n;
	} lost[] = {
		{ "bulk_2_40", s->progs.resp_check, resp, bulk_2_40, 2 },
		{ "too_deep", s->progs.resp_check, resp, too_deep, 2 },
		{ "pg_length", s->progs.pg_check, pg, pg_length, 2 },
		{ "my_greeting", s->progs.mysql_check, my, my_greeting, 1 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
		if (!test__start_subtest(lost[i].name))
			continue;
		check_chunks(s, lost[i].prog, lost[i].w, lost[i].chunks, lost[i].n);
		ASSERT_EQ(ref.errors, 1, "framing lost");
	}
	if (!test__start_subtest("bulk_1mib"))
		return;
	buf = malloc(len);
	if (!ASSERT_OK_PTR(buf, "malloc"))
		return;
	memcpy(buf, hdr, sizeof(hdr) - 1);
	memset(buf + sizeof(hdr) - 1, 'x', 1u << 20);
	memcpy(buf + len - 2, "\r\n", 2);
	big[1] = (struct wire_chunk){ WIRE_TO_CLIENT, len, buf };
	check_chunks(s, s->progs.resp_check, resp, big, 2);
	ASSERT_EQ(ref.outcomes[WIRE_OK], 1, "answered");
	free(buf);
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
	check_hostile(s, &resp, &pg, &my);
	protocheck_bpf__destroy(s);
}
