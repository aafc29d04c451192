// SPDX-License-Identifier: GPL-2.0
/*
 * Apache httpd (Debian's package, a config of the test's own): mod_ssl
 * terminating HTTPS and mod_proxy calling a Python backend that fails every
 * fifth request, which Apache passes up. Its event MPM serves each request
 * on a worker thread, and mod_ssl feeds OpenSSL through BIOs of its own:
 * the handshake reads the client's first request record behind its
 * Finished, and the SSL_read that decrypts it makes no syscall. Every
 * request must be seen, every call on Apache's edge, and every failure
 * unclaimed with the backend as its cause; a new connection per request,
 * then one kept alive per client thread.
 */
#include <stdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "services.h"
#include "sockets.h"
#include "test_progs.h"
#include "truth.h"

#define CLIENTS	 4
#define REQUESTS 200 /* per run, CLIENTS threads of REQUESTS / CLIENTS */
#define FAIL_MOD 5

struct httpd {
	pid_t pid;
	int port;
	char dir[H_DIR];
	char name[32]; /* as claimd names it: no CLAIMD_SERVICE in its workers */
};

static int make_cert(const char dir[H_DIR])
{
	char cert[H_PATH], key[H_PATH];

	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	return tls_cert_make(cert, key);
}

static int httpd_start(struct httpd *a, const char *dir, const char *what, int backend)
{
	static const char *const mods[] = { "mpm_event",     "authz_core", "ssl",
					    "socache_shmcb", "proxy",	   "proxy_http" };
	char text[4096], conf[H_PATH];
	const char *argv[] = { "apache2", "-f", conf, "-DFOREGROUND", NULL };
	long long end = now_ms() + 15000;
	size_t i, n = 0;

	a->port = sock_free_port();
	if (snprintf(a->dir, sizeof(a->dir), "%s/httpd-%s", dir, what) >= (int)sizeof(a->dir))
		return -1;
	snprintf(a->name, sizeof(a->name), "apache2:%d", a->port);
	/* The workers run as www-data: they must reach what the parent made. */
	if (mkdir(a->dir, 0755) || chmod(dir, 0755) || make_cert(a->dir))
		return -1;
	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		n += snprintf(text + n, sizeof(text) - n,
			      "LoadModule %s_module /usr/lib/apache2/modules/mod_%s.so\n", mods[i],
			      mods[i]);
	snprintf(text + n, sizeof(text) - n,
		 "ServerRoot %s\n"
		 "DefaultRuntimeDir %s\n"
		 "PidFile %s/httpd.pid\n"
		 "ErrorLog %s/error.log\n"
		 "ServerName 127.0.0.1\n"
		 "Listen 127.0.0.1:%d\n"
		 "User www-data\n"
		 "Group www-data\n"
		 "StartServers 1\n"
		 "ServerLimit 1\n"
		 "ThreadsPerChild 8\n"
		 "MaxRequestWorkers 8\n"
		 "SSLSessionCache shmcb:%s/ssl_scache(512000)\n"
		 "<VirtualHost 127.0.0.1:%d>\n"
		 "  SSLEngine on\n"
		 "  SSLCertificateFile %s/cert.pem\n"
		 "  SSLCertificateKeyFile %s/key.pem\n"
		 "  ProxyPass /r/ http://127.0.0.1:%d/r/\n"
		 "</VirtualHost>\n",
		 a->dir, a->dir, a->dir, a->dir, a->port, a->dir, a->port, a->dir, a->dir, backend);
	snprintf(conf, sizeof(conf), "%s/httpd.conf", a->dir);
	if (write_file(conf, text))
		return -1;
	a->pid = proc_spawn(argv, NULL, NULL);
	while (a->pid > 0 && now_ms() < end) {
		int fd = sock_connect(a->port);

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		sleep_ms(50);
	}
	printf("apache2 did not start (config %s)\n", conf);
	return -1;
}

static void httpd_stop(struct httpd *a)
{
	if (a->pid > 0)
		proc_stop(a->pid, 10000);
	a->pid = 0;
}

struct svc_name {
	const char *name;
};

static bool match_name(struct json_object *o, void *arg)
{
	struct svc_name *m = arg;

	return !strcmp(j_str(o, "type"), "ingress") && !strcmp(j_str(o, "service"), m->name);
}

/* REQUESTS over HTTPS by CLIENTS threads; how many answered 503, or -1. */
static int load(const struct httpd *a, const char *dir, const char *what, bool keepalive)
{
	char script[H_PATH], port[16], out[H_PATH], ca[H_PATH], threads[8], each[8];
	const char *argv[] = { "python3",
			       script,
			       "--port",
			       port,
			       "--threads",
			       threads,
			       "--requests",
			       each,
			       "--out",
			       out,
			       "--tls",
			       ca,
			       keepalive ? "--keepalive" : NULL,
			       NULL };
	struct json_object *summary = NULL, *statuses;
	int failed = -1;
	pid_t client;

	peer_script("load_client.py", script, sizeof(script));
	snprintf(port, sizeof(port), "%d", a->port);
	snprintf(threads, sizeof(threads), "%d", CLIENTS);
	snprintf(each, sizeof(each), "%d", REQUESTS / CLIENTS);
	snprintf(out, sizeof(out), "%s/client-%s.json", dir, what);
	snprintf(ca, sizeof(ca), "%s/cert.pem", a->dir);
	client = proc_spawn(argv, NULL, NULL);
	if (!ASSERT_EQ(proc_wait(client, 120000), 0, "the HTTPS client"))
		return -1;
	summary = json_object_from_file(out);
	statuses = j_get(summary, "statuses");
	if (ASSERT_OK_PTR(statuses, "the client's summary")) {
		failed = 0;
		json_object_object_foreach(statuses, id, st) {
			(void)id;
			failed += json_object_get_int(st) == 503;
		}
	}
	json_object_put(summary);
	return failed;
}

static bool edge_done(struct json_object *e, void *ctx)
{
	(void)ctx;
	return j_int(e, "calls") >= REQUESTS && j_int(e, "callee_failures") >= REQUESTS / FAIL_MOD;
}

static void run(struct claimd_h *h, struct trace_cap *t, const struct svc *b, const char *what,
		bool keepalive)
{
	const struct truth_svc shape = { .target = "/r/%d", .ids = REQUESTS, .mod = FAIL_MOD };
	struct httpd a = { 0 };
	struct svc_name m = { a.name };
	const pid_t pids[2] = { 0, b->pid }; /* Apache by its name: its workers are children */
	const char *names[2] = { a.name, b->name };
	struct truth_svc truth[2];
	struct truth_tally tally = { 0 };
	struct json_object *e = NULL, *root = NULL;
	size_t mark = trace_mark(t);
	int failed;

	if (!ASSERT_OK(httpd_start(&a, h->dir, what, b->port), "apache2 start"))
		goto out;
	failed = load(&a, h->dir, what, keepalive);
	ASSERT_EQ(failed, REQUESTS / FAIL_MOD, "the clients saw the backend's failures");
	trace_wait(t, match_name, &m, REQUESTS, 15000);
	e = claimd_settled_edge(h, a.name, b->name, edge_done, NULL, 15000);
	ASSERT_EQ(j_int(e, "calls"), REQUESTS, "every call on Apache's edge");
	ASSERT_EQ(j_int(e, "callee_failures"), REQUESTS / FAIL_MOD, "callee failures");
	ASSERT_EQ(j_int(e, "both_failed"), REQUESTS / FAIL_MOD, "both failed");
	ASSERT_STREQ(j_str(e, "class"), "fail-close", "the edge's class");
	root = claimd_edge(h, "apache2", b->name);
	ASSERT_TRUE(!root, "no root edge under the bare process name");
	truth__chain(truth, 2, &shape, pids, names);
	truth__tally_trace(&tally, t, mark, truth, 2, 2 * REQUESTS / FAIL_MOD);
	/* The backend claims its own failures, Apache unclaims them. */
	truth__expect(&tally, a.name, 2 * REQUESTS / FAIL_MOD, 0);
out:
	json_object_put(root);
	json_object_put(e);
	httpd_stop(&a);
}

void test_apache_ssl_proxy(void)
{
	struct claimd_h h = { 0 };
	struct trace_cap t = { 0 };
	struct svc b = { 0 };

	if (!test__need_root())
		return;
	if (claimd_traced_start(&h, &t, NULL))
		goto out;
	if (svc_start(&b, &(struct svc_spec){ .name = "ab1", .fail_mod = FAIL_MOD }, h.dir))
		goto out;
	if (test__start_subtest("new_connections"))
		run(&h, &t, &b, "new", false);
	if (test__start_subtest("keepalive"))
		run(&h, &t, &b, "keepalive", true);
out:
	svc_stop(&b);
	claimd_traced_stop(&h, &t);
}
