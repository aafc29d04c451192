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
import org.claimd.libclaim.Claim;
import org.claimd.libclaim.ClaimFilter;

/**
 * A JDK HttpServer service (a pool of 8 handler threads) that writes
 * x-error-claim with libclaim's ClaimFilter. GET /r/<id>: fails on its own
 * (500) for ids with id % 5 == 1, before calling; else calls its backend
 * with HttpURLConnection on the handler's own thread and passes a failed
 * answer up as 502.
 *
 *   java ClaimService BACKEND_PORT READY_FILE
 */
public class ClaimService {
	static int backend(int port, String path) {
		try {
			HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
			c.setConnectTimeout(10000);
			c.setReadTimeout(10000);
			int status = c.getResponseCode();
			try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
				if (in != null)
					in.readAllBytes();
			}
			return status;
		} catch (IOException e) {
			return 0;
		}
	}

	public static void main(String[] args) throws Exception {
		int backendPort = Integer.parseInt(args[0]);
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
		server.setExecutor(Executors.newFixedThreadPool(8));
		server.createContext("/r/", ex -> {
			String path = ex.getRequestURI().getPath();
			int id = Integer.parseInt(path.substring(3));
			int status = 200;
			if (id % 5 == 1) {
				status = 500;
			} else {
				int b = backend(backendPort, path);
				if (b == 0 || b >= 500)
					status = 502;
			}
			byte[] body = (status == 200 ? "ok\n" : "failed\n").getBytes(StandardCharsets.UTF_8);
			ex.sendResponseHeaders(status, body.length);
			try (OutputStream out = ex.getResponseBody()) {
				out.write(body);
			}
		}).getFilters().add(new ClaimFilter(new Claim()));
		server.start();
		Path ready = Path.of(args[1]), tmp = Path.of(args[1] + ".tmp");
		Files.writeString(tmp, server.getAddress().getPort() + "\n");
		Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);
	}
}
