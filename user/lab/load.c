// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's client: concurrency threads, each with its own keep-alive
 * connection to the root, sending GET /r/0 .. /r/N-1 between them (a shared
 * counter hands out the ids) and never retrying: what it counts is what the
 * root answered, the availability a user perceives. Progress goes to stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

struct load_ctx {
	int port;
	long requests;
	int timeout_ms;
	long next; /* the next request id to send */
	uint64_t done;
	struct load_result *res;
};

static void *load_thread(void *arg)
{
	struct load_ctx *lc = arg;
	struct hclient hc = { .port = lc->port, .timeout_ms = lc->timeout_ms };
	char target[32];

	snprintf(hc.addr, sizeof(hc.addr), "127.0.0.1");
	hconn_init(&hc.conn, -1);
	while (!lab_interrupted) {
		long id = __atomic_fetch_add(&lc->next, 1, __ATOMIC_RELAXED);
		enum http_claim claim;
		int status;

		if (id >= lc->requests)
			break;
		snprintf(target, sizeof(target), "/r/%ld", id);
		status = hclient_get(&hc, target, &claim);
		stat_add(&lc->res->sent, 1);
		stat_add(&lc->res->status[status < LAB_STATUS_MAX ? status : 0], 1);
		if (status >= 200 && status < 300)
			stat_add(&lc->res->ok, 1);
		if (!status)
			stat_add(&lc->res->transport, 1);
		stat_add(&lc->done, 1);
	}
	hconn_close(&hc.conn);
	return NULL;
}

int load_run(int port, long requests, long concurrency, int timeout_ms, const char *label,
	     struct load_result *out)
{
	struct load_ctx lc = {
		.port = port,
		.requests = requests,
		.timeout_ms = timeout_ms,
		.res = out,
	};
	pthread_t *th = calloc(concurrency, sizeof(*th));
	uint64_t t0 = lab_now_ns(), last = t0;
	long i, started = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!th)
		return -ENOMEM;
	for (i = 0; i < concurrency; i++) {
		err = pthread_create(&th[i], NULL, load_thread, &lc);
		if (err) {
			pr_err("cannot start client thread %ld: %s", i, strerror(err));
			lab_interrupted = 1; /* the threads already started stop */
			err = -err;
			break;
		}
		started++;
	}
	while (!err && stat_get(&lc.done) < (uint64_t)requests && !lab_interrupted) {
		uint64_t now;

		lab_sleep_ms(50);
		now = lab_now_ns();
		if (now - last >= 2000000000ull) {
			pr_info("%s: %llu/%ld requests, %.1f s", label,
				(unsigned long long)stat_get(&lc.done), requests, (now - t0) / 1e9);
			last = now;
		}
	}
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
	out->elapsed_s = (lab_now_ns() - t0) / 1e9;
	if (!err && lab_interrupted)
		err = -EINTR;
	return err;
}
