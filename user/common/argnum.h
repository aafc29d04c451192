/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers given on the command line (claimd, claimctl, claimlab): the whole
 * string must be the number, in range, or it is refused; nothing is clamped.
 */
#ifndef CLAIMD_ARGNUM_H
#define CLAIMD_ARGNUM_H

/* A decimal integer in [min, max]: 0 and *out set, or -1. */
int arg_long(const char *s, long min, long max, long *out);
/* A finite number in [min, max]: 0 and *out set, or -1. */
int arg_double(const char *s, double min, double max, double *out);

#endif /* CLAIMD_ARGNUM_H */
