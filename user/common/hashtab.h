/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small chained hash table for claimd's user-side state: keys are byte
 * strings of any length (copied in), values are pointers the caller owns.
 */
#ifndef CLAIMD_HASHTAB_H
#define CLAIMD_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashtab;

struct hashtab_entry {
	struct hashtab_entry *next;
	unsigned long hash;
	void *value;
	size_t key_len;
	unsigned char key[];
};

struct hashtab *hashtab__new(void);
/* Frees the table; values are the caller's (free them first, with hashtab__for_each). */
void hashtab__free(struct hashtab *h);
/* Frees the table and, with free(), every value: for values that own nothing. */
void hashtab__free_all(struct hashtab *h);
void *hashtab__get(const struct hashtab *h, const void *key, size_t key_len);
/* Inserts or replaces; returns the value replaced, or NULL. Returns NULL and sets
 * *err on allocation failure when err is given. */
void *hashtab__put(struct hashtab *h, const void *key, size_t key_len, void *value, int *err);
/* Removes; returns the value that was there, or NULL. */
void *hashtab__del(struct hashtab *h, const void *key, size_t key_len);
size_t hashtab__count(const struct hashtab *h);

/* Visits every entry; the callback may not change the table. Stops when it returns
 * non-zero, and returns that. */
int hashtab__for_each(const struct hashtab *h, int (*fn)(const struct hashtab_entry *e, void *ctx),
		      void *ctx);
/* Each key's first four bytes, for tables whose keys begin with a number (a tgid), to fn. */
void hashtab__each_u32_key(const struct hashtab *h, void (*fn)(uint32_t first, void *ctx),
			   void *ctx);

static inline unsigned long hashtab__hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	unsigned long h = 1469598103934665603ULL;

	while (len--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

#endif
