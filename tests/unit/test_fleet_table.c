// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet's classes as claimd reads them back from Prometheus
 * (user/claimd/fleet/fleet_table.c, user/common/promql.c), from answers shaped as
 * the HTTP API gives them: an edge named on every host, one this host knows
 * only by address, unknown and unreadable samples, and the API's errors.
 */
#include <math.h>
#include <string.h>

#include "fleet/fleet_table.h"
#include "promql.h"
#include "test_progs.h"

static const char classes_body[] =
	"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
	"{\"metric\":{\"__name__\":\"claimd:edge_class:rate5m\",\"caller\":\"frontend\","
	"\"callee\":\"backend\"},\"value\":[1700000000.1,\"1\"]},"
	"{\"metric\":{\"__name__\":\"claimd:edge_class:rate5m\",\"caller\":\"frontend\","
	"\"callee\":\"ads\"},\"value\":[1700000000.1,\"2\"]},"
	"{\"metric\":{\"__name__\":\"claimd:edge_class:rate5m\",\"caller\":\"frontend\","
	"\"callee\":\"cart\"},\"value\":[1700000000.1,\"0\"]},"
	"{\"metric\":{\"__name__\":\"claimd:edge_class:rate5m\",\"caller\":\"frontend\","
	"\"callee\":\"odd\"},\"value\":[1700000000.1,\"7\"]},"
	"{\"metric\":{\"__name__\":\"claimd:edge_class:rate5m\",\"caller\":\"frontend\"},"
	"\"value\":[1700000000.1,\"1\"]}]}}";
static const char ratios_body[] =
	"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
	"{\"metric\":{\"caller\":\"frontend\",\"callee\":\"backend\"},"
	"\"value\":[1700000000.1,\"0.9696969696969697\"]},"
	"{\"metric\":{\"caller\":\"frontend\",\"callee\":\"ads\"},\"value\":[1,\"NaN\"]}]}}";
static const char addresses_body[] =
	"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
	"{\"metric\":{\"callee\":\"backend\",\"callee_address\":\"10.0.3.7:8080\"},"
	"\"value\":[1700000000.1,\"1\"]},"
	"{\"metric\":{\"callee\":\"\",\"callee_address\":\"10.0.3.8:8080\"},"
	"\"value\":[1700000000.1,\"1\"]}]}}";

static struct json_object *result(const char *body)
{
	char err[128] = "";
	struct json_object *r = promql__result(body, strlen(body), err, sizeof(err));

	ASSERT_OK_PTR(r, err);
	return r;
}

void test_fleet_table(void)
{
	struct json_object *c = result(classes_body), *r = result(ratios_body);
	struct json_object *a = result(addresses_body);
	struct fleet_table *t = fleet_table__new(c, r, a);
	enum claim_class cls = CLAIM_CLASS_UNKNOWN;
	double ratio = 0;

	if (!ASSERT_OK_PTR(t, "table"))
		goto out;
	ASSERT_EQ(fleet_table__edges(t), 3, "edges with both names and a class");
	if (test__start_subtest("by_name")) {
		ASSERT_TRUE(fleet_table__class(t, "frontend", "backend", &cls, &ratio), "known");
		ASSERT_EQ(cls, CLAIM_CLASS_FAIL_CLOSE, "fail-close");
		ASSERT_FLOAT_NEAR(ratio, 32.0 / 33, 1e-12, "the fleet's ratio");
		ASSERT_TRUE(fleet_table__class(t, "frontend", "ads", &cls, &ratio), "fail-open");
		ASSERT_EQ(cls, CLAIM_CLASS_FAIL_OPEN, "fail-open");
		ASSERT_TRUE(isnan(ratio), "NaN ratio: none");
	}
	if (test__start_subtest("by_address")) {
		ASSERT_TRUE(fleet_table__class(t, "frontend", "10.0.3.7:8080", &cls, &ratio),
			    "an address its own host names");
		ASSERT_EQ(cls, CLAIM_CLASS_FAIL_CLOSE, "the named edge's class");
		ASSERT_FALSE(fleet_table__class(t, "frontend", "10.0.3.8:8080", &cls, &ratio),
			     "an address named by nobody");
		ASSERT_FALSE(fleet_table__class(t, "other", "10.0.3.7:8080", &cls, &ratio),
			     "another caller's edge");
	}
	if (test__start_subtest("unknown")) {
		ASSERT_FALSE(fleet_table__class(t, "frontend", "cart", &cls, &ratio),
			     "the fleet says unknown: no class");
		ASSERT_FALSE(fleet_table__class(t, "frontend", "odd", &cls, &ratio), "not a class");
		ASSERT_FALSE(fleet_table__class(NULL, "frontend", "backend", &cls, &ratio),
			     "no fleet");
	}
	if (test__start_subtest("names")) {
		struct fleet_table *same = fleet_table__new(NULL, NULL, a);
		struct fleet_table *none = fleet_table__new(c, r, NULL);

		ASSERT_STREQ(fleet_table__name(t, "10.0.3.7:8080"), "backend", "named");
		ASSERT_FALSE(fleet_table__name(t, "10.0.3.8:8080"), "an empty name is none");
		ASSERT_TRUE(fleet_table__same_names(t, same), "the same names");
		ASSERT_FALSE(fleet_table__same_names(t, none), "names gone");
		ASSERT_TRUE(fleet_table__same_names(none, NULL), "none either way");
		fleet_table__drop_classes(t);
		ASSERT_EQ(fleet_table__edges(t), 0, "classes dropped");
		ASSERT_FALSE(fleet_table__class(t, "frontend", "backend", &cls, &ratio),
			     "no class once dropped");
		ASSERT_STREQ(fleet_table__name(t, "10.0.3.7:8080"), "backend", "names kept");
		fleet_table__free(same);
		fleet_table__free(none);
	}
	if (test__start_subtest("api_errors")) {
		static const char *const bad[] = {
			"",
			"not json",
			"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse "
			"error\"}",
			"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}"
			"}",
			"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\"}}",
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char err[128] = "";
			struct json_object *o =
				promql__result(bad[i], strlen(bad[i]), err, sizeof(err));

			ASSERT_FALSE(o, bad[i]);
			ASSERT_TRUE(err[0], "a reason");
			json_object_put(o);
		}
	}
out:
	fleet_table__free(t);
	json_object_put(c);
	json_object_put(r);
	json_object_put(a);
}
