// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl top and claimctl storm on a live retrying chain: claimlab's
 * chain A -> B -> C -> D failing at D, with claimd of the test's own.
 * - top in a real terminal (a tmux session of its own, 160x40): the header,
 *   the edges sorted by callee failures with their retries and 2.00x
 *   amplification (one retry per hop), the services as 'claimctl services
 *   --json' has them; 'a' sorts by amplification, 'q' quits; and
 *   'top --once --json';
 * - storm on the observed graph, slack 4: one retry per hop on 3 hops is
 *   8 > 4, do-not-ship, storm radius 3 now and 1 with claim-aware retries;
 *   the claim-aware chain (only C retries) has radius 1 and fan-out 2; with
 *   --deadline both are deadline-bounded.
 * Every run's failures are compared with the truth: D's are its own, those
 * of A, B and C passed up from one hop down. Each run's nodes have names of
 * their own (lab_prefix).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "test_progs.h"

#define REQUESTS "50"

static bool up(struct claimd_h *h, struct trace_cap *t)
{
	static const char *const extra[] = { "--metrics", "none", NULL };

	return lab_claimd_up(h, t, extra);
}

/*
 * claimlab's 4-chain failing at D under a policy, its nodes named
 * prefix+A.. (prefix: lab_prefix of name, len 48 at least); claimd's
 * verdicts on its failures against the truth.
 */
static bool lab(const struct claimd_h *h, const struct trace_cap *t, const char *policy,
		const char *name, char *prefix)
{
	char exe[H_PATH], env[H_PATH], log[H_PATH], json[H_PATH], text[4096], what[64];
	const char *argv[] = { exe,	     "run",    "--topology",	   "chain:4",
			       "--fail",     "D",      "--policy",	   policy,
			       "--requests", REQUESTS, "--service-prefix", prefix,
			       "--json",     json,     "--quiet",	   NULL };
	const char *envv[] = { env, NULL };
	struct json_object *rep;
	int status;
	pid_t pid;

	lab_prefix(prefix, 48, name);
	snprintf(exe, sizeof(exe), "%s/claimlab", test__build_dir());
	snprintf(env, sizeof(env), "CLAIMD_VERDICTS=%s/verdicts", h->pin);
	snprintf(log, sizeof(log), "%s/lab.%s.log", h->dir, name);
	snprintf(json, sizeof(json), "%s/lab.%s.json", h->dir, name);
	pid = proc_spawn(argv, envv, log);
	status = pid > 0 ? proc_wait(pid, 30000) : -1;
	if (status == -1 && pid > 0)
		proc_stop(pid, 1000);
	if (!ASSERT_TRUE(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status), "claimlab")) {
		if (read_file(log, text, sizeof(text)) > 0)
			printf("%s", text);
		return false;
	}
	rep = json_object_from_file(json);
	if (!ASSERT_OK_PTR(rep, "claimlab's JSON"))
		return false;
	snprintf(what, sizeof(what), "lab, %s", name);
	lab_verdicts(t, rep, prefix, what);
	json_object_put(rep);
	return true;
}

static bool has_failures(struct json_object *e, void *ctx)
{
	return j_int(e, "callee_failures") >= *(int *)ctx;
}

/* Waits until claimd has every failure of the chain's last edge. */
static bool chain_seen(const struct claimd_h *h, const char *prefix)
{
	char c[64], d[64];
	int want = 4 * atoi(REQUESTS); /* C tries D twice per try of B, twice per A */
	struct json_object *e;

	snprintf(c, sizeof(c), "%sC", prefix);
	snprintf(d, sizeof(d), "%sD", prefix);
	e = claimd_wait_edge(h, c, d, has_failures, &want, 10000);
	json_object_put(e);
	return ASSERT_OK_PTR(e, "the chain's last edge, every failure");
}

struct tmux {
	char sock[H_PATH]; /* in the test's directory, removed with it */
	bool started;
};

static int tmux(struct tmux *t, const char *const args[], char *out, size_t len)
{
	const char *argv[24] = { "tmux", "-S", t->sock };
	int n = 3, i;

	for (i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return proc_run(argv, out, len, 10000);
}

static void tmux_kill(struct tmux *t)
{
	static const char *const args[] = { "kill-server", NULL };

	if (t->started)
		tmux(t, args, NULL, 0);
	t->started = false;
}

/* Captures the pane until it shows every needle (NULL-terminated). */
static bool screen_wait(struct tmux *t, const char *const needles[], char *screen, size_t len)
{
	static const char *const args[] = { "capture-pane", "-p", "-t", "top", NULL };
	long long end = now_ms() + 10000;
	int i;

	while (now_ms() < end) {
		if (tmux(t, args, screen, len) == 0) {
			for (i = 0; needles[i] && strstr(screen, needles[i]); i++)
				;
			if (!needles[i])
				return true;
		}
		sleep_ms(200);
	}
	printf("---- the terminal ----\n%s\n----\n", screen);
	return false;
}

/* The line of the screen for edge a -> b, its columns split. */
static int edge_row(const char *screen, const char *a, const char *b, char cols[][32], int max)
{
	const char *line = screen;
	int n;

	while (line && *line) {
		char first[32] = "", second[32] = "";

		sscanf(line, "%31s %31s", first, second);
		if (!strcmp(first, a) && !strcmp(second, b)) {
			const char *p = line;

			for (n = 0; n < max; n++) {
				int used = 0;

				if (sscanf(p, "%31s%n", cols[n], &used) != 1)
					break;
				p += used;
				if (*p == '\n' || !*p) {
					n++;
					break;
				}
			}
			return n;
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return 0;
}

static const char *row_pos(const char *screen, const char *a, const char *b)
{
	char needle[160];

	snprintf(needle, sizeof(needle), "%s%*s%s", a, (int)(19 - strlen(a)), "", b);
	return strstr(screen, needle);
}

/* The names of the chain's nodes A, B, C, D. */
static void node_names(char names[4][64], const char *prefix)
{
	int i;

	for (i = 0; i < 4; i++)
		snprintf(names[i], 64, "%s%c", prefix, 'A' + i);
}

void test_top(void)
{
	static char screen[1 << 16];
	char claimctl[H_PATH], cmd[3 * H_PATH], header[H_PATH + 32], cols[12][32];
	char tp[48], nd[4][64];
	struct tmux t = { 0 };
	struct claimd_h h;
	struct trace_cap tc;
	struct json_object *svcs = NULL, *frame = NULL, *e;
	size_t i;
	int n;

	if (!up(&h, &tc) || !lab(&h, &tc, "retry:1", "tp", tp) || !chain_seen(&h, tp))
		goto out;
	node_names(nd, tp);
	snprintf(t.sock, sizeof(t.sock), "%s/tmux.sock", h.dir);
	snprintf(claimctl, sizeof(claimctl), "%s/claimctl", test__build_dir());
	snprintf(cmd, sizeof(cmd), "%s --socket %s top --interval 0.5", claimctl, h.sock);
	{
		const char *args[] = { "new-session", "-d", "-s", "top", "-x",
				       "160",	      "-y", "40", cmd,	 NULL };

		if (!ASSERT_EQ(tmux(&t, args, screen, sizeof(screen)), 0, "tmux new-session")) {
			printf("%s\n", screen);
			goto out;
		}
		t.started = true;
	}
	snprintf(header, sizeof(header), "claimctl top - claimd at %s", h.sock);
	{
		const char *const needles[] = { header, "sort: failures", "CALLER",
						"AMP",	"SERVICE",	  nd[3],
						NULL };

		if (!ASSERT_TRUE(screen_wait(&t, needles, screen, sizeof(screen)), "top shows up"))
			goto out;
	}
	printf("%s", screen);
	/* C -> D has the most failures: it comes first, then B -> C, A -> B. */
	ASSERT_TRUE(row_pos(screen, nd[2], nd[3]) && row_pos(screen, nd[1], nd[2]) &&
			    row_pos(screen, nd[2], nd[3]) < row_pos(screen, nd[1], nd[2]) &&
			    row_pos(screen, nd[1], nd[2]) < row_pos(screen, nd[0], nd[1]),
		    "edges sorted by failures");
	n = edge_row(screen, nd[0], nd[1], cols, 12);
	/* CALLER CALLEE CALLS CALLS/S CALLEE_F BOTH_F RETRIES AMP RATIO CLASS */
	if (ASSERT_EQ(n, 10, "an edge row")) {
		e = claimd_edge(&h, nd[0], nd[1]);
		ASSERT_EQ(atoll(cols[2]), j_int(e, "calls"), "CALLS");
		ASSERT_EQ(atoll(cols[4]), j_int(e, "callee_failures"), "CALLEE_F");
		ASSERT_EQ(atoll(cols[6]), j_int(e, "retries"), "RETRIES");
		ASSERT_STREQ(cols[7], "2.00x", "one retry per call: 2x");
		ASSERT_STREQ(cols[9], j_str(e, "class"), "CLASS");
		json_object_put(e);
	}
	/* Each node's row as 'claimctl services' says it, once top has drawn them all. */
	svcs = claimctl_json(&h, (const char *const[]){ "services", NULL });
	{
		static char lines[4][160];
		const char *rows[5] = { NULL };
		int k = 0;

		for (i = 0; i < json_object_array_length(svcs) && k < 4; i++) {
			struct json_object *s = json_object_array_get_idx(svcs, i);

			if (strncmp(j_str(s, "service"), tp, strlen(tp)))
				continue;
			snprintf(lines[k], sizeof(lines[k]),
				 "%-24s %10lld %10lld %10lld %10lld %10lld", j_str(s, "service"),
				 j_int(s, "requests"), j_int(s, "failures"), j_int(s, "claimed"),
				 j_int(s, "unclaimed"), j_int(s, "unknown"));
			rows[k] = lines[k];
			k++;
		}
		ASSERT_EQ(k, 4, "the four nodes among the services");
		ASSERT_TRUE(screen_wait(&t, rows, screen, sizeof(screen)),
			    "each node's row as 'claimctl services' says");
	}
	{
		const char *keys[] = { "send-keys", "-t", "top", "a", NULL };
		const char *const needles[] = { "sort: amplification", NULL };

		tmux(&t, keys, NULL, 0);
		ASSERT_TRUE(screen_wait(&t, needles, screen, sizeof(screen)), "'a' sorts");
	}
	{
		const char *keys[] = { "send-keys", "-t", "top", "q", NULL };
		const char *has[] = { "has-session", "-t", "top", NULL };
		long long end = now_ms() + 5000;

		tmux(&t, keys, NULL, 0);
		while (tmux(&t, has, NULL, 0) == 0 && now_ms() < end)
			sleep_ms(100);
		ASSERT_NEQ(tmux(&t, has, NULL, 0), 0, "'q' quits (the session ends with it)");
	}
	frame = claimctl_json(&h, (const char *const[]){ "top", "--once", NULL });
	if (ASSERT_OK_PTR(frame, "top --once --json")) {
		struct json_object *edges = j_get(frame, "edges");
		double prev = 1e18;

		ASSERT_STREQ(j_str(frame, "sort"), "failures", "sorted by failures");
		for (i = 0; i < json_object_array_length(edges); i++) {
			e = json_object_array_get_idx(edges, i);
			ASSERT_LE(j_int(e, "callee_failures"), prev, "descending");
			prev = j_int(e, "callee_failures");
			if (!strncmp(j_str(e, "caller"), tp, strlen(tp)))
				ASSERT_FLOAT_NEAR(json_object_get_double(j_get(e, "amplification")),
						  2, 1e-9, "amplification");
		}
		ASSERT_GE(json_object_array_length(edges), 3, "the chain's edges");
		ASSERT_GE(json_object_array_length(j_get(frame, "services")), 4, "services");
	}
out:
	tmux_kill(&t);
	json_object_put(svcs);
	json_object_put(frame);
	lab_claimd_down(&h, &tc);
}

static struct json_object *root_of(struct json_object *rep, const char *name)
{
	struct json_object *roots = j_get(rep, "roots");
	size_t i;

	for (i = 0; i < json_object_array_length(roots); i++)
		if (!strcmp(j_str(json_object_array_get_idx(roots, i), "root"), name))
			return json_object_array_get_idx(roots, i);
	return NULL;
}

void test_storm_live(void)
{
	static const char *const args[] = { "storm", "--slack", "4", NULL };
	static const char *const deadline[] = { "storm", "--slack", "4", "--deadline", NULL };
	struct json_object *rep = NULL, *r, *p;
	struct claimd_h h;
	struct trace_cap tc;
	char text[1 << 14], sr[48], sc[48], sr_a[64], sc_a[64], needle[96];

	if (!up(&h, &tc) || !lab(&h, &tc, "retry:1", "sr", sr) ||
	    !lab(&h, &tc, "claim:1", "sc", sc) || !chain_seen(&h, sr))
		goto out;
	snprintf(sr_a, sizeof(sr_a), "%sA", sr);
	snprintf(sc_a, sizeof(sc_a), "%sA", sc);
	rep = claimctl_json(&h, args);
	/* Printed where a check fails: what it judged. */
	printf("storm --json: %s\n", json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PLAIN));
	r = root_of(rep, sr_a);
	if (ASSERT_OK_PTR(r, "root srA")) {
		p = json_object_array_get_idx(j_get(r, "paths"), 0);
		ASSERT_EQ(json_object_array_length(j_get(r, "paths")), 1, "one path");
		ASSERT_EQ(j_int(p, "hops"), 3, "H = 3");
		ASSERT_STREQ(json_object_to_json_string_ext(j_get(p, "retries_per_hop"),
							    JSON_C_TO_STRING_PLAIN),
			     "[1.0,1.0,1.0]", "one retry per hop, observed");
		ASSERT_FLOAT_NEAR(json_object_get_double(j_get(p, "fanout")), 8, 1e-9, "8x");
		ASSERT_STREQ(j_str(r, "decision"), "do-not-ship", "8 > 4");
		ASSERT_EQ(j_int(r, "radius_now"), 3, "radius 3 now");
		ASSERT_EQ(j_int(r, "radius_claim_aware"), 1, "1 claim-aware");
	}
	r = root_of(rep, sc_a);
	if (ASSERT_OK_PTR(r, "root scA")) {
		ASSERT_EQ(j_int(r, "radius_now"), 1, "claim-aware: only C retries");
		ASSERT_FLOAT_NEAR(json_object_get_double(j_get(r, "max_fanout")), 2, 1e-9, "2x");
		ASSERT_STREQ(j_str(r, "decision"), "degraded", "2 <= 4");
	}
	json_object_put(rep);
	rep = claimctl_json(&h, deadline);
	ASSERT_STREQ(j_str(root_of(rep, sr_a), "decision"), "deadline-bounded", "deadline");
	ASSERT_STREQ(j_str(root_of(rep, sc_a), "decision"), "deadline-bounded", "deadline");
	if (ASSERT_EQ(claimctl_run(&h, args, text, sizeof(text)), 0, "storm, text"))
		printf("%s", text);
	snprintf(needle, sizeof(needle), "root %s: do-not-ship", sr_a);
	ASSERT_OK_PTR(strstr(text, needle), "text: decision");
	ASSERT_OK_PTR(strstr(text, "storm radius 3 now, 1 with claim-aware retries"),
		      "text: radius");
out:
	json_object_put(rep);
	lab_claimd_down(&h, &tc);
}
