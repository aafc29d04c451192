// SPDX-License-Identifier: GPL-2.0
/*
 * procnet__parse_line (user/claimd/kernel/procnet.c) on lines shaped like those of
 * /proc/net/tcp and /proc/net/tcp6: the addresses (IPv4 mapped into IPv6,
 * or IPv6 as four host-order words), ports, the state and the inode; and
 * malformed lines (the header, blank lines, missing fields, addresses of
 * the other family or too short, non-hex text) refused. The kernel prints
 * the address words in host order, so the sample lines are little-endian.
 */
#include <string.h>

#include "kernel/procnet.h"
#include "test_progs.h"

#define V4(a, b, c, d)                                                           \
	{                                                                        \
		[10] = 0xff, [11] = 0xff, [12] = a, [13] = b, [14] = c, [15] = d \
	}

/* "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid ..." */
static const char v4_listen[] = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 "
				"00:00000000 00000000  1000        0 123456 1 "
				"0000000000000000 100 0 0 10 0\n";
static const char v4_estab[] = "  12: 0A01A8C0:D2F0 08080808:01BB 01 00000000:00000000 "
			       "02:000AFA3B 00000000  1000        0 4294967296 2 "
			       "0000000000000000 20 4 30 10 -1\n";
static const char v6_listen[] =
	"   0: 00000000000000000000000001000000:1F90 "
	"00000000000000000000000000000000:0000 0A 00000000:00000000 "
	"00:00000000 00000000  1000        0 777 1 0000000000000000 100 0 0 "
	"10 0\n";
static const char v6_mapped[] = "   3: 0000000000000000FFFF00000100007F:8AE2 "
				"0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 "
				"00:00000000 00000000     0        0 31337 1 0000000000000000 20 4 "
				"1 10 -1\n";
/* 2001:db8::1 port 443 to fe80::abcd:1 port 50000 */
static const char v6_global[] = "   4: B80D0120000000000000000001000000:01BB "
				"000080FE00000000CDAB000001000000:C350 06 00000000:00000000 "
				"00:00000000 00000000     0        0 0 3 0000000000000000 20 4 "
				"1 10 -1\n";

static bool little_endian(void)
{
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

void test_procnet_parse(void)
{
	struct claimd_addr local, remote;
	unsigned long inode;
	unsigned int state;

	if (!little_endian()) {
		test__skip("sample lines are little-endian");
		return;
	}
	if (test__start_subtest("ipv4")) {
		static const __u8 lo[16] = V4(127, 0, 0, 1);
		static const __u8 any[16] = V4(0, 0, 0, 0);
		static const __u8 lan[16] = V4(192, 168, 1, 10);
		static const __u8 dns[16] = V4(8, 8, 8, 8);

		ASSERT_OK(procnet__parse_line(v4_listen, 0, &local, &remote, &state, &inode),
			  "listen line");
		ASSERT_TRUE(!memcmp(local.addr, lo, 16), "local 127.0.0.1");
		ASSERT_EQ(local.port, 8080, "local port");
		ASSERT_TRUE(!memcmp(remote.addr, any, 16), "remote 0.0.0.0");
		ASSERT_EQ(remote.port, 0, "remote port");
		ASSERT_EQ(state, 0x0a, "LISTEN");
		ASSERT_EQ(inode, 123456, "inode");

		ASSERT_OK(procnet__parse_line(v4_estab, 0, &local, &remote, &state, &inode),
			  "established line");
		ASSERT_TRUE(!memcmp(local.addr, lan, 16), "local 192.168.1.10");
		ASSERT_EQ(local.port, 54000, "local port");
		ASSERT_TRUE(!memcmp(remote.addr, dns, 16), "remote 8.8.8.8");
		ASSERT_EQ(remote.port, 443, "remote port");
		ASSERT_EQ(state, 0x01, "ESTABLISHED");
		ASSERT_EQ(inode, 4294967296UL, "inode past 32 bits");
	}
	if (test__start_subtest("ipv6")) {
		static const __u8 lo6[16] = { [15] = 1 };
		static const __u8 any6[16];
		static const __u8 lo4[16] = V4(127, 0, 0, 1);
		static const __u8 doc[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
		static const __u8 ll[16] = { 0xfe, 0x80, [10] = 0xab, [11] = 0xcd, [15] = 1 };

		ASSERT_OK(procnet__parse_line(v6_listen, 1, &local, &remote, &state, &inode),
			  "listen line");
		ASSERT_TRUE(!memcmp(local.addr, lo6, 16), "local ::1");
		ASSERT_EQ(local.port, 8080, "local port");
		ASSERT_TRUE(!memcmp(remote.addr, any6, 16), "remote ::");
		ASSERT_EQ(state, 0x0a, "LISTEN");
		ASSERT_EQ(inode, 777, "inode");

		ASSERT_OK(procnet__parse_line(v6_mapped, 1, &local, &remote, &state, &inode),
			  "v4-mapped line");
		ASSERT_TRUE(!memcmp(local.addr, lo4, 16), "local ::ffff:127.0.0.1");
		ASSERT_EQ(local.port, 0x8ae2, "local port");
		ASSERT_TRUE(!memcmp(remote.addr, lo4, 16), "remote ::ffff:127.0.0.1");
		ASSERT_EQ(remote.port, 8080, "remote port");
		ASSERT_EQ(state, 0x01, "ESTABLISHED");
		ASSERT_EQ(inode, 31337, "inode");

		ASSERT_OK(procnet__parse_line(v6_global, 1, &local, &remote, &state, &inode),
			  "TIME_WAIT line");
		ASSERT_TRUE(!memcmp(local.addr, doc, 16), "local 2001:db8::1");
		ASSERT_EQ(local.port, 443, "local port");
		ASSERT_TRUE(!memcmp(remote.addr, ll, 16), "remote fe80::abcd:0:1");
		ASSERT_EQ(remote.port, 50000, "remote port");
		ASSERT_EQ(state, 0x06, "TIME_WAIT");
		ASSERT_EQ(inode, 0, "inode 0");
	}
	if (test__start_subtest("malformed")) {
		static const struct {
			const char *line;
			int v6;
		} bad[] = {
			{ "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
			  "retrnsmt   uid  timeout inode\n",
			  0 },
			{ "", 0 },
			{ "\n", 0 },
			{ "   0:\n", 0 },
			/* no inode */
			{ "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000  1000        0\n",
			  0 },
			/* no remote address */
			{ "   0: 0100007F:1F90 0A 00000000:00000000 00:00000000 00000000  1000 0 "
			  "5\n",
			  0 },
			/* not hex */
			{ "   0: ZZ00007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000  1000        0 5 1\n",
			  0 },
			{ "   0: 0100007F:XYZW 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000  1000        0 5 1\n",
			  0 },
			/* no port */
			{ "   0: 0100007F 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000  1000        0 5 1\n",
			  0 },
			/* state not hex */
			{ "   0: 0100007F:1F90 00000000:0000 QQ 00000000:00000000 00:00000000 "
			  "00000000  1000        0 5 1\n",
			  0 },
			/* uid not a number */
			{ "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000  root        0 5 1\n",
			  0 },
			/* an IPv4 line read as tcp6, and an IPv6 one read as tcp */
			{ v4_listen, 1 },
			{ v6_listen, 0 },
			/* IPv6 addresses too short */
			{ "   0: 0000000000000000000000000100:1F90 "
			  "00000000000000000000000000000000:0000 0A 00000000:00000000 "
			  "00:00000000 00000000  1000        0 777 1\n",
			  1 },
			{ "   0: 00000000000000000000000001000000 "
			  "00000000000000000000000000000000:0000 0A 00000000:00000000 "
			  "00:00000000 00000000  1000        0 777 1\n",
			  1 },
			{ "   0: 00000000000000000000000001000000:1F90 "
			  "0000000000000000000000000000000G:0000 0A 00000000:00000000 "
			  "00:00000000 00000000  1000        0 777 1\n",
			  1 },
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char what[32];

			snprintf(what, sizeof(what), "bad line %zu", i);
			ASSERT_NEQ(procnet__parse_line(bad[i].line, bad[i].v6, &local, &remote,
						       &state, &inode),
				   0, what);
		}
	}
	if (test__start_subtest("short_v6_after_long")) {
		/*
		 * A short IPv6 address right after a good line: what the good
		 * line left in the parser's buffers must not complete it.
		 */
		static const char shrt[] =
			"   0: 0000000000:1F90 00000000000000000000000000000000:0000 "
			"0A 00000000:00000000 00:00000000 00000000  1000 0 9 1\n";
		static const char shrt_nocolon[] = "   0: 0000000000 "
						   "00000000000000000000000000000000:0000 0A "
						   "00000000:00000000 00:00000000 00000000  1000 "
						   "0 9 1\n";

		ASSERT_OK(procnet__parse_line(v6_listen, 1, &local, &remote, &state, &inode),
			  "good line");
		ASSERT_NEQ(procnet__parse_line(shrt, 1, &local, &remote, &state, &inode), 0,
			   "short address with port");
		ASSERT_OK(procnet__parse_line(v6_listen, 1, &local, &remote, &state, &inode),
			  "good line again");
		ASSERT_NEQ(procnet__parse_line(shrt_nocolon, 1, &local, &remote, &state, &inode), 0,
			   "short address without port");
	}
}
