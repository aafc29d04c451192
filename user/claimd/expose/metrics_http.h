/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claimd's HTTP endpoint (libmicrohttpd, on its own thread): GET /metrics
 * (Prometheus), /graph.json (graph.h) and the live service map at / and
 * /map (webmap.h). The HTTP thread never touches claimd's tables: the main
 * loop publishes a snapshot (the rendered metrics and the graph JSON) under a
 * mutex, and requests are answered from copies of it. Rendering is done on
 * demand: the main loop marks the snapshot stale when what it shows
 * changed; a request for a stale one wakes the main loop (wake_fd) and waits
 * for the new one. Nobody asking, nothing is rendered.
 */
#ifndef CLAIMD_METRICS_HTTP_H
#define CLAIMD_METRICS_HTTP_H

#include <stdbool.h>
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
/* Replaces the metrics text / the graph JSON; takes the malloc'd string (NULL: none). */
void metrics_http__publish_metrics(struct metrics_http *h, char *text, size_t len);
void metrics_http__publish_graph(struct metrics_http *h, char *json, size_t len);
/* What the snapshot shows changed: the next request gets it rendered anew. */
void metrics_http__stale(struct metrics_http *h);
/* Readable when a request waits for a fresh snapshot; __wanted consumes that
 * and says which: the metrics text, the graph JSON, or both. */
int metrics_http__wake_fd(const struct metrics_http *h);
void metrics_http__wanted(struct metrics_http *h, bool *metrics, bool *graph);
void metrics_http__stop(struct metrics_http *h);

#endif
