/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of services and callees, as design.md says: a service is the
 * CLAIMD_SERVICE value in its process's environment, else "<comm>:<port>";
 * a process that only makes calls is "<comm>"; a callee is the service that
 * listens on this host at its address, else the name its own host gives it
 * (the fleet's, names__set_remote), else "ip:port". Process facts are
 * read from /proc once and cached until the process exits.
 */
#ifndef CLAIMD_NAMES_H
#define CLAIMD_NAMES_H

#include <stdbool.h>
#include <time.h>
#include <stddef.h>
#include <linux/types.h>

#include "addr.h"
#include "observer.h"

struct names;

struct names *names__new(void);
void names__free(struct names *n);

/* This host is the network namespace at path (claimd --netns): its
 * addresses are the local ones. 0, or -1 with errno. */
int names__use_netns(struct names *n, const char *path);

/* The name a callee's own host gives the address "ip:port", or NULL: asked
 * after this host's listeners and before the address itself is the name. */
typedef const char *(*names_remote_fn)(void *ctx, const char *addr);
void names__set_remote(struct names *n, names_remote_fn fn, void *ctx);
/* What fn answers changed: names given before may have changed. */
void names__remote_changed(struct names *n);

/*
 * Process tgid as the kernel saw it at its first call (comm, and service:
 * the CLAIMD_SERVICE its environment held, "" for none): what names it if
 * it is gone before claimd reads /proc. comm may be NULL.
 */
void names__seen(struct names *n, __u32 tgid, const char *comm, const char *service);
/* The service a process runs on a local port (the ingress side). */
const char *names__service(struct names *n, __u32 tgid, __u16 port, const char *comm);
/* A process making calls outside any ingress. */
const char *names__process(struct names *n, __u32 tgid, const char *comm);
/* Who answers calls to this address: a local service, or "ip:port". */
const char *names__callee(struct names *n, const struct claimd_addr *a);

/* A listener appeared (closed = 0) or went away. comm may be NULL. */
void names__listen(struct names *n, __u32 tgid, const struct claimd_addr *local, const char *comm,
		   bool closed);
/*
 * A socket file listened on, a name of it (its hash, headers/unixaddr.h,
 * and its path), and the hash of the name it was bound by (hash again for
 * that one): a callee by another name is the callee by the bound one; a
 * callee there that no listener known to claimd names is "unix:<path>",
 * once it is gone too. seen: when it was listened on (a name told again
 * keeps the later time). 1 when the name is new.
 */
int names__socket_file(struct names *n, __u64 hash, const char *path, __u64 bound, time_t seen);
/*
 * Each name of a socket file told so, to fn: its hash, its path, the hash
 * of the name it was bound by, when it was last listened on. What a
 * claimd started again knows for served, listened on or not
 * (model/departed.h).
 */
typedef void (*names_socket_file_fn)(__u64 hash, const char *path, __u64 bound, time_t seen,
				     void *ctx);
void names__each_socket_file(struct names *n, names_socket_file_fn fn, void *ctx);
/* Does the process hold a listener? */
bool names__listening(struct names *n, __u32 tgid);
/* Changes whenever a name given earlier may have changed (listeners, exits, maps). */
unsigned long names__generation(const struct names *n);
/* The process exited: forget it and its listeners. */
void names__exit(struct names *n, __u32 tgid);
/* Each process it knows (a name or a listener), to fn. */
void names__each_process(struct names *n, void (*fn)(__u32 tgid, void *ctx), void *ctx);

/*
 * The listeners gone whose names outlive them (until another listens on
 * their port): each one's address and name, to fn. What a claimd started
 * again names them by (model/departed.h).
 */
typedef void (*names_departed_fn)(const struct claimd_addr *local, const char *name, void *ctx);
void names__each_departed(struct names *n, names_departed_fn fn, void *ctx);
/* One such name put back (nothing listens on its port now): 1 when kept. */
int names__departed_add(struct names *n, const struct claimd_addr *local, const char *name);

/*
 * Every address a caller on another host could reach a listening service at,
 * with the service's name: a listener's own address, or for one on the
 * wildcard address each of this host's addresses (IPv4 only for 0.0.0.0).
 * Loopback and link-local addresses are no one else's way in: left out.
 */
void names__for_each_address(struct names *n,
			     void (*fn)(const char *service, const struct claimd_addr *a,
					void *ctx),
			     void *ctx);

/* Names for callees off this host, from text of lines "ip:port name" ('#'
 * starts a comment). Returns entries added, or -1 with the line and reason in
 * err; on error nothing is added. */
int names__parse_map(struct names *n, const char *text, size_t len, char *err, size_t errlen);
/* The same from a file; errors are logged. Returns 0 or -1. */
int names__load_map(struct names *n, const char *path);
bool names__addr_is_any(const struct claimd_addr *a);
bool names__addr_is_loopback(const struct claimd_addr *a);

#endif
