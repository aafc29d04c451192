// SPDX-License-Identifier: GPL-2.0
/* Instant queries to Prometheus; see promql.h. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "promql.h"

#define PROMQL_MAX_BODY (16u << 20) /* a larger answer is refused, not read */

struct body {
	char *buf;
	size_t len;
	bool too_big;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t len = size * n;
	char *nb;

	if (b->len + len > PROMQL_MAX_BODY) {
		b->too_big = true;
		return 0; /* curl stops: CURLE_WRITE_ERROR */
	}
	nb = realloc(b->buf, b->len + len + 1);
	if (!nb)
		return 0;
	memcpy(nb + b->len, p, len);
	b->buf = nb;
	b->len += len;
	b->buf[b->len] = 0;
	return len;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct json_object *promql__result(const char *body, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
	struct json_object *data, *res = NULL, *v;

	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "the answer is not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(o, "status", &v) ||
	    strcmp(json_object_get_string(v), "success")) {
		json_object_object_get_ex(o, "error", &v);
		snprintf(err, errlen, "query failed: %s", v ? json_object_get_string(v) : "?");
		goto out;
	}
	if (!json_object_object_get_ex(o, "data", &data) ||
	    !json_object_object_get_ex(data, "resultType", &v) ||
	    strcmp(json_object_get_string(v), "vector") ||
	    !json_object_object_get_ex(data, "result", &v) ||
	    !json_object_is_type(v, json_type_array)) {
		snprintf(err, errlen, "the answer is not an instant vector");
		goto out;
	}
	res = json_object_get(v);
out:
	json_object_put(o);
	return res;
}

struct json_object *promql__query(const char *base_url, const char *query, long timeout_ms,
				  char *err, size_t errlen)
{
	struct body b = { 0 };
	struct json_object *res = NULL;
	char *q = NULL, *url = NULL;
	size_t n = strlen(base_url);
	long status = 0;
	CURLcode rc;
	CURL *c;

	pthread_once(&curl_once, curl_init);
	c = curl_easy_init();
	if (!c) {
		snprintf(err, errlen, "cannot make an HTTP client");
		return NULL;
	}
	while (n && base_url[n - 1] == '/')
		n--; /* "http://h:9090/" and "http://h:9090" alike */
	q = curl_easy_escape(c, query, 0);
	if (!q || asprintf(&url, "%.*s/api/v1/query?query=%s", (int)n, base_url, q) < 0) {
		url = NULL;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "claimd");
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s",
			 b.too_big ? "the answer is too large" : curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200 && status != 400 && status != 422) {
		snprintf(err, errlen, "HTTP status %ld", status);
		goto out;
	}
	res = b.buf ? promql__result(b.buf, b.len, err, errlen) : NULL;
	if (!b.buf)
		snprintf(err, errlen, "an empty answer");
out:
	free(url);
	curl_free(q);
	free(b.buf);
	curl_easy_cleanup(c);
	return res;
}

const char *promql__label(struct json_object *sample, const char *name)
{
	struct json_object *m, *v;

	if (!json_object_object_get_ex(sample, "metric", &m) ||
	    !json_object_object_get_ex(m, name, &v))
		return "";
	return json_object_get_string(v);
}

double promql__value(struct json_object *sample)
{
	struct json_object *v = NULL, *s;
	const char *str;
	char *end;
	double d;

	if (!json_object_object_get_ex(sample, "value", &v) ||
	    !json_object_is_type(v, json_type_array) || json_object_array_length(v) != 2)
		return NAN;
	s = json_object_array_get_idx(v, 1);
	str = json_object_get_string(s);
	if (!str)
		return NAN;
	d = strtod(str, &end);
	return end == str || *end ? NAN : d;
}
