// SPDX-License-Identifier: GPL-2.0
// A Node.js 20 service with libclaim (node/): its event loop followed request
// by request (listener() and follow()), x-error-claim on its failed answers.
// GET /r/<id>: after a pause of 0-9 ms (so that requests interleave), fails
// on its own (500) for ids with id % 5 == 1; else calls its backend with
// http.request through a keep-alive agent (4 sockets its requests share) and
// passes a failed answer up as 502.
//
//   node node_claim_service.js LIBCLAIM_DIR BACKEND_PORT READY_FILE
'use strict';
const fs = require('fs');
const http = require('http');

const claim = require(process.argv[2]);
const backend = Number(process.argv[3]);
const ready = process.argv[4];
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function answer(res, status) {
  res.writeHead(status, { 'Content-Type': 'text/plain' });
  res.end(status === 200 ? 'ok\n' : 'failed\n');
}

const server = http.createServer(claim.listener((req, res) => {
  const id = Number(req.url.split('/')[2]);
  setTimeout(() => {
    if (id % 5 === 1)
      return answer(res, 500);
    const up = http.request({ host: '127.0.0.1', port: backend, path: req.url, agent }, (r) => {
      r.resume();
      r.on('end', () => answer(res, r.statusCode >= 500 ? 502 : 200));
    });
    up.on('error', () => answer(res, 502));
    up.end();
  }, (id * 7) % 10);
}));
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(ready + '.tmp', server.address().port + '\n');
  fs.renameSync(ready + '.tmp', ready);
});
