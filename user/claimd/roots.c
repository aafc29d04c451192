// SPDX-License-Identifier: GPL-2.0
/* Root calls into root edges, with their retries; see roots.h. */
#include <stdlib.h>
#include <string.h>

#include "edges.h"
#include "hashtab.h"
#include "names.h"
#include "outcome.h"
#include "roots.h"

/* Retry memories kept at most; when full, all are forgotten (a retry then
 * goes uncounted: never one too many). */
#define ROOTS_STATE_MAX 65536
#define KEY_MAX		(sizeof(__u32) + 256)

struct roots {
	struct hashtab *last; /* tgid + callee name -> struct root_last */
	struct roots_counts counts;
};

static int free_value(const struct hashtab_entry *he, void *ctx)
{
	(void)ctx;
	free(he->value);
	return 0;
}

struct roots *roots__new(void)
{
	struct roots *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->last = hashtab__new();
	if (!r->last) {
		free(r);
		return NULL;
	}
	return r;
}

static void forget_all(struct roots *r)
{
	hashtab__for_each(r->last, free_value, NULL);
	hashtab__free(r->last);
	r->last = hashtab__new();
}

void roots__free(struct roots *r)
{
	if (!r)
		return;
	if (r->last)
		hashtab__for_each(r->last, free_value, NULL);
	hashtab__free(r->last);
	free(r);
}

bool roots__is_retry(const struct root_last *prev, const struct claimd_egress *x)
{
	return prev &&
	       outcome_is_retry(prev->outcome, prev->flags, prev->method, prev->target_hash,
				x->method, x->target_hash) &&
	       x->start_ns >= prev->end_ns && x->start_ns - prev->end_ns <= ROOTS_RETRY_WINDOW_NS;
}

static size_t last_key(__u32 tgid, const char *callee, unsigned char *key)
{
	size_t n = strnlen(callee, KEY_MAX - sizeof(tgid) - 1);

	memcpy(key, &tgid, sizeof(tgid));
	memcpy(key + sizeof(tgid), callee, n);
	return sizeof(tgid) + n;
}

/* The process's last call to the callee: its retry memory, made if new. */
static struct root_last *last_get(struct roots *r, __u32 tgid, const char *callee, bool *fresh)
{
	unsigned char key[KEY_MAX];
	size_t n = last_key(tgid, callee, key);
	struct root_last *l;

	*fresh = false;
	if (!r->last)
		return NULL;
	l = hashtab__get(r->last, key, n);
	if (l)
		return l;
	if (hashtab__count(r->last) >= ROOTS_STATE_MAX) {
		forget_all(r);
		if (!r->last)
			return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	hashtab__put(r->last, key, n, l, NULL);
	*fresh = true;
	return l;
}

enum root_call roots__add(struct roots *r, struct edges *e, struct names *names,
			  const struct claimd_root_egress *rec, double now)
{
	const struct claimd_egress *x = &rec->egress;
	struct edge_counts d = { .calls = 1 };
	const char *caller, *callee;
	struct root_last *last;
	__u32 outcome;
	bool fresh;

	if (x->flags & CLAIMD_EG_LATE) {
		r->counts.late_calls++;
		return ROOT_CALL_LATE;
	}
	if (names__listening(names, rec->tgid)) {
		r->counts.calls_outside_requests++;
		return ROOT_CALL_OUTSIDE;
	}
	caller = names__process(names, rec->tgid, rec->comm);
	callee = names__callee(names, &x->callee);
	outcome = outcome_of_call(x->status, x->flags, edges__config(e)->fail_status);
	d.callee_failures = outcome == CLAIMD_OUTCOME_FAILED;
	last = last_get(r, rec->tgid, callee, &fresh);
	d.retries = last && !fresh && roots__is_retry(last, x);
	if (last) {
		last->end_ns = x->end_ns;
		last->target_hash = x->target_hash;
		last->method = x->method;
		last->outcome = outcome;
		last->flags = x->flags;
	}
	if (!edges__add_root(e, caller, callee, &d, now))
		return ROOT_CALL_DROPPED;
	r->counts.edge_calls++;
	return ROOT_CALL_EDGE;
}

struct forget_ctx {
	__u32 tgid;
	int n;
	unsigned char keys[64][KEY_MAX];
	size_t lens[64];
};

static int collect(const struct hashtab_entry *he, void *arg)
{
	struct forget_ctx *f = arg;
	__u32 tgid;

	memcpy(&tgid, he->key, sizeof(tgid));
	if (tgid != f->tgid || f->n >= 64)
		return 0;
	memcpy(f->keys[f->n], he->key, he->key_len);
	f->lens[f->n++] = he->key_len;
	return 0;
}

void roots__forget_process(struct roots *r, __u32 tgid)
{
	struct forget_ctx *f = calloc(1, sizeof(*f));
	int i;

	if (!f || !r->last) {
		free(f);
		return;
	}
	f->tgid = tgid;
	/* Collect, then remove: the table may not change during a walk. Repeat
	 * while a walk fills the batch. */
	do {
		f->n = 0;
		hashtab__for_each(r->last, collect, f);
		for (i = 0; i < f->n; i++)
			free(hashtab__del(r->last, f->keys[i], f->lens[i]));
	} while (f->n == 64);
	free(f);
}

const struct roots_counts *roots__counts(const struct roots *r)
{
	return &r->counts;
}
