/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gRPC status codes by name, and the set of codes claimd counts as
 * failures (--grpc-fail-codes): a mask, a bit per code, as the Go probes
 * read it (headers/goprobe.h: CLAIMD_GRPC_FAIL_DEFAULT, the status a gRPC
 * request or call carries in the records).
 */
#ifndef CLAIMD_GRPC_CODES_H
#define CLAIMD_GRPC_CODES_H

#include <stddef.h>
#include <stdint.h>

/* A code's name ("UNAVAILABLE"), or NULL out of range. */
const char *grpc_codes__name(unsigned int code);
/*
 * Parses a comma-separated list of codes, by name (any case) or number,
 * into a mask. 0 and *mask set; -1 on a word that is neither (err filled).
 */
int grpc_codes__parse(const char *list, uint32_t *mask, char *err, size_t errlen);

#endif
