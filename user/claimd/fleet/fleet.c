// SPDX-License-Identifier: GPL-2.0
/* The fleet's edge classes from Prometheus, on a thread of their own; see fleet.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet/fleet.h"
#include "fleet/fleet_table.h"
#include "log.h"
#include "promql.h"

/* The records of scripts/prometheus/claimd.rules.yml claimd reads back. */
#define Q_CLASSES   "claimd:edge_class:rate5m"
#define Q_RATIOS    "claimd:edge_ratio:rate5m"
#define Q_ADDRESSES "claimd:service_address"

enum fleet_state { FLEET_STARTING, FLEET_OK, FLEET_UNREACHABLE };

struct fleet {
	char *url;
	unsigned int interval_s;
	long timeout_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	/* Under lock: what the thread read, for the main thread to take. */
	struct fleet_table *pending;
	bool has_pending; /* pending is newer than current (NULL: drop the fleet's classes) */
	enum fleet_state state;
	unsigned long queries, errors;
	char last_error[256];
	struct timespec last_ok;
	/* The main thread's own. */
	struct fleet_table *current;
};

static const char *state_name(enum fleet_state s)
{
	return s == FLEET_OK ? "ok" : s == FLEET_UNREACHABLE ? "unreachable" : "starting";
}

/* One round of queries: a table, or NULL with the reason in err. */
static struct fleet_table *read_fleet(const struct fleet *f, char *err, size_t errlen)
{
	struct json_object *cls = NULL, *ratios = NULL, *addrs = NULL;
	struct fleet_table *t = NULL;

	cls = promql__query(f->url, Q_CLASSES, f->timeout_ms, err, errlen);
	if (cls)
		ratios = promql__query(f->url, Q_RATIOS, f->timeout_ms, err, errlen);
	if (ratios)
		addrs = promql__query(f->url, Q_ADDRESSES, f->timeout_ms, err, errlen);
	if (addrs) {
		t = fleet_table__new(cls, ratios, addrs);
		if (!t)
			snprintf(err, errlen, "out of memory");
	}
	json_object_put(cls);
	json_object_put(ratios);
	json_object_put(addrs);
	return t;
}

/* Said once per change of state, not once per failed query. */
static void publish(struct fleet *f, struct fleet_table *t, const char *err)
{
	enum fleet_state was;

	pthread_mutex_lock(&f->lock);
	was = f->state;
	f->queries++;
	fleet_table__free(f->pending);
	f->pending = t;
	f->has_pending = true;
	if (t) {
		f->state = FLEET_OK;
		clock_gettime(CLOCK_MONOTONIC, &f->last_ok);
	} else {
		f->state = FLEET_UNREACHABLE;
		f->errors++;
		snprintf(f->last_error, sizeof(f->last_error), "%s", err);
	}
	pthread_mutex_unlock(&f->lock);
	if (!t && was != FLEET_UNREACHABLE)
		pr_warn("fleet classes from %s: %s; using this host's classes only until it "
			"answers",
			f->url, err);
	else if (t && was == FLEET_UNREACHABLE)
		pr_info("fleet classes from %s again (%zu edges)", f->url, fleet_table__edges(t));
}

static void *run(void *arg)
{
	struct fleet *f = arg;
	char err[256];

	for (;;) {
		struct fleet_table *t;
		struct timespec until;

		pthread_mutex_lock(&f->lock);
		if (f->stopping) {
			pthread_mutex_unlock(&f->lock);
			break;
		}
		pthread_mutex_unlock(&f->lock);
		err[0] = 0;
		t = read_fleet(f, err, sizeof(err));
		publish(f, t, err);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += f->interval_s;
		pthread_mutex_lock(&f->lock);
		while (!f->stopping &&
		       pthread_cond_timedwait(&f->wake, &f->lock, &until) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&f->lock);
	}
	return NULL;
}

struct fleet *fleet__start(const char *url, unsigned int interval_s, long timeout_ms)
{
	struct fleet *f = calloc(1, sizeof(*f));
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!f || !(f->url = strdup(url))) {
		pr_err("fleet classes: out of memory");
		free(f);
		return NULL;
	}
	f->interval_s = interval_s;
	f->timeout_ms = timeout_ms;
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* The thread inherits this mask: signals stay with claimd's loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&f->thread, NULL, run, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("fleet classes: cannot start a thread: %s", strerror(err));
		pthread_cond_destroy(&f->wake);
		pthread_mutex_destroy(&f->lock);
		free(f->url);
		free(f);
		return NULL;
	}
	pr_info("fleet classes from %s every %u s (timeout %ld ms)", url, interval_s, timeout_ms);
	return f;
}

void fleet__stop(struct fleet *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stopping = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	fleet_table__free(f->pending);
	fleet_table__free(f->current);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	free(f->url);
	free(f);
}

unsigned int fleet__update(struct fleet *f)
{
	unsigned int changed = 0;
	struct fleet_table *t;
	bool fresh;

	pthread_mutex_lock(&f->lock);
	fresh = f->has_pending;
	t = f->pending;
	f->pending = NULL;
	f->has_pending = false;
	pthread_mutex_unlock(&f->lock);
	if (!fresh)
		return 0;
	if (!t) {
		/* Unreachable: this host's classes only; the names stay true. */
		if (fleet_table__edges(f->current))
			changed |= FLEET_CLASSES_CHANGED;
		fleet_table__drop_classes(f->current);
		return changed;
	}
	if (fleet_table__edges(f->current) || fleet_table__edges(t))
		changed |= FLEET_CLASSES_CHANGED;
	if (!fleet_table__same_names(f->current, t))
		changed |= FLEET_NAMES_CHANGED;
	fleet_table__free(f->current);
	f->current = t;
	return changed;
}

const char *fleet__name(void *ctx, const char *addr)
{
	const struct fleet *f = ctx;

	return fleet_table__name(f->current, addr);
}

bool fleet__class(void *ctx, const char *caller, const char *callee, enum claim_class *cls,
		  double *ratio)
{
	const struct fleet *f = ctx;

	return fleet_table__class(f->current, caller, callee, cls, ratio);
}

struct json_object *fleet__status_json(struct fleet *f)
{
	struct json_object *o = json_object_new_object();
	struct timespec now;
	double age = -1;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&f->lock);
	if (f->last_ok.tv_sec || f->last_ok.tv_nsec)
		age = (now.tv_sec - f->last_ok.tv_sec) + (now.tv_nsec - f->last_ok.tv_nsec) / 1e9;
	json_object_object_add(o, "url", json_object_new_string(f->url));
	json_object_object_add(o, "state", json_object_new_string(state_name(f->state)));
	json_object_object_add(o, "queries", json_object_new_uint64(f->queries));
	json_object_object_add(o, "errors", json_object_new_uint64(f->errors));
	json_object_object_add(o, "last_error",
			       f->last_error[0] ? json_object_new_string(f->last_error) : NULL);
	pthread_mutex_unlock(&f->lock);
	json_object_object_add(
		o, "using",
		json_object_new_string(fleet_table__edges(f->current) ? "fleet" : "local"));
	json_object_object_add(o, "edges", json_object_new_uint64(fleet_table__edges(f->current)));
	json_object_object_add(o, "last_ok_age_s", age < 0 ? NULL : json_object_new_double(age));
	return o;
}
