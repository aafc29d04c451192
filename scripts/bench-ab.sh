#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/bench-ab.sh [--untraced[=MODE]] CLAIMD_A CLAIMD_B [ROUNDS]: the program
# time one build of claimd costs per request against another, both attached
# at once to the same requests: a claimlab node under wrk at saturation,
# each claimd following only the node (--pid). This host's phases move a
# single build's figure by more than most changes are worth; two builds
# timed over the same syscalls see the same phase. --untraced: per run of
# the read/write program (tp_io_x) instead, over the one-byte syscalls of a
# process neither follows (pipe_hammer): what the socket filter costs, over
# TCP or, with MODE, pipe_hammer's unix (a stream to a socket file) or
# unixdg (a datagram pair).
#
# Whichever build is attached first pays for the cold lines both touch
# (the task, its registers, the user buffer: several hundred ns a request
# here), so every round runs both orders and the difference is taken as
# the mean over them. Prints each run and then A - B per request, in ns.
# Each claimd is its own binary with its BPF object inside; both are
# asked with this build's claimctl. Extra claimd options: CLAIMD_AB_ARGS
# (say --no-tls, for a build whose TLS probes this kernel does not load).
# Needs root, wrk and a built tree (make).
set -euo pipefail

untraced=0 hammer=tcp
case "${1:-}" in
--untraced) untraced=1; shift ;;
--untraced=tcp | --untraced=unix | --untraced=unixdg) untraced=1 hammer=${1#*=}; shift ;;
--untraced=*) echo "bench-ab: --untraced takes tcp, unix or unixdg, not ${1#*=}" >&2; exit 64 ;;
esac
[ $# -ge 2 ] || { echo "usage: $0 [--untraced[=tcp|unix|unixdg]] CLAIMD_A CLAIMD_B [ROUNDS]" >&2; exit 64; }
[ "$(id -u)" -eq 0 ] || { echo "bench-ab: needs root (claimd loads BPF programs)" >&2; exit 1; }
bin_a=$(realpath "$1") bin_b=$(realpath "$2")
rounds=${3:-3}
build=${BENCH_BUILD:-build}
WRK_SECONDS=${BENCH_WRK_SECONDS:-8}
for b in "$bin_a" "$bin_b" "$build/claimlab" "$build/claimctl" "$build/tests/pipe_hammer"; do
	[ -x "$b" ] || { echo "bench-ab: $b is not an executable (make first?)" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "bench-ab: wrk is missing (scripts/install-deps.sh bench)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/claimd-ab.XXXXXX)
node_pid='' pid_a='' pid_b=''
stats_was=$(sysctl -n kernel.bpf_stats_enabled)

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

cleanup() {
	stop_pids "$pid_a" "$pid_b" "$node_pid"
	sysctl -qw kernel.bpf_stats_enabled="$stats_was" || true
	for w in a b; do
		rm -f "/sys/fs/bpf/claimd-ab-$w-$$/verdicts"
		rmdir "/sys/fs/bpf/claimd-ab-$w-$$" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

ctl_of() { "$build/claimctl" --socket "$tmp/$1.sock" "${@:2}"; }

# Starts build $1 (a or b) from binary $2; sets pid_a or pid_b.
start_one() {
	local w=$1 bin=$2 pid
	mkdir -p "$tmp/state-$w"
	# shellcheck disable=SC2086 # CLAIMD_AB_ARGS: words of options
	"$bin" --pid "$node_pid" --metrics none --pin-dir "/sys/fs/bpf/claimd-ab-$w-$$" \
		--control "$tmp/$w.sock" --state-dir "$tmp/state-$w" ${CLAIMD_AB_ARGS:-} \
		>"$tmp/claimd-$w.log" 2>&1 &
	pid=$!
	printf -v "pid_$w" '%s' "$pid"
	claimd_wait "$tmp/$w.sock" "$pid" "$tmp/claimd-$w.log"
}

# "run_time_ns requests_counted" of build $1 so far; --untraced: "run_time_ns
# run_cnt" of tp_io_x.
totals_of() {
	local s t
	s=$(ctl_of "$1" status --json)
	if [ "$untraced" = 1 ]; then
		prog_totals tp_io_x <<<"$s"
	else
		read -r t _ < <(prog_totals <<<"$s")
		echo "$t $(json 'd["kernel"]["requests_counted"]' <<<"$s")"
	fi
}

# The load of one run.
load() {
	if [ "$untraced" = 1 ]; then
		"$build/tests/pipe_hammer" 300000 "$hammer" >"$tmp/load.log"
	else
		wrk -t2 -c32 -d"${WRK_SECONDS}s" "http://127.0.0.1:$port/r/1" >"$tmp/load.log" 2>&1
	fi
}

# One run with $1 attached first: prints "ns_a ns_b n_a n_b", ns per request
# (per run of tp_io_x, --untraced) over n of them.
one_run() {
	local first=$1 second a0 b0 a1 b1
	second=$([ "$first" = a ] && echo b || echo a)
	start_one "$first" "$([ "$first" = a ] && echo "$bin_a" || echo "$bin_b")"
	start_one "$second" "$([ "$second" = a ] && echo "$bin_a" || echo "$bin_b")"
	sysctl -qw kernel.bpf_stats_enabled=1
	a0=$(totals_of a) b0=$(totals_of b)
	load
	a1=$(totals_of a) b1=$(totals_of b)
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	stop_pids "$pid_a" "$pid_b"
	pid_a='' pid_b=''
	python3 - "$a0" "$a1" "$b0" "$b1" <<'EOF'
import sys
(ta0, ra0), (ta1, ra1), (tb0, rb0), (tb1, rb1) = (map(int, s.split()) for s in sys.argv[1:])
if ra1 == ra0 or rb1 == rb0:
    sys.exit("bench-ab: a claimd counted nothing during the run")
print(round((ta1 - ta0) / (ra1 - ra0), 1), round((tb1 - tb0) / (rb1 - rb0), 1),
      ra1 - ra0, rb1 - rb0)
EOF
}

CLAIMD_SERVICE=absvc "$build/claimlab" node --name absvc --ready "$tmp/ready" >"$tmp/node.log" 2>&1 &
node_pid=$!
wait_file "$tmp/ready" "$node_pid" "the claimlab node"
port=$(cat "$tmp/ready")
say "== A: $bin_a"
say "== B: $bin_b"
unit=request
if [ "$untraced" = 1 ]; then
	unit="run of tp_io_x"
	say "== node pid $node_pid followed; pipe_hammer's 300,000 $hammer exchanges a run, not followed; $rounds rounds"
else
	say "== node pid $node_pid on 127.0.0.1:$port; wrk -t2 -c32 for ${WRK_SECONDS}s a run, $rounds rounds"
fi

diffs_a_first=() diffs_b_first=()
for r in $(seq "$rounds"); do
	for first in a b; do
		one_run "$first" >"$tmp/run"
		read -r ns_a ns_b n_a n_b <"$tmp/run"
		d=$(python3 -c "print(round($ns_a - $ns_b, 1))")
		say "   round $r, $first attached first: A $ns_a ns, B $ns_b ns per $unit (A - B $d; over $n_a / $n_b)"
		if [ "$first" = a ]; then diffs_a_first+=("$d"); else diffs_b_first+=("$d"); fi
	done
done
python3 - "$unit" "${#diffs_a_first[@]}" "${diffs_a_first[@]}" "${diffs_b_first[@]}" <<'EOF'
import statistics, sys
unit, n = sys.argv[1], int(sys.argv[2])
va = [float(x) for x in sys.argv[3:3 + n]]
vb = [float(x) for x in sys.argv[3 + n:]]
ma, mb = statistics.mean(va), statistics.mean(vb)
print(f"A - B per {unit}: {ma:.1f} ns with A first, {mb:.1f} with B first; "
      f"mean over both orders {(ma + mb) / 2:.1f} ns (order effect {(ma - mb) / 2:.1f} ns)")
EOF
