/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A real Prometheus server for end-to-end tests (Debian's /usr/bin/prometheus):
 * started on a free port with the shipped rules, scraping and evaluating
 * every second, and asked instant queries through its HTTP API.
 */
#ifndef CLAIMD_TEST_PROM_H
#define CLAIMD_TEST_PROM_H

#include <stdbool.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "harness.h"

#define PROMETHEUS "/usr/bin/prometheus"

/* scripts/prometheus of the checkout, into buf. */
const char *prom_rules_dir(char *buf, size_t len);

struct prom_h {
	pid_t pid;
	int port;
	char log[H_PATH];
};

/* Starts Prometheus with its config and data in dir, scraping the metrics
 * addresses in targets ("127.0.0.1:9464", NULL-terminated) every second with
 * the shipped rules. 0 or -1 (said why). */
int prom_start(struct prom_h *p, const char *dir, const char *const targets[]);
/* Stops it (by its pid); prints its log first when print_log. */
void prom_stop(struct prom_h *p, bool print_log);

/* The "result" of an instant query (a new reference), or NULL. */
struct json_object *prom_query(int port, const char *query);
/* The value of the only sample of an instant query, or NAN. */
double prom_value(int port, const char *query);
/* Polls until the query's only sample is want; false (said) after timeout_ms. */
bool prom_wait(int port, const char *query, double want, int timeout_ms);

#endif
