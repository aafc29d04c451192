/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records as JSON objects, the one form claimd sends to claimctl trace.
 * Only what the kernel kept: no paths, bodies or header values.
 */
#ifndef CLAIMD_TRACE_FMT_H
#define CLAIMD_TRACE_FMT_H

#include <json-c/json.h>

#include "observer.h"

struct names;

const char *trace__method_name(unsigned int method);
const char *trace__claim_name(unsigned int claim);
/* What a call spoke (enum claimd_proto): "http", "redis", "postgres", "mysql", "?". */
const char *trace__proto_name(unsigned int proto);

/* fail_status: claimd --fail-status, for "failed" (headers/outcome.h). Verdict
 * and rule names: verdict_names.h. */
struct json_object *trace__ingress_json(const struct claimd_ingress *r, struct names *names,
					unsigned int fail_status);
struct json_object *trace__root_egress_json(const struct claimd_root_egress *r, struct names *names,
					    unsigned int fail_status);

#endif
