/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Endpoints as people write them, "ip:port" or "[v6]:port": the one parser
 * and formatter for claimd's options and name maps, its metrics address,
 * claimctl, the lab's downstreams and the tests. A host that holds a ':'
 * must be in brackets; a port is decimal digits only (no sign, no space).
 */
#ifndef CLAIMD_ADDR_H
#define CLAIMD_ADDR_H

#include <stddef.h>

#include "observer.h"

/* Longest "[v6]:port" written by addr__format, with its NUL. */
#define ADDR_STR_MAX 64

/*
 * Splits s into its host (brackets removed; may be empty) and port
 * (0 to 65535). 0, or -1 with errno EINVAL (not HOST:PORT) or ENAMETOOLONG
 * (the host does not fit in hostlen).
 */
int addr__split(const char *s, char *host, size_t hostlen, __u16 *port);

/*
 * A numeric endpoint (IPv4 mapped into IPv6), port 1 to 65535: 0, or -1
 * with errno EINVAL; *a is zeroed first.
 */
int addr__parse(const char *s, struct claimd_addr *a);

/*
 * "10.1.2.3:80" or "[::1]:80" into buf (ADDR_STR_MAX is always enough); a
 * socket file's endpoint (headers/unixaddr.h) as "unix:#<its name's hash>".
 */
void addr__format(const struct claimd_addr *a, char *buf, size_t len);

#endif
