// SPDX-License-Identifier: GPL-2.0
/* A small chained hash table with byte-string keys; see hashtab.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"

struct hashtab {
	struct hashtab_entry **buckets;
	size_t nbuckets;
	size_t count;
};

struct hashtab *hashtab__new(void)
{
	struct hashtab *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->nbuckets = 64;
	h->buckets = calloc(h->nbuckets, sizeof(*h->buckets));
	if (!h->buckets) {
		free(h);
		return NULL;
	}
	return h;
}

void hashtab__free(struct hashtab *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->nbuckets; i++) {
		struct hashtab_entry *e = h->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(h->buckets);
	free(h);
}

static int free_value(const struct hashtab_entry *e, void *ctx)
{
	(void)ctx;
	free(e->value);
	return 0;
}

void hashtab__free_all(struct hashtab *h)
{
	if (h)
		hashtab__for_each(h, free_value, NULL);
	hashtab__free(h);
}

static struct hashtab_entry **find(const struct hashtab *h, const void *key, size_t len,
				   unsigned long hash)
{
	struct hashtab_entry **pp = &h->buckets[hash & (h->nbuckets - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->hash == hash && (*pp)->key_len == len && !memcmp((*pp)->key, key, len))
			return pp;
	}
	return pp;
}

void *hashtab__get(const struct hashtab *h, const void *key, size_t key_len)
{
	struct hashtab_entry **pp = find(h, key, key_len, hashtab__hash(key, key_len));

	return *pp ? (*pp)->value : NULL;
}

static int grow(struct hashtab *h)
{
	size_t n = h->nbuckets * 2, i;
	struct hashtab_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < h->nbuckets; i++) {
		struct hashtab_entry *e = h->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(h->buckets);
	h->buckets = b;
	h->nbuckets = n;
	return 0;
}

void *hashtab__put(struct hashtab *h, const void *key, size_t key_len, void *value, int *err)
{
	unsigned long hash = hashtab__hash(key, key_len);
	struct hashtab_entry **pp = find(h, key, key_len, hash), *e;
	void *old;

	if (err)
		*err = 0;
	if (*pp) {
		old = (*pp)->value;
		(*pp)->value = value;
		return old;
	}
	e = malloc(sizeof(*e) + key_len);
	if (!e) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	e->next = NULL;
	e->hash = hash;
	e->value = value;
	e->key_len = key_len;
	memcpy(e->key, key, key_len);
	*pp = e;
	h->count++;
	if (h->count > h->nbuckets * 3 / 4)
		grow(h); /* a failed grow only makes chains longer */
	return NULL;
}

void *hashtab__del(struct hashtab *h, const void *key, size_t key_len)
{
	struct hashtab_entry **pp = find(h, key, key_len, hashtab__hash(key, key_len)), *e;
	void *value;

	if (!*pp)
		return NULL;
	e = *pp;
	value = e->value;
	*pp = e->next;
	free(e);
	h->count--;
	return value;
}

size_t hashtab__count(const struct hashtab *h)
{
	return h->count;
}

void hashtab__each_u32_key(const struct hashtab *h, void (*fn)(uint32_t first, void *ctx),
			   void *ctx)
{
	const struct hashtab_entry *e;
	uint32_t first;
	size_t i;

	for (i = 0; i < h->nbuckets; i++)
		for (e = h->buckets[i]; e; e = e->next) {
			if (e->key_len < sizeof(first))
				continue;
			memcpy(&first, e->key, sizeof(first));
			fn(first, ctx);
		}
}

int hashtab__for_each(const struct hashtab *h, int (*fn)(const struct hashtab_entry *e, void *ctx),
		      void *ctx)
{
	size_t i;
	int ret;

	for (i = 0; i < h->nbuckets; i++) {
		const struct hashtab_entry *e;

		for (e = h->buckets[i]; e; e = e->next) {
			ret = fn(e, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}
