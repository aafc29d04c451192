// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The database and cache framers (headers/resp_parse.h, pgwire_parse.h,
 * mysql_parse.h)
 * compiled for the kernel, to show they verify and frame there as in user
 * space: one program per framer runs it over a buffer user space fills
 * ('sample', one direction's bytes at a time), stepped a byte at a time
 * and skipped by count as the observer will, and records the events in
 * 'events'. The framers live here in .bss across runs, as the observer
 * keeps them per connection. bpf_loop() bounds the loop for the verifier
 * at one walk of the callback; the observer's hot path would use can_loop
 * (bpf/loop.bpf.h) for its cost, which this check does not measure. A tc
 * program only because BPF_PROG_TEST_RUN
 * runs that type with a buffer; the packet is ignored. Loaded by
 * tests/bpf/test_proto_verify.c; never attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "resp_parse.h"
#include "pgwire_parse.h"
#include "mysql_parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SAMPLE_SIZE 4096 /* a power of two: indexes are masked by it */
#define MAX_EVENTS  1024 /* a power of two: indexes are masked by it */

/* Set by user space before each run. */
__u8 sample[SAMPLE_SIZE];
__u32 sample_len;
__u32 sample_dir;

/* The framers, kept from run to run (zeroed by user space: their init). */
struct resp_framer resp_fr;
struct pg_framer pg_fr;
struct mysql_framer mysql_fr;

/* What the runs reported: ev | dir << 8 | outcome (at an end) << 16 | pending << 32. */
__u64 events[MAX_EVENTS];
__u32 n_events;
__u32 cursor; /* the next byte of sample; left in memory so the loop bounds it */

static __always_inline void record(__u32 ev, __u32 dir, const struct wire_calls *c)
{
	__u32 i = n_events;
	__u64 outcome = (ev & WIRE_EV_CALL_END) ? c->outcome : 0;

	if (i >= MAX_EVENTS)
		return;
	/* mask: i < MAX_EVENTS; the verifier needs it said */
	events[i & (MAX_EVENTS - 1)] = ev | dir << 8 | outcome << 16 | (__u64)c->pending << 32;
	n_events = i + 1;
}

static long resp_one(__u32 i, void *ctx)
{
	__u32 pos = cursor, len = sample_len, dir = sample_dir & 1, ev = 0;

	if (pos >= len || len > SAMPLE_SIZE || resp_fr.calls.state != WIRE_OPEN)
		return 1;
	if (resp_skipping(&resp_fr, dir)) {
		cursor = pos + (__u32)resp_skip(&resp_fr, dir, len - pos, &ev);
	} else {
		/* mask: pos < len <= SAMPLE_SIZE; the verifier needs it said */
		ev = resp_step(&resp_fr, dir, sample[pos & (SAMPLE_SIZE - 1)]);
		cursor = pos + 1;
	}
	if (ev)
		record(ev, dir, &resp_fr.calls);
	return 0;
}

static long pg_one(__u32 i, void *ctx)
{
	__u32 pos = cursor, len = sample_len, dir = sample_dir & 1, ev = 0;

	if (pos >= len || len > SAMPLE_SIZE || pg_fr.calls.state != WIRE_OPEN)
		return 1;
	if (pg_skipping(&pg_fr, dir)) {
		cursor = pos + (__u32)pg_skip(&pg_fr, dir, len - pos, &ev);
	} else {
		/* mask: pos < len <= SAMPLE_SIZE; the verifier needs it said */
		ev = pg_step(&pg_fr, dir, sample[pos & (SAMPLE_SIZE - 1)]);
		cursor = pos + 1;
	}
	if (ev)
		record(ev, dir, &pg_fr.calls);
	return 0;
}

static long mysql_one(__u32 i, void *ctx)
{
	__u32 pos = cursor, len = sample_len, dir = sample_dir & 1, ev = 0;

	if (pos >= len || len > SAMPLE_SIZE || mysql_fr.calls.state != WIRE_OPEN)
		return 1;
	if (mysql_skipping(&mysql_fr, dir)) {
		cursor = pos + (__u32)mysql_skip(&mysql_fr, dir, len - pos, &ev);
	} else {
		/* mask: pos < len <= SAMPLE_SIZE; the verifier needs it said */
		ev = mysql_step(&mysql_fr, dir, sample[pos & (SAMPLE_SIZE - 1)]);
		cursor = pos + 1;
	}
	if (ev)
		record(ev, dir, &mysql_fr.calls);
	return 0;
}

SEC("tc")
int resp_check(struct __sk_buff *skb)
{
	cursor = 0;
	bpf_loop(SAMPLE_SIZE, resp_one, NULL, 0);
	return 0;
}

SEC("tc")
int pg_check(struct __sk_buff *skb)
{
	cursor = 0;
	bpf_loop(SAMPLE_SIZE, pg_one, NULL, 0);
	return 0;
}

SEC("tc")
int mysql_check(struct __sk_buff *skb)
{
	cursor = 0;
	bpf_loop(SAMPLE_SIZE, mysql_one, NULL, 0);
	return 0;
}
