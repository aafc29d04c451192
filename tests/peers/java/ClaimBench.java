// SPDX-License-Identifier: GPL-2.0
import org.claimd.libclaim.Claim;

/**
 * The cost of a lookup from Java: N calls of Claim.current() after a warm-up
 * (the JIT compiles the loop), as tests/claim_bench times claim_current().
 * Prints the time per call as JSON.
 *
 *   java ClaimBench [N]
 */
public class ClaimBench {
	public static void main(String[] args) {
		long n = args.length > 0 ? Long.parseLong(args[0]) : 20000000L, unknown = 0;
		try (Claim c = new Claim()) {
			for (int i = 0; i < 2000000; i++)
				unknown += c.current().verdict == Claim.Verdict.UNKNOWN ? 1 : 0;
			unknown = 0;
			long t0 = System.nanoTime();
			for (long i = 0; i < n; i++)
				unknown += c.current().verdict == Claim.Verdict.UNKNOWN ? 1 : 0;
			double ns = (double)(System.nanoTime() - t0) / n;
			System.out.printf("{\"calls\":%d,\"ns_per_call\":%.2f,\"connected\":%d,\"unknown\":%d}%n", n, ns,
					  c.connected() ? 1 : 0, unknown);
		}
	}
}
