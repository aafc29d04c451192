// SPDX-License-Identifier: GPL-2.0
/*
 * The failing end of a storm, in C with libclaim: a thread per connection,
 * HTTP/1.1 keep-alive on 127.0.0.1, every GET /r/<id> answered 503 with
 * the x-error-claim libclaim formats from its thread's running verdict
 * (claimd's: it called nothing, so claimed). GET /stats answers how many
 * /r/ requests it served. Writes its port to FILE once listening.
 *
 *   claim_leaf -r FILE
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "claim.h"
#include "head_loop.h"

static struct claim *claim;
static unsigned long served;

/* The answer to the request whose head starts at head. */
static int answer(int fd, const char *head, void *arg)
{
	char hdr[64], out[512];
	int n;

	(void)arg;
	if (!strncmp(head, "GET /stats ", 11)) {
		char body[64];
		int len = snprintf(body, sizeof(body), "{\"requests\": %lu}\n",
				   __atomic_load_n(&served, __ATOMIC_RELAXED));

		n = snprintf(out, sizeof(out),
			     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			     "Content-Length: %d\r\n\r\n%s",
			     len, body);
	} else {
		__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
		if (claim_format_header(claim_current(claim, NULL), hdr, sizeof(hdr)) < 0)
			hdr[0] = 0;
		n = snprintf(
			out, sizeof(out),
			"HTTP/1.1 503 Service Unavailable\r\n%sContent-Length: 7\r\n\r\nfailed\n",
			hdr);
	}
	return write(fd, out, n) == n ? 0 : -1;
}

static void *serve(void *arg)
{
	serve_heads((int)(intptr_t)arg, answer, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int lfd, one = 1;
	pthread_attr_t attr;
	char tmp[4096];
	FILE *f;

	if (argc != 3 || strcmp(argv[1], "-r")) {
		fprintf(stderr, "usage: claim_leaf -r READY_FILE\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	claim = claim_open(NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1024) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len)) {
		perror("claim_leaf: listen");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(f) || rename(tmp, argv[2])) {
		perror("claim_leaf: ready file");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t t;

		if (fd < 0)
			continue;
		if (pthread_create(&t, &attr, serve, (void *)(intptr_t)fd))
			close(fd);
	}
}
