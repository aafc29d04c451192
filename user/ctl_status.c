// SPDX-License-Identifier: GPL-2.0
/* claimctl status: claimd's own health (records, drops, tables, seeding). */
#include <argp.h>
#include <stdio.h>

#include "claimctl.h"

static error_t parse_status(int key, char *arg, struct argp_state *state)
{
	bool *json = state->input;

	(void)arg;
	switch (key) {
	case 'j':
		*json = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_status(const struct ctl_global *g, int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "json", 'j', NULL, 0, "One line of JSON", 0 },
		{},
	};
	static const struct argp argp = {
		.options = opts,
		.parser = parse_status,
		.doc = "claimd's own health: records, drops, tables.",
	};
	struct ctl_request req = { .cmd = CTL_STATUS };
	struct json_object *reply;
	bool json = false;

	if (argp_parse(&argp, argc, argv, 0, NULL, &json))
		return 2;
	reply = ctl_call(g, &req);
	if (!reply)
		return 1;
	puts(json_object_to_json_string_ext(reply, json ? JSON_C_TO_STRING_PLAIN
							: JSON_C_TO_STRING_PRETTY));
	json_object_put(reply);
	return 0;
}
