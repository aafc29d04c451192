// SPDX-License-Identifier: GPL-2.0
/* Finding libssl files and probing each once; see tls.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hashtab.h"
#include "log.h"
#include "observer_api.h"
#include "tls.h"

/* Where the dynamic linker finds libssl on Debian, besides what processes map. */
static const char *const known_dirs[] = {
	"/usr/lib/x86_64-linux-gnu",
	"/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/usr/lib64",
	"/usr/lib",
	"/usr/local/lib",
};

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct tls_scan {
	struct observer *obs;
	struct hashtab *seen; /* struct file_id -> (void *)1: probed, or found wanting */
};

struct tls_scan *tls__new(struct observer *obs)
{
	struct tls_scan *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->obs = obs;
	t->seen = hashtab__new();
	if (!t->seen) {
		free(t);
		return NULL;
	}
	return t;
}

void tls__free(struct tls_scan *t)
{
	if (!t)
		return;
	hashtab__free(t->seen);
	free(t);
}

static int is_libssl(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	/* libssl.so.3, libssl.so.1.1, libssl.so: OpenSSL; libssl3.so is NSS's. */
	return !strncmp(base, "libssl.so", 9);
}

/* Probes the file at path if it is a libssl not probed yet; returns 1 if it was. */
static int consider(struct tls_scan *t, const char *path)
{
	struct file_id id;
	struct stat st;
	int err;

	if (!is_libssl(path) || stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	memset(&id, 0, sizeof(id));
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	if (hashtab__get(t->seen, &id, sizeof(id)))
		return 0;
	hashtab__put(t->seen, &id, sizeof(id), (void *)1, NULL);
	err = observer__attach_tls(t->obs, path);
	if (err) {
		pr_warn("cannot probe TLS in %s: %s", path, strerror(-err));
		return 0;
	}
	pr_info("TLS: probing SSL_read/SSL_write in %s", path);
	return 1;
}

static int scan_dir(struct tls_scan *t, const char *dir)
{
	char path[512];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!is_libssl(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n += consider(t, path);
	}
	closedir(d);
	return n;
}

static int scan_maps(struct tls_scan *t, const char *pid)
{
	char path[64], line[1024];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file || !strstr(file, "libssl"))
			continue;
		file[strcspn(file, "\n")] = 0;
		/* Seen through the process's root, so files in containers are found too. */
		snprintf(path, sizeof(path), "/proc/%s/root", pid);
		{
			char full[1200];

			snprintf(full, sizeof(full), "%s%s", path, file);
			n += consider(t, full);
		}
	}
	fclose(f);
	return n;
}

int tls__scan(struct tls_scan *t)
{
	struct dirent *de;
	size_t i;
	int n = 0;
	DIR *d;

	for (i = 0; i < sizeof(known_dirs) / sizeof(known_dirs[0]); i++)
		n += scan_dir(t, known_dirs[i]);
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			n += scan_maps(t, de->d_name);
	closedir(d);
	return n;
}
