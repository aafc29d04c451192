// SPDX-License-Identifier: GPL-2.0
/* nginx as the tests' reverse proxy; see nginx.h. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gopatch.h"
#include "nginx.h"
#include "sockets.h"

int nginx_start(struct ngx *n, const char *dir, const char *name, const char *locations)
{
	return nginx_start_http(n, dir, name, "", locations);
}

int nginx_start_http(struct ngx *n, const char *dir, const char *name, const char *http,
		     const char *locations)
{
	char text[4096], prefix[H_DIR + 16];
	const char *argv[] = { n->bin ? n->bin : "nginx", "-p", prefix, "-c", n->conf, NULL };
	long long end = now_ms() + 10000;

	n->port = sock_free_port();
	snprintf(prefix, sizeof(prefix), "%s/nginx-%s", dir, name);
	snprintf(text, sizeof(text), "mkdir -p %s/logs", prefix);
	if (system(text))
		return -1;
	snprintf(n->conf, sizeof(n->conf), "%s/nginx.conf", prefix);
	snprintf(text, sizeof(text),
		 "worker_processes 1;\n"
		 "daemon off;\n"
		 "master_process on;\n"
		 "pid %s/nginx.pid;\n"
		 "error_log %s/logs/error.log;\n"
		 "events { worker_connections 256; }\n"
		 "http {\n"
		 "  access_log off;\n"
		 "  client_body_temp_path %s; proxy_temp_path %s;\n"
		 "  fastcgi_temp_path %s; uwsgi_temp_path %s; scgi_temp_path %s;\n"
		 "%s"
		 "  server {\n"
		 "    listen 127.0.0.1:%d;\n"
		 "%s"
		 "  }\n"
		 "}\n",
		 prefix, prefix, prefix, prefix, prefix, prefix, prefix, http, n->port, locations);
	if (write_file(n->conf, text))
		return -1;
	snprintf(n->name, sizeof(n->name), "nginx:%d", n->port);
	n->pid = proc_spawn(argv, NULL, NULL);
	while (now_ms() < end) {
		int fd = sock_connect(n->port);

		if (fd >= 0) {
			close(fd);
			claimd_programs_settle();
			return 0;
		}
		sleep_ms(50);
	}
	printf("nginx did not start (config %s)\n", n->conf);
	return -1;
}

/* Debian's nginx 1.22 at ngx_chain_writer: its prologue (RDI to R15 among it), the load. */
#define NGX_WRITER_START "\x41\x57\x49\x89\xff\x41\x56\x41\x55\x41\x54\x55\x53\x48\x83\xec\x08"
#define NGX_WRITER_LOAD	 "\x48\x8b\x6f\x10" /* mov 0x10(%rdi),%rbp */
#define NGX_WRITER_R15	 "\x49\x8b\x6f\x10" /* mov 0x10(%r15),%rbp */

int nginx_refused_copy(const char *path)
{
	int n = gopatch_copy("/usr/sbin/nginx", path, NULL, 0, NGX_WRITER_START NGX_WRITER_LOAD,
			     NGX_WRITER_START NGX_WRITER_R15, 0);

	if (n != 1)
		printf("nginx's code at ngx_chain_writer is not Debian's 1.22 build's (%d found)\n",
		       n);
	return n == 1 ? 0 : -1;
}

void nginx_stop(struct ngx *n)
{
	if (n->pid > 0)
		proc_stop(n->pid, 5000);
	n->pid = 0;
}
