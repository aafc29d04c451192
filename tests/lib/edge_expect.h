/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An edge as a test knows it must be: the calls it made, the failures of
 * the callee among them, those that failed the caller too, and the class
 * claimd must have learned from them.
 */
#ifndef CLAIMD_TEST_EDGE_EXPECT_H
#define CLAIMD_TEST_EDGE_EXPECT_H

#include <stdbool.h>

#include "harness.h"

struct edge_want {
	int calls;
	int failures;	 /* callee failures */
	int both;	 /* both failed */
	const char *cls; /* "fail-close", "fail-open", ... (NULL: not checked) */
};

/*
 * Waits (15 s at most) until claimd's edge caller -> callee holds what w
 * says, then asserts it holds exactly that; what names the check. Prints
 * the edge, and every edge claimd has when the calls differ. True if all held.
 */
bool edge_expect(const struct claimd_h *h, const char *caller, const char *callee,
		 const struct edge_want *w, const char *what);

#endif
