/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CLAIMD_SERVICE, read from the current process's own environment: for the
 * record of its first call outside requests, so that a process gone before
 * claimd reads /proc (a short job, a load generator, curl) keeps the name
 * its environment gives it. The environment is the strings between the
 * process's env_start and env_end, each ended by a NUL; one bpf_loop step
 * reads one of them (or the next CLAIMD_SERVICE_LEN - 1 bytes of a longer
 * one), once per process.
 */
#ifndef CLAIMD_SERVICE_ENV_BPF_H
#define CLAIMD_SERVICE_ENV_BPF_H

#define SERVICE_KEY	"CLAIMD_SERVICE="
#define SERVICE_KEY_LEN (sizeof(SERVICE_KEY) - 1)
/* Steps enough for 128 KiB of environment; a longer one's claimd reads from /proc. */
#define SERVICE_ENV_STEPS 1032

struct service_env_buf {
	char s[CLAIMD_SERVICE_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct service_env_buf);
} service_env SEC(".maps");

struct service_env_walk {
	__u64 at, end;
	struct service_env_buf *buf;
	int inside; /* 'at' is within a string, not at its start */
	int found;
};

static __always_inline int service_key_at(const char *s)
{
	const char key[] = SERVICE_KEY;
	int i;

#pragma unroll
	for (i = 0; i < SERVICE_KEY_LEN; i++)
		if (s[i] != key[i])
			return 0;
	return 1;
}

static long service_env_step(__u64 i, void *ctx)
{
	struct service_env_walk *w = ctx;
	long n;

	if (w->at >= w->end)
		return 1;
	n = bpf_probe_read_user_str(w->buf->s, CLAIMD_SERVICE_LEN, (const void *)w->at);
	if (n <= 0)
		return 1;
	if (!w->inside && n > SERVICE_KEY_LEN + 1 && service_key_at(w->buf->s)) {
		/* The value alone, nothing of the strings read before it. */
		__builtin_memset(w->buf->s, 0, CLAIMD_SERVICE_LEN);
		w->found = bpf_probe_read_user_str(w->buf->s, CLAIMD_SERVICE_LEN,
						   (const void *)(w->at + SERVICE_KEY_LEN)) > 1;
		return 1;
	}
	/* A string that filled the buffer may go on: its rest is no string's start. */
	w->inside = n == CLAIMD_SERVICE_LEN;
	w->at += w->inside ? CLAIMD_SERVICE_LEN - 1 : n;
	return 0;
}

/* out: the current process's CLAIMD_SERVICE value, or empty. */
static __noinline void service_env_read(char out[CLAIMD_SERVICE_LEN])
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct service_env_walk w = { 0 };
	__u32 zero = 0;

	if (!out)
		return;
	__builtin_memset(out, 0, CLAIMD_SERVICE_LEN);
	w.buf = bpf_map_lookup_elem(&service_env, &zero);
	if (!w.buf)
		return;
	w.at = BPF_CORE_READ(task, mm, env_start);
	w.end = BPF_CORE_READ(task, mm, env_end);
	bpf_loop(SERVICE_ENV_STEPS, service_env_step, &w, 0);
	if (w.found)
		__builtin_memcpy(out, w.buf->s, CLAIMD_SERVICE_LEN);
}

#endif /* CLAIMD_SERVICE_ENV_BPF_H */
