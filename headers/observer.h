/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The observer's ABI: what the BPF programs in bpf/observer.bpf.c and claimd
 * in user/ both see. Map keys and values, the records on the ring buffer,
 * the counters. Fixed-width types only; layouts change together with
 * CLAIMD_RECORD_VERSION.
 */
#ifndef CLAIMD_OBSERVER_H
#define CLAIMD_OBSERVER_H

#include "http_parse.h"

#define CLAIMD_RECORD_VERSION 3

#define CLAIMD_ADDR_LEN	   16 /* IPv6, or IPv4 mapped into IPv6 */
#define CLAIMD_COMM_LEN	   16
#define CLAIMD_SERVICE_LEN 128 /* a CLAIMD_SERVICE value, its NUL included */
#define CLAIMD_EGRESS_MAX  16  /* egress log entries per ingress */
#define CLAIMD_FIFO_MAX	   8   /* requests remembered per connection (pipelining) */
#define CLAIMD_NO_SLOT	   0xff

/* Default map sizes; claimd can change them before loading. */
#define CLAIMD_CONNS_MAX    32768
#define CLAIMD_THREADS_MAX  8192
#define CLAIMD_RINGBUF_SZ   (8u << 20)
#define CLAIMD_CLASSES_MAX  16384 /* edge classes in the kernel */
#define CLAIMD_EDGES_MAX    16384 /* edge counters in the kernel (headers/counts.h) */
#define CLAIMD_SERVICES_MAX 4096  /* service instances counted in the kernel */

/*
 * What an outbound connection speaks, told by its first bytes (bpf/wire.c):
 * a call's protocol. A database's or a cache's call ends with an answer or
 * an error reply (headers/wire_parse.h); HTTP's with a status.
 */
enum claimd_proto {
	CLAIMD_PROTO_HTTP = 0,	   /* HTTP, or not told yet */
	CLAIMD_PROTO_OTHER = 1,	   /* none claimd frames: its calls are not seen (opaque) */
	CLAIMD_PROTO_REDIS = 2,	   /* RESP2/RESP3 (headers/resp_parse.h) */
	CLAIMD_PROTO_POSTGRES = 3, /* protocol v3 (headers/pgwire_parse.h) */
	CLAIMD_PROTO_MYSQL = 4,	   /* MySQL and MariaDB (headers/mysql_parse.h) */
	CLAIMD_PROTO__COUNT,
};

enum claimd_role {
	CLAIMD_ROLE_NONE = 0,
	CLAIMD_ROLE_LISTENER = 1,
	CLAIMD_ROLE_INBOUND = 2,  /* accepted: we serve requests on it */
	CLAIMD_ROLE_OUTBOUND = 3, /* connected: we make calls on it */
};

/* claimd_conn.flags */
#define CLAIMD_CONN_SEEDED 0x01 /* found at start; parsing joined mid-stream */
#define CLAIMD_CONN_UNIX   0x02 /* a Unix stream socket (bpf/unixsock.c): no state change ends it */
#define CLAIMD_CONN_FAILED 0x04 /* transport failure already reported */
#define CLAIMD_CONN_SENT   0x08 /* a request was written */
#define CLAIMD_CONN_SEQ	   0x10 /* outbound TCP: tx_seq holds its write_seq as of its last write */
#define CLAIMD_CONN_TLS	   0x20 /* TLS: raw bytes skipped, plaintext from SSL_* probes */
#define CLAIMD_CONN_HTTP   0x40 /* a message was framed on it: not TLS */
/* outbound TLS its process's probes do not decipher (bpf/tls.c, tls_unseen): calls not seen */
#define CLAIMD_CONN_TLS_UNSEEN 0x80

/* claimd_conn.lost */
#define CLAIMD_LOST_RX 0x01 /* what this process reads */
#define CLAIMD_LOST_TX 0x02 /* what it writes */

/* claimd_egress.flags */
#define CLAIMD_EG_DONE	    0x01 /* response status seen, or failed */
#define CLAIMD_EG_TRANSPORT 0x02 /* refused, reset, or closed before a response */
#define CLAIMD_EG_CONNECT   0x04 /* the connect itself failed */
#define CLAIMD_EG_RETRY	    0x08 /* repeats the previous failed egress */
#define CLAIMD_EG_LATE	    0x10 /* finished after its ingress had answered */
#define CLAIMD_EG_LOST	    0x20 /* its answer's framing was lost: outcome unknown */
#define CLAIMD_EG_UNCOUNTED 0x40 /* the edge counters were full: claimd counts it from the record */
/*
 * Made by the thread serving its request, which waits for the answer: one
 * still without an end when the request is answered was given up (a
 * timeout), a failure (headers/outcome.h). Not set for Go's goroutines, nor
 * in an explicit context, where a call may be left to finish on its own.
 */
#define CLAIMD_EG_AWAITED 0x80

/* claimd_ingress.flags */
#define CLAIMD_IN_MUX	    0x01 /* the thread juggled another request meanwhile */
#define CLAIMD_IN_NOCTX	    0x02 /* served without its thread context: no egress log */
#define CLAIMD_IN_CLOSED    0x04 /* connection closed before a response */
#define CLAIMD_IN_PEER_GONE 0x08 /* response written after the client went away */
#define CLAIMD_IN_BLIND	    0x10 /* its thread moved bytes on a connection whose framing was lost */
#define CLAIMD_IN_UNTIED    0x20 /* it made a call claimd could not follow (TLS untied, log full) */
#define CLAIMD_IN_LOST	    0x40 /* its own response's framing was lost: status unknown */
#define CLAIMD_IN_UNCOUNTED \
	0x80 /* the service counters were full: claimd counts it from the record */
#define CLAIMD_IN_GO \
	0x100 /* a Go request, its goroutine known (bpf/runtimes/go.c, bpf/goroutine.bpf.h) */
/* its thread talked to a dependency in another protocol than HTTP (a database): no call to judge */
#define CLAIMD_IN_OPAQUE 0x200
/*
 * An event loop's request (its process served two at once on a thread),
 * held by its connection: its calls are those the process sent with its id
 * or relayed it in (bpf/keyed.c); any other call of the process made while
 * it was open makes it unknown (untied-call).
 */
#define CLAIMD_IN_KEYED 0x400
/* A keyed request with a call tied to it by the id both carry, or as its relay (keyed.c). */
#define CLAIMD_IN_TIED_ID    0x800
#define CLAIMD_IN_TIED_RELAY 0x1000
/* ... by nginx's probe, where its request met the upstream connection (bpf/runtimes/nginx.c). */
#define CLAIMD_IN_TIED_NGINX 0x2000
/* ... by Node.js's async context: the request its parser's callbacks run for (bpf/runtimes/node.c). */
#define CLAIMD_IN_TIED_NODE 0x4000
/*
 * An event loop's request a key of which could not be counted
 * (bpf/req_keys.bpf.h): a stray of its process while open (bpf/keyed.c).
 */
#define CLAIMD_IN_KEY_STRAY 0x8000

enum claimd_record_type {
	CLAIMD_REC_INGRESS = 1, /* struct claimd_ingress, n_egress entries long */
	CLAIMD_REC_EGRESS = 2,	/* struct claimd_root_egress: a call outside any ingress */
	CLAIMD_REC_LISTEN = 3,	/* struct claimd_listen */
	CLAIMD_REC_EXIT = 4,	/* struct claimd_exit */
	CLAIMD_REC_UNREAD = 5,	/* struct claimd_exit: a followed process whose program is unread */
	CLAIMD_REC_EXEC = 6,	/* struct claimd_exit: a process began a program not read yet */
	CLAIMD_REC_SOCKET_FILE = 7, /* struct claimd_socket_file */
};

/*
 * Counters in the stats map, one slot each (per CPU; claimd sums). Those
 * that move with every request or call come first, in one cache line.
 */
enum claimd_stat {
	CLAIMD_ST_RECORDS = 0,	    /* records submitted */
	CLAIMD_ST_INGRESS,	    /* ingresses started */
	CLAIMD_ST_EGRESS,	    /* egresses started */
	CLAIMD_ST_COUNTED,	    /* requests counted in the kernel (headers/counts.h) */
	CLAIMD_ST_ROOT_CALLS,	    /* root calls counted in the kernel */
	CLAIMD_ST_CONNS,	    /* connections tracked */
	CLAIMD_ST_CONN_CLOSED,	    /* connections no longer followed: closed or fd replaced */
	CLAIMD_ST_THREAD_CTXS,	    /* thread contexts made in threads (their slot held) */
	CLAIMD_ST_RB_DROPS,	    /* records lost: ring buffer full */
	CLAIMD_ST_EGRESS_OVERFLOW,  /* egress beyond CLAIMD_EGRESS_MAX, not logged */
	CLAIMD_ST_FIFO_OVERFLOW,    /* pipelined requests beyond CLAIMD_FIFO_MAX */
	CLAIMD_ST_PARSE_ERRORS,	    /* streams that were not HTTP/1.x or lost framing */
	CLAIMD_ST_PARSE_RESYNC,	    /* junk skipped on connections joined mid-stream */
	CLAIMD_ST_PARSE_TRUNCATED,  /* bytes past the parse budget of one syscall */
	CLAIMD_ST_UNMATCHED,	    /* responses with no request waiting for them */
	CLAIMD_ST_CONN_FULL,	    /* connections not tracked: table full */
	CLAIMD_ST_THREAD_FULL,	    /* thread contexts not created: table full */
	CLAIMD_ST_MUX,		    /* a thread began an ingress with another one open */
	CLAIMD_ST_TLS_CONNS,	    /* connections found to carry TLS */
	CLAIMD_ST_TLS_UNBOUND,	    /* SSL calls whose socket could not be found */
	CLAIMD_ST_CTX_LOST,	    /* answered requests whose thread context was evicted */
	CLAIMD_ST_ABANDONED,	    /* requests whose connection was evicted before the answer */
	CLAIMD_ST_FRAMING_LOST,	    /* a direction of a connection lost its framing */
	CLAIMD_ST_FRAMING_HEALED,   /* ... and found a message start again */
	CLAIMD_ST_BLIND,	    /* ingresses made unknown: bytes moved on a lost connection */
	CLAIMD_ST_UNTIED,	    /* ingresses made unknown: a call that could not be followed */
	CLAIMD_ST_CALLS_LOST,	    /* calls whose answer was lost with the framing */
	CLAIMD_ST_TLS_TIED_BY_READ, /* SSL calls tied to the socket the thread read last */
	CLAIMD_ST_COUNTS_FULL,	 /* requests or calls the counter maps refused: sent as records */
	CLAIMD_ST_LATE_CALLS,	 /* calls that ended after their request was answered */
	CLAIMD_ST_CALLS_OUTSIDE, /* calls of a service outside its requests, on its edges */
	CLAIMD_ST_GO_REQUESTS,	 /* Go requests followed per goroutine */
	CLAIMD_ST_GO_CALLS,	 /* Go calls ((*Transport).roundTrip) followed */
	CLAIMD_ST_GO_UNSEEN,	 /* Go requests on a connection not followed: not counted */
	CLAIMD_ST_GO_OUTSIDE,	 /* Go calls on a goroutine tied to no request: root calls */
	CLAIMD_ST_GO_NO_CALLEE,	 /* Go calls to a host that is no IP address: request unknown */
	CLAIMD_ST_CONN_STALE,	 /* connections whose fd came to name another socket unseen */
	CLAIMD_ST_GO_REENTERED,	 /* Go entry probes run again for one call (stack check failed) */
	CLAIMD_ST_THREAD_SLOTS,	 /* thread contexts made in their thread's slot */
	CLAIMD_ST_THREAD_SLOTS_FREED, /* ... and slots given back at the thread's exit */
	CLAIMD_ST_OPAQUE,	      /* ingresses that talked to a dependency not HTTP */
	CLAIMD_ST_UNIX_CONNS,	      /* Unix stream connections followed */
	CLAIMD_ST_UNIX_UNSURE,	 /* Unix stream connections whose role is unclear: not followed */
	CLAIMD_ST_WIRE_CONNS,	 /* connections found to speak Redis, PostgreSQL or MySQL */
	CLAIMD_ST_WIRE_CALLS,	 /* their calls framed */
	CLAIMD_ST_WIRE_LOST,	 /* ... whose framing was lost or left (TLS): calls unseen */
	CLAIMD_ST_KEYED,	 /* event loops' requests held by their connection (bpf/keyed.c) */
	CLAIMD_ST_TIED_ID,	 /* event loops' calls tied to a request by the id both carry */
	CLAIMD_ST_TIED_RELAY,	 /* ... tied to the one request they relay */
	CLAIMD_ST_TIE_AMBIGUOUS, /* ... that two or more open requests would fit: untied */
	CLAIMD_ST_TIE_NONE,	 /* ... that no open request fits: untied */
	CLAIMD_ST_CONN_REJOINED, /* live connections whose entry went: followed again mid-stream */
	CLAIMD_ST_PROC_UNREAD,	 /* processes followed before claimd read their program */
	CLAIMD_ST_GO_HANDED,	 /* Go calls handed to a connection for a request (go_handoffs) */
	CLAIMD_ST_GO_TLS_CALLS,	 /* Go calls over TLS in a program framed by syscalls: unseen */
	CLAIMD_ST_NGINX_NOTED,	 /* nginx: upstream writes whose request was noted (handoffs) */
	CLAIMD_ST_NGINX_UNREAD,	 /* ... whose request could not be read: not noted */
	CLAIMD_ST_NGINX_NO_REQUEST, /* ... whose request is not followed (not framed): not noted */
	CLAIMD_ST_TIED_NGINX,	    /* nginx's calls tied to a request by its note */
	CLAIMD_ST_NODE_BOUND,	    /* Node.js: parses tied to the inbound read they parse */
	CLAIMD_ST_NODE_UNMATCHED,   /* ... parses of bytes no inbound read just brought */
	CLAIMD_ST_NODE_STALE,	    /* ... calls whose context began before their request */
	CLAIMD_ST_NODE_LINEAGE,	    /* ... native resources a parser's context made */
	CLAIMD_ST_TIED_NODE,	    /* Node.js's calls tied to a request by their async context */
	CLAIMD_ST_CONN_SLOTS,	    /* connections whose entry took the slot their name points at */
	CLAIMD_ST_CONN_SLOTS_FREED, /* ... and slots given back at their end, or by claimd */
	CLAIMD_ST_EARLY_ANSWERS,    /* answers read before their request's write was framed */
	CLAIMD_ST_CONN_END_RACED,   /* new sockets' bytes unfollowed: their name's entry ending */
	CLAIMD_ST_CONN_BESIDE_END,  /* new sockets' entries put beside their name's, ending */
	CLAIMD_ST_GO_STARTED_OVER,  /* Go probes at a stack check whose function starts over */
	CLAIMD_ST_KEY_STRAYS,	    /* event loops' requests a key of which could not be counted */
	CLAIMD_ST_TLS_UNSEEN,	    /* outbound TLS connections no probe deciphers: calls unseen */
	CLAIMD_ST_CONNECT_FAILED_AT_ONCE, /* connects failed with no state change: failed calls */
	CLAIMD_ST_CONNECT_UNREAD,    /* ... whose outcome could not be read: requests unknown */
	CLAIMD_ST_CONNECT_UNSERVED,  /* ... to a socket file never seen served: requests unknown */
	CLAIMD_ST_IO_UNSEEN,	     /* socket I/O by no syscall claimd reads (io_uring): unsure */
	CLAIMD_ST_CONNECT_UNDER_WAY, /* Go dials found still connecting: read at a later answer */
	CLAIMD_ST_PID_FILTER_FULL,   /* processes --pid follows from birth, no room to note */
	CLAIMD_ST__COUNT,
};

struct claimd_addr {
	__u8 addr[CLAIMD_ADDR_LEN];
	__u16 port; /* host order */
	__u16 pad;
};

/*
 * A connect no state change shows the failure of, begun by a followed
 * process for the request its holder serves (the BPF map connect_notes,
 * bpf/connects.c): to a socket file, or over TCP (one refused before its
 * SYN left: no route). What tells, once it returned, whether it failed.
 */
struct claimd_connect_note {
	__u64 sk;     /* the connecting socket's address */
	__u64 cookie; /* ... and its cookie: a socket at that address with another is not it */
	__u64 at_ns;  /* when it began */
	__u64 seq;    /* the request it was made for (claimd_ingress.seq); 0: an event loop's */
	struct claimd_addr callee; /* where it was to go: the address it was given */
	__u8 tcp;		   /* over TCP (else to a socket file) */
	__u8 unserved; /* to a socket file's name no listener was seen on (bpf/connects.c) */
	__u16 pad;
};

/* Connection table key: one socket of one process. */
struct claimd_conn_key {
	__u32 tgid;
	__s32 fd;
};

/*
 * Who holds an ingress's record: a thread ({0, tid}), or, for a service
 * that names its current request (claim_context_enter), the inbound
 * connection ({tgid, fd}).
 */
struct claimd_owner {
	__u32 tgid; /* 0: 'id' is a thread */
	__s32 id;   /* the thread, or the inbound connection's fd */
};

/* A request on a connection whose answer has not started yet. */
struct claimd_pending {
	__u64 start_ns;		   /* first byte of the request */
	__u64 ingress_seq;	   /* outbound: the ingress it belongs to, 0 for a root call */
	struct claimd_owner owner; /* outbound: who holds that ingress */
	__u32 tid;		   /* outbound: the thread that wrote it */
	__u32 target_hash;
	__u8 method;
	__u8 slot;  /* outbound: index in the ingress's egress log, or CLAIMD_NO_SLOT */
	__u8 proto; /* enum claimd_proto */
	__u8 late;  /* outbound: written after its request was answered: in no log */
	/*
	 * outbound, outside requests in a process that serves nothing: the
	 * nearest ancestor that serves, found when it was written
	 * (outside_calls_add_ancestor); CLAIMD_ANCESTOR_NONE: none; 0: not asked
	 */
	__u32 ancestor;
};

/* claimd_pending.ancestor: asked, and none serves (init's tgid, never a service's here) */
#define CLAIMD_ANCESTOR_NONE 1

/*
 * What a request or its answer touches comes first: the framers, the
 * queue's state, the owner and the first pending request (a connection
 * without pipelining uses only the first slot): four cache lines of the
 * table's entry, with its key.
 */
struct claimd_conn {
	struct http_framer rx; /* bytes this process reads */
	struct http_framer tx; /* bytes this process writes */
	__u8 role;	       /* enum claimd_role */
	__u8 flags;	       /* CLAIMD_CONN_* */
	/* pending requests, oldest at head; 'extra' more beyond the ring */
	__u8 head;
	__u8 count;
	__u32 extra;
	__u8 lost;  /* CLAIMD_LOST_*: a direction whose framing was lost, seeking a message start */
	__u8 proto; /* outbound: enum claimd_proto, told by its first bytes (bpf/wire.c) */
	__u8 told;  /* outbound: its first bytes were looked at */
	__u8 pad[1];
	/*
	 * The socket the fd named when the entry was made (claimd_sock_tag); 0
	 * until its first bytes for a connection claimd seeded (by ino).
	 */
	__u32 sk_tag;
	/* inbound: the ingress being served and who holds its record */
	__u64 owner_seq;
	struct claimd_owner owner;
	__u64 rx_first_ns; /* when the request being read began (inbound) */
	__u64 tx_first_ns; /* when the request being written began (outbound) */
	struct claimd_pending fifo[CLAIMD_FIFO_MAX];
	struct claimd_addr local;
	struct claimd_addr remote;
	__u64 ssl; /* TLS: the SSL pointer last tied to this socket (forgotten at close) */
	__u64 ino; /* seeded: the socket's inode number, until sk_tag is known */
	/* outbound: the request whose response head is being read */
	struct claimd_pending answering;
	__u64 answer_end_ns; /* when its status line arrived */
	__u16 answer_status;
	__u8 answer_active; /* enum claimd_answer */
	__u8 answer_claim;  /* an early answer's: the claim its head carried */
	/*
	 * Outbound TCP (CLAIMD_CONN_SEQ): the socket's write_seq when its last
	 * write was framed, and for an early answer what it was when that came.
	 */
	__u32 tx_seq;
	__u32 early_from;
	__u32 pad2;
};

/*
 * The response being read on an outbound connection. A write's tracepoint
 * runs when the send returns, after its bytes reached the peer: a reply
 * read on another thread (Java's and Go's clients read on threads of their
 * own) may be framed before the request that asked for it is. Such an
 * answer, read while the socket's write_seq is past the last write framed
 * (a send in flight), waits for that send's request: EARLY while its head
 * is read, EARLY_DONE once it ended. Any other reply with no request
 * waiting is unmatched.
 */
enum claimd_answer {
	CLAIMD_ANSWER_NONE = 0,
	CLAIMD_ANSWER_POPPED,	  /* its request taken from the FIFO (answering) */
	CLAIMD_ANSWER_EARLY,	  /* before its request was framed */
	CLAIMD_ANSWER_EARLY_DONE, /* ... and its head ended */
};

struct claimd_egress {
	__u64 start_ns;
	__u64 end_ns;
	struct claimd_addr callee;
	__u32 target_hash;
	__u16 status; /* 0: transport failure, or no response yet */
	__u8 method;
	__u8 flags; /* CLAIMD_EG_* */
	__u8 claim; /* enum http_claim found in the response */
	__u8 proto; /* enum claimd_proto: what the call spoke */
	__u8 pad[2];
};

struct claimd_rec_hdr {
	__u16 type;    /* enum claimd_record_type */
	__u16 version; /* CLAIMD_RECORD_VERSION */
	__u32 size;    /* bytes of this record */
};

struct claimd_ingress {
	struct claimd_rec_hdr hdr;
	__u32 tgid;
	__u32 tid;
	__u64 seq; /* unique per thread: the ingress's start time */
	__u64 start_ns;
	__u64 end_ns;
	struct claimd_addr local; /* the service's endpoint */
	struct claimd_addr peer;  /* the client */
	char comm[CLAIMD_COMM_LEN];
	__u32 flags;	      /* CLAIMD_IN_* */
	__u32 egress_dropped; /* egress calls beyond the log */
	__u32 target_hash;
	__u16 status; /* 0: no response */
	__u8 method;
	__u8 n_egress;
	__u8 verdict; /* enum claim_verdict (headers/verdict.h), if the ingress failed */
	__u8 cause;   /* egress index that decided the verdict, or CLAIMD_NO_SLOT */
	__u8 rule;    /* enum claim_rule: why */
	__u8 pad;
	/*
	 * Calls of it handed to an outbound connection whose heads were not
	 * yet written (Go's (*persistConn).roundTrip, handoff.bpf.h): while
	 * any is, a failure is unknown (unfinished-call), not judged
	 * without it.
	 */
	__u32 unwritten;
	struct claimd_egress egress[CLAIMD_EGRESS_MAX];
};

struct claimd_root_egress {
	struct claimd_rec_hdr hdr;
	__u32 tgid;
	__u32 tid;
	char comm[CLAIMD_COMM_LEN];
	__u16 local_port; /* the caller's service port (struct claimd_outside); 0: a root call */
	__u16 pad[3];
	struct claimd_egress egress;
	/* In the record of the process's first such call: CLAIMD_SERVICE in its environment */
	char service[CLAIMD_SERVICE_LEN]; /* NUL-ended; empty if unset, and in other records */
};

/*
 * A followed process connected, for a request, to a socket file's name no
 * listener was seen on since claimd started, nor listed as a probe
 * (unix_unserved, bpf/connects.c): claimd looks at what the name is (a
 * socket file whose server is gone, or nothing) and, for a socket file,
 * puts the name into unix_served. Sent once per name.
 */
/* What unix_unserved holds of a name (bpf/observer.bpf.c). */
#define CLAIMD_UNSERVED_ASKED 1 /* claimd was sent its claimd_socket_file */
#define CLAIMD_UNSERVED_PROBE 2 /* listed by claimd as a probe (--probe-socket): no call */

struct claimd_socket_file {
	struct claimd_rec_hdr hdr;
	__u32 tgid; /* the process that connected: the name is read in its mounts */
	__u32 len;  /* name's bytes (an abstract name begins with a NUL) */
	__u64 hash; /* headers/unixaddr.h */
	char name[108];
	__u32 pad;
};

struct claimd_listen {
	struct claimd_rec_hdr hdr;
	__u32 tgid;
	__u32 closed; /* 1: the listener went away */
	struct claimd_addr local;
	char comm[CLAIMD_COMM_LEN];
};

/*
 * A program file as the kernel names it (the programs map): its inode's
 * number and its filesystem's device, in the kernel's encoding (major << 20
 * | minor).
 */
#define CLAIMD_PROGRAMS_MAX 4096
/* A program's value in the programs map until claimd has read it (asked at an exec). */
#define CLAIMD_PROGRAM_ASKED 0x80000000u

struct claimd_program_id {
	__u64 dev;
	__u64 ino;
};

struct claimd_exit {
	struct claimd_rec_hdr hdr;
	__u32 tgid;
	__u32 pad;
};

/* Per-thread context: the ingress the thread serves, with its egress log. */
struct claimd_thread {
	struct claimd_conn_key conn; /* inbound connection of the ingress; tgid 0: idle */
	/* its process's count of calls outside requests begun or ended, at its open */
	__u32 outside_seen;
	/* An event loop's request: the keys it is known by in req_keys (bpf/keyed.c); 0 none. */
	__u32 key_id;
	__u32 key_relay;
	/*
	 * The log's slots its calls took (egress_log_next), atomically: calls
	 * of one request may be written on several CPUs at once (a Go
	 * program's write loops, threads sharing an explicit context).
	 */
	__u32 slots;
	/*
	 * A Go program's request framed by its syscalls: the goroutine serving
	 * it (its runtime.g), whose slot of the verdict map shows its running
	 * verdict (claim_goroutine_index); 0: the thread's slot.
	 */
	__u64 g;
	struct claimd_ingress rec; /* the record being built */
};

/* A key an event loop's open request is known by (bpf/keyed.c): its id, or what a relay of it carries. */
struct claimd_req_key {
	__u32 tgid;
	__u32 kind; /* CLAIMD_KEY_ID or CLAIMD_KEY_RELAY */
	__u32 hash;
};

#define CLAIMD_KEY_ID	 1
#define CLAIMD_KEY_RELAY 2

/*
 * The open requests known by one key (bpf/req_keys.bpf.h): how many, and the
 * one (connection, seq) when alone.
 */
struct claimd_req_owner {
	__u64 word; /* the count, low 32 bits; the entry's generation, high 32 */
	__u64 seq;  /* the request that inserted the entry; 0 once it left */
	__s32 fd;   /* ... its connection */
	__u32 pad;
};

/*
 * A thread's context in the slot its id names (observer.bpf.c, thread_slots).
 * Slots of both tables start on a cache line of their own (64 bytes; the
 * tables' values are page-aligned, BPF_F_MMAPABLE): a request's first
 * fields share lines with no other slot's. About 28 ns a request less at
 * saturation (scripts/bench-ab.sh, 8 rounds of both orders).
 */
struct claimd_thread_slot {
	__u32 tid; /* the thread holding the slot; 0: free */
	__u32 pad;
	struct claimd_thread t;
} __attribute__((aligned(64)));

/*
 * A connection's entry in the slot its name points at (observer.bpf.c,
 * conn_slots): owner is the name as claimd_conn_slot_word gives it, 0 while
 * the slot is free, CLAIMD_CONN_SLOT_BUSY while an entry is written in.
 */
struct claimd_conn_slot {
	__u64 owner;
	struct claimd_conn c;
} __attribute__((aligned(64)));

#define CLAIMD_CONN_SLOT_BUSY (~0ull)

/*
 * Slots one run of claimd_forget_slots gives back: its arguments, a slot's
 * index and the owner word it must still hold, in pairs.
 */
#define CLAIMD_FORGET_SLOTS 6

/* The word a slot's owner holds for key: never 0 (no process has tgid 0) nor BUSY. */
static inline __u64 claimd_conn_slot_word(const struct claimd_conn_key *key)
{
	return (__u64)key->tgid << 32 | (__u32)key->fd;
}

/* The slot key points at, of mask + 1: a process's fds in a row, processes spread apart. */
static inline __u32 claimd_conn_slot_index(const struct claimd_conn_key *key, __u32 mask)
{
	return (key->tgid * 0x9e3779b1u + (__u32)key->fd) & mask;
}

/* The traced map's word per process: what the programs know of it. */
#define CLAIMD_PROC_TRACED    0x1  /* it owns a socket we follow */
#define CLAIMD_PROC_CONTEXT   0x2  /* it names its requests (claim_context_enter) */
#define CLAIMD_PROC_MUX	      0x4  /* two requests at once on a thread, or unprobed Go */
#define CLAIMD_PROC_GO	      0x8  /* Go: its HTTP followed per goroutine, not by its syscalls */
#define CLAIMD_PROC_GO_SERVES 0x10 /* Go: it serves requests */
#define CLAIMD_PROC_UNREAD    0x20 /* its program not read yet: its requests unknown */
/*
 * Go, followed by its syscalls: its requests framed from their bytes, each
 * held by its connection and tied to the goroutine that reads it; a call
 * tied at one probe, where the calling goroutine hands its request to a
 * connection (bpf/goroutine.bpf.h).
 */
#define CLAIMD_PROC_GO_SYSCALLS 0x40
/*
 * nginx, its code read and its offsets found where claimd reads them
 * (user/claimd/probes/nginx/): its requests held by their connections from
 * the first, each call tied where nginx writes it upstream
 * (bpf/runtimes/nginx.c).
 */
#define CLAIMD_PROC_NGINX 0x80
/*
 * Node.js, its code read and its layout found (user/claimd/probes/node/):
 * its requests held by their connections from the first, each call tied by
 * the async context that writes it (bpf/node.bpf.h).
 */
#define CLAIMD_PROC_NODE 0x100
/*
 * One of its threads, one without a slot of its own, has put its context
 * in the threads table: until then a thread of it without a slot holds no
 * request, known with no lookup there (bpf/ingress.c, owner_ctx).
 */
#define CLAIMD_PROC_THREADS 0x200
/*
 * An OpenSSL call of it was probed (bpf/tls.c): its TLS is deciphered. A
 * process that moves TLS with none is using a TLS library claimd does not
 * probe (a JVM's, GnuTLS, rustls, an OpenSSL linked in whole).
 */
#define CLAIMD_PROC_SSL 0x400
/*
 * It began a connect whose failure no state change would show
 * (bpf/connects.c): its threads' answers look for one whose outcome is
 * still to be read.
 */
#define CLAIMD_PROC_CONNECTS 0x800
/*
 * Under --port: it made connects before it served a port listed, to ports
 * not listed, which were not followed; it serves one now. Until claimd has
 * looked for those connections (seeded them, joined mid-stream), its
 * requests are unknown (untied-call): their calls may go over them.
 */
#define CLAIMD_PROC_UNSEEDED 0x1000
/* Bits 16-31: how many listening sockets it has open (a service: its calls
 * outside requests are no root calls). claimd seeds the older ones. */
#define CLAIMD_PROC_LISTENER_ONE (1u << 16)

/*
 * Per process (the outside_calls map, by tgid): its calls outside requests,
 * and the port of the service it is. A process that served a request, or
 * listens, is a service whoever holds its listener (a prefork server's
 * children serve what their parent listens on): its calls outside requests
 * count on that service's edges, under port. port: the local port of the
 * request it began last; before any, of the first listener it opened (or
 * claimd found open); 0: it serves nothing (a root caller).
 */
struct claimd_outside {
	__u32 calls; /* calls outside requests begun or ended, while it serves */
	__u16 port;  /* its service's port; 0: none */
	/* under --port: it made connects not followed, before it served (CLAIMD_PROC_UNSEEDED) */
	__u16 unfollowed;
	/* its open requests a key of which could not be counted (bpf/keyed.c) */
	__u32 key_strays;
	/*
	 * Its connects noted and not yet read (bpf/connects.c): while none is,
	 * an answer it writes looks for none. Raised at a note put, lowered at
	 * one taken; one the table evicted keeps it raised (a lookup more).
	 */
	__u32 connect_notes; /* 16 bytes: four to a cache line, none across two */
};

/*
 * A TCP socket seen born while claimd runs (headers/observer.h's socks map,
 * by the socket's kernel address): a connect's SYN sent, a connection a
 * followed listener took. It becomes a connection of the table (conns) at
 * its first bytes moved, under the process and fd that moved them, and is
 * gone when its owner closes it (or the kernel frees it): its end, seen
 * whatever closed it (close, close_range, dup2 over it, the process's exit).
 */
struct claimd_sock {
	struct claimd_conn_key key; /* the connection it became; tgid 0: none yet */
	__u32 tgid;		    /* outbound: the process that connected */
	__u32 tid;		    /* outbound: the thread that connected */
	__u8 role;		    /* enum claimd_role */
	__u8 flags; /* CLAIMD_CONN_FAILED: its connect failed, reported; CLAIMD_SOCK_MARKED */
	__u16 slot; /* its slot in sock_marks, counted while it lives (once marked) */
	__u32 pad;
};

/*
 * claimd_sock.flags: counted in its slot of sock_marks. An outbound socket
 * is counted once its local port is chosen, after its SYN_SENT: where it
 * connects, or where it moves bytes first while connecting (Fast Open).
 */
#define CLAIMD_SOCK_MARKED 0x80
/* claimd_sock.flags: the accepted end of a Unix connection, marked in unix_marks (bpf/unixsock.c). */
#define CLAIMD_SOCK_UNIX 0x40

/* A listening socket of a followed process (the listeners map, by inode number). */
struct claimd_listener {
	__u32 tgid;
	__u32 netns; /* its network namespace's inode number */
	struct claimd_addr local;
};

/* A port some followed process listens on, in one network namespace. */
struct claimd_listen_port {
	__u32 netns;
	__u16 port;
	__u16 pad;
};

/*
 * The sockets the connection table follows, by their ports: a count per
 * slot of the sock_marks array, raised when a socket is born under watch (or
 * by claimd for the connections it seeds) and lowered when it ends. A
 * socket whose slot counts none belongs to no connection followed: its
 * bytes leave the program before any helper call. Two sockets in one slot
 * cost only a lookup; an entry a table evicts on its own leaves its count
 * behind, with the same cost.
 */
#define CLAIMD_SOCK_MARKS_BITS 16
#define CLAIMD_SOCK_MARKS      (1u << CLAIMD_SOCK_MARKS_BITS)

/*
 * The slot of a socket with these ports (host order): two loads from the
 * socket itself, where its inode number took a second object's, and known
 * where the socket is born, before it has an inode (a connection taken
 * by a listener). The local port is turned by one bit first: the two ends
 * of a connection, (l, r) and (r, l), meet in one slot only when r is l or
 * its complement, so a process claimd does not follow that talks over
 * loopback to one it does (a client, a proxy, a load generator) leaves at
 * the filter like any other. A server's connections, whose clients' ports
 * the kernel gives out in runs, sit in neighbouring slots: a few cache
 * lines of the filter for the busy sockets of a host.
 */
static inline __u32 claimd_sock_slot(__u16 lport, __u16 rport)
{
	__u32 turned = ((__u32)lport << 1 | (__u32)lport >> 15) & 0xffff;

	return (turned ^ rport) & (CLAIMD_SOCK_MARKS - 1);
}

/*
 * A connection's entry being ended (conn_end): the tag it holds meanwhile,
 * no socket's. Whoever ends an entry first swaps its socket's tag for this
 * one; nothing writes another socket's entry over it until it is dropped.
 */
#define CLAIMD_SOCK_TAG_ENDING 0xffffffffu

/*
 * What a connection's entry keeps of its socket's address, to tell it from
 * another socket at the same fd: the address's bits above its alignment.
 * Two live sockets have the same tag only 32 GiB apart. Every tag goes
 * through claimd_tag_of: never CLAIMD_SOCK_TAG_ENDING.
 */
static inline __u32 claimd_tag_of(__u32 tag)
{
	return tag == CLAIMD_SOCK_TAG_ENDING ? tag - 1 : tag;
}

static inline __u32 claimd_sock_tag(__u64 sk)
{
	return claimd_tag_of((__u32)(sk >> 3));
}

/* Filters set by claimd before the programs see traffic. */
#define CLAIMD_FILTER_PID 0x01 /* only processes in the pid_filter map, and their own */
/* How far up a process's parents --pid looks for one listed (bpf/sockio.c, kernel/seed.c). */
#define CLAIMD_FILTER_ANCESTORS 4
#define CLAIMD_FILTER_CGROUP	0x02 /* only the cgroup (v2 id) given */
#define CLAIMD_FILTER_PORT	0x04 /* only connections whose service port is listed */
/*
 * How far up a process's parents the nearest that serves is looked for
 * (bpf/proc.bpf.h, serving_ancestor; kernel/seed.c): the command's parent,
 * and a shell or two between it and the service.
 */
#define CLAIMD_SERVING_ANCESTORS 4
#define CLAIMD_FILTER_NETNS	 0x08 /* only processes in one network namespace (its inode) */

static inline __u32 claimd_ingress_size(__u32 n_egress)
{
	return (__u32)(sizeof(struct claimd_ingress) -
		       (CLAIMD_EGRESS_MAX - n_egress) * sizeof(struct claimd_egress));
}

#endif /* CLAIMD_OBSERVER_H */
