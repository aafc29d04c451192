// SPDX-License-Identifier: GPL-2.0
/* Root calls into root edges; see roots.h. */
#include <stdlib.h>
#include <time.h>

#include "model/edges.h"
#include "model/names.h"
#include "counts.h"
#include "outcome.h"
#include "model/roots.h"

struct roots {
	struct roots_counts counts;
};

struct roots *roots__new(void)
{
	return calloc(1, sizeof(struct roots));
}

void roots__free(struct roots *r)
{
	free(r);
}

enum root_call roots__count(struct roots *r, struct edges *e, struct names *names, __u32 tgid,
			    const char *comm, const struct claimd_addr *callee,
			    const struct edge_counts *d, double now)
{
	if (!edges__add_root(e, names__process(names, tgid, comm), names__callee(names, callee), d,
			     now))
		return ROOT_CALL_DROPPED;
	r->counts.edge_calls += d->calls;
	return ROOT_CALL_EDGE;
}

enum root_call roots__add(struct roots *r, struct edges *e, struct names *names,
			  const struct claimd_root_egress *rec, double now)
{
	const struct claimd_egress *x = &rec->egress;
	struct edge_counts d = { .calls = 1 };

	/* Counted in its request's log; else written late, its edge's (count_late_call). */
	if ((x->flags & CLAIMD_EG_LATE) && !(x->flags & CLAIMD_EG_UNCOUNTED))
		return ROOT_CALL_LATE;
	/* Named now, while the process most likely lives; by what the kernel read if not. */
	names__seen(names, rec->tgid, rec->comm, rec->service);
	if (!(x->flags & CLAIMD_EG_UNCOUNTED))
		return ROOT_CALL_COUNTED;
	d.callee_failures = outcome_of_call(x->status, x->flags, edges__config(e)->fail_status) ==
			    CLAIMD_OUTCOME_FAILED;
	d.retries = !!(x->flags & CLAIMD_EG_RETRY);
	if (rec->local_port != CLAIMD_ROOT_PORT) {
		/* A service's call outside requests: its service's edge, teaching no class. */
		struct edge *ed =
			edges__get(e, names__service(names, rec->tgid, rec->local_port, rec->comm),
				   names__callee(names, &x->callee));

		if (!ed)
			return ROOT_CALL_DROPPED;
		edges__learn(e, ed, &d, now, time(NULL));
		return ROOT_CALL_SERVICE;
	}
	return roots__count(r, e, names, rec->tgid, rec->comm, &x->callee, &d, now);
}

const struct roots_counts *roots__counts(const struct roots *r)
{
	return &r->counts;
}
