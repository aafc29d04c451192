// SPDX-License-Identifier: GPL-2.0
/*
 * A JDK service as the JDK's own classes make one: com.sun.net.httpserver's
 * HttpServer, its handlers on a pool of eight threads, calling its backend
 * with java.net.http.HttpClient, whose I/O runs on threads of its own (its
 * selector manager, its executor): a call is made by a thread serving no
 * request. GET /r/<id> calls the backend's /r/<id> and answers 502 when the
 * backend failed (a status of 500 or more, or no answer), else 200. With a
 * CA file it calls the backend over HTTPS (the JDK's own TLS, JSSE),
 * trusting that certificate.
 *
 *   java -cp build/tests/java ChainFront <port> <backend port> [<CA file>]
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public final class ChainFront {
	private static HttpClient client;
	private static int backend;
	private static String scheme = "http";

	private static void answer(HttpExchange ex, int status, String body) throws IOException {
		byte[] b = body.getBytes(StandardCharsets.UTF_8);

		ex.sendResponseHeaders(status, b.length);
		try (OutputStream out = ex.getResponseBody()) {
			out.write(b);
		}
	}

	private static void serve(HttpExchange ex) throws IOException {
		String path = ex.getRequestURI().getPath();
		int status;

		try {
			HttpRequest req = HttpRequest.newBuilder(
							URI.create(scheme + "://127.0.0.1:" + backend + path))
						  .timeout(Duration.ofSeconds(10))
						  .GET()
						  .build();
			status = client.send(req, HttpResponse.BodyHandlers.ofString()).statusCode();
		} catch (IOException | InterruptedException e) {
			status = 0;
		}
		if (status >= 500 || status == 0)
			answer(ex, 502, "backend failed\n");
		else
			answer(ex, 200, "ok\n");
	}

	/* A TLS context trusting the one certificate in the PEM file ca. */
	private static SSLContext trusting(String ca) throws IOException, GeneralSecurityException {
		KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
		TrustManagerFactory tmf =
			TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
		SSLContext ctx = SSLContext.getInstance("TLS");

		ks.load(null, null);
		try (FileInputStream in = new FileInputStream(ca)) {
			ks.setCertificateEntry(
				"backend",
				CertificateFactory.getInstance("X.509").generateCertificate(in));
		}
		tmf.init(ks);
		ctx.init(null, tmf.getTrustManagers(), null);
		return ctx;
	}

	public static void main(String[] args) throws IOException, GeneralSecurityException {
		int port = Integer.parseInt(args[0]);
		HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1);
		HttpServer server;

		backend = Integer.parseInt(args[1]);
		if (args.length > 2) {
			scheme = "https";
			b.sslContext(trusting(args[2]));
		}
		client = b.build();
		server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
		server.createContext("/", ex -> {
			try {
				serve(ex);
			} finally {
				ex.close();
			}
		});
		server.setExecutor(Executors.newFixedThreadPool(8));
		server.start();
	}
}
