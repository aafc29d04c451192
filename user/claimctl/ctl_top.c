// SPDX-License-Identifier: GPL-2.0
/*
 * claimctl top: edges and services, refreshed in the terminal (plain ANSI:
 * the alternate screen, cursor home, erase to the end of line). Edges are
 * sorted by callee failures, retries or amplification (attempts per first
 * call), with calls per second since the last refresh; services with their
 * claimed and unclaimed failures. q or Ctrl-C quits; f, r, a sort. With
 * --once (or when stdout is no terminal) it prints frames without escapes;
 * --json prints each frame as one line of JSON.
 */
#include <argp.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "argnum.h"
#include "claimctl.h"
#include "log.h"
#include "storm.h"

enum sort_key { SORT_FAILURES, SORT_RETRIES, SORT_AMP };
static const char *const sort_names[] = { "failures", "retries", "amplification" };

struct top_args {
	double interval;
	bool once, json;
	enum sort_key sort;
	struct ctl_global g; /* claimd's socket, or --prometheus */
};

static volatile sig_atomic_t quit, resized;
static struct termios saved_tio;
static bool raw_mode, alt_screen;

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		resized = 1;
	else
		quit = 1;
}

static error_t parse_top(int key, char *arg, struct argp_state *state)
{
	struct top_args *a = state->input;
	int i;

	switch (key) {
	case CTL_KEY_PROMETHEUS:
		a->g.prometheus = arg;
		break;
	case 'i':
		if (arg_double(arg, 0.1, 3600, &a->interval))
			argp_error(state, "--interval must be 0.1 to 3600 seconds");
		break;
	case 'o':
		a->once = true;
		break;
	case 'j':
		a->json = true;
		break;
	case 's':
		for (i = 0; i < 3; i++)
			if (!strcmp(arg, sort_names[i]))
				break;
		if (i == 3)
			argp_error(state, "--sort must be failures, retries or amplification");
		a->sort = i;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Attempts per first call: 1 + the retries per hop of storm.c. */
static double amplification(struct json_object *e)
{
	return 1 + storm__observed_r(ctl_num(e, "calls"), ctl_num(e, "retries"));
}

static enum sort_key cur_sort;

static int cmp_desc(double a, double b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int by_sort(const void *x, const void *y)
{
	struct json_object *a = *(struct json_object *const *)x;
	struct json_object *b = *(struct json_object *const *)y;
	double ka[3] = { ctl_num(a, "callee_failures"), ctl_num(a, "retries"), amplification(a) };
	double kb[3] = { ctl_num(b, "callee_failures"), ctl_num(b, "retries"), amplification(b) };
	int i, c;

	/* The chosen key first, then the others in their order. */
	if ((c = cmp_desc(ka[cur_sort], kb[cur_sort])))
		return c;
	for (i = 0; i < 3; i++)
		if ((c = cmp_desc(ka[i], kb[i])))
			return c;
	c = strcmp(ctl_str(a, "caller"), ctl_str(b, "caller"));
	return c ? c : strcmp(ctl_str(a, "callee"), ctl_str(b, "callee"));
}

static int by_failures(const void *x, const void *y)
{
	struct json_object *a = *(struct json_object *const *)x;
	struct json_object *b = *(struct json_object *const *)y;
	int c = cmp_desc(ctl_num(a, "failures"), ctl_num(b, "failures"));

	return c ? c : strcmp(ctl_str(a, "service"), ctl_str(b, "service"));
}

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static double rate_of(struct json_object *prev, struct json_object *e, double dt)
{
	char key[512];
	struct json_object *v;

	snprintf(key, sizeof(key), "%s\n%s", ctl_str(e, "caller"), ctl_str(e, "callee"));
	if (!prev || dt <= 0 || !json_object_object_get_ex(prev, key, &v))
		return NAN;
	return (ctl_num(e, "calls") - json_object_get_double(v)) / dt;
}

/* One frame: edges sorted, with amplification and calls/s; seen services
 * by failures. prev holds the calls of the last frame (updated). */
static struct json_object *frame(struct json_object *graph, struct json_object *prev, double dt,
				 enum sort_key sort)
{
	struct json_object *f = json_object_new_object(), *edges = json_object_new_array();
	struct json_object *svcs = json_object_new_array(), *ge = member(graph, "edges");
	struct json_object *gn = member(graph, "nodes");
	size_t i;

	for (i = 0; i < json_object_array_length(ge); i++) {
		struct json_object *e = json_object_array_get_idx(ge, i),
				   *o = json_object_new_object();
		static const char *const keys[] = { "caller",	       "callee",      "calls",
						    "callee_failures", "both_failed", "retries",
						    "ratio",	       "class",	      "root" };
		double rate = rate_of(prev, e, dt);
		size_t k;

		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			json_object_object_add(o, keys[k], json_object_get(member(e, keys[k])));
		json_object_object_add(o, "amplification",
				       json_object_new_double(amplification(e)));
		json_object_object_add(o, "calls_per_s",
				       isnan(rate) ? NULL : json_object_new_double(rate));
		json_object_array_add(edges, o);
	}
	cur_sort = sort;
	json_object_array_sort(edges, by_sort);
	for (i = 0; i < json_object_array_length(gn); i++) {
		struct json_object *n = json_object_array_get_idx(gn, i);

		if (json_object_get_boolean(member(n, "seen")))
			json_object_array_add(svcs, json_object_get(n));
	}
	json_object_array_sort(svcs, by_failures);
	/* The calls of this frame, for the next one's rates. */
	for (i = 0; prev && i < json_object_array_length(ge); i++) {
		struct json_object *e = json_object_array_get_idx(ge, i);
		char key[512];

		snprintf(key, sizeof(key), "%s\n%s", ctl_str(e, "caller"), ctl_str(e, "callee"));
		json_object_object_add(prev, key, json_object_new_double(ctl_num(e, "calls")));
	}
	json_object_object_add(f, "generated_unix",
			       json_object_get(member(graph, "generated_unix")));
	json_object_object_add(f, "sort", json_object_new_string(sort_names[sort]));
	json_object_object_add(f, "edges", edges);
	json_object_object_add(f, "services", svcs);
	return f;
}

static int term_rows(void)
{
	struct winsize ws;

	return !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row ? ws.ws_row : 1000;
}

/* Prints the frame; on a terminal, within its height and over the last one. */
static void show(FILE *out, struct json_object *f, const struct ctl_global *g, bool tty)
{
	struct json_object *edges = member(f, "edges"), *svcs = member(f, "services");
	size_t ne = json_object_array_length(edges), ns = json_object_array_length(svcs), i;
	int rows = tty ? term_rows() : 1000000, used;
	const char *eol = tty ? "\033[K\n" : "\n";
	time_t now = time(NULL);
	char when[32];

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	if (tty)
		fputs("\033[H", out);
	fprintf(out, "claimctl top - claimd at %s - %s - %zu services, %zu edges - sort: %s%s",
		g->prometheus ? g->prometheus : g->socket, when, ns, ne, ctl_str(f, "sort"), eol);
	fprintf(out, "%s%s", tty ? "keys: q quit, f failures, r retries, a amplification" : "",
		eol);
	fprintf(out, "%-18s %-18s %9s %8s %8s %8s %7s %6s %6s %-10s%s", "CALLER", "CALLEE", "CALLS",
		"CALLS/S", "CALLEE_F", "BOTH_F", "RETRIES", "AMP", "RATIO", "CLASS", eol);
	/* Room for the services below: their header, a blank line, 3 rows. */
	used = 3;
	for (i = 0; i < ne && (int)i < rows - used - 6; i++) {
		struct json_object *e = json_object_array_get_idx(edges, i);
		double rate = ctl_num(e, "calls_per_s"), ratio = ctl_num(e, "ratio");
		char r[16] = "-", q[16] = "-";

		if (!isnan(rate))
			snprintf(r, sizeof(r), "%.1f", rate);
		if (!isnan(ratio))
			snprintf(q, sizeof(q), "%.2f", ratio);
		fprintf(out, "%-18.18s %-18.18s %9.0f %8s %8.0f %8.0f %7.0f %5.2fx %6s %-10s%s",
			ctl_str(e, "caller"), ctl_str(e, "callee"), ctl_num(e, "calls"), r,
			ctl_num(e, "callee_failures"), ctl_num(e, "both_failed"),
			ctl_num(e, "retries"), ctl_num(e, "amplification"), q,
			ctl_num(e, "root") > 0 ? "root" : ctl_str(e, "class"), eol);
	}
	used += i;
	fprintf(out, "%s", eol);
	fprintf(out, "%-24s %10s %10s %10s %10s %10s%s", "SERVICE", "REQUESTS", "FAILURES",
		"CLAIMED", "UNCLAIMED", "UNKNOWN", eol);
	used += 2;
	for (i = 0; i < ns && (int)i < rows - used - 1; i++) {
		struct json_object *s = json_object_array_get_idx(svcs, i);

		fprintf(out, "%-24.24s %10.0f %10.0f %10.0f %10.0f %10.0f%s", ctl_str(s, "service"),
			ctl_num(s, "requests"), ctl_num(s, "failures"), ctl_num(s, "claimed"),
			ctl_num(s, "unclaimed"), ctl_num(s, "unknown"), eol);
	}
	if (tty)
		fputs("\033[J", out);
	else
		fputs("\n", out);
	fflush(out);
}

static void term_restore(void)
{
	if (raw_mode)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	if (alt_screen)
		fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	raw_mode = alt_screen = false;
}

static void term_setup(void)
{
	struct termios t;

	fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout);
	alt_screen = true;
	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &saved_tio)) {
		t = saved_tio;
		t.c_lflag &= ~(ICANON | ECHO); /* keys one by one; ISIG keeps Ctrl-C */
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		raw_mode = !tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}
}

/* Waits up to ms for a key; returns it, or 0. */
static int wait_key(int ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (!raw_mode) {
		poll(NULL, 0, ms);
		return 0;
	}
	if (poll(&p, 1, ms) <= 0 || read(STDIN_FILENO, &c, 1) != 1)
		return 0;
	return c;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_top(const struct ctl_global *g, int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "interval", 'i', "SECONDS", 0, "Refresh every SECONDS (default 2)", 0 },
		{ "once", 'o', NULL, 0, "One frame, then exit", 0 },
		{ "sort", 's', "KEY", 0,
		  "Sort edges by failures (callee failures, the default), retries or "
		  "amplification (attempts per first call)",
		  0 },
		{ "json", 'j', NULL, 0, "Each frame as one line of JSON", 0 },
		CTL_OPT_PROMETHEUS,
		{},
	};
	static const struct argp argp = {
		.options = opts,
		.parser = parse_top,
		.doc = "Edges and services of a running claimd, refreshed.\v"
		       "Keys: q (or Ctrl-C) quits; f, r, a sort edges by failures, retries, "
		       "amplification. CALLS/S is the rate since the last refresh; AMP the "
		       "attempts per first call (1 + retries / first calls).",
	};
	struct top_args a = { .interval = 2, .g = *g };
	struct sigaction sa = { .sa_handler = on_signal };
	struct json_object *prev = json_object_new_object();
	double last = 0;
	bool tty;
	int ret = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	tty = !a.once && !a.json && isatty(STDOUT_FILENO);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	if (tty)
		term_setup();
	while (!quit) {
		struct json_object *graph = ctl_graph(&a.g), *f;
		double now = mono();
		int key;

		if (!graph) {
			ret = 1;
			break;
		}
		f = frame(graph, prev, last ? now - last : 0, a.sort);
		last = now;
		if (a.json)
			printf("%s\n", json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN));
		else
			show(stdout, f, &a.g, tty);
		fflush(stdout);
		json_object_put(f);
		json_object_put(graph);
		if (a.once)
			break;
		for (double end = mono() + a.interval; !quit && !resized && mono() < end;) {
			key = wait_key((int)((end - mono()) * 1000) + 1);
			if (key == 'q' || key == 'Q')
				quit = 1;
			else if (key == 'f' || key == 'r' || key == 'a') {
				a.sort = key == 'f'   ? SORT_FAILURES
					 : key == 'r' ? SORT_RETRIES
						      : SORT_AMP;
				break;
			}
		}
		resized = 0;
	}
	term_restore();
	if (ret && !a.once)
		pr_err("top stopped: %s did not answer", a.g.prometheus ? "prometheus" : "claimd");
	json_object_put(prev);
	return ret;
}
