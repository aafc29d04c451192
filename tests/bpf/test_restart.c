// SPDX-License-Identifier: GPL-2.0
/*
 * Restart without refusal: a claimd started while the previous one on the
 * same pin directory and control socket is still leaving waits for it
 * (bounded, saying so once) instead of exiting 4, then serves and sees
 * traffic:
 * - 0.2 s after the previous one was SIGKILLed (the kernel is still
 *   closing its links: its pin directory lock goes last);
 * - 0.2 s after SIGTERM (it is detaching);
 * - at once after SIGKILL, when the wait is the likeliest.
 * Each prints the time from the signal to the new claimd answering, and
 * whether it said it waited. The old one is reaped only after the new one
 * runs: nothing here waits for it first.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "test_progs.h"

struct want_requests {
	const char *name;
	long long n;
};

/* The service's requests in 'claimctl services', or -1. */
static long long requests_of(const struct claimd_h *h, const char *name)
{
	struct json_object *arr = claimctl_json(h, (const char *const[]){ "services", NULL });
	long long n = -1;
	size_t i;

	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *s = json_object_array_get_idx(arr, i);

		if (!strcmp(j_str(s, "service"), name))
			n = j_int(s, "requests");
	}
	json_object_put(arr);
	return n;
}

/* n requests to the service, then claimd must count them all. */
static bool sees_traffic(const struct claimd_h *h, const struct svc *s, int first, int n)
{
	long long end = now_ms() + 10000, got = -1;
	char path[32];
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/r/%d", first + i);
		ok += http_get(s->port, path) == 200;
	}
	if (!ASSERT_EQ(ok, n, "the service answered"))
		return false;
	while (now_ms() < end && (got = requests_of(h, s->name)) < n)
		sleep_ms(100);
	return ASSERT_EQ(got, n, "the new claimd saw every request");
}

static void restart_after(int sig, int delay_ms, const char *what)
{
	const char *extra[] = { "--metrics", "none", NULL };
	struct claimd_h h = { 0 };
	struct svc s = { 0 };
	char text[8192];
	long long t0, t1;
	pid_t old;
	int status;

	if (!ASSERT_OK(claimd_start(&h, extra), "first claimd"))
		goto out;
	if (!ASSERT_OK(svc_start(&s, &(struct svc_spec){ .name = "rsA" }, h.dir), "service") ||
	    !sees_traffic(&h, &s, 0, 5))
		goto out;
	old = h.pid;
	h.pid = 0;
	t0 = now_ms();
	kill(old, sig);
	sleep_ms(delay_ms);
	/* Same pin directory, control socket and state: h keeps them. */
	unlink(h.log);
	ASSERT_OK(claimd_start(&h, extra), "the next claimd starts");
	t1 = now_ms();
	status = proc_wait(old, 20000);
	read_file(h.log, text, sizeof(text));
	{
		const char *w = strstr(text, "released after");

		printf("%s: the next claimd answered %.2f s after the signal (%s%.*s)\n", what,
		       (t1 - t0) / 1000.0, w ? "pin directory " : "no wait",
		       w ? (int)strcspn(w, ";\n") : 0, w ? w : "");
	}
	ASSERT_TRUE(sig == SIGKILL ? WIFSIGNALED(status)
				   : WIFEXITED(status) && !WEXITSTATUS(status),
		    "the old one ended as signalled");
	if (!h.pid)
		goto out;
	ASSERT_TRUE(proc_wait(h.pid, 0) == -1, "the next claimd runs");
	sees_traffic(&h, &s, 100, 5);
out:
	if (test__failed_now())
		claimd_print_log(&h);
	svc_stop(&s);
	claimd_stop(&h);
	tmpdir_remove(h.dir);
}

void test_restart(void)
{
	if (!test__need_root())
		return;
	if (test__start_subtest("after_sigkill"))
		restart_after(SIGKILL, 200, "SIGKILL, next 0.2 s later");
	if (test__start_subtest("after_sigterm"))
		restart_after(SIGTERM, 200, "SIGTERM, next 0.2 s later");
	if (test__start_subtest("at_once_after_sigkill"))
		restart_after(SIGKILL, 0, "SIGKILL, next at once");
}
