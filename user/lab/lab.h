/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimlab: the retry-storm rehearsal. 'claimlab node' is one HTTP/1.1
 * service with failure injection and a retry policy; 'claimlab run' builds a
 * topology of nodes (re-executing itself), drives load through it and reports
 * load multiples, retries and the storm radius. This header is what the
 * lab's files share: HTTP I/O on top of headers/http_parse.h, retry
 * policies, node counters, topologies and small helpers.
 */
#ifndef CLAIMD_LAB_H
#define CLAIMD_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "claim.h"
#include "http_parse.h"
#include "addr.h"
#include "argnum.h"
#include "log.h"
#include "outcome.h"

#define LAB_MAX_DOWN	 8   /* downstreams of one node */
#define LAB_NAME_MAX	 32  /* node names: "A", "n0.1.0.1" */
#define LAB_PATH_MAX	 512 /* request targets and file names */
#define LAB_BUF		 8192
#define LAB_STATUS_MAX	 600
#define LAB_DEFAULT_SEED 2024

/* ---- util.c: time, files, numbers (messages: log.h) ---- */

uint64_t lab_now_ns(void);
void lab_sleep_ms(int ms);
/* Writes text to path through a temporary file and rename(). 0 or -errno. */
int lab_write_atomic(const char *path, const char *text);
/* A uniform double in [0, 1) from a seed and a counter (splitmix64). */
double lab_uniform(uint64_t seed, uint64_t n);
uint64_t lab_hash(const char *s);

/* ---- httpio.c: HTTP/1.1 messages on sockets, framed by http_feed() ---- */

/* One side of a keep-alive connection: its socket and what it read ahead. */
struct hconn {
	int fd;
	size_t len; /* bytes in buf not consumed yet */
	char buf[LAB_BUF];
};

/* A message read by hconn_read. */
struct hmsg {
	__u16 status;		   /* responses */
	enum http_claim claim;	   /* responses: x-error-claim */
	__u8 method;		   /* requests: enum http_method */
	char target[LAB_PATH_MAX]; /* requests */
};

void hconn_init(struct hconn *c, int fd);
void hconn_close(struct hconn *c);
/* Reads one whole message. 0, or -1 on EOF, error, timeout or bad framing
 * (the connection is then closed). */
int hconn_read(struct hconn *c, enum http_kind kind, struct hmsg *m);
int lab_write_all(int fd, const void *buf, size_t len);
/* A listening socket on 127.0.0.1:*port (0: the kernel chooses; *port gets it). */
int lab_listen(int *port);
/* A blocking connection to addr:port with a receive timeout, or -1. */
int lab_connect(const char *addr, int port, int timeout_ms);

/* A keep-alive client connection to addr:port (conn.fd -1 until used). */
struct hclient {
	struct hconn conn;
	char addr[64];
	int port;
	int timeout_ms;
};

/*
 * One GET (connecting on first use, and again after a transport failure).
 * Returns the status, 0 for a transport failure; *claim gets the response's
 * x-error-claim.
 */
int hclient_get(struct hclient *hc, const char *target, enum http_claim *claim);
/* Answers on fd: status, an optional extra header line (with its CRLF), a body. */
int http_respond(int fd, int status, const char *extra, const char *body);

/* ---- policy.c: retry policies ---- */

/* A status the lab counts as failed (0: no answer): headers/outcome.h's rule, at 500. */
bool lab_failed(int status);

enum policy_kind {
	POL_NONE = 0,
	POL_RETRY,	  /* retry:R, R retries on any failure */
	POL_BUDGET,	  /* budget:B, one retry within a ratio-B budget */
	POL_CLAIM,	  /* claim:R, claim_should_retry, R+1 attempts */
	POL_CLAIM_BUDGET, /* claim+budget:B, claim_should_retry, 2 attempts, budget */
};

struct policy {
	enum policy_kind kind;
	int retries;
	double ratio;
};

int policy_parse(const char *s, struct policy *p);
/* "none", "retry:1", ...: the canonical spelling, into buf. */
const char *policy_format(const struct policy *p, char *buf, size_t len);
bool policy_uses_budget(const struct policy *p);

/* Counters of one downstream of a node (all updated atomically). */
struct down_stats {
	uint64_t calls;	  /* attempts sent */
	uint64_t retries; /* attempts after the first */
	uint64_t failures;
	uint64_t transport; /* of which transport failures */
	uint64_t budget_denied;
	uint64_t got[3];     /* failed answers by x-error-claim: none, claimed, unclaimed */
	uint64_t gave_up[8]; /* claim-aware policies: why no more retry (enum claim_decision) */
};

struct downstream {
	char addr[64];
	int port;
	bool open; /* its failure does not fail the caller */
	struct claim_budget *budget;
	struct down_stats st;
};

/* The retry loop around one downstream call: the final outcome. */
struct call_result {
	int status; /* 0: transport failure */
	enum http_claim claim;
};
void policy_call(const struct policy *p, struct downstream *d, struct hclient *hc,
		 const char *target, struct call_result *res);

/* ---- node_stats.c: a node's counters ---- */

struct node_stats {
	uint64_t requests;
	uint64_t in_flight, in_flight_max;
	uint64_t own_failures;	    /* internal or overload faults */
	uint64_t claims_written[3]; /* failed answers: none, claimed, unclaimed */
	uint64_t status[LAB_STATUS_MAX];
};

static inline void stat_add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static inline uint64_t stat_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

struct node;
struct json_object *node_stats_json(const struct node *n);
int node_stats_write(const struct node *n, const char *path);

/* ---- node.c / node_serve.c: one service ---- */

enum fail_mode {
	FAIL_INTERNAL = 0,
	FAIL_OVERLOAD,
};

struct node {
	char name[LAB_NAME_MAX];
	int port;
	const char *ready_file;
	const char *stats_file;
	double fail_rate;
	enum fail_mode fail_mode;
	long capacity;
	uint64_t seed;
	uint64_t draws; /* PRNG counter */
	bool no_claim_header;
	double budget_burst;
	int timeout_ms;
	struct policy policy;
	int n_down;
	struct downstream down[LAB_MAX_DOWN];
	struct claim *claim;
	struct node_stats st;
};

struct conn_arg {
	struct node *node;
	int fd;
};

/* Serves one accepted connection until it closes (a thread's body; frees arg). */
void *node_serve_conn(void *arg);
int cmd_node(int argc, char **argv);

/* ---- topo.c: chains and trees ---- */

struct topo_node {
	char name[LAB_NAME_MAX];
	int parent; /* index, -1 for the root */
	int depth;
	int n_children;
	int children[LAB_MAX_DOWN];
	bool open; /* its parent's call to it is fail-open */
	bool fail; /* the failing node */
	bool no_claim_header;
	struct policy policy;
	/* while running */
	pid_t pid;
	int port;
	struct json_object *stats;
};

struct topo {
	char spec[64];
	int n;
	int max_depth;
	struct topo_node *nodes;
};

/* "chain:N" or "tree:D:F". 0 or -1 (reported). */
int topo_build(struct topo *t, const char *spec);
void topo_free(struct topo *t);
int topo_find(const struct topo *t, const char *name);
/* Longest run of consecutive retrying edges on a root-to-leaf path. */
int topo_storm_radius(const struct topo *t, const bool *edge_retried);

/* ---- driver.c, load.c, report.c: claimlab run ---- */

extern volatile sig_atomic_t lab_interrupted; /* SIGINT or SIGTERM reached the driver */

struct run_opts {
	const char *topology;
	const char *fail;
	double fail_rate;
	const char *fail_mode;
	long capacity;
	struct policy policy;
	const char *policy_at[64]; /* "NODE=POLICY" */
	int n_policy_at;
	const char *open_at[64];
	int n_open_at;
	const char *no_header_at[64];
	int n_no_header_at;
	long requests;
	long concurrency;
	const char *json;
	const char *workdir;
	const char *service_prefix; /* CLAIMD_SERVICE = prefix + name */
	uint64_t seed;
	double budget_burst;
	int timeout_ms;
	bool quiet;
};

struct load_result {
	uint64_t sent;
	uint64_t ok;	    /* 2xx */
	uint64_t transport; /* no answer */
	uint64_t status[LAB_STATUS_MAX];
	double elapsed_s;
};

/* Starts every node of t, deepest first, with files in dir. 0 or -1
 * (reported, with the failing node's log). */
int nodes_start(struct topo *t, const struct run_opts *o, const char *dir);
/* SIGTERM to every node, SIGKILL to those that linger; with want_stats,
 * reads each node's stats into its 'stats'. 0 or -1 (reported). */
int nodes_stop(struct topo *t, const char *dir, bool want_stats);
void nodes_print_log(const char *dir, const struct topo_node *n);
/* Removes the nodes' ready, stats and log files. */
void nodes_remove_files(const struct topo *t, const char *dir);

/* Drives requests /r/0 .. /r/N-1 through concurrency keep-alive connections
 * to 127.0.0.1:port; progress on stderr under label. */
int load_run(int port, long requests, long concurrency, int timeout_ms, const char *label,
	     struct load_result *out);
/* The run's figures from the nodes' stats: printed, and as JSON (a new
 * reference). */
struct json_object *report_build(const struct topo *t, const struct run_opts *o,
				 const struct load_result *lr);
void report_print(const struct topo *t, struct json_object *rep);
/* "claim:1, C=claim+budget:0.1": the policy and the per-node ones. */
void report_policy_label(const struct run_opts *o, char *buf, size_t len);
int cmd_run(int argc, char **argv);

#endif /* CLAIMD_LAB_H */
