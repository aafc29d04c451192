# SPDX-License-Identifier: GPL-2.0
# Helpers of the benchmark scripts (bench.sh, bench-go.sh), sourced after
# they set: build, tmp (a directory of their own), pin (claimd's pin
# directory), claimd_metrics, ROUNDS, WRK_SECONDS, and port (the service
# wrk and the paced client talk to by default). claimd_pid is set while a
# claimd of theirs runs.

say() { printf '%s\n' "$*" >&2; }

# Ends the processes listed (pids; empty ones skipped), each waited for.
stop_pids() {
	local p
	for p in "$@"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
	done
}

# What every benchmark leaves behind: its claimd, the stats switch, its pin
# directory and its own directory. stats_was: the switch as it found it.
bench_cleanup() {
	stop_pids "$claimd_pid"
	sysctl -qw kernel.bpf_stats_enabled="$stats_was" || true
	rm -f "$pin/verdicts"
	rmdir "$pin" 2>/dev/null || true
	rm -rf "$tmp"
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
# Per-round ratios of paired runs, "median min max": ratio_spread ON... -- OFF...
# (round i's on over round i's off; the host's drift between rounds stays
# out of each ratio, and the spread says how much the rounds agree).
ratio_spread() {
	python3 -c '
import statistics, sys
a = sys.argv[1:]
i = a.index("--")
on, off = [float(x) for x in a[:i]], [float(x) for x in a[i + 1:]]
r = [x / y for x, y in zip(on, off) if y > 0]
print("%.4f %.4f %.4f" % (statistics.median(r), min(r), max(r)))' "$@"
}
ctl() { "$build/claimctl" --socket "$tmp/ctl.sock" "$@"; }

# Waits (at most 15 s) until the claimd of pid $2 answers on its control
# socket $1; if it dies first, shows its log $3 and exits.
claimd_wait() { # socket pid log
	for _ in $(seq 300); do
		"$build/claimctl" --socket "$1" status --json >/dev/null 2>&1 && return 0
		kill -0 "$2" 2>/dev/null || { cat "$3" >&2; exit 1; }
		sleep 0.05
	done
	say "bench: claimd (pid $2) did not answer on $1"; exit 1
}

# Starts claimd (with $CLAIMD_ARGS, then the arguments given); claimd_start
# waits until it has attached (its control socket answers only then),
# claimd_launch does not.
claimd_launch() {
	# shellcheck disable=SC2086 # CLAIMD_ARGS: words
	"$build/claimd" --pin-dir "$pin" --control "$tmp/ctl.sock" --state-dir "$tmp/state" \
		--metrics "$claimd_metrics" ${CLAIMD_ARGS:-} "$@" >"$tmp/claimd.log" 2>&1 &
	claimd_pid=$!
}
claimd_start() {
	claimd_launch "$@"
	claimd_wait "$tmp/ctl.sock" "$claimd_pid" "$tmp/claimd.log"
}

claimd_stop() {
	kill "$claimd_pid"; wait "$claimd_pid" || true; claimd_pid=
}

status() { ctl status --json; }

# claimd's CPU time so far, in ns, over all its threads (the scheduler's own
# count: clock ticks are 10 ms, as much as 0.1% of a core over 10 s).
cpu_ns() { cat /proc/"$claimd_pid"/task/*/schedstat | awk '{s += $1} END {print s}'; }

# Sum of run_time_ns and run_cnt over claimd's programs (optionally some of them).
prog_totals() {
	python3 -c '
import json, sys
names = sys.argv[1:]
d = json.load(sys.stdin)
t = c = 0
for p in d["programs"]:
    if not names or p["name"] in names:
        t += p["run_time_ns"]; c += p["run_cnt"]
print(t, c)' "$@"
}

# [port [command...]] -> requests per second; says so when answers were not
# 2xx. With a command, wrk runs under it (its arguments follow the command's).
# With WRK_SCRIPT set, wrk makes its requests with that Lua script.
wrk_rps() {
	local p=${1:-$port} out
	shift || true
	out=$("$@" wrk -t2 -c32 -d"${WRK_SECONDS}s" ${WRK_SCRIPT:+-s "$WRK_SCRIPT"} \
		"http://127.0.0.1:$p/r/1" 2>&1)
	if grep -q 'Non-2xx' <<<"$out"; then
		say "   warning: port $p: $(grep 'Non-2xx' <<<"$out")"
	fi
	awk '/Requests\/sec/ {print $2}' <<<"$out"
}

# Throughput at saturation on a port, without claimd and with it, alternating;
# sets on_rps, off_rps (medians), on_ratio (the median of the rounds' ratios)
# and on_ratio_min, on_ratio_max. label: for the rounds' lines.
throughput_off_on() { # port label
	local off=() on=() r
	for r in $(seq "$ROUNDS"); do
		off+=("$(wrk_rps "$1")")
		claimd_start
		on+=("$(wrk_rps "$1")")
		claimd_stop
		say "   round $r, $2: ${off[-1]} req/s without claimd, ${on[-1]} with"
	done
	off_rps=$(median "${off[@]}") on_rps=$(median "${on[@]}")
	read -r on_ratio on_ratio_min on_ratio_max < <(ratio_spread "${on[@]}" -- "${off[@]}")
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until a file is written (by a process that must stay alive), at most 5 s.
wait_file() { # file pid what
	for _ in $(seq 100); do
		[ -s "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	say "bench: $3 did not start"; exit 1
}

pace() { # rate seconds -> json
	"$build/tests/paced_client" -p "$port" -r "$1" -d "$2" -c 8
}
