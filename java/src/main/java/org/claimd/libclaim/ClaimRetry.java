// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
package org.claimd.libclaim;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * Retries that honour x-error-claim, for java.net.http.HttpClient:
 * {@code ClaimRetry.send(client, request, BodyHandlers.ofString(), 4)};
 * for any other client (HttpURLConnection, on the calling thread, where
 * claimd follows a thread-per-request service's calls), {@link #call}.
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
		public final T response;
		public final int attempts;

		Outcome(T response, int attempts) {
			this.response = response;
			this.attempts = attempts;
		}
	}

	public static <T> Outcome<HttpResponse<T>> send(HttpClient client, HttpRequest request,
							HttpResponse.BodyHandler<T> handler, int maxAttempts,
							Claim.Budget budget)
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

	public static <T> Outcome<HttpResponse<T>> send(HttpClient client, HttpRequest request,
							HttpResponse.BodyHandler<T> handler, int maxAttempts) throws IOException, InterruptedException {
		return send(client, request, handler, maxAttempts, null);
	}

	/** What one attempt of a call came back with: its status (0: a transport failure) and x-error-claim. */
	public static final class Answer {
		public final int status;
		public final String claim;

		public Answer(int status, String claim) {
			this.status = status;
			this.claim = claim;
		}
	}

	/** One attempt of a call, made by whatever client the caller uses. */
	@FunctionalInterface
	public interface Attempt {
		Answer attempt(int number);
	}

	/**
	 * Makes attempts (numbered from 1) while libclaim's decision says retry;
	 * returns the last answer, with the attempts it took.
	 */
	public static Outcome<Answer> call(Attempt call, int maxAttempts, Claim.Budget budget) {
		for (int attempt = 1;; attempt++) {
			Answer a = call.attempt(attempt);
			if (Claim.shouldRetry(a.status, a.claim, attempt, maxAttempts, budget) != Claim.Decision.RETRY)
				return new Outcome<>(a, attempt);
		}
	}
}
