// SPDX-License-Identifier: GPL-2.0
/*
 * What a lab node does with one connection: for each request (one at a time,
 * keep-alive), inject its own fault or call its downstreams in order under
 * its retry policy, each on this thread's own keep-alive connection, then
 * answer. A failed answer carries x-error-claim from claim_current(): the
 * verdict claimd keeps for the request this thread is serving (claimed when
 * no call failed, unclaimed when a failed call decided), nothing when
 * unknown or with --no-claim-header. The calls and the answer happen on the
 * thread that read the request: that is how claimd ties them together.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lab.h"

struct conn_ctx {
	struct hconn in;
	struct hclient down[LAB_MAX_DOWN];
};

static void note_in_flight(struct node_stats *st, uint64_t now)
{
	uint64_t max = stat_get(&st->in_flight_max);

	while (now > max && !__atomic_compare_exchange_n(&st->in_flight_max, &max, now, false,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static bool own_fault(struct node *n, uint64_t in_flight)
{
	if (n->fail_mode == FAIL_OVERLOAD)
		return (long)in_flight > n->capacity;
	if (n->fail_rate <= 0)
		return false;
	/* Deterministic per node: the k-th request to arrive draws number k. */
	return lab_uniform(n->seed, __atomic_fetch_add(&n->draws, 1, __ATOMIC_RELAXED)) <
	       n->fail_rate;
}

static int reply(struct node *n, int fd, int status)
{
	char hdr[64] = "";
	enum claim_verdict v = CLAIM_UNKNOWN;
	int idx = 0;

	if (lab_failed(status)) {
		if (!n->no_claim_header)
			v = claim_current(n->claim, NULL);
		if (claim_format_header(v, hdr, sizeof(hdr)) > 0)
			idx = v == CLAIM_CLAIMED ? 1 : 2;
		stat_add(&n->st.claims_written[idx], 1);
	}
	stat_add(&n->st.status[status < LAB_STATUS_MAX ? status : 0], 1);
	return http_respond(fd, status, hdr, status < 300 ? "ok\n" : "failed\n");
}

static int handle(struct node *n, struct conn_ctx *cx, const struct hmsg *m)
{
	uint64_t in_flight;
	int status = 200, i, err;

	stat_add(&n->st.requests, 1);
	in_flight = __atomic_add_fetch(&n->st.in_flight, 1, __ATOMIC_RELAXED);
	note_in_flight(&n->st, in_flight);
	if (m->method != HTTP_M_GET) {
		status = 405;
	} else if (strncmp(m->target, "/r/", 3)) {
		status = 404;
	} else if (own_fault(n, in_flight)) {
		stat_add(&n->st.own_failures, 1);
		status = 503; /* at once: no downstream is called */
	} else {
		for (i = 0; i < n->n_down; i++) {
			struct call_result res;

			policy_call(&n->policy, &n->down[i], &cx->down[i], m->target, &res);
			if (lab_failed(res.status) && !n->down[i].open) {
				status = 502;
				break;
			}
		}
	}
	err = reply(n, cx->in.fd, status);
	__atomic_sub_fetch(&n->st.in_flight, 1, __ATOMIC_RELAXED);
	return err;
}

void *node_serve_conn(void *arg)
{
	struct conn_arg *a = arg;
	struct node *n = a->node;
	struct conn_ctx *cx = calloc(1, sizeof(*cx));
	struct hmsg m;
	int i, one = 1;

	if (!cx) {
		pr_err("out of memory for a connection");
		close(a->fd);
		free(a);
		return NULL;
	}
	setsockopt(a->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	hconn_init(&cx->in, a->fd);
	for (i = 0; i < n->n_down; i++) {
		struct hclient *hc = &cx->down[i];

		hconn_init(&hc->conn, -1);
		snprintf(hc->addr, sizeof(hc->addr), "%s", n->down[i].addr);
		hc->port = n->down[i].port;
		hc->timeout_ms = n->timeout_ms;
	}
	while (!hconn_read(&cx->in, HTTP_KIND_REQUEST, &m))
		if (handle(n, cx, &m))
			break;
	hconn_close(&cx->in);
	for (i = 0; i < n->n_down; i++)
		hconn_close(&cx->down[i].conn);
	free(cx);
	free(a);
	return NULL;
}
