/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's command line: in, argv; out, struct options, every setting with
 * its default, checked before anything is loaded (a bad one exits with
 * status 64). Each option is one row of a table (options.c): its name, its
 * help, its bounds and where its value goes; the message a value out of
 * bounds gets is made from the bounds.
 */
#ifndef CLAIMD_OPTIONS_H
#define CLAIMD_OPTIONS_H

#include <stdbool.h>

#include "expose/control.h"
#include "kernel/observer_api.h"
#include "kernel/unix_served.h"
#include "model/edges.h"

#define DEFAULT_PIN_DIR	  "/sys/fs/bpf/claimd"
#define DEFAULT_STATE_DIR "/var/lib/claimd"
#define DEFAULT_METRICS	  "127.0.0.1:9464"
/* glibc asks nscd before each name it resolves, nscd running or not: its socket, by both names. */
#define DEFAULT_PROBE_SOCKETS "/var/run/nscd/socket", "/run/nscd/socket"

struct options {
	/* The kernel's settings; its fail_status is the edges' (one --fail-status). */
	struct observer_config obs;
	struct edges_config edges;
	const char *state_dir;
	const char *names_file;
	unsigned int persist_s;
	struct control_opts control;
	bool no_seed;
	bool no_tls;
	bool no_go;
	bool no_nginx;
	bool no_node;
	int verbose;
	const char *metrics; /* HOST:PORT, or NULL for none */
	bool metrics_given;
	/* Socket files tried before a process asks for something else (nscd's): no call. */
	const char *probe_sockets[UNIX_PROBES_MAX]; /* the defaults included */
	int n_probe_sockets;
	/* Socket files dependencies serve, seen served or not: a failed connect is a failed call. */
	const char *dependency_sockets[UNIX_DEPENDENCIES_MAX];
	int n_dependency_sockets;
	const char *fleet_url; /* Prometheus, for the fleet's classes; NULL: none */
	unsigned int fleet_interval_s;
	long fleet_timeout_ms;
};

/* Fills o from the defaults and argv; exits (64) on bad usage. 0, or -1
 * when argp itself failed. */
int options__parse(int argc, char **argv, struct options *o);

#endif
