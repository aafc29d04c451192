// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
package org.claimd.libclaim;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.LongByReference;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * libclaim for Java: what claimd says about the request this thread serves,
 * and the retry decision that honours x-error-claim. The C library
 * (libclaim.so, through JNA: one implementation of the rules for every
 * language) maps claimd's verdict map read-only, so {@link #current} makes
 * no system call; {@link #verdict} reads the thread's slot of that mapping
 * itself (a call through JNA costs more than the read). With no claimd
 * running every answer is UNKNOWN, never an error. One instance serves
 * every thread.
 */
public final class Claim implements AutoCloseable {
	public static final String HEADER = "x-error-claim";

	public enum Verdict { NONE, CLAIMED, UNCLAIMED, UNKNOWN;
		@Override public String toString() { return name().toLowerCase(); }
	}

	public enum Decision { RETRY, DONE_OK, DONE_UNCLAIMED, DONE_ONCE, DONE_ATTEMPTS, DONE_BUDGET, DONE_DEADLINE }

	/** A verdict and why: the rule's name, and the port of the callee whose failure decided (0: none). */
	public static final class Result {
		public final Verdict verdict;
		public final String rule;
		public final int causePort;

		Result(Verdict verdict, String rule, int causePort) {
			this.verdict = verdict;
			this.rule = rule;
			this.causePort = causePort;
		}
	}

	@Structure.FieldOrder({ "verdict", "rule", "cause_known", "cause_port", "cause_addr" })
	public static class CResult extends Structure {
		public int verdict, rule, cause_known;
		public short cause_port;
		public byte[] cause_addr = new byte[16];
	}

	@Structure.FieldOrder({ "status", "header" })
	public static class COutcome extends Structure {
		public int status, header;
	}

	@Structure.FieldOrder({ "attempt", "max_attempts", "fail_status", "budget", "deadline_ns", "attempt_ns" })
	public static class CRetryOpts extends Structure {
		public int attempt, max_attempts, fail_status;
		public Pointer budget;
		public long deadline_ns, attempt_ns;
	}

	interface Lib extends Library {
		Pointer claim_open(String path);
		void claim_close(Pointer c);
		int claim_connected(Pointer c);
		int claim_current(Pointer c, CResult out);
		String claim_rule_name(int rule);
		int claim_parse_header(byte[] value, long len);
		Pointer claim_budget_new(double ratio, double burst);
		void claim_budget_free(Pointer b);
		void claim_budget_request(Pointer b);
		int claim_budget_take(Pointer b);
		double claim_budget_tokens(Pointer b);
		int claim_should_retry(COutcome out, CRetryOpts opts);
		Pointer claim_map(Pointer c, LongByReference len);
	}

	interface LibC extends Library {
		long syscall(long number);
	}

	/** gettid's number on this machine's architecture; -1 where unknown (verdict() then calls libclaim). */
	private static final long SYS_GETTID = switch (System.getProperty("os.arch")) {
	case "amd64", "x86_64" -> 186;
	case "aarch64" -> 178;
	default -> -1;
	};
	private static final ThreadLocal<int[]> TID = ThreadLocal.withInitial(
		() -> new int[] { (int) Native.load("c", LibC.class).syscall(SYS_GETTID) });

	/* The verdict map's layout (headers/verdict.h): the header's 'alive', the slots, a slot's fields. */
	/* The map: its threads' region (headers/verdict.h), then its goroutines'. */
	private static final int MAP_ALIVE = 16, SLOTS = 65536, MAP_SLOTS = 2 * SLOTS, SLOT_SIZE = 64;
	private static final int SLOT_TID = 4, SLOT_ACTIVE = 8, SLOT_VERDICT = 9, SLOT_RULE = 10, SLOT_CAUSE_PORT = 12;
	private static final int SLOT_OUTSIDE_SEEN = 44, SLOT_PROC_WORD = 56, PROC_COLLIDED = 0xffffffff;
	private static final int RULE_UNTIED_CALL = 9;
	/*
	 * A slot being written (odd sequence) is read again at once READ_FAST
	 * times, then after a short wait each try: the writer, a kernel
	 * program, may be preempted mid-write on a busy host. About a
	 * millisecond in all, then unknown, as claim_current.
	 */
	private static final int READ_FAST = 4, READ_TRIES = READ_FAST + 50;
	private static final long READ_WAIT_NS = 20_000;

	private static void writerWait(int tries) {
		if (tries >= READ_FAST)
			java.util.concurrent.locks.LockSupport.parkNanos(READ_WAIT_NS);
	}
	private static final int PID = (int) ProcessHandle.current().pid();
	private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class,
										  ByteOrder.LITTLE_ENDIAN);
	private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class,
										 ByteOrder.LITTLE_ENDIAN);
	private static final Verdict[] VERDICTS = Verdict.values();
	private static final Result UNKNOWN_RESULT = new Result(Verdict.UNKNOWN, "none", 0);

	static final Lib LIB = Native.load(libraryPath(), Lib.class);

	/** Where libclaim.so is loaded from: $CLAIMD_LIBCLAIM, else the system's "claim". */
	public static String libraryPath() {
		String p = System.getenv("CLAIMD_LIBCLAIM");
		return p != null && !p.isEmpty() ? p : "claim";
	}

	private Pointer handle;
	/* The mapping libclaim made, read here; null: none (no claimd), or a machine gettid is unknown on. */
	private volatile ByteBuffer map;

	/** claimd's verdict map at path (null: $CLAIMD_VERDICTS, else claimd's default pin). */
	public Claim(String path) {
		handle = LIB.claim_open(path);
		if (handle == null)
			throw new OutOfMemoryError("claim_open");
		LongByReference len = new LongByReference();
		Pointer base = LIB.claim_map(handle, len);
		if (base != null && SYS_GETTID >= 0 && len.getValue() == (long) MAP_SLOTS * SLOT_SIZE)
			map = base.getByteBuffer(0, len.getValue()).order(ByteOrder.LITTLE_ENDIAN);
	}

	/** A handle reading map, laid out as claimd's (for tests: a map in ordinary memory). */
	Claim(ByteBuffer map) {
		this("/nonexistent/verdicts");
		this.map = map.order(ByteOrder.LITTLE_ENDIAN);
	}

	/** This thread's id, as the kernel numbers it (the key of its slot). */
	static int threadId() {
		return TID.get()[0];
	}

	public Claim() {
		this((String) null);
	}

	@Override public synchronized void close() {
		map = null;
		if (handle != null) {
			LIB.claim_close(handle);
			handle = null;
		}
	}

	/** True when a live claimd's verdicts are mapped. */
	public boolean connected() {
		return LIB.claim_connected(handle) != 0;
	}

	/**
	 * The running verdict of the request this thread serves: its slot read
	 * as claim_current reads it (a sequence number, odd while the kernel
	 * writes, read again after the copy), with no call into C.
	 */
	public Verdict verdict() {
		ByteBuffer m = map;
		if (m == null)
			return VERDICTS[LIB.claim_current(handle, null)];
		if ((int) INTS.getAcquire(m, MAP_ALIVE) != 1)
			return Verdict.UNKNOWN;
		int tid = threadId();
		int off = (1 + Integer.remainderUnsigned(tid, SLOTS - 1)) * SLOT_SIZE;
		for (int tries = 0; tries < READ_TRIES; tries++) {
			writerWait(tries);
			int seq = (int) INTS.getAcquire(m, off);
			if ((seq & 1) != 0)
				continue; /* being written right now */
			int owner = m.getInt(off + SLOT_TID), seen = m.getInt(off + SLOT_OUTSIDE_SEEN);
			byte active = m.get(off + SLOT_ACTIVE), v = m.get(off + SLOT_VERDICT);
			VarHandle.acquireFence();
			if ((int) INTS.getVolatile(m, off) != seq)
				continue;
			/* Another thread's slot (same index), or no request being served. */
			if (owner != tid || active == 0)
				return Verdict.UNKNOWN;
			/* A call outside requests since it began may be its own: not in its log. */
			if ((v == 1 || v == 2) && !procUnsure(m, seen))
				return VERDICTS[v];
			return Verdict.UNKNOWN;
		}
		return Verdict.UNKNOWN;
	}

	/** The same with its rule and cause, read from the slot as verdict() reads it. */
	public Result current() {
		ByteBuffer m = map;
		if (m == null) {
			CResult r = new CResult();
			Verdict v = VERDICTS[LIB.claim_current(handle, r)];
			return new Result(v, LIB.claim_rule_name(r.rule), r.cause_known != 0 ? r.cause_port & 0xffff : 0);
		}
		if ((int) INTS.getAcquire(m, MAP_ALIVE) != 1)
			return UNKNOWN_RESULT;
		int tid = threadId();
		int off = (1 + Integer.remainderUnsigned(tid, SLOTS - 1)) * SLOT_SIZE;
		for (int tries = 0; tries < READ_TRIES; tries++) {
			writerWait(tries);
			int seq = (int) INTS.getAcquire(m, off);
			if ((seq & 1) != 0)
				continue;
			int owner = m.getInt(off + SLOT_TID), seen = m.getInt(off + SLOT_OUTSIDE_SEEN);
			byte active = m.get(off + SLOT_ACTIVE), v = m.get(off + SLOT_VERDICT), rule = m.get(off + SLOT_RULE);
			int port = m.getShort(off + SLOT_CAUSE_PORT) & 0xffff;
			VarHandle.acquireFence();
			if ((int) INTS.getVolatile(m, off) != seq)
				continue;
			if (owner != tid || active == 0)
				return UNKNOWN_RESULT;
			if ((v == 1 || v == 2) && procUnsure(m, seen))
				return new Result(Verdict.UNKNOWN, ruleName((byte) RULE_UNTIED_CALL), 0);
			return new Result(v == 1 || v == 2 ? VERDICTS[v] : Verdict.UNKNOWN, ruleName(rule), port);
		}
		return UNKNOWN_RESULT;
	}

	/*
	 * claim_proc_unsure (verdict.h): has this process made a call outside
	 * requests since the request whose slot saw 'seen' of them began?
	 */
	private static boolean procUnsure(ByteBuffer m, int seen) {
		int off = (1 + Integer.remainderUnsigned(PID, SLOTS - 1)) * SLOT_SIZE + SLOT_PROC_WORD;
		long word = (long) LONGS.getAcquire(m, off);
		int who = (int) (word >>> 32);

		if (who == PROC_COLLIDED)
			return true;
		if (who != PID)
			return seen != 0;
		return (int) word != seen;
	}

	/* The rules' names, from libclaim's one table, asked once each. */
	private static final String[] RULE_NAMES = new String[256];

	private static String ruleName(byte rule) {
		int i = rule & 0xff;
		String name = RULE_NAMES[i];
		if (name == null)
			RULE_NAMES[i] = name = LIB.claim_rule_name(i);
		return name;
	}

	/** The x-error-claim value a failed answer carries for v, or null (unknown: none). */
	public static String headerValue(Verdict v) {
		return v == Verdict.CLAIMED || v == Verdict.UNCLAIMED ? v.toString() : null;
	}

	/** The verdict an x-error-claim value carries; NONE when absent or neither. */
	public static Verdict parseHeader(String value) {
		if (value == null)
			return Verdict.NONE;
		byte[] b = value.getBytes(StandardCharsets.UTF_8);
		return Verdict.values()[LIB.claim_parse_header(b, b.length)];
	}

	/**
	 * libclaim's decision after a failed attempt: status (0 for a transport
	 * failure), the answer's x-error-claim (or null), the attempt that failed
	 * (from 1), the most attempts (0: 2), a budget or null.
	 */
	public static Decision shouldRetry(int status, String claimHeader, int attempt, int maxAttempts, Budget budget) {
		return shouldRetry(status, claimHeader, attempt, maxAttempts, budget, 0, 0);
	}

	/**
	 * The same within a deadline: deadlineNs on CLOCK_MONOTONIC (Linux's
	 * System.nanoTime(); 0: none), attemptNs what an attempt takes: no retry
	 * that cannot finish in time.
	 */
	public static Decision shouldRetry(int status, String claimHeader, int attempt, int maxAttempts, Budget budget,
					   long deadlineNs, long attemptNs) {
		COutcome out = new COutcome();
		out.status = status;
		out.header = parseHeader(claimHeader).ordinal();
		CRetryOpts o = new CRetryOpts();
		o.attempt = attempt;
		o.max_attempts = maxAttempts;
		o.budget = budget != null ? budget.ptr : null;
		o.deadline_ns = deadlineNs;
		o.attempt_ns = attemptNs;
		return Decision.values()[LIB.claim_should_retry(out, o)];
	}

	/** A retry budget: earns ratio tokens per first attempt, holds at most burst. Thread-safe. */
	public static final class Budget implements AutoCloseable {
		private Pointer ptr;

		public Budget(double ratio, double burst) {
			ptr = LIB.claim_budget_new(ratio, burst);
			if (ptr == null)
				throw new OutOfMemoryError("claim_budget_new");
		}

		public void request() { LIB.claim_budget_request(ptr); }
		public boolean take() { return LIB.claim_budget_take(ptr) != 0; }
		public double tokens() { return LIB.claim_budget_tokens(ptr); }

		@Override public synchronized void close() {
			if (ptr != null) {
				LIB.claim_budget_free(ptr);
				ptr = null;
			}
		}
	}
}
