/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of socket files served on this host, put into the kernel's
 * unix_served (bpf/observer.bpf.c) from /proc/net/unix's listeners, beside
 * those the programs put as they follow connections. A connect to a name
 * in that table that fails is a failed call (bpf/connects.c). So a cache
 * seen listening, then dead before any connection to it was followed
 * (claimd started after its clients' last call, or the service after the
 * cache died), is a dependency that failed, not nothing.
 *
 * A failed connect to a name never there is a probe when listed as one
 * (glibc's of nscd's socket: unix_served__probes), and otherwise unsure:
 * the kernel asks what the name is (unix_served__ask), and a socket file
 * nobody listens on, a server's that died before claimd saw it listen,
 * is served from then on.
 */
#ifndef CLAIMD_UNIX_SERVED_H
#define CLAIMD_UNIX_SERVED_H

#include <linux/types.h>

struct unix_served;

/*
 * A learner into the table at map_fd (kept by the caller), telling each
 * (when given) every name it learns, or NULL.
 */
typedef void (*unix_served_fn)(__u64 hash, const char *path, __u64 bound, void *arg);
struct unix_served *unix_served__new(int map_fd, unix_served_fn each, void *arg);
void unix_served__free(struct unix_served *u);

/*
 * The names of n socket files that processes try before they ask for
 * something else, whether a server is there or not (glibc asks nscd's
 * before each name it resolves): into the kernel's table of names not
 * served at unserved_fd (bpf/observer.bpf.c, unix_unserved), as probes,
 * now and at each look that asks the kernel again (once a minute), when
 * the names asked about (unix_served__ask) are let go too: a file that
 * was no socket file may be a dead server's since, asked again at its
 * next failed connect. A failed connect to a probe is no call. 0, or
 * -errno (the table refused one; too many).
 */
#define UNIX_PROBES_MAX 16
int unix_served__probes(struct unix_served *u, int unserved_fd, const char *const *paths, int n);

/*
 * The names of n socket files that dependencies serve, told by the
 * operator: served, whether a listener was seen on them or not (a cache
 * stopped cleanly before claimd started takes its file away, and is
 * never seen), put now and again at each look that asks the kernel
 * again, with their other names (unix_listeners__aliases). A failed
 * connect to one is a failed call. The count of names new to the table,
 * or -errno (too many; the table refused one).
 */
#define UNIX_DEPENDENCIES_MAX 16
int unix_served__dependencies(struct unix_served *u, const char *const *paths, int n);

/*
 * A name (its hash) of a socket file that an earlier claimd knew served
 * (model/departed.h): into the table, listened on now or not, unless it
 * is a probe's (unix_served__probes, given first). Not told to each: its
 * name is known already, and not listened on now. A cache stopped
 * cleanly while claimd was down took its file away: its clients' failed
 * connects are failed calls all the same. 1 when new to the table, 0
 * when not, -errno when the table refused it.
 */
int unix_served__remember(struct unix_served *u, __u64 hash);

/*
 * A followed process, tgid, connected to the name of len bytes at name
 * (hash: headers/unixaddr.h) that no listener was seen on (a
 * claimd_socket_file record). When a socket file is there, as that
 * process sees its files (/proc/TGID/root, or its working directory for a
 * relative name), its server is gone or unseen: the name goes into the
 * table, told to each as bound by itself. 1 when learned; 0 when nothing
 * is there, or no socket file, or the name is abstract (no file to look
 * at), or the table had it already; -errno when the table refused it.
 */
int unix_served__ask(struct unix_served *u, __u32 tgid, const char *name, size_t len, __u64 hash);

/*
 * Puts the name of every socket file listened on now into the table, with
 * the other names a client may reach it by (unix_listeners__aliases), and
 * tells each every name's hash and path, and the hash of the name it was
 * bound by (the same for that one). A listener learned at an
 * earlier look is passed over but now and then. The count of names new to
 * the table, or -errno (/proc/net/unix unreadable, or the table refused
 * one).
 */
int unix_served__learn(struct unix_served *u);

#endif /* CLAIMD_UNIX_SERVED_H */
