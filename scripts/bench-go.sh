#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench, Go part: what a traced Go request costs. A Go service
# (tests/peers/go/goservice built plain: gohttp, net/http alone, which
# claimd frames by its syscalls) that calls a Go backend once per request:
#
#  1. throughput at saturation under wrk, with claimd attached and not,
#     alternating; medians (the uprobes' traps are in this figure: they are
#     paid in the Go process, not in the BPF programs);
#  2. p50/p99 latency at a fixed rate, without claimd and with it; BPF
#     program time per traced Go request (kernel.bpf_stats_enabled=1),
#     all programs together (the Go probes, and the syscall tracepoints that
#     leave a Go process's bytes alone), and how many Go probe runs a request
#     takes, at a fixed rate with 8 connections;
#  3. the same fixed rate with 64 connections: no request lost, none counted
#     twice, under concurrency (uprobe programs can be preempted here).
# Prints a table and writes build/bench-go.json. Needs root.
set -euo pipefail

build=${1:-build}
[ "$(id -u)" -eq 0 ] || { echo "bench-go: needs root (claimd loads BPF programs)" >&2; exit 1; }

ROUNDS=${BENCH_ROUNDS:-5}
WRK_SECONDS=${BENCH_WRK_SECONDS:-4}
PACE_SECONDS=${BENCH_PACE_SECONDS:-5}
GO_RATE=${BENCH_GO_RATE:-2000}

tmp=$(mktemp -d /tmp/claimd-bench-go.XXXXXX)
pin=/sys/fs/bpf/claimd-bench-go-$$
claimd_pid= go_pids=()
claimd_metrics=none
stats_was=$(sysctl -n kernel.bpf_stats_enabled)

cleanup() {
	stop_pids "${go_pids[@]}"
	bench_cleanup
}
trap cleanup EXIT INT TERM

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
mkdir -p "$tmp/state"

go_bin="$build/tests/go/gohttp"
[ -x "$go_bin" ] || { say "bench-go: $go_bin not built (make go-peers)"; exit 1; }
CLAIMD_SERVICE=gobenchback "$go_bin" serve -ready "$tmp/back.ready" >"$tmp/back.log" 2>&1 &
go_pids+=($!)
wait_file "$tmp/back.ready" "${go_pids[-1]}" "the Go backend"
CLAIMD_SERVICE=gobench "$go_bin" serve -ready "$tmp/front.ready" \
	-call "http://127.0.0.1:$(cat "$tmp/back.ready")" >"$tmp/front.log" 2>&1 &
go_pids+=($!)
wait_file "$tmp/front.ready" "${go_pids[-1]}" "the Go service"
port=$(cat "$tmp/front.ready")
say "== Go: service gobench (gohttp, pid ${go_pids[-1]}) on 127.0.0.1:$port, one call per request"

# Until claimd probes the Go program.
go_attached() {
	for _ in $(seq 100); do
		[ "$(status | json 'd.get("go_files", 0)')" -ge 1 ] && { sleep 0.5; return 0; }
		sleep 0.05
	done
	say "bench-go: claimd did not probe the Go program"; exit 1
}

# 1. Throughput at saturation, off and on alternating.
throughput_off_on "$port" "Go service"
go_rps_off=$off_rps go_rps_on=$on_rps go_ratio=$on_ratio go_spread="[$on_ratio_min, $on_ratio_max]"

# 2. and 3. Program time per traced Go request; requests counted once.
go_progs="go_serve go_serve_ret go_round_trip go_round_trip_ret go_conn_round_trip go_newproc
go_newproc_ret"
# The Go services' requests (the front's and the backend's), however followed.
counted() { ctl services --json | json 'sum(s["requests"] for s in d if s["service"].startswith("gobench"))'; }
j8_off=$(pace "$GO_RATE" "$PACE_SECONDS")
sysctl -qw kernel.bpf_stats_enabled=1
claimd_start
go_attached
read -r t0 c0 < <(status | prog_totals)
read -r gt0 gc0 < <(status | prog_totals $go_progs)
r0=$(counted)
c0=$(status | json 'd["kernel"]["go_calls"]')
# Uprobe hits: a request's (ServeHTTP and the goroutines started meanwhile), a call's.
inbound_progs="go_serve go_serve_ret go_newproc go_newproc_ret"
call_progs="go_round_trip go_round_trip_ret go_conn_round_trip"
read -r _ in0 < <(status | prog_totals $inbound_progs)
read -r _ call0 < <(status | prog_totals $call_progs)
j8=$(pace "$GO_RATE" "$PACE_SECONDS")
sleep 1.5
read -r t1 c1 < <(status | prog_totals)
read -r gt1 gc1 < <(status | prog_totals $go_progs)
r1=$(counted)
c1=$(status | json 'd["kernel"]["go_calls"]')
read -r _ in1 < <(status | prog_totals $inbound_progs)
read -r _ call1 < <(status | prog_totals $call_progs)
hits_in=$(python3 -c "print(round(($in1 - $in0) / max(1, $r1 - $r0), 2))")
hits_call=$(python3 -c "print(round(($call1 - $call0) / max(1, $c1 - $c0), 2))")
go_ns=$(python3 -c "print(round(($t1 - $t0) / max(1, $r1 - $r0), 1))")
go_probe_ns=$(python3 -c "print(round(($gt1 - $gt0) / max(1, $r1 - $r0), 1))")
go_runs=$(python3 -c "print(round(($gc1 - $gc0) / max(1, $r1 - $r0), 2))")
n0=$(counted)
j64=$("$build/tests/paced_client" -p "$port" -r "$GO_RATE" -d "$PACE_SECONDS" -c 64)
sleep 1.5
n1=$(counted)
claimd_stop
sysctl -qw kernel.bpf_stats_enabled="$stats_was"

python3 - "$build/bench-go.json" <<EOF
import json, sys
j8 = json.loads('''$j8''')
j8_off = json.loads('''$j8_off''')
j64 = json.loads('''$j64''')
# The front's requests and the backend's: two counted per answered request.
answered64 = j64["ok"]
out = {
    "service": "gohttp (Go $(go version 2>/dev/null | awk '{print $3}'), net/http) calling a Go backend once per request, 127.0.0.1",
    "throughput_rps_without": $go_rps_off, "throughput_rps_with": $go_rps_on,
    "throughput_ratio": $go_ratio,
    "throughput_ratio_spread": $go_spread,
    "fixed_rate_rps": $GO_RATE,
    "bpf_ns_per_go_request_all_programs": $go_ns,
    "bpf_ns_per_go_request_go_probes": $go_probe_ns,
    "go_probe_runs_per_go_request": $go_runs,
    "go_uprobe_hits_per_request": {"inbound_request": $hits_in, "outbound_call": $hits_call},
    "paced_8_without": j8_off, "paced_8": j8, "paced_64": j64,
    "counted_64_connections": $n1 - $n0,
    "lost_or_double_64_connections": 2 * answered64 - ($n1 - $n0),
    "rounds": $ROUNDS,
}
json.dump(out, open(sys.argv[1], "w"), indent=2)
rows = [
    ("Go: throughput ratio (with/without, %d rounds)" % $ROUNDS, "%.3f (%.3f-%.3f), %.0f / %.0f req/s" % (out["throughput_ratio"], out["throughput_ratio_spread"][0], out["throughput_ratio_spread"][1], $go_rps_on, $go_rps_off), ">= 0.7"),
    ("Go: uprobe hits per inbound request / call", "%s / %s" % ($hits_in, $hits_call), "0 / <= 1"),
    ("Go: p50 / p99 at %d req/s, without" % $GO_RATE, "%d / %d us" % (j8_off["p50_us"], j8_off["p99_us"]), ""),
    ("Go: p50 / p99 at %d req/s, with" % $GO_RATE, "%d / %d us" % (j8["p50_us"], j8["p99_us"]), ""),
    ("Go: program time per traced request (all)", "%s ns" % out["bpf_ns_per_go_request_all_programs"], ""),
    ("  of which the Go probes", "%s ns, %s runs" % (out["bpf_ns_per_go_request_go_probes"], out["go_probe_runs_per_go_request"]), ""),
    ("Go: requests lost or counted twice, 64 conns", "%d (%d counted, %d answered x 2 hops)" % (out["lost_or_double_64_connections"], out["counted_64_connections"], answered64), "0"),
]
print()
print("%-48s %-44s %s" % ("measure", "measured", "target"))
for r in rows:
    print("%-48s %-44s %s" % r)
print("\npaced, 64 connections:", json.dumps(j64))
print("written to", sys.argv[1])
EOF
