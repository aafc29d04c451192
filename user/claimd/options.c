// SPDX-License-Identifier: GPL-2.0
/*
 * claimd's options, one row each (options.h): argp's option list is made
 * from the rows, and so is the message of a value out of bounds.
 */
#include <argp.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argnum.h"
#include "expose/metrics_http.h"
#include "options.h"
#include "outcome.h"
#include "probes/go/grpc_codes.h"

#define STR_(x)		      #x
#define STR_OF(x)	      STR_(x)
#define OBSERVER_MAX_FILTER_S STR_OF(OBSERVER_MAX_FILTER)
#define FLEET_INTERVAL_S      15   /* how often the fleet's classes are read (a scrape interval) */
#define FLEET_TIMEOUT_MS      2000 /* each query to Prometheus, connecting included */

const char *argp_program_version = "claimd 0.1";
static const char doc[] =
	"claimd -- error ownership for every request on this host.\n\n"
	"Follows every inbound HTTP/1.x request, the outbound calls made while serving it and "
	"how each ended, with no change to the services. Runs in the foreground; claimctl "
	"talks to it.\v"
	"Exit status: 0 after SIGINT or SIGTERM; 1 when it failed to start or run; 64 on bad "
	"usage; 3 when this user or kernel cannot run it (not root, no BTF, bpffs, tracefs, or "
	"a BPF feature it needs; lockdown forbidding kernel reads); 4 when another claimd "
	"holds the pin directory or the control socket. See SECURITY.md for what it reads and "
	"publishes.";

enum {
	OPT_PIN_DIR = 0x100,
	OPT_CONTROL,
	OPT_CONTROL_GROUP,
	OPT_CGROUP,
	OPT_NETNS,
	OPT_CONNS,
	OPT_THREADS,
	OPT_NO_SEED,
	OPT_NO_TLS,
	OPT_NO_GO,
	OPT_NO_NGINX,
	OPT_NO_NODE,
	OPT_GRPC_FAIL_CODES,
	OPT_STATE_DIR,
	OPT_WINDOW,
	OPT_HALF_LIFE,
	OPT_PERSIST,
	OPT_MIN_FAILURES,
	OPT_FAIL_STATUS,
	OPT_NO_MEMORY,
	OPT_NAMES,
	OPT_METRICS,
	OPT_RINGBUF,
	OPT_CLASSES,
	OPT_EDGES,
	OPT_SAMPLE,
	OPT_FLEET,
	OPT_FLEET_INTERVAL,
	OPT_FLEET_TIMEOUT,
	OPT_PROBE_SOCKET,
	OPT_DEPENDENCY_SOCKET,
};

/* What a row does with its argument. */
enum kind {
	SET_TRUE,  /* bool = true */
	SET_FALSE, /* bool = false */
	COUNT,	   /* int++ */
	STRING,	   /* const char * = the argument */
	U32,	   /* a 4-byte unsigned = a number in [min, max] */
	LONG,	   /* long = a number in [min, max] */
	POW2,	   /* a 4-byte unsigned = a power of two in [min, max], k or m suffix allowed */
	DAYS,	   /* double seconds = a number of days in [min, max] */
	CALL,	   /* fn(o, arg, the number in [min, max] when max > min) */
};

/* Where a row's help names its bounds: they are written in from the row. */
#define RANGE "@RANGE@"

struct row;
typedef const char *(*opt_fn)(struct options *o, const char *arg, long v, const struct row *r);

struct row {
	const char *name;
	int key;
	const char *arg;
	const char *doc;
	int group;
	enum kind kind;
	size_t off; /* where the value goes in struct options */
	long min, max;
	const char *unit; /* after the bounds in the message */
	opt_fn fn;
};

/* The destination of a row: a field of struct options, of the size its kind writes. */
#define TO(field, size)                   \
	offsetof(struct options, field) + \
		0 * sizeof(char[sizeof(((struct options *)0)->field) == (size) ? 1 : -1])
#define FLAG(field)    .off = TO(field, sizeof(bool))
#define STR(field)     .off = TO(field, sizeof(char *))
#define NUM32(field)   .off = TO(field, 4)
#define NUMLONG(field) .off = TO(field, sizeof(long))

/* --pid and --port: one more in the observer's filter. */
static const char *add_filter(struct options *o, const char *arg, long v, const struct row *r)
{
	bool pid = r->key == 'p';
	int *n = pid ? &o->obs.n_pids : &o->obs.n_ports;

	(void)arg;
	if (*n >= OBSERVER_MAX_FILTER)
		return pid ? "more than " OBSERVER_MAX_FILTER_S " processes"
			   : "more than " OBSERVER_MAX_FILTER_S " ports";
	if (pid)
		o->obs.pids[(*n)++] = v;
	else
		o->obs.ports[(*n)++] = v;
	return NULL;
}

static const char *set_netns(struct options *o, const char *arg, long v, const struct row *r)
{
	static char why[300];

	(void)v, (void)r;
	if (observer__netns_inode(arg, &o->obs.netns_ino)) {
		snprintf(why, sizeof(why), "%s is not a network namespace", arg);
		return why;
	}
	o->obs.netns = arg;
	return NULL;
}

static const char *set_group(struct options *o, const char *arg, long v, const struct row *r)
{
	(void)arg, (void)r;
	o->control.group = v;
	o->control.mode = 0660;
	return NULL;
}

static const char *set_grpc_codes(struct options *o, const char *arg, long v, const struct row *r)
{
	static char err[128];
	uint32_t mask;

	(void)v, (void)r;
	if (grpc_codes__parse(arg, &mask, err, sizeof(err)))
		return err;
	o->obs.grpc_fail_codes = mask;
	o->obs.grpc_fail_codes_set = true;
	return NULL;
}

static const char *set_metrics(struct options *o, const char *arg, long v, const struct row *r)
{
	static char err[256];

	(void)v, (void)r;
	if (strcmp(arg, "none")) {
		struct sockaddr_storage ss;
		socklen_t sl;

		/* A bad address is a usage error, said before anything is loaded. */
		if (metrics_http__parse_addr(arg, &ss, &sl, err, sizeof(err)))
			return err;
	}
	o->metrics = strcmp(arg, "none") ? arg : NULL;
	o->metrics_given = true;
	return NULL;
}

/* Is arg among the n names at list? */
static bool socket_listed(const char *const *list, int n, const char *arg)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], arg))
			return true;
	return false;
}

/*
 * arg onto the list of *n socket files (at most max), where the other
 * list must not hold it (taken: what to say then); or why not.
 */
static const char *add_socket(const char *arg, const char **list, int *n, int max,
			      const char *const *other, int n_other, const char *taken)
{
	if (arg[0] != '/' && arg[0] != '@')
		return "wants a socket file's path, or an abstract name after '@'";
	if (strlen(arg) > 107)
		return "longer than a socket file's name can be (107 bytes)";
	if (socket_listed(other, n_other, arg))
		return taken;
	if (*n >= max)
		return "too many";
	list[(*n)++] = arg;
	return NULL;
}

static const char *add_probe_socket(struct options *o, const char *arg, long v, const struct row *r)
{
	(void)v, (void)r;
	return add_socket(arg, o->probe_sockets, &o->n_probe_sockets, UNIX_PROBES_MAX,
			  o->dependency_sockets, o->n_dependency_sockets,
			  "is given as a dependency's too (--dependency-socket)");
}

static const char *add_dependency_socket(struct options *o, const char *arg, long v,
					 const struct row *r)
{
	(void)v, (void)r;
	return add_socket(arg, o->dependency_sockets, &o->n_dependency_sockets,
			  UNIX_DEPENDENCIES_MAX, o->probe_sockets, o->n_probe_sockets,
			  "is a probe's (nscd's, or given with --probe-socket)");
}

static const char *set_fleet(struct options *o, const char *arg, long v, const struct row *r)
{
	(void)v, (void)r;
	if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
		return "wants an http:// or https:// URL";
	o->fleet_url = arg;
	return NULL;
}

static const struct row rows[] = {
	{ "pid", 'p', "PID", "Follow only this process (repeatable)", 1, CALL, .min = 1,
	  .max = UINT32_MAX, .fn = add_filter },
	{ "port", 'P', "PORT",
	  "Follow only connections to or from this TCP service port, and every call of a "
	  "process that serves it (repeatable)",
	  1, CALL, .min = 1, .max = 65535, .fn = add_filter },
	{ "cgroup", OPT_CGROUP, "DIR", "Follow only processes under this cgroup v2 directory", 1,
	  STRING, STR(obs.cgroup) },
	{ "netns", OPT_NETNS, "PATH",
	  "Follow only processes in this network namespace (/proc/PID/ns/net, "
	  "/run/netns/NAME): one claimd per host of a fleet made of namespaces",
	  1, CALL, .fn = set_netns },
	{ "pin-dir", OPT_PIN_DIR, "DIR",
	  "claimd's own bpffs directory (default " DEFAULT_PIN_DIR ")", 2, STRING,
	  STR(obs.pin_dir) },
	{ "control", OPT_CONTROL, "PATH",
	  "Control socket for claimctl (default " CTL_DEFAULT_SOCKET ")", 2, STRING,
	  STR(control.path) },
	{ "control-group", OPT_CONTROL_GROUP, "GID",
	  "Let this group use the control socket too (mode 0660)", 2, CALL, .min = 0,
	  .max = UINT32_MAX - 1, .fn = set_group },
	{ "metrics", OPT_METRICS, "ADDR",
	  "Serve /metrics (Prometheus), /graph.json and the service map at /map on HOST:PORT "
	  "(default " DEFAULT_METRICS "; '[::]:PORT' or '0.0.0.0:PORT' for every interface; "
	  "'none' to serve nothing)",
	  2, CALL, .fn = set_metrics },
	{ "conns", OPT_CONNS, "N", "Connections followed at once (default 32768)", 3, U32,
	  NUM32(obs.conns_max), 64, 1l << 24 },
	{ "threads", OPT_THREADS, "N",
	  "Threads serving requests at once (default 8192): half in slots their ids name, the rest "
	  "in a table",
	  3, U32, NUM32(obs.threads_max), 64, 1l << 20 },
	{ "ringbuf-size", OPT_RINGBUF, "BYTES",
	  "Ring buffer for records from the kernel: a power of two, " RANGE ", k or m "
	  "suffix allowed (default 8m)",
	  3, POW2, NUM32(obs.ringbuf_size), 4096, 1l << 30 },
	{ "classes", OPT_CLASSES, "N",
	  "Edge classes kept in the kernel for verdicts, " RANGE " (default 16384)", 3, U32,
	  NUM32(obs.classes_max), 16, 1l << 20 },
	{ "edges", OPT_EDGES, "N",
	  "Edge counters kept in the kernel, " RANGE " (default 16384); beyond them, "
	  "requests come to claimd as records and are counted there",
	  3, U32, NUM32(obs.edges_max), 16, 1l << 20 },
	{ "sample", OPT_SAMPLE, "N",
	  "Send one request's record in N to claimd even when nobody traces (default 0: "
	  "records only while tracing; counts never need them)",
	  3, U32, NUM32(obs.sample_every), 0, 1l << 30 },
	{ "no-seed", OPT_NO_SEED, NULL,
	  "Do not look for sockets that existed before claimd started (with --pid or "
	  "--cgroup, connections to their listeners then go unseen too)",
	  3, SET_TRUE, FLAG(no_seed) },
	{ "no-tls", OPT_NO_TLS, NULL, "Do not probe OpenSSL (TLS traffic stays unseen)", 3,
	  SET_TRUE, FLAG(no_tls) },
	{ "grpc-fail-codes", OPT_GRPC_FAIL_CODES, "LIST",
	  "gRPC codes that are failures, by name or number (default UNKNOWN,DEADLINE_EXCEEDED,"
	  "RESOURCE_EXHAUSTED,INTERNAL,UNAVAILABLE,DATA_LOSS)",
	  3, CALL, .fn = set_grpc_codes },
	{ "no-go", OPT_NO_GO, NULL,
	  "Do not probe Go programs (their HTTP is followed through syscalls: multiplexed)", 3,
	  SET_TRUE, FLAG(no_go) },
	{ "no-nginx", OPT_NO_NGINX, NULL,
	  "Do not probe nginx (its calls are tied only by what they carry: ids, relays)", 3,
	  SET_TRUE, FLAG(no_nginx) },
	{ "no-node", OPT_NO_NODE, NULL,
	  "Do not probe Node.js (its calls are tied only by what they carry: ids, relays)", 3,
	  SET_TRUE, FLAG(no_node) },
	{ "state-dir", OPT_STATE_DIR, "DIR",
	  "Where the edge memory is kept (default " DEFAULT_STATE_DIR ")", 5, STRING,
	  STR(state_dir) },
	{ "window", OPT_WINDOW, "SECONDS", "Recent window of edge ratios (default 300)", 5, U32,
	  NUM32(edges.window_s), EDGES_WINDOW_BUCKETS, 86400, " seconds" },
	{ "memory-half-life", OPT_HALF_LIFE, "DAYS",
	  "How fast the long-term memory forgets (default 14)", 5, DAYS,
	  .off = TO(edges.memory_half_life_s, sizeof(double)), 1, 3650, " days" },
	{ "persist-interval", OPT_PERSIST, "SECONDS",
	  "How often the memory is written to disk (default 60)", 5, U32, NUM32(persist_s), 1,
	  86400, " seconds" },
	{ "min-failures", OPT_MIN_FAILURES, "N",
	  "Callee failures needed before an edge gets a class (default 20)", 5, U32,
	  NUM32(edges.min_failures), 1, 1l << 30 },
	{ "fail-status", OPT_FAIL_STATUS, "CODE",
	  "Statuses from this one up are failures (default 500)", 5, U32, NUM32(edges.fail_status),
	  100, 599 },
	{ "no-memory", OPT_NO_MEMORY, NULL,
	  "Classify edges from the recent window only; do not load the memory", 5, SET_FALSE,
	  FLAG(edges.use_memory) },
	{ "names", OPT_NAMES, "FILE", "Names for callees off this host: lines of 'ip:port name'", 5,
	  STRING, STR(names_file) },
	{ "probe-socket", OPT_PROBE_SOCKET, "PATH",
	  "A socket file processes try whether a server is there or not, as glibc tries nscd's "
	  "(listed already): a failed connect to it is no call, where one to another file no "
	  "server was seen on makes its request unknown (repeatable)",
	  5, CALL, .fn = add_probe_socket },
	{ "dependency-socket", OPT_DEPENDENCY_SOCKET, "PATH",
	  "A socket file a dependency serves, whether claimd saw it served or not (a cache "
	  "stopped before claimd started takes its file away): a failed connect to it is a "
	  "failed call (repeatable)",
	  5, CALL, .fn = add_dependency_socket },
	{ "fleet-classes", OPT_FLEET, "URL",
	  "Read the fleet's edge classes from this Prometheus (http://HOST:9090, with the "
	  "recording rules of claimd.rules.yml): an edge this host cannot classify takes the "
	  "fleet's class",
	  6, CALL, .fn = set_fleet },
	{ "fleet-interval", OPT_FLEET_INTERVAL, "SECONDS",
	  "How often the fleet's classes are read (default 15)", 6, U32, NUM32(fleet_interval_s), 1,
	  86400, " seconds" },
	{ "fleet-timeout", OPT_FLEET_TIMEOUT, "MS",
	  "How long one query to Prometheus may take (default 2000); slower is unreachable", 6,
	  LONG, NUMLONG(fleet_timeout_ms), 10, 600000, " ms" },
	{ "verbose", 'v', NULL, "More messages (repeat for debug)", 4, COUNT,
	  .off = TO(verbose, sizeof(int)) },
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

/* A row's help with its bounds where it says RANGE, as argp shows it. */
static const char *help_of(const struct row *r, char *buf, size_t len)
{
	const char *at = strstr(r->doc, RANGE);

	if (!at)
		return r->doc;
	snprintf(buf, len, "%.*s%ld to %ld%s", (int)(at - r->doc), r->doc, r->min, r->max,
		 at + strlen(RANGE));
	return buf;
}

/* "4096", "64k", "8m": a power of two in [min, max]. */
static int parse_pow2_size(const char *arg, unsigned long min, unsigned long max,
			   unsigned long *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *arg == '-')
		return -1;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v < min || v > max || (v & (v - 1)))
		return -1;
	*out = v;
	return 0;
}

/* The row's argument as a number in its bounds: 0, or -1 with the message said. */
static int number(const struct row *r, const char *arg, long *v, struct argp_state *state)
{
	unsigned long size;

	if (r->kind == POW2) {
		if (!parse_pow2_size(arg, r->min, r->max, &size)) {
			*v = size;
			return 0;
		}
		argp_error(state, "--%s must be a power of two from %ld to %ld (%ldk to %ldm)",
			   r->name, r->min, r->max, r->min >> 10, r->max >> 20);
		return -1;
	}
	if (!arg_long(arg, r->min, r->max, v))
		return 0;
	argp_error(state, "--%s must be %ld to %ld%s", r->name, r->min, r->max,
		   r->unit ? r->unit : "");
	return -1;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct options *o = state->input;
	const struct row *r = NULL;
	const char *why;
	char *to;
	size_t i;
	long v = 0;

	for (i = 0; i < N_ROWS && !r; i++)
		if (rows[i].key == key)
			r = &rows[i];
	if (!r) {
		if (key != ARGP_KEY_ARG)
			return ARGP_ERR_UNKNOWN;
		argp_error(state, "unexpected argument: %s", arg);
		return 0;
	}
	to = (char *)o + r->off;
	if (r->max > r->min && number(r, arg, &v, state))
		return 0;
	switch (r->kind) {
	case SET_TRUE:
	case SET_FALSE:
		*(bool *)to = r->kind == SET_TRUE;
		break;
	case COUNT:
		(*(int *)to)++;
		break;
	case STRING:
		*(const char **)to = arg;
		break;
	case U32:
	case POW2:
		*(unsigned int *)to = v;
		break;
	case LONG:
		*(long *)to = v;
		break;
	case DAYS:
		*(double *)to = v * 86400.0;
		break;
	case CALL:
		why = r->fn(o, arg, v, r);
		if (why)
			argp_error(state, "--%s: %s", r->name, why);
		break;
	}
	return 0;
}

int options__parse(int argc, char **argv, struct options *o)
{
	static struct argp_option list[N_ROWS + 1];
	static char help[N_ROWS][512];
	static const struct argp argp = { .options = list, .parser = parse_opt, .doc = doc };
	size_t i;

	*o = (struct options){
		.obs = { .pin_dir = DEFAULT_PIN_DIR },
		.edges = { .window_s = 300,
			   .memory_half_life_s = 14 * 86400.0,
			   .min_failures = 20,
			   .fail_status = OUTCOME_FAIL_STATUS_DEFAULT,
			   .use_memory = true },
		.state_dir = DEFAULT_STATE_DIR,
		.persist_s = 60,
		.fleet_interval_s = FLEET_INTERVAL_S,
		.fleet_timeout_ms = FLEET_TIMEOUT_MS,
		.control = { .path = CTL_DEFAULT_SOCKET, .mode = 0600, .group = (gid_t)-1 },
		.metrics = DEFAULT_METRICS,
		.probe_sockets = { DEFAULT_PROBE_SOCKETS },
		/* Counted from the list itself: no count to keep in step with it. */
		.n_probe_sockets =
			sizeof((const char *[]){ DEFAULT_PROBE_SOCKETS }) / sizeof(char *),
	};
	for (i = 0; i < N_ROWS; i++)
		list[i] = (struct argp_option){ .name = rows[i].name,
						.key = rows[i].key,
						.arg = rows[i].arg,
						.doc = help_of(&rows[i], help[i], sizeof(help[i])),
						.group = rows[i].group };
	if (argp_parse(&argp, argc, argv, 0, NULL, o))
		return -1;
	/* One threshold: the kernel's outcome rules and the edges' apply the same one. */
	o->obs.fail_status = o->edges.fail_status;
	return 0;
}
