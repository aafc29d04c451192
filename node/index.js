// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
'use strict';
/**
 * libclaim for Node.js: claimd's verdicts for a service on an event loop,
 * and retries that honour x-error-claim.
 *
 * claimd follows a request by the thread that serves it; an event loop
 * serves many at once. follow() tells claimd which request the loop works
 * on (libclaim's claim_context_enter(fd) / claim_context_leave()) around
 * every callback: a callback belongs to the inbound connection its chain
 * of async resources began from (async_hooks' trigger ids), however the
 * loop interleaves requests. listener(handler) also writes x-error-claim
 * on the failed answers. The C library (libclaim.so) is loaded by the
 * addon (build/claim.node) from $CLAIMD_LIBCLAIM or the system's.
 */
const asyncHooks = require('async_hooks');
const path = require('path');

// The addon: $CLAIMD_NODE_ADDON, else beside the package (build/claim.node, where
// an installed copy keeps it, or build/Release/claim.node, where npm install
// builds it with node-gyp from binding.gyp), else the project's build (make:
// build/node/).
function addon() {
  const tried = [process.env.CLAIMD_NODE_ADDON, path.join(__dirname, 'build', 'claim.node'),
    path.join(__dirname, 'build', 'Release', 'claim.node'),
    path.join(__dirname, '..', 'build', 'node', 'claim.node')].filter(Boolean);
  for (const p of tried) {
    try {
      return require(p);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND')
        throw e;
    }
  }
  throw new Error('libclaim: no addon (claim.node) in ' + tried.join(', ') + ': run make');
}
const native = addon();

const HEADER = 'x-error-claim';
const VERDICTS = ['none', 'claimed', 'unclaimed', 'unknown'];
const DECISIONS = ['retry', 'done-ok', 'done-unclaimed', 'done-once', 'done-attempts',
  'done-budget', 'done-deadline'];

// The rules' names, from libclaim's one table, asked once each.
const RULES = [];
function ruleName(n) {
  return RULES[n] || (RULES[n] = native.ruleName(n));
}

/** The running verdict of the request the loop works on now: { verdict, rule, causePort }. */
function current() {
  const p = native.current(); // verdict | rule << 8 | causePort << 16
  return { verdict: VERDICTS[p & 0xff], rule: ruleName((p >>> 8) & 0xff), causePort: p >>> 16 };
}

/** The verdict an x-error-claim value carries: 'claimed', 'unclaimed' or 'none'. */
function parseHeader(value) {
  return VERDICTS[native.parseHeader(value)];
}

/**
 * libclaim's decision after a failed attempt: 'retry' or why not. status: 0
 * for a transport failure; header: the answer's x-error-claim or undefined;
 * attempt: the one that failed, from 1.
 */
function shouldRetry(status, header, attempt, maxAttempts) {
  return DECISIONS[native.shouldRetry(status, native.parseHeader(header), attempt, maxAttempts)];
}

let hook = null;
let announce = true;

/**
 * From now on claimd knows which inbound connection each callback works
 * for. Every resource an inbound socket's callbacks create (a parser, a
 * promise, a timer, an outbound socket) carries it on; a callback of none
 * runs outside any request.
 */
function follow() {
  if (hook)
    return;
  const servers = new Set();
  const owner = new Map(); // async id -> the inbound socket's handle it works for
  const stack = [];        // the fds of the callbacks running, innermost last (they nest)
  let cur = -1;            // the context claimd has for this thread now
  const set = (fd) => {
    if (fd === cur)
      return;
    if (fd >= 0)
      native.contextEnter(fd);
    else
      native.contextLeave();
    cur = fd;
  };
  const enter = (id) => {
    if (announce) {
      // Until the first request reaches listener(): say that the process names
      // its requests, before claimd sees one read (else: multiplexed).
      native.contextEnter(-1);
      native.contextLeave();
    }
    const h = owner.get(id);
    const fd = h && h.fd >= 0 ? h.fd : -1;
    stack.push(fd);
    set(fd);
  };
  const leave = () => {
    stack.pop();
    set(stack.length ? stack[stack.length - 1] : -1);
  };
  hook = asyncHooks.createHook({
    init(id, type, trigger, resource) {
      if (type === 'TCPSERVERWRAP' || type === 'PIPESERVERWRAP')
        servers.add(id);
      else if ((type === 'TCPWRAP' || type === 'PIPEWRAP') && servers.has(trigger))
        owner.set(id, resource);
      else if (owner.has(trigger))
        owner.set(id, owner.get(trigger));
    },
    before: enter,
    after: leave,
    destroy(id) {
      owner.delete(id);
      servers.delete(id);
    },
    promiseResolve() {},
  });
  hook.enable();
}

/**
 * A request listener for http.createServer that follows the loop (follow())
 * and writes x-error-claim on answers from failStatus (500) up: claimd's
 * verdict for that request, nothing when it is unknown, the handler's own
 * header when it set one.
 */
function listener(handler, failStatus = 500) {
  follow();
  return (req, res) => {
    announce = false;
    const writeHead = res.writeHead;
    res.writeHead = function (status, ...rest) {
      if (status >= failStatus && !this.getHeader(HEADER)) {
        const v = current().verdict;
        if (v === 'claimed' || v === 'unclaimed')
          this.setHeader(HEADER, v);
      }
      return writeHead.call(this, status, ...rest);
    };
    handler(req, res);
  };
}

/**
 * fetch() with retries that honour x-error-claim: unclaimed failures are
 * not retried, failures without the header at most once, claimed ones up
 * to maxAttempts. Resolves to { response, attempts }.
 */
async function fetchWithClaims(url, init, maxAttempts = 2) {
  for (let attempt = 1; ; attempt++) {
    let response = null, error = null;
    try {
      response = await fetch(url, init);
    } catch (e) {
      error = e;
    }
    const status = response ? response.status : 0;
    const header = response ? response.headers.get(HEADER) || undefined : undefined;
    if (shouldRetry(status, header, attempt, maxAttempts) !== 'retry') {
      if (error)
        throw error;
      return { response, attempts: attempt };
    }
    if (response)
      await response.arrayBuffer();
  }
}

module.exports = { HEADER, current, parseHeader, shouldRetry, follow, listener, fetchWithClaims,
  connected: () => native.connected() };
