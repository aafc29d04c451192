/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's one thread waits on one epoll set; every file descriptor in it
 * carries an ep_src saying which function handles its events.
 */
#ifndef CLAIMD_EVLOOP_H
#define CLAIMD_EVLOOP_H

#include <stdint.h>

struct ep_src {
	int fd;
	void (*on_event)(struct ep_src *src, uint32_t events);
};

int ep_add(int epfd, struct ep_src *src, uint32_t events);
int ep_mod(int epfd, struct ep_src *src, uint32_t events);
void ep_del(int epfd, struct ep_src *src);

#endif
