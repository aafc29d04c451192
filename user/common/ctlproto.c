// SPDX-License-Identifier: GPL-2.0
/* The control protocol's requests; see ctlproto.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "ctlproto.h"

static const char *const cmd_names[CTL__COUNT] = {
	[CTL_TRACE] = "trace",	     [CTL_STATUS] = "status", [CTL_EDGES] = "edges",
	[CTL_SERVICES] = "services", [CTL_GRAPH] = "graph",
};

const char *ctl_cmd__name(enum ctl_cmd cmd)
{
	return cmd < CTL__COUNT ? cmd_names[cmd] : "?";
}

int ctl_request__parse(const char *line, size_t len, struct ctl_request *req, char *err,
		       size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = NULL, *v;
	const char *cmd;
	int i, ret = -1;

	memset(req, 0, sizeof(*req));
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (len > CTL_MAX_LINE) {
		snprintf(err, errlen, "request longer than %d bytes", CTL_MAX_LINE);
		goto out;
	}
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)len) {
		snprintf(err, errlen, "request is not one JSON object");
		goto out;
	}
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "cmd", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "request has no \"cmd\" string");
		goto out;
	}
	cmd = json_object_get_string(v);
	for (i = 0; i < CTL__COUNT; i++)
		if (!strcmp(cmd, cmd_names[i]))
			break;
	if (i == CTL__COUNT) {
		snprintf(err, errlen, "unknown command \"%.32s\"", cmd);
		goto out;
	}
	req->cmd = i;
	if (json_object_object_get_ex(o, "roots", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(err, errlen, "\"roots\" must be true or false");
			goto out;
		}
		req->roots = json_object_get_boolean(v);
	}
	ret = 0;
out:
	json_object_put(o);
	json_tokener_free(tok);
	return ret;
}

char *ctl_request__format(const struct ctl_request *req)
{
	struct json_object *o = json_object_new_object();
	char *line = NULL;
	const char *s;

	if (!o)
		return NULL;
	json_object_object_add(o, "cmd", json_object_new_string(ctl_cmd__name(req->cmd)));
	if (req->roots)
		json_object_object_add(o, "roots", json_object_new_boolean(1));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (s && asprintf(&line, "%s\n", s) < 0)
		line = NULL;
	json_object_put(o);
	return line;
}
