// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel framing cost per message head: loads bpf/parsebench.bpf.c
 * and runs its scan of a typical response head (nginx's) and request head
 * (Python urllib's) with BPF_PROG_TEST_RUN, many times; the kernel reports
 * the time per run. With kernel.bpf_stats_enabled=1 it also times an empty
 * program on the read tracepoint over a million reads: the floor of the
 * per-run figures make bench reports. Prints one JSON object.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "http_parse.h"
#include "parsebench.skel.h"

static const char response[] = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n"
			       "Date: Sun, 29 Nov 2026 22:08:37 GMT\r\n"
			       "Content-Type: application/octet-stream\r\n"
			       "Content-Length: 3\r\nConnection: keep-alive\r\n\r\n";
static const char request[] = "GET /r/123 HTTP/1.1\r\nAccept-Encoding: identity\r\n"
			      "Host: 127.0.0.1:8001\r\nUser-Agent: Python-urllib/3.11\r\n"
			      "Connection: close\r\n\r\n";

/* ns per run, or -1; checks the framer reached the end of the head. */
static long run(struct parsebench_bpf *s, const char *msg, int kind)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 100000, .data_in = pkt,
		    .data_size_in = sizeof(pkt));

	memset(s->bss->sample, 0, sizeof(s->bss->sample));
	memcpy(s->bss->sample, msg, strlen(msg));
	s->bss->sample_len = strlen(msg);
	s->bss->sample_kind = kind;
	if (bpf_prog_test_run_opts(bpf_program__fd(s->progs.parse_bench), &o) || o.retval ||
	    !(s->bss->out_events & HTTP_EV_HEAD_END))
		return -1;
	return o.duration;
}

/* Average run time of an empty program over a million reads, or -1. */
static double floor_ns(struct parsebench_bpf *s)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	char c = 'x';
	int p[2], i;

	if (parsebench_bpf__attach(s) || pipe(p))
		return -1;
	for (i = 0; i < 1000000; i++)
		if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
			return -1;
	close(p[0]);
	close(p[1]);
	if (bpf_obj_get_info_by_fd(bpf_program__fd(s->progs.floor_read), &info, &len) ||
	    !info.run_cnt)
		return -1;
	return (double)info.run_time_ns / info.run_cnt;
}

int main(void)
{
	struct parsebench_bpf *s = parsebench_bpf__open_and_load();
	long resp, req;

	if (!s) {
		perror("loading bpf/parsebench.bpf.c");
		return 1;
	}
	resp = run(s, response, HTTP_KIND_RESPONSE);
	req = run(s, request, HTTP_KIND_REQUEST);
	printf("{\"response_head_bytes\":%zu,\"response_head_ns\":%ld,\"request_head_bytes\":%zu,"
	       "\"request_head_ns\":%ld,\"empty_program_ns\":%.1f}\n",
	       strlen(response), resp, strlen(request), req, floor_ns(s));
	parsebench_bpf__destroy(s);
	return resp < 0 || req < 0;
}
