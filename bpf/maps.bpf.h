/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Maps of the observer and the load-time configuration claimd sets between
 * open and load. Included once, by observer.bpf.c.
 */
#ifndef CLAIMD_MAPS_BPF_H
#define CLAIMD_MAPS_BPF_H

#include "observer.h"

#define SCAN_WINDOW 512 /* bytes copied from user memory at a time */

/* Load-time configuration (rodata). */
const volatile __u32 self_tgid = 0;	/* claimd itself: never traced */
const volatile __u32 filter_flags = 0;	/* CLAIMD_FILTER_* */
const volatile __u64 filter_cgroup = 0; /* cgroup v2 id for CLAIMD_FILTER_CGROUP */

/* Sockets we follow, by (tgid, fd). Oldest go first when it is full. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_CONNS_MAX);
	__type(key, struct claimd_conn_key);
	__type(value, struct claimd_conn);
} conns SEC(".maps");

/*
 * A word per tgid: does this process own a socket we follow (and the other
 * PROC_* bits)? The first test on every syscall, so untraced processes leave
 * after one array load. Sized to pid_max by claimd.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u32);
} traced SEC(".maps");

/*
 * A service using libclaim's explicit context (claim_context_enter): which
 * inbound connection each of its threads is working for right now, and the
 * ingress of each such connection, with its egress log.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, __u32);
	__type(value, struct claimd_conn_key);
} thread_cur SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, struct claimd_conn_key);
	__type(value, struct claimd_thread);
} conn_ctx SEC(".maps");

/* The ingress each thread is serving, with its egress log. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, __u32);
	__type(value, struct claimd_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CLAIMD_RINGBUF_SZ);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CLAIMD_ST__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Bytes copied out of user memory for the parser. */
struct scan_buf {
	__u8 data[SCAN_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scan_buf);
} scratch SEC(".maps");

/* Filters: processes and service ports to follow (when enabled). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u16);
	__type(value, __u8);
} port_filter SEC(".maps");

static const struct claimd_thread zero_thread;

static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 which)
{
	stat_add(which, 1);
}

/*
 * Wake claimd only once records pile up: a wake-up per record (the default)
 * cost microseconds each on the writing syscall. claimd also drains the
 * ring on a short timer, so a quiet host's records are late by that much.
 */
#define WAKEUP_BYTES (64u << 10)

static __always_inline __u64 rb_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP
									     : BPF_RB_NO_WAKEUP;
}

/* Submit a record; a full ring buffer is counted, never silent. */
static __always_inline void emit(void *rec, __u64 size)
{
	if (bpf_ringbuf_output(&events, rec, size, rb_flags()))
		stat_inc(CLAIMD_ST_RB_DROPS);
	else
		stat_inc(CLAIMD_ST_RECORDS);
}

static __always_inline void submit(void *rec)
{
	bpf_ringbuf_submit(rec, rb_flags());
	stat_inc(CLAIMD_ST_RECORDS);
}

/* traced[] bits: what we know of a process. */
#define PROC_TRACED  0x1 /* it owns a socket we follow */
#define PROC_CONTEXT 0x2 /* it names its requests (claim_context_enter) */
#define PROC_MUX     0x4 /* it served two requests at once on a thread: no verdicts */

/* The process's bits; a tgid beyond the array (pid_max above 4M) counts as traced. */
static __always_inline __u32 proc_flags(__u32 tgid)
{
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);

	return t ? *t : PROC_TRACED;
}

static __always_inline int is_traced(__u32 tgid)
{
	return proc_flags(tgid) != 0;
}

static __always_inline void proc_flag_set(__u32 tgid, __u32 flag)
{
	__u32 *t = bpf_map_lookup_elem(&traced, &tgid);

	if (t && !(*t & flag))
		__sync_fetch_and_or(t, flag);
}

static __always_inline void mark_traced(__u32 tgid)
{
	proc_flag_set(tgid, PROC_TRACED);
}

#endif /* CLAIMD_MAPS_BPF_H */
