/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names and descriptions of what claimd counts, one table each: the
 * kernel's counters (enum claimd_stat in headers/observer.h: the name
 * 'claimctl status' shows under "kernel" and claimd_kernel_<name>_total,
 * with its help text). The reasons a failed request's verdict is unknown
 * ('claimctl status' "unknown_verdicts", claimd_unknown_verdicts_total
 * {reason}) are the rules whose verdict is unknown: CLAIM_RULE_TABLE in
 * claim_types.h, read through verdict_names.h. Every user of a name reads
 * it from its table.
 */
#ifndef CLAIMD_COUNTERS_H
#define CLAIMD_COUNTERS_H

#include <stdbool.h>

#include "observer.h"

/* X(enum, name, help) */
#define CLAIMD_KERNEL_COUNTERS(X)                                                                 \
	X(CLAIMD_ST_RECORDS, "records", "Records the BPF programs submitted to claimd.")          \
	X(CLAIMD_ST_RB_DROPS, "ringbuf_drops",                                                    \
	  "Records lost in the kernel: the ring buffer was full.")                                \
	X(CLAIMD_ST_EGRESS_OVERFLOW, "egress_log_overflow",                                       \
	  "Calls beyond the per-request egress log, not logged.")                                 \
	X(CLAIMD_ST_FIFO_OVERFLOW, "pipeline_overflow",                                           \
	  "Pipelined requests beyond what one connection keeps.")                                 \
	X(CLAIMD_ST_PARSE_ERRORS, "parse_errors",                                                 \
	  "Streams that were not HTTP/1.x or lost their framing.")                                \
	X(CLAIMD_ST_PARSE_RESYNC, "parse_resyncs",                                                \
	  "Times junk was skipped on connections joined mid-stream.")                             \
	X(CLAIMD_ST_PARSE_TRUNCATED, "parse_truncated",                                           \
	  "Syscalls with bytes past the parse budget.")                                           \
	X(CLAIMD_ST_UNMATCHED, "unmatched_responses",                                             \
	  "Responses with no request waiting for them.")                                          \
	X(CLAIMD_ST_CONN_FULL, "conn_table_full",                                                 \
	  "Connections not followed: the connection table was full.")                             \
	X(CLAIMD_ST_THREAD_FULL, "thread_table_full",                                             \
	  "Requests not followed: the thread table was full.")                                    \
	X(CLAIMD_ST_MUX, "multiplexed", "Requests begun on a thread with another one open.")      \
	X(CLAIMD_ST_KEYED, "event_loop_requests",                                                 \
	  "Requests of event loops held by their connection, their calls tied by id or relay.")   \
	X(CLAIMD_ST_TIED_ID, "calls_tied_by_id",                                                  \
	  "Event loops' calls tied to the one open request carrying the same request id.")        \
	X(CLAIMD_ST_TIED_RELAY, "calls_tied_by_relay",                                            \
	  "Event loops' calls tied to the one open request they relay (method, target, user "     \
	  "agent).")                                                                              \
	X(CLAIMD_ST_TIE_AMBIGUOUS, "calls_tie_ambiguous",                                         \
	  "Event loops' calls that two or more open requests would fit: tied to none.")           \
	X(CLAIMD_ST_TIE_NONE, "calls_tie_none",                                                   \
	  "Event loops' calls that no open request fits: tied to none.")                          \
	X(CLAIMD_ST_CONN_REJOINED, "connections_rejoined",                                        \
	  "Live connections whose table entry was gone (evicted): followed again from their "     \
	  "next bytes, mid-stream.")                                                              \
	X(CLAIMD_ST_CONNS, "connections", "Connections followed.")                                \
	X(CLAIMD_ST_INGRESS, "ingresses", "Inbound requests started.")                            \
	X(CLAIMD_ST_EGRESS, "egresses", "Outbound calls started.")                                \
	X(CLAIMD_ST_TLS_CONNS, "tls_connections", "Connections found to carry TLS.")              \
	X(CLAIMD_ST_TLS_UNBOUND, "tls_calls_without_socket",                                      \
	  "SSL calls whose socket could not be found.")                                           \
	X(CLAIMD_ST_CONN_CLOSED, "connections_closed",                                            \
	  "Connections no longer followed: closed, or their fd replaced.")                        \
	X(CLAIMD_ST_THREAD_CTXS, "thread_contexts",                                               \
	  "Request-serving thread contexts made in the thread table: their slot was held.")       \
	X(CLAIMD_ST_CTX_LOST, "requests_context_lost",                                            \
	  "Requests answered after their thread context was evicted: recorded without their "     \
	  "calls.")                                                                               \
	X(CLAIMD_ST_ABANDONED, "requests_abandoned",                                              \
	  "Requests whose connection was evicted from the table before they were answered: not "  \
	  "recorded.")                                                                            \
	X(CLAIMD_ST_FRAMING_LOST, "framing_lost",                                                 \
	  "Times a connection's framing was lost (a bound, junk, a join mid-stream): it resyncs " \
	  "at the next message start.")                                                           \
	X(CLAIMD_ST_FRAMING_HEALED, "framing_healed",                                             \
	  "Times a connection whose framing was lost found a message start again.")               \
	X(CLAIMD_ST_BLIND, "requests_unknown_framing_lost",                                       \
	  "Requests whose thread moved bytes on a connection whose framing was lost: verdict "    \
	  "unknown.")                                                                             \
	X(CLAIMD_ST_UNTIED, "requests_unknown_untied_call",                                       \
	  "Requests that made a call claimd could not follow (TLS not tied to a socket, egress "  \
	  "log full): verdict unknown.")                                                          \
	X(CLAIMD_ST_CALLS_LOST, "calls_answer_lost",                                              \
	  "Calls whose answer was lost with the framing: outcome unknown.")                       \
	X(CLAIMD_ST_TLS_TIED_BY_READ, "tls_calls_tied_by_read",                                   \
	  "SSL calls with no socket I/O of their own (memory or custom BIOs), tied to the one "   \
	  "TLS socket their thread read or wrote since its last SSL call.")                       \
	X(CLAIMD_ST_COUNTED, "requests_counted",                                                  \
	  "Requests counted in the kernel's service and edge counters.")                          \
	X(CLAIMD_ST_COUNTS_FULL, "counts_full",                                                   \
	  "Requests or calls the kernel's counter maps had no room for: sent to claimd as "       \
	  "records and counted there (see --edges).")                                             \
	X(CLAIMD_ST_ROOT_CALLS, "root_calls_counted",                                             \
	  "Calls outside any request (root calls) counted in the kernel's edge counters.")        \
	X(CLAIMD_ST_LATE_CALLS, "late_calls",                                                     \
	  "Calls that ended after the request they served was answered: not on its edges, and "   \
	  "not root calls.")                                                                      \
	X(CLAIMD_ST_CALLS_OUTSIDE, "calls_outside_requests",                                      \
	  "Calls a service (a process that served a request or listens) made outside its "        \
	  "requests: counted on its service's edges, teaching no class; its requests open "       \
	  "meanwhile get no confident verdict.")                                                  \
	X(CLAIMD_ST_GO_REQUESTS, "go_requests",                                                   \
	  "Requests of Go services followed per goroutine by the Go probes.")                     \
	X(CLAIMD_ST_GO_CALLS, "go_calls", "Calls of Go programs (net/http clients) followed.")    \
	X(CLAIMD_ST_GO_UNSEEN, "go_requests_unseen",                                              \
	  "Go requests on a connection claimd does not follow: not counted.")                     \
	X(CLAIMD_ST_GO_OUTSIDE, "go_calls_outside_requests",                                      \
	  "Go calls on a goroutine tied to no request (a caller that serves nothing, or a "       \
	  "goroutine started before the request): recorded as calls of their own; in a process "  \
	  "that serves, its requests get no confident verdict from then on.")                     \
	X(CLAIMD_ST_GO_NO_CALLEE, "go_calls_callee_unknown",                                      \
	  "Go calls to a host that is not an IP address: the request's verdict becomes "          \
	  "unknown.")                                                                             \
	X(CLAIMD_ST_CONN_END_RACED, "connections_end_raced",                                      \
	  "A new socket's bytes not followed: another socket's table entry under its name (its "  \
	  "fd's last) was being ended on another CPU; a call they carry leaves its request "      \
	  "unknown.")                                                                             \
	X(CLAIMD_ST_CONN_BESIDE_END, "connections_beside_ending",                                 \
	  "New sockets whose entry went into the table beside their name's slot, its last "       \
	  "socket's entry being ended on another CPU: followed all the same.")                    \
	X(CLAIMD_ST_CONN_STALE, "connections_stale",                                              \
	  "Connections whose fd came to name another socket without a close claimd saw "          \
	  "(close_range, an fd duplicated or passed in over it): gone as at a close, at the "     \
	  "fd's next read or write, or when a new connection takes its number.")                  \
	X(CLAIMD_ST_GO_STARTED_OVER, "go_entries_started_over",                                   \
	  "Go requests and calls whose probe, at its function's stack check, saw the check "      \
	  "fail (the stack grows, or the runtime asks the goroutine to stop): taken when the "    \
	  "function starts over.")                                                                \
	X(CLAIMD_ST_TLS_UNSEEN, "tls_connections_unseen",                                         \
	  "Outbound TLS connections of processes whose TLS library claimd does not probe (a "     \
	  "JVM's, GnuTLS, rustls, OpenSSL linked in whole): their calls unseen, a request that "  \
	  "used one unknown when it fails (opaque-call).")                                        \
	X(CLAIMD_ST_CONNECT_FAILED_AT_ONCE, "connects_failed_at_once",                            \
	  "Connects made for a request that failed before anything left, where no state change "  \
	  "shows it: to a socket file (no such file, nobody listening, a backlog full), or over " \
	  "TCP before the SYN (no route): each a failed call of that request, its callee the "    \
	  "address it was given.")                                                                \
	X(CLAIMD_ST_CONNECT_UNREAD, "connects_unread",                                            \
	  "Such connects whose outcome could not be read (their socket closed and its memory "    \
	  "taken again before the request's answer; a Go program's dials, more at once than "     \
	  "claimd keeps): that request unknown (untied-call).")                                   \
	X(CLAIMD_ST_CONNECT_UNDER_WAY, "connects_under_way",                                      \
	  "Answers of Go programs that found a dial of their own goroutines still in its "        \
	  "connect on another thread: its socket not connected yet, not failed either. Read at "  \
	  "a later answer.")                                                                      \
	X(CLAIMD_ST_PID_FILTER_FULL, "pid_filter_full",                                           \
	  "Processes started by one --pid follows that its table had no room for: followed only " \
	  "while a process it follows is among their four nearest ancestors, as if started "      \
	  "before claimd.")                                                                       \
	X(CLAIMD_ST_CONNECT_UNSERVED, "connects_failed_unserved",                                 \
	  "Such connects to a socket file's name no listener was seen on and not listed as a "    \
	  "probe (--probe-socket): a dependency gone before claimd came, or a probe of a file "   \
	  "that never was. That request unknown (untied-call) until claimd finds a socket file "  \
	  "there, nobody listening: a failed call from then on.")                                 \
	X(CLAIMD_ST_IO_UNSEEN, "socket_io_unseen",                                                \
	  "Socket reads and writes of followed processes made by no system call claimd reads "    \
	  "(io_uring's operations): the calls they carry unseen, the requests their process had " \
	  "open then unknown (untied-call).")                                                     \
	X(CLAIMD_ST_KEY_STRAYS, "event_loop_requests_uncounted",                                  \
	  "Requests of event loops a key of which could not be counted (its entry changing, or "  \
	  "the table full): unknown, and no call of their process tied by keys while open.")      \
	X(CLAIMD_ST_GO_REENTERED, "go_entries_repeated",                                          \
	  "Go requests and calls whose function ran its entry twice (its stack check failed: "    \
	  "the stack grew, or the runtime asked the goroutine to stop): taken once.")             \
	X(CLAIMD_ST_THREAD_SLOTS, "thread_slots_taken",                                           \
	  "Request-serving thread contexts made in the slot their thread id names.")              \
	X(CLAIMD_ST_THREAD_SLOTS_FREED, "thread_slots_freed",                                     \
	  "Thread context slots given back when their thread exited.")                            \
	X(CLAIMD_ST_OPAQUE, "requests_with_opaque_calls",                                         \
	  "Requests whose thread talked to a dependency claimd cannot read (another protocol "    \
	  "than HTTP: a database, a cache; TLS no probe deciphers): a failure of theirs no "      \
	  "call seen explains is unknown.")                                                       \
	X(CLAIMD_ST_UNIX_CONNS, "unix_connections",                                               \
	  "Unix stream connections (socket files) followed, both ends of a followed process's.")  \
	X(CLAIMD_ST_UNIX_UNSURE, "unix_connections_unsure",                                       \
	  "Unix stream sockets of followed processes whose two ends both have names, so that "    \
	  "which end serves is not known: not followed.")                                         \
	X(CLAIMD_ST_WIRE_CONNS, "dependency_connections",                                         \
	  "Outbound connections whose first bytes were Redis, PostgreSQL or MySQL: their calls "  \
	  "are framed, each with its outcome.")                                                   \
	X(CLAIMD_ST_WIRE_CALLS, "dependency_calls",                                               \
	  "Calls to Redis, PostgreSQL or MySQL framed (commands, queries, logins).")              \
	X(CLAIMD_ST_WIRE_LOST, "dependency_framing_lost",                                         \
	  "Redis, PostgreSQL or MySQL connections whose framing was lost (bytes that lie, a "     \
	  "buffer claimd cannot read) or left (TLS, a subscription): their calls from then on "   \
	  "are not seen, and a request that talks there is unknown when it fails.")               \
	X(CLAIMD_ST_PROC_UNREAD, "processes_unread",                                              \
	  "Processes followed before claimd had read their program (a new program file): their "  \
	  "requests answered meanwhile are unknown (unread-program).")                            \
	X(CLAIMD_ST_GO_HANDED, "go_calls_handed",                                                 \
	  "Calls of Go programs framed by their syscalls that a goroutine serving a request "     \
	  "handed to a connection ((*persistConn).roundTrip): tied to that request.")             \
	X(CLAIMD_ST_GO_TLS_CALLS, "go_calls_tls",                                                 \
	  "Calls over TLS of Go programs framed by their syscalls: their bytes are ciphertext, "  \
	  "so the call is not seen and its request gets no confident verdict.")                   \
	X(CLAIMD_ST_NGINX_NOTED, "nginx_writes_noted",                                            \
	  "Upstream writes of nginx (ngx_chain_writer) whose request was noted on the upstream "  \
	  "connection, for the call's head to be tied to it.")                                    \
	X(CLAIMD_ST_NGINX_UNREAD, "nginx_writes_unread",                                          \
	  "Upstream writes of nginx whose request could not be read (no HTTP request behind "     \
	  "the connection: the stream module, or a layout claimd did not expect): not noted, "    \
	  "their calls tied by what they carry or to none.")                                      \
	X(CLAIMD_ST_NGINX_NO_REQUEST, "nginx_writes_without_request",                             \
	  "Upstream writes of nginx whose request claimd does not follow (its downstream "        \
	  "connection not framed: TLS not read, HTTP/2): not noted, their calls tied to none.")   \
	X(CLAIMD_ST_TIED_NGINX, "calls_tied_by_nginx",                                            \
	  "Calls of nginx tied to the request its probe noted on their upstream connection.")     \
	X(CLAIMD_ST_NODE_BOUND, "node_parses_bound",                                              \
	  "Reads handed to Node.js's HTTP server parser (OnStreamRead) tied to the inbound read " \
	  "that brought them: the parser's async id names that connection's requests.")           \
	X(CLAIMD_ST_NODE_UNMATCHED, "node_parses_unmatched",                                      \
	  "Reads handed to a Node.js parser that no inbound read on the thread had just brought " \
	  "(TLS, a stream not read by claimd, an error): no request named by them.")              \
	X(CLAIMD_ST_NODE_STALE, "node_calls_stale",                                               \
	  "Calls of Node.js written in a context caused by a request's connection before its "    \
	  "open request began (a timer of an earlier request): tied to none.")                    \
	X(CLAIMD_ST_NODE_LINEAGE, "node_resources_noted",                                         \
	  "Native async resources of Node.js a request's parser context made (a socket, a "       \
	  "connect), noted where they get their ids: contexts they begin are that request's.")    \
	X(CLAIMD_ST_TIED_NODE, "calls_tied_by_node",                                              \
	  "Calls of Node.js tied to the request whose parser's context, or a context it began, "  \
	  "wrote them.")                                                                          \
	X(CLAIMD_ST_CONN_SLOTS, "connection_slots_taken",                                         \
	  "Connections whose entry took the slot their process and fd point at (no table "        \
	  "lookup at each read and write); the others' entries are in the table.")                \
	X(CLAIMD_ST_CONN_SLOTS_FREED, "connection_slots_freed",                                   \
	  "Connection slots given back at their connection's end, or by claimd for a process "    \
	  "that exited.")                                                                         \
	X(CLAIMD_ST_EARLY_ANSWERS, "answers_before_request",                                      \
	  "Answers read before the write of their request was framed (its tracepoint runs when "  \
	  "the send returns, after the reply may be back): held, then given to that request.")

/* A kernel counter's name ("?" out of range), and the help text for a name (NULL if none). */
const char *counters__kernel_name(int which);
const char *counters__kernel_help(const char *name);

#endif
