/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the skeleton-level tests (tests/bpf/test_kernel*.c): the
 * observer's skeleton loaded directly, filtered to this test process, its
 * ring buffer and maps read here; a scripted peer thread that answers,
 * resets, closes or holds the calls a test makes; a service trio (listener,
 * client, accepted socket) of real loopback sockets in this process. The
 * serving is done by the thread that calls the svc_* helpers, so its
 * ingress and the calls it makes meanwhile land in that thread's context.
 */
#ifndef CLAIMD_KERNEL_FIXTURE_H
#define CLAIMD_KERNEL_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "counts.h"
#include "kernel/io_attach.h"
#include "observer.h"
#include "test_progs.h"
#include "verdict.h"

#define KFIX_RECS_MAX 512

/* One record off the ring buffer, as the kernel wrote it. */
struct kfix_rec {
	union {
		struct claimd_rec_hdr hdr;
		struct claimd_ingress in;
		struct claimd_root_egress eg;
		struct claimd_listen listen;
	};
};

struct kfix {
	struct observer_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *io_links[IO_ATTACH_MAX]; /* tp_io_x beyond its own tracepoint */
	const struct claim_slot *slots;		  /* the verdict map, mmapped read-only */
	size_t slots_len;
	__u32 tgid;
	int ncpus;
	__u64 stats0[CLAIMD_ST__COUNT]; /* counters when the subtest began */
	struct kfix_rec *recs;		/* captured since the subtest began */
	int n_recs;
	int lost_recs; /* beyond KFIX_RECS_MAX */
};

/* Opens, configures, loads and attaches the observer; false (and asserted) on failure. */
bool kfix_open(struct kfix *f);
/* The same, also filtered to the network namespace of inode netns (claimd --netns). */
bool kfix_open_netns(struct kfix *f, __u64 netns);
void kfix_close(struct kfix *f);
/* A subtest starts: records drained and forgotten, counters noted, classes
 * cleared, the process's flags and the calling thread's context reset. */
void kfix_begin(struct kfix *f);
/* Moves what the ring buffer holds into f->recs. */
void kfix_drain(struct kfix *f);
/* The nth (from 0) ingress served on local port 'port', after a drain. */
const struct claimd_ingress *kfix_ingress(struct kfix *f, int port, int nth);
int kfix_count_ingress(struct kfix *f, int port);
/* The nth root egress (a call outside any ingress) to callee port 'port'. */
const struct claimd_egress *kfix_root(struct kfix *f, int port, int nth);
const struct claimd_listen *kfix_listen(struct kfix *f, int port, bool closed);
/* How many thread context slots there are; who holds the one tid's id
 * names (0: free; -1 unreadable); that slot written with a fresh context
 * held by holder (0: freed). */
__u32 kfix_thread_slots(struct kfix *f);
__u32 kfix_thread_slot(struct kfix *f, __u32 tid);
int kfix_thread_slot_set(struct kfix *f, __u32 tid, __u32 holder);
/* How many connection slots there are; who holds the one (this process,
 * fd) points at (a claimd_conn_slot_word; 0: free; -1 unreadable); that
 * slot written held by owner (0: freed); is (this process, fd) in the conns
 * table; claimd_forget_slots run as claimd runs it for a process gone:
 * how many slots it gave back, or -errno. */
__u32 kfix_conn_slots(struct kfix *f);
__u64 kfix_conn_slot(struct kfix *f, int fd);
int kfix_conn_slot_set(struct kfix *f, int fd, __u64 owner);
bool kfix_conn_in_table(struct kfix *f, int fd);
int kfix_forget_slots(struct kfix *f, __u32 tgid);
/* A counter's growth since kfix_begin, summed over CPUs. */
__u64 kfix_stat(struct kfix *f, enum claimd_stat which);
/* The socket filter: the count of followed sockets in sock_marks' slot;
 * claimd's change to it (claimd_mark, run as claimd runs it for what it
 * seeds), 0 or -errno. */
__u32 kfix_sock_marks(struct kfix *f, __u32 slot);
int kfix_sock_mark(struct kfix *f, __u32 slot, int n);
/* Writes the class of the edge (this process, service port) -> 127.0.0.1:callee. */
int kfix_set_class(struct kfix *f, int service_port, int callee_port, __u8 cls);
/* The kernel's counts (headers/counts.h) of the edge (this process, service
 * port) -> 127.0.0.1:callee and of the service instance, summed over CPUs;
 * false when the kernel has none. */
bool kfix_edge_counts(struct kfix *f, int service_port, int callee_port,
		      struct claimd_edge_counts *out);
/* Service slot idx (headers/counts.h) on every CPU: owner and requests written, 0 or -errno. */
int kfix_service_slot_set(struct kfix *f, __u32 idx, __u64 owner, __u64 requests);
/* How many CPUs' copies of service slot idx have this owner and requests; -1: unread. */
int kfix_service_slot_cpus(struct kfix *f, __u32 idx, __u64 owner, __u64 requests);
/* claimd_forget_services for owner: its slots zeroed and freed on every CPU. */
int kfix_service_forget(struct kfix *f, __u64 owner);
bool kfix_service_counts(struct kfix *f, int service_port, struct claimd_service_counts *out);
/* The root edge's counts: process tgid's calls outside requests to 127.0.0.1:callee. */
bool kfix_root_counts(struct kfix *f, pid_t tgid, int callee_port, struct claimd_edge_counts *out);
/* The counts of the edge (process tgid, service port) -> 127.0.0.1:callee. */
bool kfix_proc_edge_counts(struct kfix *f, pid_t tgid, int service_port, int callee_port,
			   struct claimd_edge_counts *out);
/* Follows process tgid too (a child of this one). */
bool kfix_follow(struct kfix *f, pid_t tgid);
/* Asks for every request's record (as while claimd traces; the default here), or none. */
void kfix_records(struct kfix *f, bool on);
/* Sets claimd's read number, which the programs note changed counters under. */
void kfix_count_epoch(struct kfix *f, __u32 epoch);
/*
 * How often the dirty lists of epoch name the edge (this process, service
 * port) -> 127.0.0.1:callee (the low byte) and the service instance (times
 * 0x100), over all CPUs; -1 if they cannot be read. *overflow: a list
 * overflowed.
 */
int kfix_dirty(struct kfix *f, __u32 epoch, int service_port, int callee_port, bool *overflow);
/* The calling thread's slot in the verdict map, copied consistently. */
bool kfix_slot(struct kfix *f, struct claim_slot *out);

/* What the peer does with each request it reads, in order. */
enum peer_act {
	PEER_ANSWER, /* writes 'resp', keeps the connection */
	PEER_RESET,  /* closes with RST */
	PEER_CLOSE,  /* closes with FIN, no answer */
	PEER_HOLD,   /* waits for the caller to close, then closes */
};

#define PEER_STEPS_MAX 32

struct peer_step {
	enum peer_act act;
	const char *resp;
};

struct peer {
	int lfd;
	int port;
	int conn; /* the connection being served, -1 between them */
	pthread_mutex_t lock;
	pthread_t th;
	bool running;
	int n_steps;
	int done; /* steps carried out */
	struct peer_step steps[PEER_STEPS_MAX];
};

/* Starts a peer thread listening on 127.0.0.1 that carries out steps[0..n-1]. */
bool peer_start(struct peer *p, const struct peer_step *steps, int n);
/* The same, listening on fd (bound, not listening yet: connects to it are refused). */
bool peer_start_on(struct peer *p, int fd, const struct peer_step *steps, int n);
/* n steps, each answering 'resp'. */
bool peer_start_answers(struct peer *p, const char *resp, int n);
/* Unblocks, joins and closes: safe on every path, also on a peer not started. */
void peer_stop(struct peer *p);

/* A service on loopback: listener, a client connected to it, the accepted socket. */
struct svc {
	int lfd;
	int port;
	int cfd;	 /* the client's socket */
	int afd;	 /* the service's accepted socket */
	int client_port; /* the client's local port */
};

bool svc_open(struct svc *s);
/* One more client of the same listener: a new cfd/afd pair in 'out' (lfd -1). */
bool svc_connect(const struct svc *s, struct svc *out);
void svc_close(struct svc *s);

/* What one subtest holds: a service, a peer, and the service's kept-alive
 * connection to the peer (u, -1 when none). */
struct kcase {
	struct svc s;
	struct peer p;
	int u;
};

/* kfix_begin, then the service, and a peer carrying out steps[0..n-1] if n. */
bool kcase_open(struct kfix *f, struct kcase *c, const struct peer_step *steps, int n);
/* The same with a peer answering 'resp' n times. */
bool kcase_answers(struct kfix *f, struct kcase *c, const char *resp, int n);
/* Closes what is open, on every path. */
void kcase_close(struct kcase *c);

/* The client sends req and the service (this thread) reads it: an ingress opens. */
bool svc_request(struct svc *s, const char *req);
/* The service answers resp and the client reads its head: the ingress ends. */
bool svc_answer(struct svc *s, const char *resp);
/* The service reads n request heads from afd (bodies are not expected). */
bool svc_read_heads(int fd, int n, size_t chunk);
/* A call: connect to port, write the request, read the response head; the
 * connection is returned (kept alive) in *fd, or closed when fd is NULL. */
bool call_once(int port, int *fd, const char *req);
/* On an open connection: write the request, read the response head. */
bool call_on(int fd, const char *req);
/* Writes all of buf, in pieces of 'piece' bytes (one syscall each). */
bool write_pieces(int fd, const char *buf, size_t piece);
/* A TCP socket bound to 127.0.0.1 and a free port, not listening; -1 on error. */
int sock_bound(int *port);
/* A blocking socket whose reads and writes give up after two seconds. */
void sock_deadline(int fd);
/* The target hash the kernel computes for the request line in req. */
__u32 req_hash(const char *req);
/* Is a the loopback address (IPv4 mapped) with this port? */
bool addr_is(const struct claimd_addr *a, int port);
__u32 self_tid(void);

/*
 * Exact checks of a record, each field asserted (so a failure names them
 * all); true when every one held. req is the request line's message (all
 * requests are GETs), NULL for a call that never wrote one.
 */
bool kfix_check_ingress(const struct claimd_ingress *in, const struct svc *s, const char *req,
			int status, int n_egress);
bool kfix_check_verdict(const struct claimd_ingress *in, int verdict, int rule, int cause);
bool kfix_check_egress(const struct claimd_egress *e, int port, const char *req, int status,
		       int flags);

/* The same, asserted once more where they are called from (file and line). */
#define CHECK_INGRESS(...) ASSERT_TRUE(kfix_check_ingress(__VA_ARGS__), "ingress record")
#define CHECK_VERDICT(...) ASSERT_TRUE(kfix_check_verdict(__VA_ARGS__), "verdict")
#define CHECK_EGRESS(...)  ASSERT_TRUE(kfix_check_egress(__VA_ARGS__), "egress entry")
/* An entry of an ingress's log, made by its thread: awaited too (CLAIMD_EG_AWAITED). */
#define CHECK_LOGGED(e, port, req, status, flags) \
	CHECK_EGRESS(e, port, req, status, (flags) | CLAIMD_EG_AWAITED)

/* Subtests of test_kernel, by file. */
void kernel_verdict_subtests(struct kfix *f);

#endif
