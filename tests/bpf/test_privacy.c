// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions and privacy, with real processes:
 * - the control socket is owner-only (0600): 'nobody' cannot connect, and
 *   claimctl says why; --control-group opens it to one group (0660) and no
 *   one else;
 * - metrics, /graph.json and the map page listen on loopback by default
 *   (claimd in a network namespace of its own, so the default port is
 *   free), and an address without a host is refused, not taken for "every
 *   interface";
 * - no request data is kept or exported: requests carrying a distinctive
 *   path, query, header value and body go through a chain of two services,
 *   and none of those strings appears in claimctl trace, edges, services,
 *   graph, top or status, in /metrics, /graph.json or the map page, in the
 *   state directory, or in claimd's log;
 * - claimd run as 'nobody' refuses with a sentence and exit code 3; so does
 *   claimd on a kernel without a BPF feature it needs (taken away with
 *   CLAIMD_TEST_MISSING), and without uprobes it runs degraded, saying so.
 * (The verdict map read-only to everybody else: test_ownership.c.)
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"

/* The strings a request carries that claimd must never keep. */
static const char *const secrets[] = {
	"zqpath7f3a",	/* a path segment */
	"zqquery91bd",	/* a query string value */
	"zqheaderc4e2", /* a header value */
	"zqbody5d60",	/* a body */
	"Zq-Secret",	/* a header name */
};

#define N_SECRETS (sizeof(secrets) / sizeof(secrets[0]))

/* Connects to a UNIX socket as uid/gid in a child; returns 0 or the errno. */
static int connect_as(const char *path, uid_t uid, gid_t gid)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd;

		if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
			_exit(100);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			_exit(101);
		_exit(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* claimctl <args> as uid/gid: its exit status, its output in out. */
static int claimctl_as(const struct claimd_h *h, const char *cmd, uid_t uid, gid_t gid, char *out,
		       size_t len)
{
	char claimctl[H_PATH], log[H_PATH];
	const char *argv[] = { claimctl, "--socket", h->sock, cmd, NULL };
	pid_t pid;
	int status;

	snprintf(claimctl, sizeof(claimctl), "%s/claimctl", test__build_dir());
	snprintf(log, sizeof(log), "%s/claimctl-as.log", h->dir);
	/* Made here, writable by the other user, who cannot create files in h->dir. */
	write_file(log, "");
	chmod(log, 0666);
	pid = proc_spawn_as(argv, NULL, log, uid, gid);
	status = pid > 0 ? proc_wait(pid, 10000) : -1;
	if (read_file(log, out, len) < 0)
		out[0] = 0;
	return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void control_socket(void)
{
	struct passwd *nobody = getpwnam("nobody");
	const char *group_args[] = { "--control-group", "65534", NULL };
	struct claimd_h h = { 0 };
	char out[4096];
	struct stat st;

	if (!ASSERT_OK_PTR(nobody, "user nobody"))
		return;
	if (!ASSERT_OK(claimd_start(&h, NULL), "claimd start"))
		goto out;
	chmod(h.dir, 0755); /* only the socket's own mode stands in the way */
	if (ASSERT_OK(stat(h.sock, &st), "socket"))
		ASSERT_EQ(st.st_mode & 0777, 0600, "owner-only by default (0600)");
	ASSERT_EQ(connect_as(h.sock, nobody->pw_uid, nobody->pw_gid), EACCES,
		  "nobody cannot connect");
	ASSERT_EQ(connect_as(h.sock, 0, 0), 0, "root can");
	ASSERT_NEQ(claimctl_as(&h, "status", nobody->pw_uid, nobody->pw_gid, out, sizeof(out)), 0,
		   "claimctl as nobody fails");
	printf("claimctl as nobody: %s", out);
	ASSERT_TRUE(strstr(out, "Permission denied") && strstr(out, "owner-only"), "and says why");
	claimd_stop(&h);

	/* --control-group: that group, and nobody else. */
	if (!ASSERT_OK(claimd_start(&h, group_args), "claimd --control-group start"))
		goto out;
	chmod(h.dir, 0755);
	if (ASSERT_OK(stat(h.sock, &st), "socket")) {
		ASSERT_EQ(st.st_mode & 0777, 0660, "0660 with --control-group");
		ASSERT_EQ(st.st_gid, 65534, "group-owned by that group");
	}
	ASSERT_EQ(connect_as(h.sock, nobody->pw_uid, 65534), 0, "a member of the group connects");
	ASSERT_EQ(claimctl_as(&h, "status", nobody->pw_uid, 65534, out, sizeof(out)), 0,
		  "and claimctl works for it");
	ASSERT_EQ(connect_as(h.sock, 12345, 12345), EACCES, "another user does not");
out:
	if (test__failed_now())
		claimd_print_log(&h);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}

/* A GET of path on 127.0.0.1:port; the body (after the head), or NULL. */
static char *http_body(int port, const char *path)
{
	static char buf[1 << 20];
	char req[256];
	int fd = sock_connect(port);
	char *body;

	buf[0] = 0;
	if (fd < 0)
		return NULL;
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (!sock_send(fd, req))
		sock_recv_until(fd, buf, sizeof(buf), NULL, 65536);
	close(fd);
	body = strstr(buf, "\r\n\r\n");
	return body && !strncmp(buf, "HTTP/1.", 7) && atoi(buf + 9) == 200 ? body + 4 : NULL;
}

/* Is 127.0.0.1:port (and nothing wider) listening in pid's network namespace? */
static void listeners_of(pid_t pid, int port, int *loopback, int *wider)
{
	static const char *const files[] = { "tcp", "tcp6" };
	char path[64], line[512], want[16];
	size_t i;

	*loopback = *wider = 0;
	snprintf(want, sizeof(want), ":%04X", port);
	for (i = 0; i < 2; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, files[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char local[64], rem[64];
			unsigned int st;

			if (sscanf(line, "%*d: %63s %63s %x", local, rem, &st) != 3 || st != 0x0a)
				continue; /* 0x0a: LISTEN */
			if (!strstr(local, want))
				continue;
			if (!strcmp(local, "0100007F:24F8") ||
			    !strcmp(local, "00000000000000000000000001000000:24F8"))
				(*loopback)++;
			else
				(*wider)++;
		}
		fclose(f);
	}
}

static void metrics_loopback(void)
{
	struct claimd_h h = { 0 };
	char claimd[H_PATH], script[4 * H_PATH], out[4096];
	const char *argv[] = { "unshare", "--net", "sh", "-c", script, NULL };
	const char *args[] = { "status", NULL };
	struct json_object *st = NULL;
	int lo = 0, wide = 0, i;

	if (!ASSERT_OK(tmpdir_make(h.dir, sizeof(h.dir)), "tmpdir"))
		return;
	snprintf(h.sock, sizeof(h.sock), "%s/control.sock", h.dir);
	snprintf(h.log, sizeof(h.log), "%s/claimd.log", h.dir);
	snprintf(h.state, sizeof(h.state), "%s/state", h.dir);
	snprintf(h.pin, sizeof(h.pin), "/sys/fs/bpf/claimd-test-%d-netns", getpid());
	snprintf(claimd, sizeof(claimd), "%s/claimd", test__build_dir());
	/* A network namespace of its own: the default port is free there. No
	 * --metrics: the default address. */
	snprintf(script, sizeof(script),
		 "ip link set lo up && exec %s --control %s --pin-dir %s --state-dir %s --no-seed",
		 claimd, h.sock, h.pin, h.state);
	h.pid = proc_spawn(argv, NULL, h.log);
	for (i = 0; i < 200; i++) {
		const char *quiet[] = { "status", "--json", NULL };

		if (proc_wait(h.pid, 0) != -1) {
			h.pid = 0;
			break;
		}
		sleep_ms(100);
		if (claimctl_run(&h, quiet, out, sizeof(out)) == 0) {
			st = claimctl_json(&h, args);
			break;
		}
	}
	if (!ASSERT_OK_PTR(st, "claimd up in its own network namespace"))
		goto out;
	ASSERT_STREQ(j_str(st, "metrics"), "http://127.0.0.1:9464/", "the default address");
	listeners_of(h.pid, 9464, &lo, &wide);
	printf("port 9464 in claimd's namespace: %d listener(s) on 127.0.0.1, %d wider\n", lo,
	       wide);
	ASSERT_EQ(lo, 1, "listening on 127.0.0.1:9464");
	ASSERT_EQ(wide, 0, "and on nothing wider");

	/* An address without a host is not "every interface": it is refused. */
	{
		const char *bad[] = { claimd, "--metrics", ":9464", NULL };
		int status = proc_run(bad, out, sizeof(out), 10000);

		ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 64,
			    "--metrics :PORT is a usage error");
		ASSERT_TRUE(strstr(out, "names no host") && strstr(out, "127.0.0.1:9464"),
			    "that says what to write");
	}
out:
	if (test__failed_now())
		claimd_print_log(&h);
	json_object_put(st);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}

/* Does any secret appear in text? Names which. */
static bool leaks(const char *text, const char *where)
{
	bool any = false;
	size_t i;

	for (i = 0; text && i < N_SECRETS; i++) {
		if (strstr(text, secrets[i]) || strcasestr(text, secrets[i])) {
			printf("LEAK: \"%s\" in %s\n", secrets[i], where);
			any = true;
		}
	}
	return any;
}

static bool check_json(const struct claimd_h *h, const char *const args[], const char *what)
{
	struct json_object *o = claimctl_json(h, args);
	char name[96];
	bool ok;

	snprintf(name, sizeof(name), "claimctl %s answers", what);
	if (!ASSERT_OK_PTR(o, name))
		return false;
	snprintf(name, sizeof(name), "nothing of the requests in claimctl %s", what);
	ok = ASSERT_FALSE(leaks(json_object_to_json_string(o), what), name);
	json_object_put(o);
	return ok;
}

static void check_dir(const char *dir, const char *what)
{
	static char text[4 << 20];
	char path[H_PATH + 256], name[H_PATH + 400];
	struct dirent *e;
	DIR *d = opendir(dir);
	int files = 0;

	if (!ASSERT_OK_PTR(d, what))
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (read_file(path, text, sizeof(text)) < 0)
			continue;
		files++;
		snprintf(name, sizeof(name), "nothing of the requests in %s/%s", what, e->d_name);
		ASSERT_FALSE(leaks(text, path), name);
	}
	closedir(d);
	snprintf(name, sizeof(name), "%s has files", what);
	ASSERT_GT(files, 0, name);
}

static void no_request_data(void)
{
	char mport_s[32], req[1024], resp[4096], path[H_PATH + 16], *body;
	const char *extra[] = { "--metrics", mport_s, "--persist-interval", "1", NULL };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc a = { 0 }, b = { 0 };
	static char text[4 << 20];
	int mport = sock_free_port(), i, ok = 0;

	snprintf(mport_s, sizeof(mport_s), "127.0.0.1:%d", mport);
	if (!ASSERT_OK(tmpdir_make(h.dir, sizeof(h.dir)), "tmpdir"))
		return;
	/* pA calls pB with the same path; pB fails every other request, so the
	 * edge has failures and goes into the memory file. */
	if (svc_start(&b, &(struct svc_spec){ .name = "pB", .fail_mod = 2 }, h.dir) ||
	    svc_start(&a, &(struct svc_spec){ .name = "pA", .downstream = b.port }, h.dir))
		goto out;
	if (!ASSERT_OK(claimd_start(&h, extra), "claimd start") ||
	    !ASSERT_OK(trace_start(&t, &h), "trace"))
		goto out;
	for (i = 0; i < 20; i++) {
		int fd = sock_connect(a.port), len;

		if (fd < 0)
			continue;
		len = snprintf(req, sizeof(req),
			       "GET /%s/%d?token=%s HTTP/1.1\r\nHost: x\r\nZq-Secret: %s\r\n"
			       "Connection: close\r\nContent-Length: 10\r\n\r\n%s",
			       secrets[0], i, secrets[1], secrets[2], secrets[3]);
		if (!write_all_fd(fd, req, len) &&
		    sock_recv_until(fd, resp, sizeof(resp), NULL, sizeof(resp)) > 12)
			ok += atoi(resp + 9) == 200 || atoi(resp + 9) == 502;
		close(fd);
	}
	ASSERT_EQ(ok, 20, "pA answered every request");
	ASSERT_GE(trace_wait(&t, trace_is_ingress_of, &a.pid, 20, 10000), 20, "claimd traced them");
	claimd_ticks_wait(&h, 2); /* the memory reaches the disk, metrics are refreshed */

	if (test__start_subtest("claimctl")) {
		const char *edges[] = { "edges", NULL }, *services[] = { "services", NULL };
		const char *graph[] = { "graph", NULL }, *status[] = { "status", NULL };
		const char *top[] = { "top", "--once", NULL };

		check_json(&h, edges, "edges");
		check_json(&h, services, "services");
		check_json(&h, graph, "graph");
		check_json(&h, status, "status");
		check_json(&h, top, "top");
		/* The trace, as captured, and as text. */
		ASSERT_GE(read_file(t.path, text, sizeof(text)), 100, "trace captured");
		ASSERT_FALSE(leaks(text, "claimctl trace --json"), "nothing in the trace");
		ASSERT_TRUE(strstr(text, "\"pA\"") != NULL, "the trace names the service");
	}
	if (test__start_subtest("http")) {
		body = http_body(mport, "/metrics");
		if (ASSERT_OK_PTR(body, "/metrics")) {
			ASSERT_FALSE(leaks(body, "/metrics"), "nothing in /metrics");
			ASSERT_TRUE(strstr(body, "caller=\"pA\",callee=\"pB\"") != NULL,
				    "/metrics has the edge");
		}
		body = http_body(mport, "/graph.json");
		if (ASSERT_OK_PTR(body, "/graph.json"))
			ASSERT_FALSE(leaks(body, "/graph.json"), "nothing in /graph.json");
		body = http_body(mport, "/map");
		if (ASSERT_OK_PTR(body, "/map"))
			ASSERT_FALSE(leaks(body, "/map"), "nothing in the map page");
	}
	trace_stop(&t);
	claimd_stop(&h); /* writes the memory once more */
	if (test__start_subtest("files")) {
		check_dir(h.state, "the state directory");
		ASSERT_GE(read_file(h.log, text, sizeof(text)), 0, "claimd's log");
		ASSERT_FALSE(leaks(text, "claimd's log"), "nothing in claimd's log");
		snprintf(path, sizeof(path), "%s/memory.json", h.state);
		ASSERT_GT(read_file(path, text, sizeof(text)), 0, "memory.json written");
		ASSERT_TRUE(strstr(text, "\"pB\"") != NULL, "it holds the edge, by service names");
	}
out:
	if (test__failed_now())
		claimd_print_log(&h);
	trace_stop(&t);
	claimd_stop(&h);
	svc_stop(&a);
	svc_stop(&b);
	tmpdir_remove(h.dir);
}

static void not_root(void)
{
	struct passwd *nobody = getpwnam("nobody");
	char dir[H_DIR], claimd[H_PATH], pin[H_PATH], sock[H_PATH], log[H_PATH], out[4096];
	pid_t pid;
	int status;

	if (!ASSERT_OK_PTR(nobody, "user nobody") ||
	    !ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "tmp"))
		return;
	chmod(dir, 0777);
	snprintf(claimd, sizeof(claimd), "%s/claimd", test__build_dir());
	snprintf(pin, sizeof(pin), "%s/pin", dir);
	snprintf(sock, sizeof(sock), "%s/control.sock", dir);
	snprintf(log, sizeof(log), "%s/claimd.log", dir);
	{
		const char *argv[] = { claimd,	      "--pin-dir", pin,		"--control", sock,
				       "--state-dir", dir,	   "--metrics", "none",	     NULL };

		pid = proc_spawn_as(argv, NULL, log, nobody->pw_uid, nobody->pw_gid);
	}
	status = pid > 0 ? proc_wait(pid, 10000) : -1;
	if (status == -1 && pid > 0)
		proc_stop(pid, 1000);
	read_file(log, out, sizeof(out));
	printf("claimd as nobody: exit %d: %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
	ASSERT_TRUE(status != -1 && WIFEXITED(status), "claimd as nobody exits");
	ASSERT_EQ(WEXITSTATUS(status), 3, "with exit code 3 (this user cannot run it)");
	ASSERT_TRUE(strstr(out, "claimd must run as root") && strstr(out, "sudo claimd"),
		    "saying what is needed and what to do");
	ASSERT_EQ(access(pin, F_OK), -1, "having made nothing");
	ASSERT_EQ(access(sock, F_OK), -1, "no socket either");
	tmpdir_remove(dir);
}

/*
 * The host checks of the real binary, with features taken away through
 * CLAIMD_TEST_MISSING (sysprobe.h): without uprobes claimd runs degraded and
 * says so; without the cast to no type its socket filter reads a socket's
 * fields one by one (bpf/sock.bpf.h), and follows the same; without what it
 * cannot do without, it says what and exits 3.
 */
static void host_checks(void)
{
	static const struct {
		const char *missing, *says;
	} fatal[] = {
		{ "ringbuf", "no BPF ring buffer" },
		{ "bpf_loop", "bpf_loop helper" },
		{ "read_kernel", "may not read kernel memory" },
		{ "tracepoint", "does not load tracepoint BPF programs" },
	};
	const char *extra[] = { "--metrics", "none", NULL }, *args[] = { "status", NULL };
	char claimd[H_PATH], out[4096], log[8192];
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc s = { 0 };
	struct json_object *st = NULL;
	size_t i;

	setenv("CLAIMD_TEST_MISSING", "uprobe,untyped_cast", 1);
	if (!ASSERT_OK(claimd_start(&h, extra), "claimd starts without uprobes"))
		goto out;
	st = claimctl_json(&h, args);
	ASSERT_TRUE(j_bool(j_get(st, "host"), "degraded"), "status: degraded");
	ASSERT_FALSE(j_bool(j_get(st, "host"), "uprobes"), "status: no uprobes");
	ASSERT_FALSE(j_bool(j_get(st, "host"), "untyped_cast"), "status: no cast to no type");
	ASSERT_EQ(j_int(st, "tls_files"), 0, "no TLS probes");
	ASSERT_EQ(j_int(st, "context_files"), 0, "no context probes");
	read_file(h.log, log, sizeof(log));
	ASSERT_TRUE(strstr(log, "degraded: the kernel does not load uprobe BPF programs") != NULL,
		    "the log says what is lost");
	ASSERT_TRUE(strstr(log, "takes no cast to no type") != NULL,
		    "the log says the filter reads fields one by one");
	/* Plain HTTP is still followed, through the filter's field-by-field reads. */
	if (ASSERT_OK(svc_start(&s, &(struct svc_spec){ .name = "pD" }, h.dir), "service") &&
	    ASSERT_OK(trace_start(&t, &h), "trace")) {
		for (i = 0; i < 3; i++)
			ASSERT_EQ(http_get(s.port, "/r/1"), 200, "service answers");
		ASSERT_EQ(trace_wait(&t, trace_is_ingress_of, &s.pid, 3, 10000), 3,
			  "degraded: still traced");
	}
	trace_stop(&t);
	svc_stop(&s);
	claimd_stop(&h);

	snprintf(claimd, sizeof(claimd), "%s/claimd", test__build_dir());
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		const char *argv[] = { claimd, "--metrics", "none", "--control",
				       h.sock, "--pin-dir", h.pin,  NULL };
		char name[96];
		int status;

		setenv("CLAIMD_TEST_MISSING", fatal[i].missing, 1);
		status = proc_run(argv, out, sizeof(out), 20000);
		printf("without %s: exit %d: %s", fatal[i].missing,
		       status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
		snprintf(name, sizeof(name), "without %s: exit code 3", fatal[i].missing);
		ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 3, name);
		snprintf(name, sizeof(name), "without %s: says so", fatal[i].missing);
		ASSERT_TRUE(strstr(out, fatal[i].says) != NULL, name);
	}
out:
	unsetenv("CLAIMD_TEST_MISSING");
	if (test__failed_now())
		claimd_print_log(&h);
	json_object_put(st);
	trace_stop(&t);
	svc_stop(&s);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}

void test_privacy(void)
{
	if (!test__need_root())
		return;
	if (test__start_subtest("control_socket_owner_only"))
		control_socket();
	if (test__start_subtest("metrics_on_loopback"))
		metrics_loopback();
	no_request_data();
	if (test__start_subtest("claimd_as_nobody"))
		not_root();
	if (test__start_subtest("host_checks"))
		host_checks();
}
