// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libclaim: maps claimd's frozen verdict map read-only and reads the calling
 * thread's slot with a sequence-number check; formats and parses the
 * x-error-claim header; decides retries with a token-bucket budget and a
 * deadline. See user/libclaim/claim.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "claim.h"
#include "outcome.h"
#include "verdict.h"

struct claim {
	const volatile struct claim_slot *slots; /* slot 0: the header */
	size_t len;
};

static __thread pid_t cached_tid;
static pid_t cached_pid;

static void forget_tid(void)
{
	cached_tid = 0; /* the child of a fork is a new thread */
	cached_pid = 0; /* ... of a new process */
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forget_tid);
}

static pid_t my_tid(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!cached_tid) {
		pthread_once(&once, watch_forks);
		cached_tid = syscall(SYS_gettid);
	}
	return cached_tid;
}

/* BPF_OBJ_GET, without libbpf: libclaim links against nothing but libc. */
static int obj_get(const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	return syscall(__NR_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
}

struct claim *claim_open(const char *path)
{
	struct claim *c = calloc(1, sizeof(*c));
	const struct claim_map_header *h;
	size_t len = (size_t)CLAIM_SLOTS * sizeof(struct claim_slot);
	void *p;
	int fd;

	if (!c)
		return NULL;
	if (!path)
		path = getenv(CLAIM_ENV_PATH);
	if (!path || !*path)
		path = CLAIM_DEFAULT_PATH;
	fd = obj_get(path);
	if (fd < 0)
		return c; /* no claimd: answers unknown */
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return c;
	h = p;
	if (h->magic != CLAIM_MAP_MAGIC || h->version != CLAIM_MAP_VERSION ||
	    h->slots != CLAIM_SLOTS || h->slot_size != sizeof(struct claim_slot)) {
		munmap(p, len);
		return c; /* another layout: do not guess */
	}
	c->slots = p;
	c->len = len;
	return c;
}

void claim_close(struct claim *c)
{
	if (!c)
		return;
	if (c->slots)
		munmap((void *)c->slots, c->len);
	free(c);
}

int claim_connected(const struct claim *c)
{
	const volatile struct claim_map_header *h;

	if (!c || !c->slots)
		return 0;
	h = (const volatile struct claim_map_header *)c->slots;
	return h->alive == 1;
}

const void *claim_map(const struct claim *c, size_t *len)
{
	if (len)
		*len = c && c->slots ? c->len : 0;
	return c ? (const void *)c->slots : NULL;
}

/* claim_proc_unsure (verdict.h) for the calling process. */
static int proc_unsure(const struct claim *c, uint32_t outside_seen)
{
	const volatile struct claim_slot *p;
	uint64_t word;

	if (!cached_pid)
		cached_pid = getpid();
	p = &c->slots[claim_thread_index((uint32_t)cached_pid)];
	word = __atomic_load_n(&p->proc_word, __ATOMIC_ACQUIRE);
	return claim_proc_unsure(word, (uint32_t)cached_pid, outside_seen);
}

/*
 * A slot being written (odd seq) is read again at once a few times; then
 * the writer, a kernel program that may be preempted mid-write on a busy
 * host, is waited for a little before each try, up to about a millisecond
 * in all (the only case claim_current makes a system call). Unknown after.
 */
#define CLAIM_READ_FAST	   4
#define CLAIM_READ_TRIES   (CLAIM_READ_FAST + 50)
#define CLAIM_READ_WAIT_NS 20000

static void writer_wait(int tries)
{
	const struct timespec ts = { 0, CLAIM_READ_WAIT_NS };

	if (tries >= CLAIM_READ_FAST)
		nanosleep(&ts, NULL);
}

enum claim_verdict claim_current(const struct claim *c, struct claim_result *out)
{
	struct claim_result r = { .verdict = CLAIM_UNKNOWN };
	const volatile struct claim_slot *s;
	pid_t tid;
	int tries;

	if (!claim_connected(c))
		goto done;
	tid = my_tid();
	s = &c->slots[claim_thread_index((uint32_t)tid)];
	for (tries = 0; tries < CLAIM_READ_TRIES; tries++) {
		uint32_t seq;
		struct claim_slot copy;

		writer_wait(tries);
		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue; /* being written right now */
		memcpy(&copy, (const void *)s, sizeof(copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != seq)
			continue;
		/* Another thread's slot (same index), or no request being served. */
		if (copy.tid != (uint32_t)tid || !copy.active)
			break;
		if (copy.verdict == CLAIM_CLAIMED || copy.verdict == CLAIM_UNCLAIMED)
			r.verdict = copy.verdict;
		r.rule = copy.rule;
		/* A call outside requests since it began may be its own: not seen in its log. */
		if (r.verdict != CLAIM_UNKNOWN && proc_unsure(c, copy.outside_seen)) {
			r.verdict = CLAIM_UNKNOWN;
			r.rule = CLAIM_RULE_UNTIED_CALL;
			break;
		}
		r.cause_port = copy.cause_port;
		r.cause_known = copy.cause_port != 0;
		memcpy(r.cause_addr, copy.cause_addr, sizeof(r.cause_addr));
		break;
	}
done:
	if (out)
		*out = r;
	return r.verdict;
}

uint32_t claim_current_packed(const struct claim *c)
{
	struct claim_result r;
	uint32_t v = claim_current(c, &r);

	return v | (uint32_t)(r.rule & 0xff) << 8 |
	       (uint32_t)(r.cause_known ? r.cause_port : 0) << 16;
}

/* The names of verdicts, from their one table (claim_types.h). */
#define VERDICT_NAME_ROW(id, num, name) [id] = name,
static const char *const verdict_names[] = { CLAIM_VERDICT_TABLE(VERDICT_NAME_ROW) };

/* As documented in claim.h, anything but claimed or unclaimed is "unknown". */
const char *claim_verdict_name(enum claim_verdict v)
{
	if (v != CLAIM_CLAIMED && v != CLAIM_UNCLAIMED)
		v = CLAIM_UNKNOWN;
	return verdict_names[v];
}

/* The names of rules, from their table. */
#define RULE_NAME_ROW(id, num, name, verdict) [id] = name,
static const char *const rule_names[] = { CLAIM_RULE_TABLE(RULE_NAME_ROW) };

const char *claim_rule_name(enum claim_rule r)
{
	return (unsigned int)r < CLAIM_RULE__COUNT ? rule_names[r] : "none";
}

int claim_format_header(enum claim_verdict v, char *buf, size_t len)
{
	int n;

	if (len)
		buf[0] = 0;
	if (v != CLAIM_CLAIMED && v != CLAIM_UNCLAIMED)
		return 0;
	n = snprintf(buf, len, CLAIM_HEADER ": %s\r\n", claim_verdict_name(v));
	return n < 0 || (size_t)n >= len ? -1 : n;
}

enum claim_verdict claim_parse_header(const char *value, size_t len)
{
	while (len && isspace((unsigned char)*value)) {
		value++;
		len--;
	}
	while (len && isspace((unsigned char)value[len - 1]))
		len--;
	if (len == strlen(verdict_names[CLAIM_CLAIMED]) &&
	    !strncasecmp(value, verdict_names[CLAIM_CLAIMED], len))
		return CLAIM_CLAIMED;
	if (len == strlen(verdict_names[CLAIM_UNCLAIMED]) &&
	    !strncasecmp(value, verdict_names[CLAIM_UNCLAIMED], len))
		return CLAIM_UNCLAIMED;
	return CLAIM_NONE;
}

struct claim_budget {
	pthread_mutex_t lock;
	double ratio;
	double burst;
	double tokens;
};

struct claim_budget *claim_budget_new(double ratio, double burst)
{
	struct claim_budget *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	pthread_mutex_init(&b->lock, NULL);
	b->ratio = ratio > 0 ? ratio : 0;
	b->burst = burst >= 1 ? burst : 1;
	return b;
}

void claim_budget_free(struct claim_budget *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b);
}

void claim_budget_request(struct claim_budget *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	b->tokens += b->ratio;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	pthread_mutex_unlock(&b->lock);
}

int claim_budget_take(struct claim_budget *b)
{
	int ok;

	if (!b)
		return 1;
	pthread_mutex_lock(&b->lock);
	/* A whole token; the epsilon forgives sums of tenths in floating point. */
	ok = b->tokens >= 1 - 1e-9;
	if (ok)
		b->tokens -= 1;
	pthread_mutex_unlock(&b->lock);
	return ok;
}

double claim_budget_tokens(struct claim_budget *b)
{
	double t;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	t = b->tokens;
	pthread_mutex_unlock(&b->lock);
	return t;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

enum claim_decision claim_should_retry(const struct claim_outcome *out,
				       const struct claim_retry_opts *opts)
{
	int fail_status =
		opts && opts->fail_status ? opts->fail_status : OUTCOME_FAIL_STATUS_DEFAULT;
	int max_attempts = opts && opts->max_attempts ? opts->max_attempts : 2;
	int attempt = opts && opts->attempt > 0 ? opts->attempt : 1;

	/* A status of 0 is a transport failure: the call ended with no answer. */
	if (outcome_of_call(out->status, CLAIMD_EG_DONE, fail_status) == CLAIMD_OUTCOME_OK)
		return CLAIM_DONE_OK;
	if (out->status != 0) {
		if (out->header == CLAIM_UNCLAIMED)
			return CLAIM_DONE_UNCLAIMED;
		/* No header: the callee could not tell; at-least-once, no more. */
		if (out->header != CLAIM_CLAIMED && attempt >= 2)
			return CLAIM_DONE_ONCE;
	}
	if (attempt >= max_attempts)
		return CLAIM_DONE_ATTEMPTS;
	if (opts && opts->deadline_ns && now_ns() + opts->attempt_ns >= opts->deadline_ns)
		return CLAIM_DONE_DEADLINE;
	if (opts && opts->budget && !claim_budget_take(opts->budget))
		return CLAIM_DONE_BUDGET;
	return CLAIM_RETRY;
}

const char *claim_decision_name(enum claim_decision d)
{
	static const char *const names[] = {
		[CLAIM_RETRY] = "retry",
		[CLAIM_DONE_OK] = "ok",
		[CLAIM_DONE_UNCLAIMED] = "unclaimed",
		[CLAIM_DONE_ONCE] = "no-header-retried-once",
		[CLAIM_DONE_ATTEMPTS] = "attempts",
		[CLAIM_DONE_BUDGET] = "budget",
		[CLAIM_DONE_DEADLINE] = "deadline",
	};

	return (unsigned int)d < sizeof(names) / sizeof(names[0]) ? names[d] : "?";
}

/*
 * Each marker's first instruction, where claimd's uprobe goes. On x86-64 a
 * five-byte nop: a kernel that optimizes uprobes (Linux 6.18) writes a call
 * of its uprobe trampoline there at the first hit, and every later hit is
 * a system call rather than a breakpoint's trap and the single step of the
 * instruction under it; an older kernel steps it, as it did the return
 * that began each marker before. Elsewhere, nothing.
 */
#if defined(__x86_64__)
#define CLAIM_PROBE_SITE ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00"
#else
#define CLAIM_PROBE_SITE ""
#endif

/*
 * Markers for claimd's uprobes: never inlined, never optimised away, and
 * nothing else. The asm keeps the argument where the probe reads it.
 */
__attribute__((noinline)) void claim_context_enter(int fd)
{
	__asm__ volatile(CLAIM_PROBE_SITE : : "r"(fd) : "memory");
}

__attribute__((noinline)) void claim_context_leave(void)
{
	__asm__ volatile(CLAIM_PROBE_SITE : : : "memory");
}
