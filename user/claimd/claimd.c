// SPDX-License-Identifier: GPL-2.0
/*
 * claimd: loads the observer, seeds the sockets that already exist, and
 * turns its records into what operators and claimctl ask for. One thread,
 * one epoll set: the ring buffer, the control socket and its clients. (The
 * HTTP server of /metrics and the map has a thread of its own, which reads
 * only the snapshot published here once a second: metrics_http.h.)
 * Runs in the foreground until SIGINT or SIGTERM, then detaches and exits 0.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "argnum.h"
#include "model/classes.h"
#include "expose/control.h"
#include "kernel/counters.h"
#include "model/edges.h"
#include "evloop.h"
#include "fleet/fleet.h"
#include "graph.h"
#include "host/handover.h"
#include "kernel/kcounts.h"
#include "log.h"
#include "model/memory.h"
#include "expose/metrics.h"
#include "expose/metrics_http.h"
#include "kernel/metrics_maps.h"
#include "model/names.h"
#include "kernel/observer_api.h"
#include "outcome.h"
#include "kernel/record.h"
#include "model/roots.h"
#include "kernel/seed.h"
#include "expose/snapshot.h"
#include "host/sysprobe.h"
#include "probes/go/grpc_codes.h"
#include "probes/probes.h"
#include "expose/trace_fmt.h"
#include "verdict_names.h"

#define DEFAULT_PIN_DIR	  "/sys/fs/bpf/claimd"
#define DEFAULT_STATE_DIR "/var/lib/claimd"
#define MAX_EXITED	  512
#define UPROBE_RESCAN_S	  5   /* seconds between looks for new files to probe */
#define RB_DRAIN_MS	  20  /* while records flow, they wait at most this long in the ring */
#define TICK_S		  1.0 /* housekeeping: counts read, classes synced, state kept */
#define DEFAULT_METRICS	  "127.0.0.1:9464"
#define MAP_COUNT_S	  10   /* how often the BPF maps' entries are counted */
#define N_FILL		  3    /* maps counted: conns, threads, edge_class */
#define PUBLISH_IDLE_S	  60   /* a snapshot older than this is rendered again when asked for */
#define FLEET_INTERVAL_S  15   /* how often the fleet's classes are read (a scrape interval) */
#define FLEET_TIMEOUT_MS  2000 /* each query to Prometheus, connecting included */

/* Exit codes, besides 0 (stopped by a signal) and 64 (bad usage: argp, EX_USAGE). */
#define EXIT_FAILURE_RT 1 /* failed while starting or running: see the message */
#define EXIT_HOST	3 /* this user or kernel cannot run claimd: see the message */
#define EXIT_BUSY	4 /* another claimd holds the pin directory or control socket */

static volatile sig_atomic_t exiting;

struct options {
	struct observer_config obs;
	struct edges_config edges;
	const char *state_dir;
	const char *names_file;
	unsigned int persist_s;
	struct control_opts control;
	bool no_seed;
	bool no_tls;
	bool no_go;
	int verbose;
	const char *metrics; /* HOST:PORT, or NULL for none */
	bool metrics_given;
	const char *fleet_url; /* Prometheus, for the fleet's classes; NULL: none */
	unsigned int fleet_interval_s;
	long fleet_timeout_ms;
};

struct claimd {
	struct options *opt;
	struct observer *obs;
	struct names *names;
	struct edges *edges;
	struct roots *roots;
	struct classes *classes;
	struct kcounts *kcounts;
	struct probes *probes;
	struct control *ctl;
	struct fleet *fleet;	/* --fleet-classes, or NULL */
	uint64_t fleet_changes; /* the fleet's classes came or went */
	struct ring_buffer *rb;
	struct ep_src rb_src;
	int epfd;
	int lock_fd;
	struct timespec started;
	struct seed_counts seeded;
	struct memory_load memory;
	double last_persist;
	double last_uprobe_scan;
	time_t persisted_wall; /* when the memory last reached the disk */
	int persist_errors;
	/* records from the kernel, by type, and the malformed ones */
	unsigned long n_ingress, n_root, n_listen, n_exit, n_invalid;
	__u32 exited[MAX_EXITED];
	int n_exited;
	struct metrics_http *http;
	struct ep_src http_src;
	struct snapshot snap;	      /* what the metrics are rendered from, arrays reused */
	struct map_fill fill[N_FILL]; /* connections, threads, edge classes */
	struct sysprobe probe;
	double last_map_count;
	bool classes_full;	 /* the edge class map refused some, last time */
	bool records_wanted;	 /* the programs send every request's record */
	uint64_t synced_changes; /* edges__changes + classes__changes at the last housekeeping */
	uint64_t synced_epoch;	 /* the window's bucket then */
	uint64_t stats_sum;	 /* the kernel's counters, summed, at the last read */
	uint64_t status_changes; /* the kernel's counters or the maps' fill changed */
	uint64_t published;	 /* status_changes at the last publish */
	double last_publish;
	int count_errors;
};

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
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Follow only this process (repeatable)", 1 },
	{ "port", 'P', "PORT", 0,
	  "Follow only connections to or from this service port (repeatable)", 1 },
	{ "cgroup", OPT_CGROUP, "DIR", 0, "Follow only processes under this cgroup v2 directory",
	  1 },
	{ "netns", OPT_NETNS, "PATH", 0,
	  "Follow only processes in this network namespace (/proc/PID/ns/net, "
	  "/run/netns/NAME): one claimd per host of a fleet made of namespaces",
	  1 },
	{ "pin-dir", OPT_PIN_DIR, "DIR", 0,
	  "claimd's own bpffs directory (default " DEFAULT_PIN_DIR ")", 2 },
	{ "control", OPT_CONTROL, "PATH", 0,
	  "Control socket for claimctl (default " CTL_DEFAULT_SOCKET ")", 2 },
	{ "control-group", OPT_CONTROL_GROUP, "GID", 0,
	  "Let this group use the control socket too (mode 0660)", 2 },
	{ "metrics", OPT_METRICS, "ADDR", 0,
	  "Serve /metrics (Prometheus), /graph.json and the service map at /map on HOST:PORT "
	  "(default " DEFAULT_METRICS "; '[::]:PORT' or '0.0.0.0:PORT' for every interface; "
	  "'none' to serve nothing)",
	  2 },
	{ "conns", OPT_CONNS, "N", 0, "Connections followed at once (default 32768)", 3 },
	{ "threads", OPT_THREADS, "N", 0,
	  "Threads serving requests at once (default 8192): half in slots their ids name, the rest "
	  "in a table",
	  3 },
	{ "ringbuf-size", OPT_RINGBUF, "BYTES", 0,
	  "Ring buffer for records from the kernel: a power of two, 4096 to 1073741824, k or m "
	  "suffix allowed (default 8m)",
	  3 },
	{ "classes", OPT_CLASSES, "N", 0,
	  "Edge classes kept in the kernel for verdicts, 16 to 1048576 (default 16384)", 3 },
	{ "edges", OPT_EDGES, "N", 0,
	  "Edge counters kept in the kernel, 16 to 1048576 (default 16384); beyond them, "
	  "requests come to claimd as records and are counted there",
	  3 },
	{ "sample", OPT_SAMPLE, "N", 0,
	  "Send one request's record in N to claimd even when nobody traces (default 0: "
	  "records only while tracing; counts never need them)",
	  3 },
	{ "no-seed", OPT_NO_SEED, NULL, 0,
	  "Do not look for sockets that existed before claimd started (with --pid or "
	  "--cgroup, connections to their listeners then go unseen too)",
	  3 },
	{ "no-tls", OPT_NO_TLS, NULL, 0, "Do not probe OpenSSL (TLS traffic stays unseen)", 3 },
	{ "grpc-fail-codes", OPT_GRPC_FAIL_CODES, "LIST", 0,
	  "gRPC codes that are failures, by name or number (default UNKNOWN,DEADLINE_EXCEEDED,"
	  "RESOURCE_EXHAUSTED,INTERNAL,UNAVAILABLE,DATA_LOSS)",
	  3 },
	{ "no-go", OPT_NO_GO, NULL, 0,
	  "Do not probe Go programs (their HTTP is followed through syscalls: multiplexed)", 3 },
	{ "state-dir", OPT_STATE_DIR, "DIR", 0,
	  "Where the edge memory is kept (default " DEFAULT_STATE_DIR ")", 5 },
	{ "window", OPT_WINDOW, "SECONDS", 0, "Recent window of edge ratios (default 300)", 5 },
	{ "memory-half-life", OPT_HALF_LIFE, "DAYS", 0,
	  "How fast the long-term memory forgets (default 14)", 5 },
	{ "persist-interval", OPT_PERSIST, "SECONDS", 0,
	  "How often the memory is written to disk (default 60)", 5 },
	{ "min-failures", OPT_MIN_FAILURES, "N", 0,
	  "Callee failures needed before an edge gets a class (default 20)", 5 },
	{ "fail-status", OPT_FAIL_STATUS, "CODE", 0,
	  "Statuses from this one up are failures (default 500)", 5 },
	{ "no-memory", OPT_NO_MEMORY, NULL, 0,
	  "Classify edges from the recent window only; do not load the memory", 5 },
	{ "names", OPT_NAMES, "FILE", 0, "Names for callees off this host: lines of 'ip:port name'",
	  5 },
	{ "fleet-classes", OPT_FLEET, "URL", 0,
	  "Read the fleet's edge classes from this Prometheus (http://HOST:9090, with the "
	  "recording rules of claimd.rules.yml): an edge this host cannot classify takes the "
	  "fleet's class",
	  6 },
	{ "fleet-interval", OPT_FLEET_INTERVAL, "SECONDS", 0,
	  "How often the fleet's classes are read (default 15)", 6 },
	{ "fleet-timeout", OPT_FLEET_TIMEOUT, "MS", 0,
	  "How long one query to Prometheus may take (default 2000); slower is unreachable", 6 },
	{ "verbose", 'v', NULL, 0, "More messages (repeat for debug)", 4 },
	{},
};

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

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct options *o = state->input;
	unsigned long size = 0;
	long v = 0;

	switch (key) {
	case 'p':
		if (o->obs.n_pids >= OBSERVER_MAX_FILTER || arg_long(arg, 1, UINT32_MAX, &v))
			argp_error(state, "invalid or too many --pid: %s", arg);
		o->obs.pids[o->obs.n_pids++] = v;
		break;
	case 'P':
		if (o->obs.n_ports >= OBSERVER_MAX_FILTER || arg_long(arg, 1, 65535, &v))
			argp_error(state, "invalid or too many --port: %s", arg);
		o->obs.ports[o->obs.n_ports++] = v;
		break;
	case OPT_CGROUP:
		o->obs.cgroup = arg;
		break;
	case OPT_NETNS:
		if (observer__netns_inode(arg, &o->obs.netns_ino))
			argp_error(state, "--netns %s: not a network namespace", arg);
		o->obs.netns = arg;
		break;
	case OPT_PIN_DIR:
		o->obs.pin_dir = arg;
		break;
	case OPT_CONTROL:
		o->control.path = arg;
		break;
	case OPT_CONTROL_GROUP:
		if (arg_long(arg, 0, UINT32_MAX - 1, &v))
			argp_error(state, "invalid --control-group: %s", arg);
		o->control.group = v;
		o->control.mode = 0660;
		break;
	case OPT_CONNS:
		if (arg_long(arg, 64, 1u << 24, &v))
			argp_error(state, "--conns must be 64 to 16777216");
		o->obs.conns_max = v;
		break;
	case OPT_THREADS:
		if (arg_long(arg, 64, 1u << 20, &v))
			argp_error(state, "--threads must be 64 to 1048576");
		o->obs.threads_max = v;
		break;
	case OPT_RINGBUF:
		if (parse_pow2_size(arg, 4096, 1ul << 30, &size))
			argp_error(state, "--ringbuf-size must be a power of two from 4096 to "
					  "1073741824 (4k to 1024m)");
		o->obs.ringbuf_size = size;
		break;
	case OPT_CLASSES:
		if (arg_long(arg, 16, 1u << 20, &v))
			argp_error(state, "--classes must be 16 to 1048576");
		o->obs.classes_max = v;
		break;
	case OPT_EDGES:
		if (arg_long(arg, 16, 1u << 20, &v))
			argp_error(state, "--edges must be 16 to 1048576");
		o->obs.edges_max = v;
		break;
	case OPT_SAMPLE:
		if (arg_long(arg, 0, 1u << 30, &v))
			argp_error(state, "--sample must be 0 to 1073741824");
		o->obs.sample_every = v;
		break;
	case OPT_NO_SEED:
		o->no_seed = true;
		break;
	case OPT_NO_TLS:
		o->no_tls = true;
		break;
	case OPT_NO_GO:
		o->no_go = true;
		break;
	case OPT_GRPC_FAIL_CODES: {
		char err[128];
		uint32_t mask;

		if (grpc_codes__parse(arg, &mask, err, sizeof(err)))
			argp_error(state, "--grpc-fail-codes: %s", err);
		o->obs.grpc_fail_codes = mask;
		o->obs.grpc_fail_codes_set = true;
		break;
	}
	case OPT_STATE_DIR:
		o->state_dir = arg;
		break;
	case OPT_WINDOW:
		if (arg_long(arg, EDGES_WINDOW_BUCKETS, 86400, &v))
			argp_error(state, "--window must be 10 to 86400 seconds");
		o->edges.window_s = v;
		break;
	case OPT_HALF_LIFE:
		if (arg_long(arg, 1, 3650, &v))
			argp_error(state, "--memory-half-life must be 1 to 3650 days");
		o->edges.memory_half_life_s = v * 86400.0;
		break;
	case OPT_PERSIST:
		if (arg_long(arg, 1, 86400, &v))
			argp_error(state, "--persist-interval must be 1 to 86400 seconds");
		o->persist_s = v;
		break;
	case OPT_MIN_FAILURES:
		if (arg_long(arg, 1, 1u << 30, &v))
			argp_error(state, "invalid --min-failures: %s", arg);
		o->edges.min_failures = v;
		break;
	case OPT_FAIL_STATUS:
		if (arg_long(arg, 100, 599, &v))
			argp_error(state, "--fail-status must be 100 to 599");
		o->edges.fail_status = v;
		o->obs.fail_status = v;
		break;
	case OPT_NO_MEMORY:
		o->edges.use_memory = false;
		break;
	case OPT_NAMES:
		o->names_file = arg;
		break;
	case OPT_METRICS:
		if (strcmp(arg, "none")) {
			struct sockaddr_storage ss;
			socklen_t sl;
			char err[256];

			/* A bad address is a usage error, said before anything is loaded. */
			if (metrics_http__parse_addr(arg, &ss, &sl, err, sizeof(err)))
				argp_error(state, "--metrics: %s", err);
		}
		o->metrics = strcmp(arg, "none") ? arg : NULL;
		o->metrics_given = true;
		break;
	case OPT_FLEET:
		if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
			argp_error(state, "--fleet-classes wants an http:// or https:// URL");
		o->fleet_url = arg;
		break;
	case OPT_FLEET_INTERVAL:
		if (arg_long(arg, 1, 86400, &v))
			argp_error(state, "--fleet-interval must be 1 to 86400 seconds");
		o->fleet_interval_s = v;
		break;
	case OPT_FLEET_TIMEOUT:
		if (arg_long(arg, 10, 600000, &v))
			argp_error(state, "--fleet-timeout must be 10 to 600000 ms");
		o->fleet_timeout_ms = v;
		break;
	case 'v':
		o->verbose++;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument: %s", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* One claimd per pin directory: a second one would attach everything twice.
 * One that is still leaving is waited for (handover.h). */
static int lock_pin_dir(struct claimd *d)
{
	int fd = handover__lock(d->opt->obs.pin_dir, HANDOVER_WAIT_MS);

	if (fd < 0)
		return fd;
	d->lock_fd = fd;
	return 0;
}

static void publish(struct claimd *d, struct json_object *o, bool root)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	control__publish(d->ctl, s, strlen(s), root);
	json_object_put(o);
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Where the kernel's counts go. */
static struct kcounts_into counts_into(struct claimd *d)
{
	return (struct kcounts_into){
		.edges = d->edges, .names = d->names, .classes = d->classes, .roots = d->roots
	};
}

/* The kernel's counts since the last read, into edges and services. */
static void count_poll(struct claimd *d)
{
	const struct kcounts_into into = counts_into(d);
	__u64 st[CLAIMD_ST__COUNT], sum = 0;
	int err, i;

	if (observer__stats(d->obs, st))
		return;
	for (i = 0; i < CLAIMD_ST__COUNT; i++)
		sum += st[i];
	if (sum != d->stats_sum) {
		d->stats_sum = sum;
		d->status_changes++;
	}
	err = kcounts__poll(d->kcounts, st[CLAIMD_ST_COUNTED] + st[CLAIMD_ST_ROOT_CALLS], &into,
			    since(&d->started), time(NULL));
	if (err < 0 && !d->count_errors++)
		pr_warn("cannot read the kernel's counters: %s", strerror(-err));
}

/* Processes that exited: their last counts read, then forgotten everywhere. */
static void forget_exited(struct claimd *d)
{
	struct kcounts_into into;
	int i;

	if (!d->n_exited)
		return;
	count_poll(d);
	into = counts_into(d);
	kcounts__forget(d->kcounts, d->exited, d->n_exited, &into, since(&d->started), time(NULL));
	observer__forget_processes(d->obs, d->exited, d->n_exited);
	for (i = 0; i < d->n_exited; i++) {
		classes__forget_process(d->classes, d->exited[i]);
		names__exit(d->names, d->exited[i]);
	}
	d->n_exited = 0;
}

/* A traced failure's cause edge says where its class came from (window, memory, fleet). */
static struct json_object *cause_class(struct claimd *d, struct json_object *o)
{
	struct json_object *cause = NULL, *caller, *callee;
	struct edge_class c;
	struct edge *ed;

	if (!json_object_object_get_ex(o, "cause", &cause) || !cause ||
	    !json_object_object_get_ex(cause, "caller", &caller) ||
	    !json_object_object_get_ex(cause, "callee", &callee))
		return o;
	ed = edges__find(d->edges, json_object_get_string(caller), json_object_get_string(callee));
	if (!ed)
		return o;
	c = edges__effective(d->edges, ed, since(&d->started), time(NULL));
	json_object_object_add(cause, "class", json_object_new_string(verdict__class_name(c.cls)));
	json_object_object_add(cause, "class_source",
			       json_object_new_string(edges__source_name(c.source)));
	return o;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct claimd *d = ctx;
	const char *why;
	int type = record__check(data, size, &why);

	switch (type) {
	case CLAIMD_REC_INGRESS:
		d->n_ingress++;
		edges__add_ingress(d->edges, data, d->names, since(&d->started), time(NULL));
		classes__note_ingress(d->classes, data, d->names);
		if (control__tracing(d->ctl, false))
			publish(d,
				cause_class(d, trace__ingress_json(
						       data, d->names,
						       edges__config(d->edges)->fail_status)),
				false);
		break;
	case CLAIMD_REC_EGRESS:
		d->n_root++;
		roots__add(d->roots, d->edges, d->names, data, since(&d->started));
		if (control__tracing(d->ctl, true))
			publish(d,
				trace__root_egress_json(data, d->names,
							edges__config(d->edges)->fail_status),
				true);
		break;
	case CLAIMD_REC_LISTEN: {
		const struct claimd_listen *l = data;

		d->n_listen++;
		/* What was counted until now goes under the names it had until now. */
		count_poll(d);
		names__listen(d->names, l->tgid, &l->local, l->comm, l->closed);
		/* Before it serves anything: probe its libssl or libclaim context. */
		if (!l->closed && d->probes)
			probes__scan_pid(d->probes, l->tgid);
		break;
	}
	case CLAIMD_REC_EXIT: {
		const struct claimd_exit *e = data;

		d->n_exit++;
		/* Its names and counters go once its last counts are read. */
		if (d->n_exited == MAX_EXITED)
			forget_exited(d);
		d->exited[d->n_exited++] = e->tgid;
		break;
	}
	default:
		if (!d->n_invalid++)
			pr_warn("dropping a malformed record from the kernel: %s", why);
	}
	return 0;
}

static void rb_event(struct ep_src *src, uint32_t events)
{
	struct claimd *d = (struct claimd *)((char *)src - offsetof(struct claimd, rb_src));

	(void)events;
	ring_buffer__consume(d->rb);
}

/* What the host let claimd do (sysprobe.h). */
static struct json_object *host_json(struct claimd *d)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "lockdown", json_object_new_string(d->probe.lockdown));
	json_object_object_add(o, "uprobes", json_object_new_boolean(d->probe.uprobes));
	json_object_object_add(o, "untyped_cast", json_object_new_boolean(d->probe.untyped_cast));
	json_object_object_add(o, "degraded", json_object_new_boolean(d->probe.degraded));
	return o;
}

/*
 * How full the maps are, and what pressure cost. conns and threads are LRU:
 * when full, the least recently used entry goes. Evictions are what was
 * added and is neither there nor removed (closed, forgotten): exact when the
 * table is quiet, counted a few entries late while it changes. edge_class is
 * written by claimd: when full, a class is refused (and tried again).
 */
static void map_fill_update(struct claimd *d)
{
	struct map_fill before[N_FILL];
	__u64 st[CLAIMD_ST__COUNT];
	long long ev;

	memcpy(before, d->fill, sizeof(before));
	if (observer__stats(d->obs, st))
		return;
	map_fill__count(d->fill, N_FILL);
	ev = (long long)(st[CLAIMD_ST_CONNS] + d->seeded.inbound + d->seeded.outbound) -
	     (long long)(st[CLAIMD_ST_CONN_CLOSED] + observer__forgotten(d->obs) +
			 d->fill[0].entries);
	if (!d->fill[0].err && ev > (long long)d->fill[0].evicted)
		d->fill[0].evicted = ev;
	d->fill[0].has_evicted = true;
	ev = (long long)st[CLAIMD_ST_THREAD_CTXS] - (long long)d->fill[1].entries;
	if (!d->fill[1].err && ev > (long long)d->fill[1].evicted)
		d->fill[1].evicted = ev;
	d->fill[1].has_evicted = true;
	/* With the contexts in slots: evictions are the table's only. */
	d->fill[1].entries += st[CLAIMD_ST_THREAD_SLOTS] - st[CLAIMD_ST_THREAD_SLOTS_FREED];
	d->fill[2].refused = classes__refused(d->classes);
	d->fill[2].refused_total = classes__refusals(d->classes);
	d->fill[2].has_refused = true;
	d->last_map_count = since(&d->started);
	if (memcmp(before, d->fill, sizeof(before)))
		d->status_changes++;
}

/* Failed requests with an unknown verdict, by reason: the rules that give unknown. */
static struct json_object *unknown_json(const struct edges *e)
{
	struct json_object *o = json_object_new_object();

	unsigned int rule;

	for (rule = 0; rule < CLAIM_RULE__COUNT; rule++)
		if (verdict__rule_is_unknown(rule))
			json_object_object_add(
				o, verdict__rule_name(rule),
				json_object_new_uint64(edges__unknown_verdicts(e, rule)));
	json_object_object_add(o, "other",
			       json_object_new_uint64(edges__unknown_verdicts(e, CLAIM_RULE_NONE)));
	return o;
}

static struct json_object *status_json(struct claimd *d)
{
	const struct roots_counts *rc = roots__counts(d->roots);
	struct json_object *o = json_object_new_object(), *k = json_object_new_object();
	struct json_object *r = json_object_new_object(), *s = json_object_new_object(), *m;
	__u64 st[CLAIMD_ST__COUNT];
	bool have_st;
	int i;

	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "uptime_s", json_object_new_double(since(&d->started)));
	json_object_object_add(o, "attached", json_object_new_boolean(1));
	have_st = !observer__stats(d->obs, st);
	if (have_st)
		for (i = 0; i < CLAIMD_ST__COUNT; i++)
			json_object_object_add(k, observer__stat_name(i),
					       json_object_new_uint64(st[i]));
	json_object_object_add(o, "kernel", k);
	json_object_object_add(r, "ingress", json_object_new_uint64(d->n_ingress));
	json_object_object_add(r, "egress", json_object_new_uint64(d->n_root));
	json_object_object_add(r, "listen", json_object_new_uint64(d->n_listen));
	json_object_object_add(r, "exit", json_object_new_uint64(d->n_exit));
	json_object_object_add(r, "invalid", json_object_new_uint64(d->n_invalid));
	json_object_object_add(o, "records", r);
	json_object_object_add(o, "unknown_verdicts", unknown_json(d->edges));
	json_object_object_add(o, "root_calls", json_object_new_uint64(rc->edge_calls));
	json_object_object_add(o, "calls_outside_requests",
			       json_object_new_uint64(have_st ? st[CLAIMD_ST_CALLS_OUTSIDE] : 0));
	json_object_object_add(o, "late_calls",
			       json_object_new_uint64(have_st ? st[CLAIMD_ST_LATE_CALLS] : 0));
	json_object_object_add(s, "processes", json_object_new_int(d->seeded.processes));
	json_object_object_add(s, "listeners", json_object_new_int(d->seeded.listeners));
	json_object_object_add(s, "inbound", json_object_new_int(d->seeded.inbound));
	json_object_object_add(s, "outbound", json_object_new_int(d->seeded.outbound));
	json_object_object_add(o, "seeded", s);
	/* How the kernel's counters were read: every one, or the changed ones. */
	m = json_object_new_object();
	json_object_object_add(m, "full_reads",
			       json_object_new_uint64(kcounts__full_reads(d->kcounts)));
	json_object_object_add(m, "changed_reads",
			       json_object_new_uint64(kcounts__dirty_reads(d->kcounts)));
	json_object_object_add(m, "edges", json_object_new_uint64(kcounts__edges(d->kcounts)));
	json_object_object_add(m, "services",
			       json_object_new_uint64(kcounts__services(d->kcounts)));
	json_object_object_add(o, "counter_reads", m);
	json_object_object_add(o, "trace_clients", json_object_new_int(control__tracers(d->ctl)));
	m = json_object_new_object();
	json_object_object_add(m, "used", json_object_new_boolean(d->opt->edges.use_memory));
	json_object_object_add(m, "loaded_edges", json_object_new_int(d->memory.edges));
	json_object_object_add(m, "corrupt_file_moved_to",
			       d->memory.corrupt ? json_object_new_string(d->memory.moved_to)
						 : NULL);
	json_object_object_add(m, "persisted_unix", json_object_new_int64(d->persisted_wall));
	json_object_object_add(m, "persist_errors", json_object_new_int(d->persist_errors));
	json_object_object_add(o, "memory", m);
	json_object_object_add(o, "verdicts",
			       json_object_new_string(observer__verdicts_path(d->obs)));
	probes__status(d->probes, o);
	json_object_object_add(o, "programs", observer__programs_json(d->obs));
	json_object_object_add(o, "trace_dropped",
			       json_object_new_uint64(control__dropped(d->ctl)));
	json_object_object_add(o, "maps", map_fill__json(d->fill, N_FILL));
	json_object_object_add(o, "host", host_json(d));
	json_object_object_add(o, "metrics",
			       d->http ? json_object_new_string(metrics_http__url(d->http)) : NULL);
	json_object_object_add(o, "fleet", d->fleet ? fleet__status_json(d->fleet) : NULL);
	return o;
}

/* The edges, each saying whether its class is in the kernel yet. */
static struct json_object *edges_json(struct claimd *d)
{
	struct json_object *arr = edges__json(d->edges, since(&d->started), time(NULL));
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *a, *b;

		json_object_object_get_ex(o, "caller", &a);
		json_object_object_get_ex(o, "callee", &b);
		json_object_object_add(
			o, "in_kernel",
			json_object_new_boolean(classes__in_kernel(
				d->classes, json_object_get_string(a), json_object_get_string(b))));
	}
	return arr;
}

static struct json_object *graph_json(struct claimd *d)
{
	struct json_object *edges = edges_json(d), *services = edges__services_json(d->edges);
	struct json_object *g = graph__build(edges, services, time(NULL));

	json_object_put(edges);
	json_object_put(services);
	return g;
}

/* The metrics text, from a typed snapshot of the edges and services. */
static void publish_metrics(struct claimd *d)
{
	struct json_object *st = status_json(d);
	struct metrics_model m;
	size_t len = 0;
	char *text = NULL;

	if (!snapshot__build(&d->snap, d->edges, d->names, since(&d->started), time(NULL))) {
		m = snapshot__model(&d->snap);
		text = metrics__render(&m, st, time(NULL), &len);
	}
	metrics_http__publish_metrics(d->http, text, len);
	json_object_put(st);
}

/* The graph JSON the map and /graph.json serve. */
static void publish_graph(struct claimd *d)
{
	struct json_object *g = graph_json(d);
	const char *gs = g ? json_object_to_json_string_ext(g, JSON_C_TO_STRING_PLAIN) : NULL;

	metrics_http__publish_graph(d->http, gs ? strdup(gs) : NULL, gs ? strlen(gs) : 0);
	json_object_put(g);
}

/* A request waits for a fresh snapshot: render what it asks for. */
static void http_wanted(struct ep_src *src, uint32_t events)
{
	struct claimd *d = (struct claimd *)((char *)src - offsetof(struct claimd, http_src));
	bool metrics, graph;

	(void)events;
	metrics_http__wanted(d->http, &metrics, &graph);
	if (!metrics && !graph)
		return;
	ring_buffer__consume(d->rb);
	count_poll(d);
	if (metrics)
		publish_metrics(d);
	if (graph)
		publish_graph(d);
}

static struct json_object *handle_request(void *ctx, const struct ctl_request *req)
{
	struct claimd *d = ctx;

	/* An operator asking gets what the kernel counted until now, named as now. */
	ring_buffer__consume(d->rb);
	count_poll(d);
	switch (req->cmd) {
	case CTL_STATUS:
		/* An operator asking gets counts at most half a second old. */
		if (since(&d->started) - d->last_map_count >= 0.5)
			map_fill_update(d);
		return status_json(d);
	case CTL_EDGES:
		return edges_json(d);
	case CTL_SERVICES:
		return edges__services_json(d->edges);
	case CTL_GRAPH:
		return graph_json(d);
	default:
		return NULL;
	}
}

/* An address given on the command line must work; the default may be taken
 * (by another claimd with its own --pin-dir, say): then claimd goes on
 * without it. */
static int start_metrics(struct claimd *d)
{
	char err[256];

	if (!d->opt->metrics)
		return 0;
	d->http = metrics_http__start(d->opt->metrics, err, sizeof(err));
	if (!d->http && d->opt->metrics_given) {
		pr_err("--metrics: %s", err);
		return -1;
	}
	if (!d->http) {
		pr_warn("no metrics: %s (give --metrics ADDR, or --metrics none)", err);
		return 0;
	}
	d->http_src.fd = metrics_http__wake_fd(d->http);
	d->http_src.on_event = http_wanted;
	if (ep_add(d->epfd, &d->http_src, EPOLLIN)) {
		pr_err("epoll: %s", strerror(errno));
		return -1;
	}
	pr_info("metrics and service map on %s", metrics_http__url(d->http));
	return 0;
}

static void persist(struct claimd *d)
{
	int err;

	if (!d->opt->edges.use_memory)
		return; /* the memory on disk is not ours to overwrite */
	err = memory__save(d->edges, d->opt->state_dir, time(NULL));
	if (err) {
		if (!d->persist_errors++)
			pr_warn("cannot write the memory to %s: %s", d->opt->state_dir,
				strerror(-err));
		return;
	}
	d->persisted_wall = time(NULL);
}

/* Once a second: what does not need doing per record. */
static void housekeeping(struct claimd *d)
{
	double now = since(&d->started);
	uint64_t changes, epoch;
	int err;

	ring_buffer__consume(d->rb); /* names first: listeners, exits */
	count_poll(d);
	forget_exited(d);
	/*
	 * Classes change only when counts or names do, or as the window
	 * slides on (a bucket at a time) and the memory decays: otherwise
	 * there is nothing to derive again.
	 */
	if (d->fleet) {
		unsigned int what = fleet__update(d->fleet);

		if (what & FLEET_NAMES_CHANGED)
			names__remote_changed(d->names);
		if (what)
			d->fleet_changes++;
	}
	changes = edges__changes(d->edges) + classes__changes(d->classes) + d->fleet_changes;
	epoch = (uint64_t)(now * EDGES_WINDOW_BUCKETS / d->opt->edges.window_s);
	if (changes != d->synced_changes || epoch != d->synced_epoch ||
	    classes__refused(d->classes)) {
		err = classes__sync(d->classes, d->edges, now, time(NULL));
		if (err < 0)
			pr_debug("edge classes into the kernel: %s", strerror(-err));
	}
	if (classes__refused(d->classes) && !d->classes_full)
		pr_warn("the edge class map is full (--classes %u): %zu edge classes are not in "
			"the kernel, their verdicts treat them as unknown",
			d->fill[2].max_entries, classes__refused(d->classes));
	d->classes_full = classes__refused(d->classes) > 0;
	/* libssl and libclaim in processes started since: probed from their next call. */
	if (d->probes && now - d->last_uprobe_scan >= UPROBE_RESCAN_S) {
		d->last_uprobe_scan = now;
		probes__scan(d->probes);
	}
	if (now - d->last_persist >= d->opt->persist_s) {
		d->last_persist = now;
		persist(d);
	}
	if (now - d->last_map_count >= MAP_COUNT_S)
		map_fill_update(d);
	/* What the HTTP thread serves is rendered when asked for, if it changed. */
	if (d->http &&
	    (changes != d->synced_changes || epoch != d->synced_epoch ||
	     d->status_changes != d->published || now - d->last_publish >= PUBLISH_IDLE_S)) {
		metrics_http__stale(d->http);
		d->last_publish = now;
		d->published = d->status_changes;
	}
	d->synced_changes = changes;
	d->synced_epoch = epoch;
}

/* Every request's record from the kernel while somebody traces, else none. */
static void want_records(struct claimd *d)
{
	bool want = control__tracing(d->ctl, false);

	if (want != d->records_wanted) {
		observer__want_records(d->obs, want);
		d->records_wanted = want;
	}
}

/*
 * How long the loop may sleep. While records flow (someone traces, or
 * --sample), the programs wake claimd only when they pile up: drain often.
 * Otherwise the ring carries only rare records, and those that must not wait
 * wake claimd themselves (bpf/proc.bpf.h): sleep until the next tick.
 */
static int sleep_ms(const struct claimd *d, double last)
{
	double left = last + TICK_S - since(&d->started);
	int ms = left > 0 ? (int)(left * 1000) + 1 : 0;

	if ((d->records_wanted || d->opt->obs.sample_every) && ms > RB_DRAIN_MS)
		return RB_DRAIN_MS;
	return ms;
}

static int run(struct claimd *d)
{
	struct epoll_event evs[32];
	double last = 0;

	while (!exiting) {
		int n = epoll_wait(d->epfd, evs, 32, sleep_ms(d, last)), i;

		if (n < 0 && errno != EINTR) {
			pr_err("epoll_wait: %s", strerror(errno));
			return -1;
		}
		for (i = 0; i < n; i++) {
			struct ep_src *src = evs[i].data.ptr;

			src->on_event(src, evs[i].events);
		}
		ring_buffer__consume(d->rb);
		want_records(d);
		if (since(&d->started) - last >= TICK_S) {
			last = since(&d->started);
			housekeeping(d);
		}
	}
	ring_buffer__consume(d->rb); /* what arrived before the signal */
	count_poll(d);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = options, .parser = parse_opt, .doc = doc };
	struct options opt = {
		.obs = { .pin_dir = DEFAULT_PIN_DIR, .fail_status = OUTCOME_FAIL_STATUS_DEFAULT },
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
	};
	struct claimd d = { .opt = &opt, .epfd = -1, .lock_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int err, ret = EXIT_FAILURE_RT;

	err = argp_parse(&argp, argc, argv, 0, NULL, &opt);
	if (err)
		return 2;
	log_set_level(LOG_INFO + (opt.verbose > 1 ? 1 : 0));
	libbpf_set_print(libbpf_print);
	clock_gettime(CLOCK_MONOTONIC, &d.started);

	if (sysprobe__run(&d.probe))
		return EXIT_HOST;
	opt.obs.no_uprobes = !d.probe.uprobes;
	opt.obs.untyped_cast = d.probe.untyped_cast;
	err = lock_pin_dir(&d);
	if (err) {
		ret = err == -EWOULDBLOCK ? EXIT_BUSY : EXIT_FAILURE_RT;
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	d.names = names__new();
	d.edges = edges__new(&opt.edges);
	d.roots = roots__new();
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!d.names || !d.edges || !d.roots || d.epfd < 0) {
		pr_err("out of memory or file descriptors");
		goto out;
	}
	if (opt.names_file && names__load_map(d.names, opt.names_file))
		goto out;
	if (opt.obs.netns && names__use_netns(d.names, opt.obs.netns)) {
		pr_err("cannot read the addresses of network namespace %s: %s", opt.obs.netns,
		       strerror(errno));
		goto out;
	}
	if (opt.edges.use_memory) {
		if (memory__load(d.edges, opt.state_dir, time(NULL), &d.memory))
			pr_warn("cannot read the memory in %s: %s; starting without it",
				opt.state_dir, strerror(errno));
		else if (d.memory.corrupt)
			pr_err("the memory file in %s is unreadable (%s); moved it to %s and "
			       "started with an empty memory",
			       opt.state_dir, d.memory.why, d.memory.moved_to);
		else if (d.memory.edges)
			pr_info("memory: %d edges loaded from %s", d.memory.edges, opt.state_dir);
	}
	d.obs = observer__load(&opt.obs);
	if (!d.obs)
		goto out;
	d.classes = classes__new(observer__classes_fd(d.obs));
	d.kcounts = kcounts__new(&(struct kcounts_maps){
		.edge_fd = observer__edge_counts_fd(d.obs),
		.service_fd = observer__service_counts_fd(d.obs),
		.dirty_edges_fd = observer__dirty_edges_fd(d.obs),
		.dirty_services_fd = observer__dirty_services_fd(d.obs),
		.epoch = observer__count_epoch(d.obs),
	});
	if (!d.classes || !d.kcounts)
		goto out;
	if (opt.fleet_url) {
		d.fleet = fleet__start(opt.fleet_url, opt.fleet_interval_s, opt.fleet_timeout_ms);
		if (!d.fleet)
			goto out;
		edges__set_fallback(d.edges, fleet__class, d.fleet);
		names__set_remote(d.names, fleet__name, d.fleet);
	}
	d.rb = ring_buffer__new(observer__events_fd(d.obs), on_record, &d, NULL);
	if (!d.rb) {
		pr_err("cannot set up the ring buffer: %s", strerror(errno));
		goto out;
	}
	d.rb_src.fd = ring_buffer__epoll_fd(d.rb);
	d.rb_src.on_event = rb_event;
	if (ep_add(d.epfd, &d.rb_src, EPOLLIN)) {
		pr_err("epoll: %s", strerror(errno));
		goto out;
	}
	d.ctl = control__open(&opt.control, d.epfd, handle_request, &d);
	if (!d.ctl) {
		if (errno == EADDRINUSE)
			ret = EXIT_BUSY;
		goto out;
	}
	map_fill__init(&d.fill[0], "conns", observer__conns_fd(d.obs));
	map_fill__init(&d.fill[1], "threads", observer__threads_fd(d.obs));
	d.fill[1].max_entries += observer__thread_slots(d.obs);
	map_fill__init(&d.fill[2], "edge_class", observer__classes_fd(d.obs));
	map_fill_update(&d);
	if (start_metrics(&d))
		goto out;
	/* Attach first, then seed: a socket made in between is seen by the kernel,
	 * and the seed does not overwrite what the kernel already knows. */
	if (observer__attach(d.obs))
		goto out;
	observer__set_alive(d.obs, true);
	if (d.probe.uprobes) {
		const char *off[] = { opt.no_tls ? "tls" : "", opt.no_go ? "go" : "", NULL };

		d.probes = probes__new(d.obs, off);
	}
	if (d.probes)
		probes__scan(d.probes);
	if (!opt.no_seed) {
		err = seed__existing(d.obs, &opt.obs, d.names, &d.seeded);
		if (err)
			pr_warn("could not look for existing sockets: %s", strerror(-err));
		/* The processes seeded are followed now: their programs may be Go. */
		if (d.probes)
			probes__scan(d.probes);
	}
	pr_info("attached; followed from before start: %d listeners, %d inbound and %d outbound "
		"connections in %d processes; control socket %s",
		d.seeded.listeners, d.seeded.inbound, d.seeded.outbound, d.seeded.processes,
		opt.control.path);

	ret = run(&d) ? EXIT_FAILURE_RT : 0;
	handover__mark_leaving(); /* a claimd started now waits for this one */
	observer__set_alive(d.obs, false);
	persist(&d);
	pr_info("detaching: %lu ingress and %lu root egress records seen, %lu malformed; memory "
		"written to %s",
		d.n_ingress, d.n_root, d.n_invalid, opt.state_dir);
out:
	metrics_http__stop(d.http);
	fleet__stop(d.fleet);
	control__close(d.ctl);
	ring_buffer__free(d.rb);
	probes__free(d.probes);
	classes__free(d.classes);
	kcounts__free(d.kcounts);
	snapshot__free(&d.snap);
	observer__destroy(d.obs);
	roots__free(d.roots);
	edges__free(d.edges);
	names__free(d.names);
	if (d.epfd >= 0)
		close(d.epfd);
	if (d.lock_fd >= 0)
		close(d.lock_fd);
	return ret;
}
