// SPDX-License-Identifier: GPL-2.0
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.claimd.libclaim.Claim;
import org.claimd.libclaim.ClaimFilter;
import org.claimd.libclaim.ClaimRetry;

/**
 * A JDK HttpServer service (a pool of 8 handler threads) that writes
 * x-error-claim with libclaim's ClaimFilter. GET /r/<id>: fails on its own
 * (500) for ids with id % 5 == 1, before calling; else calls its backend
 * with HttpURLConnection on the handler's own thread and passes a failed
 * answer up as 502.
 *
 * As a hop of a storm (a retry policy given): fails nothing on its own;
 * calls its backend with up to one retry, through libclaim's
 * ClaimRetry.call ("claim": an unclaimed failure is not retried) or
 * regardless of what the failure says ("naive"); GET /stats answers how
 * many /r/ requests it served.
 *
 *   java ClaimService BACKEND_PORT READY_FILE [claim|naive]
 */
public class ClaimService {
	static ClaimRetry.Answer backend(int port, String path) {
		try {
			HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
			c.setConnectTimeout(10000);
			c.setReadTimeout(10000);
			int status = c.getResponseCode();
			try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
				if (in != null)
					in.readAllBytes();
			}
			return new ClaimRetry.Answer(status, c.getHeaderField(Claim.HEADER));
		} catch (IOException e) {
			return new ClaimRetry.Answer(0, null);
		}
	}

	/** The backend's answer to path under the storm's policy: one retry at most. */
	static int hop(int port, String path, String policy) {
		if (policy.equals("claim"))
			return ClaimRetry.call(n -> backend(port, path), 2, null).response.status;
		int status = backend(port, path).status;
		if (status == 0 || status >= 500)
			status = backend(port, path).status;
		return status;
	}

	public static void main(String[] args) throws Exception {
		int backendPort = Integer.parseInt(args[0]);
		String policy = args.length > 2 ? args[2] : null;
		AtomicLong served = new AtomicLong();
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
		server.setExecutor(Executors.newFixedThreadPool(8));
		server.createContext("/r/", ex -> {
			String path = ex.getRequestURI().getPath();
			int id = Integer.parseInt(path.substring(3));
			int status = 200;
			served.incrementAndGet();
			if (policy == null && id % 5 == 1) {
				status = 500;
			} else {
				int b = policy != null ? hop(backendPort, path, policy) : backend(backendPort, path).status;
				if (b == 0 || b >= 500)
					status = 502;
			}
			byte[] body = (status == 200 ? "ok\n" : "failed\n").getBytes(StandardCharsets.UTF_8);
			ex.sendResponseHeaders(status, body.length);
			try (OutputStream out = ex.getResponseBody()) {
				out.write(body);
			}
		}).getFilters().add(new ClaimFilter(new Claim()));
		server.createContext("/stats", ex -> {
			byte[] body = ("{\"requests\": " + served.get() + "}\n").getBytes(StandardCharsets.UTF_8);
			ex.sendResponseHeaders(200, body.length);
			try (OutputStream out = ex.getResponseBody()) {
				out.write(body);
			}
		});
		server.start();
		Path ready = Path.of(args[1]), tmp = Path.of(args[1] + ".tmp");
		Files.writeString(tmp, server.getAddress().getPort() + "\n");
		Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);
	}
}
