// SPDX-License-Identifier: GPL-2.0
/*
 * claimd: loads the observer, seeds the sockets that already exist, and
 * turns its records into what operators and claimctl ask for. One thread,
 * one epoll set: the ring buffer, the control socket and its clients. (The
 * HTTP server of /metrics and the map has a thread of its own, which reads
 * only the snapshot published here once a second: metrics_http.h.)
 * Runs in the foreground until SIGINT or SIGTERM, then detaches and exits 0.
 *
 * The stages, a folder each: host/ says what the host allows; kernel/
 * loads the observer and turns its maps and records into typed values;
 * probes/ finds the files for the uprobe runtimes; model/ learns edges,
 * names and classes from the counts and records, and writes the classes
 * back into the kernel; fleet/ brings the fleet's classes from Prometheus;
 * expose/ gives what was learned to claimctl, Prometheus and the map.
 * This file runs them in that order and owns the loop between them.
 */
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

#include "model/classes.h"
#include "expose/control.h"
#include "kernel/counters.h"
#include "model/edges.h"
#include "evloop.h"
#include "options.h"
#include "fleet/fleet.h"
#include "graph.h"
#include "hashtab.h"
#include "host/handover.h"
#include "model/kcounts.h"
#include "log.h"
#include "model/departed.h"
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
#include "kernel/unix_served.h"
#include "expose/snapshot.h"
#include "host/sysprobe.h"
#include "probes/probes.h"
#include "expose/trace_fmt.h"
#include "verdict_names.h"

#define MAX_EXITED	512
#define UPROBE_RESCAN_S 5   /* seconds between looks for new files to probe */
#define UNIX_SCAN_S	5   /* seconds between looks for socket files listened on */
#define RB_DRAIN_MS	20  /* while records flow, they wait at most this long in the ring */
#define TICK_S		1.0 /* housekeeping: counts read, classes synced, state kept */
#define MAP_COUNT_S	10  /* how often the BPF maps' entries are counted */
#define PUBLISH_IDLE_S	60  /* a snapshot older than this is rendered again when asked for */

/* The maps whose fill claimd counts (metrics_maps.h), by name. */
enum { FILL_CONNS, FILL_THREADS, FILL_CLASSES, N_FILL };

/* Exit codes, besides 0 (stopped by a signal) and 64 (bad usage: argp, EX_USAGE). */
#define EXIT_FAILURE_RT 1 /* failed while starting or running: see the message */
#define EXIT_HOST	3 /* this user or kernel cannot run claimd: see the message */
#define EXIT_BUSY	4 /* another claimd holds the pin directory or control socket */

static volatile sig_atomic_t exiting;

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
	double last_unix_scan;
	struct unix_served *unix_served;
	int unix_names_learned; /* socket files' names put into unix_served (unix_served.h) */
	int unix_files_asked;	/* names of socket files no server was seen on, asked about */
	int unix_files_dead;	/* ... found a socket file nobody listens on: served from then */
	int unix_ask_errors;	/* each kind of failure warned of once */
	int unix_scan_errors;
	int unix_remember_errors;
	time_t persisted_wall; /* when the memory last reached the disk */
	int persist_errors;
	/* records from the kernel, by type, and the malformed ones */
	unsigned long n_ingress, n_root, n_listen, n_exit, n_unread, n_exec, n_socket_file,
		n_invalid;
	__u64 rb_drops;	    /* records the ring buffer had no room for, at the last count */
	__u64 drops_looked; /* ... when claimd last looked for what they left waiting */
	/* processes found waiting on a record lost (lost_record_waits), and gone without one */
	unsigned long n_lost_waits, n_lost_exits;
	__u32 exited[MAX_EXITED];
	int n_exited;
	struct metrics_http *http;
	struct ep_src http_src;
	struct snapshot snap; /* what the metrics are rendered from, arrays reused */
	struct map_fill fill[N_FILL];
	struct sysprobe probe;
	double last_map_count;
	bool classes_full;	 /* the edge class map refused some, last time */
	bool records_wanted;	 /* the programs send every request's record */
	uint64_t ticks;		 /* housekeeping passes done */
	uint64_t synced_changes; /* edges__changes + classes__changes at the last housekeeping */
	uint64_t synced_epoch;	 /* the window's bucket then */
	uint64_t stats_sum;	 /* the kernel's counters, summed, at the last read */
	uint64_t status_changes; /* the kernel's counters or the maps' fill changed */
	uint64_t published;	 /* status_changes at the last publish */
	double last_publish;
	int count_errors;
};

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
	d->rb_drops = st[CLAIMD_ST_RB_DROPS];
	for (i = 0; i < CLAIMD_ST__COUNT; i++)
		sum += st[i];
	if (sum != d->stats_sum) {
		d->stats_sum = sum;
		d->status_changes++;
	}
	err = kcounts__poll(d->kcounts,
			    st[CLAIMD_ST_COUNTED] + st[CLAIMD_ST_ROOT_CALLS] +
				    st[CLAIMD_ST_CALLS_OUTSIDE] + st[CLAIMD_ST_LATE_CALLS],
			    &into, since(&d->started), time(NULL));
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

static void ask_socket_file(struct claimd *d, const struct claimd_socket_file *f);

/*
 * Process tgid began to serve. Under --port, connects it made before, to
 * ports not listed, were not followed (a database pool opened before
 * listen()): its requests are unknown until its calls open now are found
 * and followed (CLAIMD_PROC_UNSEEDED), here, as the seeding at start does.
 */
static void calls_before_serving(struct claimd *d, __u32 tgid)
{
	int err;

	if (!(observer__proc_word(d->obs, tgid, 0, 0) & CLAIMD_PROC_UNSEEDED))
		return;
	err = seed__calls_of(d->obs, &d->opt->obs, d->names, tgid, &d->seeded);
	if (err)
		pr_warn("cannot look for the calls of process %u: %s; its requests stay unknown",
			tgid, strerror(-err));
	else
		observer__proc_word(d->obs, tgid, 0, CLAIMD_PROC_UNSEEDED);
}

static void lost_record_wait(__u32 tgid, __u32 word, void *arg)
{
	struct claimd *d = arg;

	d->n_lost_waits++;
	if (d->probes)
		probes__scan_pid(d->probes, tgid);
	if (word & CLAIMD_PROC_UNSEEDED)
		calls_before_serving(d, tgid);
}

/* A process claimd knows, to exits_unseen's set if it is gone. */
static void gone_note(__u32 tgid, void *arg)
{
	struct hashtab *gone = arg;

	if (tgid && kill((pid_t)tgid, 0) && errno == ESRCH)
		hashtab__put(gone, &tgid, sizeof(tgid), (void *)1, NULL);
}

static void gone_forget(uint32_t tgid, void *arg)
{
	struct claimd *d = arg;

	if (d->n_exited == MAX_EXITED)
		forget_exited(d); /* the set walked is none of its tables */
	d->exited[d->n_exited++] = tgid;
	d->n_lost_exits++;
}

/*
 * The processes claimd knows (their names, their counters) that are gone
 * without their exit's record, lost: forgotten as at that record, their
 * connections' slots given back. A process whose record is still on its
 * way is forgotten once more then, which changes nothing.
 */
static void exits_unseen(struct claimd *d)
{
	struct hashtab *gone = hashtab__new();

	if (!gone)
		return;
	names__each_process(d->names, gone_note, gone);
	kcounts__each_process(d->kcounts, gone_note, gone);
	hashtab__each_u32_key(gone, gone_forget, d);
	hashtab__free(gone);
	forget_exited(d);
}

/*
 * Records the ring buffer had no room for may have been a process's
 * listener (under --port, its calls made before it served then wait to be
 * looked for: CLAIMD_PROC_UNSEEDED) or its program's (CLAIMD_PROC_UNREAD):
 * that process's requests stay unknown until claimd has done what the
 * record asked. After a drop, every process whose word still waits is
 * looked at as its record would have had it: its libssl or libclaim, its
 * program, its calls and listeners in /proc. The programs set the bit
 * before they count the drop. Or an exit's: the processes gone are
 * forgotten (exits_unseen).
 */
static void lost_record_waits(struct claimd *d)
{
	if (d->rb_drops == d->drops_looked)
		return;
	d->drops_looked = d->rb_drops;
	observer__procs_with(d->obs, CLAIMD_PROC_UNSEEDED | CLAIMD_PROC_UNREAD, lost_record_wait,
			     d);
	exits_unseen(d);
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
		if (!l->closed)
			calls_before_serving(d, l->tgid);
		break;
	}
	case CLAIMD_REC_UNREAD: {
		const struct claimd_exit *u = data;

		/* A followed process runs a program not read yet: its requests wait for it. */
		d->n_unread++;
		if (d->probes)
			probes__scan_pid(d->probes, u->tgid);
		break;
	}
	case CLAIMD_REC_EXEC: {
		const struct claimd_exit *x = data;

		/* A program new to claimd began: read while it starts, before it serves. */
		d->n_exec++;
		if (d->probes)
			probes__read_program(d->probes, x->tgid);
		break;
	}
	case CLAIMD_REC_SOCKET_FILE:
		d->n_socket_file++;
		ask_socket_file(d, data);
		break;
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
	json_object_object_add(o, "unix_connects", json_object_new_boolean(d->probe.unix_connects));
	json_object_object_add(o, "degraded", json_object_new_boolean(d->probe.degraded));
	return o;
}

/*
 * One count of how full the maps are, and the evictions it shows of conns
 * and threads (ev[0], ev[1]). conns and threads are LRU: when full, the
 * least recently used entry goes. Evictions are what was added and is
 * neither there nor removed (closed, forgotten). The entries are counted by
 * walking the map while it changes: what was added is read before the walk
 * and what was removed after it, so that an entry added or removed
 * meanwhile lowers the figure (a close during the walk, read before it,
 * was once taken for an eviction). 0, or -1 (not counted).
 */
static int map_fill_count(struct claimd *d, long long ev[2])
{
	__u64 st[CLAIMD_ST__COUNT], after[CLAIMD_ST__COUNT];
	long long forgotten;

	if (observer__stats(d->obs, st))
		return -1;
	map_fill__count(d->fill, N_FILL);
	forgotten = (long long)observer__forgotten(d->obs);
	if (observer__stats(d->obs, after))
		return -1;
	/* The connections in slots, as they stand after the walk: never evicted. */
	d->fill[FILL_CONNS].entries +=
		after[CLAIMD_ST_CONN_SLOTS] - after[CLAIMD_ST_CONN_SLOTS_FREED];
	ev[0] = (long long)(st[CLAIMD_ST_CONNS] + d->seeded.inbound + d->seeded.outbound) -
		(long long)(after[CLAIMD_ST_CONN_CLOSED] + forgotten + d->fill[FILL_CONNS].entries);
	ev[1] = (long long)st[CLAIMD_ST_THREAD_CTXS] - (long long)d->fill[FILL_THREADS].entries;
	/* With the contexts in slots: evictions are the table's only. */
	d->fill[FILL_THREADS].entries +=
		st[CLAIMD_ST_THREAD_SLOTS] - st[CLAIMD_ST_THREAD_SLOTS_FREED];
	return 0;
}

/* The evictions of f: ev, if more than it had and its count did not fail. */
static void evictions_note(struct map_fill *f, long long ev)
{
	if (!f->err && ev > (long long)f->evicted)
		f->evicted = ev;
	f->has_evicted = true;
}

/*
 * How full the maps are, and what pressure cost. The statistics are read a
 * counter at a time while connections end on other CPUs, so a count can
 * fall between two steps of an end (its slot given back, its close not yet
 * counted) and show an eviction that is not: a count that shows more
 * evictions than known is made again at once, and the lower figure taken
 * (an eviction stays in every count after it; such a miscount passes in
 * nanoseconds). Exact when the table is quiet, a few entries late while it
 * changes, never too high. edge_class is written by claimd: when full, a
 * class is refused (and tried again).
 */
static void map_fill_update(struct claimd *d)
{
	struct map_fill before[N_FILL];
	long long ev[2], again[2];
	int i;

	memcpy(before, d->fill, sizeof(before));
	if (map_fill_count(d, ev))
		return;
	if ((ev[0] > (long long)d->fill[FILL_CONNS].evicted ||
	     ev[1] > (long long)d->fill[FILL_THREADS].evicted) &&
	    !map_fill_count(d, again))
		for (i = 0; i < 2; i++)
			ev[i] = again[i] < ev[i] ? again[i] : ev[i];
	evictions_note(&d->fill[FILL_CONNS], ev[0]);
	evictions_note(&d->fill[FILL_THREADS], ev[1]);
	d->fill[FILL_CLASSES].refused = classes__refused(d->classes);
	d->fill[FILL_CLASSES].refused_total = classes__refusals(d->classes);
	d->fill[FILL_CLASSES].has_refused = true;
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

/* Go executables left to the syscall path, by reason (goexec.h's classes). */
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
	json_object_object_add(o, "ticks", json_object_new_uint64(d->ticks));
	json_object_object_add(o, "attached", json_object_new_boolean(1));
	have_st = !observer__stats(d->obs, st);
	if (have_st)
		for (i = 0; i < CLAIMD_ST__COUNT; i++)
			json_object_object_add(k, observer__stat_name(i),
					       json_object_new_uint64(st[i]));
	json_object_object_add(o, "kernel", k);
	/* Every record read, whatever its type: a test waits for the kernel's count of them. */
	json_object_object_add(r, "read",
			       json_object_new_uint64(d->n_ingress + d->n_root + d->n_listen +
						      d->n_exit + d->n_unread + d->n_exec +
						      d->n_socket_file + d->n_invalid));
	json_object_object_add(r, "ingress", json_object_new_uint64(d->n_ingress));
	json_object_object_add(r, "egress", json_object_new_uint64(d->n_root));
	json_object_object_add(r, "listen", json_object_new_uint64(d->n_listen));
	json_object_object_add(r, "exit", json_object_new_uint64(d->n_exit));
	json_object_object_add(r, "unread", json_object_new_uint64(d->n_unread));
	json_object_object_add(r, "exec", json_object_new_uint64(d->n_exec));
	json_object_object_add(r, "socket_file", json_object_new_uint64(d->n_socket_file));
	json_object_object_add(r, "invalid", json_object_new_uint64(d->n_invalid));
	json_object_object_add(r, "lost_waits", json_object_new_uint64(d->n_lost_waits));
	json_object_object_add(r, "lost_exits", json_object_new_uint64(d->n_lost_exits));
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
	json_object_object_add(s, "at_listen", json_object_new_int(d->seeded.at_listen));
	json_object_object_add(o, "seeded", s);
	json_object_object_add(o, "socket_files_learned",
			       json_object_new_int(d->unix_names_learned));
	json_object_object_add(o, "socket_files_asked", json_object_new_int(d->unix_files_asked));
	json_object_object_add(o, "socket_files_found_dead",
			       json_object_new_int(d->unix_files_dead));
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
	json_object_object_add(o, "trace_lines",
			       json_object_new_uint64(control__published(d->ctl)));
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
	/* The names it was learned under, of listeners gone among them. */
	if (!err)
		err = departed__save(d->names, d->opt->state_dir);
	if (err) {
		if (!d->persist_errors++)
			pr_warn("cannot write the memory to %s: %s", d->opt->state_dir,
				strerror(-err));
		return;
	}
	d->persisted_wall = time(NULL);
}

static void socket_file_named(__u64 hash, const char *path, __u64 bound, void *arg)
{
	names__socket_file(arg, hash, path, bound, time(NULL));
}

/* A socket file an earlier claimd knew served (model/departed.h): served still. */
static void remember_socket_file(__u64 hash, const char *path, __u64 bound, time_t seen, void *arg)
{
	struct claimd *d = arg;
	int n = unix_served__remember(d->unix_served, hash);

	(void)path, (void)bound, (void)seen;
	if (n > 0)
		d->unix_names_learned++;
	else if (n < 0 && !d->unix_remember_errors++)
		pr_warn("cannot put back the socket files served before this start (%s): a "
			"failed connect to one whose file is gone makes its request unknown",
			strerror(-n));
}

/*
 * The learner of socket files served, made once: with the probes listed,
 * the dependencies named, and the names an earlier claimd knew.
 */
static struct unix_served *socket_files(struct claimd *d)
{
	int err;

	if (d->unix_served)
		return d->unix_served;
	d->unix_served =
		unix_served__new(observer__unix_served_fd(d->obs), socket_file_named, d->names);
	if (!d->unix_served)
		return NULL;
	err = unix_served__probes(d->unix_served, observer__unix_unserved_fd(d->obs),
				  d->opt->probe_sockets, d->opt->n_probe_sockets);
	if (err)
		pr_warn("cannot list the probes' socket files (%s): a failed connect to one makes "
			"its request unknown",
			strerror(-err));
	err = unix_served__dependencies(d->unix_served, d->opt->dependency_sockets,
					d->opt->n_dependency_sockets);
	if (err < 0)
		pr_warn("cannot list the dependencies' socket files (%s): a failed connect to one "
			"no server was seen on makes its request unknown",
			strerror(-err));
	else
		d->unix_names_learned += err;
	names__each_socket_file(d->names, remember_socket_file, d);
	return d->unix_served;
}

/* The names of socket files listened on now: a failed connect to one is a failed call. */
static void learn_socket_files(struct claimd *d)
{
	int n;

	n = socket_files(d) ? unix_served__learn(d->unix_served) : -ENOMEM;
	d->last_unix_scan = since(&d->started);
	if (n >= 0) {
		d->unix_names_learned += n;
		return;
	}
	if (!d->unix_scan_errors++)
		pr_warn("cannot learn the socket files listened on (%s): a failed connect to one "
			"no followed process was seen using is taken for a probe, not a call",
			strerror(-n));
}

/*
 * A followed process's connect failed, or may fail, to a socket file no
 * server was seen on: a socket file there, nobody listening, is a dead
 * server's, and a failed connect to it a failed call from now on.
 */
static void ask_socket_file(struct claimd *d, const struct claimd_socket_file *f)
{
	int n;

	d->unix_files_asked++;
	n = socket_files(d) ? unix_served__ask(d->unix_served, f->tgid, f->name, f->len, f->hash)
			    : -ENOMEM;
	if (n > 0) {
		d->unix_names_learned++;
		d->unix_files_dead++;
	} else if (n < 0 && !d->unix_ask_errors++) {
		pr_warn("cannot learn a socket file found with no server (%s): a request whose "
			"connect to it fails stays unknown",
			strerror(-n));
	}
}

/* Once a second: what does not need doing per record. */
static void housekeeping(struct claimd *d)
{
	double now = since(&d->started);
	uint64_t changes, epoch;
	int err;

	ring_buffer__consume(d->rb); /* names first: listeners, exits */
	count_poll(d);
	lost_record_waits(d);
	forget_exited(d);
	observer__sweep_slots(d->obs, false);
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
			d->fill[FILL_CLASSES].max_entries, classes__refused(d->classes));
	d->classes_full = classes__refused(d->classes) > 0;
	probes__tick(d->probes);
	/* libssl and libclaim in processes started since: probed from their next call. */
	if (d->probes && now - d->last_uprobe_scan >= UPROBE_RESCAN_S) {
		d->last_uprobe_scan = now;
		probes__scan(d->probes);
	}
	if (now - d->last_unix_scan >= UNIX_SCAN_S)
		learn_socket_files(d);
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
	d->ticks++;
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

/*
 * The names of listeners gone before this claimd started, as the last one
 * named them, and of the socket files it knew served.
 */
static void restore_departed(struct claimd *d)
{
	char why[160] = "";
	int n = departed__load(d->names, d->opt->state_dir, time(NULL), why, sizeof(why));

	if (n < 0)
		pr_warn("cannot read the names of listeners gone in %s (%s): their addresses are "
			"named by their numbers",
			d->opt->state_dir, why);
	else if (n)
		pr_info("memory: %d names of listeners gone and socket files served, loaded", n);
}

/* Before the kernel: the host checked, the pin directory taken, the model made. */
static int claimd_open(struct claimd *d)
{
	struct options *opt = d->opt;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	if (sysprobe__run(&d->probe))
		return EXIT_HOST;
	opt->obs.no_uprobes = !d->probe.uprobes;
	opt->obs.untyped_cast = d->probe.untyped_cast;
	opt->obs.unix_connects = d->probe.unix_connects;
	err = lock_pin_dir(d);
	if (err)
		return err == -EWOULDBLOCK ? EXIT_BUSY : EXIT_FAILURE_RT;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	d->names = names__new();
	d->edges = edges__new(&opt->edges);
	d->roots = roots__new();
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!d->names || !d->edges || !d->roots || d->epfd < 0) {
		pr_err("out of memory or file descriptors");
		return EXIT_FAILURE_RT;
	}
	if (opt->names_file && names__load_map(d->names, opt->names_file))
		return EXIT_FAILURE_RT;
	if (opt->obs.netns && names__use_netns(d->names, opt->obs.netns)) {
		pr_err("cannot read the addresses of network namespace %s: %s", opt->obs.netns,
		       strerror(errno));
		return EXIT_FAILURE_RT;
	}
	if (opt->edges.use_memory) {
		if (memory__load(d->edges, opt->state_dir, time(NULL), &d->memory))
			pr_warn("cannot read the memory in %s: %s; starting without it",
				opt->state_dir, strerror(errno));
		else if (d->memory.corrupt)
			pr_err("the memory file in %s is unreadable (%s); moved it to %s and "
			       "started with an empty memory",
			       opt->state_dir, d->memory.why, d->memory.moved_to);
		else if (d->memory.edges)
			pr_info("memory: %d edges loaded from %s", d->memory.edges, opt->state_dir);
		restore_departed(d);
	}
	return 0;
}

/* The programs loaded, and what reads them wired: classes, counts, the fleet,
 * the ring buffer, the control socket, the maps' fill, the metrics. */
static int claimd_load(struct claimd *d)
{
	struct options *opt = d->opt;

	d->obs = observer__load(&opt->obs);
	if (!d->obs)
		return EXIT_FAILURE_RT;
	d->classes = classes__new(observer__classes_fd(d->obs));
	d->kcounts = kcounts__new(&(struct kcounts_maps){
		.edge_fd = observer__edge_counts_fd(d->obs),
		.service_fd = observer__service_counts_fd(d->obs),
		.service_forget_fd = observer__service_forget_fd(d->obs),
		.dirty_edges_fd = observer__dirty_edges_fd(d->obs),
		.dirty_services_fd = observer__dirty_services_fd(d->obs),
		.epoch = observer__count_epoch(d->obs),
	});
	if (!d->classes || !d->kcounts)
		return EXIT_FAILURE_RT;
	if (opt->fleet_url) {
		d->fleet =
			fleet__start(opt->fleet_url, opt->fleet_interval_s, opt->fleet_timeout_ms);
		if (!d->fleet)
			return EXIT_FAILURE_RT;
		edges__set_fallback(d->edges, fleet__class, d->fleet);
		names__set_remote(d->names, fleet__name, d->fleet);
	}
	d->rb = ring_buffer__new(observer__events_fd(d->obs), on_record, d, NULL);
	if (!d->rb) {
		pr_err("cannot set up the ring buffer: %s", strerror(errno));
		return EXIT_FAILURE_RT;
	}
	d->rb_src.fd = ring_buffer__epoll_fd(d->rb);
	d->rb_src.on_event = rb_event;
	if (ep_add(d->epfd, &d->rb_src, EPOLLIN)) {
		pr_err("epoll: %s", strerror(errno));
		return EXIT_FAILURE_RT;
	}
	d->ctl = control__open(&opt->control, d->epfd, handle_request, d);
	if (!d->ctl)
		return errno == EADDRINUSE ? EXIT_BUSY : EXIT_FAILURE_RT;
	map_fill__init(&d->fill[FILL_CONNS], "conns", observer__conns_fd(d->obs));
	d->fill[FILL_CONNS].max_entries += observer__conn_slots(d->obs);
	map_fill__init(&d->fill[FILL_THREADS], "threads", observer__threads_fd(d->obs));
	d->fill[FILL_THREADS].max_entries += observer__thread_slots(d->obs);
	map_fill__init(&d->fill[FILL_CLASSES], "edge_class", observer__classes_fd(d->obs));
	map_fill_update(d);
	return start_metrics(d) ? EXIT_FAILURE_RT : 0;
}

/*
 * Attach first, then seed: a socket made in between is seen by the kernel,
 * and the seed does not overwrite what the kernel already knows. The
 * uprobe runtimes look at the processes followed, and again once the
 * seeded ones are.
 */
static int claimd_attach(struct claimd *d)
{
	struct options *opt = d->opt;
	int err;

	if (observer__attach(d->obs))
		return EXIT_FAILURE_RT;
	observer__set_alive(d->obs, true);
	learn_socket_files(d);
	if (d->probe.uprobes) {
		const char *off[] = { opt->no_tls ? "tls" : "", opt->no_go ? "go" : "",
				      opt->no_nginx ? "nginx" : "", opt->no_node ? "node" : "",
				      NULL };

		d->probes = probes__new(d->obs, off);
	}
	/* From now on a process followed before its program is read says so (unread-program). */
	if (d->probes)
		observer__read_programs(d->obs, true);
	if (d->probes)
		probes__scan(d->probes);
	if (!opt->no_seed) {
		err = seed__existing(d->obs, &opt->obs, d->names, &d->seeded);
		if (err)
			pr_warn("could not look for existing sockets: %s", strerror(-err));
		/* The processes seeded are followed now: their programs may be Go. */
		if (d->probes)
			probes__scan(d->probes);
	}
	pr_info("attached; followed from before start: %d listeners, %d inbound and %d outbound "
		"connections in %d processes; control socket %s",
		d->seeded.listeners, d->seeded.inbound, d->seeded.outbound, d->seeded.processes,
		opt->control.path);
	return 0;
}

/* Stopped by a signal: a claimd started now waits for this one; the memory kept. */
static void claimd_stop(struct claimd *d)
{
	handover__mark_leaving();
	observer__set_alive(d->obs, false);
	persist(d);
	pr_info("detaching: %lu ingress and %lu root egress records seen, %lu malformed; memory "
		"written to %s",
		d->n_ingress, d->n_root, d->n_invalid, d->opt->state_dir);
}

/* Whatever was made, in the reverse order. */
static void claimd_free(struct claimd *d)
{
	metrics_http__stop(d->http);
	fleet__stop(d->fleet);
	control__close(d->ctl);
	ring_buffer__free(d->rb);
	probes__free(d->probes);
	unix_served__free(d->unix_served);
	classes__free(d->classes);
	kcounts__free(d->kcounts);
	snapshot__free(&d->snap);
	observer__destroy(d->obs);
	roots__free(d->roots);
	edges__free(d->edges);
	names__free(d->names);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct claimd d = { .opt = &opt, .epfd = -1, .lock_fd = -1 };
	int ret;

	if (options__parse(argc, argv, &opt))
		return 2;
	log_set_level(LOG_INFO + (opt.verbose > 1 ? 1 : 0));
	libbpf_set_print(libbpf_print);
	clock_gettime(CLOCK_MONOTONIC, &d.started);

	ret = claimd_open(&d);
	if (!ret)
		ret = claimd_load(&d);
	if (!ret)
		ret = claimd_attach(&d);
	if (!ret) {
		ret = run(&d) ? EXIT_FAILURE_RT : 0;
		claimd_stop(&d);
	}
	claimd_free(&d);
	return ret;
}
