// SPDX-License-Identifier: GPL-2.0
/*
 * A one-request service for the verdict-map test, meant to run as an
 * unprivileged user: it reads its thread's running verdict through libclaim
 * before and after a call to a failing dependency, and tries what it must
 * not be able to do (map the verdict map writable, update it, unlink it).
 * Prints one JSON object with what it saw.
 *
 * With -t MS it gives its call up after MS without an answer, as a client
 * with a timeout does, the connection left open: it reads its verdict then,
 * answers 504, and closes the call's connection only after.
 *
 *   verdict_service -d PORT -r READY_FILE -v VERDICTS [-t MS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "claim.h"
#include "verdict.h"

static int recv_head(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n <= 0)
			return -1;
		got += n;
		buf[got] = 0;
		if (strstr(buf, "\r\n\r\n"))
			return 0;
	}
	return -1;
}

static void print_result(const char *name, const struct claim_result *r)
{
	printf("\"%s\":{\"verdict\":\"%s\",\"rule\":%d,\"cause_port\":%u},", name,
	       claim_verdict_name(r->verdict), r->rule, r->cause_known ? r->cause_port : 0);
}

static int bpf_cmd(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct claim_result before, after;
	const char *ready = NULL, *path = NULL;
	int down = 0, give_up_ms = 0, gave_up = 0, lfd, fd, dfd, mfd, opt;
	struct pollfd pfd;
	socklen_t len = sizeof(sa);
	union bpf_attr attr;
	struct claim *c;
	char buf[4096];
	__u32 key = 1;
	struct claim_slot val;
	void *w;
	FILE *f;

	while ((opt = getopt(argc, argv, "d:r:v:t:")) != -1) {
		if (opt == 'd')
			down = atoi(optarg);
		else if (opt == 'r')
			ready = optarg;
		else if (opt == 'v')
			path = optarg;
		else if (opt == 't')
			give_up_ms = atoi(optarg);
	}
	if (!down || !ready || !path) {
		fprintf(stderr, "usage: %s -d PORT -r READY_FILE -v VERDICTS [-t MS]\n", argv[0]);
		return 2;
	}
	c = claim_open(path);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 4) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len))
		return 1;
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);

	fd = accept(lfd, NULL, NULL);
	if (fd < 0 || recv_head(fd, buf, sizeof(buf)))
		return 1;
	/* Serving a request, no call made yet. */
	claim_current(c, &before);

	sa.sin_port = htons(down);
	dfd = socket(AF_INET, SOCK_STREAM, 0);
	if (dfd < 0 || connect(dfd, (struct sockaddr *)&sa, sizeof(sa)))
		return 1;
	snprintf(buf, sizeof(buf), "GET /dep HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	if (write(dfd, buf, strlen(buf)) < 0)
		return 1;
	pfd.fd = dfd;
	pfd.events = POLLIN;
	if (give_up_ms && poll(&pfd, 1, give_up_ms) == 0) {
		gave_up = 1; /* no answer in time: the call given up, its connection still open */
	} else {
		if (recv_head(dfd, buf, sizeof(buf)))
			return 1;
		close(dfd);
	}
	/* The dependency failed, or was given up: the verdict follows it. */
	claim_current(c, &after);

	printf("{\"pid\":%d,\"uid\":%u,\"connected\":%d,\"gave_up\":%d,", (int)getpid(), getuid(),
	       claim_connected(c), gave_up);
	print_result("before", &before);
	print_result("after", &after);

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (__u64)(unsigned long)path;
	mfd = bpf_cmd(BPF_OBJ_GET, &attr);
	printf("\"obj_get_errno\":%d,", mfd < 0 ? errno : 0);
	w = mfd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	printf("\"mmap_write_errno\":%d,", w == MAP_FAILED ? errno : 0);
	memset(&attr, 0, sizeof(attr));
	memset(&val, 0, sizeof(val));
	attr.map_fd = mfd;
	attr.key = (__u64)(unsigned long)&key;
	attr.value = (__u64)(unsigned long)&val;
	printf("\"update_errno\":%d,", bpf_cmd(BPF_MAP_UPDATE_ELEM, &attr) ? errno : 0);
	printf("\"unlink_errno\":%d}\n", unlink(path) ? errno : 0);
	fflush(stdout);

	snprintf(buf, sizeof(buf), "HTTP/1.1 %s\r\nContent-Length: 0\r\n\r\n",
		 gave_up ? "504 Gateway Timeout" : "502 Bad Gateway");
	if (write(fd, buf, strlen(buf)) < 0)
		return 1;
	close(fd);
	if (gave_up)
		close(dfd);
	claim_close(c);
	return 0;
}
