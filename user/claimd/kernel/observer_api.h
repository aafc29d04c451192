/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User side of the observer module (bpf/observer.bpf.c, headers/observer.h):
 * configure, load and attach the programs, and read their counters. In:
 * struct observer_config from the command line and the host's checks;
 * out: the maps' descriptors for the other stages, the loaded object for
 * the uprobe runtimes (probes/), the kernel's counters for the status.
 */
#ifndef CLAIMD_OBSERVER_API_H
#define CLAIMD_OBSERVER_API_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include <json-c/json.h>

#include "observer.h"

#define OBSERVER_MAX_FILTER 64

struct observer_config {
	__u32 pids[OBSERVER_MAX_FILTER];
	int n_pids;
	__u16 ports[OBSERVER_MAX_FILTER];
	int n_ports;
	const char *cgroup; /* cgroup v2 directory, or NULL */
	const char *netns;  /* a network namespace (/proc/PID/ns/net, /run/netns/NAME), or NULL */
	__u64 netns_ino;    /* its inode, found by observer__load */
	__u32 conns_max;
	__u32 threads_max;
	__u32 fail_status;     /* a status >= this is a failure (default 500) */
	const char *pin_dir;   /* where the verdict map is pinned */
	__u32 ringbuf_size;    /* bytes, a power of two; 0: CLAIMD_RINGBUF_SZ */
	__u32 classes_max;     /* edge classes in the kernel; 0: CLAIMD_CLASSES_MAX */
	__u32 edges_max;       /* edge counters in the kernel; 0: CLAIMD_EDGES_MAX */
	__u32 sample_every;    /* a request's record to claimd 1 in N (0: only while tracing) */
	bool no_uprobes;       /* the kernel loads no uprobe programs: TLS and context off */
	bool untyped_cast;     /* the kernel casts to no type: the filter's one load (sysprobe.h) */
	bool unix_connects;    /* the kernel hooks Unix connects: failed ones seen (sysprobe.h) */
	__u32 grpc_fail_codes; /* gRPC codes that are failures, a bit each */
	bool grpc_fail_codes_set; /* else CLAIMD_GRPC_FAIL_DEFAULT */
};

struct observer;

/* The inode of the network namespace at path, as the kernel numbers it
 * (ns.inum): 0, or -errno (logged). */
int observer__netns_inode(const char *path, __u64 *ino);

/* Opens, configures and loads the programs, without attaching. NULL on error
 * (logged, with errno set). */
struct observer *observer__load(const struct observer_config *cfg);
int observer__attach(struct observer *obs);
void observer__destroy(struct observer *obs);

int observer__events_fd(const struct observer *obs);
int observer__conns_fd(const struct observer *obs);
int observer__traced_fd(const struct observer *obs);
/*
 * Process tgid's word in traced[] (CLAIMD_PROC_*): the bits set, then those
 * cleared, each atomically, as the programs change it; the word after.
 */
__u32 observer__proc_word(struct observer *obs, __u32 tgid, __u32 set, __u32 clear);
/* Each process whose word has any of bits, with its word, to fn; how many. */
int observer__procs_with(struct observer *obs, __u32 bits,
			 void (*fn)(__u32 tgid, __u32 word, void *arg), void *arg);
/* n added to process tgid's word, atomically (a listener: CLAIMD_PROC_LISTENER_ONE). */
void observer__proc_word_add(struct observer *obs, __u32 tgid, __u32 n);
/* The program files read (struct claimd_program_id -> the bits their processes get). */
int observer__programs_fd(const struct observer *obs);
/* claimd reads the programs of the processes it follows: those it has not are unread. */
void observer__read_programs(struct observer *obs, bool on);
/*
 * Where runtime.g keeps its goroutine id, for the programs to read at a
 * socket syscall of a Go program followed by its syscalls: set once, by
 * the first such program read (its value the same for every Go version
 * the offset table covers). True when off is the offset in use.
 */
bool observer__go_goid_offset(struct observer *obs, __u32 off);
bool observer__reads_programs(const struct observer *obs);
/* Per process: calls outside requests and its service's port (struct claimd_outside). */
int observer__outside_calls_fd(const struct observer *obs);
/* Listening sockets of followed processes by inode number, and their ports (headers/observer.h). */
int observer__listeners_fd(const struct observer *obs);
int observer__listen_ports_fd(const struct observer *obs);
/* The names of socket files served (bpf/observer.bpf.c; kernel/unix_served.h). */
int observer__unix_served_fd(const struct observer *obs);
/* ... and of those no listener was seen on: probes, and names asked of claimd. */
int observer__unix_unserved_fd(const struct observer *obs);
/* Task storage keyed by a pidfd: the mark traced[]'s processes carry (proc.bpf.h). */
int observer__proc_mark_fd(const struct observer *obs);
int observer__classes_fd(const struct observer *obs);
int observer__verdicts_fd(const struct observer *obs);
int observer__edge_counts_fd(const struct observer *obs);
int observer__service_counts_fd(const struct observer *obs);
/* claimd_forget_services (kernel/service_slots.h) */
int observer__service_forget_fd(const struct observer *obs);
/* What changed since claimd's last read of the counters (headers/counts.h). */
int observer__dirty_edges_fd(const struct observer *obs);
int observer__dirty_services_fd(const struct observer *obs);
/* claimd's read number, which the programs see (headers/counts.h). */
volatile __u32 *observer__count_epoch(struct observer *obs);
/* Asks the programs for every request's record (someone traces), or not. */
void observer__want_records(struct observer *obs, bool on);
/* The verdict map's pin, and whether this claimd took it over from an earlier one. */
const char *observer__verdicts_path(const struct observer *obs);
bool observer__verdicts_reused(const struct observer *obs);
/* Marks the verdict map alive (claimd running) or not, for libclaim. */
int observer__set_alive(struct observer *obs, bool alive);
/* n more (or fewer) followed sockets in the filter's slot (sock_marks); 0 or -errno. */
int observer__sock_mark(struct observer *obs, __u32 slot, int n);

/* Each loaded program's name, id and, when kernel.bpf_stats_enabled is 1,
 * run count and run time (ns), as a JSON array. */
struct json_object *observer__programs_json(const struct observer *obs);

/* Sums the per-CPU counters into out[CLAIMD_ST__COUNT]. */
int observer__stats(const struct observer *obs, __u64 out[CLAIMD_ST__COUNT]);
const char *observer__stat_name(int which);

/* The loaded object: the uprobe runtimes (probes/) find their programs and
 * maps in it by name, so that common code names none of them. */
struct bpf_object *observer__object(const struct observer *obs);
/* Takes the n links a runtime attached: detached with the rest at the end.
 * 0, or -ENOMEM (then they are detached now). */
struct bpf_link;
int observer__keep_links(struct observer *obs, struct bpf_link **links, int n);

/* Forgets the connections of processes that exited: in the table now, in
 * slots at the next sweep; returns how many now. */
int observer__forget_processes(struct observer *obs, const __u32 *tgids, int n);
/* Gives back the slots of the processes forgotten so far, if a sweep is
 * due (or now): how many, or -errno. Once a second. */
int observer__sweep_slots(struct observer *obs, bool now);
/* Connections forgotten that way since load. */
unsigned long observer__forgotten(const struct observer *obs);
/* The threads table (the contexts whose slot another thread holds), and
 * how many thread contexts are in slots (headers/observer.h). */
int observer__threads_fd(const struct observer *obs);
__u32 observer__thread_slots(const struct observer *obs);
/* How many connections' entries fit in slots (the rest: the conns table),
 * and is key's entry in its slot now (where a seeded one must not go twice)? */
__u32 observer__conn_slots(const struct observer *obs);
bool observer__conn_in_slot(const struct observer *obs, const struct claimd_conn_key *key);

#endif
