// SPDX-License-Identifier: GPL-2.0
/* Entries of claimd's BPF maps against their capacity; see metrics_maps.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "kernel/metrics_maps.h"

void map_fill__init(struct map_fill *m, const char *name, int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(m, 0, sizeof(*m));
	memset(&info, 0, sizeof(info));
	m->name = name;
	m->fd = fd;
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		m->err = fd < 0 ? -EBADF : -errno;
		return;
	}
	m->key_size = info.key_size;
	m->max_entries = info.max_entries;
}

static int count_one(struct map_fill *m)
{
	void *key = calloc(2, m->key_size ? m->key_size : 1), *next;
	uint64_t n = 0;
	int err = 0;

	if (!key)
		return -ENOMEM;
	next = (char *)key + m->key_size;
	/* NULL first: the first key. Entries deleted meanwhile restart nothing:
	 * the count is a snapshot, good to a few entries. */
	if (bpf_map_get_next_key(m->fd, NULL, next))
		err = errno == ENOENT ? 0 : -errno;
	else
		for (n = 1; n <= m->max_entries; n++) {
			memcpy(key, next, m->key_size);
			if (bpf_map_get_next_key(m->fd, key, next)) {
				err = errno == ENOENT ? 0 : -errno;
				break;
			}
		}
	if (!err)
		m->entries = n < m->max_entries ? n : m->max_entries;
	free(key);
	return err;
}

void map_fill__count(struct map_fill *m, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (m[i].key_size)
			m[i].err = count_one(&m[i]);
}

struct json_object *map_fill__json(const struct map_fill *m, int n)
{
	struct json_object *o = json_object_new_object();
	int i;

	for (i = 0; o && i < n; i++) {
		struct json_object *e;

		if (!m[i].key_size || m[i].err)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "entries", json_object_new_uint64(m[i].entries));
		json_object_object_add(e, "max_entries", json_object_new_uint64(m[i].max_entries));
		if (m[i].has_evicted)
			json_object_object_add(e, "evicted", json_object_new_uint64(m[i].evicted));
		if (m[i].has_refused) {
			json_object_object_add(e, "refused", json_object_new_uint64(m[i].refused));
			json_object_object_add(e, "refused_total",
					       json_object_new_uint64(m[i].refused_total));
		}
		json_object_object_add(o, m[i].name, e);
	}
	return o;
}
