// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A microbenchmark of the in-kernel HTTP framing: runs scan_window() (the
 * exact code the observer runs per syscall) over a message head that user
 * space puts in 'sample', under BPF_PROG_TEST_RUN with a repeat count, so
 * the kernel reports the time per run. A tc program only because that type's
 * test runs take a repeat count (tracepoint and raw_tp ones do not); the
 * packet is ignored. Used by scripts/bench.sh; never attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>

#include "http_parse.h"
#include "scan.bpf.h"
#include "observer.h"
#include "sysnr.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The framer's window, as the observer keeps it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scan_buf);
} scratch SEC(".maps");

/* The observer's framing loop, and nothing else of it. */
#include "scan.c"

/* Set by user space before each run; a new sample_gen for each sample. */
__u8 sample[SCAN_WINDOW];
__u32 sample_len;
__u32 sample_kind;
__u32 sample_seek;
__u32 sample_gen;
/* Results of the last run, for checking: the framer whole, and where it stopped. */
__u32 out_events;
__u32 out_status;
__u32 out_state;
__u32 out_pos;
struct http_framer out_framer;

SEC("tc")
int parse_bench(struct __sk_buff *skb)
{
	struct http_framer f;
	__u32 zero = 0, pos = 0, ev = 0, r, i;
	struct scan_buf *buf = bpf_map_lookup_elem(&scratch, &zero);
	__u32 len = sample_len;

	if (!buf || len > SCAN_WINDOW)
		return 1;
	/*
	 * The observer copies a head once per syscall (bpf_probe_read_user,
	 * timed apart); here it is copied once per sample, not at every repeat
	 * (a 512-byte copy, about 100 ns here, is not framing). The sample's
	 * generation is kept in rounds, feed_segment's field, unused by the scan.
	 */
	if (buf->rounds != sample_gen) {
		__builtin_memcpy(buf->data, sample, sizeof(buf->data));
		buf->rounds = sample_gen;
	}
	http_framer_init(&f, sample_kind, sample_seek);
	for (i = 0; i < 16 && pos < len; i++) {
		r = scan_window(&f, buf, pos, len);
		pos = r & 0xffff;
		ev |= r >> 16;
		if (http_skipping(&f) || http_swallowing(&f))
			break;
	}
	out_events = ev;
	out_status = f.status;
	out_state = f.state;
	out_pos = pos;
	out_framer = f;
	return 0;
}

/* The harness's own cost per repeat, subtracted from parse_bench's. */
SEC("tc")
int parse_empty(struct __sk_buff *skb)
{
	return 0;
}

/*
 * The floor of the measurement: an empty program on the raw tracepoint
 * claimd's read/write program runs on (tests/peers/parse_bench.c attaches
 * it to sock_send_length too, as claimd does), timed by
 * kernel.bpf_stats_enabled like claimd's own. What claimd's programs cost
 * above this is theirs.
 */
SEC("raw_tp/sock_recv_length")
int floor_sock(void *ctx)
{
	return 0;
}

/*
 * The floor of a filter that keeps state: floor_sock plus one load of a
 * word of its own, from a global array as large as claimd's filter's
 * (sock_marks), at an index from the socket's address. On a host whose
 * syscalls flush the TLB (PTI without PCID), that one load pays a page
 * walk that floor_sock never does; what tp_io_x costs above this is its
 * filter's own work.
 */
__u32 floor_marks[CLAIMD_SOCK_MARKS];

SEC("raw_tp/sock_recv_length")
int floor_sock_load(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 sk = ctx->args[0];

	return floor_marks[(sk >> 6) & (CLAIMD_SOCK_MARKS - 1)];
}

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/*
 * The processes floor_traced follows (set by user space: the service, and
 * the client calling it where the observer follows the whole host; 0:
 * none), and its results.
 */
__u32 floor_tgid, floor_client_tgid;
__u64 floor_sink;

/*
 * The floor of a traced syscall: what any observer that frames a followed
 * process's bytes must do on each of its socket reads and writes before it
 * keeps any state of its own. The socket's kind (as tp_io_x), the current
 * task and its process, its saved registers (the syscall's number and
 * buffer), one copy of the first bytes moved (up to 64, the start of a
 * message) and one clock read. Any other process's syscall leaves after the
 * task is compared (twice: once with its client's). make bench runs it
 * alone over the same paced requests as claimd's traced figure
 * (tests/peers/parse_bench.c, --traced).
 */
SEC("raw_tp/sock_recv_length")
int floor_traced(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *sk =
		bpf_rdonly_cast((void *)ctx->args[0], bpf_core_type_id_kernel(struct sock));
	long ret = (int)ctx->args[1];
	struct task_struct *task;
	struct pt_regs *regs;
	__u8 head[64];
	__u64 n;

	if ((sk->__sk_common.skc_family != 2 && sk->__sk_common.skc_family != 10) ||
	    sk->sk_protocol != 6) /* AF_INET, AF_INET6, IPPROTO_TCP */
		return 0;
	task = bpf_get_current_task_btf();
	if ((task->tgid != floor_tgid && task->tgid != floor_client_tgid) || ret <= 0)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	n = ret < (long)sizeof(head) ? ret : sizeof(head);
	if (bpf_probe_read_user(head, n, (const void *)PT_REGS_PARM2_SYSCALL(regs)))
		return 0;
	floor_sink += bpf_ktime_get_ns() + head[0] + SYSNR_OF(regs);
	return 0;
}
