// SPDX-License-Identifier: GPL-2.0
/* The names of listeners gone, across restarts; see departed.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "host/statefile.h"
#include "host/unix_listeners.h"
#include "model/departed.h"
#include "unixaddr.h"

#define DEPARTED_MAX_BYTES (4u << 20)
#define DEPARTED_NAME_MAX  200

static void addr_hex(const struct claimd_addr *a, char out[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", a->addr[i]);
}

static int hex_addr(const char *s, struct claimd_addr *a)
{
	int i;

	if (!s || strlen(s) != 32 || strspn(s, "0123456789abcdef") != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		a->addr[i] = b;
	}
	return 0;
}

static void save_one(const struct claimd_addr *local, const char *name, void *ctx)
{
	struct json_object *o = json_object_new_object();
	char hex[33];

	addr_hex(local, hex);
	json_object_object_add(o, "addr", json_object_new_string(hex));
	json_object_object_add(o, "port", json_object_new_int(local->port));
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_array_add(ctx, o);
}

static void save_socket_file(__u64 hash, const char *path, __u64 bound, time_t seen, void *ctx)
{
	struct json_object *o = json_object_new_object();
	char hex[17];

	(void)hash; /* the path's: made again from it */
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)bound);
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "bound", json_object_new_string(hex));
	json_object_object_add(o, "seen", json_object_new_int64(seen));
	json_object_array_add(ctx, o);
}

int departed__save(struct names *n, const char *state_dir)
{
	struct json_object *root = json_object_new_object(), *arr = json_object_new_array();
	struct json_object *files = json_object_new_array();
	int err;

	names__each_departed(n, save_one, arr);
	names__each_socket_file(n, save_socket_file, files);
	json_object_object_add(root, "format", json_object_new_string(DEPARTED_FORMAT));
	json_object_object_add(root, "version", json_object_new_int(DEPARTED_VERSION));
	json_object_object_add(root, "departed", arr);
	json_object_object_add(root, "socket_files", files);
	err = statefile__write(state_dir, DEPARTED_FILE,
			       json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object_put(root);
	return err;
}

/* Entry i of arr as an address and a name, or -1. */
static int entry(struct json_object *arr, size_t i, struct claimd_addr *a, const char **name)
{
	struct json_object *o = json_object_array_get_idx(arr, i), *v;
	int port;

	memset(a, 0, sizeof(*a));
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "addr", &v) ||
	    !json_object_is_type(v, json_type_string) || hex_addr(json_object_get_string(v), a) ||
	    !json_object_object_get_ex(o, "port", &v) || !json_object_is_type(v, json_type_int))
		return -1;
	port = json_object_get_int(v);
	if (port < 1 || port > 65535)
		return -1;
	a->port = port;
	if (!json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string))
		return -1;
	*name = json_object_get_string(v);
	return **name && strlen(*name) <= DEPARTED_NAME_MAX ? 0 : -1;
}

/* Socket file i of files as a path, its bound name's hash and when it was listened on, or -1. */
static int socket_file_entry(struct json_object *files, size_t i, const char **path, __u64 *bound,
			     time_t *seen)
{
	struct json_object *o = json_object_array_get_idx(files, i), *v;
	const char *hex;
	size_t n;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "path", &v) || !json_object_is_type(v, json_type_string))
		return -1;
	*path = json_object_get_string(v);
	n = strlen(*path);
	if (!n || n > CLAIMD_UNIX_NAME_MAX || ((*path)[0] != '/' && (*path)[0] != '@'))
		return -1;
	if (!json_object_object_get_ex(o, "bound", &v) || !json_object_is_type(v, json_type_string))
		return -1;
	hex = json_object_get_string(v);
	if (strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16)
		return -1;
	*bound = strtoull(hex, NULL, 16);
	if (!json_object_object_get_ex(o, "seen", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return -1;
	*seen = json_object_get_int64(v);
	return 0;
}

int departed__parse(struct names *n, const char *text, size_t len, time_t now, char *why,
		    size_t whylen)
{
	struct json_object *root, *arr, *files = NULL;
	struct claimd_addr a;
	const char *name;
	size_t i, count, n_files = 0;
	__u64 bound;
	time_t seen;
	int ret = -1;

	root = statefile__parse(text, len, DEPARTED_MAX_BYTES, DEPARTED_FORMAT, DEPARTED_VERSION,
				"departed", &arr, why, whylen);
	if (!root)
		return -1;
	/* Check everything before changing anything: all of the file, or none. */
	count = json_object_array_length(arr);
	for (i = 0; i < count; i++) {
		if (entry(arr, i, &a, &name)) {
			snprintf(why, whylen, "entry %zu is malformed", i);
			goto out;
		}
	}
	/* Socket files served: none in a file written before they were kept. */
	if (json_object_object_get_ex(root, "socket_files", &files)) {
		if (!json_object_is_type(files, json_type_array)) {
			snprintf(why, whylen, "socket_files is not a list");
			goto out;
		}
		n_files = json_object_array_length(files);
	}
	for (i = 0; i < n_files; i++) {
		if (socket_file_entry(files, i, &name, &bound, &seen)) {
			snprintf(why, whylen, "socket file %zu is malformed", i);
			goto out;
		}
	}
	for (ret = 0, i = 0; i < count; i++) {
		entry(arr, i, &a, &name);
		ret += names__departed_add(n, &a, name);
	}
	for (i = 0; i < n_files; i++) {
		socket_file_entry(files, i, &name, &bound, &seen);
		if (seen >= now - DEPARTED_SOCKET_FILE_KEEP_S)
			ret += names__socket_file(n, unix_listeners__hash(name), name, bound, seen);
	}
out:
	json_object_put(root);
	return ret;
}

int departed__load(struct names *n, const char *state_dir, time_t now, char *why, size_t whylen)
{
	char path[512], *text;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", state_dir, DEPARTED_FILE);
	text = statefile__read(path, DEPARTED_MAX_BYTES, &len);
	if (!text) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	ret = departed__parse(n, text, len, now, why, whylen);
	free(text);
	return ret;
}
