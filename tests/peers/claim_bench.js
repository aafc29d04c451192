// SPDX-License-Identifier: GPL-2.0
// The cost of a lookup from Node.js: N calls of libclaim's current(), as
// tests/claim_bench times claim_current(). Prints the time per call as JSON.
//
//   node claim_bench.js NODE_PACKAGE_DIR [N]
'use strict';
const claim = require(process.argv[2]);
const n = Number(process.argv[3] || 5000000);
let unknown = 0;
for (let i = 0; i < 200000; i++)
  unknown += claim.current().verdict === 'unknown' ? 1 : 0;
unknown = 0;
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++)
  unknown += claim.current().verdict === 'unknown' ? 1 : 0;
const ns = Number(process.hrtime.bigint() - t0) / n;
console.log(JSON.stringify({ calls: n, ns_per_call: Math.round(ns * 100) / 100,
  connected: claim.connected() ? 1 : 0, unknown }));
