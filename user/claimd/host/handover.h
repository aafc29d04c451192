/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One claimd per pin directory, and restarts without refusal. claimd holds
 * an exclusive flock on its pin directory for its whole life (the kernel
 * drops it when the last of its files closes, after its links are gone). A
 * claimd started while the previous one is still leaving (SIGKILLed, or
 * detaching after SIGTERM) waits for it, bounded, saying so once; a
 * claimd that keeps running keeps the directory: the newcomer refuses at
 * once. "Leaving" is read from /proc: the process is gone, a zombie, in
 * do_exit (PF_EXITING), or a claimd that has said it is stopping
 * (handover__mark_leaving: its name becomes "claimd:stopping").
 */
#ifndef CLAIMD_HANDOVER_H
#define CLAIMD_HANDOVER_H

#include <stdbool.h>
#include <sys/types.h>

#define HANDOVER_WAIT_MS 10000

/* Locks dir (made if missing) for this claimd, waiting up to wait_ms for a
 * leaving holder. Returns the lock's fd, -EWOULDBLOCK when another process
 * keeps it (said on stderr), or another -errno (said too). */
int handover__lock(const char *dir, int wait_ms);

/* Is the process gone or on its way out? */
bool handover__pid_leaving(pid_t pid);

/* Tells restarting claimds that this one is on its way out. */
void handover__mark_leaving(void);

#endif
