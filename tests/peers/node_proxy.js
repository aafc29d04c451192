// SPDX-License-Identifier: GPL-2.0
// A Node.js 20 service on one event loop: each request GET /r/<id> is
// forwarded to the backend with http.request through a keep-alive agent
// (its sockets reused across requests; with --max-sockets=N at most N, a
// request queued until one is free); a failed answer (500 up, or none) is
// passed up as 502. With --forward-headers it passes the request's headers
// on (a reverse proxy's way), but for the hop-by-hop ones.
//
//   node node_proxy.js BACKEND_PORT READY_FILE [--forward-headers] [--max-sockets=N]
'use strict';
const fs = require('fs');
const http = require('http');

const backend = Number(process.argv[2]);
const ready = process.argv[3];
const forward = process.argv.includes('--forward-headers');
const cap = process.argv.find((a) => a.startsWith('--max-sockets='));
const agent = new http.Agent({ keepAlive: true, maxSockets: cap ? Number(cap.split('=')[1]) : Infinity });
const HOP = new Set(['connection', 'keep-alive', 'host', 'transfer-encoding', 'upgrade']);

function passedOn(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers))
    if (!HOP.has(k))
      out[k] = v;
  return out;
}

const server = http.createServer((req, res) => {
  const opts = { host: '127.0.0.1', port: backend, path: req.url, agent };
  if (forward)
    opts.headers = passedOn(req.headers);
  const up = http.request(opts, (r) => {
    r.resume();
    r.on('end', () => {
      res.writeHead(r.statusCode >= 500 ? 502 : 200, { 'Content-Type': 'text/plain' });
      res.end(r.statusCode >= 500 ? 'backend failed\n' : 'ok\n');
    });
  });
  up.on('error', () => {
    res.writeHead(502);
    res.end('backend failed\n');
  });
  up.end();
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(ready + '.tmp', server.address().port + '\n');
  fs.renameSync(ready + '.tmp', ready);
});
