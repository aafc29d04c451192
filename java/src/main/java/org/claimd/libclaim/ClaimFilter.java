// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
package org.claimd.libclaim;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;

/**
 * x-error-claim on the failed answers of a JDK HttpServer service:
 * {@code server.createContext("/", handler).getFilters().add(new ClaimFilter(claim));}
 * A failed answer (a status from failStatus up, 500 by default) gets
 * claimd's verdict for the request the handler's thread serves, taken when
 * the handler sends its answer's head; an unknown verdict writes nothing,
 * and an answer that already carries the header keeps it. claimd follows a
 * request by its thread: handlers that make their calls on their own
 * thread (HttpURLConnection, a blocking client) get exact verdicts.
 */
public final class ClaimFilter extends Filter {
	private final Claim claim;
	private final int failStatus;

	public ClaimFilter(Claim claim, int failStatus) {
		this.claim = claim;
		this.failStatus = failStatus;
	}

	public ClaimFilter(Claim claim) {
		this(claim, 500);
	}

	@Override public String description() {
		return "x-error-claim on failed answers (libclaim)";
	}

	@Override public void doFilter(HttpExchange ex, Chain chain) throws IOException {
		chain.doFilter(new Claimed(ex));
	}

	/** The exchange, its answer's head given the header when it fails. */
	private final class Claimed extends HttpExchange {
		private final HttpExchange ex;

		Claimed(HttpExchange ex) {
			this.ex = ex;
		}

		@Override public void sendResponseHeaders(int code, long length) throws IOException {
			Headers h = ex.getResponseHeaders();
			if (code >= failStatus && !h.containsKey(Claim.HEADER)) {
				String v = Claim.headerValue(claim.verdict());
				if (v != null)
					h.set(Claim.HEADER, v);
			}
			ex.sendResponseHeaders(code, length);
		}

		@Override public Headers getRequestHeaders() { return ex.getRequestHeaders(); }
		@Override public Headers getResponseHeaders() { return ex.getResponseHeaders(); }
		@Override public URI getRequestURI() { return ex.getRequestURI(); }
		@Override public String getRequestMethod() { return ex.getRequestMethod(); }
		@Override public HttpContext getHttpContext() { return ex.getHttpContext(); }
		@Override public void close() { ex.close(); }
		@Override public InputStream getRequestBody() { return ex.getRequestBody(); }
		@Override public OutputStream getResponseBody() { return ex.getResponseBody(); }
		@Override public InetSocketAddress getRemoteAddress() { return ex.getRemoteAddress(); }
		@Override public int getResponseCode() { return ex.getResponseCode(); }
		@Override public InetSocketAddress getLocalAddress() { return ex.getLocalAddress(); }
		@Override public String getProtocol() { return ex.getProtocol(); }
		@Override public Object getAttribute(String name) { return ex.getAttribute(name); }
		@Override public void setAttribute(String name, Object value) { ex.setAttribute(name, value); }
		@Override public void setStreams(InputStream i, OutputStream o) { ex.setStreams(i, o); }
		@Override public HttpPrincipal getPrincipal() { return ex.getPrincipal(); }
	}
}
