// SPDX-License-Identifier: GPL-2.0
/*
 * The live service map in a real browser, and the graph behind it:
 * - claimd watches wA -> wB -> wC (wC fails every other request, the others
 *   pass it up: fail-close, an unclaimed chain) and wX -> wC (wX survives:
 *   fail-open); its verdicts on the failures against the truth: wC's are
 *   its own, wB's and wA's passed up from one hop down;
 * - /graph.json and 'claimctl graph --json' give the same graph, and
 *   'claimctl graph --format dot' draws it;
 * - headless Chromium loads /map: the DOM it dumps after the page's
 *   scripts ran has a node per service and an edge per call with the class,
 *   failing, origin and unclaimed marks of the graph; its screenshot is
 *   kept as build/webmap.png;
 * - the graph saved to a file gives 'claimctl storm --file' the same answer
 *   as the live graph;
 * - anything but GET and HEAD, and unknown paths, are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define CHROMIUM "/usr/bin/chromium"
#define DOM_MAX	 (1 << 20)

static const char *const mine[] = { "wA", "wB", "wC", "wX" };

static bool is_mine(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
		if (!strcmp(name, mine[i]))
			return true;
	return false;
}

/*
 * wC fails every even id of 40, asked by wB and by wX: 40 failures of its
 * own; wB and wA pass up the 20 of wB's calls. wX fails none.
 */
static void chain_verdicts(const struct trace_cap *tc, const struct svc *a, const struct svc *b,
			   const struct svc *c)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = 40, .mod = 2 };
	const pid_t pids[3] = { a->pid, b->pid, c->pid };
	const char *const names[3] = { a->name, b->name, c->name };
	struct truth_tally tally = { 0 };
	struct truth_svc truth[3];

	truth__chain(truth, 3, &shape, pids, names);
	truth__tally_trace(&tally, tc, 0, truth, 3, 20 + 20 + 40);
	truth__expect(&tally, "wA -> wB -> wC", 20 + 20 + 40, 0);
}

static bool has_class(struct json_object *e, void *ctx)
{
	return !strcmp(j_str(e, "class"), ctx);
}

/* The start tag that holds needle (an attribute), as a string in buf. */
static const char *dom_tag(const char *dom, const char *needle, char *buf, size_t len)
{
	const char *p = strstr(dom, needle), *start, *end;

	if (!p)
		return NULL;
	for (start = p; start > dom && *start != '<'; start--)
		;
	end = strchr(p, '>');
	if (!end || (size_t)(end - start) >= len)
		return NULL;
	memcpy(buf, start, end - start + 1);
	buf[end - start + 1] = 0;
	return buf;
}

/* The value of attribute name in a tag ("" when absent). */
static const char *attr(const char *tag, const char *name, char *buf, size_t len)
{
	char key[64];
	const char *p, *q;

	buf[0] = 0;
	snprintf(key, sizeof(key), " %s=\"", name);
	if (!tag || !(p = strstr(tag, key)))
		return buf;
	p += strlen(key);
	q = strchr(p, '"');
	if (q && (size_t)(q - p) < len) {
		memcpy(buf, p, q - p);
		buf[q - p] = 0;
	}
	return buf;
}

static const char *bool_str(struct json_object *o, const char *key)
{
	return j_bool(o, key) ? "true" : "false";
}

/* Headless Chromium on url: mode is --dump-dom or --screenshot=FILE. */
static int run_chromium(const char *url, const char *profile, const char *mode, char *out,
			size_t len)
{
	char user_dir[H_PATH + 32];
	const char *argv[20] = { CHROMIUM,
				 "--headless",
				 "--no-sandbox",
				 "--disable-gpu",
				 "--disable-quic",
				 "--no-first-run",
				 "--disable-background-networking",
				 "--disable-component-update",
				 "--disable-sync",
				 "--hide-scrollbars",
				 user_dir,
				 "--virtual-time-budget=3000",
				 mode };
	int n = 13;

	snprintf(user_dir, sizeof(user_dir), "--user-data-dir=%s", profile);
	if (!strncmp(mode, "--screenshot", 12))
		argv[n++] = "--window-size=1200,800";
	argv[n++] = url;
	argv[n] = NULL;
	return proc_run(argv, out, len, 60000);
}

/* Every node and edge of my services in the graph is in the DOM, marked alike. */
static void check_dom(const char *dom, struct json_object *graph)
{
	struct json_object *nodes = j_get(graph, "nodes"), *edges = j_get(graph, "edges");
	char needle[256], tag[1024], v[64];
	int n_nodes = 0, n_edges = 0;
	size_t i;

	for (i = 0; i < json_object_array_length(nodes); i++) {
		struct json_object *n = json_object_array_get_idx(nodes, i);
		const char *name = j_str(n, "service");

		if (!is_mine(name))
			continue;
		n_nodes++;
		snprintf(needle, sizeof(needle), " data-service=\"%s\"", name);
		if (!ASSERT_OK_PTR(dom_tag(dom, needle, tag, sizeof(tag)), name))
			continue;
		ASSERT_STREQ(attr(tag, "class", v, sizeof(v)), "node", "an SVG node");
		ASSERT_STREQ(attr(tag, "data-failing", v, sizeof(v)), bool_str(n, "failing"), name);
		ASSERT_STREQ(attr(tag, "data-origin", v, sizeof(v)), bool_str(n, "origin"), name);
		ASSERT_EQ(atoll(attr(tag, "data-requests", v, sizeof(v))), j_int(n, "requests"),
			  name);
	}
	for (i = 0; i < json_object_array_length(edges); i++) {
		struct json_object *e = json_object_array_get_idx(edges, i);

		if (!is_mine(j_str(e, "caller")))
			continue;
		n_edges++;
		snprintf(needle, sizeof(needle), " data-caller=\"%s\" data-callee=\"%s\"",
			 j_str(e, "caller"), j_str(e, "callee"));
		if (!ASSERT_OK_PTR(dom_tag(dom, needle, tag, sizeof(tag)), needle))
			continue;
		ASSERT_STREQ(attr(tag, "data-class", v, sizeof(v)), j_str(e, "class"), needle);
		ASSERT_STREQ(attr(tag, "data-unclaimed", v, sizeof(v)), bool_str(e, "unclaimed"),
			     needle);
	}
	ASSERT_EQ(n_nodes, 4, "my services in the graph");
	ASSERT_EQ(n_edges, 3, "my edges in the graph");
	/* And what the graph should say, independently of the page. */
	ASSERT_OK_PTR(strstr(dom, "data-caller=\"wA\" data-callee=\"wB\" data-class=\"fail-close\" "
				  "data-unclaimed=\"true\""),
		      "wA -> wB: fail-close, unclaimed chain");
	ASSERT_OK_PTR(strstr(dom, "data-caller=\"wX\" data-callee=\"wC\" data-class=\"fail-open\" "
				  "data-unclaimed=\"false\""),
		      "wX -> wC: fail-open");
	ASSERT_OK_PTR(strstr(dom, "data-service=\"wC\" data-seen=\"true\" data-failing=\"true\" "
				  "data-origin=\"true\""),
		      "wC claims its failures");
	ASSERT_OK_PTR(strstr(dom, "data-chain=\"wA&gt;wB&gt;wC\""), "the unclaimed chain listed");
}

static struct json_object *curl_json(const char *url)
{
	static char out[1 << 20];
	const char *argv[] = { "curl", "-s", "--max-time", "5", url, NULL };

	return proc_run(argv, out, sizeof(out), 10000) == 0 ? json_tokener_parse(out) : NULL;
}

/* My services' objects of arr, keys picked (all when keys is NULL), as text. */
static char *mine_only(struct json_object *arr, const char *key, const char *const keys[])
{
	struct json_object *sel = json_object_new_array();
	char *s;
	size_t i, k;

	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *p;

		if (!is_mine(j_str(o, key)))
			continue;
		if (!keys) {
			json_object_array_add(sel, json_object_get(o));
			continue;
		}
		p = json_object_new_object();
		for (k = 0; keys[k]; k++)
			json_object_object_add(p, keys[k], json_object_get(j_get(o, keys[k])));
		json_object_array_add(sel, p);
	}
	s = strdup(json_object_to_json_string_ext(sel, JSON_C_TO_STRING_PLAIN));
	json_object_put(sel);
	return s;
}

static void check_same_graph(struct json_object *a, struct json_object *b)
{
	/* Not the memory: it decays with the clock between the two. */
	static const char *const edge_keys[] = {
		"caller",  "callee", "calls", "callee_failures", "both_failed",
		"retries", "ratio",  "class", "unclaimed",	 NULL
	};
	char *x = mine_only(j_get(a, "nodes"), "service", NULL);
	char *y = mine_only(j_get(b, "nodes"), "service", NULL);

	ASSERT_STREQ(x, y, "same nodes from /graph.json and claimctl graph");
	free(x);
	free(y);
	x = mine_only(j_get(a, "edges"), "caller", edge_keys);
	y = mine_only(j_get(b, "edges"), "caller", edge_keys);
	ASSERT_STREQ(x, y, "same edges");
	printf("my edges: %s\n", x);
	free(x);
	free(y);
}

static void check_http_errors(int port)
{
	char url[96], out[256];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/nope", port);
	{
		const char *argv[] = { "curl", "-s",	       "-o", "/dev/null",
				       "-w",   "%{http_code}", url,  NULL };

		proc_run(argv, out, sizeof(out), 10000);
		ASSERT_STREQ(out, "404", "unknown path");
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	{
		const char *argv[] = { "curl",	       "-s", "-o",   "/dev/null", "-w",
				       "%{http_code}", "-X", "POST", url,	  NULL };

		proc_run(argv, out, sizeof(out), 10000);
		ASSERT_STREQ(out, "405", "POST refused");
	}
}

/* The storm report of the saved graph is the live one, for root wA. */
static void check_storm_file(struct claimd_h *h)
{
	static char out[1 << 20];
	char file[H_PATH], exe[H_PATH];
	const char *live[] = { "storm", "--retries", "1", "--slack", "4", NULL };
	struct json_object *a = NULL, *b = NULL,
			   *g = claimctl_json(h, (const char *const[]){ "graph", NULL });
	const char *argv[] = { exe, "storm",   "--file", file,	   "--retries",
			       "1", "--slack", "4",	 "--json", NULL };
	size_t i;

	snprintf(file, sizeof(file), "%s/graph.json", h->dir);
	snprintf(exe, sizeof(exe), "%s/claimctl", test__build_dir());
	if (!ASSERT_OK_PTR(g, "claimctl graph --json") ||
	    !ASSERT_OK(json_object_to_file(file, g), "save"))
		goto out;
	a = claimctl_json(h, live);
	if (!ASSERT_EQ(proc_run(argv, out, sizeof(out), 10000), 0, "storm --file"))
		goto out;
	b = json_tokener_parse(out);
	for (i = 0; i < json_object_array_length(j_get(b, "roots")); i++) {
		struct json_object *r = json_object_array_get_idx(j_get(b, "roots"), i), *l = NULL;
		size_t k;

		if (strcmp(j_str(r, "root"), "wA"))
			continue;
		for (k = 0; k < json_object_array_length(j_get(a, "roots")); k++)
			if (!strcmp(j_str(json_object_array_get_idx(j_get(a, "roots"), k), "root"),
				    "wA"))
				l = json_object_array_get_idx(j_get(a, "roots"), k);
		ASSERT_OK_PTR(l, "wA is a root live too");
		ASSERT_STREQ(json_object_to_json_string(r), json_object_to_json_string(l),
			     "same report from the file");
		ASSERT_STREQ(j_str(r, "decision"), "degraded", "(1+1)^2 = 4 <= 4");
		ASSERT_EQ(j_int(r, "max_hops"), 2, "wA > wB > wC");
		goto out;
	}
	ASSERT_OK_PTR(NULL, "root wA in the report of the file");
out:
	json_object_put(a);
	json_object_put(b);
	json_object_put(g);
}

void test_webmap(void)
{
	char port_s[32], url[96], profile[H_PATH], shot[H_PATH], arg[H_PATH + 16], path[32];
	const char *extra[] = { "--metrics", port_s, NULL };
	struct svc a = { 0 }, b = { 0 }, c = { 0 }, x = { 0 };
	struct json_object *graph = NULL, *http = NULL, *e;
	struct claimd_h h = { 0 };
	struct trace_cap tc = { 0 };
	char *dom = NULL;
	int port, id;

	if (!test__need_root())
		return;
	if (access(CHROMIUM, X_OK)) {
		ASSERT_OK(-1, CHROMIUM " (Debian package chromium) is installed");
		return;
	}
	port = sock_free_port();
	snprintf(port_s, sizeof(port_s), "127.0.0.1:%d", port);
	if (!ASSERT_OK(claimd_start(&h, extra), "claimd start") ||
	    !ASSERT_OK(trace_start(&tc, &h), "trace"))
		goto out;
	if (svc_start(&c, &(struct svc_spec){ .name = "wC", .fail_mod = 2 }, h.dir) ||
	    svc_start(&b, &(struct svc_spec){ .name = "wB", .downstream = c.port }, h.dir) ||
	    svc_start(&a, &(struct svc_spec){ .name = "wA", .downstream = b.port }, h.dir) ||
	    svc_start(&x,
		      &(struct svc_spec){ .name = "wX",
					  .downstream = c.port,
					  .propagate = 0,
					  .set_propagate = true },
		      h.dir))
		goto out;
	for (id = 0; id < 40; id++) {
		snprintf(path, sizeof(path), "/r/%d", id);
		http_get(a.port, path);
		http_get(x.port, path);
	}
	e = claimd_wait_edge(&h, "wA", "wB", has_class, "fail-close", 10000);
	ASSERT_OK_PTR(e, "wA -> wB fail-close");
	json_object_put(e);
	e = claimd_wait_edge(&h, "wX", "wC", has_class, "fail-open", 10000);
	ASSERT_OK_PTR(e, "wX -> wC fail-open");
	json_object_put(e);
	chain_verdicts(&tc, &a, &b, &c);
	claimd_ticks_wait(&h, 2); /* the next snapshot for the HTTP thread */

	graph = claimctl_json(&h, (const char *const[]){ "graph", NULL });
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/graph.json", port);
	http = curl_json(url);
	if (!ASSERT_OK_PTR(graph, "claimctl graph --json") || !ASSERT_OK_PTR(http, "/graph.json"))
		goto out;
	check_same_graph(http, graph);
	{
		static char dot[1 << 16];
		const char *args[] = { "graph", "--format", "dot", NULL };

		ASSERT_EQ(claimctl_run(&h, args, dot, sizeof(dot)), 0, "graph --format dot");
		ASSERT_OK_PTR(strstr(dot, "\"wA\" -> \"wB\" [color=\"#d62728\""),
			      "dot: fail-close");
		ASSERT_OK_PTR(strstr(dot, "\"wX\" -> \"wC\" [color=\"#2ca02c\""), "dot: fail-open");
	}
	check_http_errors(port);

	dom = malloc(DOM_MAX);
	snprintf(profile, sizeof(profile), "%s/chromium", h.dir);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/map", port);
	if (!ASSERT_OK_PTR(dom, "memory") ||
	    !ASSERT_EQ(run_chromium(url, profile, "--dump-dom", dom, DOM_MAX), 0, "chromium"))
		goto out;
	/* The graph may have moved on since: compare with the newest. */
	json_object_put(graph);
	graph = claimctl_json(&h, (const char *const[]){ "graph", NULL });
	check_dom(dom, graph);

	snprintf(shot, sizeof(shot), "%s/webmap.png", test__build_dir());
	snprintf(arg, sizeof(arg), "--screenshot=%s", shot);
	unlink(shot);
	ASSERT_EQ(run_chromium(url, profile, arg, dom, DOM_MAX), 0, "chromium screenshot");
	if (ASSERT_GT(read_file(shot, dom, 16), 7, "build/webmap.png"))
		ASSERT_OK(memcmp(dom, "\x89PNG", 4), "a PNG");
	printf("service map screenshot: %s\n", shot);

	check_storm_file(&h);
out:
	if (test__failed_now())
		claimd_print_log(&h);
	free(dom);
	json_object_put(graph);
	json_object_put(http);
	svc_stop(&x);
	svc_stop(&a);
	svc_stop(&b);
	svc_stop(&c);
	trace_stop(&tc);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}
