/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Programs of builds the tests cannot make: a copy of a peer built here
 * (tests/peers/go) or of a packaged program (nginx) with bytes rewritten in
 * place, same length, so that everything else in the file (its functions,
 * its layouts) stays as built: a Go version string, an instruction's
 * encoding. Used where claimd must refuse what it cannot verify.
 */
#ifndef CLAIMD_TEST_GOPATCH_H
#define CLAIMD_TEST_GOPATCH_H

#include <stddef.h>

/* The buildinfo header's magic: the Go version follows it (Go 1.18 on). */
#define GOPATCH_BUILDINFO     "\xff Go buildinf:"
#define GOPATCH_BUILDINFO_LEN 14

/*
 * Copies the file src to dst (mode 0755) with occurrences of from replaced by
 * to (the same length): those after the first anchor (anchor_len bytes; all
 * of the file with anchor NULL), max of them at most (0: every one). Returns
 * how many were replaced, or -1.
 */
int gopatch_copy(const char *src, const char *dst, const char *anchor, size_t anchor_len,
		 const char *from, const char *to, int max);

#endif
