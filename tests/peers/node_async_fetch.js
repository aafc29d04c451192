// SPDX-License-Identifier: GPL-2.0
// A Node.js 20 service on one event loop whose handler is an async
// function awaiting two fetch() calls to its backend, one after the other
// (Node's fetch: undici, its own keep-alive pool): GET /r/<id> asks the
// backend for /r/<id> twice; a failed answer (500 up, or none) from either
// is passed up as 502. Nothing of the request is carried on (undici's own
// user agent, no id).
//
//   node node_async_fetch.js BACKEND_PORT READY_FILE
'use strict';
const fs = require('fs');
const http = require('http');

const backend = Number(process.argv[2]);
const ready = process.argv[3];

async function ask(path) {
  try {
    const r = await fetch(`http://127.0.0.1:${backend}${path}`);
    await r.arrayBuffer();
    return r.status < 500;
  } catch {
    return false;
  }
}

const server = http.createServer(async (req, res) => {
  const first = await ask(req.url);
  const second = await ask(req.url);
  const ok = first && second;
  res.writeHead(ok ? 200 : 502, { 'Content-Type': 'text/plain' });
  res.end(ok ? 'ok\n' : 'backend failed\n');
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(ready + '.tmp', server.address().port + '\n');
  fs.renameSync(ready + '.tmp', ready);
});
