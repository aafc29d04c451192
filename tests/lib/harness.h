/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for end-to-end tests: real processes started and always stopped,
 * a claimd of the test's own (own pin directory, control socket and state
 * directory under a temporary directory), and a claimctl trace captured to a
 * file and read back as JSON.
 */
#ifndef CLAIMD_TEST_HARNESS_H
#define CLAIMD_TEST_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>

#include <json-c/json.h>

#define H_PATH 512
#define H_DIR  128 /* a directory: paths built in it fit H_PATH */

/* Starts argv[0] (searched in PATH) with extra environment entries ("K=V",
 * NULL-terminated, may be NULL), stdout and stderr to log (or /dev/null). */
pid_t proc_spawn(const char *const argv[], const char *const env[], const char *log);
/*
 * The same, as another user (uid, gid; no supplementary groups). What it runs
 * from the checkout is run from where that user can reach it: each argument
 * naming a file in the checkout or the build directory (the program, a
 * script) is replaced by its copy from stage_for_user, so a checkout under a
 * private directory (0700, as root's home) does not stand in the way. log is
 * opened before the switch; a working directory that user cannot enter
 * becomes /.
 */
pid_t proc_spawn_as(const char *const argv[], const char *const env[], const char *log, uid_t uid,
		    gid_t gid);
/*
 * A copy of the file at path (a program or a script; its mode kept, made
 * readable by all) in the test's stage directory (test__stage_dir: 0755,
 * under /tmp, removed when the test ends), under the same file name, so
 * process names stay what the test expects. Its path in out; out, or NULL on
 * error (printed).
 */
const char *stage_for_user(const char *path, char *out, size_t len);
/* SIGTERM, then SIGKILL after timeout_ms; returns the wait status, or -1. */
int proc_stop(pid_t pid, int timeout_ms);
/* Waits for the process to exit by itself; returns its wait status, or -1 on timeout. */
int proc_wait(pid_t pid, int timeout_ms);
/* The parent of process pid, or -1 (gone). */
pid_t proc_ppid(pid_t pid);
/* pid's state letter in /proc/PID/stat (its leader's: 'Z' once it left), 0: gone. */
char proc_state(pid_t pid);
/* Runs a command to completion; its stdout (and stderr) into out. Returns the
 * wait status, or -1. */
int proc_run(const char *const argv[], char *out, size_t outlen, int timeout_ms);

/* Until path has bytes (a service's ready file), then claimd_programs_settle: 0, or -1. */
int wait_file(const char *path, int timeout_ms);
/* The port a service wrote in its ready file (wait_file), or -1 (none in timeout_ms). */
int wait_ready_port(const char *ready, int timeout_ms);
/* Reads a small file into buf (NUL-terminated); returns bytes or -1. */
ssize_t read_file(const char *path, char *buf, size_t len);
int write_file(const char *path, const char *text);
/*
 * A self-signed certificate for 127.0.0.1 (its subjectAltName too, so a
 * client that checks it against the address accepts it): cert and key
 * written to the paths given. 0, or -1 with what openssl said printed.
 */
int tls_cert_make(const char *cert, const char *key);
/* All of buf to fd; 0 or -1. */
int write_all_fd(int fd, const void *buf, size_t len);
void sleep_ms(int ms);
long long now_ms(void);

/* A temporary directory for the test, removed with tmpdir_remove. */
int tmpdir_make(char *dir, size_t len);
void tmpdir_remove(const char *dir);

/*
 * The pid of the test run that named a pin directory, network namespace or
 * cgroup name ("claimd-test-<pid>[-...]") when that run is gone, else 0.
 */
long left_by_gone_run(const char *name);
/* Removes the pin directories of killed test runs (root only). */
void stale_pins_remove(void);

struct claimd_h {
	pid_t pid;
	char dir[H_DIR];
	char sock[H_PATH];
	char pin[H_DIR];
	char log[H_PATH];
	char state[H_PATH];
};

/* Starts claimd and waits until it answers on its control socket. extra: more
 * arguments, NULL-terminated, may be NULL. h->dir and h->pin, when set, are
 * used (a pin directory must start /sys/fs/bpf/claimd-test-<pid>: stale
 * ones are found by that); else made. Returns 0 or -1 (log printed). */
int claimd_start(struct claimd_h *h, const char *const extra[]);
int claimd_stop(struct claimd_h *h);
/* SIGKILL, no cleanup by claimd itself. */
void claimd_kill(struct claimd_h *h);
void claimd_print_log(const struct claimd_h *h);
/* Prints the file at path (a log), between lines naming it as what; nothing if unreadable. */
void file_print(const char *what, const char *path);
/* Occurrences of needle in claimd's log, waiting up to 10 s for one. */
int claimd_log_lines(const struct claimd_h *h, const char *needle);
/* "claimctl --socket ... <args>" output; returns the wait status. */
int claimctl_run(const struct claimd_h *h, const char *const args[], char *out, size_t outlen);
/* claimctl <args> --json, parsed. NULL on failure. */
struct json_object *claimctl_json(const struct claimd_h *h, const char *const args[]);
/*
 * Until claimd has read the program of every process it was asked to (each
 * followed before its program was: its requests unknown, unread-program),
 * up to 10 s: false if it has not.
 */
bool claimd_programs_read(const struct claimd_h *h);
/*
 * The same for the claimd the test started last, if it runs and is not
 * held back (SIGSTOP): wait_file and the service starters that wait for a
 * port call it once a service is up, so that its first requests are judged
 * (not unread-program) however busy the host keeps claimd.
 */
void claimd_programs_settle(void);
/*
 * One of claimd's counts in 'claimctl status': under "kernel" (a kernel
 * counter) with kernel true, else at its top (a runtime's), or in the
 * section a dotted name gives ("records.exit"); 0 if absent, -1 if claimd
 * does not answer.
 */
long long claimd_status_count(const struct claimd_h *h, const char *name, bool kernel);
/* Polls the count name ("ticks", "seeded.at_listen") of 'claimctl status' until it is at least
 * min (30 s at most). */
bool claimd_status_reaches(const struct claimd_h *h, const char *name, long long min);
/* The service name's row of 'claimctl services --json' (a new reference), or NULL. */
struct json_object *claimd_service(const struct claimd_h *h, const char *name);
/* The edge caller -> callee from 'claimctl edges --json' (a new reference), or NULL. */
struct json_object *claimd_edge(const struct claimd_h *h, const char *caller, const char *callee);
/* The same, of one kind: root 1 a root caller's edge, 0 a service's, -1 either. */
struct json_object *claimd_edge_of_kind(const struct claimd_h *h, const char *caller,
					const char *callee, int root);
/*
 * Every edge into callee or out of caller, as test__why lines (a call
 * counted under another name is there).
 */
void claimd_edges_explain(const struct claimd_h *h, const char *caller, const char *callee);
/* claimd's counts of what loses a call or a request, those not 0, as test__why lines. */
void claimd_losses_explain(const struct claimd_h *h);
/* The named services as claimd counts them (requests, failures, verdicts), as test__why lines. */
void claimd_services_explain(const struct claimd_h *h, const char *const *names, int n);
typedef bool (*edge_pred_fn)(struct json_object *edge, void *ctx);
/* Polls claimd_edge until pred holds; returns the edge (a new reference) or NULL. */
struct json_object *claimd_wait_edge(const struct claimd_h *h, const char *caller,
				     const char *callee, edge_pred_fn pred, void *ctx,
				     int timeout_ms);
/*
 * The same, then the edge as claimd has it a tick later (held or not):
 * whatever it would count beyond the truth the test waited for is in.
 */
struct json_object *claimd_settled_edge(const struct claimd_h *h, const char *caller,
					const char *callee, edge_pred_fn pred, void *ctx,
					int timeout_ms);

struct trace_cap {
	pid_t pid;
	char path[H_PATH];
	const struct claimd_h *h; /* the claimd it streams from */
	long long lines_before;	  /* claimd's trace_lines when it counted this client */
};

/*
 * claimctl trace --json --roots into a file; returns once claimd counts the
 * new client, so that nothing the test does after goes untraced.
 */
int trace_start(struct trace_cap *t, const struct claimd_h *h);
/* Ends the trace; returns once claimd, if still running, no longer counts it. */
/*
 * Waits until claimd has done n more ticks (its once-a-second housekeeping:
 * counts read, classes synced, memory kept, metrics renewed), up to 30 s:
 * whatever claimd had seen by the call is counted, synced and published.
 */
bool claimd_ticks_wait(const struct claimd_h *h, int n);
/* How many clients claimd streams its trace to, or -1 when it does not answer. */
long long claimd_trace_clients(const struct claimd_h *h);
void trace_stop(struct trace_cap *t);
/*
 * claimd (with extra options, as claimd_start) and a trace of it, each
 * asserted: 0, or -1 with the failure recorded. claimd_traced_stop ends
 * both, printing claimd's log when the test failed, and removes claimd's
 * directory.
 */
int claimd_traced_start(struct claimd_h *h, struct trace_cap *t, const char *const extra[]);
void claimd_traced_stop(struct claimd_h *h, struct trace_cap *t);
/* Every line captured so far, as a JSON array (caller puts it). */
struct json_object *trace_read(const struct trace_cap *t);
/* The lines captured from index 'from' on (caller puts it). */
struct json_object *trace_read_from(const struct trace_cap *t, size_t from);
/*
 * How many lines are captured so far: a mark for trace_read_from. Taken
 * once every record the kernel had submitted by the call is in the file
 * (claimd read them all, and this client wrote every line claimd had
 * queued for it then), up to 10 s, and asserted: what the test did
 * before the mark stays before it, however late the host lets claimd run.
 */
size_t trace_mark(const struct trace_cap *t);

typedef bool (*trace_match_fn)(struct json_object *line, void *ctx);
/* Calls fn on each captured line, in order, without keeping them; how many it returned true for. */
int trace_each(const struct trace_cap *t, trace_match_fn fn, void *ctx);
/* A trace_match_fn: is line an ingress record of the process *(pid_t *)pid? */
bool trace_is_ingress_of(struct json_object *line, void *pid);
/* Waits until at least n captured lines match; returns how many matched. */
int trace_wait(const struct trace_cap *t, trace_match_fn match, void *ctx, int n, int timeout_ms);

/* JSON field helpers: "" / 0 when absent. */
const char *j_str(struct json_object *o, const char *key);
long long j_int(struct json_object *o, const char *key);
bool j_bool(struct json_object *o, const char *key);
struct json_object *j_get(struct json_object *o, const char *key);

/* Python peers in tests/peers: the path of a script. */
const char *peer_script(const char *name, char *buf, size_t len);

#endif
