// SPDX-License-Identifier: GPL-2.0
/* A real Prometheus server for end-to-end tests; see prom.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "sockets.h"
#include "test_progs.h"

const char *prom_rules_dir(char *buf, size_t len)
{
	snprintf(buf, len, "%s/scripts/prometheus", test__top_dir());
	return buf;
}

static int write_config(const char *path, const char *const targets[])
{
	char text[4096], dir[H_PATH];
	size_t n;
	int i;

	prom_rules_dir(dir, sizeof(dir));
	n = snprintf(text, sizeof(text),
		     "global:\n"
		     "  scrape_interval: 1s\n"
		     "  scrape_timeout: 1s\n"
		     "  evaluation_interval: 1s\n"
		     "rule_files:\n"
		     "  - %s/claimd.rules.yml\n"
		     "  - %s/claimd.alerts.yml\n"
		     "scrape_configs:\n"
		     "  - job_name: claimd\n"
		     "    static_configs:\n"
		     "      - targets:\n",
		     dir, dir);
	for (i = 0; targets[i] && n < sizeof(text); i++)
		n += snprintf(text + n, sizeof(text) - n, "          - '%s'\n", targets[i]);
	if (n >= sizeof(text))
		return -1;
	return write_file(path, text);
}

int prom_start(struct prom_h *p, const char *dir, const char *const targets[])
{
	char cfg[H_PATH], a_cfg[H_PATH + 16], a_data[H_PATH + 32], a_web[96];
	const char *argv[] = { PROMETHEUS, a_cfg, a_data, a_web, NULL };

	p->port = sock_free_port();
	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
	snprintf(p->log, sizeof(p->log), "%s/prometheus.log", dir);
	if (write_config(cfg, targets)) {
		printf("cannot write %s\n", cfg);
		return -1;
	}
	snprintf(a_cfg, sizeof(a_cfg), "--config.file=%s", cfg);
	snprintf(a_data, sizeof(a_data), "--storage.tsdb.path=%s/prometheus-data", dir);
	snprintf(a_web, sizeof(a_web), "--web.listen-address=127.0.0.1:%d", p->port);
	p->pid = proc_spawn(argv, NULL, p->log);
	return p->pid > 0 ? 0 : -1;
}

void prom_stop(struct prom_h *p, bool print_log)
{
	char text[1 << 14];

	if (p->pid > 0)
		proc_stop(p->pid, 5000);
	p->pid = 0;
	if (print_log && p->log[0] && read_file(p->log, text, sizeof(text)) > 0)
		printf("---- prometheus log ----\n%s\n", text);
}

struct json_object *prom_query(int port, const char *query)
{
	static char out[1 << 18];
	char url[128], q[1024];
	const char *argv[] = { "curl", "-s", "-G", "--max-time", "5", "--data-urlencode",
			       q,      url,  NULL };
	struct json_object *o, *res = NULL;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/query", port);
	snprintf(q, sizeof(q), "query=%s", query);
	if (proc_run(argv, out, sizeof(out), 10000) != 0)
		return NULL;
	o = json_tokener_parse(out);
	if (o && !strcmp(j_str(o, "status"), "success"))
		res = json_object_get(j_get(j_get(o, "data"), "result"));
	json_object_put(o);
	return res;
}

double prom_value(int port, const char *query)
{
	struct json_object *res = prom_query(port, query), *v;
	double value = NAN;

	if (res && json_object_array_length(res) == 1) {
		v = j_get(json_object_array_get_idx(res, 0), "value");
		value = strtod(json_object_get_string(json_object_array_get_idx(v, 1)), NULL);
	}
	json_object_put(res);
	return value;
}

bool prom_wait(int port, const char *query, double want, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		if (prom_value(port, query) == want)
			return true;
		sleep_ms(250);
	}
	printf("prometheus: %s never became %g (last %g)\n", query, want, prom_value(port, query));
	return false;
}
