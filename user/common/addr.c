// SPDX-License-Identifier: GPL-2.0
/* Parsing and formatting "ip:port" and "[v6]:port"; see addr.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "unixaddr.h"
#include "argnum.h"

static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

int addr__split(const char *s, char *host, size_t hostlen, __u16 *port)
{
	const char *h = s, *colon;
	size_t hlen;
	long p;

	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			goto invalid;
		h = s + 1;
		hlen = rb - h;
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', colon - s))
			goto invalid; /* no port, or an IPv6 address without brackets */
		hlen = colon - s;
	}
	/* arg_long alone would take a sign or leading spaces. */
	if (!isdigit((unsigned char)colon[1]) || arg_long(colon + 1, 0, 65535, &p))
		goto invalid;
	if (hlen >= hostlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = 0;
	*port = p;
	return 0;
invalid:
	errno = EINVAL;
	return -1;
}

int addr__parse(const char *s, struct claimd_addr *a)
{
	char ip[INET6_ADDRSTRLEN + 1];
	__u16 port;

	memset(a, 0, sizeof(*a));
	if (addr__split(s, ip, sizeof(ip), &port) || !port)
		goto invalid;
	a->port = port;
	if (inet_pton(AF_INET, ip, &a->addr[12]) == 1) {
		memcpy(a->addr, v4mapped, sizeof(v4mapped));
		return 0;
	}
	if (inet_pton(AF_INET6, ip, a->addr) == 1)
		return 0;
invalid:
	memset(a, 0, sizeof(*a));
	errno = EINVAL;
	return -1;
}

void addr__format(const struct claimd_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (claimd_addr_is_unix(a)) {
		/* A socket file whose name claimd could not find: its name's hash. */
		snprintf(buf, len, "unix:#%016llx", (unsigned long long)claimd_addr_unix_hash(a));
		return;
	}
	if (!memcmp(a->addr, v4mapped, sizeof(v4mapped))) {
		inet_ntop(AF_INET, &a->addr[12], ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, a->port);
	} else {
		inet_ntop(AF_INET6, a->addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, a->port);
	}
}
