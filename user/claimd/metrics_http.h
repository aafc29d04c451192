/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's HTTP endpoint (libmicrohttpd, on its own thread): GET /metrics
 * (Prometheus), /graph.json (graph.h) and the live service map at / and
 * /map (webmap.h). The HTTP thread never touches claimd's tables: the main
 * loop publishes a snapshot (the rendered metrics and the graph JSON) once
 * a second, under a mutex, and requests are answered from copies of it.
 */
#ifndef CLAIMD_METRICS_HTTP_H
#define CLAIMD_METRICS_HTTP_H

#include <stddef.h>
#include <sys/socket.h>

struct metrics_http;

/* "HOST:PORT" or "[V6]:PORT" (HOST a name or a numeric address) to a
 * socket address. 0, or -1 with a reason in err. */
int metrics_http__parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len,
			     char *err, size_t errlen);

/* Listens on addr; NULL with a reason in err. */
struct metrics_http *metrics_http__start(const char *addr, char *err, size_t errlen);
/* The address it listens on, as a URL ("http://127.0.0.1:9464/"). */
const char *metrics_http__url(const struct metrics_http *h);
/* Replaces the snapshot; takes both malloc'd strings (either may be NULL). */
void metrics_http__publish(struct metrics_http *h, char *metrics, size_t metrics_len, char *graph,
			   size_t graph_len);
void metrics_http__stop(struct metrics_http *h);

#endif
