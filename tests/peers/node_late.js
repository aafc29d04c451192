// SPDX-License-Identifier: GPL-2.0
// A Node.js 20 service whose requests leave work behind them, for a test
// that a call made for an answered request is never given to the next
// request its connection holds:
//
//   GET /late/<id>  answered 200 at once; 30 ms later a timer the request
//                   began writes GET /r/0 to the backend (which fails it)
//                   on the service's own kept-alive socket: the call of a
//                   request already answered;
//   GET /fail/<id>  fails on its own (500) after 100 ms, calling nothing.
//
//   node node_late.js BACKEND_PORT READY_FILE
'use strict';
const fs = require('fs');
const http = require('http');
const net = require('net');

const backend = Number(process.argv[2]);
const ready = process.argv[3];
const upstream = net.connect(backend, '127.0.0.1');
upstream.on('data', () => {}); // the backend's answers, read and dropped

function answer(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
  res.end(body);
}

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/late/')) {
    answer(res, 200, 'late\n');
    setTimeout(() => {
      upstream.write('GET /r/0 HTTP/1.1\r\nHost: backend\r\n\r\n');
    }, 30);
    return;
  }
  setTimeout(() => answer(res, 500, 'fail\n'), 100);
});
upstream.on('connect', () => {
  server.listen(0, '127.0.0.1', () => {
    fs.writeFileSync(ready + '.tmp', server.address().port + '\n');
    fs.renameSync(ready + '.tmp', ready);
  });
});
