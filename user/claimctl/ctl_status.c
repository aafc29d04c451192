// SPDX-License-Identifier: GPL-2.0
/* claimctl status: claimd's own health (records, drops, tables, seeding). */
#include <stdio.h>

#include "claimctl.h"

int cmd_status(const struct ctl_global *g, int argc, char **argv)
{
	struct ctl_request req = { .cmd = CTL_STATUS };
	struct json_object *reply;
	bool json;

	if (ctl_parse_json_only(argc, argv, "claimd's own health: records, drops, tables.", &json))
		return 2;
	reply = ctl_call(g, &req);
	if (!reply)
		return 1;
	puts(json_object_to_json_string_ext(reply, json ? JSON_C_TO_STRING_PLAIN
							: JSON_C_TO_STRING_PRETTY));
	json_object_put(reply);
	return 0;
}
