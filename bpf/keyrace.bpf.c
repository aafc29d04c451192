// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An event loop's requests counted by key (bpf/req_keys.bpf.h), driven from
 * several CPUs at once as haproxy's threads drive it, with every window a
 * race could open in widened by a spin (window_spins): the counting as the
 * observer compiles it, around it what bpf/keyed.c does with it, in small.
 * A request is a slot of 'open' (its connection, as conn_ctx holds it),
 * the key's count its entry in req_keys, a stray the 'strays' count. Run
 * with BPF_PROG_TEST_RUN by tests/bpf/test_keyrace.c; never attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "observer.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define KEYRACE_SLOTS 8 /* requests open at once: one per driving thread */

/* Set by user space: the spins at each window of req_keys.bpf.h. */
__u32 window_spins;

/* The request open on each slot: its seq (0: none), as conn_ctx's holder. */
__u64 open[KEYRACE_SLOTS];
/* A slot's open request could not be counted (keyed_stray). */
__u32 stray[KEYRACE_SLOTS];
/* The process's strays open (struct claimd_outside's key_strays). */
__u32 strays;
/* What each slot's last call was tied to: the request's seq, 0 for none. */
__u64 tied[KEYRACE_SLOTS];

static long spin(__u32 i, void *ctx)
{
	return 0;
}

#define REQ_KEYS_WINDOW() bpf_loop(window_spins, spin, NULL, 0)
#include "req_keys.bpf.h"

/* args[0] a request's slot, args[1] its key's hash, args[2] its seq. */
static __always_inline __u32 slot_of(const struct bpf_raw_tracepoint_args *ctx)
{
	return ctx->args[0] & (KEYRACE_SLOTS - 1);
}

static __always_inline struct claimd_req_key key_of(const struct bpf_raw_tracepoint_args *ctx)
{
	struct claimd_req_key k = { .tgid = 1, .kind = CLAIMD_KEY_ID, .hash = ctx->args[1] };

	return k;
}

/* A request's head ended: it is open, and counted under its key or a stray. 1: a stray. */
SEC("raw_tp")
int key_open(struct bpf_raw_tracepoint_args *ctx)
{
	struct claimd_req_key k = key_of(ctx);
	__u32 i = slot_of(ctx);

	open[i] = ctx->args[2];
	if (!req_key_add(&k, i, ctx->args[2]))
		return 0;
	stray[i] = 1;
	__sync_fetch_and_add(&strays, 1);
	return 1;
}

/*
 * A call's head ended, carrying the slot's key: tied to the lone request
 * open under it whose connection still holds it (keyed_call_head), or to
 * none (tied[slot] 0). Returns the count found.
 */
SEC("raw_tp")
int key_call(struct bpf_raw_tracepoint_args *ctx)
{
	struct claimd_req_key k = key_of(ctx);
	struct claimd_req_owner o = {};
	__u32 i = slot_of(ctx), n = 2;

	tied[i] = 0;
	if (!*(volatile __u32 *)&strays)
		n = req_key_find(&k, &o);
	REQ_KEYS_WINDOW(); /* the owner found, its connection not yet looked at */
	if (n == 1 && o.seq && open[o.fd & (KEYRACE_SLOTS - 1)] == o.seq)
		tied[i] = o.seq;
	return n;
}

/* The slot's request is answered: known by its key no more (keyed_forget). */
SEC("raw_tp")
int key_forget(struct bpf_raw_tracepoint_args *ctx)
{
	struct claimd_req_key k = key_of(ctx);
	__u32 i = slot_of(ctx);

	if (stray[i]) {
		stray[i] = 0;
		__sync_fetch_and_add(&strays, -1);
	} else {
		req_key_drop(&k, ctx->args[2]);
	}
	return 0;
}

/* ... then its connection holds it no more (ingress_emit's order: a window between). */
SEC("raw_tp")
int key_clear(struct bpf_raw_tracepoint_args *ctx)
{
	open[slot_of(ctx)] = 0;
	return 0;
}
