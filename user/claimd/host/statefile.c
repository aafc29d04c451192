// SPDX-License-Identifier: GPL-2.0
/* Whole-or-nothing files of claimd's state directory; see statefile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "host/statefile.h"

int statefile__write(const char *dir, const char *name, const char *text)
{
	char path[512], tmp[520];
	size_t len = strlen(text);
	int fd, dfd, err;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	errno = 0;
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd)) {
		err = errno ? -errno : -EIO;
		close(fd);
		unlink(tmp);
		return err;
	}
	close(fd);
	if (rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	/* The rename itself must reach the disk too. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

char *statefile__read(const char *path, size_t max, size_t *len)
{
	size_t cap = 65536, n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	ssize_t r;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			char *p = cap >= max ? NULL : realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				buf = NULL;
				errno = cap >= max ? EFBIG : ENOMEM;
				break;
			}
			buf = p;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	*len = n;
	return buf;
}

struct json_object *statefile__parse(const char *text, size_t len, size_t max, const char *format,
				     int version, const char *key, struct json_object **list,
				     char *why, size_t whylen)
{
	struct json_tokener *tok;
	struct json_object *root = NULL, *v = NULL;

	if (len > max) {
		snprintf(why, whylen, "larger than %zu bytes", max);
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(why, whylen, "not valid JSON (truncated?)");
		goto bad;
	}
	if (tok->char_offset != (int)len) {
		snprintf(why, whylen, "text after the JSON document");
		goto bad;
	}
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "format", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), format)) {
		snprintf(why, whylen, "not a %s file", format);
		goto bad;
	}
	v = NULL;
	if (!json_object_object_get_ex(root, "version", &v) ||
	    !json_object_is_type(v, json_type_int) || json_object_get_int(v) != version) {
		snprintf(why, whylen, "format version %s, this claimd reads %d",
			 v ? json_object_to_json_string(v) : "missing", version);
		goto bad;
	}
	if (!json_object_object_get_ex(root, key, list) ||
	    !json_object_is_type(*list, json_type_array)) {
		snprintf(why, whylen, "no \"%s\" list", key);
		goto bad;
	}
	json_tokener_free(tok);
	return root;
bad:
	json_object_put(root);
	json_tokener_free(tok);
	return NULL;
}
