// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libclaim for Node.js: the C library (libclaim.so, loaded with dlopen from
 * $CLAIMD_LIBCLAIM or the system's, as the Python and Java packages load
 * it) behind a Node-API addon: current(), ruleName(), contextEnter(fd),
 * contextLeave(), parseHeader(), shouldRetry(), connected().
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <node_api.h>

#include "claim.h"

static struct {
	struct claim *(*open)(const char *);
	int (*connected)(const struct claim *);
	enum claim_verdict (*current)(const struct claim *, struct claim_result *);
	const char *(*rule_name)(enum claim_rule);
	void (*enter)(int);
	void (*leave)(void);
	enum claim_verdict (*parse_header)(const char *, size_t);
	enum claim_decision (*should_retry)(const struct claim_outcome *,
					    const struct claim_retry_opts *);
	struct claim *handle;
} lib;

static int load(void)
{
	const char *path = getenv("CLAIMD_LIBCLAIM");
	void *h = dlopen(path && *path ? path : "libclaim.so.0", RTLD_NOW | RTLD_GLOBAL);

	if (!h)
		return -1;
	lib.open = dlsym(h, "claim_open");
	lib.connected = dlsym(h, "claim_connected");
	lib.current = dlsym(h, "claim_current");
	lib.rule_name = dlsym(h, "claim_rule_name");
	lib.enter = dlsym(h, "claim_context_enter");
	lib.leave = dlsym(h, "claim_context_leave");
	lib.parse_header = dlsym(h, "claim_parse_header");
	lib.should_retry = dlsym(h, "claim_should_retry");
	if (!lib.open || !lib.connected || !lib.current || !lib.rule_name || !lib.enter ||
	    !lib.leave || !lib.parse_header || !lib.should_retry)
		return -1;
	lib.handle = lib.open(NULL);
	return lib.handle ? 0 : -1;
}

static int32_t arg_int(napi_env env, napi_callback_info info, size_t i)
{
	napi_value argv[4];
	size_t argc = 4;
	int32_t v = 0;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	if (i < argc)
		napi_get_value_int32(env, argv[i], &v);
	return v;
}

static napi_value number(napi_env env, int32_t v)
{
	napi_value r;

	napi_create_int32(env, v, &r);
	return r;
}

static napi_value js_enter(napi_env env, napi_callback_info info)
{
	lib.enter(arg_int(env, info, 0));
	return NULL;
}

static napi_value js_leave(napi_env env, napi_callback_info info)
{
	(void)info;
	lib.leave();
	return NULL;
}

static napi_value js_connected(napi_env env, napi_callback_info info)
{
	napi_value r;

	(void)info;
	napi_get_boolean(env, lib.connected(lib.handle), &r);
	return r;
}

/* { verdict: 0..3, rule: "name", causePort: n (0: none) } */
/*
 * current() -> the running verdict packed in one number (one value to make,
 * not an object of three): verdict | rule << 8 | causePort << 16.
 */
static napi_value js_current(napi_env env, napi_callback_info info)
{
	struct claim_result r;
	uint32_t port;
	napi_value v;

	(void)info;
	lib.current(lib.handle, &r);
	port = r.cause_known ? r.cause_port : 0;
	napi_create_uint32(env, (uint32_t)r.verdict | (uint32_t)(r.rule & 0xff) << 8 | port << 16,
			   &v);
	return v;
}

/* ruleName(number) -> the rule's name, from libclaim's one table */
static napi_value js_rule_name(napi_env env, napi_callback_info info)
{
	napi_value name;

	napi_create_string_utf8(env, lib.rule_name(arg_int(env, info, 0)), NAPI_AUTO_LENGTH, &name);
	return name;
}

/* parseHeader(string or undefined) -> 0..3 */
static napi_value js_parse_header(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	size_t argc = 1, len = 0;
	char buf[64];
	napi_valuetype t = napi_undefined;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	if (argc)
		napi_typeof(env, argv[0], &t);
	if (t != napi_string)
		return number(env, CLAIM_NONE);
	napi_get_value_string_utf8(env, argv[0], buf, sizeof(buf), &len);
	return number(env, lib.parse_header(buf, len));
}

/* shouldRetry(status, headerVerdict, attempt, maxAttempts) -> decision number */
static napi_value js_should_retry(napi_env env, napi_callback_info info)
{
	struct claim_outcome out = { .status = arg_int(env, info, 0),
				     .header = arg_int(env, info, 1) };
	struct claim_retry_opts o = { .attempt = arg_int(env, info, 2),
				      .max_attempts = arg_int(env, info, 3) };

	return number(env, lib.should_retry(&out, &o));
}

static napi_value init(napi_env env, napi_value exports)
{
	static const struct {
		const char *name;
		napi_callback fn;
	} fns[] = {
		{ "contextEnter", js_enter },	    { "contextLeave", js_leave },
		{ "connected", js_connected },	    { "current", js_current },
		{ "parseHeader", js_parse_header }, { "shouldRetry", js_should_retry },
		{ "ruleName", js_rule_name },
	};
	size_t i;

	if (load()) {
		napi_throw_error(env, NULL, "libclaim: cannot load libclaim.so ($CLAIMD_LIBCLAIM)");
		return NULL;
	}
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		napi_value f;

		napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f);
		napi_set_named_property(env, exports, fns[i].name, f);
	}
	return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
