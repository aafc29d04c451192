// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The observer: tracepoints that follow TCP connections carrying HTTP/1.x,
 * count what their requests and calls add up to, and hand claimd records
 * when it asks (one per finished ingress, with the egress calls its thread
 * made, and per call made outside any ingress).
 *
 * Cost is paid by every process on the host, so a connection's bytes are
 * taken where a socket's bytes move (the sock tracepoints: no program runs
 * for a file's, a pipe's or a terminal's), their syscall's arguments from
 * the task's saved registers, and a socket no followed connection holds
 * leaves before any helper call (sock_marks). Sockets are seen born and
 * seen end where TCP changes their state (sockstate.c): no syscall
 * tracepoint, whose mere presence puts every syscall of every process on
 * the kernel's slow path. A socket becomes a connection at its first bytes
 * (claimd seeds the ones that already existed).
 */
/*
 * One compile unit, one skeleton: this file owns the load-time
 * configuration and every map of the mechanism and of the syscall path:
 * each is declared here once, with its key and value, its size, who adds an
 * entry and who removes it (or what bounds it when nothing does). A runtime
 * in bpf/runtimes/ declares its own maps the same way, in its own file. claimd and the tests find maps by these
 * names. Helpers are in the bpf/ headers named .bpf.h (static functions
 * only); programs and their global functions are in the fragments included
 * at the end, named .c because they are pieces of this unit, in the order
 * their calls need.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>

#include "observer.h"
#include "verdict.h"
#include "outcome.h"
#include "counts.h"
#include "scan.bpf.h"
#include "tls.bpf.h"
#include "goprobe.h"
#include "sysnr.bpf.h"
#include "unixaddr.h"
#include "wire.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load-time configuration (rodata). */
const volatile __u32 self_tgid = 0;	    /* claimd itself: never traced */
const volatile __u32 filter_flags = 0;	    /* CLAIMD_FILTER_* */
const volatile __u64 filter_cgroup = 0;	    /* cgroup v2 id for CLAIMD_FILTER_CGROUP */
const volatile __u32 filter_netns = 0;	    /* network namespace inode for CLAIMD_FILTER_NETNS */
const volatile __u32 sock_head_untyped = 0; /* bpf_rdonly_cast to no type loads (sock.bpf.h) */

/*
 * Sockets we follow, by (tgid, fd), whose entry is not in its slot
 * (conn_slots, below). Added by a socket's first bytes (sockio.c,
 * conn_adopt) and by claimd's seeding; removed at the socket's end or when
 * its fd names another socket (conn_forget), and by claimd for a process
 * that exited. Full, the oldest goes (LRU). claimd sizes it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_CONNS_MAX);
	__type(key, struct claimd_conn_key);
	__type(value, struct claimd_conn);
} conns SEC(".maps");

/*
 * Where most connections' entries live instead: the slot their name points
 * at (claimd_conn_slot_index), taken at the first bytes if free, given back
 * at the end (bpf/connslot.c). The read and write path finds the entry
 * there with one inlined load, where the table's lookup cost a hash, a
 * bucket and the entry's own cold line. A connection whose slot another
 * holds, or one claimd seeded, is in conns. claimd sizes both
 * (user/claimd/kernel/slots.c).
 */
const volatile __u32 conn_slots_mask = CLAIMD_CONNS_MAX / 2 - 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* claimd reads the owners in place (kernel/slots.c) */
	__uint(max_entries, CLAIMD_CONNS_MAX / 2);
	__type(key, __u32);
	__type(value, struct claimd_conn_slot);
} conn_slots SEC(".maps");

/*
 * A word per tgid: does this process own a socket we follow (and the other
 * PROC_* bits)? The first test on every syscall, so untraced processes leave
 * after one array load. Set by the programs (proc_flag_set) and by claimd's
 * seeding and Go probing; zeroed at the process's exit (tp_proc_exit).
 * Sized to pid_max by claimd.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* claimd changes a word's bits atomically */
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u32);
} traced SEC(".maps");

/*
 * The program files claimd has read (struct claimd_program_id), each with
 * the bits a process running it gets in its word (CLAIMD_PROC_GO: the Go
 * probes follow it; 0: its syscalls do). A process followed while running
 * one not here is unread (CLAIMD_PROC_UNREAD) until claimd reads it: its
 * program might be one the syscalls cannot follow. Written by claimd only.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLAIMD_PROGRAMS_MAX);
	__type(key, struct claimd_program_id);
	__type(value, __u32);
} programs SEC(".maps");

/* claimd reads the programs of the processes it follows (its uprobe walk runs): set by it. */
volatile __u32 programs_read = 0;

/*
 * Per tgid (struct claimd_outside): how many times a call outside any
 * request began or ended in the process, while it serves (proc.bpf.h,
 * outside_calls_add), and its service's port. A request whose process
 * counted one while it was open may have been served by a call another
 * thread made for it: unknown. The count is only ever added to, never
 * reset: a request compares the count at its end with the one at its
 * start, so a reused pid's old count is harmless. The port is zeroed at the
 * process's exit (tp_proc_exit): a reused pid serves nothing until it
 * does. Sized to pid_max by claimd.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct claimd_outside);
} outside_calls SEC(".maps");

/*
 * A mark on the group leader of each process traced[] names (set with its
 * word, by the programs, by claimd's seeding and at exec): an untraced
 * process is told by its leader having no task storage at all, without
 * touching traced[]'s page (proc.bpf.h). Task storage: it goes with the
 * task, nobody removes it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u8);
} proc_mark SEC(".maps");

/*
 * A service using libclaim's explicit context (claim_context_enter): which
 * inbound connection each of its threads is working for right now (by tid;
 * added by ctx_enter, removed by ctx_leave: a thread that exits inside a
 * context leaves its entry until a thread of the same tid enters
 * or leaves one), and the ingress
 * of each such connection, with its egress log (added when the connection's
 * first request opens, owner_ctx_get; removed with the connection,
 * conn_forget; full, the oldest goes).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, __u32);
	__type(value, struct claimd_conn_key);
} thread_cur SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, struct claimd_conn_key);
	__type(value, struct claimd_thread);
} conn_ctx SEC(".maps");

/*
 * The ingress each thread is serving, with its egress log: in the slot its
 * thread id names (tid & thread_slots_mask), which a thread takes for
 * itself the first time it serves a request (thread_slot_take) and gives
 * back when it exits (thread_slot_free); one inlined load, where a hash
 * lookup cost a bucket and a hash, twice a request. A thread whose slot
 * another one holds has its context in threads (added by owner_ctx_get,
 * never removed: an idle context is reused by its thread's next request,
 * and the oldest goes when the map is full). claimd sizes both
 * (user/claimd/kernel/slots.c).
 */
const volatile __u32 thread_slots_mask = CLAIMD_THREADS_MAX / 2 - 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* its values page-aligned: a slot's lines its own */
	__uint(max_entries, CLAIMD_THREADS_MAX / 2);
	__type(key, __u32);
	__type(value, struct claimd_thread_slot);
} thread_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX / 2);
	__type(key, __u32);
	__type(value, struct claimd_thread);
} threads SEC(".maps");

/* Records to claimd (headers/observer.h, CLAIMD_REC_*); a full ring is counted. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CLAIMD_RINGBUF_SZ);
} events SEC(".maps");

/* Counters (CLAIMD_ST_*), per CPU; claimd sums and reads them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CLAIMD_ST__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Where the syscall programs copy the bytes they frame (stream.c). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scan_buf);
} scratch SEC(".maps");

/*
 * The same for the TLS probes, per thread: a uprobe's program can be
 * preempted (since Linux 6.0), and the program that runs next on its CPU
 * would overwrite a per-CPU window it was framing. Made at a thread's first
 * SSL call with bytes to frame (ssl_exit); it goes with the task.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct scan_buf);
} tls_scratch SEC(".maps");

/*
 * Filters: processes and service ports to follow (when enabled). claimd
 * fills them at start; the processes --pid follows add their children as
 * they fork (tp_proc_fork), and each leaves at its exit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u16);
	__type(value, __u8);
} port_filter SEC(".maps");

/*
 * The sockets conns follows, counted by slot (headers/observer.h,
 * claimd_sock_slot). A global array (.bss), not an array map: tp_io_x reads
 * it on every TCP read and write of the host, and a global is one load from
 * an address the program holds, where a map's lookup stores the key, loads
 * it back and checks it and the value's pointer (4 ns a run here:
 * docs/performance.md). claimd changes it through claimd_mark.
 */
__u32 sock_marks[CLAIMD_SOCK_MARKS];

/*
 * TCP sockets born while claimd runs (sockstate.c), by their kernel
 * address, from their birth to their end: the connection each became at
 * its first bytes (conns), so that its end finds it whatever closed it.
 * As many as conns holds, 32,768 at least (claimd sizes it); full, the
 * oldest goes, and a socket that had not moved bytes yet goes unfollowed.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_CONNS_MAX);
	__type(key, __u64);
	__type(value, struct claimd_sock);
} socks SEC(".maps");

/*
 * The accepted ends of Unix stream connections a followed process made,
 * counted by slot (unix_slot, bpf/unix.bpf.h): the server's bytes on one
 * pass tp_io_x's filter though its process is not followed yet, and it
 * becomes followed at its first bytes (bpf/unixsock.c). Raised by the
 * client's first bytes, lowered by the server's (or left behind if the
 * server never moves any: the cost of a lookup for another socket in
 * the slot). A global array, as sock_marks.
 */
__u32 unix_marks[CLAIMD_UNIX_MARKS];

/*
 * Socket files a followed process was seen serving on, by (process, name
 * hash): the first connection it takes on one makes a listener record for
 * claimd's names (no state change shows a Unix listener). Added by
 * bpf/unixsock.c; full, the oldest goes (a record again, harmless).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct unix_service_key);
	__type(value, __u8);
} unix_services SEC(".maps");

/*
 * The names of socket files a followed process was seen serving on, or
 * talking to as a client (their hash, headers/unixaddr.h): put by
 * bpf/unixsock.c at each connection it follows, and by claimd from the
 * host's listeners and the dead servers' files it finds; full, the oldest
 * goes. A failed connect to a name here is a failed call; to another, a
 * probe or unsure (bpf/connects.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} unix_served SEC(".maps");

/*
 * Names of socket files no listener was seen on that followed processes
 * connected to for a request (their hash -> CLAIMD_UNSERVED_*): the
 * probes claimd lists (nscd's), put at its start; the others put here
 * once asked of claimd (bpf/connects.c). Full, the oldest goes, and is
 * asked again.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} unix_unserved SEC(".maps");

/*
 * Connects whose failure no state change shows (to a socket file; over
 * TCP, before the SYN), begun by followed processes while serving a
 * request, by the request's holder (struct claimd_owner): put where the
 * connect begins (bpf/connects.c, the cgroup hooks), dropped when a TCP
 * one's SYN leaves (sockstate.c), taken at the holder's next answer
 * written, when the connect has returned; one a holder (the latest).
 * Full, the oldest goes: its outcome unread, as if claimd did not follow
 * connects.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct claimd_owner);
	__type(value, struct claimd_connect_note);
} connect_notes SEC(".maps");

/*
 * The connects a Go program framed by its syscalls makes on goroutines
 * serving no request (net/http dials on goroutines of its own), by
 * process: one slot a connect under way or not yet read, taken where it
 * begins (bpf/connects.c, go_dial_put), given back when its SYN leaves or
 * at any answer the process writes once it has returned (go_dials_settle).
 * Kept apart from connect_notes, one a holder: a process's dials overlap.
 * Gone at the process's exit.
 */
#define GO_DIAL_SLOTS 16

struct go_dial {
	__u64 sk;     /* the connecting socket's address; 0: the slot is free */
	__u64 cookie; /* ... and its cookie */
	__u64 task;   /* the connecting thread's task_struct */
	__u32 tid;    /* ... and its id: a task's memory another's once it exits */
	__u32 armed;  /* 0 while the slot is filled or given back; else GO_DIAL_* bits */
};

#define GO_DIAL_ARMED  1
#define GO_DIAL_TCP    2
#define GO_DIAL_COOKIE 2 /* armed's bits from here on: the socket's cookie's low ones */

struct go_dials {
	struct go_dial d[GO_DIAL_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct go_dials);
} go_dials SEC(".maps");

/*
 * The framer of each outbound connection that speaks Redis, PostgreSQL or
 * MySQL (bpf/wire.c), by the connection's key: added when its first bytes
 * say so, removed with the connection (conn_forget); full, the oldest
 * goes, and that connection's calls are no longer seen (counted). A
 * quarter as many as connections: pools to databases and caches are a
 * host's smaller part.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_WIRE_CONNS_MAX);
	__type(key, struct claimd_conn_key);
	__type(value, struct wire_conn);
} wire_conns SEC(".maps");

/*
 * Listening sockets of followed processes, by inode number: added at
 * listen (sockstate.c) or by claimd's seeding, removed at their close.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct claimd_listener);
} listeners SEC(".maps");

/*
 * The ports they listen on, counted: a connection taken there is born under
 * watch. Added and removed with the listeners (sockstate.c), seeded by claimd.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct claimd_listen_port);
	__type(value, __u32);
} listen_ports SEC(".maps");

/* Per-CPU room to build a connection entry: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct claimd_conn);
} conn_tmp SEC(".maps");

/* Only processes under this cgroup (v2), when CLAIMD_FILTER_CGROUP is set. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* A status at or above this is a failure (claimd --fail-status). */
const volatile __u32 fail_status_min = 500;
/* The gRPC codes that are failures, a bit each (claimd --grpc-fail-codes). */
const volatile __u32 grpc_fail_codes = CLAIMD_GRPC_FAIL_DEFAULT;

/* Edge classes, written and removed by claimd (recent window, else memory); read by verdict_of. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLAIMD_CLASSES_MAX);
	__type(key, struct claimd_edge_key);
	__type(value, __u8);
} edge_class SEC(".maps");

/*
 * What answered requests add up to (headers/counts.h), per CPU: per service
 * instance and per edge (caller instance, callee endpoint). claimd reads
 * them each tick and deletes a process's entries after it exits (a
 * service's slots given back: claimd_forget_services). Edges are allocated
 * as they appear; a full map, or a service whose slots others hold,
 * refuses, and that request goes to claimd as a record
 * (CLAIMD_IN_UNCOUNTED, CLAIMD_EG_UNCOUNTED), counted there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, CLAIMD_EDGES_MAX);
	__type(key, struct claimd_edge_key);
	__type(value, struct claimd_edge_counts);
} edge_counts SEC(".maps");

/* Services: in slots, each owned per CPU (claimd_service_slot, headers/counts.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CLAIMD_SERVICES_MAX);
	__type(key, __u32);
	__type(value, struct claimd_service_counts);
} service_counts SEC(".maps");

/*
 * A process's retry memory for its root calls (headers/counts.h): its last
 * call to each of a few callee endpoints, on its group leader, so that it
 * goes with the process. A callee beyond ROOT_MEMORY_SLOTS takes the oldest
 * slot: that callee's next call is not judged a retry (never one too many).
 */
#define ROOT_MEMORY_SLOTS 4

struct root_memory_slot {
	struct claimd_addr callee;
	__u32 pad;
	struct claimd_root_last last;
};

struct root_memory {
	struct root_memory_slot slot[ROOT_MEMORY_SLOTS];
	__u32 next;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct root_memory);
} root_memory SEC(".maps");

/*
 * Per CPU, by the parity of claimd's read (count_epoch): the counters that
 * changed since it read them (headers/counts.h, struct claimd_dirty_*).
 * The programs append (dirty_claim); claimd empties a list after reading it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct claimd_dirty_edges);
} dirty_edges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct claimd_dirty_services);
} dirty_services SEC(".maps");

volatile __u32 count_epoch = 0; /* claimd's read, numbered */

/* Per CPU: the last id given to a counted request (headers/counts.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} count_ids SEC(".maps");

/*
 * Per-request records go to claimd only while it asks for them (someone
 * traces: claimd sets records_on), one in sample_every requests otherwise
 * (0: none), and always for what the counters could not take.
 */
volatile __u32 records_on = 0;
const volatile __u32 sample_every = 0;

/*
 * The read-only shared map libclaim reads: slot 0 a header (claimd_hdr),
 * then one slot per thread (by tid), rewritten in place (slot_write).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, CLAIM_SLOTS);
	__type(key, __u32);
	__type(value, struct claim_slot);
} verdicts SEC(".maps");

/*
 * An SSL call in progress on a thread (tls.c): added at its entry
 * (ssl_enter), removed at its return (ssl_exit); a thread that dies inside
 * one leaves its entry until its tid makes another.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct ssl_call);
} ssl_calls SEC(".maps");

/*
 * SSL pointer -> socket, learned from the syscalls of earlier calls
 * (tls_note_fd, tls_tie); removed when the socket goes (tls_forget); full,
 * the oldest goes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ssl_key);
	__type(value, __s32);
} ssl_fds SEC(".maps");

/*
 * The TLS socket a thread moved raw bytes on outside any SSL call (a
 * memory-BIO service, tls.c): added by tls_note_fd, removed at the
 * thread's next SSL call's return (ssl_exit); full, the oldest goes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, __u32); /* tid */
	__type(value, struct tls_recent);
} tls_recent SEC(".maps");

#include "proc.bpf.h"
#include "sock.bpf.h"
#include "service_env.bpf.h"
#include "unix.bpf.h"

/* The mechanism: verdicts and counting, then what every runtime hands it. */
#include "verdict.c"
#include "counts.c"
#include "runtime.bpf.h"
#include "handoff.bpf.h"
#include "node.bpf.h"
#include "goroutine.bpf.h"
/* The syscall path (its framers take OpenSSL's plaintext too: tls.c before sockio.c). */
#include "connslot.c"
#include "ingress.c"
#include "keyed.c"
#include "scan.c"
#include "stream.c"
#include "wire.c"
#include "tls.c"
#include "context.c"
#include "sockio.c"
#include "sockstate.c"
#include "go_dials.c"
#include "connects.c"
#include "unixsock.c"
/*
 * Runtimes that hand over parsed requests (bpf/runtimes/<runtime>.c), each
 * a fragment that owns its own maps, after all it calls: the build lists
 * every file of the folder (runtimes.bpf.inc), so a new runtime is a new
 * file and no edit here.
 */
#include "runtimes.bpf.inc"
