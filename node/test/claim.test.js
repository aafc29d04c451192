// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
'use strict';
// libclaim for Node.js against the C library its addon loads
// ($CLAIMD_LIBCLAIM, $CLAIMD_NODE_ADDON): the header, the retry decision,
// no claimd, listener() on a real server, fetchWithClaims() against one.
const assert = require('node:assert');
const http = require('node:http');
const test = require('node:test');

process.env.CLAIMD_VERDICTS = '/nonexistent/verdicts';
const claim = require('..');

test('header', () => {
  assert.strictEqual(claim.parseHeader(' Unclaimed '), 'unclaimed');
  assert.strictEqual(claim.parseHeader('claimed'), 'claimed');
  assert.strictEqual(claim.parseHeader('maybe'), 'none');
  assert.strictEqual(claim.parseHeader(undefined), 'none');
});

test('decisions', () => {
  assert.strictEqual(claim.shouldRetry(200, undefined, 1, 3), 'done-ok');
  assert.strictEqual(claim.shouldRetry(503, 'unclaimed', 1, 3), 'done-unclaimed');
  assert.strictEqual(claim.shouldRetry(503, 'claimed', 1, 3), 'retry');
  assert.strictEqual(claim.shouldRetry(503, 'claimed', 3, 3), 'done-attempts');
  assert.strictEqual(claim.shouldRetry(503, undefined, 1, 3), 'retry');
  assert.strictEqual(claim.shouldRetry(503, undefined, 2, 3), 'done-once');
  assert.strictEqual(claim.shouldRetry(0, undefined, 1, 3), 'retry');
});

test('no claimd: unknown, never an error', () => {
  assert.strictEqual(claim.connected(), false);
  assert.strictEqual(claim.current().verdict, 'unknown');
});

function serve(handler) {
  return new Promise((resolve) => {
    const s = http.createServer(handler);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

test('listener: no header when unknown, the handler\'s own kept', async () => {
  const s = await serve(claim.listener((req, res) => {
    if (req.url === '/own')
      res.setHeader('x-error-claim', 'unclaimed');
    res.writeHead(503);
    res.end();
  }));
  const base = 'http://127.0.0.1:' + s.address().port;
  const a = await fetch(base + '/x');
  assert.strictEqual(a.status, 503);
  assert.strictEqual(a.headers.get('x-error-claim'), null);
  const b = await fetch(base + '/own');
  assert.strictEqual(b.headers.get('x-error-claim'), 'unclaimed');
  s.close();
});

test('fetchWithClaims: unclaimed once, claimed to the most, none twice', async () => {
  const hits = {};
  const s = await serve((req, res) => {
    const kind = req.url.slice(1);
    hits[kind] = (hits[kind] || 0) + 1;
    if (kind !== 'none')
      res.setHeader('x-error-claim', kind);
    res.writeHead(503);
    res.end();
  });
  const base = 'http://127.0.0.1:' + s.address().port + '/';
  for (const [kind, want] of [['unclaimed', 1], ['claimed', 4], ['none', 2]]) {
    const r = await claim.fetchWithClaims(base + kind, {}, 4);
    assert.strictEqual(r.response.status, 503);
    assert.strictEqual(r.attempts, want, kind);
    assert.strictEqual(hits[kind], want, kind);
  }
  s.close();
});
