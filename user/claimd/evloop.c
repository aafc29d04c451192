// SPDX-License-Identifier: GPL-2.0
/* Registering event sources with claimd's epoll set; see evloop.h. */
#include <stddef.h>
#include <sys/epoll.h>

#include "evloop.h"

int ep_add(int epfd, struct ep_src *src, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = src };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, src->fd, &ev);
}

int ep_mod(int epfd, struct ep_src *src, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = src };

	return epoll_ctl(epfd, EPOLL_CTL_MOD, src->fd, &ev);
}

void ep_del(int epfd, struct ep_src *src)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, src->fd, NULL);
}
