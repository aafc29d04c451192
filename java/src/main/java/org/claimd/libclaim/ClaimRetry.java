// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
package org.claimd.libclaim;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * Retries that honour x-error-claim, for java.net.http.HttpClient:
 * {@code ClaimRetry.send(client, request, BodyHandlers.ofString(), 4)}.
 * An answer from failStatus up that says unclaimed is not retried (the
 * callee passed up a dependency's failure); claimed is retried up to the
 * most attempts; no header at most once (libclaim's decision,
 * claim_should_retry); a transport failure as claimed. The last answer is
 * returned; the last transport failure is thrown.
 */
public final class ClaimRetry {
	private ClaimRetry() {
	}

	/** The answer and how many attempts it took. */
	public static final class Outcome<T> {
		public final HttpResponse<T> response;
		public final int attempts;

		Outcome(HttpResponse<T> response, int attempts) {
			this.response = response;
			this.attempts = attempts;
		}
	}

	public static <T> Outcome<T> send(HttpClient client, HttpRequest request, HttpResponse.BodyHandler<T> handler,
					  int maxAttempts, Claim.Budget budget)
		throws IOException, InterruptedException {
		for (int attempt = 1;; attempt++) {
			HttpResponse<T> r = null;
			IOException failed = null;
			try {
				r = client.send(request, handler);
			} catch (IOException e) {
				failed = e;
			}
			int status = r != null ? r.statusCode() : 0;
			String claim = r != null ? r.headers().firstValue(Claim.HEADER).orElse(null) : null;
			if (Claim.shouldRetry(status, claim, attempt, maxAttempts, budget) != Claim.Decision.RETRY) {
				if (failed != null)
					throw failed;
				return new Outcome<>(r, attempt);
			}
		}
	}

	public static <T> Outcome<T> send(HttpClient client, HttpRequest request, HttpResponse.BodyHandler<T> handler,
					  int maxAttempts) throws IOException, InterruptedException {
		return send(client, request, handler, maxAttempts, null);
	}
}
