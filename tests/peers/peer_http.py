# SPDX-License-Identifier: GPL-2.0
"""What the tests' Python services share: a threaded HTTP server over
loopback, answers in plain text, and the ready file a test waits on."""
import http.server
import os


class ThreadedServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def reply(handler, status, body):
    """Answers status with body (str or bytes) as text, its length given."""
    data = body.encode() if isinstance(body, str) else body
    handler.send_response(status)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def write_ready(path, port):
    """The port (the kernel's choice with port 0), written atomically to path, if any."""
    if not path:
        return
    with open(path + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(path + ".tmp", path)


def serve(srv, ready_file):
    """Says srv is ready (its port into ready_file), then serves until interrupted."""
    write_ready(ready_file, srv.server_address[1])
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
