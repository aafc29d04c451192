// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel framing cost per message head: loads bpf/parsebench.bpf.c
 * and runs its scan of a typical response head (nginx's) and request head
 * (Python urllib's) with BPF_PROG_TEST_RUN, many times; the kernel reports
 * the time per run. With kernel.bpf_stats_enabled=1 and a command given
 * (parse_bench [COMMAND ARG...]), it also times an empty program on the
 * socket tracepoints claimd's read/write program uses, over the command's
 * run: the floor of the per-run figures make bench reports (it runs the
 * untraced process's hammer). With --traced PID COMMAND [ARG...], it
 * times instead the floor of a traced syscall (floor_traced: what any
 * observer that frames PID's socket bytes must do) over the command's run,
 * alone: make bench runs its paced client there, as for claimd's traced
 * figure, and wrk (the statistics off) for the throughput that floor leaves.
 * With --traced PID --and-command COMMAND..., the floor follows the
 * command's own process too: the client's calls, which claimd following
 * the whole host frames as well.
 * Prints one JSON object.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "http_parse.h"
#include "kernel/io_attach.h"
#include "parsebench.skel.h"

static const char response[] = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n"
			       "Date: Sun, 29 Nov 2026 22:08:37 GMT\r\n"
			       "Content-Type: application/octet-stream\r\n"
			       "Content-Length: 3\r\nConnection: keep-alive\r\n\r\n";
static const char request[] = "GET /r/123 HTTP/1.1\r\nAccept-Encoding: identity\r\n"
			      "Host: 127.0.0.1:8001\r\nUser-Agent: Python-urllib/3.11\r\n"
			      "Connection: close\r\n\r\n";

/* ns per repeat of prog under BPF_PROG_TEST_RUN, or -1 (it failed). */
static long test_run(const struct bpf_program *prog)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 100000, .data_in = pkt,
		    .data_size_in = sizeof(pkt));

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o) || o.retval)
		return -1;
	return o.duration;
}

/*
 * ns of framing msg, net of the harness (an empty program's test run), or
 * -1; checks the framer reached the end of the head.
 */
static long run(struct parsebench_bpf *s, const char *msg, int kind)
{
	long framed, harness;

	memset(s->bss->sample, 0, sizeof(s->bss->sample));
	memcpy(s->bss->sample, msg, strlen(msg));
	s->bss->sample_len = strlen(msg);
	s->bss->sample_kind = kind;
	s->bss->sample_gen++;
	framed = test_run(s->progs.parse_bench);
	harness = test_run(s->progs.parse_empty);
	if (framed < 0 || harness < 0 || !(s->bss->out_events & HTTP_EV_HEAD_END))
		return -1;
	return framed > harness ? framed - harness : 0;
}

/*
 * prog on the raw tracepoints sock_recv_length and sock_send_length
 * (attached as claimd attaches tp_io_x) while argv runs: its run count and
 * time in *info (0 without kernel.bpf_stats_enabled). With command_tgid,
 * the command's process id is written there before it runs. 0, or -1 (no
 * command, or it failed).
 */
static int timed_run(struct bpf_program *prog, char **argv, struct bpf_prog_info *info,
		     __u32 *command_tgid)
{
	struct bpf_link *links[IO_ATTACH_MAX] = { 0 }, *own;
	__u32 len = sizeof(*info);
	int status = -1, go[2];
	pid_t pid;
	char c;

	memset(info, 0, sizeof(*info));
	/* Its section's tracepoint (sock_recv_length), and the others as claimd attaches them. */
	if (!argv[0] || !(own = bpf_program__attach(prog)))
		return -1;
	if (pipe(go)) {
		bpf_link__destroy(own);
		return -1;
	}
	if (io_attach(prog, links)) {
		bpf_link__destroy(own);
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		/* Its first syscall only once the floor knows it. */
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		/* Its JSON is not ours: stdout carries one object. */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	if (pid > 0) {
		if (command_tgid)
			*command_tgid = (__u32)pid;
		c = 1;
		if (write(go[1], &c, 1) != 1)
			kill(pid, SIGKILL);
	}
	close(go[1]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	io_detach(links);
	bpf_link__destroy(own);
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    bpf_obj_get_info_by_fd(bpf_program__fd(prog), info, &len))
		return -1;
	return 0;
}

/* Average run time of prog (a floor) while argv runs, or -1. */
static double floor_ns(struct bpf_program *prog, char **argv)
{
	struct bpf_prog_info info;

	if (timed_run(prog, argv, &info, NULL) || !info.run_cnt)
		return -1;
	return (double)info.run_time_ns / info.run_cnt;
}

/*
 * --traced PID [--and-command] COMMAND...: floor_traced's runs and time
 * over the command (following its process too with --and-command).
 */
static int traced_floor(struct parsebench_bpf *s, char **argv)
{
	struct bpf_prog_info info;
	bool and_command;
	char *end;
	long pid;

	and_command = argv[0] && argv[1] && !strcmp(argv[1], "--and-command");
	if (!argv[0] || !argv[1 + and_command]) {
		fprintf(stderr, "parse_bench: --traced PID [--and-command] COMMAND [ARG...]\n");
		return 1;
	}
	pid = strtol(argv[0], &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "parse_bench: --traced: not a process id: %s\n", argv[0]);
		return 1;
	}
	s->bss->floor_tgid = (__u32)pid;
	if (timed_run(s->progs.floor_traced, argv + 1 + and_command, &info,
		      and_command ? &s->bss->floor_client_tgid : NULL)) {
		fprintf(stderr, "parse_bench: --traced: the command failed\n");
		return 1;
	}
	printf("{\"traced_floor_runs\":%llu,\"traced_floor_run_time_ns\":%llu}\n",
	       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
	return 0;
}

int main(int argc, char **argv)
{
	struct parsebench_bpf *s = parsebench_bpf__open_and_load();
	long resp, req;
	double floor = -1, load_floor = -1;

	if (!s) {
		perror("loading bpf/parsebench.bpf.c");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--traced")) {
		int err = traced_floor(s, argv + 2);

		parsebench_bpf__destroy(s);
		return err;
	}
	resp = run(s, response, HTTP_KIND_RESPONSE);
	req = run(s, request, HTTP_KIND_REQUEST);
	if (argc > 1) {
		floor = floor_ns(s->progs.floor_sock, argv + 1);
		load_floor = floor_ns(s->progs.floor_sock_load, argv + 1);
	}
	printf("{\"response_head_bytes\":%zu,\"response_head_ns\":%ld,\"request_head_bytes\":%zu,"
	       "\"request_head_ns\":%ld,\"empty_program_ns\":%.1f,\"one_load_program_ns\":%.1f}\n",
	       strlen(response), resp, strlen(request), req, floor, load_floor);
	parsebench_bpf__destroy(s);
	return resp < 0 || req < 0;
}
