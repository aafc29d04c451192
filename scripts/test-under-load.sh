#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The suite's steadiness: `make test` RUNS times in a row (default 5) on a
# fresh clone of this checkout's HEAD, with CLAIMD_REQUIRE_BPF=1 as in CI,
# while BURNERS CPU-bound processes (default 1) run beside it. Stops at the
# first failed run. Each run's log, and one line a run (exit status,
# seconds, the CPU seconds the burners took, the runner's summary), go to
# OUT (default a new directory under /tmp), which is printed at the end.
#
#   scripts/test-under-load.sh [RUNS] [BURNERS]
#
# A burner hashes /dev/zero: all CPU, and a read syscall every 32 KiB that
# claimd's tracepoints see and must filter out.
set -uo pipefail

runs=${1:-5}
burners=${2:-1}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || exit 1
out=${OUT:-$(mktemp -d /tmp/claimd-under-load.XXXXXX)}
clone=$out/clone
pids=()

stop_burners() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}
trap 'stop_burners; rm -rf "$clone"' EXIT
trap 'exit 130' INT TERM

mkdir -p "$out" || exit 1
git clone -q "$repo" "$clone" || exit 1
echo "commit $(git -C "$clone" log --oneline -1)" | tee "$out/summary.txt"
for ((b = 0; b < burners; b++)); do
	sha256sum /dev/zero >/dev/null &
	pids+=($!)
done
echo "load: $burners x sha256sum /dev/zero on $(nproc) CPUs" | tee -a "$out/summary.txt"

green=0
for ((i = 1; i <= runs; i++)); do
	start=$(date +%s)
	(cd "$clone" && CLAIMD_REQUIRE_BPF=1 make test) >"$out/run$i.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	burnt=0
	for p in "${pids[@]}"; do
		t=$(ps -o cputimes= -p "$p" 2>/dev/null)
		burnt=$((burnt + ${t:-0}))
	done
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/run$i.log" | tail -1)
	echo "run $i: exit $rc, ${secs} s, burners' CPU ${burnt} s so far, ${line:-no summary}" |
		tee -a "$out/summary.txt"
	[ "$rc" -eq 0 ] || break
	green=$((green + 1))
done
echo "$green of $runs green in a row; logs in $out" | tee -a "$out/summary.txt"
[ "$green" -eq "$runs" ]
