// SPDX-License-Identifier: GPL-2.0
/*
 * Naming (user/claimd/model/names.c): "ip:port" and "[ipv6]:port" parsed, formatted and
 * refused when malformed; loopback and wildcard addresses; the names map
 * (good lines, comments, blank lines, and a bad line anywhere refusing the
 * whole text with nothing added); callees named by the map, by a local
 * listener (a wildcard listener answers for loopback addresses), or as
 * "ip:port"; services and processes named from /proc for the test's own
 * process ("<comm>:<port>", comm "test_progs", unless CLAIMD_SERVICE is in
 * its environment) and from the record's comm for a process that is gone.
 * Each process it knows told (names__each_process), none after its exit.
 * A socket file's other names (through a symlink to its directory, or
 * /var/run for /run), and a callee by one of them named as by the name
 * its server bound.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/unix_listeners.h"
#include "model/names.h"
#include "unixaddr.h"
#include "test_progs.h"

#define V4(a, b, c, d)                                                           \
	{                                                                        \
		[10] = 0xff, [11] = 0xff, [12] = a, [13] = b, [14] = c, [15] = d \
	}

/* Far above any pid_max: /proc has nothing for it. */
#define GONE_TGID 0x7ffffff0u

static struct claimd_addr addr(const char *s)
{
	struct claimd_addr a;

	if (addr__parse(s, &a))
		memset(&a, 0xee, sizeof(a)); /* visibly wrong */
	return a;
}

/* What the test's own process is called as a service on port. */
static void own_service(char *buf, size_t len, unsigned int port)
{
	const char *env = getenv("CLAIMD_SERVICE");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "test_progs:%u", port);
}

static void parse_addr_tests(void)
{
	struct claimd_addr a;

	if (test__start_subtest("parse_addr_ipv4")) {
		static const __u8 want[16] = V4(10, 1, 2, 3);
		static const __u8 lo[16] = V4(127, 0, 0, 1);

		ASSERT_OK(addr__parse("10.1.2.3:8080", &a), "10.1.2.3:8080");
		ASSERT_TRUE(!memcmp(a.addr, want, 16), "v4-mapped bytes");
		ASSERT_EQ(a.port, 8080, "port");
		ASSERT_EQ(a.pad, 0, "pad cleared");
		ASSERT_OK(addr__parse("127.0.0.1:1", &a), "port 1");
		ASSERT_TRUE(!memcmp(a.addr, lo, 16), "127.0.0.1");
		ASSERT_EQ(a.port, 1, "port 1");
		ASSERT_OK(addr__parse("0.0.0.0:65535", &a), "port 65535");
		ASSERT_EQ(a.port, 65535, "port 65535");
	}
	if (test__start_subtest("parse_addr_ipv6")) {
		static const __u8 lo6[16] = { [15] = 1 };
		static const __u8 doc[16] = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0x12, [15] = 0x34 };
		static const __u8 mapped[16] = V4(192, 0, 2, 7);

		ASSERT_OK(addr__parse("[::1]:80", &a), "[::1]:80");
		ASSERT_TRUE(!memcmp(a.addr, lo6, 16), "::1");
		ASSERT_EQ(a.port, 80, "port");
		ASSERT_OK(addr__parse("[2001:db8::1234]:443", &a), "[2001:db8::1234]:443");
		ASSERT_TRUE(!memcmp(a.addr, doc, 16), "2001:db8::1234");
		ASSERT_EQ(a.port, 443, "port 443");
		ASSERT_OK(addr__parse("[::ffff:192.0.2.7]:9", &a), "v4-mapped v6");
		ASSERT_TRUE(!memcmp(a.addr, mapped, 16), "same bytes as 192.0.2.7");
	}
	if (test__start_subtest("parse_addr_bad")) {
		static const char *const bad[] = {
			"",
			":",
			":80",
			"10.1.2.3",
			"10.1.2.3:",
			"10.1.2.3:0",
			"10.1.2.3:65536",
			"10.1.2.3:70000",
			"10.1.2.3:99999999999999999999999",
			"10.1.2.3:-1",
			"10.1.2.3:+80",
			"10.1.2.3: 80",
			"10.1.2.3:-18446744073709551535",
			"10.1.2.3:80x",
			"10.1.2.3:0x50",
			"10.1.2.3:80 ",
			"10.1.2.300:80",
			"10.1.2:80",
			"host.example:80",
			"junk",
			"[::1]",
			"[::1]:",
			"[::1]80",
			"[::1:80",
			"[]:80",
			"[::1]:0",
			"[::1]:65536",
			"[not-an-ip]:80",
			"[::1]:80:81",
			"[10.1.2.3:80",
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			ASSERT_EQ(addr__parse(bad[i], &a), -1, bad[i]);
	}
	if (test__start_subtest("format_addr")) {
		static const char *const round[] = {
			"10.1.2.3:8080", "127.0.0.1:1",		 "0.0.0.0:65535",
			"[::1]:80",	 "[2001:db8::1234]:443", "[fe80::1]:5",
		};
		char buf[64];
		size_t i;

		for (i = 0; i < sizeof(round) / sizeof(round[0]); i++) {
			a = addr(round[i]);
			addr__format(&a, buf, sizeof(buf));
			ASSERT_STREQ(buf, round[i], "formats back the same");
		}
		a = addr("[::ffff:192.0.2.7]:9");
		addr__format(&a, buf, sizeof(buf));
		ASSERT_STREQ(buf, "192.0.2.7:9", "v4-mapped shown as IPv4");
		a = addr("10.1.2.3:8080");
		addr__format(&a, buf, 8);
		ASSERT_STREQ(buf, "10.1.2.", "truncated, terminated");
	}
	if (test__start_subtest("loopback_any")) {
		static const struct {
			const char *s;
			bool loopback, any;
		} cases[] = {
			{ "127.0.0.1:1", true, false },	 { "127.255.0.9:1", true, false },
			{ "[::1]:1", true, false },	 { "0.0.0.0:1", false, true },
			{ "[::]:1", false, true },	 { "10.0.0.1:1", false, false },
			{ "128.0.0.1:1", false, false }, { "[::2]:1", false, false },
			{ "[fe80::1]:1", false, false }, { "[::ffff:127.0.0.1]:1", true, false },
		};
		size_t i;

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			a = addr(cases[i].s);
			ASSERT_EQ(names__addr_is_loopback(&a), cases[i].loopback, cases[i].s);
			ASSERT_EQ(names__addr_is_any(&a), cases[i].any, cases[i].s);
		}
	}
}

static void parse_map_tests(void)
{
	struct claimd_addr a1 = addr("10.0.0.1:80"), a2 = addr("[2001:db8::5]:443");
	struct claimd_addr a3 = addr("10.0.0.3:8080");
	char err[256];

	if (test__start_subtest("parse_map_good")) {
		static const char text[] = "# names of services off this host\n"
					   "\n"
					   "10.0.0.1:80 billing   # the billing API\n"
					   "   \t\n"
					   "[2001:db8::5]:443\tauth\r\n"
					   "  10.0.0.3:8080   inventory";
		static const char more[] = "10.0.0.1:80 payments\n10.0.0.4:80 other\n";
		struct names *n = names__new();

		if (ASSERT_OK_PTR(n, "names__new")) {
			ASSERT_EQ(names__parse_map(n, text, sizeof(text) - 1, err, sizeof(err)), 3,
				  "three entries");
			ASSERT_STREQ(names__callee(n, &a1), "billing", "a1");
			ASSERT_STREQ(names__callee(n, &a2), "auth", "a2");
			ASSERT_STREQ(names__callee(n, &a3), "inventory", "a3");
			/* The same address, another port: not mapped. */
			a1.port = 81;
			ASSERT_STREQ(names__callee(n, &a1), "10.0.0.1:81", "other port");
			a1.port = 80;
			/* A second map: new lines add, a repeated address takes the new name. */
			ASSERT_EQ(names__parse_map(n, more, strlen(more), err, sizeof(err)), 2,
				  "second map");
			ASSERT_STREQ(names__callee(n, &a1), "payments", "renamed");
			ASSERT_STREQ(names__callee(n, &a2), "auth", "kept");
			names__free(n);
		}
	}
	if (test__start_subtest("parse_map_empty")) {
		static const char comments[] = "# only\n\n  # comments\n";
		struct names *n = names__new();

		if (ASSERT_OK_PTR(n, "names__new")) {
			ASSERT_EQ(names__parse_map(n, "", 0, err, sizeof(err)), 0, "empty text");
			ASSERT_EQ(names__parse_map(n, comments, strlen(comments), err, sizeof(err)),
				  0, "comments only");
			ASSERT_STREQ(names__callee(n, &a1), "10.0.0.1:80", "nothing mapped");
			names__free(n);
		}
	}
	if (test__start_subtest("parse_map_bad")) {
		static const struct {
			const char *what;
			const char *text;
			size_t len; /* 0: strlen */
		} bad[] = {
			{ "bad line first", "10.0.0.9 svc\n10.0.0.1:80 billing\n", 0 },
			{ "bad line last", "10.0.0.1:80 billing\nnot-an-address svc\n", 0 },
			{ "bad line between",
			  "10.0.0.1:80 billing\n10.0.0.1:0 zero\n[2001:db8::5]:443 auth\n", 0 },
			{ "address only", "10.0.0.1:80 billing\n10.0.0.2:80\n", 0 },
			{ "three fields", "10.0.0.1:80 billing\n10.0.0.2:80 a b\n", 0 },
			{ "three fields, last unterminated", "10.0.0.1:80 billing\n10.0.0.2:80 a b",
			  0 },
			{ "name too long",
			  "10.0.0.1:80 billing\n10.0.0.2:80 "
			  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
			  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\n",
			  0 },
			{ "NUL byte", "10.0.0.1:80 billing\n10.0.0.2:80 x\0y\n", 36 },
			{ "NUL byte alone", "10.0.0.1:80 billing\n\0\n", 22 },
			{ "port 70000", "10.0.0.1:80 billing\n10.0.0.2:70000 big\n", 0 },
		};
		struct names *n = names__new();
		size_t i;

		if (!ASSERT_OK_PTR(n, "names__new"))
			return;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);

			err[0] = 0;
			ASSERT_EQ(names__parse_map(n, bad[i].text, len, err, sizeof(err)), -1,
				  bad[i].what);
			ASSERT_TRUE(strstr(err, "line ") != NULL, "reason names the line");
			ASSERT_STREQ(names__callee(n, &a1), "10.0.0.1:80", "nothing added");
			ASSERT_STREQ(names__callee(n, &a2), "[2001:db8::5]:443", "nothing added");
		}
		names__free(n);
	}
	if (test__start_subtest("parse_map_long_lines")) {
		struct names *n = names__new();
		char *text = malloc(2048);
		char what[64];
		size_t len;

		if (!ASSERT_OK_PTR(n, "names__new") || !ASSERT_OK_PTR(text, "malloc")) {
			names__free(n);
			free(text);
			return;
		}
		/* Longer than the line limit, even if only a comment. */
		len = snprintf(text, 2048, "10.0.0.1:80 billing\n#");
		memset(text + len, 'c', 600);
		len += 600;
		ASSERT_EQ(names__parse_map(n, text, len, err, sizeof(err)), -1, "over-long line");
		ASSERT_STREQ(names__callee(n, &a1), "10.0.0.1:80", "nothing added");
		/*
		 * One 258-byte word, no space: not "ip:port name", even though
		 * its first 255 bytes read as 10.0.0.2:0...080 and the rest as
		 * a name "svc".
		 */
		len = snprintf(text, 2048, "10.0.0.2:");
		memset(text + len, '0', 244);
		len += 244;
		len += snprintf(text + len, 2048 - len, "80svc\n");
		snprintf(what, sizeof(what), "one %zu-byte token", len - 1);
		ASSERT_EQ(names__parse_map(n, text, len, err, sizeof(err)), -1, what);
		a3 = addr("10.0.0.2:80");
		ASSERT_STREQ(names__callee(n, &a3), "10.0.0.2:80", "token not split");
		free(text);
		names__free(n);
	}
}

/* Which processes names__each_process told of: the test's own, GONE_TGID, others. */
struct seen_tgids {
	int self, gone, other;
};

static void tgid_seen(__u32 tgid, void *ctx)
{
	struct seen_tgids *s = ctx;

	if (tgid == (__u32)getpid())
		s->self++;
	else if (tgid == GONE_TGID)
		s->gone++;
	else
		s->other++;
}

static void callee_tests(void)
{
	char want[64];
	const unsigned int port = 47913;
	struct claimd_addr lo = addr("127.0.0.1:47913"), lo6 = addr("[::1]:47913");
	struct claimd_addr far = addr("192.0.2.44:47913"), any = addr("0.0.0.0:47913");
	struct claimd_addr lo2 = addr("127.0.0.2:47913"), other = addr("127.0.0.1:47914");
	__u32 self = getpid();

	own_service(want, sizeof(want), port);
	if (test__start_subtest("callee_unmapped")) {
		struct names *n = names__new();

		if (ASSERT_OK_PTR(n, "names__new")) {
			ASSERT_STREQ(names__callee(n, &far), "192.0.2.44:47913", "ip:port");
			ASSERT_STREQ(names__callee(n, &lo6), "[::1]:47913", "[ip]:port");
			/* Cached: the same string again. */
			ASSERT_TRUE(names__callee(n, &far) == names__callee(n, &far), "cached");
			names__free(n);
		}
	}
	if (test__start_subtest("service_own_pid")) {
		struct names *n = names__new();
		const char *s;

		if (ASSERT_OK_PTR(n, "names__new")) {
			/* /proc wins over the record's comm. */
			s = names__service(n, self, port, "wrongcomm");
			ASSERT_STREQ(s, want, "service name");
			ASSERT_TRUE(names__service(n, self, port, NULL) == s, "cached");
			if (!getenv("CLAIMD_SERVICE") || !*getenv("CLAIMD_SERVICE")) {
				ASSERT_STREQ(names__service(n, self, 80, NULL), "test_progs:80",
					     "other port");
				ASSERT_STREQ(names__process(n, self, NULL), "test_progs",
					     "process");
			}
			names__free(n);
		}
	}
	if (test__start_subtest("service_gone_pid")) {
		struct names *n = names__new();
		char gone[32];

		if (ASSERT_OK_PTR(n, "names__new")) {
			ASSERT_STREQ(names__service(n, GONE_TGID, 8080, "worker"), "worker:8080",
				     "record's comm");
			ASSERT_STREQ(names__process(n, GONE_TGID, NULL), "worker", "process");
			snprintf(gone, sizeof(gone), "pid%u", GONE_TGID + 1);
			ASSERT_STREQ(names__process(n, GONE_TGID + 1, NULL), gone, "no comm");
			names__exit(n, GONE_TGID);
			ASSERT_STREQ(names__service(n, GONE_TGID, 8080, "other"), "other:8080",
				     "forgotten at exit");
			names__free(n);
		}
	}
	if (test__start_subtest("each_process")) {
		struct names *n = names__new();
		struct seen_tgids seen = { 0 };

		if (ASSERT_OK_PTR(n, "names__new")) {
			names__service(n, self, port, NULL);
			names__listen(n, GONE_TGID, &other, "worker", false);
			names__each_process(n, tgid_seen, &seen);
			ASSERT_GE(seen.self, 1, "a process named");
			ASSERT_GE(seen.gone, 1, "a process listening");
			ASSERT_EQ(seen.other, 0, "no other");
			names__exit(n, GONE_TGID);
			memset(&seen, 0, sizeof(seen));
			names__each_process(n, tgid_seen, &seen);
			ASSERT_GE(seen.self, 1, "the one still there");
			ASSERT_EQ(seen.gone, 0, "the one gone forgotten, listener and all");
			names__free(n);
		}
	}
	if (test__start_subtest("listen_any")) {
		struct names *n = names__new();

		if (ASSERT_OK_PTR(n, "names__new")) {
			ASSERT_STREQ(names__callee(n, &lo), "127.0.0.1:47913", "before listen");
			names__listen(n, self, &any, "test_progs", false);
			ASSERT_STREQ(names__callee(n, &lo), want, "127.0.0.1 after listen");
			ASSERT_STREQ(names__callee(n, &lo6), want, "::1 after listen");
			ASSERT_STREQ(names__callee(n, &far), "192.0.2.44:47913", "not local");
			ASSERT_STREQ(names__callee(n, &other), "127.0.0.1:47914", "other port");
			/* The same listener again changes nothing. */
			names__listen(n, self, &any, "test_progs", false);
			names__listen(n, self, &any, NULL, true);
			/* Gone, its name kept: a call refused there is to that service still. */
			ASSERT_STREQ(names__callee(n, &lo), want, "after close");
			ASSERT_STREQ(names__callee(n, &lo6), want, "::1 after close");
			ASSERT_STREQ(names__callee(n, &far), "192.0.2.44:47913",
				     "not local, after close");
			/* Closing what is not there is harmless. */
			names__listen(n, self, &any, NULL, true);
			ASSERT_STREQ(names__callee(n, &lo), want, "closed twice");
			/* Another listening on its port names it from then on. */
			names__listen(n, GONE_TGID, &any, "newcomer", false);
			ASSERT_STREQ(names__callee(n, &lo), "newcomer:47913", "a new listener");
			names__exit(n, GONE_TGID);
			ASSERT_STREQ(names__callee(n, &lo), "newcomer:47913", "the new one gone");
			names__free(n);
		}
	}
	if (test__start_subtest("listen_specific")) {
		struct names *n = names__new();

		if (ASSERT_OK_PTR(n, "names__new")) {
			names__listen(n, self, &lo, NULL, false);
			names__listen(n, GONE_TGID, &far, "remote", false);
			ASSERT_STREQ(names__callee(n, &lo), want, "bound address");
			ASSERT_STREQ(names__callee(n, &lo2), "127.0.0.2:47913", "other loopback");
			ASSERT_STREQ(names__callee(n, &far), "remote:47913", "second listener");
			names__listen(n, self, &lo, NULL, true);
			ASSERT_STREQ(names__callee(n, &lo), want, "closed, its name kept");
			ASSERT_STREQ(names__callee(n, &lo2), "127.0.0.2:47913",
				     "other loopback, after");
			ASSERT_STREQ(names__callee(n, &far), "remote:47913", "other listener kept");
			names__exit(n, GONE_TGID);
			ASSERT_STREQ(names__callee(n, &far), "remote:47913",
				     "gone at exit, its name kept");
			names__free(n);
		}
	}
	if (test__start_subtest("socket_file_gone_keeps_name")) {
		struct names *n = names__new();
		struct claimd_addr file;
		char before[64];

		claimd_addr_unix(&file, 0x72dd58258ba95d70ULL);
		if (ASSERT_OK_PTR(n, "names__new")) {
			names__listen(n, GONE_TGID, &file, "redis-server", false);
			/* Copied: the name is its process's, freed with it. */
			snprintf(before, sizeof(before), "%s", names__callee(n, &file));
			ASSERT_TRUE(strncmp(before, "unix:#", 6) != 0, "named by its server");
			names__exit(n, GONE_TGID);
			/* A connect to it that fails names that server still, not a hash. */
			ASSERT_STREQ(names__callee(n, &file), before, "its server gone");
			names__free(n);
		}
	}
	if (test__start_subtest("socket_file_seen_names_callee")) {
		struct names *n = names__new();
		struct claimd_addr file, other;

		/* Hashes no socket of this host listens on. */
		claimd_addr_unix(&file, 0x5e1f0c0ffee0d00dULL);
		claimd_addr_unix(&other, 0x5e1f0c0ffee0d00eULL);
		if (ASSERT_OK_PTR(n, "names__new")) {
			/* Its listener seen once, in /proc/net/unix; gone since. */
			names__socket_file(n, 0x5e1f0c0ffee0d00dULL, "/run/cache/cache.sock",
					   0x5e1f0c0ffee0d00dULL, 1);
			ASSERT_STREQ(names__callee(n, &file), "unix:/run/cache/cache.sock",
				     "named by its path");
			ASSERT_TRUE(!strncmp(names__callee(n, &other), "unix:#", 6),
				    "a file never seen: its hash");
			names__free(n);
		}
	}
	if (test__start_subtest("mapped_wins")) {
		static const char text[] = "127.0.0.1:47913 mapped-name\n";
		struct names *n = names__new();
		char err[128];

		if (ASSERT_OK_PTR(n, "names__new")) {
			names__listen(n, self, &any, NULL, false);
			ASSERT_EQ(names__parse_map(n, text, sizeof(text) - 1, err, sizeof(err)), 1,
				  "map");
			ASSERT_STREQ(names__callee(n, &lo), "mapped-name", "map first");
			ASSERT_STREQ(names__callee(n, &lo6), want, "unmapped address: listener");
			names__free(n);
		}
	}
}

struct seen {
	int n, loopback, wrong_port, far;
	char first[64];
};

static void count_address(const char *service, const struct claimd_addr *a, void *ctx)
{
	struct seen *s = ctx;
	struct claimd_addr far = addr("192.0.2.44:47913");

	if (!s->n++)
		snprintf(s->first, sizeof(s->first), "%s", service);
	s->loopback += names__addr_is_loopback(a);
	s->wrong_port += a->port != 47913;
	s->far += !memcmp(a, &far, sizeof(far));
}

static const char *fleet_names(void *ctx, const char *addr)
{
	return !strcmp(addr, "192.0.2.44:47913") ? ctx : NULL;
}

/* A callee known here only by address takes the name its own host gives it. */
static void remote_tests(void)
{
	struct claimd_addr far = addr("192.0.2.44:47913"), other = addr("192.0.2.45:47913");
	struct claimd_addr lo = addr("127.0.0.1:47913");
	char name[16] = "backend";
	struct names *n;
	unsigned long gen;
	const char *first;

	if (!test__start_subtest("remote_names"))
		return;
	n = names__new();
	if (!ASSERT_OK_PTR(n, "names__new"))
		return;
	gen = names__generation(n);
	names__set_remote(n, fleet_names, name);
	ASSERT_NEQ(names__generation(n), gen, "names may have changed");
	first = names__callee(n, &far);
	ASSERT_STREQ(first, "backend", "the fleet's name");
	ASSERT_TRUE(names__callee(n, &far) == first, "the same string each time");
	ASSERT_STREQ(names__callee(n, &other), "192.0.2.45:47913", "unnamed: the address");
	names__listen(n, GONE_TGID, &lo, "local", false);
	ASSERT_STREQ(names__callee(n, &lo), "local:47913", "this host's own listener");
	snprintf(name, sizeof(name), "backend2");
	gen = names__generation(n);
	names__remote_changed(n);
	ASSERT_NEQ(names__generation(n), gen, "told");
	ASSERT_STREQ(names__callee(n, &far), "backend2", "renamed");
	ASSERT_STREQ(first, "backend", "a name given earlier stays valid");
	names__free(n);
}

/* What claimd_service_info exports: the addresses other hosts reach a service at. */
static void address_tests(void)
{
	struct claimd_addr lo = addr("127.0.0.1:47913"), lo6 = addr("[::1]:47913");
	struct claimd_addr far = addr("192.0.2.44:47913"), any = addr("0.0.0.0:47913");
	struct claimd_addr ll = addr("[fe80::1]:47913");

	if (test__start_subtest("addresses_specific")) {
		struct names *n = names__new();
		struct seen s = { 0 };

		if (ASSERT_OK_PTR(n, "names__new")) {
			names__listen(n, GONE_TGID, &lo, "loop", false);
			names__listen(n, GONE_TGID, &lo6, "loop", false);
			names__listen(n, GONE_TGID, &ll, "loop", false);
			names__for_each_address(n, count_address, &s);
			ASSERT_EQ(s.n, 0, "loopback and link-local: nobody else's way in");
			names__listen(n, GONE_TGID + 1, &far, "remote", false);
			names__for_each_address(n, count_address, &s);
			ASSERT_EQ(s.n, 1, "one address");
			ASSERT_EQ(s.far, 1, "the listener's own");
			ASSERT_STREQ(s.first, "remote:47913", "named as its service");
			names__free(n);
		}
	}
	if (test__start_subtest("addresses_any")) {
		struct names *n = names__new();
		struct seen s = { 0 };

		if (ASSERT_OK_PTR(n, "names__new")) {
			names__listen(n, GONE_TGID, &any, "wild", false);
			names__for_each_address(n, count_address, &s);
			printf("0.0.0.0:47913 answers on %d addresses of this host\n", s.n);
			ASSERT_EQ(s.loopback, 0, "never loopback");
			ASSERT_EQ(s.wrong_port, 0, "the listener's port");
			names__free(n);
		}
	}
}

/* The other names of socket files: through a directory's symlink, and /var/run's. */
static void alias_tests(void)
{
	char alias[UNIX_ALIASES_MAX][CLAIMD_UNIX_NAME_MAX + 2], real[PATH_MAX],
		dir[] = "/tmp/claimd-alias.XXXXXX";
	char link[64], sock[96], want[PATH_MAX + 16], run[PATH_MAX];
	int n, i, found = 0;

	if (test__start_subtest("socket_file_aliases")) {
		ASSERT_EQ(unix_listeners__aliases("@abstract", alias, UNIX_ALIASES_MAX), 0,
			  "an abstract name: none");
		if (!ASSERT_OK_PTR(mkdtemp(dir), "a directory"))
			return;
		snprintf(link, sizeof(link), "%s.link", dir);
		if (ASSERT_OK(symlink(dir, link), "a symlink to it")) {
			/* Bound through the link: its real path is another name. */
			snprintf(sock, sizeof(sock), "%s/s.sock", link);
			n = unix_listeners__aliases(sock, alias, UNIX_ALIASES_MAX);
			ASSERT_OK_PTR(realpath(dir, real), "real path");
			snprintf(want, sizeof(want), "%s/s.sock", real);
			for (i = 0; i < n; i++)
				found += !strcmp(alias[i], want);
			ASSERT_EQ(found, 1, "the real path's name");
			/* Bound by its real path: no other name there. */
			ASSERT_EQ(unix_listeners__aliases(want, alias, UNIX_ALIASES_MAX), 0,
				  "already real");
			unlink(link);
		}
		rmdir(dir);
		/* /var/run a link to /run, as on Debian: each path the other's name. */
		if (realpath("/var/run", run) && !strcmp(run, "/run")) {
			n = unix_listeners__aliases("/run/cache/cache.sock", alias,
						    UNIX_ALIASES_MAX);
			ASSERT_EQ(n, 1, "one other name");
			ASSERT_STREQ(n ? alias[0] : "", "/var/run/cache/cache.sock",
				     "under /var/run");
			n = unix_listeners__aliases("/var/run/cache.sock", alias, UNIX_ALIASES_MAX);
			ASSERT_EQ(n, 1, "one other name");
			ASSERT_STREQ(n ? alias[0] : "", "/run/cache.sock", "under /run");
		}
	}
	if (test__start_subtest("socket_file_alias_named_as_bound")) {
		struct names *n = names__new();
		struct claimd_addr bound, other;

		claimd_addr_unix(&bound, 0x72dd58258ba95d71ULL);
		claimd_addr_unix(&other, 0x72dd58258ba95d72ULL);
		if (ASSERT_OK_PTR(n, "names__new")) {
			names__listen(n, GONE_TGID, &bound, "redis-server", false);
			names__socket_file(n, 0x72dd58258ba95d72ULL, "/var/run/r.sock",
					   0x72dd58258ba95d71ULL, 1);
			ASSERT_STREQ(names__callee(n, &other), names__callee(n, &bound),
				     "its server's name");
			names__free(n);
		}
	}
}

void test_names(void)
{
	parse_addr_tests();
	parse_map_tests();
	callee_tests();
	address_tests();
	remote_tests();
	alias_tests();
}
