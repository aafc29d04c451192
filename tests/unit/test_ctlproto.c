// SPDX-License-Identifier: GPL-2.0
/*
 * The control protocol's requests (user/common/ctlproto.c): every command parses,
 * "roots" is read as a boolean, malformed requests (not JSON, not an object,
 * no "cmd", a "cmd" that is not a string or not a command, a "roots" that is
 * not a boolean, trailing garbage, a line over CTL_MAX_LINE) are refused with
 * a reason, and ctl_request__format writes lines that parse back to the same
 * request.
 */
#include <stdlib.h>
#include <string.h>

#include "ctlproto.h"
#include "test_progs.h"

static int parse(const char *s, struct ctl_request *req, char *err, size_t errlen)
{
	err[0] = 0;
	return ctl_request__parse(s, strlen(s), req, err, errlen);
}

void test_ctlproto(void)
{
	struct ctl_request req;
	char err[256];

	if (test__start_subtest("commands")) {
		static const struct {
			const char *line;
			enum ctl_cmd cmd;
		} cases[] = {
			{ "{\"cmd\":\"trace\"}", CTL_TRACE },
			{ "{\"cmd\":\"status\"}", CTL_STATUS },
			{ "{\"cmd\":\"edges\"}", CTL_EDGES },
			{ "{\"cmd\":\"services\"}", CTL_SERVICES },
			{ " { \"cmd\" : \"edges\" } ", CTL_EDGES },
			{ "{\"other\":1,\"cmd\":\"services\"}", CTL_SERVICES },
		};
		size_t i;

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			memset(&req, 0xff, sizeof(req));
			if (!ASSERT_OK(parse(cases[i].line, &req, err, sizeof(err)), cases[i].line))
				printf("  reason: %s\n", err);
			ASSERT_EQ(req.cmd, cases[i].cmd, cases[i].line);
			ASSERT_FALSE(req.roots, "roots defaults to false");
		}
		ASSERT_STREQ(ctl_cmd__name(CTL_TRACE), "trace", "name trace");
		ASSERT_STREQ(ctl_cmd__name(CTL_STATUS), "status", "name status");
		ASSERT_STREQ(ctl_cmd__name(CTL_EDGES), "edges", "name edges");
		ASSERT_STREQ(ctl_cmd__name(CTL_SERVICES), "services", "name services");
		ASSERT_STREQ(ctl_cmd__name(CTL__COUNT), "?", "name out of range");
	}
	if (test__start_subtest("roots")) {
		ASSERT_OK(parse("{\"cmd\":\"trace\",\"roots\":true}", &req, err, sizeof(err)),
			  "roots true");
		ASSERT_EQ(req.cmd, CTL_TRACE, "cmd");
		ASSERT_TRUE(req.roots, "roots set");
		ASSERT_OK(parse("{\"roots\":false,\"cmd\":\"trace\"}", &req, err, sizeof(err)),
			  "roots false");
		ASSERT_FALSE(req.roots, "roots clear");
		/* A previous request's roots does not leak into the next. */
		ASSERT_OK(parse("{\"cmd\":\"trace\",\"roots\":true}", &req, err, sizeof(err)),
			  "roots true again");
		ASSERT_OK(parse("{\"cmd\":\"trace\"}", &req, err, sizeof(err)), "no roots");
		ASSERT_FALSE(req.roots, "roots reset");
	}
	if (test__start_subtest("malformed")) {
		static const char *const bad[] = {
			"",
			"   ",
			"hello",
			"{\"cmd\":\"status\"",
			"[\"status\"]",
			"[{\"cmd\":\"status\"}]",
			"\"status\"",
			"42",
			"null",
			"{}",
			"{\"command\":\"status\"}",
			"{\"cmd\":1}",
			"{\"cmd\":null}",
			"{\"cmd\":true}",
			"{\"cmd\":[\"status\"]}",
			"{\"cmd\":{\"name\":\"status\"}}",
			"{\"cmd\":\"\"}",
			"{\"cmd\":\"stat\"}",
			"{\"cmd\":\"Status\"}",
			"{\"cmd\":\"status \"}",
			"{\"cmd\":\"reboot\"}",
			"{\"cmd\":\"trace\",\"roots\":1}",
			"{\"cmd\":\"trace\",\"roots\":\"true\"}",
			"{\"cmd\":\"trace\",\"roots\":null}",
			"{\"cmd\":\"trace\",\"roots\":[true]}",
			"{\"cmd\":\"status\"}x",
			"{\"cmd\":\"status\"}{\"cmd\":\"edges\"}",
			"{\"cmd\":\"status\"} junk",
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ASSERT_EQ(parse(bad[i], &req, err, sizeof(err)), -1, bad[i]);
			ASSERT_GT(strlen(err), 0, "reason given");
		}
		/* A NUL inside the line: the text after it is still garbage. */
		ASSERT_EQ(ctl_request__parse("{\"cmd\":\"status\"}\0x", 18, &req, err, sizeof(err)),
			  -1, "NUL then garbage");
	}
	if (test__start_subtest("too_long")) {
		static const char head[] = "{\"cmd\":\"status\"}";
		char *line = malloc(CTL_MAX_LINE + 2);

		if (ASSERT_OK_PTR(line, "malloc")) {
			/* Valid JSON padded with spaces, exactly the limit long: accepted. */
			memset(line, ' ', CTL_MAX_LINE + 1);
			memcpy(line, head, sizeof(head) - 1);
			line[CTL_MAX_LINE + 1] = 0;
			ASSERT_OK(ctl_request__parse(line, CTL_MAX_LINE, &req, err, sizeof(err)),
				  "at the limit");
			ASSERT_EQ(req.cmd, CTL_STATUS, "cmd at the limit");
			err[0] = 0;
			ASSERT_EQ(
				ctl_request__parse(line, CTL_MAX_LINE + 1, &req, err, sizeof(err)),
				-1, "one byte over");
			ASSERT_TRUE(strstr(err, "longer") != NULL, "reason says too long");
		}
		free(line);
	}
	if (test__start_subtest("round_trip")) {
		int cmd, roots;

		for (cmd = 0; cmd < CTL__COUNT; cmd++) {
			for (roots = 0; roots < 2; roots++) {
				struct ctl_request in = { .cmd = cmd, .roots = roots };
				struct ctl_request out;
				char *line = ctl_request__format(&in);
				size_t len;

				if (!ASSERT_OK_PTR(line, "format"))
					continue;
				len = strlen(line);
				ASSERT_GT(len, 1, "not empty");
				ASSERT_EQ(line[len - 1], '\n', "ends in a newline");
				ASSERT_TRUE(memchr(line, '\n', len - 1) == NULL, "one line");
				ASSERT_TRUE(strstr(line, ctl_cmd__name(cmd)) != NULL, "names cmd");
				memset(&out, 0xff, sizeof(out));
				ASSERT_OK(ctl_request__parse(line, len - 1, &out, err, sizeof(err)),
					  line);
				ASSERT_EQ(out.cmd, in.cmd, "same cmd");
				ASSERT_EQ(out.roots, in.roots, "same roots");
				free(line);
			}
		}
	}
}
