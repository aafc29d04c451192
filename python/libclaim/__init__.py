# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""libclaim for Python: what claimd says about the request this thread
serves, and the retry decision that honours x-error-claim.

claimd publishes, for every thread serving a request on this host, what the
verdict of that request would be if it failed now: ``claimed`` (the error
starts here; a retry can help) or ``unclaimed`` (a dependency failed;
retrying here only adds load). This package maps that verdict map through
the C library (libclaim.so, loaded with ctypes: one implementation of the
rules for every language), so :meth:`Claim.current` makes no system call.
With no claimd running every answer is ``unknown``, never an error.

    import libclaim
    claim = libclaim.Claim()
    if status >= 500:
        headers.append(libclaim.header(claim.current()))
"""
import ctypes
import ctypes.util
import enum
import os
import threading

__all__ = [
    "Verdict", "Decision", "Result", "Claim", "Budget", "HEADER", "header", "parse_header",
    "should_retry", "library_path",
]

HEADER = "x-error-claim"


class Verdict(enum.IntEnum):
    NONE = 0
    CLAIMED = 1
    UNCLAIMED = 2
    UNKNOWN = 3

    def __str__(self):
        return self.name.lower()


class Decision(enum.IntEnum):
    RETRY = 0
    DONE_OK = 1
    DONE_UNCLAIMED = 2
    DONE_ONCE = 3
    DONE_ATTEMPTS = 4
    DONE_BUDGET = 5
    DONE_DEADLINE = 6


class _Result(ctypes.Structure):
    _fields_ = [("verdict", ctypes.c_int), ("rule", ctypes.c_int), ("cause_known", ctypes.c_int),
                ("cause_port", ctypes.c_uint16), ("cause_addr", ctypes.c_uint8 * 16)]


class _Outcome(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("header", ctypes.c_int)]


class _RetryOpts(ctypes.Structure):
    _fields_ = [("attempt", ctypes.c_int), ("max_attempts", ctypes.c_int),
                ("fail_status", ctypes.c_int), ("budget", ctypes.c_void_p),
                ("deadline_ns", ctypes.c_uint64), ("attempt_ns", ctypes.c_uint64)]


def library_path():
    """Where libclaim.so is taken from: $CLAIMD_LIBCLAIM, else the system's."""
    return os.environ.get("CLAIMD_LIBCLAIM") or ctypes.util.find_library("claim") or "libclaim.so.0"


_lib = None
_lib_lock = threading.Lock()


def _load():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        lib = ctypes.CDLL(library_path())
        lib.claim_open.restype = ctypes.c_void_p
        lib.claim_open.argtypes = [ctypes.c_char_p]
        lib.claim_close.argtypes = [ctypes.c_void_p]
        lib.claim_connected.argtypes = [ctypes.c_void_p]
        lib.claim_current.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Result)]
        lib.claim_current_packed.argtypes = [ctypes.c_void_p]
        lib.claim_current_packed.restype = ctypes.c_uint32
        lib.claim_rule_name.restype = ctypes.c_char_p
        lib.claim_parse_header.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.claim_budget_new.restype = ctypes.c_void_p
        lib.claim_budget_new.argtypes = [ctypes.c_double, ctypes.c_double]
        lib.claim_budget_free.argtypes = [ctypes.c_void_p]
        lib.claim_budget_request.argtypes = [ctypes.c_void_p]
        lib.claim_budget_take.argtypes = [ctypes.c_void_p]
        lib.claim_budget_tokens.restype = ctypes.c_double
        lib.claim_budget_tokens.argtypes = [ctypes.c_void_p]
        lib.claim_should_retry.argtypes = [ctypes.POINTER(_Outcome), ctypes.POINTER(_RetryOpts)]
        lib.claim_context_enter.argtypes = [ctypes.c_int]
        lib.claim_context_enter.restype = None
        lib.claim_context_leave.argtypes = []
        lib.claim_context_leave.restype = None
        _lib = lib
        return lib


_VERDICTS = tuple(Verdict)
_tls = threading.local()
_rule_names = {}
_plain_results = {}


def _result_buffer():
    """This thread's claim_result and a pointer to it, filled by each lookup it makes."""
    b = getattr(_tls, "result", None)
    if b is None:
        r = _Result()
        b = _tls.result = (r, ctypes.pointer(r))
    return b


def _rule_name(lib, rule):
    """A rule's name, from libclaim's one table, asked once each."""
    name = _rule_names.get(rule)
    if name is None:
        name = _rule_names[rule] = lib.claim_rule_name(rule).decode()
    return name


class Result:
    """A verdict and why: the rule's name, and the failed call's callee when known."""

    def __init__(self, verdict, rule, cause):
        self.verdict = verdict
        self.rule = rule
        self.cause = cause  # (address, port) of the callee whose failure decided, or None

    def __repr__(self):
        return "Result(%s, %r, %r)" % (self.verdict, self.rule, self.cause)


def _address(raw):
    b = bytes(raw)
    if b[:12] == b"\0" * 10 + b"\xff\xff":
        return ".".join(str(x) for x in b[12:])
    import ipaddress
    return str(ipaddress.IPv6Address(b))


class Claim:
    """claimd's verdict map, mapped read-only. One serves every thread."""

    def __init__(self, path=None):
        self._lib = _load()
        self._h = self._lib.claim_open(path.encode() if path else None)
        if not self._h:
            raise MemoryError("claim_open")
        # The hot path: the handle converted once, the verdicts by index (no Enum lookup).
        self._hp = ctypes.c_void_p(self._h)
        self._cur = self._lib.claim_current
        self._packed = self._lib.claim_current_packed

    def close(self):
        if self._h:
            self._lib.claim_close(self._h)
            self._h = None
            self._hp = ctypes.c_void_p(None)  # a closed handle answers unknown

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def connected(self):
        """True when a live claimd's verdicts are mapped."""
        return bool(self._lib.claim_connected(self._h))

    def verdict(self):
        """The running verdict of the request this thread serves."""
        return _VERDICTS[self._cur(self._hp, None)]

    def current(self):
        """The same with its rule and cause (a Result; share it, do not change it)."""
        p = self._packed(self._hp)  # verdict | rule << 8 | cause port << 16
        res = _plain_results.get(p)
        if res is not None:
            return res
        if p >> 16:  # a cause: its address too
            r, ptr = _result_buffer()
            v = self._cur(self._hp, ptr)
            cause = (_address(r.cause_addr), r.cause_port) if r.cause_known else None
            return Result(_VERDICTS[v], _rule_name(self._lib, r.rule), cause)
        # Without a cause a result is one of a few: made once each.
        res = _plain_results[p] = Result(_VERDICTS[p & 0xff], _rule_name(self._lib, p >> 8), None)
        return res


def context_enter(fd):
    """Tells claimd the calling thread now works for the request that came on fd."""
    _load().claim_context_enter(fd)


def context_leave():
    """... and for none any more."""
    _load().claim_context_leave()


def header(verdict):
    """The x-error-claim header a failed answer carries: (name, value), or None for unknown."""
    if isinstance(verdict, Result):
        verdict = verdict.verdict
    if verdict in (Verdict.CLAIMED, Verdict.UNCLAIMED):
        return (HEADER, str(Verdict(verdict)))
    return None


def parse_header(value):
    """The verdict an x-error-claim value carries; Verdict.NONE when absent or neither."""
    if value is None:
        return Verdict.NONE
    b = value.encode() if isinstance(value, str) else bytes(value)
    return Verdict(_load().claim_parse_header(b, len(b)))


class Budget:
    """A retry budget: earns ratio tokens per first attempt, holds at most burst. Thread-safe."""

    def __init__(self, ratio=0.1, burst=10.0):
        self._lib = _load()
        self._b = self._lib.claim_budget_new(ratio, burst)
        if not self._b:
            raise MemoryError("claim_budget_new")

    def __del__(self):
        if getattr(self, "_b", None):
            self._lib.claim_budget_free(self._b)
            self._b = None

    def request(self):
        self._lib.claim_budget_request(self._b)

    def take(self):
        return bool(self._lib.claim_budget_take(self._b))

    @property
    def tokens(self):
        return self._lib.claim_budget_tokens(self._b)


def should_retry(status, claim_header=None, attempt=1, max_attempts=0, fail_status=0,
                 budget=None, deadline_ns=0, attempt_ns=0):
    """libclaim's decision after a failed attempt (a Decision; RETRY to retry).

    status: the HTTP status, 0 for a transport failure; claim_header: the
    answer's x-error-claim value (or None); attempt: the attempt that just
    failed, from 1. Unclaimed failures are not retried; a failure without
    the header at most once; a budget token is spent only on RETRY.
    deadline_ns (time.monotonic_ns(), CLOCK_MONOTONIC; 0: none) and
    attempt_ns (what an attempt takes): no retry that cannot finish in time.
    """
    out = _Outcome(status, parse_header(claim_header))
    opts = _RetryOpts(attempt, max_attempts, fail_status, budget._b if budget else None,
                      deadline_ns, attempt_ns)
    return Decision(_load().claim_should_retry(ctypes.byref(out), ctypes.byref(opts)))
