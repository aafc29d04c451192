// SPDX-License-Identifier: GPL-2.0
/* gRPC status codes by name; see grpc_codes.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "goprobe.h"
#include "probes/go/grpc_codes.h"

static const char *const names[CLAIMD_GRPC_CODES] = {
	"OK",
	"CANCELLED",
	"UNKNOWN",
	"INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED",
	"NOT_FOUND",
	"ALREADY_EXISTS",
	"PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION",
	"ABORTED",
	"OUT_OF_RANGE",
	"UNIMPLEMENTED",
	"INTERNAL",
	"UNAVAILABLE",
	"DATA_LOSS",
	"UNAUTHENTICATED",
};

const char *grpc_codes__name(unsigned int code)
{
	return code < CLAIMD_GRPC_CODES ? names[code] : NULL;
}

static int code_of(const char *word)
{
	char *end;
	long n;
	int i;

	for (i = 0; i < CLAIMD_GRPC_CODES; i++)
		if (!strcasecmp(word, names[i]))
			return i;
	n = strtol(word, &end, 10);
	if (*word && !*end && n >= 0 && n < CLAIMD_GRPC_CODES)
		return n;
	return -1;
}

int grpc_codes__parse(const char *list, uint32_t *mask, char *err, size_t errlen)
{
	char buf[512], *word, *save = NULL;
	uint32_t m = 0;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "list too long");
		return -1;
	}
	for (word = strtok_r(buf, ", ", &save); word; word = strtok_r(NULL, ", ", &save)) {
		int code = code_of(word);

		if (code < 0) {
			snprintf(err, errlen, "'%s' is no gRPC code (0-16, or a name: UNAVAILABLE)",
				 word);
			return -1;
		}
		m |= 1u << code;
	}
	*mask = m;
	return 0;
}
