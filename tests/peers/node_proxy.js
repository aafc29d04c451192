// SPDX-License-Identifier: GPL-2.0
// A Node.js 20 service on one event loop: each request GET /r/<id> is
// forwarded to the backend with http.request through a keep-alive agent
// (its sockets reused across requests; with --max-sockets=N at most N, a
// request queued until one is free; with --fresh an agent that keeps none
// alive: every call on a new connection, closed after); a failed answer
// (500 up, or none) is passed up as 502. With --forward-headers it passes
// the request's headers on (a reverse proxy's way), but for the hop-by-hop
// ones. With --chain it asks the backend a second time from the first
// answer's callback (the callback style), and fails if either failed. With
// --https=CAFILE it calls the backend over HTTPS, trusting CAFILE, through
// Node's own TLS (the OpenSSL linked into its executable). With
// --socket=PATH it calls the backend over that socket file instead (its
// port then unused).
//
//   node node_proxy.js BACKEND_PORT READY_FILE [--forward-headers] [--max-sockets=N] [--fresh]
//                      [--chain] [--https=CAFILE] [--socket=PATH]
'use strict';
const fs = require('fs');
const http = require('http');
const https = require('https');

const backend = Number(process.argv[2]);
const ready = process.argv[3];
const forward = process.argv.includes('--forward-headers');
const cap = process.argv.find((a) => a.startsWith('--max-sockets='));
const tls = process.argv.find((a) => a.startsWith('--https='));
const sock = process.argv.find((a) => a.startsWith('--socket='));
const client = tls ? https : http;
const agent = new client.Agent({
  keepAlive: !process.argv.includes('--fresh'),
  maxSockets: cap ? Number(cap.split('=')[1]) : Infinity,
  ...(tls ? { ca: fs.readFileSync(tls.split('=')[1]) } : {}),
});
const HOP = new Set(['connection', 'keep-alive', 'host', 'transfer-encoding', 'upgrade']);

function passedOn(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers))
    if (!HOP.has(k))
      out[k] = v;
  return out;
}

const chain = process.argv.includes('--chain');

// Asks the backend for req's target; done(ok) once its answer has ended.
function ask(req, done) {
  const opts = sock ? { socketPath: sock.split('=')[1], path: req.url, agent }
                   : { host: '127.0.0.1', port: backend, path: req.url, agent };
  if (forward)
    opts.headers = passedOn(req.headers);
  const up = client.request(opts, (r) => {
    r.resume();
    r.on('end', () => done(r.statusCode < 500));
  });
  up.on('error', () => done(false));
  up.end();
}

const server = http.createServer((req, res) => {
  const answer = (ok) => {
    res.writeHead(ok ? 200 : 502, { 'Content-Type': 'text/plain' });
    res.end(ok ? 'ok\n' : 'backend failed\n');
  };
  ask(req, (ok) => (chain ? ask(req, (again) => answer(ok && again)) : answer(ok)));
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(ready + '.tmp', server.address().port + '\n');
  fs.renameSync(ready + '.tmp', ready);
});
