// SPDX-License-Identifier: GPL-2.0
/* The tables of counter names and help texts; see counters.h. */
#include <stdbool.h>
#include <string.h>

#include "kernel/counters.h"

static const struct {
	const char *name, *help;
} kernel[CLAIMD_ST__COUNT] = {
#define KERNEL_ROW(id, name, help) [id] = { name, help },
	CLAIMD_KERNEL_COUNTERS(KERNEL_ROW)
#undef KERNEL_ROW
};

const char *counters__kernel_name(int which)
{
	return which >= 0 && which < CLAIMD_ST__COUNT && kernel[which].name ? kernel[which].name
									    : "?";
}

const char *counters__kernel_help(const char *name)
{
	int i;

	for (i = 0; i < CLAIMD_ST__COUNT; i++)
		if (kernel[i].name && !strcmp(kernel[i].name, name))
			return kernel[i].help;
	return NULL;
}
