// SPDX-License-Identifier: GPL-2.0
/* End-to-end test helpers; see harness.h. */
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sockets.h"
#include "test_progs.h"

/* The claimd the test started last, while it runs (claimd_programs_settle). */
static const struct claimd_h *latest;

extern char **environ;

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static pid_t spawn(const char *const argv[], const char *const env[], const char *log, uid_t uid,
		   gid_t gid)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* Opened first: the log is the test's, wherever it lives. */
		int fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0644);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if (uid != (uid_t)-1) {
			if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
				_exit(126);
			if (access(".", X_OK) && chdir("/"))
				_exit(126);
		}
		for (; env && *env; env++)
			putenv((char *)*env);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s%s\n", argv[0], strerror(errno),
			errno == EACCES && uid != (uid_t)-1 ? " (as another user: stage_for_user)"
							    : "");
		_exit(127);
	}
	return pid;
}

pid_t proc_spawn(const char *const argv[], const char *const env[], const char *log)
{
	return spawn(argv, env, log, (uid_t)-1, (gid_t)-1);
}

/* Is path (resolved) dir itself or inside it? */
static bool path_under(const char *path, const char *dir)
{
	char real[PATH_MAX];
	size_t n;

	if (!dir || !dir[0] || !realpath(dir, real))
		return false;
	n = strlen(real);
	return !strncmp(path, real, n) && (path[n] == '/' || !path[n] || n == 1);
}

const char *stage_for_user(const char *path, char *out, size_t len)
{
	char src[PATH_MAX], base[PATH_MAX], sub[H_PATH], tmp[H_PATH + 32], buf[1 << 16];
	const char *dir = test__stage_dir();
	unsigned int hash = 2166136261u;
	int in = -1, fd = -1, ok = 0;
	struct stat sb;
	ssize_t n;

	if (!dir)
		return NULL;
	errno = 0;
	if (!realpath(path, src) || stat(src, &sb) || !S_ISREG(sb.st_mode)) {
		printf("stage %s: %s\n", path, errno ? strerror(errno) : "not a file");
		return NULL;
	}
	/* A directory per source file: the name is kept, and two never collide. */
	for (const char *p = src; *p; p++)
		hash = (hash ^ (unsigned char)*p) * 16777619u;
	snprintf(base, sizeof(base), "%s", src);
	snprintf(sub, sizeof(sub), "%s/%08x", dir, hash);
	if ((mkdir(sub, 0755) && errno != EEXIST) || chmod(sub, 0755))
		goto out;
	if ((size_t)snprintf(out, len, "%s/%s", sub, basename(base)) >= len) {
		errno = ENAMETOOLONG;
		goto out;
	}
	/* Written aside and renamed: a copy already running is left as it is. */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", out, getpid());
	in = open(src, O_RDONLY | O_CLOEXEC);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (in < 0 || fd < 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write_all_fd(fd, buf, n))
			goto out;
	if (n < 0 || fchmod(fd, (sb.st_mode & 0755) | 0444 | (sb.st_mode & 0111 ? 0111 : 0)))
		goto out;
	if (close(fd)) {
		fd = -1;
		goto out;
	}
	fd = -1;
	ok = !rename(tmp, out);
out:
	if (!ok)
		printf("stage %s in %s: %s\n", src, dir, strerror(errno));
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	if (!ok)
		unlink(tmp);
	return ok ? out : NULL;
}

pid_t proc_spawn_as(const char *const argv[], const char *const env[], const char *log, uid_t uid,
		    gid_t gid)
{
	const char *args[64];
	char(*staged)[H_PATH] = NULL;
	size_t i, n = 0;
	pid_t pid;

	while (argv[n] && n < 63)
		n++;
	if (argv[n] || !(staged = calloc(n ? n : 1, sizeof(*staged))))
		return -1;
	/* Root reaches everything; anyone else runs the checkout's files from copies. */
	for (i = 0; i < n; i++) {
		char real[PATH_MAX];
		struct stat sb;

		args[i] = argv[i];
		if (uid == 0 || !strchr(argv[i], '/') || !realpath(argv[i], real) ||
		    stat(real, &sb) || !S_ISREG(sb.st_mode) ||
		    !(path_under(real, test__top_dir()) || path_under(real, test__build_dir())))
			continue;
		if (!stage_for_user(real, staged[i], sizeof(staged[i]))) {
			free(staged);
			return -1;
		}
		printf("as uid %u: %s staged as %s\n", (unsigned)uid, argv[i], staged[i]);
		args[i] = staged[i];
	}
	args[n] = NULL;
	pid = spawn(args, env, log, uid, gid);
	free(staged);
	return pid;
}

int proc_wait(pid_t pid, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		if (now_ms() >= end)
			return -1;
		sleep_ms(10);
	}
}

int proc_stop(pid_t pid, int timeout_ms)
{
	int status;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	status = proc_wait(pid, timeout_ms);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	return status;
}

int proc_run(const char *const argv[], char *out, size_t outlen, int timeout_ms)
{
	char tmpl[] = "/tmp/claimd-test-run.XXXXXX";
	int fd = mkstemp(tmpl), status;
	pid_t pid;

	if (fd < 0)
		return -1;
	close(fd);
	pid = proc_spawn(argv, NULL, tmpl);
	status = pid > 0 ? proc_wait(pid, timeout_ms) : -1;
	if (status == -1 && pid > 0)
		proc_stop(pid, 100);
	if (out && outlen && read_file(tmpl, out, outlen) < 0)
		out[0] = 0;
	unlink(tmpl);
	return status;
}

int wait_file(const char *path, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	struct stat st;

	/* Written, not only made: a writer creates the file before it writes. */
	while (stat(path, &st) || st.st_size == 0) {
		if (now_ms() >= end)
			return -1;
		sleep_ms(10);
	}
	/* Most often a service saying it is up: judged from its first request on. */
	claimd_programs_settle();
	return 0;
}

int wait_ready_port(const char *ready, int timeout_ms)
{
	char buf[16];
	int port;

	if (wait_file(ready, timeout_ms) || read_file(ready, buf, sizeof(buf)) <= 0)
		return -1;
	port = atoi(buf);
	return port > 0 ? port : -1;
}

ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while (total < (ssize_t)len - 1 && (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += n;
	buf[total] = 0;
	close(fd);
	return total;
}

int tls_cert_make(const char *cert, const char *key)
{
	char san[] = "subjectAltName=IP:127.0.0.1", out[4096];
	const char *argv[] = { "openssl", "req",     "-x509", "-newkey",       "rsa:2048",
			       "-nodes",  "-keyout", key,     "-out",	       cert,
			       "-days",	  "1",	     "-subj", "/CN=127.0.0.1", "-addext",
			       san,	  NULL };

	if (proc_run(argv, out, sizeof(out), 30000) != 0) {
		printf("openssl failed: %s\n", out);
		return -1;
	}
	return 0;
}

int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int write_all_fd(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int tmpdir_make(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/claimd-test.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void tmpdir_remove(const char *dir)
{
	if (dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

long left_by_gone_run(const char *name)
{
	const char *prefix = "claimd-test-";
	char *end;
	long pid;

	if (strncmp(name, prefix, strlen(prefix)))
		return 0;
	pid = strtol(name + strlen(prefix), &end, 10);
	if (end == name + strlen(prefix) || (*end && *end != '-') || pid <= 0 || !kill(pid, 0) ||
	    errno != ESRCH)
		return 0;
	return pid;
}

/*
 * Pin directories of test runs that were killed (and so never cleaned up)
 * keep their verdict map alive in the kernel: remove those whose run is
 * gone. Named claimd-test-<pid>[-what], as claimd_start and tests make them.
 */
void stale_pins_remove(void)
{
	DIR *d = opendir("/sys/fs/bpf");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[H_PATH];
		long pid = left_by_gone_run(e->d_name);

		if (!pid)
			continue;
		snprintf(path, sizeof(path), "/sys/fs/bpf/%s", e->d_name);
		tmpdir_remove(path);
		printf("removed %s, left by test run %ld, which is gone\n", path, pid);
	}
	closedir(d);
}

static void path_in(char *out, const char *dir, const char *name)
{
	snprintf(out, H_PATH, "%s/%s", dir, name);
}

int claimd_log_lines(const struct claimd_h *h, const char *needle)
{
	static char log[1 << 18];
	const char *p;
	int i, n = 0;

	for (i = 0; i < 50 && !n; i++) {
		if (i)
			sleep_ms(200);
		if (read_file(h->log, log, sizeof(log)) < 0)
			continue;
		for (p = log; (p = strstr(p, needle)); p++)
			n++;
	}
	return n;
}

void file_print(const char *what, const char *path)
{
	static char buf[1 << 16];

	if (read_file(path, buf, sizeof(buf)) >= 0)
		printf("---- %s (%s) ----\n%s---- end of %s ----\n", what, path, buf, what);
}

void claimd_print_log(const struct claimd_h *h)
{
	struct json_object *st, *kernel;

	file_print("claimd log", h->log);
	/* What the kernel counted: the counters that make verdicts unknown say why. */
	st = h->pid > 0 ? claimctl_json(h, (const char *const[]){ "status", NULL }) : NULL;
	kernel = j_get(st, "kernel");
	if (kernel) {
		printf("claimd's kernel counters (those not 0):");
		json_object_object_foreach(kernel, name, v)
			if (json_object_get_int64(v))
				printf(" %s %lld", name, (long long)json_object_get_int64(v));
		printf("\n");
	}
	json_object_put(st);
}

#define CLAIMD_START_MS 60000

int claimd_start(struct claimd_h *h, const char *const extra[])
{
	const char *argv[32];
	char claimd[H_PATH], metrics[32];
	int n = 0, i;
	long long end;

	if (!h->dir[0] && tmpdir_make(h->dir, sizeof(h->dir)))
		return -1;
	path_in(h->sock, h->dir, "control.sock");
	path_in(h->log, h->dir, "claimd.log");
	path_in(h->state, h->dir, "state");
	if (!h->pin[0]) /* a test running several claimd names each its own */
		snprintf(h->pin, sizeof(h->pin), "/sys/fs/bpf/claimd-test-%d", getpid());
	path_in(claimd, test__build_dir(), "claimd");
	argv[n++] = claimd;
	argv[n++] = "--control";
	argv[n++] = h->sock;
	argv[n++] = "--pin-dir";
	argv[n++] = h->pin;
	argv[n++] = "--state-dir"; /* extra may say otherwise: the last one counts */
	argv[n++] = h->state;
	/*
	 * Its own port for /metrics: the default one (9464) is the host's
	 * claimd's, or another test's. extra may say otherwise.
	 */
	snprintf(metrics, sizeof(metrics), "127.0.0.1:%d", sock_free_port());
	argv[n++] = "--metrics";
	argv[n++] = metrics;
	/* The test's processes alone (test__cgroup); extra may say otherwise too. */
	if (test__cgroup()[0]) {
		argv[n++] = "--cgroup";
		argv[n++] = test__cgroup();
	}
	for (i = 0; extra && extra[i] && n < 30; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	h->pid = proc_spawn(argv, NULL, h->log);
	if (h->pid < 0)
		return -1;
	/* About 1.8 s here, most of it the kernel verifying its programs; more under load. */
	end = now_ms() + CLAIMD_START_MS;
	while (now_ms() < end) {
		const char *args[] = { "status", "--json", NULL };
		char out[4096];

		if (proc_wait(h->pid, 0) != -1) {
			printf("claimd exited during start\n");
			h->pid = 0;
			claimd_print_log(h);
			return -1;
		}
		if (claimctl_run(h, args, out, sizeof(out)) == 0 && strstr(out, "\"attached\"")) {
			latest = h;
			return 0;
		}
		sleep_ms(50);
	}
	printf("claimd did not answer within %d s\n", CLAIMD_START_MS / 1000);
	claimd_print_log(h);
	return -1;
}

int claimd_stop(struct claimd_h *h)
{
	int status = -1;
	char verdicts[H_PATH];

	if (latest == h)
		latest = NULL;
	if (h->pid > 0)
		status = proc_stop(h->pid, 10000);
	h->pid = 0;
	/* claimd leaves its verdict map pinned for the next claimd: the test's own goes. */
	snprintf(verdicts, sizeof(verdicts), "%s/verdicts", h->pin);
	unlink(verdicts);
	rmdir(h->pin);
	return status;
}

void claimd_kill(struct claimd_h *h)
{
	if (latest == h)
		latest = NULL;
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
	}
	h->pid = 0;
}

int claimctl_run(const struct claimd_h *h, const char *const args[], char *out, size_t outlen)
{
	const char *argv[32];
	char claimctl[H_PATH];
	int n = 0, i;

	path_in(claimctl, test__build_dir(), "claimctl");
	argv[n++] = claimctl;
	argv[n++] = "--socket";
	argv[n++] = h->sock;
	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return proc_run(argv, out, outlen, 20000);
}

struct json_object *claimctl_json(const struct claimd_h *h, const char *const args[])
{
	static char out[1 << 20];
	const char *argv[32];
	int n = 0;

	for (; args[n] && n < 30; n++)
		argv[n] = args[n];
	argv[n++] = "--json";
	argv[n] = NULL;
	if (claimctl_run(h, argv, out, sizeof(out)) != 0) {
		printf("claimctl %s failed: %s\n", args[0], out);
		return NULL;
	}
	return json_tokener_parse(out);
}

bool claimd_programs_read(const struct claimd_h *h)
{
	const char *args[] = { "status", NULL };
	long long asked = -1, read = 0;
	int i;

	for (i = 0; i < 100; i++) {
		struct json_object *st = claimctl_json(h, args);

		asked = j_int(j_get(st, "kernel"), "processes_unread");
		read = j_int(j_get(st, "records"), "unread");
		json_object_put(st);
		if (read >= asked)
			return true;
		sleep_ms(100);
	}
	printf("claimd read %lld of the %lld programs it was asked to read\n", read, asked);
	return false;
}

/* pid's state letter and parent, from /proc/PID/stat: 0, or -1 (gone). */
static int proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')'); /* after the command's name, which may hold anything */
	return p && sscanf(p + 1, " %c %d", state, ppid) == 2 ? 0 : -1;
}

/* Is process pid stopped (SIGSTOP: a test holding it back)? */
static bool stopped(pid_t pid)
{
	pid_t ppid;
	char state;

	return !proc_stat(pid, &state, &ppid) && (state == 'T' || state == 't');
}

pid_t proc_ppid(pid_t pid)
{
	pid_t ppid;
	char state;

	return proc_stat(pid, &state, &ppid) ? -1 : ppid;
}

char proc_state(pid_t pid)
{
	pid_t ppid;
	char state;

	return proc_stat(pid, &state, &ppid) ? 0 : state;
}

void claimd_programs_settle(void)
{
	if (latest && latest->pid > 0 && !stopped(latest->pid))
		claimd_programs_read(latest);
}

/*
 * Polls claimd's status field key until it is within [min, max], up to
 * 30 s; true when it came there. The last value read in *last.
 */
static bool status_wait(const struct claimd_h *h, const char *key, long long min, long long max,
			long long *last)
{
	long long end = now_ms() + 30000;

	for (;;) {
		*last = claimd_status_count(h, key, false);
		if (*last >= min && *last <= max)
			return true;
		if (*last < 0 || now_ms() >= end)
			return false;
		sleep_ms(50);
	}
}

bool claimd_status_reaches(const struct claimd_h *h, const char *name, long long min)
{
	long long last = -1;

	if (status_wait(h, name, min, LLONG_MAX, &last))
		return true;
	printf("claimd's %s at %lld, awaited %lld\n", name, last, min);
	return false;
}

long long claimd_trace_clients(const struct claimd_h *h)
{
	return claimd_status_count(h, "trace_clients", false);
}

bool claimd_ticks_wait(const struct claimd_h *h, int n)
{
	long long want = claimd_status_count(h, "ticks", false) + n, now = -1;

	if (want >= n && status_wait(h, "ticks", want, LLONG_MAX, &now))
		return true;
	printf("claimd at tick %lld, awaited %lld\n", now, want);
	return false;
}

int trace_start(struct trace_cap *t, const struct claimd_h *h)
{
	char claimctl[H_PATH];
	const char *argv[] = { claimctl, "--socket", h->sock, "trace", "--json", "--roots", NULL };
	long long before = claimd_trace_clients(h), now = before;

	path_in(claimctl, test__build_dir(), "claimctl");
	path_in(t->path, h->dir, "trace.jsonl");
	unlink(t->path);
	t->h = h;
	t->pid = proc_spawn(argv, NULL, t->path);
	if (t->pid <= 0)
		return -1;
	/* Nothing the test does is traced before claimd counts the new client. */
	if (before >= 0 && status_wait(h, "trace_clients", before + 1, LLONG_MAX, &now)) {
		t->lines_before = claimd_status_count(h, "trace_lines", false);
		return 0;
	}
	printf("claimd counts %lld trace clients, %lld before claimctl trace started\n", now,
	       before);
	return -1;
}

void trace_stop(struct trace_cap *t)
{
	long long before = t->pid > 0 && t->h && t->h->pid > 0 ? claimd_trace_clients(t->h) : -1;
	long long now;

	if (t->pid > 0)
		proc_stop(t->pid, 2000);
	t->pid = 0;
	/* What the test does next is untraced by this client. */
	if (before > 0)
		status_wait(t->h, "trace_clients", 0, before - 1, &now);
}

int claimd_traced_start(struct claimd_h *h, struct trace_cap *t, const char *const extra[])
{
	if (!ASSERT_OK(claimd_start(h, extra), "claimd start") ||
	    !ASSERT_OK(trace_start(t, h), "trace"))
		return -1;
	return 0;
}

void claimd_traced_stop(struct claimd_h *h, struct trace_cap *t)
{
	if (test__failed_now())
		claimd_print_log(h);
	trace_stop(t);
	claimd_stop(h);
	tmpdir_remove(h->dir);
	h->dir[0] = '\0'; /* a claimd started again makes its own */
}

int trace_each(const struct trace_cap *t, trace_match_fn fn, void *ctx)
{
	FILE *f = fopen(t->path, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		struct json_object *o = json_tokener_parse(line);

		if (o)
			n += fn(o, ctx);
		json_object_put(o);
	}
	free(line);
	fclose(f);
	return n;
}

static bool line_keep(struct json_object *line, void *arr)
{
	json_object_array_add(arr, json_object_get(line));
	return true;
}

struct json_object *trace_read(const struct trace_cap *t)
{
	struct json_object *arr = json_object_new_array();

	trace_each(t, line_keep, arr);
	return arr;
}

struct json_object *trace_read_from(const struct trace_cap *t, size_t from)
{
	struct json_object *arr = trace_read(t);
	size_t len = json_object_array_length(arr);

	json_object_array_del_idx(arr, 0, from < len ? from : len);
	return arr;
}

static bool line_any(struct json_object *line, void *ctx)
{
	(void)line;
	(void)ctx;
	return true;
}

/*
 * Waits until the records the kernel had submitted by the call are all in
 * the trace file: claimd has read as many records as the kernel counted
 * then, and the file holds every line claimd had queued for this client
 * by that time (with one client streaming: with more, claimd's count is
 * theirs together, and only the records read are awaited).
 */
static bool trace_settle(const struct trace_cap *t)
{
	long long end = now_ms() + 10000, submitted = -1, read = -1, queued = 0, left;
	int lines;

	if (!t->h || t->h->pid <= 0 || t->pid <= 0)
		return true;
	for (;;) {
		struct json_object *st =
			claimctl_json(t->h, (const char *const[]){ "status", NULL });

		if (!st)
			return true; /* claimd gone: what it sent is all there will be */
		if (submitted < 0)
			submitted = j_int(j_get(st, "kernel"), "records");
		read = j_int(j_get(st, "records"), "read");
		if (read >= submitted && j_int(st, "trace_clients") == 1 && t->lines_before >= 0)
			queued = j_int(st, "trace_lines") - t->lines_before;
		json_object_put(st);
		if (read >= submitted)
			break;
		if (now_ms() >= end) {
			printf("trace: claimd read %lld of the %lld records submitted\n", read,
			       submitted);
			return false;
		}
		sleep_ms(20);
	}
	left = end - now_ms();
	lines = trace_wait(t, line_any, NULL, (int)queued, left > 0 ? (int)left : 0);
	if (lines >= queued)
		return true;
	printf("trace: the file holds %d of the %lld lines claimd queued\n", lines, queued);
	return false;
}

size_t trace_mark(const struct trace_cap *t)
{
	ASSERT_TRUE(trace_settle(t), "every record submitted is in the trace");
	return trace_each(t, line_any, NULL);
}

bool trace_is_ingress_of(struct json_object *line, void *pid)
{
	return !strcmp(j_str(line, "type"), "ingress") && j_int(line, "pid") == *(pid_t *)pid;
}

int trace_wait(const struct trace_cap *t, trace_match_fn match, void *ctx, int n, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	int got;

	for (;;) {
		got = trace_each(t, match, ctx);
		if (got >= n || now_ms() >= end)
			return got;
		sleep_ms(100);
	}
}

struct json_object *j_get(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *j_str(struct json_object *o, const char *key)
{
	struct json_object *v = j_get(o, key);

	return v ? json_object_get_string(v) : "";
}

long long j_int(struct json_object *o, const char *key)
{
	struct json_object *v = j_get(o, key);

	return v ? json_object_get_int64(v) : 0;
}

bool j_bool(struct json_object *o, const char *key)
{
	struct json_object *v = j_get(o, key);

	return v && json_object_get_boolean(v);
}

const char *peer_script(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/tests/peers/%s", test__top_dir(), name);
	return buf;
}

struct json_object *claimd_service(const struct claimd_h *h, const char *name)
{
	const char *args[] = { "services", NULL };
	struct json_object *arr = claimctl_json(h, args), *found = NULL;
	size_t i;

	for (i = 0; arr && i < json_object_array_length(arr) && !found; i++) {
		struct json_object *s = json_object_array_get_idx(arr, i);

		if (!strcmp(j_str(s, "service"), name))
			found = json_object_get(s);
	}
	json_object_put(arr);
	return found;
}

void claimd_services_explain(const struct claimd_h *h, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct json_object *s = claimd_service(h, names[i]);

		test__why("service %s as claimd counts it: %s", names[i],
			  s ? json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN) : "none");
		json_object_put(s);
	}
}

struct json_object *claimd_edge(const struct claimd_h *h, const char *caller, const char *callee)
{
	return claimd_edge_of_kind(h, caller, callee, -1);
}

struct json_object *claimd_edge_of_kind(const struct claimd_h *h, const char *caller,
					const char *callee, int root)
{
	const char *args[] = { "edges", NULL };
	struct json_object *arr = claimctl_json(h, args), *found = NULL;
	size_t i;

	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!strcmp(j_str(e, "caller"), caller) && !strcmp(j_str(e, "callee"), callee) &&
		    (root < 0 || j_bool(e, "root") == !!root)) {
			found = json_object_get(e);
			break;
		}
	}
	json_object_put(arr);
	return found;
}

/*
 * claimd's counts of what loses a call or a request: those not 0, as
 * test__why lines.
 */
void claimd_losses_explain(const struct claimd_h *h)
{
	static const char *const names[] = {
		"unmatched_responses",
		"late_calls",
		"calls_answer_lost",
		"framing_lost",
		"requests_context_lost",
		"requests_abandoned",
		"connections_rejoined",
		"connections_stale",
		"connections_end_raced",
		"egress_log_overflow",
		"ringbuf_drops",
		"counts_full",
		"go_entries_repeated",
		"go_entries_started_over",
		"go_calls_outside_requests",
		"go_requests_unseen",
		"calls_outside_requests",
	};
	struct json_object *st = claimctl_json(h, (const char *const[]){ "status", NULL });
	struct json_object *k = j_get(st, "kernel");
	char line[1024];
	size_t len = 0, i;

	line[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]) && len < sizeof(line); i++)
		if (j_int(k, names[i]))
			len += snprintf(line + len, sizeof(line) - len, " %s %lld", names[i],
					j_int(k, names[i]));
	test__why("claimd's counts of what loses calls or requests:%s", len ? line : " all 0");
	if (j_int(st, "trace_dropped"))
		test__why("records not sent to a trace client (its queue full): %lld",
			  j_int(st, "trace_dropped"));
	json_object_put(st);
}

/* What a wait found instead: the edge as it stood, claimd_edges_explain and claimd_losses_explain. */
static void edges_print_near(const struct claimd_h *h, const char *caller, const char *callee,
			     struct json_object *e)
{
	if (e)
		test__why("edge %s -> %s, not yet as awaited: %s", caller, callee,
			  json_object_to_json_string(e));
	else
		test__why("no edge %s -> %s", caller, callee);
	claimd_edges_explain(h, caller, callee);
	claimd_losses_explain(h);
}

void claimd_edges_explain(const struct claimd_h *h, const char *caller, const char *callee)
{
	struct json_object *arr;
	size_t i;

	arr = claimctl_json(h, (const char *const[]){ "edges", NULL });
	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		if (!strcmp(j_str(o, "caller"), caller) || !strcmp(j_str(o, "callee"), callee))
			test__why("  an edge with either end: %s -> %s: calls %lld, callee "
				  "failures %lld%s",
				  j_str(o, "caller"), j_str(o, "callee"), j_int(o, "calls"),
				  j_int(o, "callee_failures"), j_bool(o, "root") ? " (root)" : "");
	}
	json_object_put(arr);
}

struct json_object *claimd_wait_edge(const struct claimd_h *h, const char *caller,
				     const char *callee, edge_pred_fn pred, void *ctx,
				     int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		struct json_object *e = claimd_edge(h, caller, callee);

		if (e && pred(e, ctx))
			return e;
		if (now_ms() >= end) {
			edges_print_near(h, caller, callee, e);
			json_object_put(e);
			return NULL;
		}
		json_object_put(e);
		sleep_ms(200);
	}
}

struct json_object *claimd_settled_edge(const struct claimd_h *h, const char *caller,
					const char *callee, edge_pred_fn pred, void *ctx,
					int timeout_ms)
{
	json_object_put(claimd_wait_edge(h, caller, callee, pred, ctx, timeout_ms));
	claimd_ticks_wait(h, 2); /* whatever claimd would add beyond the truth is in by now */
	return claimd_edge(h, caller, callee);
}

long long claimd_status_count(const struct claimd_h *h, const char *name, bool kernel)
{
	struct json_object *st = claimctl_json(h, (const char *const[]){ "status", NULL });
	const char *dot = strchr(name, '.');
	struct json_object *in = kernel ? j_get(st, "kernel") : st;
	char section[64];
	long long n;

	if (dot && !kernel && (size_t)(dot - name) < sizeof(section)) {
		snprintf(section, sizeof(section), "%.*s", (int)(dot - name), name);
		in = j_get(st, section);
		name = dot + 1;
	}
	n = st ? j_int(in, name) : -1;
	json_object_put(st);
	return n;
}
