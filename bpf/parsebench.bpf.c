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

/* Set by user space before each run. */
__u8 sample[SCAN_WINDOW];
__u32 sample_len;
__u32 sample_kind;
/* Results of the last run, for checking. */
__u32 out_events;
__u32 out_status;
__u32 out_state;

SEC("tc")
int parse_bench(struct __sk_buff *skb)
{
	struct http_framer f;
	__u32 zero = 0, pos = 0, ev = 0, r, i;
	struct scan_buf *buf = bpf_map_lookup_elem(&scratch, &zero);
	__u32 len = sample_len;

	if (!buf || len > SCAN_WINDOW)
		return 1;
	__builtin_memcpy(buf->data, sample, sizeof(buf->data));
	http_framer_init(&f, sample_kind, 0);
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
