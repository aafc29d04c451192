// SPDX-License-Identifier: GPL-2.0
/* Persisting the edge memory; see memory.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "host/statefile.h"
#include "log.h"
#include "model/memory.h"

#define MEMORY_MAX_BYTES (64u << 20)

static int number(struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)))
		return -1;
	*out = json_object_get_double(v);
	return isfinite(*out) && *out >= 0 ? 0 : -1;
}

static const char *string(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

struct parsed_edge {
	const char *caller, *callee;
	struct edge_memory m;
};

int memory__parse(struct edges *e, const char *text, size_t len, char *why, size_t whylen)
{
	struct json_object *root, *arr;
	struct parsed_edge *pe = NULL;
	size_t n = 0, i;
	double d;
	int ret = -1;

	root = statefile__parse(text, len, MEMORY_MAX_BYTES, MEMORY_FORMAT, MEMORY_VERSION, "edges",
				&arr, why, whylen);
	if (!root)
		return -1;
	/* Check everything before changing anything: all of the file, or none. */
	n = json_object_array_length(arr);
	pe = calloc(n ? n : 1, sizeof(*pe));
	if (!pe) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		pe[i].caller = string(o, "caller");
		pe[i].callee = string(o, "callee");
		if (!pe[i].caller || !pe[i].callee || !*pe[i].caller || !*pe[i].callee ||
		    strlen(pe[i].caller) > 200 || strlen(pe[i].callee) > 200 ||
		    number(o, "calls", &pe[i].m.calls) ||
		    number(o, "callee_failures", &pe[i].m.callee_failures) ||
		    number(o, "both_failed", &pe[i].m.both_failed) ||
		    number(o, "updated_unix", &d) || d >= 0x1p62 ||
		    pe[i].m.both_failed > pe[i].m.callee_failures) {
			snprintf(why, whylen, "edge %zu is malformed", i);
			goto out;
		}
		pe[i].m.updated = (time_t)d;
	}
	for (i = 0; i < n; i++) {
		struct edge *ed = edges__get(e, pe[i].caller, pe[i].callee);

		if (!ed) {
			snprintf(why, whylen, "out of memory");
			goto out;
		}
		ed->memory = pe[i].m;
		ed->in_memory = true;
	}
	ret = (int)n;
out:
	free(pe);
	json_object_put(root);
	return ret;
}

/* A memory file claimd cannot read, moved aside, kept for a human: claimd starts with an empty memory. */
static int memory_aside(const char *path, const char *state_dir, time_t wall,
			struct memory_load *out)
{
	out->corrupt = 1;
	snprintf(out->moved_to, sizeof(out->moved_to), "%s/%s.corrupt-%ld", state_dir, MEMORY_FILE,
		 (long)wall);
	if (rename(path, out->moved_to))
		snprintf(out->moved_to, sizeof(out->moved_to), "(could not move: %s)",
			 strerror(errno));
	return 0;
}

int memory__load(struct edges *e, const char *state_dir, time_t wall, struct memory_load *out)
{
	char path[512];
	size_t len;
	char *text;
	int n;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%s", state_dir, MEMORY_FILE);
	text = statefile__read(path, MEMORY_MAX_BYTES, &len);
	if (!text)
		return errno == ENOENT ? 0 : -1;
	n = memory__parse(e, text, len, out->why, sizeof(out->why));
	free(text);
	if (n >= 0) {
		out->edges = n;
		return 0;
	}
	return memory_aside(path, state_dir, wall, out);
}

struct save_ctx {
	const struct edges *e;
	struct json_object *arr;
	time_t wall;
};

static void save_edge(struct edge *ed, void *arg)
{
	struct save_ctx *s = arg;
	struct json_object *o;
	struct edge_memory m;

	if (!ed->in_memory)
		return;
	m = edges__memory_at(s->e, ed, s->wall);
	o = json_object_new_object();
	json_object_object_add(o, "caller", json_object_new_string(ed->caller));
	json_object_object_add(o, "callee", json_object_new_string(ed->callee));
	json_object_object_add(o, "calls", json_object_new_double(m.calls));
	json_object_object_add(o, "callee_failures", json_object_new_double(m.callee_failures));
	json_object_object_add(o, "both_failed", json_object_new_double(m.both_failed));
	json_object_object_add(o, "updated_unix", json_object_new_int64(m.updated));
	json_object_array_add(s->arr, o);
}

int memory__save(const struct edges *e, const char *state_dir, time_t wall)
{
	struct save_ctx s = { e, json_object_new_array(), wall };
	struct json_object *root = json_object_new_object();
	int err;

	edges__for_each(e, save_edge, &s);
	json_object_object_add(root, "format", json_object_new_string(MEMORY_FORMAT));
	json_object_object_add(root, "version", json_object_new_int(MEMORY_VERSION));
	json_object_object_add(root, "saved_unix", json_object_new_int64(wall));
	json_object_object_add(root, "half_life_s",
			       json_object_new_double(edges__config(e)->memory_half_life_s));
	json_object_object_add(root, "edges", s.arr);
	err = statefile__write(state_dir, MEMORY_FILE,
			       json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object_put(root);
	return err;
}
