/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test services: tests/peers/chain_service.py processes with a name
 * (CLAIMD_SERVICE), an optional downstream, and a failure pattern; and a
 * plain HTTP GET from the test itself.
 */
#ifndef CLAIMD_TEST_SERVICES_H
#define CLAIMD_TEST_SERVICES_H

#include <stdbool.h>
#include <sys/types.h>

#include "harness.h"

struct netns_h;

struct svc_spec {
	const char *name;
	int downstream;	       /* port, or 0 */
	const char *down_host; /* its downstream's address (NULL: 127.0.0.1; "[v6]" for IPv6) */
	int fail_mod;	       /* own failures: id % fail_mod == fail_rem */
	int fail_rem;
	bool fail_after;  /* own failure decided after the downstream call */
	double propagate; /* fraction of downstream failures passed up (default 1) */
	bool set_propagate;
	bool keepalive;
	bool down_fresh;	  /* with keepalive: a new downstream connection for each call */
	int delay_ms;		  /* think time per request */
	int fail_status;	  /* what its own failures answer (0: 503) */
	int down_fail_from;	  /* a downstream answer from this status up failed (0: 500) */
	bool fastopen;		  /* TCP Fast Open on its listener and its calls (non-blocking) */
	bool handoff;		  /* its calls made by a pool of worker threads */
	bool spawn;		  /* its calls made by curl, in a child process */
	int slow_ms;		  /* its failure set answers 200 this late instead of failing */
	int down_timeout_ms;	  /* its calls time out; closed after its answer */
	bool kv_store;		  /* serves a key-value line protocol, not HTTP (a database) */
	int kv;			  /* the port of such a store, asked for each request */
	const struct netns_h *ns; /* started inside this namespace (NULL: the test's own) */
	const char *bind;      /* the address it listens on (NULL: 127.0.0.1; "::": both families;
			     "unix:PATH": a socket file) */
	const char *down_unix; /* its downstream's socket file, in place of a port */
	const char *kv_unix;   /* its key-value store's socket file, in place of a port */
	const char *probe_socket; /* a socket file each request connects to first, failing or not */
	const char *tls;	  /* "CERT,KEY": it serves HTTPS */
	const char *down_tls;	  /* a CA file: it calls its downstream over HTTPS */
	int port;		  /* the port it listens on (0: the kernel's choice) */
	bool launched; /* started by a shell that waits for it (svc.launcher), as a launcher script */
	/* A file the shell (svc.launcher) waits for, then starts it as a daemon (forked twice) */
	const char *daemon_after;
};

struct svc {
	pid_t pid;
	pid_t launcher; /* the shell that started it (svc_spec.launched), or 0 */
	int port;
	char name[32];
};

/* Starts a service (logs in dir) and waits until it listens. 0 or -1. */
int svc_start(struct svc *s, const struct svc_spec *spec, const char *dir);
/* The same in two steps: started (its launcher's pid in s->pid until ready), then waited for. */
int svc_spawn(struct svc *s, const struct svc_spec *spec, const char *dir);
int svc_ready(struct svc *s, const struct svc_spec *spec, const char *dir);
void svc_stop(struct svc *s);

/*
 * T3 of evaluation.md: <prefix>T failing every third request, and three
 * callers <prefix>S90, <prefix>S50, <prefix>S10 whose own answer fails with
 * probability svc_t3_propagate[i] when T's did. 0, or -1 (what started is
 * left in t and s for svc_stop).
 */
extern const double svc_t3_propagate[3];
int svc_t3_start(struct svc *t, struct svc s[3], const char *prefix, const char *dir);
/*
 * T3's verdicts against the truth, once each caller was asked /r/0 ..
 * /r/89: T's failures (every third id) are its own, each caller's are T's,
 * passed up. S10 -> T is fail-open by design: once it is known so (T's 20th
 * failure, synced to the kernel), rule 3 claims what S10 still passes up
 * (T's 21st failure): the matrix's known cost, counted apart (truth.h), one
 * at most. Tallies the trace from 'from' on and asserts no wrong verdict.
 */
void svc_t3_verdicts(const struct trace_cap *tc, size_t from, const struct svc *t,
		     const struct svc s[3], const char *what);

/*
 * A claimd with its trace (claimd_traced_start) and a keep-alive backend
 * named name failing ids % fail_mod == 0 on its own: what tests of a
 * front in many shapes start once. 0, or -1 (asserted; stop it anyway).
 */
int svc_backend_session_start(struct claimd_h *h, struct trace_cap *t, struct svc *back,
			      const char *name, int fail_mod);
void svc_backend_session_stop(struct claimd_h *h, struct trace_cap *t, struct svc *back);

/*
 * tests/peers/java/ChainFront named name (CLAIMD_SERVICE) on a free port
 * (*port), calling backend, over HTTPS trusting the CA file ca (NULL: in
 * the clear); its log at log. Its pid once it listens, or -1.
 */
pid_t java_front_start(int *port, int backend, const char *ca, const char *name, const char *log);

/* GET path from 127.0.0.1:port on a new connection; the status, or -1. */
int http_get(int port, const char *path);
/* GET /r/0 .. /r/n-1 from port, one at a time: how many failed (no answer, or 500 up). */
int svc_drive(int port, int n);

/*
 * tests/peers/load_client.py against 127.0.0.1:port: threads threads,
 * requests each (GET /r/<id>, id = thread * requests + i), over TLS with
 * the CA file tls (NULL: in the clear), its summary in dir. status[id] (n
 * of them): the answer each id got (0: none). 0, or -1 (asserted).
 */
int load_client_run(const char *dir, int port, int threads, int requests, const char *tls,
		    int *status, int n);
/* The same with more of load_client.py's options (--user-agent UA, --traceparent). */
int load_client_run_with(const char *dir, int port, int threads, int requests, const char *tls,
			 const char *const extra[], int *status, int n);
/*
 * The same in two steps: the client started (its pid, or -1, asserted),
 * then waited for and read, sent the count of requests it must have sent.
 */
pid_t load_client_start(const char *dir, int port, int threads, int requests, const char *tls,
			const char *const extra[]);
int load_client_finish(pid_t pid, const char *dir, int sent, int *status, int n);

#endif
