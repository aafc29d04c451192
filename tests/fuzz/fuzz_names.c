// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the mapping file of callee names (names__parse_map,
 * claimd --names) and the address parser under it. All lines or none:
 * a refused file says which line and why; an accepted one names its
 * addresses, and every address parsed formats back to one that parses to
 * the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct names *n = names__new();
	struct claimd_addr a, b;
	char err[256] = "", buf[64];
	char *text;
	int ret;

	if (!n)
		return 0;
	text = malloc(size + 1);
	if (!text) {
		names__free(n);
		return 0;
	}
	memcpy(text, data, size);
	ret = names__parse_map(n, text, size, err, sizeof(err));
	if (ret < 0 && !err[0])
		abort();
	/* The same bytes as one address string. */
	text[size] = 0;
	if (addr__parse(text, &a) == 0) {
		if (!a.port)
			abort();
		addr__format(&a, buf, sizeof(buf));
		if (addr__parse(buf, &b) || memcmp(&a, &b, sizeof(a)))
			abort();
		if (!names__callee(n, &a))
			abort();
	}
	free(text);
	names__free(n);
	return 0;
}
