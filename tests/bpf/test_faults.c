// SPDX-License-Identifier: GPL-2.0
/*
 * Faults:
 * - claimd killed with SIGKILL and restarted, three times, while a client
 *   calls a chain of two real services (fA -> fB) throughout: the client
 *   sees only the answers the services mean to give; the memory survives
 *   each kill (persisted every second); the pinned verdict map is the same
 *   map after every restart (services that mapped it keep reading it); the
 *   dead instance's programs and links are gone (checked with bpftool), so
 *   their numbers do not grow across restarts; and records flow again.
 * - two claimd started at once on the same pin directory: exactly one runs,
 *   the other refuses with a clear message and exit code 4; and a second
 *   claimd given the first one's control socket refuses the same way,
 *   instead of taking the socket over.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "harness.h"
#include "kernel/io_attach.h"
#include "services.h"
#include "test_progs.h"
#include "truth.h"

#define RESTARTS 3
#define MAX_IDS	 256

/* ---- the client that runs throughout ---- */

struct client {
	int port;
	volatile int stop;
	int requests, wrong;
	int last_wrong_status, last_wrong_id;
	pthread_t th;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	char path[32];
	int id = 0;

	while (!c->stop) {
		int want, got;

		/* fB fails every third id; fA passes that up as 502. */
		want = id % 3 == 0 ? 502 : 200;
		snprintf(path, sizeof(path), "/r/%d", id);
		got = http_get(c->port, path);
		c->requests++;
		if (got != want) {
			c->wrong++;
			c->last_wrong_status = got;
			c->last_wrong_id = id;
		}
		id++;
		sleep_ms(5);
	}
	return NULL;
}

/* ---- bpftool's view ---- */

static struct json_object *bpftool_json(const char *const args[])
{
	static char out[4 << 20];
	const char *argv[16] = { "bpftool", "-j" };
	int i, status;

	for (i = 0; args[i] && i < 13; i++)
		argv[i + 2] = args[i];
	argv[i + 2] = NULL;
	status = proc_run(argv, out, sizeof(out), 20000);
	if (status != 0) {
		printf("bpftool %s failed: %.300s\n", args[0], out);
		return NULL;
	}
	return json_tokener_parse(out);
}

static long long verdicts_map_id(const struct claimd_h *h)
{
	char path[H_PATH];
	const char *args[] = { "map", "show", "pinned", path, NULL };
	struct json_object *m;
	long long id;

	snprintf(path, sizeof(path), "%s/verdicts", h->pin);
	m = bpftool_json(args);
	id = j_int(m, "id");
	json_object_put(m);
	return id;
}

/* This claimd's programs: the tracepoint programs using its verdict map (the
 * uprobes depend on which files are around). */
struct progs {
	long long ids[MAX_IDS];
	int n;
	int links; /* links of those programs */
	long long link_ids[MAX_IDS];
};

static bool uses_map(struct json_object *prog, long long map_id)
{
	struct json_object *maps = j_get(prog, "map_ids");
	size_t i;

	for (i = 0; maps && i < json_object_array_length(maps); i++)
		if (json_object_get_int64(json_object_array_get_idx(maps, i)) == map_id)
			return true;
	return false;
}

/* A link of program id, in bpftool's list of links. */
static bool has_link(struct json_object *links, long long id)
{
	size_t i;

	for (i = 0; links && i < json_object_array_length(links); i++)
		if (j_int(json_object_array_get_idx(links, i), "prog_id") == id)
			return true;
	return false;
}

/*
 * The programs of one claimd at tracepoints: of the tracepoint type, and of
 * the raw tracepoint type those attached (tp_io_x; not the two claimd runs
 * itself and never attaches), that use the map map_id; and their links.
 */
static bool progs_of(long long map_id, struct progs *p)
{
	const char *pargs[] = { "prog", "show", NULL }, *largs[] = { "link", "show", NULL };
	struct json_object *progs = bpftool_json(pargs), *links = bpftool_json(largs);
	size_t i;
	int k;

	memset(p, 0, sizeof(*p));
	for (i = 0; progs && i < json_object_array_length(progs); i++) {
		struct json_object *o = json_object_array_get_idx(progs, i);
		const char *type = j_str(o, "type");

		if ((!strcmp(type, "tracepoint") ||
		     (!strcmp(type, "raw_tracepoint") && has_link(links, j_int(o, "id")))) &&
		    uses_map(o, map_id) && p->n < MAX_IDS)
			p->ids[p->n++] = j_int(o, "id");
	}
	for (i = 0; links && i < json_object_array_length(links); i++) {
		struct json_object *o = json_object_array_get_idx(links, i);

		for (k = 0; k < p->n; k++)
			if (j_int(o, "prog_id") == p->ids[k] && p->links < MAX_IDS)
				p->link_ids[p->links++] = j_int(o, "id");
	}
	json_object_put(progs);
	json_object_put(links);
	return progs && links;
}

/*
 * Where claimd (pid) attached its programs, as bpftool's perf list says:
 * never at a syscall tracepoint (sys_enter_*, sys_exit_*, or the raw
 * sys_enter and sys_exit), whose mere presence puts every syscall of every
 * process on the kernel's slow path; at the four that follow sockets. 0 or
 * the number of problems, each said.
 */
static int tracepoints_of(pid_t pid)
{
	static const char *const want[] = { "sock_recv_length", "sock_send_length",
					    "inet_sock_set_state", "tcp_destroy_sock" };
	const char *args[] = { "perf", "show", NULL };
	struct json_object *all = bpftool_json(args);
	bool seen[4] = { false };
	int bad = 0;
	size_t i, k;

	for (i = 0; all && i < json_object_array_length(all); i++) {
		struct json_object *o = json_object_array_get_idx(all, i);
		const char *tp = j_str(o, "tracepoint");

		if (j_int(o, "pid") != pid || !tp[0])
			continue;
		if (!strncmp(tp, "sys_", 4)) {
			printf("claimd attached at the syscall tracepoint %s\n", tp);
			bad++;
		}
		for (k = 0; k < 4; k++)
			seen[k] |= !strcmp(tp, want[k]);
	}
	for (k = 0; k < 4; k++)
		if (!seen[k]) {
			printf("claimd not attached at %s\n", want[k]);
			bad++;
		}
	json_object_put(all);
	return all ? bad : -1;
}

static int still_there(const struct progs *old, const struct progs *now)
{
	int i, k, n = 0;

	for (i = 0; i < old->n; i++)
		for (k = 0; k < now->n; k++)
			n += old->ids[i] == now->ids[k];
	return n;
}

/* Waits until the programs using the map are those of one instance (the
 * kernel frees a dead process's programs shortly after it is reaped). */
static void progs_settle(long long map_id, int want, struct progs *p)
{
	long long end = now_ms() + 5000;

	while (progs_of(map_id, p) && p->n != want && now_ms() < end)
		sleep_ms(100);
}

static int pin_entries(const struct claimd_h *h, char *names, size_t len)
{
	DIR *d = opendir(h->pin);
	struct dirent *e;
	int n = 0;

	names[0] = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		strncat(names, e->d_name, len - strlen(names) - 2);
		strcat(names, " ");
	}
	closedir(d);
	return n;
}

static bool has_failures(struct json_object *e, void *ctx)
{
	return j_int(e, "callee_failures") >= *(int *)ctx;
}

static bool persisted(const struct claimd_h *h)
{
	const char *args[] = { "status", NULL };
	struct json_object *st = claimctl_json(h, args);
	bool ok = j_int(j_get(st, "memory"), "persisted_unix") > 0;

	json_object_put(st);
	return ok;
}

/* fB's failures (every third id) are its own, fA's are fB's, passed up. */
static void check_verdicts(const struct trace_cap *t, const struct svc *a, const struct svc *b,
			   int ids)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = ids, .mod = 3 };
	const pid_t pids[2] = { a->pid, b->pid };
	const char *const names[2] = { a->name, b->name };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[2];

	/* Ten requests of fA: three of them at least failed, at fB and at fA. */
	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, t, 0, truth, 2, 2 * 3);
	truth__expect(&tally, "after the restarts", -1, 0);
	ASSERT_GE(tally.right, 2 * 3, "verdicts after the restarts");
}

static void kill_restart(void)
{
	const char *extra[] = { "--persist-interval", "1", "--metrics", "none", NULL };
	struct svc a = { 0 }, b = { 0 };
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct client c = { 0 };
	struct progs first, now;
	struct json_object *e = NULL, *st = NULL;
	const char *sargs[] = { "status", NULL };
	long long map_id, id;
	char names[256];
	int i, five = 5, one_fail = 1;
	bool running = false;

	if (!ASSERT_OK(tmpdir_make(h.dir, sizeof(h.dir)), "tmpdir"))
		return;
	if (svc_start(&b, &(struct svc_spec){ .name = "fB", .fail_mod = 3 }, h.dir) ||
	    svc_start(&a, &(struct svc_spec){ .name = "fA", .downstream = b.port }, h.dir))
		goto out;
	if (!ASSERT_OK(claimd_start(&h, extra), "claimd start"))
		goto out;
	c.port = a.port;
	pthread_create(&c.th, NULL, client_main, &c);
	running = true;
	e = claimd_wait_edge(&h, "fA", "fB", has_failures, &five, 15000);
	if (!ASSERT_OK_PTR(e, "edge fA -> fB learned"))
		goto out;
	json_object_put(e);
	e = NULL;
	for (i = 0; i < 50 && !persisted(&h); i++)
		sleep_ms(100);
	claimd_ticks_wait(&h, 2); /* the memory on disk holds those failures */
	map_id = verdicts_map_id(&h);
	if (!ASSERT_GT(map_id, 0, "verdict map pinned"))
		goto out;
	progs_of(map_id, &first);
	printf("instance 1: verdict map id %lld, %d tracepoint programs, %d links\n", map_id,
	       first.n, first.links);
	ASSERT_EQ(tracepoints_of(h.pid), 0, "no syscall tracepoint; the socket ones");
	/* At least tp_io_x, tp_sock_state and tp_sock_free use the verdict map. */
	ASSERT_GE(first.n, 3, "its tracepoint programs");
	/* tp_io_x is attached at two raw tracepoints, a link each; every other program at one. */
	ASSERT_EQ(first.links, first.n + IO_ATTACH_MAX, "each attached by its links");

	for (i = 0; i < RESTARTS; i++) {
		struct progs old = first;
		int before = c.requests;

		if (i)
			progs_of(map_id, &old);
		claimd_kill(&h);
		sleep_ms(300); /* traffic while no claimd runs */
		if (!ASSERT_OK(claimd_start(&h, extra), "claimd restarts"))
			goto out;
		id = verdicts_map_id(&h);
		ASSERT_EQ(id, map_id, "the same verdict map, reused");
		progs_settle(map_id, first.n, &now);
		printf("restart %d: %d requests meanwhile; %d tracepoint programs, %d links on the "
		       "verdict map; %d of the dead instance's programs left\n",
		       i + 1, c.requests - before, now.n, now.links, still_there(&old, &now));
		ASSERT_EQ(now.n, first.n, "programs do not grow");
		ASSERT_EQ(now.links, first.links, "links do not grow");
		ASSERT_EQ(still_there(&old, &now), 0, "the dead instance's programs are gone");
		ASSERT_EQ(pin_entries(&h, names, sizeof(names)), 1, "one pin in the pin directory");
		ASSERT_STREQ(names, "verdicts ", "the verdict map");
		st = claimctl_json(&h, sargs);
		ASSERT_GE(j_int(j_get(st, "memory"), "loaded_edges"), 1, "the memory survived");
		snprintf(names, sizeof(names), "%s/verdicts", h.pin);
		ASSERT_STREQ(j_str(st, "verdicts"), names, "status names the same pin");
		json_object_put(st);
		st = NULL;
		/* The memory, loaded: fA -> fB with its failures before the window has any. */
		e = claimd_wait_edge(&h, "fA", "fB", has_failures, &one_fail, 5000);
		ASSERT_OK_PTR(e, "fA -> fB known after the restart");
		json_object_put(e);
		e = NULL;
		sleep_ms(500);
	}
	/* Records flow again from the last claimd. */
	if (ASSERT_OK(trace_start(&t, &h), "trace"))
		ASSERT_GE(trace_wait(&t, trace_is_ingress_of, &a.pid, 10, 10000), 10,
			  "records flow after the restarts");
	c.stop = 1;
	pthread_join(c.th, NULL);
	running = false;
	check_verdicts(&t, &a, &b, c.requests);
	printf("client: %d requests across %d kills, %d wrong answers", c.requests, RESTARTS,
	       c.wrong);
	if (c.wrong)
		printf(" (last: id %d got %d)", c.last_wrong_id, c.last_wrong_status);
	printf("\n");
	ASSERT_GT(c.requests, 100, "the client ran throughout");
	ASSERT_EQ(c.wrong, 0, "services never noticed");
out:
	if (running) {
		c.stop = 1;
		pthread_join(c.th, NULL);
	}
	if (test__failed_now())
		claimd_print_log(&h);
	json_object_put(e);
	json_object_put(st);
	trace_stop(&t);
	claimd_stop(&h);
	svc_stop(&a);
	svc_stop(&b);
	tmpdir_remove(h.dir);
}

/* ---- two at once ---- */

static void two_at_once(void)
{
	char dir[H_DIR], claimd[H_PATH], pin[H_DIR], sock[2][H_PATH], state[2][H_PATH],
		log[2][H_PATH], text[8192];
	struct claimd_h h[2];
	pid_t pid[2];
	int i, status[2], refused = -1, runs = 0;

	if (!ASSERT_OK(tmpdir_make(dir, sizeof(dir)), "tmpdir"))
		return;
	snprintf(claimd, sizeof(claimd), "%s/claimd", test__build_dir());
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/claimd-test-%d-two", getpid());
	for (i = 0; i < 2; i++) {
		snprintf(sock[i], sizeof(sock[i]), "%s/control%d.sock", dir, i);
		snprintf(state[i], sizeof(state[i]), "%s/state%d", dir, i);
		snprintf(log[i], sizeof(log[i]), "%s/claimd%d.log", dir, i);
	}
	/* Both forked before either can have taken the lock. */
	for (i = 0; i < 2; i++) {
		const char *argv[] = { claimd,	"--pin-dir",   pin,	 "--control",
				       sock[i], "--state-dir", state[i], "--metrics",
				       "none",	NULL };

		pid[i] = proc_spawn(argv, NULL, log[i]);
	}
	for (i = 0; i < 2; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		snprintf(h[i].sock, sizeof(h[i].sock), "%s", sock[i]);
	}
	/* The one refused exits at once; the other comes up. */
	for (i = 0; i < 2; i++) {
		long long end = now_ms() + 20000;

		status[i] = -1;
		while (now_ms() < end) {
			const char *args[] = { "status", "--json", NULL };
			char out[4096];

			status[i] = proc_wait(pid[i], 0);
			if (status[i] != -1)
				break;
			if (claimctl_run(&h[i], args, out, sizeof(out)) == 0 &&
			    strstr(out, "\"attached\"")) {
				runs++;
				break;
			}
			sleep_ms(50);
		}
		if (status[i] != -1) {
			pid[i] = 0;
			refused = i;
		}
	}
	printf("two at once: %d running; ", runs);
	if (refused >= 0) {
		read_file(log[refused], text, sizeof(text));
		printf("claimd #%d exited with %d: %s", refused,
		       WIFEXITED(status[refused]) ? WEXITSTATUS(status[refused]) : -1, text);
	}
	printf("\n");
	ASSERT_EQ(runs, 1, "exactly one runs");
	if (ASSERT_GE(refused, 0, "the other refused")) {
		ASSERT_TRUE(WIFEXITED(status[refused]), "it exited");
		ASSERT_EQ(WEXITSTATUS(status[refused]), 4,
			  "with exit code 4 (pin directory in use)");
		ASSERT_TRUE(strstr(text, "another claimd is already running with pin directory") &&
				    strstr(text, pin),
			    "and says why, naming the directory");
		ASSERT_TRUE(strstr(text, "--pin-dir") != NULL, "and what to do");
		ASSERT_EQ(access(sock[refused], F_OK), -1, "it made no control socket");
	}
	/* The one running still serves: the refused one took nothing from it. */
	for (i = 0; i < 2; i++) {
		if (pid[i] <= 0)
			continue;
		{
			const char *args[] = { "status", NULL };
			struct json_object *st = claimctl_json(&h[i], args);

			ASSERT_OK_PTR(st, "the running one answers");
			json_object_put(st);
		}
		ASSERT_EQ(proc_stop(pid[i], 10000), 0, "and stops cleanly");
	}
	snprintf(text, sizeof(text), "%s/verdicts", pin);
	unlink(text);
	rmdir(pin);
	tmpdir_remove(dir);
}

/* A second claimd on its own pin directory but the first one's control socket. */
static void same_control_socket(void)
{
	const char *args[] = { "status", NULL };
	struct claimd_h h = { 0 };
	struct json_object *st;
	char claimd[H_PATH], pin[H_DIR], state[H_PATH], log[H_PATH], text[4096];
	int status;

	if (!ASSERT_OK(claimd_start(&h, NULL), "claimd start"))
		goto out;
	snprintf(claimd, sizeof(claimd), "%s/claimd", test__build_dir());
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/claimd-test-%d-second", getpid());
	snprintf(state, sizeof(state), "%s/state2", h.dir);
	snprintf(log, sizeof(log), "%s/second.log", h.dir);
	{
		const char *argv[] = { claimd,	      "--pin-dir", pin,		"--control", h.sock,
				       "--state-dir", state,	   "--metrics", "none",	     NULL };
		pid_t pid = proc_spawn(argv, NULL, log);

		status = pid > 0 ? proc_wait(pid, 20000) : -1;
		if (status == -1 && pid > 0)
			proc_stop(pid, 1000);
	}
	read_file(log, text, sizeof(text));
	printf("second claimd on the same control socket: exit %d: %s",
	       status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, text);
	ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 4,
		    "refused with exit code 4");
	ASSERT_TRUE(strstr(text, "is in use by another claimd") != NULL, "saying why");
	st = claimctl_json(&h, args);
	ASSERT_OK_PTR(st, "the first one still answers on its socket");
	ASSERT_EQ(j_int(st, "pid"), h.pid, "the first one, not the second");
	json_object_put(st);
	snprintf(text, sizeof(text), "%s/verdicts", pin);
	unlink(text);
	rmdir(pin);
out:
	if (test__failed_now())
		claimd_print_log(&h);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}

void test_faults(void)
{
	if (!test__need_root())
		return;
	if (test__start_subtest("kill_restart_under_load"))
		kill_restart();
	if (test__start_subtest("two_at_once"))
		two_at_once();
	if (test__start_subtest("same_control_socket"))
		same_control_socket();
}
