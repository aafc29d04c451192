// SPDX-License-Identifier: GPL-2.0
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.claimd.libclaim.ClaimRetry;

/**
 * A client whose retries honour x-error-claim (libclaim's ClaimRetry over
 * java.net.http.HttpClient): GET /r/0 .. /r/N-1, each up to 4 attempts.
 * Prints one JSON object: per id, its final status, its x-error-claim and
 * how many attempts it took (as tests/peers/claim_client.py).
 *
 *   java ClaimClient PORT [N]
 */
public class ClaimClient {
	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]), n = args.length > 1 ? Integer.parseInt(args[1]) : 100;
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		StringBuilder out = new StringBuilder("{");
		for (int i = 0; i < n; i++) {
			HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/r/" + i)).build();
			ClaimRetry.Outcome<HttpResponse<String>> o = ClaimRetry.send(client, req, HttpResponse.BodyHandlers.ofString(), 4);
			String claim = o.response.headers().firstValue("x-error-claim").orElse("");
			out.append(i == 0 ? "" : ",").append('"').append(i).append("\":{\"status\":")
				.append(o.response.statusCode()).append(",\"claim\":\"").append(claim)
				.append("\",\"attempts\":").append(o.attempts).append('}');
		}
		System.out.println(out.append('}'));
	}
}
