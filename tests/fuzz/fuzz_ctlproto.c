// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the control socket's request parser
 * (ctl_request__parse), which reads whatever a client of the control
 * socket sends. A refused line says why; an accepted request formats back
 * into a line that parses to the same request.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctlproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request req, again;
	char err[128] = "", *line, *text;

	text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	if (ctl_request__parse(text, size, &req, err, sizeof(err))) {
		if (!err[0])
			abort();
		goto out;
	}
	if (req.cmd >= CTL__COUNT)
		abort();
	line = ctl_request__format(&req);
	if (!line)
		goto out;
	/* Without its newline, as the line buffer hands it over. */
	if (ctl_request__parse(line, strlen(line) - 1, &again, err, sizeof(err)) ||
	    again.cmd != req.cmd || again.roots != req.roots)
		abort();
	free(line);
out:
	free(text);
	return 0;
}
