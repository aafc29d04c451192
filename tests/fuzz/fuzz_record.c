// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: records from the ring buffer as claimd takes them.
 * record__check decides whether bytes are a record; whatever it accepts is
 * then used the way on_record() uses it: as JSON for claimctl trace
 * (trace__ingress_json, trace__root_egress_json) and into the edge tables
 * (a call outside requests through roots__add, which names its process).
 * Under ASan and UBSan an accepted record must never lead to a read past
 * its bytes, and a refused one must give a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "model/edges.h"
#include "model/names.h"
#include "model/roots.h"
#include "kernel/record.h"
#include "expose/trace_fmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct edges_config cfg = { .window_s = 300,
				    .memory_half_life_s = 14 * 86400.0,
				    .min_failures = 1,
				    .fail_status = 500,
				    .use_memory = true };
	struct names *names;
	struct edges *edges;
	struct roots *roots;
	struct json_object *o = NULL;
	const char *why;
	void *rec;
	int type;

	/* Exactly the record's bytes, aligned as the ring buffer aligns them. */
	rec = malloc(size ? size : 1);
	if (!rec)
		return 0;
	memcpy(rec, data, size);
	type = record__check(rec, size, &why);
	if (!type && !why)
		abort();
	if (type && why)
		abort();
	names = names__new();
	edges = edges__new(&cfg);
	roots = roots__new();
	if (!names || !edges || !roots)
		goto out;
	switch (type) {
	case CLAIMD_REC_INGRESS:
		o = trace__ingress_json(rec, names, cfg.fail_status);
		edges__add_ingress(edges, rec, names, 1.0, 1700000000);
		break;
	case CLAIMD_REC_EGRESS:
		o = trace__root_egress_json(rec, names, cfg.fail_status);
		roots__add(roots, edges, names, rec, 1.0);
		break;
	case CLAIMD_REC_LISTEN: {
		const struct claimd_listen *l = rec;

		names__listen(names, l->tgid, &l->local, l->comm, l->closed);
		names__exit(names, l->tgid);
		break;
	}
	case CLAIMD_REC_EXIT:
		names__exit(names, ((const struct claimd_exit *)rec)->tgid);
		break;
	case CLAIMD_REC_UNREAD:
	case CLAIMD_REC_EXEC:
		break; /* claimd reads the process's program: no model of its own here */
	case CLAIMD_REC_SOCKET_FILE:
		break; /* claimd looks at the file (kernel/unix_served.h): no model here either */
	case 0:
		break;
	default:
		abort(); /* a type record__check does not know */
	}
	if (o && !json_object_to_json_string(o))
		abort();
	if (type == CLAIMD_REC_INGRESS) {
		struct json_object *arr = edges__json(edges, 2.0, 1700000001);

		json_object_put(arr);
		arr = edges__services_json(edges);
		json_object_put(arr);
	}
out:
	json_object_put(o);
	roots__free(roots);
	edges__free(edges);
	names__free(names);
	free(rec);
	return 0;
}
