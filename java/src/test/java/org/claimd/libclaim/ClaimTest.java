// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
package org.claimd.libclaim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * libclaim's Java package against the C library it loads ($CLAIMD_LIBCLAIM):
 * the header, the retry decision, a handle with no claimd, ClaimFilter on a
 * real HttpServer, ClaimRetry against a real server answering 503.
 */
public class ClaimTest {
	private static HttpServer server;
	private static final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	@BeforeClass public static void start() throws Exception {
		server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
		// 503, with the x-error-claim the path names ("none": without one).
		server.createContext("/retry/", ex -> {
			String kind = ex.getRequestURI().getPath().substring("/retry/".length());
			hits.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
			if (!kind.equals("none"))
				ex.getResponseHeaders().set(Claim.HEADER, kind);
			ex.sendResponseHeaders(503, -1);
			ex.close();
		});
		// Behind ClaimFilter with no claimd: 503, with the app's own header or none.
		Claim none = new Claim("/nonexistent/verdicts");
		server.createContext("/filtered/", ex -> {
			if (ex.getRequestURI().getPath().endsWith("/own"))
				ex.getResponseHeaders().set(Claim.HEADER, "unclaimed");
			ex.sendResponseHeaders(503, -1);
			ex.close();
		}).getFilters().add(new ClaimFilter(none));
		server.start();
	}

	@AfterClass public static void stop() {
		server.stop(0);
	}

	private static HttpResponse<Void> get(String path) throws Exception {
		return HttpClient.newHttpClient().send(
			HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path)).build(),
			HttpResponse.BodyHandlers.discarding());
	}

	@Test public void header() {
		assertEquals("claimed", Claim.headerValue(Claim.Verdict.CLAIMED));
		assertEquals("unclaimed", Claim.headerValue(Claim.Verdict.UNCLAIMED));
		assertNull(Claim.headerValue(Claim.Verdict.UNKNOWN));
		assertEquals(Claim.Verdict.UNCLAIMED, Claim.parseHeader(" Unclaimed "));
		assertEquals(Claim.Verdict.NONE, Claim.parseHeader("maybe"));
		assertEquals(Claim.Verdict.NONE, Claim.parseHeader(null));
	}

	@Test public void decisions() {
		assertEquals(Claim.Decision.DONE_OK, Claim.shouldRetry(200, null, 1, 3, null));
		assertEquals(Claim.Decision.DONE_UNCLAIMED, Claim.shouldRetry(503, "unclaimed", 1, 3, null));
		assertEquals(Claim.Decision.RETRY, Claim.shouldRetry(503, "claimed", 1, 3, null));
		assertEquals(Claim.Decision.DONE_ATTEMPTS, Claim.shouldRetry(503, "claimed", 3, 3, null));
		assertEquals(Claim.Decision.RETRY, Claim.shouldRetry(503, null, 1, 3, null));
		assertEquals(Claim.Decision.DONE_ONCE, Claim.shouldRetry(503, null, 2, 3, null));
		assertEquals(Claim.Decision.RETRY, Claim.shouldRetry(0, null, 1, 3, null));
		try (Claim.Budget b = new Claim.Budget(0.5, 1)) {
			int spent = 0;
			for (int i = 0; i < 4; i++) {
				b.request();
				if (Claim.shouldRetry(503, "claimed", 1, 3, b) == Claim.Decision.RETRY)
					spent++;
			}
			assertEquals(2, spent);
		}
	}

	@Test public void deadline() {
		long now = System.nanoTime();
		assertEquals(Claim.Decision.DONE_DEADLINE,
			     Claim.shouldRetry(503, "claimed", 1, 3, null, now + 1_000_000_000L, 2_000_000_000L));
		assertEquals(Claim.Decision.RETRY,
			     Claim.shouldRetry(503, "claimed", 1, 3, null, now + 10_000_000_000L, 1_000_000L));
	}

	@Test public void noClaimd() {
		try (Claim c = new Claim("/nonexistent/verdicts")) {
			assertFalse(c.connected());
			assertEquals(Claim.Verdict.UNKNOWN, c.verdict());
			assertEquals(Claim.Verdict.UNKNOWN, c.current().verdict);
			assertEquals(0, c.current().causePort);
		}
	}

	@Test public void filterWritesNothingUnknown() throws Exception {
		HttpResponse<Void> r = get("/filtered/x");
		assertEquals(503, r.statusCode());
		assertFalse(r.headers().firstValue(Claim.HEADER).isPresent());
	}

	@Test public void filterKeepsTheAppsHeader() throws Exception {
		assertEquals("unclaimed", get("/filtered/own").headers().firstValue(Claim.HEADER).orElse(""));
	}

	private static int attempts(String kind) throws Exception {
		ClaimRetry.Outcome<HttpResponse<Void>> o = ClaimRetry.send(HttpClient.newHttpClient(),
			HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/retry/" + kind)).build(),
			HttpResponse.BodyHandlers.discarding(), 4);
		assertEquals(503, o.response.statusCode());
		assertEquals(hits.get(kind).get(), o.attempts);
		return o.attempts;
	}

	@Test public void unclaimedNotRetried() throws Exception {
		assertEquals(1, attempts("unclaimed"));
	}

	@Test public void claimedRetried() throws Exception {
		assertEquals(4, attempts("claimed"));
	}

	@Test public void noHeaderOnce() throws Exception {
		assertEquals(2, attempts("none"));
	}

	/** call(): any client's attempts, decided as send's: the same table. */
	@Test public void callDecidesAsSend() {
		String[] claims = { "claimed", "unclaimed", null };
		int[] want = { 4, 1, 2 };
		for (int i = 0; i < claims.length; i++) {
			final String claim = claims[i];
			ClaimRetry.Outcome<ClaimRetry.Answer> o = ClaimRetry.call(n -> new ClaimRetry.Answer(503, claim), 4, null);
			assertEquals(want[i], o.attempts);
			assertEquals(503, o.response.status);
		}
		assertEquals(3, ClaimRetry.call(n -> new ClaimRetry.Answer(0, null), 3, null).attempts);
		assertEquals(1, ClaimRetry.call(n -> new ClaimRetry.Answer(200, null), 3, null).attempts);
		assertEquals(2, ClaimRetry.call(n -> new ClaimRetry.Answer(n < 2 ? 0 : 200, null), 3, null).attempts);
	}

	/** verdict() reads its thread's slot itself: a map laid out as claimd's, in ordinary memory. */
	@Test public void verdictReadsItsThreadsSlot() throws Exception {
		java.nio.ByteBuffer m = java.nio.ByteBuffer.allocateDirect(65536 * 64).order(java.nio.ByteOrder.LITTLE_ENDIAN);
		m.putInt(16, 1); /* alive */
		int tid = Claim.threadId();
		int off = (1 + Integer.remainderUnsigned(tid, 65535)) * 64;
		m.putInt(off + 4, tid);
		m.put(off + 8, (byte) 1);
		m.put(off + 9, (byte) 2);
		try (Claim c = new Claim(m)) {
			assertEquals(Claim.Verdict.UNCLAIMED, c.verdict());
			Claim.Verdict[] other = new Claim.Verdict[1];
			Thread t = new Thread(() -> other[0] = c.verdict());
			t.start();
			t.join();
			assertEquals("another thread's slot", Claim.Verdict.UNKNOWN, other[0]);
			m.put(off + 10, (byte) 3); /* fail-close-edge */
			m.putShort(off + 12, (short) 6379);
			Claim.Result r = c.current();
			assertEquals(Claim.Verdict.UNCLAIMED, r.verdict);
			assertEquals("fail-close-edge", r.rule);
			assertEquals(6379, r.causePort);
			m.put(off + 9, (byte) 1);
			assertEquals(Claim.Verdict.CLAIMED, c.verdict());
			m.putInt(off, 3); /* being written the whole time */
			assertEquals(Claim.Verdict.UNKNOWN, c.verdict());
			m.putInt(off, 4);
			m.put(off + 8, (byte) 0); /* serving nothing */
			assertEquals(Claim.Verdict.UNKNOWN, c.verdict());
			m.put(off + 8, (byte) 1);
			m.putInt(16, 0); /* claimd gone */
			assertEquals(Claim.Verdict.UNKNOWN, c.verdict());
			assertEquals(Claim.Verdict.UNKNOWN, c.current().verdict);
			m.putInt(16, 1);
			assertEquals(Claim.Verdict.CLAIMED, c.verdict());
			/* A call outside requests since it began (its process's count moved): unknown. */
			int pid = (int) ProcessHandle.current().pid();
			int main = (1 + Integer.remainderUnsigned(pid, 65535)) * 64 + 56;
			m.putInt(off + 44, 3);
			m.putLong(main, (long) pid << 32 | 3);
			assertEquals(Claim.Verdict.CLAIMED, c.verdict());
			m.putLong(main, (long) pid << 32 | 4);
			assertEquals(Claim.Verdict.UNKNOWN, c.verdict());
			assertEquals("untied-call", c.current().rule);
			m.putLong(main, 0L);
		}
	}
}
