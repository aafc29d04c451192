// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c. Explicit request context: uprobes on libclaim's
 * claim_context_enter(fd) and claim_context_leave(), which an event-loop
 * service calls around the work it does for one request. While a thread is
 * inside a context, the ingress it opens is kept with that request's
 * connection (conn_ctx), and the calls it makes go into that connection's
 * egress log, however the loop interleaves requests. libclaim's functions
 * themselves do nothing.
 */

SEC("uprobe")
int BPF_KPROBE(ctx_enter, int fd)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct claimd_conn_key key = { .tgid = id >> 32, .fd = fd };
	__u32 tid = (__u32)id;
	struct claimd_thread *t;

	if (!is_traced(key.tgid))
		return 0;
	proc_flag_set(key.tgid, PROC_CONTEXT);
	bpf_map_update_elem(&thread_cur, &tid, &key, BPF_ANY);
	/* The thread's slot now shows this request's running verdict. */
	t = bpf_map_lookup_elem(&conn_ctx, &key);
	if (t && t->conn.tgid)
		slot_write(tid, 1, verdict_of(&t->rec), &t->rec, t->outside_seen);
	else
		slot_write(tid, 0, VERDICT(CLAIM_NONE, CLAIM_RULE_NONE, CLAIMD_NO_SLOT), NULL, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(ctx_leave)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (bpf_map_delete_elem(&thread_cur, &tid) == 0)
		slot_write(tid, 0, VERDICT(CLAIM_NONE, CLAIM_RULE_NONE, CLAIMD_NO_SLOT), NULL, 0);
	return 0;
}
